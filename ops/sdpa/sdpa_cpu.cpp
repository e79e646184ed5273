// sdpa on the cpu engine: a flash-attention loop in f32 (cpu_opt_dynamic,
// cpu_opt_static).
//
// One task is a block of up to kRows query rows of one (batch, head). It
// walks the keys in blocks of kKeys, keeping per row the running maximum m,
// the running sum l of exp(score - m) and the running weighted sum of v rows
// (acc); a block that raises the maximum rescales l and acc by
// exp(m_old - m_new) first (the online softmax). The scores of one block are
// the only ones held, so nothing of size [Sq, Sk] is ever allocated: a task's
// scratch is kRows x kKeys scores, a transposed key block and kRows x Dv
// sums. Keys past a row's causal limit are never scored. A row whose maximum
// is still -inf at the end saw no key: 0 or NaN (zero_masked_rows).
//
// Scores of a block of several rows run over the key block transposed
// ([D, kKeys]: the inner loop runs along keys, no reduction); a block of
// fewer rows (a decode) takes dot products along D instead, in kLanes float
// lanes. Tasks go over the engine's threads (dynrt/cpu_parallel.hpp); exp is
// dynrt/cpu_vec_math.hpp's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/op_sdk.hpp"
#include "sdpa_call.hpp"
#include "sdpa_impls.hpp"

