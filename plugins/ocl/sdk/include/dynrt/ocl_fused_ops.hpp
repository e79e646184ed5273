// Fused post-ops in OpenCL kernels: the JIT code a kernel applies to each value
// it stores, generated from KernelParams::fused_ops.
//
// A kernel that takes fused ops (OclKernelSpec::fused_ops) writes
//     KERNEL(name)(..., __global OUTPUT0_TYPE* output0 FUSED_OPS_ARGS, <scalars>)
// and, before storing a value, puts it in a float `fused_v` with its row-major
// output index in a ulong `fused_oi`, then
//     FUSED_OPS
// (a statement that updates fused_v). Without fused ops both expand to nothing
// and HAS_FUSED_OPS is 0 (1 with them: a kernel may take a scalar path then).
// A kernel that stores from a helper function declares the helper with
// FUSED_OPS_ARGS too and passes them on with FUSED_OPS_PASS (", fused_input0 ...").
// With fused ops, FUSED_OPS_ARGS adds one
// `__global const FUSED_INPUTk_TYPE* fused_inputk` per other input of the fused
// ops (in ExecContext::fused_inputs order, after the outputs), and FUSED_OPS
// applies each op's expression (OpDefinition::ocl_post_op) in order, reading
// the other inputs broadcast to the output (FUSED_INPUTk_DIM0..7 from shape_info
// in the dynamic build, literals in the static one).
#pragma once

#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/ocl_api.hpp"

namespace dynrt {

// The other (non-main) inputs of the fused ops, in order: their layouts.
std::vector<Layout> fused_extra_layouts(const KernelParams& p);
// Why the fused ops of `p` cannot be generated for an f32 kernel ("" = they can).
std::string check_ocl_fused_ops(const KernelParams& p);
// FUSED_OPS_ARGS, FUSED_OPS and the FUSED_INPUTk_* constants. `extras`: the
// other inputs' layouts as the kernel is built for them (all dims dynamic in a
// shape-agnostic build); `slots`: their shape_info slots (-1 when static), from
// a plan made with the extras appended to the inputs.
JitDefines fused_ops_defines(const KernelParams& p, const std::vector<Layout>& extras, const std::vector<int>& slots);
// pack_shape_info for a kernel whose plan holds the fused ops' other inputs
// after its inputs (plain pack_shape_info when `p` has no fused ops).
void pack_shape_info_fused(const ShapeInfoPlan& plan, const KernelParams& p, std::vector<int32_t>& out);
// `expr` with the identifier `from` replaced by `to` (whole identifiers only):
// lets an op turn its kernel's expression of `x` into one of its arguments.
std::string replace_identifier(const std::string& expr, const std::string& from, const std::string& to);

}   // namespace dynrt
