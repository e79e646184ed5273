// recurrent on the cpu engine (cpu_opt_dynamic, cpu_opt_static; f32).
//
// Per direction: the input projection of every step at once, X W^T as one
// oneDNN sgemm over all seq * batch rows (plus both biases), then the
// recurrence step by step: H_t-1 R^T for the whole batch (a GRU without
// linear_before_reset takes two products: z and r first, then
// (r . H_t-1) Rh^T), as plain loops over R transposed when the product is
// small and as one sgemm otherwise, and the gate math row by row (sigmoid
// and tanh on 8-lane vectors). Step s of batch entry b is time s (forward)
// or len_b - 1 - s (reverse); an entry whose sequence has ended keeps its
// state, which is its Y_h. sgemm runs on the call's share of the engine's
// threads (dynrt/cpu_parallel.hpp sets OpenMP's count for it).
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"
#include "recurrent_call.hpp"
#include "recurrent_impls.hpp"

namespace recurrent {

namespace {

using dynrt::DataType;

// C [m, n] (row stride ldc) = A [m, k] (lda) times B^T, B [n, k] (ldb); beta 0 or 1.
void gemm_bt(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
             size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        if (beta == 0.0f)
            for (size_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
        return;
    }
    const auto d = [](size_t v) { return static_cast<dnnl_dim_t>(v); };
    if (dnnl_sgemm('N', 'T', d(m), d(n), d(k), 1.0f, a, d(lda), b, d(ldb), beta, c, d(ldc)) != dnnl_success)
        throw dynrt::Error("recurrent: oneDNN sgemm failed (" + std::to_string(m) + " x " + std::to_string(n) + " x " +
                           std::to_string(k) + ")");
}

// Below this many multiply-adds a step's product H_t-1 R^T runs as plain
// loops on the calling thread: sgemm's call and OpenMP's fork and join cost
// more than the product itself (a batch of 1 with 48 hidden units is 9216
// multiply-adds, about a microsecond).
constexpr size_t kSmallProduct = size_t{1} << 16;

// C [m, n] (ldc) = A [m, k] (lda) times Bt [k, n] (ldb, R transposed once per
// call): each row of C a sum of rows of Bt, contiguous, so the loop vectorises.
DYNRT_CPU_CLONES void small_product(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* bt,
                                    size_t ldb, float* c, size_t ldc) {
    for (size_t i = 0; i < m; ++i) {
        float* ci = c + i * ldc;
        std::fill(ci, ci + n, 0.0f);
        for (size_t t = 0; t < k; ++t) {
            const float w = a[i * lda + t];
            const float* row = bt + t * ldb;
            for (size_t j = 0; j < n; ++j) ci[j] += w * row[j];
        }
    }
}

// Eight floats as one value (GCC's vector extension). The loops of
// dynrt/cpu_vec_math.hpp's exp are left scalar by GCC 12 in the AVX2 clone
// ("control flow in loop"; only the AVX-512 clone vectorises), and the gate
// activations were half the time of a small lstm; written on whole vectors
// the same exp runs 8 lanes at a time on any clone.
using F8 = float __attribute__((vector_size(8 * sizeof(float))));
using I8 = int32_t __attribute__((vector_size(8 * sizeof(int32_t))));

// e = e^a on 8 lanes, a within [lo, hi] (the caller clamps): dynrt::vec::exp's
// range reduction and polynomial. (Through references, as sdpa's loads: a
// vector by value would change the ABI of the baseline clone.)
DYNRT_VEC_INLINE void exp8(F8& e, const F8& a) {
    const F8 magic = F8{} + 12582912.0f;   // 1.5 * 2^23: adding it rounds to an integer
    const F8 n = (a * 1.44269504089f + magic) - magic;
    const F8 r = (a - n * 0.693359375f) + n * 2.12194440e-4f;
    F8 p = F8{} + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const I8 ni = __builtin_convertvector(n, I8);
    const I8 half = ni >> 1;   // 2^n as two factors: never past the exponent field
    const I8 b0 = (half + 127) << 23, b1 = (ni - half + 127) << 23;
    F8 f0, f1;
    std::memcpy(&f0, &b0, sizeof f0);
    std::memcpy(&f1, &b1, sizeof f1);
    e = p * f0 * f1;
}

// x = sigmoid(x) or tanh(x), 8 lanes at a time; NaN stays NaN.
DYNRT_CPU_CLONES void sigmoid_or_tanh(float* x, size_t n, bool tanh_) {
    const float lo = -87.33654f, hi = 88.72283f;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        F8 v;
        std::memcpy(&v, x + i, sizeof v);
        F8 a = tanh_ ? v * 2.0f : -v;
        a = a != a ? F8{} : a;
        a = a < lo ? F8{} + lo : a;
        a = a > hi ? F8{} + hi : a;
        F8 e;
        exp8(e, a);
        F8 y = tanh_ ? 1.0f - 2.0f / (e + 1.0f) : 1.0f / (1.0f + e);
        y = v != v ? v : y;
        std::memcpy(x + i, &y, sizeof y);
    }
    for (; i < n; ++i) x[i] = tanh_ ? dynrt::vec::tanh(x[i]) : dynrt::vec::sigmoid(x[i]);
}

// x[0, n) = act(clip(x)).
DYNRT_CPU_CLONES void activate(const Activation& a, double clip, float* x, size_t n) {
    if (clip > 0.0)
        for (size_t i = 0; i < n; ++i) x[i] = clip_to(x[i], clip);
    switch (a.f) {
        case Act::sigmoid: sigmoid_or_tanh(x, n, false); return;
        case Act::tanh: sigmoid_or_tanh(x, n, true); return;
        case Act::relu:
            for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
            return;
        default:
            for (size_t i = 0; i < n; ++i) x[i] = apply(a, x[i]);
    }
}

struct Call {
    Config c;
    Dims g;
    const float* x = nullptr;
    const float* w = nullptr;
    const float* r = nullptr;
    const float* bias = nullptr;
    const float* h0 = nullptr;
    const float* c0 = nullptr;
    const float* p = nullptr;
    float* y = nullptr;
    float* yh = nullptr;
    float* yc = nullptr;
    std::vector<int64_t> lens;
};

// One direction.
void run_direction(const Call& k, size_t d) {
    const Config& c = k.c;
    const Dims& g = k.g;
    const size_t H = g.hidden, I = g.input, GH = g.gh(), B = g.batch, rows = g.seq * g.batch;
    const float* wd = k.w + d * GH * I;
    const float* rd = k.r + d * GH * H;
    const float* wb = k.bias ? k.bias + d * 2 * GH : nullptr;
    const float* rb = wb ? wb + GH : nullptr;
    const bool gru = c.kind == Kind::gru, lstm = c.kind == Kind::lstm;
    // The projection with both biases; a GRU with linear_before_reset adds
    // Rbh inside the reset instead.
    std::vector<float> xw(rows * GH);
    gemm_bt(rows, GH, I, k.x, I, wd, I, 0.0f, xw.data(), GH);
    if (wb) {
        std::vector<float> bsum(GH);
        for (size_t j = 0; j < GH; ++j) bsum[j] = wb[j] + (gru && c.linear_before_reset && j >= 2 * H ? 0.0f : rb[j]);
        for (size_t row = 0; row < rows; ++row)
            for (size_t j = 0; j < GH; ++j) xw[row * GH + j] += bsum[j];
    }
    std::vector<float> h(B * H, 0.0f), cell(lstm ? B * H : 0, 0.0f), rec(B * GH), reset_h(B * H), pre(GH);
    for (size_t b = 0; b < B; ++b) {
        if (k.h0) std::memcpy(&h[b * H], k.h0 + g.state_at(d, b), H * sizeof(float));
        if (k.c0) std::memcpy(&cell[b * H], k.c0 + g.state_at(d, b), H * sizeof(float));
    }
    const int64_t steps = k.lens.empty() ? 0 : *std::max_element(k.lens.begin(), k.lens.end());
    // Small steps multiply by R transposed ([H, GH]) in plain loops, large ones call sgemm.
    const bool small = B * GH * H < kSmallProduct;
    std::vector<float> rt(small ? H * GH : 0);
    if (small)
        for (size_t j = 0; j < GH; ++j)
            for (size_t t = 0; t < H; ++t) rt[t * GH + j] = rd[j * H + t];
    // rec[:, col0, col0 + n) = a R[col0, col0 + n)^T.
    auto product = [&](const float* a, size_t col0, size_t n) {
        if (small) small_product(B, n, H, a, H, rt.data() + col0, GH, rec.data() + col0, GH);
        else gemm_bt(B, n, H, a, H, rd + col0 * H, H, 0.0f, rec.data() + col0, GH);
    };
    const Activation& f = c.act(d, 0);
    const Activation& ga = c.act(d, c.per_dir > 1 ? 1 : 0);
    const Activation& ha = c.act(d, c.per_dir > 2 ? 2 : 0);
    const float* pd = k.p ? k.p + d * 3 * H : nullptr;
    auto time_of = [&](size_t s, size_t b) {
        const auto len = static_cast<size_t>(k.lens[b]);
        return c.reversed(d) ? len - 1 - s : s;
    };
    for (size_t s = 0; s < static_cast<size_t>(steps); ++s) {
        const bool two_products = gru && !c.linear_before_reset;
        product(h.data(), 0, two_products ? 2 * H : GH);
        if (two_products) {
            for (size_t b = 0; b < B; ++b) {
                if (static_cast<int64_t>(s) >= k.lens[b]) continue;
                const float* xr = xw.data() + g.x_row(time_of(s, b), b) * GH;
                float* rg = rec.data() + b * GH;
                for (size_t j = 0; j < 2 * H; ++j) rg[j] += xr[j];
                activate(f, c.clip, rg, 2 * H);   // z, r
                for (size_t j = 0; j < H; ++j) reset_h[b * H + j] = rg[H + j] * h[b * H + j];
            }
            product(reset_h.data(), 2 * H, H);
        }
        for (size_t b = 0; b < B; ++b) {
            if (static_cast<int64_t>(s) >= k.lens[b]) continue;
            const size_t t = time_of(s, b);
            const float* xr = xw.data() + g.x_row(t, b) * GH;
            float* rg = rec.data() + b * GH;
            float* hb = h.data() + b * H;
            if (c.kind == Kind::rnn) {
                for (size_t j = 0; j < H; ++j) hb[j] = xr[j] + rg[j];
                activate(f, c.clip, hb, H);
            } else if (gru) {
                float* n = pre.data();
                if (c.linear_before_reset) {
                    for (size_t j = 0; j < 2 * H; ++j) rg[j] += xr[j];
                    activate(f, c.clip, rg, 2 * H);
                    for (size_t j = 0; j < H; ++j)
                        n[j] = xr[2 * H + j] + rg[H + j] * (rg[2 * H + j] + (rb ? rb[2 * H + j] : 0.0f));
                } else {
                    for (size_t j = 0; j < H; ++j) n[j] = xr[2 * H + j] + rg[2 * H + j];
                }
                activate(ga, c.clip, n, H);
                for (size_t j = 0; j < H; ++j) hb[j] = (1.0f - rg[j]) * n[j] + rg[j] * hb[j];
            } else {   // lstm: i o f c
                float* cb = cell.data() + b * H;
                float* a = pre.data();
                for (size_t j = 0; j < GH; ++j) a[j] = xr[j] + rg[j];
                if (pd)
                    for (size_t j = 0; j < H; ++j) {
                        a[j] += pd[j] * cb[j];
                        a[2 * H + j] += pd[2 * H + j] * cb[j];
                    }
                activate(f, c.clip, a, H);   // i
                if (c.input_forget)
                    for (size_t j = 0; j < H; ++j) a[2 * H + j] = 1.0f - a[j];
                else activate(f, c.clip, a + 2 * H, H);   // f
                activate(ga, c.clip, a + 3 * H, H);       // c
                for (size_t j = 0; j < H; ++j) cb[j] = a[2 * H + j] * cb[j] + a[j] * a[3 * H + j];
                if (pd)
                    for (size_t j = 0; j < H; ++j) a[H + j] += pd[H + j] * cb[j];
                activate(f, c.clip, a + H, H);   // o
                std::memcpy(hb, cb, H * sizeof(float));
                activate(ha, 0.0, hb, H);
                for (size_t j = 0; j < H; ++j) hb[j] *= a[H + j];
            }
            std::memcpy(k.y + g.y_at(t, d, b), hb, H * sizeof(float));
        }
    }
    for (size_t b = 0; b < B; ++b) {
        for (auto t = static_cast<size_t>(k.lens[b]); t < g.seq; ++t) std::fill_n(k.y + g.y_at(t, d, b), H, 0.0f);
        std::memcpy(k.yh + g.state_at(d, b), &h[b * H], H * sizeof(float));
        if (k.yc) std::memcpy(k.yc + g.state_at(d, b), &cell[b * H], H * sizeof(float));
    }
}

void fast_kernel(dynrt::HostCall& call) {
    Call k;
    k.c = config_of(call.attrs(), call.num_inputs());
    k.g = dims_of(k.c, call.in_shape(0), call.in_shape(2));
    const Dims& g = k.g;
    k.lens.assign(g.batch, static_cast<int64_t>(g.seq));
    if (k.c.in_seq >= 0) k.lens = call.get_ints(static_cast<size_t>(k.c.in_seq));
    for (size_t b = 0; b < g.batch; ++b)
        if (k.lens[b] < 0 || k.lens[b] > static_cast<int64_t>(g.seq))
            throw length_error(call.node(), k.lens[b], b, g.seq);
    auto opt = [&](int index) { return index < 0 ? nullptr : call.in<float>(static_cast<size_t>(index)); };
    k.x = call.in<float>(0);
    k.w = call.in<float>(1);
    k.r = call.in<float>(2);
    k.bias = opt(k.c.in_b);
    k.h0 = opt(k.c.in_h0);
    k.c0 = opt(k.c.in_c0);
    k.p = opt(k.c.in_p);
    k.y = call.out<float>(0);
    k.yh = call.out<float>(1);
    k.yc = k.c.kind == Kind::lstm ? call.out<float>(2) : nullptr;
    if (g.batch * g.hidden == 0) return;
    const size_t bytes = sizeof(float) * (g.seq * g.batch * (g.input + g.gh() + g.dirs * g.hidden) +
                                          g.dirs * g.gh() * (g.input + g.hidden));
    const dynrt::CpuThreads threads(call.params().engine, bytes);
    for (size_t d = 0; d < g.dirs; ++d) run_direction(k, d);
}

std::string validate(const dynrt::KernelParams& p) {
    for (size_t i = 0; i < p.inputs.size(); ++i) {
        const DataType t = p.inputs[i].dtype;
        if (t != DataType::f32 && t != DataType::i32 && t != DataType::i64)
            return "input " + std::to_string(i) + " is " + dynrt::to_string(t) + " (the loop takes f32)";
    }
    return {};
}

}   // namespace

void register_cpu_impls(dynrt::ModuleRegistrar& reg) {
    dynrt::add_host_impls(reg, "recurrent", fast_kernel, dynrt::optimised_host_options({DataType::f32}, validate));
}

}   // namespace recurrent
