// flatten: the input as a 2-D tensor (ONNX Flatten). Dims before `axis` make
// the rows, dims from `axis` on the columns: [d0, ..., dn-1] becomes
// [d0 * ... * d(axis-1), d(axis) * ... * dn-1], an empty product being 1.
// `axis` is in [-rank, rank]; negative counts from the end.
//
// The elements keep their order, so the op is a view (OpTraits::view): on
// plain, unpadded layouts the flow runs no kernel, and every impl is a byte
// copy for the other cases. Products of dynamic dims keep their bounds (the
// product of the minima and of the maxima).
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_copy.hpp"
#include "dynrt/op_copy.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

Error flatten_error(const std::string& node, const std::string& field, const std::string& message) {
    ErrorContext where;
    where.node = node;
    where.op = "flatten";
    where.field = field;
    return Error(message, where);
}

size_t flatten_axis(const std::string& node, int64_t axis, size_t rank, const std::string& shape) {
    const auto r = static_cast<int64_t>(rank);
    if (axis < -r || axis > r)
        throw flatten_error(node, "axis",
                            "axis " + std::to_string(axis) + " is out of range for input " + shape + " (rank " +
                                std::to_string(r) + "): it must be in [" + std::to_string(-r) + ", " +
                                std::to_string(r) + "]");
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

// The product of dims [from, to) of `in`. Static dims: an error past 2^60
// elements. Dynamic dims: the product of the minima and, when every dim is
// bounded and the product fits, of the maxima; a dim that can only be 0 makes
// the product 0.
Dimension dims_product(const std::string& node, const PartialShape& in, size_t from, size_t to) {
    std::vector<int64_t> mins, maxs;
    bool bounded = true;
    for (size_t i = from; i < to; ++i) {
        if (in[i].max() == 0) return Dimension(0);
        mins.push_back(in[i].min());
        if (in[i].max() == Dimension::kUnbounded) bounded = false;
        else maxs.push_back(in[i].max());
    }
    size_t lo = 0, hi = 0;
    if (!count_fits(mins, &lo))
        throw flatten_error(node, "",
                            "dims " + std::to_string(from) + ".." + std::to_string(to - 1) + " of input " +
                                in.to_string() + " hold more than 2^60 elements");
    if (!bounded || !count_fits(maxs, &hi)) return Dimension(static_cast<int64_t>(lo), Dimension::kUnbounded);
    if (lo == hi) return Dimension(static_cast<int64_t>(lo));
    return Dimension(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
}

std::vector<Layout> infer_flatten(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const size_t rank = in.shape.rank();
    const size_t axis = flatten_axis(ctx.node, ctx.attrs.get_int("axis"), rank, in.shape.to_string());
    return {
        Layout(PartialShape({dims_product(ctx.node, in.shape, 0, axis), dims_product(ctx.node, in.shape, axis, rank)}),
               in.dtype)};
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_flatten(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.set("axis", c.i("axis", 1));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() { return {onnx_rule("Flatten", 1, 1, onnx_flatten, "`axis` (default 1)")}; }

void register_flatten(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("flatten", "The input as 2-D: dims before axis are rows, the rest columns (ONNX Flatten)", 1, 1,
               {attr_int("axis", 1, "first dim of the columns, in [-rank, rank]; negative counts from the end")},
               infer_flatten);
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    def.imports = onnx_rules();
    reg.add_op(def);
    add_copy_host_impls(reg, "flatten");
    add_copy_ocl_impls(reg, "flatten");
}

}   // namespace

DYNRT_MODULE("flatten", register_flatten)
