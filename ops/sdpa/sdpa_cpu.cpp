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
// A block of kTile rows or more scores its keys from the key block
// transposed ([D, kKeys]) and its rows scaled once: kTile rows x 16 keys of
// sums stay in registers over the whole of D, so two loads of a key row feed
// 2 x kTile vector multiply-adds; the weighted sums add the v rows kTile
// query rows x kTileLanes columns at a time the same way. A block of fewer
// rows (a decode) takes dot products along D in kLanes float lanes, and adds
// v rows one by one. Tasks go over the engine's threads
// (dynrt/cpu_parallel.hpp); exp is dynrt/cpu_vec_math.hpp's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

constexpr size_t kRows = 32;       // query rows per task
constexpr size_t kKeys = 64;       // keys per block
constexpr size_t kLanes = 16;      // float lanes of a dot product or a sum
constexpr size_t kTile = 4;        // query rows whose sums share each load of a key or v row
constexpr size_t kTileLanes = 8;   // floats of one register of a tile's sums (AVX2)
// Fewer rows than this score a block by dot products (no transposed copy).
constexpr size_t kTransposeRows = kTile;

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
    std::vector<float> qs, kt, s, acc, m, l;
    explicit Scratch(const Dims& g)
        : qs(kRows * g.d), kt(g.d * kKeys), s(kRows * kKeys), acc(kRows * g.dv), m(kRows), l(kRows) {}
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

// kTileLanes floats as one value (GCC's vector extension): a tile's sums
// are a few such values, which the compiler keeps in registers. Left to
// the auto-vectoriser, the tile loops were vectorised along D instead, with
// gathers, and ran 6 times slower than plain loops. (Loaded and stored
// through references: a function returning one would change the ABI of the
// baseline clone.)
using Lanes = float __attribute__((vector_size(kTileLanes * sizeof(float))));

DYNRT_VEC_INLINE void load(Lanes& v, const float* p) { std::memcpy(&v, p, sizeof v); }
DYNRT_VEC_INLINE void store(float* p, const Lanes& v) { std::memcpy(p, &v, sizeof v); }

// Scores of kTile rows at once: s[r][c] = qs_r . k(c) (qs: the rows scaled)
// for the block's first `cols` keys (rounded up to 2 x kTileLanes; the extra
// ones are never read), from the transposed block kt [d, kKeys]. The tile's
// sums stay in registers over the whole of D: per step two loads of a key
// row and kTile broadcasts feed 2 x kTile vector multiply-adds.
DYNRT_CPU_CLONES void scores_tile(const float* qs, size_t d, const float* kt, size_t cols, float* s) {
    const float* q1 = qs + d;
    const float* q2 = qs + 2 * d;
    const float* q3 = qs + 3 * d;
    for (size_t c0 = 0; c0 < cols; c0 += 2 * kTileLanes) {
        Lanes a0 = {}, a1 = {}, a2 = {}, a3 = {}, b0 = {}, b1 = {}, b2 = {}, b3 = {}, ra, rb;
        for (size_t t = 0; t < d; ++t) {
            load(ra, kt + t * kKeys + c0);
            load(rb, kt + t * kKeys + c0 + kTileLanes);
            a0 += ra * qs[t], b0 += rb * qs[t];
            a1 += ra * q1[t], b1 += rb * q1[t];
            a2 += ra * q2[t], b2 += rb * q2[t];
            a3 += ra * q3[t], b3 += rb * q3[t];
        }
        store(s + c0, a0), store(s + c0 + kTileLanes, b0);
        store(s + kKeys + c0, a1), store(s + kKeys + c0 + kTileLanes, b1);
        store(s + 2 * kKeys + c0, a2), store(s + 2 * kKeys + c0 + kTileLanes, b2);
        store(s + 3 * kKeys + c0, a3), store(s + 3 * kKeys + c0 + kTileLanes, b3);
    }
}

