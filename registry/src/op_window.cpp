#include "dynrt/op_window.hpp"

#include <algorithm>

#include "dynrt/checked_math.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

const std::vector<std::string>& auto_pad_names() {
    static const std::vector<std::string> kNames = {"explicit", "valid", "same_upper", "same_lower"};
    return kNames;
}

AutoPad auto_pad_of(const std::string& op, const Attributes& a) {
    return static_cast<AutoPad>(mode_index(op, auto_pad_names(), a.get_string("auto_pad")));
}

Error window_attr_error(const std::string& op, const std::string& node, const std::string& attr,
                        const std::string& message) {
    return Error(op + ": " + message, node_context(node, op, attr));
}

std::vector<int64_t> per_axis_attr(const Attributes& a, const std::string& name, size_t rank, int64_t fill, int64_t min,
                                   const std::string& op, const std::string& node) {
    std::vector<int64_t> v = a.get_ints(name);
    if (v.empty()) v.assign(rank, fill);
    if (v.size() != rank)
        throw window_attr_error(op, node, name,
                                "attribute '" + name + "' " + ints_to_string(v) + " needs " + std::to_string(rank) +
                                    " values, one per spatial axis");
    for (int64_t x : v)
        if (x < min)
            throw window_attr_error(
                op, node, name,
                "attribute '" + name + "' must be >= " + std::to_string(min) + ", got " + ints_to_string(v));
    return v;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

int64_t window_span(int64_t d, int64_t k, const std::string& what) {
    return checked_add(checked_mul(d, k - 1, what.c_str()), int64_t{1}, what.c_str());
}

SamePads same_pads(int64_t in, int64_t s, int64_t span, AutoPad mode, const std::string& what) {
    SamePads p;
    p.out = in / s + (in % s != 0 ? 1 : 0);
    const int64_t reach = p.out < 1 ? 0 : checked_add(checked_mul(p.out - 1, s, what.c_str()), span, what.c_str());
    const int64_t total = reach > in ? reach - in : 0;
    p.begin = mode == AutoPad::same_upper ? total / 2 : total - total / 2;
    p.end = total - p.begin;
    return p;
}

bool onnx_window_pads(ImportContext& c, size_t spatial) {
    const std::string auto_pad = c.s("auto_pad", "NOTSET");
    const std::vector<std::string> onnx = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    const auto it = std::find(onnx.begin(), onnx.end(), auto_pad);
    if (it == onnx.end()) return c.unsupported("auto_pad '" + auto_pad + "' is not an ONNX value");
    c.set("auto_pad", auto_pad_names()[static_cast<size_t>(it - onnx.begin())]);
    const std::vector<int64_t> p = c.ints("pads");
    if (auto_pad != "NOTSET" || p.empty()) return true;
    if (p.size() != 2 * spatial)
        return c.unsupported("pads " + ints_to_string(p) + " not of length 2 * " + std::to_string(spatial));
    const auto mid = p.begin() + static_cast<std::ptrdiff_t>(spatial);
    c.set("pads_begin", std::vector<int64_t>(p.begin(), mid));
    c.set("pads_end", std::vector<int64_t>(mid, p.end()));
    return true;
}

bool onnx_weighted_window(ImportContext& c, const std::string& does) {
    const size_t rank = c.rank(0);
    if (rank < 3 || rank > 5 || c.rank(1) != rank)
        return c.unsupported("dynrt " + does + " over 1 to 3 spatial axes; the input has rank " + std::to_string(rank) +
                             ", the weights " + std::to_string(c.rank(1)));
    const size_t spatial = rank - 2;
    const PartialShape& w = c.layout(1).shape;
    const std::vector<int64_t> ks = c.ints("kernel_shape");
    if (!ks.empty()) {
        if (ks.size() != spatial) return c.unsupported("kernel_shape " + ints_to_string(ks) + " not of rank R");
        for (size_t i = 0; i < spatial; ++i)
            if (w[2 + i].is_static() && w[2 + i].get_length() != ks[i])
                return c.unsupported("kernel_shape " + ints_to_string(ks) + " differs from the weights " +
                                     w.to_string());
    }
    for (const char* name : {"strides", "dilations"})
        if (c.has(name)) c.set(name, c.ints(name));
    if (!onnx_window_pads(c, spatial)) return false;
    c.set("groups", c.i("group", 1));
    return true;
}

}   // namespace dynrt
