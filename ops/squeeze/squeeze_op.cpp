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
#include "squeeze_cl.hpp"

namespace {

using namespace dynrt;

// An error of this node about its axes (the attribute or input 1).
Error axes_error(const std::string& node, const std::string& message) {
    ErrorContext where;
    where.node = node;
    where.op = "squeeze";
    where.field = "axes";
    return Error(message, where);
}

bool may_be_one(const Dimension& d) { return d.contains(1); }

// Every dim that is certainly 1 goes; a dim that may or may not be 1 makes the
// output rank unknown, which a partial shape cannot express.
PartialShape squeeze_all(const std::string& node, const PartialShape& in) {
    std::vector<Dimension> out;
    for (size_t i = 0; i < in.rank(); ++i) {
        const Dimension& d = in[i];
        if (d.is_static() && d.get_length() == 1) continue;
        if (d.is_dynamic() && may_be_one(d))
            throw axes_error(node, "squeeze without axes cannot tell whether dim " + std::to_string(i) + " of input " +
                                       in.to_string() + " (extent " + d.to_string() +
                                       ") is removed; give the axes to squeeze");
        out.push_back(d);
    }
    return PartialShape(std::move(out));
}

PartialShape squeeze_axes(const std::string& node, const PartialShape& in, const std::vector<int64_t>& axes,
                          const std::string& source) {
    const auto rank = static_cast<int64_t>(in.rank());
    std::vector<bool> removed(in.rank(), false);
    for (const int64_t a : axes) {
        if (a < -rank || a >= rank)
            throw axes_error(node, "axis " + std::to_string(a) + " of " + source + " " + ints_to_string(axes) +
                                       " is out of range for input " + in.to_string() + " (rank " +
                                       std::to_string(rank) + ")");
        const auto k = static_cast<size_t>(a < 0 ? a + rank : a);
        if (removed[k])
            throw axes_error(node, source + " " + ints_to_string(axes) + " name dim " + std::to_string(k) +
                                       " of input " + in.to_string() + " more than once");
        if (!may_be_one(in[k]))
            throw axes_error(node, "cannot squeeze dim " + std::to_string(k) + " of input " + in.to_string() +
                                       ": its extent is " + in[k].to_string() + ", not 1 (" + source + " " +
                                       ints_to_string(axes) + ")");
        removed[k] = true;
    }
    std::vector<Dimension> out;
    for (size_t i = 0; i < in.rank(); ++i)
        if (!removed[i]) out.push_back(in[i]);
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_squeeze(const ShapeInferContext& ctx) {
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
            const int64_t k = t.shape[0].get_length();
            const auto rank = static_cast<int64_t>(data.shape.rank());
            if (k > rank)
                throw axes_error(ctx.node, "the axes (input 1) " + t.to_string() + " squeeze " + std::to_string(k) +
                                               " dims of input " + data.shape.to_string());
            return {Layout(PartialShape::dynamic_of_rank(static_cast<size_t>(rank - k)), data.dtype)};
        }
    }
    if (axes.empty()) return {Layout(squeeze_all(ctx.node, data.shape), data.dtype)};
    return {Layout(squeeze_axes(ctx.node, data.shape, axes, source), data.dtype)};
}

// Reference: the bytes of input 0, unchanged.
void squeeze_kernel(HostCall& call) {
    const size_t count = call.in_shape(0).count();
    if (call.out_shape(0).count() != count) {
        ErrorContext where;
        where.node = call.node();
        where.op = "squeeze";
        throw Error("cannot squeeze " + call.in_shape(0).to_string() + " to " + call.out_shape(0).to_string(), where);
    }
    const size_t bytes = checked_mul(count, byte_size(call.in_type(0)), "squeeze: bytes of the input");
    if (bytes != 0) std::memcpy(call.out_raw(0), call.in_raw(0), bytes);
}

OclKernelSpec squeeze_ocl_spec() {
    OclKernelSpec spec;
    spec.source = squeeze_cl;
    spec.kernel_name = "squeeze_copy";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_vec4(p.outputs.at(0).count(), limits);
    };
    return spec;
}

void register_squeeze(ModuleRegistrar& reg) {
    OpDefinition def = op_def("squeeze", "Removes size-1 dims (ONNX Squeeze; axes from input 1 or the attribute)", 1, 2,
                              {attr_ints("axes", std::vector<int64_t>{},
                                         "dims to remove, negative counts from the end; empty: every size-1 dim")},
                              infer_squeeze);
    def.value_inputs = {1};
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    reg.add_op(def);
    add_host_impls(reg, "squeeze", squeeze_kernel);
    const auto counts_match = [](const KernelParams& p) -> std::string {
        if (p.inputs.at(0).count() != p.outputs.at(0).count()) return "input and output element counts differ";
        return {};
    };
    add_ocl_impls(reg, "squeeze", squeeze_ocl_spec(), ocl_options({}, counts_match));
}

}   // namespace

DYNRT_MODULE("squeeze", register_squeeze)
