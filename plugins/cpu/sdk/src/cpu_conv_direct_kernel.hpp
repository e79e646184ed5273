// The loops of the cpu engine's direct convolution (cpu_conv_direct.cpp),
// included by two translation units: one built for the baseline ISA, one with
// AVX2 + FMA (cpu_conv_direct_avx2.cpp). The loops have internal linkage, so
// each unit keeps the code its own flags made.
//
// Layouts (all f32, dense):
//   prep  the input, zero-padded along W and split by the W stride into
//         `sw` phases: for input row (n, c, ih), phase r holds the padded
//         row's elements r, r + sw, r + 2 sw, ... (`row_len` each), so the
//         taps of 8 neighbouring outputs are 8 neighbouring floats;
//   wpack the weights in blocks of 8 output channels, [O/8][C][KH][KW][8],
//         zero where the block passes O;
//   y     [N, O, OH, OW].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dynrt {

struct DirectConvRows {
    const float* x = nullptr;   // [N, C, H, W]
    int64_t W = 0, pw = 0;      // its width and the pad before it
    float* prep = nullptr;
    const float* wpack = nullptr;
    const float* bias = nullptr;   // [O] or null
    float* y = nullptr;
    // Per kernel column kw: where its taps start in a phase-split row,
    // (kw * dw % sw) * row_len + kw * dw / sw.
    const int64_t* kw_offset = nullptr;
    int64_t C = 0, H = 0, O = 0, OH = 0, OW = 0, KH = 1, KW = 1;
    int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, row_len = 0;
};

// Output columns per vector, and output channels per packed weights block.
constexpr int64_t kDirectLanes = 8;

// direct_conv_prep() and direct_conv_rows() of the AVX2 + FMA unit, and of
// the AVX-512 (F + VL) one, whose 32 vector registers hold 8 x 2 blocks.
void direct_conv_prep_avx2(const DirectConvRows& a, size_t begin, size_t end);
void direct_conv_rows_avx2(const DirectConvRows& a, size_t begin, size_t end);
void direct_conv_prep_avx512(const DirectConvRows& a, size_t begin, size_t end);
void direct_conv_rows_avx512(const DirectConvRows& a, size_t begin, size_t end);

