// squeeze: the input without some of its size-1 dims (ONNX Squeeze). The axes
// come from input 1 (a 1-D i32/i64 tensor read by value during shape
// inference) or from the `axes` attribute; with neither, every size-1 dim goes.
//
// The elements keep their order, so the op is a view (OpTraits::view): on
// plain, unpadded layouts the flow runs no kernel, and every impl is a byte
// copy for the other cases. Shape inference checks each axis: in range
// (negative counts from the end), given once, and of extent 1. A dynamic dim
// that may be 1 is removed, and the check runs again when the flow infers the
// run's static shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_copy.hpp"
#include "dynrt/op_axes.hpp"
#include "dynrt/op_copy.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

bool may_be_one(const Dimension& d) { return d.contains(1); }

// Every dim that is certainly 1 goes; a dim that may or may not be 1 makes the
// output rank unknown, which a partial shape cannot express.
PartialShape squeeze_all(const std::string& node, const PartialShape& in) {
    std::vector<Dimension> out;
    for (size_t i = 0; i < in.rank(); ++i) {
        const Dimension& d = in[i];
        if (d.is_static() && d.get_length() == 1) continue;
        if (d.is_dynamic() && may_be_one(d))
            throw axes_error(node, "squeeze",
                             "squeeze without axes cannot tell whether dim " + std::to_string(i) + " of input " +
                                 in.to_string() + " (extent " + d.to_string() +
                                 ") is removed; give the axes to squeeze");
        out.push_back(d);
    }
    return PartialShape(std::move(out));
}

PartialShape squeeze_axes(const std::string& node, const PartialShape& in, const OpAxes& axes) {
    std::vector<bool> removed(in.rank(), false);
    for (const size_t k : normalize_axes(node, "squeeze", axes, in.rank(), AxesOf::input, in)) {
        if (!may_be_one(in[k]))
            throw axes_error(node, "squeeze",
                             "cannot squeeze dim " + std::to_string(k) + " of input " + in.to_string() +
                                 ": its extent is " + in[k].to_string() + ", not 1 (" + axes.source + " " +
                                 ints_to_string(axes.values) + ")");
        removed[k] = true;
    }
    std::vector<Dimension> out;
    for (size_t i = 0; i < in.rank(); ++i)
        if (!removed[i]) out.push_back(in[i]);
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_squeeze(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const OpAxes axes = read_axes(ctx, "squeeze");
    if (!axes.known) {
        // Values unknown until the producer runs: only the rank is known.
        if (axes.count > data.shape.rank())
            throw axes_error(ctx.node, "squeeze",
                             "the axes (input 1) " + ctx.inputs[1].to_string() + " squeeze " +
                                 std::to_string(axes.count) + " dims of input " + data.shape.to_string());
        return {Layout(PartialShape::dynamic_of_rank(data.shape.rank() - axes.count), data.dtype)};
    }
    if (axes.values.empty()) return {Layout(squeeze_all(ctx.node, data.shape), data.dtype)};
    return {Layout(squeeze_axes(ctx.node, data.shape, axes), data.dtype)};
}

// ONNX ops this op implements (dynrt/op_import.hpp): axes as an attribute
// (opset < 13) or as input 1.
bool onnx_squeeze(ImportContext& c) {
    if (!c.only_attrs({"axes"})) return false;
    if (c.has("axes")) {
        c.set("axes", c.ints("axes"));
        c.use_inputs({0});
    } else {
        c.use_inputs({0, 1});
    }
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Squeeze", 1, 2, onnx_squeeze, "`axes` attribute (opset < 13) or input 1")};
}

void register_squeeze(ModuleRegistrar& reg) {
    OpDefinition def = op_def("squeeze", "Removes size-1 dims (ONNX Squeeze; axes from input 1 or the attribute)", 1, 2,
                              {attr_ints("axes", std::vector<int64_t>{},
                                         "dims to remove, negative counts from the end; empty: every size-1 dim")},
                              infer_squeeze);
    def.value_inputs = {1};
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    def.imports = onnx_rules();
    reg.add_op(def);
    add_copy_host_impls(reg, "squeeze");
    add_copy_ocl_impls(reg, "squeeze");
}

}   // namespace

DYNRT_MODULE("squeeze", register_squeeze)