// The same for one row.
DYNRT_CPU_CLONES void scores_row(const float* qs, size_t d, const float* kt, size_t cols, float* s) {
    for (size_t c0 = 0; c0 < cols; c0 += kTileLanes) {
        Lanes x = {}, r;
        for (size_t t = 0; t < d; ++t) {
            load(r, kt + t * kKeys + c0);
            x += r * qs[t];
        }
        store(s + c0, x);
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

// The online-softmax step of one row over its `cols` scores of a block of
// `nb` keys: turns the scores into weights exp(s - m_new) (0 for the keys
// past `cols`, and for all while every score so far is -inf), updates m and
// l and rescales acc by exp(m_old - m_new).
DYNRT_CPU_CLONES void softmax_step(float* s, size_t cols, size_t nb, size_t dv, float& m, float& l, float* acc) {
    float mx = m;
    for (size_t c = 0; c < cols; ++c) mx = s[c] > mx ? s[c] : mx;
    if (mx == -std::numeric_limits<float>::infinity()) cols = 0;   // nothing seen yet: no weight
    for (size_t c = cols; c < nb; ++c) s[c] = 0.0f;
    if (cols == 0) return;
    const float corr = dynrt::vec::exp(m - mx);   // 0 when m was -inf
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
}

// acc[r] += sum over the block's nb keys of weight s[r][c] * v row c, for
// rows [0, rows): kTile rows at once, kLanes columns of v in registers over
// the whole block (one load of a v row per kTile multiply-adds).
DYNRT_CPU_CLONES void add_weighted(const float* s, size_t rows, size_t nb, const float* v, size_t dv, float* acc) {
    size_t r = 0;
    for (; r + kTile <= rows; r += kTile) {
        const float* p0 = s + r * kKeys;
        const float* p1 = p0 + kKeys;
        const float* p2 = p0 + 2 * kKeys;
        const float* p3 = p0 + 3 * kKeys;
        float* a = acc + r * dv;
        size_t t0 = 0;
        for (; t0 + kTileLanes <= dv; t0 += kTileLanes) {
            Lanes x0, x1, x2, x3, vr;
            load(x0, a + t0), load(x1, a + dv + t0), load(x2, a + 2 * dv + t0), load(x3, a + 3 * dv + t0);
            for (size_t c = 0; c < nb; ++c) {
                load(vr, v + c * dv + t0);
                x0 += vr * p0[c], x1 += vr * p1[c], x2 += vr * p2[c], x3 += vr * p3[c];
            }
            store(a + t0, x0), store(a + dv + t0, x1), store(a + 2 * dv + t0, x2), store(a + 3 * dv + t0, x3);
        }
        for (; t0 < dv; ++t0)
            for (size_t i = 0; i < kTile; ++i)
                for (size_t c = 0; c < nb; ++c) a[i * dv + t0] += p0[i * kKeys + c] * v[c * dv + t0];
    }
    for (; r < rows; ++r) {
        const float* p = s + r * kKeys;
        float* a = acc + r * dv;
        for (size_t c = 0; c < nb; ++c) {
            const float w = p[c];
            const float* vr = v + c * dv;
            for (size_t t = 0; t < dv; ++t) a[t] += w * vr[t];
        }
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
    const float* q = c.q + g.q_row(b, h, i0);
    if (transpose)   // the rows scaled once, read by every key block
        for (size_t x = 0; x < rows * g.d; ++x) w.qs[x] = q[x] * c.scale;
    for (size_t j0 = 0; j0 < keys; j0 += kKeys) {
        const size_t nb = std::min(kKeys, keys - j0);
        const float* kb = c.k + g.k_row(b, h, j0);
        // The keys a row sees in this block: none past its causal limit.
        auto cols_of = [&](size_t r) {
            const size_t end = visible_end(c.causal, i0 + r, g.sq, g.sk);
            return end > j0 ? std::min(nb, end - j0) : size_t{0};
        };
        if (transpose) {
            for (size_t j = 0; j < nb; ++j)
                for (size_t t = 0; t < g.d; ++t) w.kt[t * kKeys + j] = kb[j * g.d + t];
            size_t r = 0;
            for (; r + kTile <= rows; r += kTile)   // the tile's last row sees the most
                if (const size_t cols = cols_of(r + kTile - 1))
                    scores_tile(w.qs.data() + r * g.d, g.d, w.kt.data(), cols, w.s.data() + r * kKeys);
            for (; r < rows; ++r)
                if (const size_t cols = cols_of(r))
                    scores_row(w.qs.data() + r * g.d, g.d, w.kt.data(), cols, w.s.data() + r * kKeys);
        } else {
            for (size_t r = 0; r < rows; ++r)
                for (size_t j = 0, cols = cols_of(r); j < cols; ++j)
                    w.s[r * kKeys + j] = c.scale * dot(q + r * g.d, kb + j * g.d, g.d);
        }
        for (size_t r = 0; r < rows; ++r) {
            const size_t cols = cols_of(r);
            float* s = w.s.data() + r * kKeys;
            if (g.has_mask && cols) apply_mask(c, g.mask_row(b, h, i0 + r) + j0 * g.mask_stride[3], cols, s);
            softmax_step(s, cols, nb, g.dv, w.m[r], w.l[r], w.acc.data() + r * g.dv);
        }
        add_weighted(w.s.data(), rows, nb, c.v + g.v_row(b, h, j0), g.dv, w.acc.data());
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
