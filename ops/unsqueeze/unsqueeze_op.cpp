// unsqueeze: the input with size-1 dims inserted (ONNX Unsqueeze). The axes
// are positions in the *output* (negative counts from its end), from input 1
// (a 1-D i32/i64 tensor read by value during shape inference) or from the
// `axes` attribute; at least one, each position once.
//
// The elements keep their order, so the op is a view (OpTraits::view): on
// plain, unpadded layouts the flow runs no kernel, and every impl is a byte
// copy for the other cases.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "unsqueeze_cl.hpp"

namespace {

using namespace dynrt;

// An error of this node about its axes (the attribute or input 1).
Error axes_error(const std::string& node, const std::string& message) {
    ErrorContext where;
    where.node = node;
    where.op = "unsqueeze";
    where.field = "axes";
    return Error(message, where);
}

PartialShape unsqueeze_axes(const std::string& node, const PartialShape& in, const std::vector<int64_t>& axes,
                            const std::string& source) {
    const auto out_rank = static_cast<int64_t>(in.rank() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (const int64_t a : axes) {
        if (a < -out_rank || a >= out_rank)
            throw axes_error(node, "axis " + std::to_string(a) + " of " + source + " " + ints_to_string(axes) +
                                       " is out of range for the output of rank " + std::to_string(out_rank) +
                                       " (input " + in.to_string() + ")");
        const auto k = static_cast<size_t>(a < 0 ? a + out_rank : a);
        if (inserted[k])
            throw axes_error(node, source + " " + ints_to_string(axes) + " name output dim " + std::to_string(k) +
                                       " more than once (input " + in.to_string() + ")");
        inserted[k] = true;
    }
    std::vector<Dimension> out;
    size_t next = 0;
    for (size_t i = 0; i < inserted.size(); ++i) out.push_back(inserted[i] ? Dimension(1) : in[next++]);
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_unsqueeze(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    std::vector<int64_t> axes = ctx.attrs.get_ints("axes");
    std::string source = "the `axes` attribute";
    if (ctx.inputs.size() > 1) {
        const Layout& t = ctx.inputs[1];
        if (!axes.empty())
            throw axes_error(ctx.node, "the axes are given twice: the `axes` attribute " + ints_to_string(axes) +
                                           " and input 1 " + t.to_string());
        if (t.dtype != DataType::i32 && t.dtype != DataType::i64)
            throw axes_error(ctx.node, "the axes (input 1) must be i32 or i64, got " + t.to_string());
        if (t.shape.rank() != 1) throw axes_error(ctx.node, "the axes (input 1) must be 1-D, got " + t.to_string());
        source = "the axes (input 1)";
        const HostTensor* value = ctx.value(1);
        if (value != nullptr) {
            axes = value->to_int64();
        } else if (t.shape[0].is_dynamic()) {
            throw axes_error(ctx.node, "the axes (input 1) " + t.to_string() +
                                           " have a dynamic length and unknown values, so the output rank is unknown");
        } else if (t.shape[0].get_length() > 0) {
            // Values unknown until the producer runs: only the rank is known.
            const auto k = static_cast<size_t>(t.shape[0].get_length());
            return {Layout(PartialShape::dynamic_of_rank(data.shape.rank() + k), data.dtype)};
        }
    }
    if (axes.empty())
        throw axes_error(ctx.node, "unsqueeze needs at least one axis (" + source + " is empty; input " +
                                       data.shape.to_string() + ")");
    return {Layout(unsqueeze_axes(ctx.node, data.shape, axes, source), data.dtype)};
}

// Reference: the bytes of input 0, unchanged.
void unsqueeze_kernel(HostCall& call) {
    const size_t count = call.in_shape(0).count();
    if (call.out_shape(0).count() != count) {
        ErrorContext where;
        where.node = call.node();
        where.op = "unsqueeze";
        throw Error("cannot unsqueeze " + call.in_shape(0).to_string() + " to " + call.out_shape(0).to_string(), where);
    }
    const size_t bytes = checked_mul(count, byte_size(call.in_type(0)), "unsqueeze: bytes of the input");
    if (bytes != 0) std::memcpy(call.out_raw(0), call.in_raw(0), bytes);
}

OclKernelSpec unsqueeze_ocl_spec() {
    OclKernelSpec spec;
    spec.source = unsqueeze_cl;
    spec.kernel_name = "unsqueeze_copy";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_vec4(p.outputs.at(0).count(), limits);
    };
    return spec;
}

void register_unsqueeze(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "unsqueeze", "Inserts size-1 dims (ONNX Unsqueeze; axes from input 1 or the attribute)", 1, 2,
        {attr_ints("axes", std::vector<int64_t>{}, "output positions of the new dims, negative counts from the end")},
        infer_unsqueeze);
    def.value_inputs = {1};
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    reg.add_op(def);
    add_host_impls(reg, "unsqueeze", unsqueeze_kernel);
    const auto counts_match = [](const KernelParams& p) -> std::string {
        if (p.inputs.at(0).count() != p.outputs.at(0).count()) return "input and output element counts differ";
        return {};
    };
    add_ocl_impls(reg, "unsqueeze", unsqueeze_ocl_spec(), ocl_options({}, counts_match));
}

}   // namespace

DYNRT_MODULE("unsqueeze", register_unsqueeze)
