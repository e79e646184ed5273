// expand: the input broadcast to a shape (ONNX Expand). Input 1 holds the
// target shape (a 1-D i32/i64 tensor, read by value during shape inference);
// the output shape is the numpy broadcast of the input's shape and the target,
// both ways: a 1 in the target keeps the input's dim, and a target shorter than
// the input keeps the input's leading dims. Elements are copied bit for bit.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "expand_cl.hpp"

namespace {

using namespace dynrt;

Error shape_error(const ShapeInferContext& ctx, const std::string& message) {
    return Error(message, node_context(ctx.node, "expand", "shape"));
}

// The output while the target's values are unknown: its rank is known from the
// target's length; an input dim other than 1 is the output's dim there (the
// target may only hold 1 or that dim), every other dim is dynamic.
PartialShape rank_only(const ShapeInferContext& ctx, const PartialShape& in, const Dimension& length) {
    if (length.is_dynamic())
        throw shape_error(ctx,
                          "the shape (input 1) has dynamic length and unknown values, so the output rank of "
                          "expanding " +
                              in.to_string() + " is unknown");
    if (static_cast<uint64_t>(length.get_length()) > kMaxRank)
        throw shape_error(ctx, "the shape (input 1) has length " + length.to_string() + ", above the " +
                                   std::to_string(kMaxRank) + " dims a shape may have");
    const size_t rank = std::max(in.rank(), static_cast<size_t>(length.get_length()));
    std::vector<Dimension> out(rank);
    for (size_t i = 0; i < in.rank(); ++i) {
        const Dimension& d = in[i];
        if (d.is_static() && d.get_length() != 1) out[rank - in.rank() + i] = d;
    }
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_expand(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& shape = ctx.inputs.at(1);
    if (shape.dtype != DataType::i32 && shape.dtype != DataType::i64)
        throw shape_error(ctx, "the shape (input 1) must be i32 or i64, got " + shape.to_string());
    if (shape.shape.rank() != 1) throw shape_error(ctx, "the shape (input 1) must be 1-D, got " + shape.to_string());
    const HostTensor* value = ctx.value(1);
    if (value == nullptr) return {Layout(rank_only(ctx, data.shape, shape.shape[0]), data.dtype)};
    const std::vector<int64_t> target = value->to_int64();
    std::vector<Dimension> dims;
    for (const int64_t v : target) {
        if (v < 0)
            throw shape_error(
                ctx, "the shape " + ints_to_string(target) + " (input 1) has a negative dim " + std::to_string(v));
        dims.emplace_back(v);
    }
    const std::string described = "input " + data.shape.to_string() + " and shape " + ints_to_string(target);
    const PartialShape out = broadcast_inputs({data.shape, PartialShape(std::move(dims))}, described,
                                              node_context(ctx.node, "expand", "shape"));
    return {Layout(out, data.dtype)};
}

// ---- reference ------------------------------------------------------------

void expand_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t count = out.count();
    if (count == 0) return;
    const size_t width = byte_size(call.out_type(0));
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    BroadcastIndex ix(out, {call.in_shape(0)});
    for (size_t o = 0; o < count; ++o, ix.next()) std::memcpy(dst + o * width, src + ix.in(0) * width, width);
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec expand_ocl_spec() {
    OclKernelSpec spec;
    spec.source = expand_cl;
    spec.kernel_name = "expand_ref";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"COPY_ELEM_T", ocl_bits_type(p.outputs.at(0).dtype)}};
    };
    // Grid-stride over the output's 4-element vectors (the last one partial).
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_grid_stride((p.outputs.at(0).count() + 3) / 4, l);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Expand", 2, 2, import_plain(), "shape as input 1 (read by value)")};
}

void register_expand(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("expand", "The input broadcast to the shape in input 1, numpy rules both ways", 2, 2, {}, infer_expand);
    def.value_inputs = {1};
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "expand", expand_kernel);   // every dtype, any rank
    add_ocl_impls(reg, "expand", expand_ocl_spec(), ocl_options({}, validate_broadcast_rank));
}

}   // namespace

DYNRT_MODULE("expand", register_expand)