namespace sdpa {

namespace {

using dynrt::DataType;

constexpr size_t kRows = 32;    // query rows per task
constexpr size_t kKeys = 64;    // keys per block
constexpr size_t kLanes = 16;   // float lanes of a dot product or a sum
// Fewer rows than this score a block by dot products (no transposed copy).
constexpr size_t kTransposeRows = 4;

// What every task reads: the call's pointers and geometry.
struct Call {
    Dims g;
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    const void* mask = nullptr;
    float* out = nullptr;
    float scale = 1.0f;
    Causal causal = Causal::none;
    float masked_row = 0.0f;
};

// A task's buffers, made once per chunk of tasks.
struct Scratch {
    std::vector<float> kt, s, acc, m, l;
    explicit Scratch(const Dims& g) : kt(g.d * kKeys), s(kRows * kKeys), acc(kRows * g.dv), m(kRows), l(kRows) {}
};

DYNRT_CPU_CLONES float dot(const float* a, const float* b, size_t n) {
    float lanes[kLanes] = {};
    size_t t = 0;
    for (; t + kLanes <= n; t += kLanes)
        for (size_t l = 0; l < kLanes; ++l) lanes[l] += a[t + l] * b[t + l];
    float sum = 0.0f;
    for (; t < n; ++t) sum += a[t] * b[t];
    for (float l : lanes) sum += l;
    return sum;
}

// s[c] = scale * q . k(c) for the block's first `cols` keys, from the
// transposed block kt [d, kKeys].
DYNRT_CPU_CLONES void scores_transposed(const float* q, const float* kt, size_t d, size_t cols, float scale, float* s) {
    for (size_t c = 0; c < cols; ++c) s[c] = 0.0f;
    for (size_t t = 0; t < d; ++t) {
        const float qt = q[t] * scale;
        const float* row = kt + t * kKeys;
        for (size_t c = 0; c < cols; ++c) s[c] += qt * row[c];
    }
}

// Adds the mask to the scores (float) or masks the keys it marks (bool / u8).
void apply_mask(const Call& c, size_t mask_at, size_t cols, float* s) {
    const size_t step = c.g.mask_stride[3];
    if (c.g.mask_bool) {
        const auto* m = static_cast<const uint8_t*>(c.mask) + mask_at;
        const float inf = std::numeric_limits<float>::infinity();
        for (size_t j = 0; j < cols; ++j)
            if (m[j * step] == 0) s[j] = -inf;
    } else {
        const float* m = static_cast<const float*>(c.mask) + mask_at;
        for (size_t j = 0; j < cols; ++j) s[j] += m[j * step];
    }
}

// The online-softmax step of one row over `cols` scores: turns them into
// weights exp(s - m_new), updates m and l, rescales acc and adds the
// weighted v rows.
DYNRT_CPU_CLONES void absorb(float* s, size_t cols, const float* v, size_t dv, float& m, float& l, float* acc) {
    float mx = m;
    for (size_t c = 0; c < cols; ++c) mx = s[c] > mx ? s[c] : mx;
    if (mx == -std::numeric_limits<float>::infinity()) return;   // nothing seen yet
    const float corr = dynrt::vec::exp(m - mx);                  // 0 when m was -inf
    float lanes[kLanes] = {};
    size_t c = 0;
    for (; c + kLanes <= cols; c += kLanes)
        for (size_t i = 0; i < kLanes; ++i) {
            const float p = dynrt::vec::exp(s[c + i] - mx);
            s[c + i] = p;
            lanes[i] += p;
        }
    float sum = 0.0f;
    for (; c < cols; ++c) sum += s[c] = dynrt::vec::exp(s[c] - mx);
    for (float x : lanes) sum += x;
    l = l * corr + sum;
    m = mx;
    if (corr != 1.0f)
        for (size_t t = 0; t < dv; ++t) acc[t] *= corr;
    for (c = 0; c < cols; ++c) {
        const float p = s[c];
        const float* vr = v + c * dv;
        for (size_t t = 0; t < dv; ++t) acc[t] += p * vr[t];
    }
}

// Rows [i0, i1) of head h of batch b.
void run_task(const Call& c, size_t b, size_t h, size_t i0, size_t i1, Scratch& w) {
    const Dims& g = c.g;
    const size_t rows = i1 - i0;
    std::fill(w.m.begin(), w.m.end(), -std::numeric_limits<float>::infinity());
    std::fill(w.l.begin(), w.l.end(), 0.0f);
    std::fill(w.acc.begin(), w.acc.begin() + static_cast<std::ptrdiff_t>(rows * g.dv), 0.0f);
    const size_t keys = visible_end(c.causal, i1 - 1, g.sq, g.sk);   // the last row sees the most
    const bool transpose = rows >= kTransposeRows;
    for (size_t j0 = 0; j0 < keys; j0 += kKeys) {
        const size_t nb = std::min(kKeys, keys - j0);
        const float* kb = c.k + g.k_row(b, h, j0);
        if (transpose)
            for (size_t j = 0; j < nb; ++j)
                for (size_t t = 0; t < g.d; ++t) w.kt[t * kKeys + j] = kb[j * g.d + t];
        for (size_t r = 0; r < rows; ++r) {
            const size_t i = i0 + r;
            const size_t end = visible_end(c.causal, i, g.sq, g.sk);
            if (end <= j0) continue;   // past this row's causal limit
            const size_t cols = std::min(nb, end - j0);
            float* s = w.s.data() + r * kKeys;
            const float* q = c.q + g.q_row(b, h, i);
            if (transpose) {
                scores_transposed(q, w.kt.data(), g.d, cols, c.scale, s);
            } else {
                for (size_t j = 0; j < cols; ++j) s[j] = c.scale * dot(q, kb + j * g.d, g.d);
            }
            if (g.has_mask) apply_mask(c, g.mask_row(b, h, i) + j0 * g.mask_stride[3], cols, s);
            absorb(s, cols, c.v + g.v_row(b, h, j0), g.dv, w.m[r], w.l[r], w.acc.data() + r * g.dv);
        }
    }
    for (size_t r = 0; r < rows; ++r) {
        float* y = c.out + g.out_row(b, h, i0 + r);
        const float* acc = w.acc.data() + r * g.dv;
        if (w.m[r] == -std::numeric_limits<float>::infinity()) {
            std::fill(y, y + g.dv, c.masked_row);
            continue;
        }
        const float inv = 1.0f / w.l[r];
        for (size_t t = 0; t < g.dv; ++t) y[t] = acc[t] * inv;
    }
}

void fast_kernel(dynrt::HostCall& call) {
    const dynrt::Shape* mask = call.num_inputs() > 3 ? &call.in_shape(3) : nullptr;
    Call c;
    c.g = dims_of(call.in_shape(0), call.in_shape(1), call.in_shape(2), mask, mask ? call.in_type(3) : DataType::f32);
    const Dims& g = c.g;
    if (g.b * g.hq * g.sq * g.dv == 0) return;
    c.q = call.in<float>(0);
    c.k = call.in<float>(1);
    c.v = call.in<float>(2);
    c.mask = mask ? call.in_raw(3) : nullptr;
    c.out = call.out<float>(0);
    c.scale = static_cast<float>(scale_of(call.attrs(), g.d));
    c.causal = causal_of(call.attrs());
    c.masked_row = zero_masked_rows(call.attrs()) ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    // Tasks run (batch, head) by (batch, head), the row blocks of each in a
    // zigzag (first, last, second, ...): with a causal mask a late block
    // scores more keys, and a thread's contiguous run of tasks then mixes
    // heavy and light ones.
    const size_t blocks = (g.sq + kRows - 1) / kRows;
    const size_t tasks = g.b * g.hq * blocks;
    const size_t bytes = sizeof(float) * (g.b * g.hq * (g.sq * (g.d + g.dv) + blocks * g.sk * (g.d + g.dv)));
    const dynrt::CpuThreads threads(call.params().engine, bytes);
    dynrt::parallel_for(threads, tasks, 1, [&](size_t begin, size_t end) {
        Scratch w(g);
        for (size_t t = begin; t < end; ++t) {
            const size_t bh = t / blocks, z = t % blocks;
            const size_t blk = z % 2 == 0 ? z / 2 : blocks - 1 - z / 2;
            const size_t i0 = blk * kRows;
            run_task(c, bh / g.hq, bh % g.hq, i0, std::min(g.sq, i0 + kRows), w);
        }
    });
}

}   // namespace

void register_cpu_impls(dynrt::ModuleRegistrar& reg) {
    dynrt::add_host_impls(reg, "sdpa", fast_kernel, dynrt::optimised_host_options({DataType::f32}));
}

}   // namespace sdpa
