// The impls of the losses over class scores (dynrt/op_loss.hpp): the host
// reference and one OpenCL kernel, built from the device helpers of
// dynrt/ocl_loss.cl put ahead of the op's source. The op's .cl defines
// LOSS_AT and the kernel (ocl_loss.cl says how).
#pragma once

#include <string>

#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_loss.hpp"

namespace dynrt {

// dynrt/ocl_loss.cl, then `source` numbered from line 1 again. The spec keeps
// a pointer: the op keeps the string (a function-local static).
std::string ocl_loss_source(const char* source);

// Registers loss op `op`'s impls for f32, f16 and f64: the host reference
// `kernel` and the OpenCL kernel `kernel_name` of `source` (from
// ocl_loss_source; input ranks up to 8, one work-item per position with
// reduction none, else one in all). Both refuse a target (input 1, `target`
// in messages) that is not i32 or i64. A target out of range contributes 0
// with weight 0 on the device; the host impls report it.
void add_loss_impls(ModuleRegistrar& reg, const std::string& op, HostKernel kernel, const char* source,
                    std::string kernel_name, const std::string& target);

}   // namespace dynrt