namespace {

typedef float DirectV8 __attribute__((vector_size(32)));

// Whether some output row reads input row `ih` (a strided 1x1 kernel skips rows).
inline bool direct_row_read(const DirectConvRows& a, int64_t ih) {
    for (int64_t kh = 0; kh < a.KH; ++kh) {
        const int64_t at = ih + a.ph - kh * a.dh;
        if (at >= 0 && at % a.sh == 0 && at / a.sh < a.OH) return true;
    }
    return false;
}

// Rows [begin, end) of prep from the flattened [N, C, H] rows of x: phase ph
// holds padded columns q * sw + ph, q < row_len, which are x's columns
// q * sw + ph - pw where that is in [0, W), else 0. Rows no output reads are
// left as they are.
inline void direct_conv_prep(const DirectConvRows& a, size_t begin, size_t end) {
    const int64_t sw = a.sw, len = a.row_len, W = a.W, pw = a.pw;
    for (size_t r = begin; r < end; ++r) {
        if (!direct_row_read(a, static_cast<int64_t>(r) % a.H)) continue;
        const float* src = a.x + r * static_cast<size_t>(W);
        float* dst = a.prep + r * static_cast<size_t>(sw * len);
        const auto at = [&](int64_t col) { return col >= 0 && col < W ? src[col] : 0.0f; };
        int64_t q = 0;
        if (sw == 1) {
            const int64_t first = std::min(len, pw), last = std::max(first, std::min(len, W + pw));
            std::fill(dst, dst + first, 0.0f);
            std::copy(src + first - pw, src + last - pw, dst + first);
            std::fill(dst + last, dst + len, 0.0f);
            continue;
        }
        if (sw == 2) {
            // Both phases at once: 16 columns in, 8 evens and 8 odds out.
            float* odd = dst + len;
            for (; q < len && 2 * q - pw < 0; ++q) dst[q] = at(2 * q - pw), odd[q] = at(2 * q + 1 - pw);
            for (; q + kDirectLanes <= len && 2 * q - pw + 2 * kDirectLanes <= W; q += kDirectLanes) {
                DirectV8 lo, hi;
                std::memcpy(&lo, src + 2 * q - pw, sizeof lo);
                std::memcpy(&hi, src + 2 * q - pw + kDirectLanes, sizeof hi);
                const DirectV8 even = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
                const DirectV8 odds = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
                std::memcpy(dst + q, &even, sizeof even);
                std::memcpy(odd + q, &odds, sizeof odds);
            }
            for (; q < len; ++q) dst[q] = at(2 * q - pw), odd[q] = at(2 * q + 1 - pw);
            continue;
        }
        for (int64_t phase = 0; phase < sw; ++phase, dst += len)
            for (q = 0; q < len; ++q) dst[q] = at(q * sw + phase - pw);
    }
}

// Where one block of outputs lies: row (n, oh), the kernel rows that land
// inside the input, channels from `oc` (`outs` of them, the first at lane
// `lane` of packed weights block `ob`) and columns from `ow0`.
struct DirectBlock {
    int64_t n = 0, oh = 0, kh_lo = 0, kh_hi = 0, ob = 0, lane = 0, oc = 0, outs = 0, ow0 = 0;
};

// J output channels x V vectors of 8 columns, in J * V registers. Each tap
// loads V vectors of x and broadcasts J weights: 8 channels x 1 vector loads
// 9 values per 8 multiply-adds, 4 x 2 loads 6, which suits rows of 16
// columns or more. K: the kernel's width when it is 1 or 3 (the loop over
// it unrolled), else 0 (a.KW at run time).
template <int J, int V, int K>
inline void direct_conv_block(const DirectConvRows& a, const DirectBlock& b) {
    const int64_t in_row = a.sw * a.row_len, kw_n = K ? K : a.KW;
    DirectV8 acc[J][V];
    for (int j = 0; j < J; ++j) {
        const float v = a.bias && j < b.outs ? a.bias[b.oc + j] : 0.0f;
        for (int u = 0; u < V; ++u) acc[j][u] = DirectV8{v, v, v, v, v, v, v, v};
    }
    for (int64_t c = 0; c < a.C; ++c) {
        const float* x_c = a.prep + ((b.n * a.C + c) * a.H) * in_row + b.ow0;
        const float* w_c = a.wpack + (b.ob * a.C + c) * a.KH * a.KW * kDirectLanes + b.lane;
        for (int64_t kh = b.kh_lo; kh < b.kh_hi; ++kh) {
            const float* x_row = x_c + (b.oh * a.sh + kh * a.dh - a.ph) * in_row;
            const float* w_row = w_c + kh * a.KW * kDirectLanes;
#pragma GCC unroll 3
            for (int64_t kw = 0; kw < kw_n; ++kw) {
                DirectV8 x[V];
                for (int u = 0; u < V; ++u) std::memcpy(&x[u], x_row + a.kw_offset[kw] + u * kDirectLanes, sizeof x[u]);
                const float* w = w_row + kw * kDirectLanes;
#pragma GCC unroll 8
                for (int j = 0; j < J; ++j)
                    for (int u = 0; u < V; ++u) acc[j][u] += w[j] * x[u];
            }
        }
    }
    const int64_t plane = a.OH * a.OW;
    float* out = a.y + ((b.n * a.O + b.oc) * a.OH + b.oh) * a.OW + b.ow0;
    for (int u = 0; u < V; ++u) {
        const int64_t cols = a.OW - b.ow0 - u * kDirectLanes;
        if (cols >= kDirectLanes) {
            for (int64_t j = 0; j < b.outs; ++j) std::memcpy(out + j * plane + u * kDirectLanes, &acc[j][u], 32);
        } else if (cols > 0) {
            for (int64_t j = 0; j < b.outs; ++j)
                std::memcpy(out + j * plane + u * kDirectLanes, &acc[j][u], static_cast<size_t>(cols) * sizeof(float));
        }
    }
}

template <int J, int V>
inline void direct_conv_block(const DirectConvRows& a, const DirectBlock& b) {
    if (a.KW == 3) direct_conv_block<J, V, 3>(a, b);
    else if (a.KW == 1) direct_conv_block<J, V, 1>(a, b);
    else direct_conv_block<J, V, 0>(a, b);
}

// Output rows [begin, end) of the flattened [N, OH]. Rows of 16 columns or
// more go in blocks of WideJ channels x 2 vectors: 4 where 16 vector
// registers must hold them (2 * 4 accumulators, the x vectors and a
// broadcast), 8 with 32 registers (16 accumulators: twice the independent
// multiply-adds per loaded x, and x read once per 8 channels).
template <int WideJ = 4>
inline void direct_conv_rows(const DirectConvRows& a, size_t begin, size_t end) {
    const int64_t blocks = (a.O + kDirectLanes - 1) / kDirectLanes;
    for (size_t row = begin; row < end; ++row) {
        DirectBlock b;
        b.n = static_cast<int64_t>(row) / a.OH, b.oh = static_cast<int64_t>(row) % a.OH;
        // The kernel rows that land inside the input (the rest read padding).
        b.kh_lo = 0, b.kh_hi = a.KH;
        while (b.kh_lo < b.kh_hi && b.oh * a.sh + b.kh_lo * a.dh - a.ph < 0) ++b.kh_lo;
        while (b.kh_hi > b.kh_lo && b.oh * a.sh + (b.kh_hi - 1) * a.dh - a.ph >= a.H) --b.kh_hi;
        for (b.ob = 0; b.ob < blocks; ++b.ob) {
            const int64_t first = b.ob * kDirectLanes, outs = std::min(kDirectLanes, a.O - first);
            for (b.ow0 = 0; b.ow0 < a.OW;) {
                if (a.OW - b.ow0 >= 2 * kDirectLanes) {
                    for (b.lane = 0; b.lane < outs; b.lane += WideJ) {
                        b.oc = first + b.lane, b.outs = std::min<int64_t>(WideJ, outs - b.lane);
                        direct_conv_block<WideJ, 2>(a, b);
                    }
                    b.ow0 += 2 * kDirectLanes;
                } else {
                    b.lane = 0, b.oc = first, b.outs = outs;
                    direct_conv_block<8, 1>(a, b);
                    b.ow0 += kDirectLanes;
                }
            }
        }
    }
}

}   // namespace
}   // namespace dynrt
