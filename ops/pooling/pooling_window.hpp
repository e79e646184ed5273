// pooling: the window geometry of one node, shared by shape inference, the
// reference kernel and the OpenCL impls' pad scalars.
//
// An input [N, C, S0, ..., S(R-1)] (R = 1, 2 or 3 spatial axes) is pooled per
// spatial axis with a window of `kernel` taps, `dilations` apart, moved by
// `strides`, over the input padded by `pads_begin` / `pads_end` (or pads that
// auto_pad derives from the input extent, so dynamic dims work). Everything
// here is a pure function of the attributes and one axis' input extent; sums
// and products go through checked arithmetic, and an extent that would give an
// empty output, or a window that covers padding only, is an Error naming the
// node and the attribute at fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"

namespace pooling {

using dynrt::auto_pad_names;
using dynrt::AutoPad;

enum class Mode { max, avg, lp };

inline const std::vector<std::string>& mode_names() {
    static const std::vector<std::string> kNames = {"max", "avg", "lp"};
    return kNames;
}

// The validated attributes, one value per spatial axis (defaults filled in).
struct PoolAttrs {
    Mode mode = Mode::max;
    AutoPad auto_pad = AutoPad::explicit_pads;
    bool global = false, ceil_mode = false, count_include_pad = false, indices = false, column_major = false;
    int64_t p = 2;
    std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
};

// One spatial axis for a known input extent: taps, step, tap distance, pads
// and the output extent (>= 1).
struct AxisWindow {
    int64_t in = 0, k = 1, s = 1, d = 1, pb = 0, pe = 0, out = 1;
};

inline dynrt::Error attr_fault(const std::string& node, const std::string& attr, const std::string& message) {
    return dynrt::window_attr_error("pooling", node, attr, message);
}

inline std::vector<int64_t> per_axis(const dynrt::Attributes& a, const std::string& name, size_t rank, int64_t fill,
                                     int64_t min, const std::string& node) {
    return dynrt::per_axis_attr(a, name, rank, fill, min, "pooling", node);
}

// Reads and checks the attributes for `rank` spatial axes.
inline PoolAttrs read_attrs(const dynrt::Attributes& a, size_t rank, const std::string& node) {
    PoolAttrs r;
    r.mode = static_cast<Mode>(dynrt::mode_index("pooling", mode_names(), a.get_string("mode")));
    r.auto_pad = dynrt::auto_pad_of("pooling", a);
    r.global = a.get_bool("global");
    r.ceil_mode = a.get_bool("ceil_mode");
    r.count_include_pad = a.get_bool("count_include_pad");
    r.indices = a.get_bool("indices");
    r.column_major = a.get_string("storage_order") == "column_major";
    r.p = a.get_int("p");
    if (r.p < 1) throw attr_fault(node, "p", "attribute 'p' must be >= 1, got " + std::to_string(r.p));
    if (r.indices && r.mode != Mode::max)
        throw attr_fault(node, "indices", "attribute 'indices' needs mode max, got " + a.get_string("mode"));
    if (r.global) {
        if (!a.get_ints("kernel").empty())
            throw attr_fault(node, "kernel", "attribute 'kernel' must be empty with global (the window is the input)");
        r.kernel.assign(rank, 1);
    } else {
        if (a.get_ints("kernel").empty())
            throw attr_fault(node, "kernel", "attribute 'kernel' is required (one extent per spatial axis)");
        r.kernel = per_axis(a, "kernel", rank, 1, 1, node);
    }
    r.strides = per_axis(a, "strides", rank, 1, 1, node);
    r.dilations = per_axis(a, "dilations", rank, 1, 1, node);
    r.pads_begin = per_axis(a, "pads_begin", rank, 0, 0, node);
    r.pads_end = per_axis(a, "pads_end", rank, 0, 0, node);
    return r;
}

// True when a window of `w` covers no input element. Only possible when taps
// lie further apart than the input is long (then at most one tap can hit).
inline bool some_window_misses(const AxisWindow& w) {
    if (w.in >= w.d) return false;
    for (int64_t o = 0; o < w.out; ++o) {
        const int64_t start = o * w.s - w.pb;
        const int64_t j = start >= 0 ? 0 : -start / w.d + (-start % w.d != 0 ? 1 : 0);   // first tap at or after 0
        if (j >= w.k || start + j * w.d >= w.in) return true;
    }
    return false;
}

// The window of spatial axis `i` for input extent `in` (>= 0). Throws naming
// the attribute when the output would be empty or a window would hold only
// padding.
inline AxisWindow axis_window(const PoolAttrs& a, size_t i, int64_t in, const std::string& node) {
    const std::string at = "[" + std::to_string(i) + "]";
    AxisWindow w;
    w.in = in;
    if (a.global) {
        if (in < 1) throw attr_fault(node, "global", "global pooling over spatial axis " + at + " of extent 0");
        w.k = in;
        return w;
    }
    w.k = a.kernel[i], w.s = a.strides[i], w.d = a.dilations[i];
    const int64_t span = dynrt::window_span(w.d, w.k, "pooling: dilations" + at + " * (kernel" + at + " - 1) + 1");
    const std::string shape = "input extent " + std::to_string(in) + ", kernel " + std::to_string(w.k) + ", dilation " +
                              std::to_string(w.d) + ", stride " + std::to_string(w.s);
    if (dynrt::is_same_pad(a.auto_pad)) {
        // total pads <= span - 1 < span: a window always reaches the input.
        const dynrt::SamePads p = dynrt::same_pads(in, w.s, span, a.auto_pad, "pooling: auto_pad total of axis " + at);
        if (p.out < 1) throw attr_fault(node, "auto_pad", "empty output along spatial axis " + at + " (" + shape + ")");
        w.out = p.out, w.pb = p.begin, w.pe = p.end;
    } else {
        if (a.auto_pad == AutoPad::explicit_pads) w.pb = a.pads_begin[i], w.pe = a.pads_end[i];
        if (w.pb >= span || w.pe >= span)
            throw attr_fault(node, w.pb >= span ? "pads_begin" : "pads_end",
                             "pads " + std::to_string(w.pb) + "/" + std::to_string(w.pe) + " of spatial axis " + at +
                                 " must be below the window extent " + std::to_string(span) +
                                 " (a window would hold padding only)");
        const std::string what = "pooling: input extent + pads_begin" + at + " + pads_end" + at;
        const int64_t padded = dynrt::checked_add(dynrt::checked_add(in, w.pb, what.c_str()), w.pe, what.c_str());
        if (padded < span)
            throw attr_fault(node, "kernel",
                             "the window of spatial axis " + at + " does not fit the padded input (" + shape +
                                 ", pads " + std::to_string(w.pb) + "/" + std::to_string(w.pe) +
                                 "): the output would be empty");
        const bool ceil = a.ceil_mode && a.auto_pad == AutoPad::explicit_pads;
        w.out = (ceil ? -dynrt::floor_div(-(padded - span), w.s) : (padded - span) / w.s) + 1;
        // Ceil mode: a last window starting in the end padding is dropped.
        if (ceil && w.out > 1 && dynrt::checked_mul(w.out - 1, w.s, what.c_str()) >= in + w.pb) --w.out;
    }
    if (some_window_misses(w))
        throw attr_fault(node, "dilations",
                         "a window of spatial axis " + at + " covers padding only (" + shape + ", pads " +
                             std::to_string(w.pb) + "/" + std::to_string(w.pe) + ")");
    return w;
}

// Every spatial axis of a static input shape [N, C, spatial...].
inline std::vector<AxisWindow> windows(const PoolAttrs& a, const dynrt::Shape& in, const std::string& node) {
    std::vector<AxisWindow> w;
    for (size_t i = 0; i + 2 < in.rank(); ++i) w.push_back(axis_window(a, i, in[i + 2], node));
    return w;
}

}   // namespace pooling
