// The matrix-product family of the cpu op SDK on oneDNN's matmul, shared by the
// ops that are a matrix product at heart (gemm, fully_connected).
//
// add_dnnl_matmul_impls() registers "cpu_dnnl_dynamic" and "cpu_dnnl_static"
// (f32). The dynamic impl is one oneDNN matmul with runtime dims: every dim
// and stride is given per run, so one primitive (one JIT kernel) serves every
// shape of the node and a new shape costs no build. The static impl is the
// matmul built for its exact shapes. Transposes are strides (no copy);
// fully_connected's leading dims are rows and its [N, K] weights are read
// transposed; gemm's batch dims broadcast. A gemm `c` is the matmul's bias
// when alpha and beta are 1, and alpha alone an output scale; other
// combinations go to the reference impl, as do f16 and padded tensors.
#pragma once

#include <functional>
#include <string>

#include "dynrt/implementation_map.hpp"
#include "dynrt/op_matmul.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

void add_dnnl_matmul_impls(ModuleRegistrar& reg, const std::string& op,
                           std::function<MatmulVariant(const KernelParams&)> variant);

}   // namespace dynrt
