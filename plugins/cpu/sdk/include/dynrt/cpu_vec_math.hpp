// Float math written so that a loop over it vectorises: no calls, no
// branches, range reduction with integer bit work. For the optimised cpu
// impls' elementwise loops; the reference impls keep libm's double math and
// remain the oracle they are tested against.
//
// Accuracy (f32, over the whole float range): exp and log within 2e-7
// relative, erf within 2e-7 absolute (Abramowitz & Stegun 7.1.26 refined by
// one exp), tanh within 2e-7 absolute. Denormal results flush to 0.
// Special values are libm's: NaN gives NaN, exp overflows to +inf and gives 0
// for -inf, log gives +inf for +inf, -inf for 0 and NaN below 0; sigmoid,
// tanh and erf saturate at +-inf (activation's NaN/inf test checks them).
//
// DYNRT_CPU_CLONES in front of a loop function builds it for AVX-512, AVX2
// and the baseline, picked once at load time by the CPU that runs it.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define DYNRT_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DYNRT_CPU_CLONES
#endif

// The functions below are forced inline: a loop calling one out of line runs
// one element per call. GCC's inliner gave up on them in activation's
// fast_loop (one function, a loop per func, three clones): its exp, sigmoid,
// silu, gelu and tanh loops called vec::exp per element, and silu over
// conv_small's outputs took as long as the convolutions.
#if defined(__GNUC__)
#define DYNRT_VEC_INLINE inline __attribute__((always_inline))
#else
#define DYNRT_VEC_INLINE inline
#endif

namespace dynrt::vec {

DYNRT_VEC_INLINE float bits_to_float(int32_t i) {
    float f;
    std::memcpy(&f, &i, sizeof f);
    return f;
}
DYNRT_VEC_INLINE int32_t float_to_bits(float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i;
}

// e^x: x = n ln2 + r with |r| <= ln2/2 (two-part ln2), e^r by its degree-6
// Taylor polynomial, 2^n through the exponent bits. x is held to the range of
// normal results first (a NaN as 0, so the float-to-int conversion below is
// defined), and the specials are selected at the end.
DYNRT_VEC_INLINE float exp(float in) {
    const float lo = -87.33654f, hi = 88.72283f;   // ln of the smallest normal float, ln FLT_MAX
    float x = in != in ? 0.0f : in;
    x = x < lo ? lo : (x > hi ? hi : x);
    const float round_magic = 12582912.0f;   // 1.5 * 2^23: adding it rounds to an integer
    const float n = (x * 1.44269504089f + round_magic) - round_magic;
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    // n in [-126, 128]: split in two so 2^n never overflows the exponent field.
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t half = ni / 2;
    const float y = p * bits_to_float((half + 127) << 23) * bits_to_float((ni - half + 127) << 23);
    const float inf = bits_to_float(0x7f800000);
    return in != in ? in : (in > 88.7228391f ? inf : (in < lo ? 0.0f : y));
}

// ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s),
// s = (m - 1) / (m + 1), by its odd series; +inf, 0, negatives and NaN
// selected at the end (the bit work alone would give finite values for them).
DYNRT_VEC_INLINE float log(float x) {
    int32_t bits = float_to_bits(x);
    int32_t e = ((bits >> 23) & 0xff) - 127;
    float m = bits_to_float((bits & 0x007fffff) | 0x3f800000);   // [1, 2)
    const bool big = m > 1.41421356f;
    m = big ? m * 0.5f : m;
    e = big ? e + 1 : e;
    const float s = (m - 1.0f) / (m + 1.0f);
    const float s2 = s * s;
    float p = 2.0f / 9.0f;
    p = p * s2 + 2.0f / 7.0f;
    p = p * s2 + 2.0f / 5.0f;
    p = p * s2 + 2.0f / 3.0f;
    p = p * s2 + 2.0f;
    const float y = p * s + static_cast<float>(e) * 0.693147180560f;
    const float inf = bits_to_float(0x7f800000);
    return x != x ? x : (x < 0.0f ? bits_to_float(0x7fc00000) : (x == 0.0f ? -inf : (x == inf ? inf : y)));
}

DYNRT_VEC_INLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

DYNRT_VEC_INLINE float tanh(float x) {
    const float e = exp(2.0f * x);
    return 1.0f - 2.0f / (e + 1.0f);
}

// Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), odd.
DYNRT_VEC_INLINE float erf(float x) {
    const float a = x < 0 ? -x : x;
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    const float y = 1.0f - p * t * exp(-a * a);
    return x < 0 ? -y : y;
}

}   // namespace dynrt::vec
