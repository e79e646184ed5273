// OpenCL impls of the windowed ops over 1 to 3 spatial axes with weights
// (convolution, deconvolution; dynrt/op_window.hpp). Their kernels walk every
// rank as three axes D, H, W, the ones a lower rank lacks of extent 1, and
// index with int.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dynrt/ocl_impl.hpp"

namespace dynrt {

// Per axis x of D, H, W (j = 0, 1, 2) of an input of `rank` dims: IN_x, OUT_x
// and K_x (the dims of input 0, output 0 and the weights, input 1; "1" on the
// axes a lower rank lacks), STRIDE_x, DILATION_x and PAD_x: `pads_begin`
// (empty: 0), or on a real axis `derived_pad(x, i)` (i its spatial index)
// where that is not empty, an expression of the other constants.
JitDefines jit_window_axes(size_t rank, const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                           const std::vector<int64_t>& pads_begin,
                           const std::function<std::string(const std::string& x, size_t i)>& derived_pad);

// An impl check: f32 tensors within the kernel's int range
// (check_dtype_and_int_range, counted in storage with `storage`) and no value
// of the attributes `names` above 2^30 - 1.
std::string check_window_int_range(const KernelParams& p, bool storage, const std::vector<std::string>& names);

}   // namespace dynrt
