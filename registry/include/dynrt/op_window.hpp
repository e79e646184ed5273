// Windowed ops over 1 to 3 spatial axes of an [N, C, spatial...] input
// (convolution, deconvolution, pooling): what they read and derive alike.
// `auto_pad`, the attribute lists with one value per spatial axis, the
// same_* pads (output ceil(in / stride), the pads from the input extent, so
// dynamic spatial dims work) and the ONNX `auto_pad` / `pads` mapping. Sums
// and products go through checked arithmetic: hostile attributes are errors,
// never wrapped extents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_import.hpp"

namespace dynrt {

enum class AutoPad { explicit_pads, valid, same_upper, same_lower };

// explicit, valid, same_upper, same_lower: the `auto_pad` values, in enum order.
const std::vector<std::string>& auto_pad_names();
AutoPad auto_pad_of(const std::string& op, const Attributes& a);
inline bool is_same_pad(AutoPad p) { return p == AutoPad::same_upper || p == AutoPad::same_lower; }

// An error of op `op`'s node `node` about attribute `attr`: "<op>: <message>".
Error window_attr_error(const std::string& op, const std::string& node, const std::string& attr,
                        const std::string& message);

// Attribute `name` with one value per spatial axis (`rank` of them): empty
// gives `fill` on every axis; another count, or a value below `min`, is an
// error naming the attribute.
std::vector<int64_t> per_axis_attr(const Attributes& a, const std::string& name, size_t rank, int64_t fill, int64_t min,
                                   const std::string& op, const std::string& node);

// a / b rounded towards minus infinity (b != 0).
int64_t floor_div(int64_t a, int64_t b);

// The extent a window of `k` taps `d` apart covers: d * (k - 1) + 1. `what`
// names it in an overflow error.
int64_t window_span(int64_t d, int64_t k, const std::string& what);

// auto_pad same_* over an input extent `in` (>= 0) with step `s` and window
// extent `span`: out = ceil(in / s) and the pads that make the windows cover
// the input, the odd one at the end (same_upper) or the begin (same_lower).
struct SamePads {
    int64_t out = 0, begin = 0, end = 0;
};
SamePads same_pads(int64_t in, int64_t s, int64_t span, AutoPad mode, const std::string& what);

// ONNX `auto_pad` (NOTSET, VALID, SAME_UPPER, SAME_LOWER) and `pads`
// [b..., e...] of a node with `spatial` axes into auto_pad or pads_begin /
// pads_end; false (unsupported) for another auto_pad or a pads length other
// than 2 * spatial.
bool onnx_window_pads(ImportContext& c, size_t spatial);

// ONNX Conv and ConvTranspose: input and weights of one rank in [3, 5]
// (unsupported otherwise, the message saying "dynrt <does> over 1 to 3
// spatial axes"), `kernel_shape` (if given) equal to the weights' static
// spatial dims, then `strides`, `dilations`, auto_pad / pads
// (onnx_window_pads) and `group` as groups.
bool onnx_weighted_window(ImportContext& c, const std::string& does);

}   // namespace dynrt
