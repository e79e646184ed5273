// cast: every element converted to the data type `to` (ONNX Cast, CastLike).
//
// The conversion rules are C's, made defined where C leaves them open:
//   - floating -> integer truncates toward zero; values past the target's
//     range saturate to its lowest / highest value and NaN becomes 0 (what
//     OpenCL's convert_<T>_sat does);
//   - integer -> integer keeps the low bits (two's complement wrap);
//   - anything -> boolean is `x != 0` (NaN is true); boolean -> number is 0 or 1;
//   - to a floating type: round to nearest even, exactly once (f64 -> f16
//     does not round through f32).
// Integers are never routed through double, so i64 values past 2^53 keep
// every bit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cast_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                      DataType::i64, DataType::u8,  DataType::i8,  DataType::boolean};

std::vector<std::string> type_names() {
    std::vector<std::string> names;
    for (DataType t : kTypes) names.push_back(to_string(t));
    return names;
}

DataType target_type(const Attributes& a) { return kTypes.at(mode_index("cast", type_names(), a.get_string("to"))); }

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    bool known = false;
    for (DataType t : kTypes) known |= t == in.dtype;
    if (!known)
        throw Error(std::string("cast does not take data type ") + to_string(in.dtype),
                    node_context(ctx.node, "cast", "inputs"));
    return {Layout(in.shape, target_type(ctx.attrs))};
}

// ---- reference ------------------------------------------------------------

bool is_integer(DataType t) { return !is_floating(t); }   // boolean included

int64_t load_int(const HostCall& call, size_t i) {
    switch (call.in_type(0)) {
        case DataType::i32: return call.in<int32_t>(0)[i];
        case DataType::i64: return call.in<int64_t>(0)[i];
        case DataType::i8: return call.in<int8_t>(0)[i];
        case DataType::u8: return call.in<uint8_t>(0)[i];
        default: return call.in<uint8_t>(0)[i] != 0 ? 1 : 0;   // boolean
    }
}

double load_float(const HostCall& call, size_t i) {
    switch (call.in_type(0)) {
        case DataType::f64: return call.in<double>(0)[i];
        case DataType::f16: return half_to_float(call.in<uint16_t>(0)[i]);
        default: return call.in<float>(0)[i];
    }
}

// Floating -> integer: truncation toward zero, saturated, NaN -> 0.
template <typename T>
T saturate(double v) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

// f64 -> f16 with one rounding: round to odd into f32 (24 bits keep the
// sticky information f16's 11 need), then f32 -> f16 to nearest even.
uint16_t double_to_half(double d) {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) != d && !std::isnan(d)) {
        uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof bits);
        if ((bits & 1u) == 0) f = std::nextafter(f, d > static_cast<double>(f) ? INFINITY : -INFINITY);
    }
    return float_to_half(f);
}

template <typename T>
void store_int(const HostCall& call, size_t i, bool from_int, int64_t iv, double fv) {
    call.out<T>(0)[i] = from_int ? static_cast<T>(iv) : saturate<T>(fv);
}

void convert_one(const HostCall& call, size_t i) {
    const bool from_int = is_integer(call.in_type(0));
    const int64_t iv = from_int ? load_int(call, i) : 0;
    const double fv = from_int ? 0.0 : load_float(call, i);
    switch (call.out_type(0)) {
        case DataType::f32: call.out<float>(0)[i] = from_int ? static_cast<float>(iv) : static_cast<float>(fv); return;
        case DataType::f64: call.out<double>(0)[i] = from_int ? static_cast<double>(iv) : fv; return;
        case DataType::f16:
            call.out<uint16_t>(0)[i] = from_int ? float_to_half(static_cast<float>(iv)) : double_to_half(fv);
            return;
        case DataType::i32: return store_int<int32_t>(call, i, from_int, iv, fv);
        case DataType::i64: return store_int<int64_t>(call, i, from_int, iv, fv);
        case DataType::u8: return store_int<uint8_t>(call, i, from_int, iv, fv);
        case DataType::i8: return store_int<int8_t>(call, i, from_int, iv, fv);
        case DataType::boolean: call.out<uint8_t>(0)[i] = (from_int ? iv != 0 : fv != 0.0) ? 1 : 0; return;
    }
}

