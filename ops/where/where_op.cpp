// where: y = condition ? x : y elementwise (ONNX Where), the three inputs
// broadcast together as numpy does. `condition` is boolean (any non-zero
// byte reads as true); `x` and `y` share one data type, any of them, and the
// output has it. Elements are copied bit for bit (NaN payloads, -0 kept).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "where_cl.hpp"

namespace {

using namespace dynrt;

const char* const kNames[] = {"condition", "x", "y"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "where", field));
}

std::string shapes_of(const ShapeInferContext& ctx) {
    std::string s;
    for (size_t i = 0; i < 3; ++i) s += std::string(i ? ", " : "") + kNames[i] + " " + ctx.inputs[i].shape.to_string();
    return s;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() != 3)
        throw node_error(ctx, "inputs",
                         "where takes 3 inputs (condition, x, y), got " + std::to_string(ctx.inputs.size()));
    const Layout& c = ctx.inputs[0];
    const Layout& x = ctx.inputs[1];
    const Layout& y = ctx.inputs[2];
    if (c.dtype != DataType::boolean)
        throw node_error(ctx, "inputs", "input 0 (condition) is " + c.to_string() + "; it must be boolean");
    if (x.dtype != y.dtype)
        throw node_error(ctx, "inputs",
                         "inputs x and y must have one data type, got x " + x.to_string() + " and y " + y.to_string());
    const PartialShape out =
        broadcast_inputs({c.shape, x.shape, y.shape}, shapes_of(ctx), node_context(ctx.node, "where", "inputs"));
    return {Layout(out, x.dtype)};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t bytes = byte_size(call.out_type(0));
    const auto* c = call.in<uint8_t>(0);
    const auto* x = static_cast<const unsigned char*>(call.in_raw(1));
    const auto* y = static_cast<const unsigned char*>(call.in_raw(2));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    BroadcastIndex ix(out, {call.in_shape(0), call.in_shape(1), call.in_shape(2)});
    for (size_t o = 0; o < out.count(); ++o, ix.next()) {
        const unsigned char* src = c[ix.in(0)] != 0 ? x + ix.in(1) * bytes : y + ix.in(2) * bytes;
        std::memcpy(dst + o * bytes, src, bytes);
    }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = where_cl;
    spec.kernel_name = "where_ref";
    // Elements move as unsigned integers of their width, whatever the type.
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.outputs[0].dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() { return {onnx_rule("Where", 3, 3, import_plain(), "")}; }

void register_where(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("where", "Elementwise condition ? x : y with numpy broadcasting of the three inputs", 3, 3, {}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    // Input 0 is the boolean condition, output 0 has x's type: every type on both.
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                         DataType::u8,  DataType::i8,  DataType::boolean};
    add_host_impls(reg, "where", reference, host_options(types));   // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "where", ocl_spec(), ocl_options(types, validate_broadcast_rank));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("where", register_where)
