// Convolution of any spatial rank on oneDNN, for the convolution op's cpu impls.
//
// add_dnnl_convolution_impls() registers "cpu_dnnl_static" (the primitive for
// one set of shapes) and "cpu_dnnl_dynamic" (the request's state rebuilds it
// when the shapes change; a shape seen before comes from oneDNN's primitive
// cache). Tensors stay in dynrt's plain layouts (x [N, C, S...], weights
// [O, C/groups, k...], bias [O]); the primitive takes the layouts oneDNN picks
// for a direct (brgemm / jit) convolution, blocked over channels, and each run
// reorders x and the weights into them and y out of them (dnnl_stage_args),
// unless oneDNN would convolve through im2col + gemm anyway (then it reads
// the plain tensors). On the engine's threads. The op gives the window of
// each run's shapes (its auto_pad resolution included); f32 only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// One convolution's window for the runtime shapes, per spatial axis.
struct ConvGeometry {
    std::vector<int64_t> strides, dilations, pads_begin, pads_end;   // dilation 1 = dense
    int64_t groups = 1;
};

void add_dnnl_convolution_impls(ModuleRegistrar& reg, const std::string& op,
                                std::function<ConvGeometry(const KernelParams&)> geometry);

}   // namespace dynrt