void reference(HostCall& call) {
    const size_t n = call.out_shape(0).count();
    for (size_t i = 0; i < n; ++i) convert_one(call, i);
}

// ---- OpenCL ---------------------------------------------------------------

// CAST_VALUE(v): v, loaded from input0 (f16 as float), converted by the
// rules at the top of this file to CAST_T, the output type (for an f16
// output the float or double the kernel then stores rounded once).
std::string ocl_value(DataType from, DataType to) {
    const std::string v = from == DataType::boolean ? "((v) != 0)" : "(v)";
    switch (to) {
        case DataType::f16: return std::string("((") + (from == DataType::f64 ? "double" : "float") + ")" + v + ")";
        case DataType::boolean: return "(((v) != 0) ? (uchar)1 : (uchar)0)";
        case DataType::f32:
        case DataType::f64: return "((OUTPUT0_TYPE)" + v + ")";
        default:
            if (is_floating(from)) return std::string("convert_") + ocl_type_name(to) + "_sat(v)";
            return "((OUTPUT0_TYPE)" + v + ")";
    }
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = cast_cl;
    spec.kernel_name = "cast_ref";
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_vec4(p.outputs[0].count(), l); };
    spec.defines = [](const KernelParams& p, bool) {
        const DataType from = p.inputs.at(0).dtype, to = p.outputs.at(0).dtype;
        const bool f64 = from == DataType::f64 || to == DataType::f64;
        const std::string cast_t = to != DataType::f16 ? "OUTPUT0_TYPE" : from == DataType::f64 ? "double" : "float";
        return JitDefines{{"IN_F16", from == DataType::f16 ? "1" : "0"},
                          {"OUT_F16", to == DataType::f16 ? "1" : "0"},
                          {"USES_F64", f64 ? "1" : "0"},
                          {"CAST_T", cast_t},
                          {"CAST_VALUE(v)", ocl_value(from, to)}};
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// An ONNX TensorProto data type as a dynrt type, or the reason there is none.
bool onnx_type(int64_t onnx, DataType& t, std::string& why) {
    switch (onnx) {
        case 1: t = DataType::f32; return true;
        case 2: t = DataType::u8; return true;
        case 3: t = DataType::i8; return true;
        case 6: t = DataType::i32; return true;
        case 7: t = DataType::i64; return true;
        case 9: t = DataType::boolean; return true;
        case 10: t = DataType::f16; return true;
        case 11: t = DataType::f64; return true;
        default: break;
    }
    static const char* const kNames[] = {
        "UNDEFINED", "FLOAT",      "UINT8",    "INT8",         "UINT16",         "INT16",      "INT32",
        "INT64",     "STRING",     "BOOL",     "FLOAT16",      "DOUBLE",         "UINT32",     "UINT64",
        "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"};
    const std::string name = onnx >= 0 && onnx < 21 ? kNames[onnx] : "type " + std::to_string(onnx);
    why = "the target type " + name + " is not a dynrt data type";
    return false;
}

// `saturate` (opset 19) only changes casts to float8 types, which are refused.
bool onnx_cast(ImportContext& c) {
    if (!c.only_attrs({"to", "saturate"})) return false;
    if (!c.has("to")) return c.unsupported("Cast has no `to` attribute");
    DataType t{};
    std::string why;
    if (!onnx_type(c.i("to", 0), t, why)) return c.unsupported(why);
    c.set("to", std::string(to_string(t)));
    c.use_inputs({0});
    return true;
}

bool onnx_cast_like(ImportContext& c) {
    if (!c.only_attrs({"saturate"})) return false;
    c.set("to", std::string(to_string(c.layout(1).dtype)));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Cast", 1, 1, onnx_cast, "`to` (every dynrt type; string, bfloat16, float8 refused)"),
            onnx_rule("CastLike", 2, 2, onnx_cast_like, "`to` = input 1's type; input 1's values unused")};
}

void register_cast(ModuleRegistrar& reg) {
    OpDefinition def = op_def("cast", "Elementwise conversion to the data type `to` (ONNX Cast, CastLike)", 1, 1,
                              {attr_string("to", std::nullopt, type_names(), "the output's data type")}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "cast", reference, host_options(kTypes));   // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "cast", ocl_spec(), ocl_options(kTypes));    // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("cast", register_cast)
