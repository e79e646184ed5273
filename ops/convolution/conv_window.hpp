// convolution: the window geometry of one node, shared by shape inference, the
// reference kernel and the OpenCL impls' JIT constants.
//
// An input [N, C, S0, ..., S(R-1)] (R = 1, 2 or 3 spatial axes) is correlated
// per spatial axis with a kernel of k taps (the weights' extent), `dilations`
// apart, moved by `strides`, over the input padded by `pads_begin` / `pads_end`
// or by the pads that auto_pad derives from the input extent (so dynamic
// spatial dims work). Everything here is a pure function of the attributes, one
// axis' input extent and the kernel extent; sums and products go through
// checked arithmetic, so hostile attributes are errors, never wrapped extents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"

namespace conv {

using dynrt::auto_pad_names;
using dynrt::AutoPad;

// The validated attributes, one value per spatial axis (defaults filled in).
struct ConvAttrs {
    AutoPad auto_pad = AutoPad::explicit_pads;
    std::vector<int64_t> strides, dilations, pads_begin, pads_end;
    int64_t groups = 1;
};

// One spatial axis for a known input extent: taps, step, tap distance, pads
// and the output extent (may be <= 0: the caller decides).
struct AxisWindow {
    int64_t in = 1, k = 1, s = 1, d = 1, pb = 0, pe = 0, out = 1;
};

inline dynrt::Error attr_fault(const std::string& node, const std::string& attr, const std::string& message) {
    return dynrt::window_attr_error("convolution", node, attr, message);
}

// Reads and checks the attributes for `rank` spatial axes.
inline ConvAttrs read_attrs(const dynrt::Attributes& a, size_t rank, const std::string& node) {
    ConvAttrs r;
    r.auto_pad = dynrt::auto_pad_of("convolution", a);
    r.strides = dynrt::per_axis_attr(a, "strides", rank, 1, 1, "convolution", node);
    r.dilations = dynrt::per_axis_attr(a, "dilations", rank, 1, 1, "convolution", node);
    r.pads_begin = dynrt::per_axis_attr(a, "pads_begin", rank, 0, 0, "convolution", node);
    r.pads_end = dynrt::per_axis_attr(a, "pads_end", rank, 0, 0, "convolution", node);
    r.groups = a.get_int("groups");
    if (r.groups < 1)
        throw attr_fault(node, "groups", "attribute 'groups' must be >= 1, got " + std::to_string(r.groups));
    return r;
}

// The window of spatial axis `i` for input extent `in` (>= 0) and kernel
// extent `k` (>= 1). explicit/valid: out = floor((in + pb + pe - span) / s) + 1
// with span = d*(k-1) + 1; same_*: out = ceil(in / s) and the pads that make
// the windows cover the input, the odd one at the end (upper) or the begin
// (lower). The OpenCL kernel recomputes the same_* begin pad from the extents
// (SAME_PAD_BEGIN in convolution.cl).
inline AxisWindow axis_window(const ConvAttrs& a, size_t i, int64_t in, int64_t k) {
    const std::string at = "[" + std::to_string(i) + "]";
    AxisWindow w;
    w.in = in, w.k = k, w.s = a.strides[i], w.d = a.dilations[i];
    const int64_t span = dynrt::window_span(w.d, k, "convolution: dilations" + at + " * (kernel extent - 1) + 1");
    if (dynrt::is_same_pad(a.auto_pad)) {
        const dynrt::SamePads p =
            dynrt::same_pads(in, w.s, span, a.auto_pad, "convolution: auto_pad total padding of spatial axis " + at);
        w.out = p.out, w.pb = p.begin, w.pe = p.end;
        return w;
    }
    if (a.auto_pad == AutoPad::explicit_pads) w.pb = a.pads_begin[i], w.pe = a.pads_end[i];
    const std::string what = "convolution: input extent + pads_begin" + at + " + pads_end" + at;
    const int64_t padded = dynrt::checked_add(dynrt::checked_add(in, w.pb, what.c_str()), w.pe, what.c_str());
    w.out = dynrt::floor_div(padded - span, w.s) + 1;
    return w;
}

// The attribute to blame for an empty output of `w`: the dilation when the
// undilated kernel would fit, else the padding (or auto_pad).
inline std::string empty_output_field(const ConvAttrs& a, const AxisWindow& w) {
    if (dynrt::is_same_pad(a.auto_pad)) return "auto_pad";
    if (w.d > 1 && w.in + w.pb + w.pe >= w.k) return "dilations";
    return a.auto_pad == AutoPad::valid ? "auto_pad" : "pads_begin";
}

// Throws naming the node and the attribute when `w` gives no output element.
// `shapes` names the input and weights shapes.
inline void expect_nonempty(const ConvAttrs& a, const AxisWindow& w, size_t i, const std::string& node,
                            const std::string& shapes) {
    if (w.out >= 1) return;
    const std::string at = "[" + std::to_string(i) + "]";
    throw attr_fault(node, empty_output_field(a, w),
                     "output extent of spatial axis " + at + " would be " + std::to_string(w.out) + " (input extent " +
                         std::to_string(w.in) + ", kernel " + std::to_string(w.k) + ", stride " + std::to_string(w.s) +
                         ", dilation " + std::to_string(w.d) + ", pads " + std::to_string(w.pb) + "/" +
                         std::to_string(w.pe) + ", auto_pad " + auto_pad_names()[static_cast<size_t>(a.auto_pad)] +
                         "; " + shapes + ")");
}

}   // namespace conv
