// recurrent: the impls besides the reference, each registered from its own
// file by recurrent_op.cpp's register function (kept in the op folder).
#pragma once

#include "dynrt/module_abi.hpp"

namespace recurrent {

// cpu_opt_dynamic, cpu_opt_static (f32): sgemm projections and step loops (recurrent_cpu.cpp).
void register_cpu_impls(dynrt::ModuleRegistrar& reg);
// ocl_dynamic, ocl_static (f32, f16): recurrent.cl (recurrent_ocl.cpp).
void register_ocl_impls(dynrt::ModuleRegistrar& reg);

}   // namespace recurrent
