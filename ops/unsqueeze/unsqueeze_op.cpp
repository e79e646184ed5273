// unsqueeze: the input with size-1 dims inserted (ONNX Unsqueeze). The axes
// are positions in the *output* (negative counts from its end), from input 1
// (a 1-D i32/i64 tensor read by value during shape inference) or from the
// `axes` attribute; at least one, each position once.
//
// The elements keep their order, so the op is a view (OpTraits::view): on
// plain, unpadded layouts the flow runs no kernel, and every impl is a byte
// copy for the other cases.
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_copy.hpp"
#include "dynrt/op_axes.hpp"
#include "dynrt/op_copy.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

PartialShape unsqueeze_axes(const std::string& node, const PartialShape& in, const OpAxes& axes) {
    const size_t out_rank = in.rank() + axes.values.size();
    std::vector<bool> inserted(out_rank, false);
    for (const size_t k : normalize_axes(node, "unsqueeze", axes, out_rank, AxesOf::output, in)) inserted[k] = true;
    std::vector<Dimension> out;
    size_t next = 0;
    for (size_t i = 0; i < inserted.size(); ++i) out.push_back(inserted[i] ? Dimension(1) : in[next++]);
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_unsqueeze(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const OpAxes axes = read_axes(ctx, "unsqueeze");
    // Values unknown until the producer runs: only the rank is known.
    if (!axes.known) return {Layout(PartialShape::dynamic_of_rank(data.shape.rank() + axes.count), data.dtype)};
    if (axes.values.empty())
        throw axes_error(
            ctx.node, "unsqueeze",
            "unsqueeze needs at least one axis (" + axes.source + " is empty; input " + data.shape.to_string() + ")");
    return {Layout(unsqueeze_axes(ctx.node, data.shape, axes), data.dtype)};
}

// ONNX ops this op implements (dynrt/op_import.hpp): axes as an attribute
// (opset < 13) or as input 1.
bool onnx_unsqueeze(ImportContext& c) {
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
    return {onnx_rule("Unsqueeze", 1, 2, onnx_unsqueeze, "`axes` attribute (opset < 13) or input 1")};
}

void register_unsqueeze(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "unsqueeze", "Inserts size-1 dims (ONNX Unsqueeze; axes from input 1 or the attribute)", 1, 2,
        {attr_ints("axes", std::vector<int64_t>{}, "output positions of the new dims, negative counts from the end")},
        infer_unsqueeze);
    def.value_inputs = {1};
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    def.imports = onnx_rules();
    reg.add_op(def);
    add_copy_host_impls(reg, "unsqueeze");
    add_copy_ocl_impls(reg, "unsqueeze");
}

}   // namespace

DYNRT_MODULE("unsqueeze", register_unsqueeze)
