// logical: elementwise boolean logic (ONNX And, Or, Xor, Not). `not` takes
// one input; `and`, `or` and `xor` take two with numpy broadcasting. Inputs
// and output are boolean, one byte per element; any non-zero byte reads as
// true and results are stored as 0 or 1.
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "logical_cl.hpp"

namespace {

using namespace dynrt;

enum class Mode { and_, or_, xor_, not_ };

const std::vector<std::string> kModes = {"and", "or", "xor", "not"};

Mode parse_mode(const std::string& s) { return static_cast<Mode>(mode_index("logical", kModes, s)); }

size_t arity(Mode m) { return m == Mode::not_ ? 1 : 2; }

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "logical", field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const std::string& name = ctx.attrs.get_string("mode");
    const Mode mode = parse_mode(name);
    const size_t n = arity(mode);
    if (ctx.inputs.size() != n)
        throw node_error(ctx, "inputs",
                         "logical mode '" + name + "' takes " + std::to_string(n) + (n == 1 ? " input" : " inputs") +
                             ", got " + std::to_string(ctx.inputs.size()));
    for (size_t i = 0; i < n; ++i)
        if (ctx.inputs[i].dtype != DataType::boolean)
            throw node_error(
                ctx, "inputs",
                "input " + std::to_string(i) + " is " + ctx.inputs[i].to_string() + "; logical takes boolean inputs");
    PartialShape out = ctx.inputs[0].shape;
    if (n == 2) {
        const PartialShape& a = ctx.inputs[0].shape;
        const PartialShape& b = ctx.inputs[1].shape;
        out = broadcast_inputs({a, b}, "a " + a.to_string() + " and b " + b.to_string(),
                               node_context(ctx.node, "logical", "inputs"));
    }
    return {Layout(out, DataType::boolean)};
}

// ---- reference ------------------------------------------------------------

bool apply(Mode m, bool a, bool b) {
    switch (m) {
        case Mode::and_: return a && b;
        case Mode::or_: return a || b;
        case Mode::xor_: return a != b;
        case Mode::not_: return !a;
    }
    return false;
}

void reference(HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Shape& out = call.out_shape(0);
    const auto* a = call.in<uint8_t>(0);
    auto* y = call.out<uint8_t>(0);
    if (m == Mode::not_) {
        for (size_t o = 0; o < out.count(); ++o) y[o] = apply(m, a[o] != 0, false) ? 1 : 0;
        return;
    }
    const auto* b = call.in<uint8_t>(1);
    BroadcastIndex ix(out, {call.in_shape(0), call.in_shape(1)});
    for (size_t o = 0; o < out.count(); ++o, ix.next()) {
        const bool va = a[ix.in(0)] != 0;
        const bool vb = b[ix.in(1)] != 0;
        y[o] = apply(m, va, vb) ? 1 : 0;
    }
}

// ---- OpenCL ---------------------------------------------------------------

const char* ocl_expr(Mode m) {
    switch (m) {
        case Mode::and_: return "((a) && (b))";
        case Mode::or_: return "((a) || (b))";
        case Mode::xor_: return "((a) != (b))";
        case Mode::not_: return "(!(a))";
    }
    return "0";
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = logical_cl;
    spec.kernel_name = "logical_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const Mode m = parse_mode(p.attrs->get_string("mode"));
        return JitDefines{{"UNARY", m == Mode::not_ ? "1" : "0"}, {"LOGIC(a, b)", ocl_expr(m)}};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() {
    std::vector<ImportRule> rules;
    for (const std::string mode : {"and", "or", "xor"}) {
        std::string onnx = mode;
        onnx[0] = static_cast<char>(onnx[0] - 'a' + 'A');
        rules.push_back(onnx_rule(onnx, 2, 2, import_plain({{"mode", mode}}), "`mode` " + mode));
    }
    rules.push_back(onnx_rule("Not", 1, 1, import_plain({{"mode", std::string("not")}}), "`mode` not"));
    return rules;
}

void register_logical(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("logical", "Elementwise boolean and/or/xor (numpy broadcasting) and not", 1, 2,
               {attr_string("mode", std::nullopt, kModes, "and, or, xor (two inputs) or not (one)")}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> types = {DataType::boolean};
    add_host_impls(reg, "logical", reference, host_options(types));   // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "logical", ocl_spec(), ocl_options(types, validate_broadcast_rank));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("logical", register_logical)
