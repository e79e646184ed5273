// Convolution of any spatial rank on oneDNN, for the convolution op's cpu impls.
//
// add_dnnl_convolution_impls() registers "cpu_dnnl_static" (the primitive for
// one set of shapes) and "cpu_dnnl_dynamic" (the request's state rebuilds it
// when the shapes change; a shape seen before comes from oneDNN's primitive
// cache). Tensors stay in dynrt's plain layouts (x [N, C, S...], weights
// [O, C/groups, k...], bias [O]); the primitive takes the layouts oneDNN picks
// for a direct (brgemm / jit) convolution, blocked over channels or
// channels-last, and each run moves x and the weights into them and y out of
// them (dnnl_stage_args; channels-last by transposes),
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

// "cpu_direct_dynamic": the SDK's own direct convolution, f32, 1 or 2 spatial
// dims, groups 1, few channels (C * kernel taps <= 144, O <= 16: a stem or a
// small net's convolutions, where oneDNN's kernels spend as long reordering
// x, y and the weights as convolving). One loop serves every shape with
// nothing to build, so a new shape costs no JIT kernel, and the flow builds no
// static impls beside it (Impl::static_builds_redundant); it ranks above
// oneDNN's dynamic impl and below static impls, so a static node still gets
// oneDNN's primitive. `geometry` must also take params whose spatial dims are
// dynamic (validate() reads the strides, dilations and pads from it; the pads
// of auto_pad same_* for any extent will do, as they never pass the kernel's
// span). Fused ops run on the host after the loop.
inline constexpr int kPriorityDirectConvolution = 250;
void add_direct_convolution_impl(ModuleRegistrar& reg, const std::string& op,
                                 std::function<ConvGeometry(const KernelParams&)> geometry);

}   // namespace dynrt
