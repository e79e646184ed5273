// compare: elementwise comparison of two tensors with numpy broadcasting
// (ONNX Equal, Less, LessOrEqual, Greater, GreaterOrEqual), a boolean result.
//
// Floats compare as doubles (f16 decoded exactly), so a NaN on either side
// gives false for every mode, equal included. Integers compare as int64, exact
// for every i64 value. Boolean inputs take only `equal`.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "compare_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

enum class Mode { equal, less, less_equal, greater, greater_equal };

const std::vector<std::string> kModes = {"equal", "less", "less_equal", "greater", "greater_equal"};
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                      DataType::u8,  DataType::i8,  DataType::boolean};

Mode parse_mode(const std::string& s) { return static_cast<Mode>(mode_index("compare", kModes, s)); }

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "compare", field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Mode mode = parse_mode(ctx.attrs.get_string("mode"));
    if (ctx.inputs.size() != 2)
        throw node_error(ctx, "inputs", "compare takes 2 inputs (a, b), got " + std::to_string(ctx.inputs.size()));
    const Layout& a = ctx.inputs[0];
    const Layout& b = ctx.inputs[1];
    if (a.dtype != b.dtype)
        throw node_error(ctx, "inputs",
                         "inputs a and b must have one data type, got a " + a.to_string() + " and b " + b.to_string());
    if (std::find(kTypes.begin(), kTypes.end(), a.dtype) == kTypes.end())
        throw node_error(ctx, "inputs", std::string("compare does not take data type ") + to_string(a.dtype));
    if (a.dtype == DataType::boolean && mode != Mode::equal)
        throw node_error(ctx, "mode",
                         "boolean inputs " + a.to_string() + " and " + b.to_string() +
                             " take only mode 'equal', got '" + ctx.attrs.get_string("mode") + "'");
    const std::string described = "a " + a.shape.to_string() + " and b " + b.shape.to_string();
    const PartialShape out =
        broadcast_inputs({a.shape, b.shape}, described, node_context(ctx.node, "compare", "inputs"));
    return {Layout(out, DataType::boolean)};
}

// ---- reference ------------------------------------------------------------

template <typename T>
bool apply(Mode m, T a, T b) {
    switch (m) {
        case Mode::equal: return a == b;
        case Mode::less: return a < b;
        case Mode::less_equal: return a <= b;
        case Mode::greater: return a > b;
        case Mode::greater_equal: return a >= b;
    }
    return false;
}

int64_t load_int(const HostCall& call, size_t input, size_t i) {
    switch (call.in_type(input)) {
        case DataType::i32: return call.in<int32_t>(input)[i];
        case DataType::i64: return call.in<int64_t>(input)[i];
        case DataType::i8: return call.in<int8_t>(input)[i];
        case DataType::u8: return call.in<uint8_t>(input)[i];
        default: return call.in<uint8_t>(input)[i] != 0 ? 1 : 0;   // boolean
    }
}

void reference(HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Shape& out = call.out_shape(0);
    const bool floating = is_floating(call.in_type(0));
    auto* y = call.out<uint8_t>(0);
    BroadcastIndex ix(out, {call.in_shape(0), call.in_shape(1)});
    for (size_t o = 0; o < out.count(); ++o, ix.next()) {
        const size_t ia = ix.in(0), ib = ix.in(1);
        const bool r = floating ? apply(m, call.get(0, ia), call.get(1, ib))
                                : apply(m, load_int(call, 0, ia), load_int(call, 1, ib));
        y[o] = r ? 1 : 0;
    }
}

// ---- OpenCL ---------------------------------------------------------------

// CMP(a, b) of each mode, in kModes order.
const char* const kOclExprs[] = {"((a) == (b))", "((a) < (b))", "((a) <= (b))", "((a) > (b))", "((a) >= (b))"};

const char* ocl_expr(Mode m, DataType t) {
    if (t == DataType::boolean) return "(((a) != 0) == ((b) != 0))";
    return kOclExprs[static_cast<size_t>(m)];
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = compare_cl;
    spec.kernel_name = "compare_ref";
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    // IN_F16: f16 inputs load as float (ocl_common.cl's LOAD); the output is boolean.
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        return JitDefines{{"IN_F16", t == DataType::f16 ? "1" : "0"},
                          {"CMP(a, b)", ocl_expr(parse_mode(p.attrs->get_string("mode")), t)}};
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() {
    std::vector<ImportRule> rules;
    for (const auto& [onnx, mode] :
         std::vector<std::pair<std::string, std::string>>{{"Equal", "equal"},
                                                          {"Less", "less"},
                                                          {"LessOrEqual", "less_equal"},
                                                          {"Greater", "greater"},
                                                          {"GreaterOrEqual", "greater_equal"}})
        rules.push_back(onnx_rule(onnx, 2, 2, import_plain({{"mode", mode}}), "`mode` " + mode));
    return rules;
}

void register_compare(ModuleRegistrar& reg) {
    OpDefinition def = op_def("compare", "Elementwise comparison with numpy broadcasting, boolean result", 2, 2,
                              {attr_string("mode", std::nullopt, kModes, "comparison a <mode> b")}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "compare", reference, host_options(kTypes));   // cpu_ref_dynamic, cpu_ref_static
    // ocl_dynamic, ocl_static: the kernel indexes at most 8 dims.
    add_ocl_impls(reg, "compare", ocl_spec(), ocl_options(kTypes, validate_broadcast_rank));
}

}   // namespace

DYNRT_MODULE("compare", register_compare)
