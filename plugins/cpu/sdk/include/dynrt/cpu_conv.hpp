// Convolution of any spatial rank on oneDNN, for the convolution op's cpu impls.
//
// add_dnnl_convolution_impls() registers "cpu_dnnl_static" (the primitive for
// one set of shapes) and "cpu_dnnl_dynamic" (the request's state rebuilds it
// when the shapes change; a shape seen before comes from oneDNN's primitive
// cache). Tensors stay in dynrt's plain layouts (x [N, C, S...], weights
// [O, C/groups, k...], bias [O]), which oneDNN runs as an im2col + GEMM
// convolution on the engine's threads. The op gives the window of each run's
// shapes (its auto_pad resolution included); f32 only.
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
