// OpenCL impls of the scatter ops (dynrt/op_reduction.hpp): two kernels in
// order on the stream, scatter_copy (out = data, in dynrt/ocl_scatter.cl, put
// ahead of the op's source) and the op's apply kernel (indices, updates and
// the output), which combines each update with COMBINE of ocl_scatter.cl.
#pragma once

#include <string>
#include <vector>

#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_reduction.hpp"

namespace dynrt {

// dynrt/ocl_scatter.cl, then `source` numbered from line 1 again. The spec
// keeps a pointer: the op keeps the string (a function-local static).
std::string ocl_scatter_source(const char* source);

// ocl_scatter.cl's constants for data of dtype `t` and reduction `r`: without
// a reduction elements move as bits, with one as values.
JitDefines jit_scatter_defines(DataType t, ScatterReduction r);

// The stages: scatter_copy (input 0 into output 0), then `apply` (inputs 1
// and 2, output 0). The copy's dispatch is one work-item per output element
// (dispatch_scatter_copy).
std::vector<OclStage> scatter_stages(const std::string& apply);
OclDispatch dispatch_scatter_copy(const KernelParams& p, const OclDeviceLimits& l);

}   // namespace dynrt
