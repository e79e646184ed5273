// eltwise: a binary elementwise operation with numpy broadcasting.
//
// Floating-point inputs are computed in double and rounded once on store.
// Integer inputs are computed in int64 with two's-complement wrap-around (so
// overflow is defined, as on every device), division truncates toward zero and
// pow goes through double and truncates, saturating to the int64 range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"
#include "eltwise_cl.hpp"

namespace {

using dynrt::DataType;
using dynrt::Shape;

enum class Mode { add, sub, mul, div, min, max, pow, squared_diff };

Mode parse_mode(const std::string& s) {
    static const std::pair<const char*, Mode> kModes[] = {
        {"add", Mode::add}, {"sub", Mode::sub}, {"mul", Mode::mul}, {"div", Mode::div},
        {"min", Mode::min}, {"max", Mode::max}, {"pow", Mode::pow}, {"squared_diff", Mode::squared_diff}};
    for (const auto& m : kModes)
        if (s == m.first) return m.second;
    dynrt::ErrorContext ctx;
    ctx.field = "mode";
    throw dynrt::Error("unknown eltwise mode '" + s + "'", ctx);
}

double apply_float(Mode m, double a, double b) {
    switch (m) {
        case Mode::add: return a + b;
        case Mode::sub: return a - b;
        case Mode::mul: return a * b;
        case Mode::div: return a / b;
        case Mode::min: return std::min(a, b);
        case Mode::max: return std::max(a, b);
        case Mode::pow: return std::pow(a, b);
        case Mode::squared_diff: return (a - b) * (a - b);
    }
    return 0.0;
}

// Wrapping arithmetic through uint64: signed overflow would be undefined.
int64_t wrap_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

int64_t apply_int(Mode m, int64_t a, int64_t b, const std::string& node) {
    switch (m) {
        case Mode::add: return wrap_add(a, b);
        case Mode::sub: return wrap_sub(a, b);
        case Mode::mul: return wrap_mul(a, b);
        case Mode::div: {
            if (b == 0) {
                dynrt::ErrorContext ctx;
                ctx.node = node;
                ctx.op = "eltwise";
                throw dynrt::Error(
                    "eltwise node '" + node + "': integer division by zero (" + std::to_string(a) + " / 0)", ctx);
            }
            if (b == -1) return wrap_sub(0, a);   // INT64_MIN / -1 wraps instead of trapping
            return a / b;                         // C++ truncates toward zero
        }
        case Mode::min: return std::min(a, b);
        case Mode::max: return std::max(a, b);
        case Mode::pow: {
            const double p = std::trunc(std::pow(static_cast<double>(a), static_cast<double>(b)));
            // Casting an out-of-range double to an integer is undefined: saturate.
            if (std::isnan(p)) return 0;
            if (p >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
            if (p <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
            return static_cast<int64_t>(p);
        }
        case Mode::squared_diff: {
            const int64_t d = wrap_sub(a, b);
            return wrap_mul(d, d);
        }
    }
    return 0;
}

bool is_integer_type(DataType t) {
    return t == DataType::i32 || t == DataType::i64 || t == DataType::i8 || t == DataType::u8;
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& a = ctx.inputs.at(0);
    const dynrt::Layout& b = ctx.inputs.at(1);
    if (a.dtype != b.dtype)
        throw dynrt::Error("eltwise inputs must have the same data type, got " + a.to_string() + " and " +
                           b.to_string());
    if (!dynrt::is_floating(a.dtype) && !is_integer_type(a.dtype))
        throw dynrt::Error(std::string("eltwise does not support data type ") + dynrt::to_string(a.dtype));
    parse_mode(ctx.attrs.get_string("mode"));
    dynrt::PartialShape out;
    try {
        out = dynrt::broadcast_shapes(a.shape, b.shape);
    } catch (const dynrt::Error& e) {
        throw dynrt::Error("eltwise inputs cannot be broadcast: " + a.shape.to_string() + " and " +
                           b.shape.to_string() + " (" + e.message() + ")");
    }
    return {dynrt::Layout(out, a.dtype)};
}

// Calls body(out_index, a_index, b_index) for every output element in order.
template <typename Body>
void for_each_broadcast(const Shape& a, const Shape& b, const Shape& out, Body body) {
    dynrt::BroadcastIndex ix(out, {a, b});
    for (size_t o = 0; o < out.count(); ++o, ix.next()) body(o, ix.in(0), ix.in(1));
}

int64_t load_int(const dynrt::HostCall& call, size_t input, size_t i) {
    switch (call.in_type(input)) {
        case DataType::i32: return call.in<int32_t>(input)[i];
        case DataType::i64: return call.in<int64_t>(input)[i];
        default: return static_cast<int64_t>(call.get(input, i));
    }
}

void store_int(const dynrt::HostCall& call, size_t i, int64_t v) {
    switch (call.out_type(0)) {
        case DataType::i32: call.out<int32_t>(0)[i] = static_cast<int32_t>(v); break;
        case DataType::i64: call.out<int64_t>(0)[i] = v; break;
        case DataType::i8: call.set(0, i, static_cast<int8_t>(v)); break;
        case DataType::u8: call.set(0, i, static_cast<uint8_t>(v)); break;
        default: call.set(0, i, static_cast<double>(v)); break;
    }
}

void kernel(dynrt::HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Shape& sa = call.in_shape(0);
    const Shape& sb = call.in_shape(1);
    const Shape& so = call.out_shape(0);
    const DataType t = call.in_type(0);
    if (is_integer_type(t)) {
        for_each_broadcast(sa, sb, so, [&](size_t o, size_t ia, size_t ib) {
            store_int(call, o, apply_int(m, load_int(call, 0, ia), load_int(call, 1, ib), call.node()));
        });
    } else if (t == DataType::f32 && call.out_type(0) == DataType::f32) {
        const float* a = call.in<float>(0);
        const float* b = call.in<float>(1);
        float* y = call.out<float>(0);
        for_each_broadcast(sa, sb, so, [&](size_t o, size_t ia, size_t ib) {
            y[o] = static_cast<float>(apply_float(m, a[ia], b[ib]));
        });
    } else {
        for_each_broadcast(sa, sb, so, [&](size_t o, size_t ia, size_t ib) {
            call.set(0, o, apply_float(m, call.get(0, ia), call.get(1, ib)));
        });
    }
}

// ---- OpenCL ---------------------------------------------------------------

// OP_EXPR of the kernel, in `a` and `b`. Floats: float math. Integers: COMPUTE_T is long;
// add/sub/mul go through ulong so overflow wraps (the host's int64
// two's-complement result truncated to the type has the same low bits).
const char* ocl_op(Mode m, bool integer) {
    switch (m) {
        case Mode::add: return integer ? "((long)((ulong)(a) + (ulong)(b)))" : "((a) + (b))";
        case Mode::sub: return integer ? "((long)((ulong)(a) - (ulong)(b)))" : "((a) - (b))";
        case Mode::mul: return integer ? "((long)((ulong)(a) * (ulong)(b)))" : "((a) * (b))";
        case Mode::min: return integer ? "min((a), (b))" : "fmin((a), (b))";
        case Mode::max: return integer ? "max((a), (b))" : "fmax((a), (b))";
        case Mode::squared_diff:
            return integer ? "((long)(((ulong)(a) - (ulong)(b)) * ((ulong)(a) - (ulong)(b))))"
                           : "(((a) - (b)) * ((a) - (b)))";
        case Mode::div: return "((a) / (b))";     // floats only (see the validate below)
        case Mode::pow: return "pow((a), (b))";   // floats only
    }
    return "((a) + (b))";
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = eltwise_cl;
    spec.kernel_name = "eltwise_ref";
    spec.padded_outputs = true;   // stores through OUTPUT0_PHYS
    spec.fused_ops = true;        // FUSED_OPS before each store (STORE_F)
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        const bool integer = is_integer_type(p.inputs.at(0).dtype);
        dynrt::JitDefines d{{"COMPUTE_T", integer ? "long" : "float"},
                            {"OP_EXPR", ocl_op(parse_mode(p.attrs->get_string("mode")), integer)}};
        d.push_back(dynrt::jit_data_f16(p.inputs.at(0).dtype));
        return d;
    };
    // The kernel's test, on the runtime layouts: same element counts (no
    // broadcast) -> grid-stride over 4-element vectors, at least one
    // work-item per tail element; else one work-item per output element.
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& limits) {
        const size_t n = p.outputs.at(0).count();
        if (n != 0 && p.inputs.at(0).count() == n && p.inputs.at(1).count() == n)
            return dynrt::dispatch_grid_stride(std::max<size_t>(n / 4, n % 4), limits);
        return dynrt::dispatch_1d(n, limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp): Add, Sub ... and the
// variadic Min/Max/Sum with two inputs (one input is the identity).
dynrt::ImportFn onnx_binary(const std::string& mode, bool variadic) {
    return [mode, variadic](dynrt::ImportContext& c) {
        if (c.has("broadcast") || c.has("axis"))
            return c.unsupported("legacy broadcast attributes (opset < 7) are not supported");
        if (!c.only_attrs({})) return false;
        const size_t n = c.count_present();
        if (variadic && n == 1) {
            c.out.op = "activation";
            c.set("func", std::string("identity"));
            c.use_inputs({0});
            return true;
        }
        if (n != 2) return c.unsupported(std::to_string(n) + " inputs (dynrt eltwise takes 2)");
        if (c.layout(0).dtype != c.layout(1).dtype)
            return c.unsupported(std::string("inputs of different types (") + to_string(c.layout(0).dtype) + ", " +
                                 to_string(c.layout(1).dtype) + "); dynrt eltwise takes one type");
        c.set("mode", mode);
        c.use_inputs({0, 1});
        return true;
    };
}

std::vector<dynrt::ImportRule> onnx_rules() {
    std::vector<dynrt::ImportRule> rules;
    for (const auto& [onnx, mode] : std::vector<std::pair<std::string, std::string>>{
             {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"}})
        rules.push_back(dynrt::onnx_rule(onnx, 2, 2, onnx_binary(mode, false), "`mode` " + mode));
    for (const auto& [onnx, mode] :
         std::vector<std::pair<std::string, std::string>>{{"Max", "max"}, {"Min", "min"}, {"Sum", "add"}})
        rules.push_back(dynrt::onnx_rule(onnx, 1, dynrt::kAnyInputs, onnx_binary(mode, true),
                                         "`mode` " + mode + " of two inputs; one input -> activation identity"));
    return rules;
}

void register_eltwise(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "eltwise", "Binary elementwise operation with numpy broadcasting, selected by `mode`", 2, 2,
        {dynrt::attr_string("mode", std::nullopt, {"add", "sub", "mul", "div", "min", "max", "pow", "squared_diff"},
                            "operation to apply")},
        infer);
    // Fusion (docs/architecture.md): an eltwise is fused into its producer
    // (its other input broadcast into the result) and takes post-ops itself.
    def.traits.fusable = true;
    def.traits.accepts_fused_ops = true;
    def.ocl_post_op = [](const dynrt::Attributes& a, const std::vector<std::string>& args) {
        std::string e = ocl_op(parse_mode(a.get_string("mode")), false);
        e = dynrt::replace_identifier(e, "a", "(" + args.at(0) + ")");
        return dynrt::replace_identifier(e, "b", "(" + args.at(1) + ")");
    };
    def.imports = onnx_rules();
    reg.add_op(def);

    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::i32,
                                          DataType::i64, DataType::i8,  DataType::u8};
    dynrt::add_host_impls(reg, "eltwise", kernel, dynrt::host_options(dtypes));

    // Integer div (division by zero must raise, INT_MIN / -1 must wrap) and
    // integer pow (saturating double math) stay on the host impl: the device
    // cannot raise an error and OpenCL leaves both undefined.
    const auto ocl_supported = [](const dynrt::KernelParams& p) -> std::string {
        const Mode m = parse_mode(p.attrs->get_string("mode"));
        if (is_integer_type(p.inputs.at(0).dtype) && (m == Mode::div || m == Mode::pow))
            return "integer div and pow run on the host impl";
        return {};
    };
    dynrt::add_ocl_impls(reg, "eltwise", ocl_spec(), dynrt::ocl_options(dtypes, ocl_supported));
}

}   // namespace

DYNRT_MODULE("eltwise", register_eltwise)
