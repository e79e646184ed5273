#include "dynrt/op_axes.hpp"

#include "dynrt/op_sdk.hpp"

namespace dynrt {

Error axes_error(const std::string& node, const std::string& op, const std::string& message) {
    ErrorContext where;
    where.node = node;
    where.op = op;
    where.field = "axes";
    return Error(message, where);
}

OpAxes read_axes(const ShapeInferContext& ctx, const std::string& op) {
    OpAxes axes;
    axes.values = ctx.attrs.get_ints("axes");
    axes.source = "the `axes` attribute";
    if (ctx.inputs.size() < 2) return axes;
    const Layout& t = ctx.inputs[1];
    if (!axes.values.empty())
        throw axes_error(ctx.node, op,
                         "the axes are given twice: the `axes` attribute " + ints_to_string(axes.values) +
                             " and input 1 " + t.to_string());
    if (t.dtype != DataType::i32 && t.dtype != DataType::i64)
        throw axes_error(ctx.node, op, "the axes (input 1) must be i32 or i64, got " + t.to_string());
    if (t.shape.rank() != 1) throw axes_error(ctx.node, op, "the axes (input 1) must be 1-D, got " + t.to_string());
    axes.source = "the axes (input 1)";
    if (const HostTensor* value = ctx.value(1)) {
        axes.values = value->to_int64();
    } else if (t.shape[0].is_dynamic()) {
        throw axes_error(ctx.node, op,
                         "the axes (input 1) " + t.to_string() +
                             " have a dynamic length and unknown values, so the output rank is unknown");
    } else if (t.shape[0].get_length() > 0) {
        // Values unknown until the producer runs: only their number is known.
        axes.known = false;
        axes.count = static_cast<size_t>(t.shape[0].get_length());
    }
    return axes;
}

std::vector<size_t> normalize_axes(const std::string& node, const std::string& op, const OpAxes& axes, size_t rank,
                                   AxesOf of, const PartialShape& in) {
    const auto r = static_cast<int64_t>(rank);
    const std::string given = axes.source + " " + ints_to_string(axes.values);
    std::vector<bool> named(rank, false);
    std::vector<size_t> out;
    for (const int64_t a : axes.values) {
        if (a < -r || a >= r)
            throw axes_error(node, op,
                             "axis " + std::to_string(a) + " of " + given + " is out of range for " +
                                 (of == AxesOf::input
                                      ? "input " + in.to_string() + " (rank " + std::to_string(r) + ")"
                                      : "the output of rank " + std::to_string(r) + " (input " + in.to_string() + ")"));
        const auto k = static_cast<size_t>(a < 0 ? a + r : a);
        if (named[k])
            throw axes_error(
                node, op,
                given + " name " +
                    (of == AxesOf::input
                         ? "dim " + std::to_string(k) + " of input " + in.to_string() + " more than once"
                         : "output dim " + std::to_string(k) + " more than once (input " + in.to_string() + ")"));
        named[k] = true;
        out.push_back(k);
    }
    return out;
}

}   // namespace dynrt
