// Padded outputs of the cpu engine's optimised impls.
//
// A producer of an in-place concat (docs/architecture.md, "In-place concat")
// writes its rows straight into the concat's buffer: its output layout is
// padded along the concat's axis (lower = the rows before it, upper = the rows
// after it). Where every dim before that axis is 1 the output is still one
// dense block at an offset (dense_block_in_padding, op_sdk.hpp); otherwise
// (a batch of 2, heads before the sequence axis) its rows are interleaved with
// the other inputs' and a kernel must step with the padded pitch.
//
// padded_strides() says where each logical element lies. The oneDNN impls
// (dynrt/cpu_dnnl.hpp) bind a dense block at its offset and, where the op's
// plan takes them (DnnlSpec::padded_outputs), other paddings as strided
// memory descriptors. add_strided_output_impls() registers optimised host
// loops that write output 0 through its strides, so they take any padding.
// An impl's validate accepts only the paddings its kernel writes; the flow
// asks it (ImplEntry::check) before it pads a producer.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "dynrt/layout.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// Where the logical elements of a static plain layout lie in its (padded)
// storage, in elements: element [i0, ..., in-1] is at first + sum(ik * strides[k]).
struct PaddedStrides {
    std::vector<size_t> strides;   // per logical dim; row-major over the padded dims
    size_t first = 0;              // the first logical element: sum(lower[k] * strides[k])
    // Row-major without gaps (no padding, or a dense block in it): element i
    // of the logical tensor is at first + i.
    bool dense = true;
};
PaddedStrides padded_strides(const Layout& l);

// The first dim from which `strides` are row-major over `shape` (size-1 dims
// step anywhere): the elements of dims [result, rank) lie one after another.
size_t contiguous_from(const Shape& shape, const std::vector<size_t>& strides);

// The element offset of index `index` over `dims` (row-major) where each
// dim steps `strides[d]` elements.
inline size_t strided_offset(const int64_t* dims, const size_t* strides, size_t rank, size_t index) {
    size_t at = 0;
    for (size_t d = rank; d-- > 0;) {
        const size_t extent = static_cast<size_t>(dims[d]);
        at += index % extent * strides[d];
        index /= extent;
    }
    return at;
}

// Output 0 of a loop registered with add_strided_output_impls.
struct StridedOutput {
    void* data = nullptr;          // the first logical element
    std::vector<size_t> strides;   // element strides of the logical dims
    bool dense = true;             // element i is at data + i (elements)
};

// A host loop that writes output 0 through `out` (every other output dense,
// through `call`). `call` sees output 0 with its padding stripped: out_shape(0)
// is the logical shape; out(0) must not be written when `out.dense` is false.
using StridedOutputKernel = std::function<void(HostCall& call, const StridedOutput& out)>;

// Registers "cpu_<name>_dynamic" / "cpu_<name>_static" like add_host_impls()
// (use optimised_host_options()), except that output 0 may be padded in any
// way a plain layout can be: the entry's validate accepts it (and refuses a
// padded output with fused ops, which run on dense outputs); other outputs
// and every input must be dense.
void add_strided_output_impls(ModuleRegistrar& reg, const std::string& op, StridedOutputKernel kernel,
                              HostImplOptions options);

}   // namespace dynrt
