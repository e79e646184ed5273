// Numpy broadcasting as rows, for the optimised loops of elementwise ops
// (where; eltwise plans the same rows for two inputs).
//
// The output is split into rows over the longest run of trailing dims along
// which every input either follows the output element by element or holds
// one value; a row is then a contiguous loop (vector against vector, or
// against a value). The dims before the rows broadcast freely: each input
// has an element stride per leading dim (0 where it broadcasts).
// `min_split` keeps the rows within the dims [min_split, rank): those a
// padded output stores contiguously (dynrt/cpu_padded.hpp: contiguous_from).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dynrt/shape.hpp"

namespace dynrt {

struct BroadcastRows {
    size_t inner = 1;                           // elements per row
    std::vector<int64_t> lead;                  // the output's dims before the rows
    std::vector<std::vector<size_t>> strides;   // per input: element strides over `lead`
    std::vector<bool> one;                      // per input: one value per row
};

inline BroadcastRows plan_broadcast_rows(const Shape& out, const std::vector<const Shape*>& in, size_t min_split = 0) {
    const size_t r = out.rank(), n = in.size();
    // dim d of input k, right-aligned (1 where the input has fewer dims)
    auto dim = [&](size_t k, size_t d) {
        const size_t lead = r - in[k]->rank();
        return d < lead ? int64_t{1} : (*in[k])[d - lead];
    };
    BroadcastRows rows;
    size_t split = r;               // dims [split, r) form the rows
    std::vector<int> kind(n, -1);   // per input: -1 unknown yet, 0 follows the output, 1 one value
    std::vector<int> here(n);
    for (; split > min_split; --split) {
        const size_t d = split - 1;
        if (out[d] == 1) continue;
        bool fits = true;
        for (size_t k = 0; k < n; ++k) {
            here[k] = dim(k, d) == 1 ? 1 : 0;
            fits = fits && (kind[k] == -1 || kind[k] == here[k]);
        }
        if (!fits) break;
        kind = here;
        rows.inner *= static_cast<size_t>(out[d]);
    }
    rows.lead.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(split));
    for (size_t k = 0; k < n; ++k) {
        rows.one.push_back(kind[k] == 1);
        std::vector<size_t> st(r, 0);
        size_t stride = 1;
        for (size_t d = r; d-- > 0;) {
            const int64_t e = dim(k, d);
            st[d] = e == 1 ? 0 : stride;
            stride *= static_cast<size_t>(e);
        }
        rows.strides.emplace_back(st.begin(), st.begin() + static_cast<std::ptrdiff_t>(split));
    }
    return rows;
}

// The element offset of row `row` in input k: `at` gets one per input.
inline void broadcast_row_offsets(const BroadcastRows& rows, size_t row, size_t* at) {
    for (size_t k = 0; k < rows.strides.size(); ++k) at[k] = 0;
    for (size_t d = rows.lead.size(); d-- > 0;) {
        const size_t i = row % static_cast<size_t>(rows.lead[d]);
        row /= static_cast<size_t>(rows.lead[d]);
        for (size_t k = 0; k < rows.strides.size(); ++k) at[k] += i * rows.strides[k][d];
    }
}

}   // namespace dynrt
