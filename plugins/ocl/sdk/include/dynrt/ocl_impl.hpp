// OpenCL impls of one kernel, static and shape-agnostic, for op modules.
//
// Most device impls are one kernel over the op's inputs and outputs. An op
// describes it with an OclKernelSpec (its .cl source, the kernel name, extra JIT
// constants from attributes, the work size for given layouts) and calls
// add_ocl_impls(), which registers:
//   - "ocl_dynamic": shape-agnostic. Built once per primitive with every tensor's
//     dims read from shape_info (IS_DYNAMIC 1); on every execution shape_info is
//     repacked (written only when it changed, ordered on the stream's queue) and
//     the dispatch recomputed (update_dispatch_data); an empty dispatch skips
//     the kernel.
//   - "ocl_static": built for one set of layouts with every dim a JIT constant
//     (IS_DYNAMIC 0), kept in the impl cache.
//
// Kernel signature convention, in this order:
//   KERNEL(name)(OPTIONAL_SHAPE_INFO_ARG
//                __global const INPUT0_TYPE* input0, ..., __global OUTPUT0_TYPE* output0, ...,
//                <scalars from OclKernelSpec::scalars>)
// with INPUTk_* / OUTPUTk_* constants from tensor_jit_defines (TYPE, RANK,
// DIM0..DIM7 right-aligned, LENGTH). Optional inputs that are absent get
// INPUTk_PRESENT 0 and no argument.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

struct OclKernelSpec {
    const char* source = nullptr;      // OpenCL C 1.2 (embedded .cl)
    std::string kernel_name;
    // Op-specific JIT constants (attributes, modes). For the dynamic build the
    // params' dims must not be baked in: only dtypes, ranks and attributes.
    std::function<JitDefines(const KernelParams&, bool is_dynamic)> defines;
    // update_dispatch_data: work sizes for the current (runtime) layouts. A
    // dispatch with a zero global size skips the kernel.
    std::function<OclDispatch(const KernelParams&, const OclDeviceLimits&)> dispatch;
    // Scalars appended after the tensors (optional), from the runtime layouts.
    std::function<std::vector<OclArg>(const KernelParams&)> scalars;
    // The kernel applies fused post-ops (FUSED_OPS_ARGS after the outputs,
    // FUSED_OPS before each store: dynrt/ocl_fused_ops.hpp); the impls
    // then take KernelParams::fused_ops (ImplEntry::fused_ops).
    bool fused_ops = false;
    // The kernel stores through OUTPUT<k>_PHYS(i) (dynrt/ocl_api.hpp), so its
    // outputs may be padded: a view into a larger buffer, e.g. a slice of an
    // in-place concat's output. Inputs are always dense.
    bool padded_outputs = false;
};

struct OclImplOptions {
    std::vector<DataType> dtypes;      // empty = any
    bool register_static = true;
    bool register_dynamic = true;
    // Extra check (empty string = ok).
    std::function<std::string(const KernelParams&)> validate;
    // Weightable ops: the format the kernel reads the weights in
    // (ImplEntry::weights_format; the flow reorders constant weights into it).
    Format weights_format = Format::plain;
};

void add_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclKernelSpec spec, OclImplOptions options = {});

// Dispatch over `n` work items in one dimension (rounded up to the local size).
OclDispatch dispatch_1d(size_t n, const OclDeviceLimits& limits);
// Dispatch over a 2-D or 3-D grid of work items.
OclDispatch dispatch_nd(std::array<size_t, 3> work, size_t dims, const OclDeviceLimits& limits);
// Dispatch for a grid-stride kernel over `n` items (`for (i = get_global_id(0);
// i < n; i += get_global_size(0))`). On a GPU at most compute_units x local
// size x 8 work-items (a full wave of resident threads), fewer when `n` is
// smaller, so each work-item moves several items and consecutive work-items
// stay on consecutive items (coalesced). On a CPU device one work-item per
// item (a strided walk per work-item would defeat the caches there). Memory-
// bound kernels use it with 4-element vectors as items.
OclDispatch dispatch_grid_stride(size_t n, const OclDeviceLimits& limits);

}  // namespace dynrt
