// sdpa: the geometry of one call (static shapes), shared by the reference, the
// cpu loop and the OpenCL impls' dispatch; and the attribute readers.
//
// q [B, Hq, Sq, D], k [B, Hk, Sk, D], v [B, Hk, Sk, Dv], optional mask
// broadcast to [B, Hq, Sq, Sk] (numpy rules: its dims right-aligned, a dim of 1
// or a missing dim repeats). Query head h reads kv head h / (Hq / Hk). The
// scores of row (b, h, i) are scale * q_i . k_j, plus the mask (float) or -inf
// where the mask is false (bool, u8) or the key is past the causal limit
// (visible_end). The row's softmax weighs the v rows; a row whose every score
// is -inf (every key masked, or no key at all) gives 0 with zero_masked_rows,
// else NaN (what a softmax of all -inf gives).
//
// Kept in the op folder: nothing outside the op needs it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dynrt/attributes.hpp"
#include "dynrt/layout.hpp"

namespace sdpa {

// The `causal` attribute.
enum class Causal : int64_t {
    none = 0,
    upper_left = 1,    // query i sees keys j <= i (ONNX Attention's is_causal)
    lower_right = 2,   // query i sees keys j <= i + Sk - Sq (a KV-cache decode)
};

inline Causal causal_of(const dynrt::Attributes& a) { return static_cast<Causal>(a.get_int("causal")); }
inline bool zero_masked_rows(const dynrt::Attributes& a) { return a.get_int("zero_masked_rows") != 0; }

// The `scale` attribute; 0 means 1 / sqrt(D) (1 when D is 0: every score is 0 then).
inline double scale_of(const dynrt::Attributes& a, size_t d) {
    const double s = a.get_float("scale");
    if (s != 0.0) return s;
    return d == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(d));
}

// The end (exclusive) of the keys query row i sees under `causal`.
inline size_t visible_end(Causal causal, size_t i, size_t sq, size_t sk) {
    switch (causal) {
        case Causal::upper_left: return std::min(sk, i + 1);
        case Causal::lower_right: {
            // i + 1 + Sk - Sq, at least 0 (the first Sq - Sk rows of a longer
            // query see no key).
            const size_t end = i + 1 + sk;
            return end > sq ? std::min(sk, end - sq) : 0;
        }
        case Causal::none: break;
    }
    return sk;
}

struct Dims {
    size_t b = 0, hq = 0, hk = 0, sq = 0, sk = 0, d = 0, dv = 0;
    bool has_mask = false;
    bool mask_bool = false;   // bool or u8: true (non-zero) keeps the key
    // Element strides of the mask over [B, Hq, Sq, Sk]: 0 along the dims it
    // broadcasts (size 1 or missing).
    std::array<size_t, 4> mask_stride{};

    size_t group() const { return hk == 0 ? 1 : hq / hk; }   // query heads per kv head
    // Offsets of row starts (in elements) in q, k, v and the output.
    size_t q_row(size_t bi, size_t h, size_t i) const { return ((bi * hq + h) * sq + i) * d; }
    size_t k_row(size_t bi, size_t h, size_t j) const { return ((bi * hk + h / group()) * sk + j) * d; }
    size_t v_row(size_t bi, size_t h, size_t j) const { return ((bi * hk + h / group()) * sk + j) * dv; }
    size_t out_row(size_t bi, size_t h, size_t i) const { return ((bi * hq + h) * sq + i) * dv; }
    // The mask element of (b, h, i, key 0); key j adds j * mask_stride[3].
    size_t mask_row(size_t bi, size_t h, size_t i) const {
        return bi * mask_stride[0] + h * mask_stride[1] + i * mask_stride[2];
    }
};

// The dims of a call whose shapes shape inference accepted; `mask` null when
// there is none.
inline Dims dims_of(const dynrt::Shape& q, const dynrt::Shape& k, const dynrt::Shape& v, const dynrt::Shape* mask,
                    dynrt::DataType mask_type) {
    Dims g;
    g.b = static_cast<size_t>(q[0]);
    g.hq = static_cast<size_t>(q[1]);
    g.sq = static_cast<size_t>(q[2]);
    g.d = static_cast<size_t>(q[3]);
    g.hk = static_cast<size_t>(k[1]);
    g.sk = static_cast<size_t>(k[2]);
    g.dv = static_cast<size_t>(v[3]);
    if (mask) {
        g.has_mask = true;
        g.mask_bool = mask_type == dynrt::DataType::boolean || mask_type == dynrt::DataType::u8;
        const size_t r = mask->rank();
        size_t stride = 1;
        for (size_t a = 4; a-- > 0;) {
            if (a + r < 4) break;   // a missing leading dim: stride 0
            const auto extent = static_cast<size_t>((*mask)[a + r - 4]);
            g.mask_stride[a] = extent == 1 ? 0 : stride;
            stride *= extent;
        }
    }
    return g;
}

}   // namespace sdpa
