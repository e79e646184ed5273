// OpenCL impls of the scatter ops (dynrt/op_reduction.hpp): two kernels in
// order on the stream, scatter_copy (out = data, in dynrt/ocl_scatter.cl, put
// ahead of the op's source) and the op's apply kernel (indices, updates and
// the output), which combines each update with COMBINE of ocl_scatter.cl.
// The apply kernel reports an index out of range (scatter_report_index of
// ocl_scatter.cl) and the op's report_check raises the host impls' error
// (scatter_bad_index).
#pragma once

#include <cstddef>
#include <cstdint>
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
// and 2, output 0, the report buffer). The copy's dispatch is one work-item
// per output element (dispatch_scatter_copy).
std::vector<OclStage> scatter_stages(const std::string& apply);
OclDispatch dispatch_scatter_copy(const KernelParams& p, const OclDeviceLimits& l);

// The report the apply kernel writes: a bad index's position in indices + 1
// (0: none) and its low and high 32 bits, so the indices must have fewer
// than 2^31 - 1 elements (check_scatter_report_fits).
constexpr size_t kScatterReportInts = 3;

// A bad index the apply kernel reported: its position in indices and value.
struct ScatterBadIndex {
    size_t position = 0;
    int64_t value = 0;
};
// False when `report` holds no bad index.
bool scatter_bad_index(const std::vector<int32_t>& report, ScatterBadIndex* bad);

// An impl check: empty unless input `i` (the indices) has a static shape of
// 2^31 - 1 elements or more, which the report cannot name.
std::string check_scatter_report_fits(const KernelParams& p, size_t i);

}   // namespace dynrt
