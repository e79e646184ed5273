// activation: an elementwise unary function chosen by the `func` attribute.
//
// One op for every pointwise activation keeps the registry short and lets a
// YAML file switch functions by changing one string. The math runs in double
// and is rounded once on store, so f16 and f32 results are the correctly
// rounded values of the exact function (up to libm accuracy). The functions
// that make sense on integers (relu, abs, neg, sign, clamp, identity) also
// take i32, i64, u8 and i8, computed exactly in int64 and wrapped to the type.
//
// NaN and infinities behave alike on every impl and device: a NaN input gives
// NaN for every function (the ones written with a comparison test for NaN
// first, since `x > 0 ? x : 0` would give 0), and +-inf give the formula's
// IEEE value, as numpy and onnxruntime compute it (so gelu(-inf) is
// -inf * 0 = NaN). The reference is checked against those values and every
// other impl, fused post-ops included, against the reference (the test's
// ActivationSpecials).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "activation_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/cpu_padded.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using dynrt::DataType;

enum class Func {
    relu,
    gelu,
    gelu_tanh,
    silu,
    sigmoid,
    tanh_,
    exp_,
    abs_,
    neg,
    sqrt_,
    log_,
    elu,
    leaky_relu,
    clamp,
    hswish,
    softplus,
    identity,
    reciprocal,
    erf_,
    sin_,
    cos_,
    tan_,
    asin_,
    acos_,
    atan_,
    sinh_,
    cosh_,
    asinh_,
    acosh_,
    atanh_,
    floor_,
    ceil_,
    round_,
    sign,
    selu,
    celu,
    hard_sigmoid,
    thresholded_relu,
    softsign,
    shrink,
    mish
};

// A function's name, its OpenCL C expression of a float `x` (ALPHA and BETA
// are JIT constants; mirrors apply() below, in float) and, for the functions
// that also take integer inputs, its expression of an integer `x` of the
// input's type (nullptr: floating-point only).
struct FuncInfo {
    const char* name;
    Func func;
    const char* ocl;
    const char* ocl_int;
};

const FuncInfo kFuncs[] = {
    {"relu", Func::relu, "(x > 0.0f || isnan(x) ? x : 0.0f)", "(x > 0 ? x : 0)"},
    {"gelu", Func::gelu, "(0.5f * x * (1.0f + erf(x * 0.70710678118654752f)))", nullptr},
    // 0.5 (1 + tanh(u)) as 1 / (1 + e^(-2u)): float tanh may stop an ulp short
    // of -1, which left gelu_tanh(-inf) -inf (not -inf * 0 = NaN) and
    // gelu_tanh(-100) -3e-6 (not -0).
    {"gelu_tanh", Func::gelu_tanh, "(x / (1.0f + exp(-1.5957691216057308f * (x + 0.044715f * x * x * x))))", nullptr},
    {"silu", Func::silu, "(x / (1.0f + exp(-x)))", nullptr},
    {"sigmoid", Func::sigmoid, "(1.0f / (1.0f + exp(-x)))", nullptr},
    {"tanh", Func::tanh_, "tanh(x)", nullptr},
    {"exp", Func::exp_, "exp(x)", nullptr},
    // Integers: negated through UACC_TYPE, the unsigned type of ACC_TYPE's
    // width, so the type's minimum wraps to itself (-x would overflow).
    {"abs", Func::abs_, "fabs(x)", "(x < 0 ? (ACC_TYPE)((UACC_TYPE)0 - (UACC_TYPE)x) : x)"},
    {"neg", Func::neg, "(-x)", "(ACC_TYPE)((UACC_TYPE)0 - (UACC_TYPE)x)"},
    {"sqrt", Func::sqrt_, "sqrt(x)", nullptr},
    {"log", Func::log_, "log(x)", nullptr},
    // expm1 keeps the small-|x| values accurate (exp(x) - 1 cancels).
    {"elu", Func::elu, "(x > 0.0f ? x : ALPHA * expm1(x))", nullptr},
    {"leaky_relu", Func::leaky_relu, "(x >= 0.0f ? x : ALPHA * x)", nullptr},
    // Comparisons, not fmin/fmax, which return the other operand for NaN.
    // Integers: ALPHA and BETA are integer literals within the type's range.
    {"clamp", Func::clamp, "(x < ALPHA ? ALPHA : (x > BETA ? BETA : x))",
     "min(max(x, (ACC_TYPE)ALPHA), (ACC_TYPE)BETA)"},
    {"hswish", Func::hswish, "(x * fmin(fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f)", nullptr},
    {"softplus", Func::softplus, "(x > 30.0f ? x : log1p(exp(x)))", nullptr},
    {"identity", Func::identity, "(x)", "(x)"},
    {"reciprocal", Func::reciprocal, "(1.0f / x)", nullptr},
    {"erf", Func::erf_, "erf(x)", nullptr},
    {"sin", Func::sin_, "sin(x)", nullptr},
    {"cos", Func::cos_, "cos(x)", nullptr},
    {"tan", Func::tan_, "tan(x)", nullptr},
    {"asin", Func::asin_, "asin(x)", nullptr},
    {"acos", Func::acos_, "acos(x)", nullptr},
    {"atan", Func::atan_, "atan(x)", nullptr},
    {"sinh", Func::sinh_, "sinh(x)", nullptr},
    {"cosh", Func::cosh_, "cosh(x)", nullptr},
    {"asinh", Func::asinh_, "asinh(x)", nullptr},
    {"acosh", Func::acosh_, "acosh(x)", nullptr},
    {"atanh", Func::atanh_, "atanh(x)", nullptr},
    {"floor", Func::floor_, "floor(x)", nullptr},
    {"ceil", Func::ceil_, "ceil(x)", nullptr},
    // rint rounds halves to even in the default rounding mode.
    {"round", Func::round_, "rint(x)", nullptr},
    // NaN and zeros give themselves.
    {"sign", Func::sign, "(x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x))", "((x > 0) - (x < 0))"},
    {"selu", Func::selu, "(BETA * (x > 0.0f ? x : ALPHA * expm1(x)))", nullptr},
    {"celu", Func::celu, "(isnan(x) ? x : fmax(x, 0.0f) + fmin(0.0f, ALPHA * expm1(x / ALPHA)))", nullptr},
    {"hard_sigmoid", Func::hard_sigmoid,
     "((ALPHA * x + BETA) < 0.0f ? 0.0f : ((ALPHA * x + BETA) > 1.0f ? 1.0f : (ALPHA * x + BETA)))", nullptr},
    {"thresholded_relu", Func::thresholded_relu, "(x > ALPHA || isnan(x) ? x : 0.0f)", nullptr},
    {"softsign", Func::softsign, "(x / (1.0f + fabs(x)))", nullptr},
    {"shrink", Func::shrink, "(isnan(x) ? x : (x < -ALPHA ? x + BETA : (x > ALPHA ? x - BETA : 0.0f)))", nullptr},
    {"mish", Func::mish, "(x * tanh(x > 30.0f ? x : log1p(exp(x))))", nullptr},
};

const std::vector<DataType> kFloatTypes = {DataType::f32, DataType::f16};
const std::vector<DataType> kIntTypes = {DataType::i32, DataType::i64, DataType::u8, DataType::i8};

std::vector<std::string> func_names() {
    std::vector<std::string> names;
    for (const FuncInfo& f : kFuncs) names.emplace_back(f.name);
    return names;
}

const FuncInfo& func_info(const std::string& s, const std::string& node) {
    for (const FuncInfo& f : kFuncs)
        if (s == f.name) return f;
    throw dynrt::Error("unknown activation function '" + s + "'", dynrt::node_context(node, "activation", "func"));
}

Func parse_func(const std::string& s, const std::string& node) { return func_info(s, node).func; }

const FuncInfo& func_info(Func f) {
    for (const FuncInfo& i : kFuncs)
        if (i.func == f) return i;
    return kFuncs[0];
}

// The functions with a standard post-op (alpha and beta as PostOp says).
// relu, clamp and exp have none: oneDNN's x64 post-ops compute them with
// max/min instructions (relu as max(x, 0), clip as max then min, exp's range
// clamp), which return the other operand for a NaN, so relu(NaN) gave 0,
// clamp(NaN) its min and exp(NaN) +inf. Without a post-op the cpu engine
// applies them after the primitive with this op's host impl (one pass over
// the output), and NaN stays NaN as on every other path.
std::optional<dynrt::PostOp> post_op(const dynrt::Attributes& a, size_t, size_t) {
    using Fn = dynrt::PostOp::Fn;
    const auto alpha = static_cast<float>(a.get_float("alpha"));
    const auto op = [](Fn f, float al = 0.0f, float be = 0.0f) {
        return std::optional<dynrt::PostOp>(dynrt::PostOp{f, al, be});
    };
    switch (parse_func(a.get_string("func"), "")) {
        case Func::leaky_relu: return op(Fn::relu, alpha);
        case Func::gelu: return op(Fn::gelu_erf);
        case Func::gelu_tanh: return op(Fn::gelu_tanh);
        case Func::silu: return op(Fn::swish, 1.0f);
        case Func::sigmoid: return op(Fn::sigmoid);
        case Func::tanh_: return op(Fn::tanh);
        case Func::abs_: return op(Fn::abs);
        case Func::neg: return op(Fn::linear, -1.0f, 0.0f);
        case Func::sqrt_: return op(Fn::sqrt);
        case Func::log_: return op(Fn::log);
        case Func::elu: return op(Fn::elu, alpha);
        case Func::hswish: return op(Fn::hardswish);
        case Func::identity: return op(Fn::linear, 1.0f, 0.0f);
        default: return std::nullopt;
    }
}

bool takes_integers(Func f) { return func_info(f).ocl_int != nullptr; }

double softplus(double x) {
    // log1p(exp(x)) overflows for large x, where softplus(x) == x to double
    // precision anyway.
    return x > 30.0 ? x : std::log1p(std::exp(x));
}

// Functions with parameters. alpha: elu / selu / celu alpha, leaky_relu slope,
// clamp min, hard_sigmoid slope, thresholded_relu threshold, shrink lambd;
// beta: clamp max, selu scale (gamma), hard_sigmoid offset, shrink bias.
double apply_param(Func f, double x, double alpha, double beta) {
    switch (f) {
        case Func::elu: return x > 0.0 ? x : alpha * std::expm1(x);
        case Func::leaky_relu: return x >= 0.0 ? x : alpha * x;
        case Func::clamp: return x < alpha ? alpha : x > beta ? beta : x;
        case Func::selu: return beta * (x > 0.0 ? x : alpha * std::expm1(x));
        case Func::celu: return std::isnan(x) ? x : std::max(x, 0.0) + std::min(0.0, alpha * std::expm1(x / alpha));
        case Func::hard_sigmoid: {
            const double t = alpha * x + beta;
            return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
        }
        case Func::thresholded_relu: return x > alpha || std::isnan(x) ? x : 0.0;
        case Func::shrink: return std::isnan(x) ? x : x < -alpha ? x + beta : x > alpha ? x - beta : 0.0;
        default: return x;
    }
}

// Elementary functions of one argument.
double apply_math(Func f, double x) {
    switch (f) {
        case Func::exp_: return std::exp(x);
        case Func::sqrt_: return std::sqrt(x);
        case Func::log_: return std::log(x);
        case Func::erf_: return std::erf(x);
        case Func::sin_: return std::sin(x);
        case Func::cos_: return std::cos(x);
        case Func::tan_: return std::tan(x);
        case Func::asin_: return std::asin(x);
        case Func::acos_: return std::acos(x);
        case Func::atan_: return std::atan(x);
        case Func::sinh_: return std::sinh(x);
        case Func::cosh_: return std::cosh(x);
        case Func::asinh_: return std::asinh(x);
        case Func::acosh_: return std::acosh(x);
        case Func::atanh_: return std::atanh(x);
        case Func::floor_: return std::floor(x);
        case Func::ceil_: return std::ceil(x);
        case Func::round_: return std::nearbyint(x);   // the default rounding mode: halves to even
        default: return x;
    }
}

double apply(Func f, double x, double alpha, double beta) {
    switch (f) {
        case Func::relu: return x > 0.0 || std::isnan(x) ? x : 0.0;
        case Func::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        case Func::gelu_tanh: {
            const double k = 0.7978845608028654;   // sqrt(2 / pi)
            return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
        }
        case Func::silu: return x / (1.0 + std::exp(-x));
        case Func::sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case Func::tanh_: return std::tanh(x);
        case Func::abs_: return std::fabs(x);
        case Func::neg: return -x;
        case Func::hswish: {
            const double t = x + 3.0;
            return x * (t < 0.0 ? 0.0 : t > 6.0 ? 6.0 : t) / 6.0;
        }
        case Func::softplus: return softplus(x);
        case Func::identity: return x;
        case Func::reciprocal: return 1.0 / x;
        case Func::sign: return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x;
        case Func::softsign: return x / (1.0 + std::fabs(x));
        case Func::mish: return x * std::tanh(softplus(x));
        case Func::elu:
        case Func::leaky_relu:
        case Func::clamp:
        case Func::selu:
        case Func::celu:
        case Func::hard_sigmoid:
        case Func::thresholded_relu:
        case Func::shrink: return apply_param(f, x, alpha, beta);
        default: return apply_math(f, x);
    }
}

// ---- integers -------------------------------------------------------------

struct IntRange {
    int64_t lo, hi;
};

IntRange int_range(DataType t) {
    switch (t) {
        case DataType::i8: return {-128, 127};
        case DataType::u8: return {0, 255};
        case DataType::i32: return {INT32_MIN, INT32_MAX};
        default: return {INT64_MIN, INT64_MAX};
    }
}

// A clamp bound for integers of type t: rounded inwards (up for the lower
// bound, down for the upper) and held within the type's range, so +-inf (an
// absent ONNX Clip bound) is the type's limit.
int64_t int_bound(double v, DataType t, bool lower) {
    const IntRange r = int_range(t);
    const double b = lower ? std::ceil(v) : std::floor(v);
    if (!(b > static_cast<double>(r.lo))) return r.lo;
    if (b >= static_cast<double>(r.hi)) return r.hi;
    return static_cast<int64_t>(b);
}

// Integer results wrap in the output type (neg and abs of the minimum).
int64_t apply_int(Func f, int64_t x, int64_t lo, int64_t hi) {
    const auto negated = static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    switch (f) {
        case Func::relu: return std::max<int64_t>(x, 0);
        case Func::abs_: return x < 0 ? negated : x;
        case Func::neg: return negated;
        case Func::sign: return (x > 0) - (x < 0);
        case Func::clamp: return std::min(std::max(x, lo), hi);
        default: return x;   // identity
    }
}

template <typename T>
void int_kernel(dynrt::HostCall& call, Func f) {
    const DataType t = call.in_type(0);
    const int64_t lo = int_bound(call.attrs().get_float("alpha"), t, true);
    const int64_t hi = int_bound(call.attrs().get_float("beta"), t, false);
    const T* x = call.in<T>(0);
    T* y = call.out<T>(0);
    for (size_t i = 0; i < call.in_shape(0).count(); ++i) y[i] = static_cast<T>(apply_int(f, x[i], lo, hi));
}

void int_kernel(dynrt::HostCall& call, Func f) {
    switch (call.in_type(0)) {
        case DataType::i32: return int_kernel<int32_t>(call, f);
        case DataType::i64: return int_kernel<int64_t>(call, f);
        case DataType::u8: return int_kernel<uint8_t>(call, f);
        default: return int_kernel<int8_t>(call, f);
    }
}

dynrt::Error infer_error(const dynrt::ShapeInferContext& ctx, const std::string& field, const std::string& msg) {
    return dynrt::Error(msg, dynrt::node_context(ctx.node, "activation", field));
}

bool contains(const std::vector<DataType>& types, DataType t) {
    return std::find(types.begin(), types.end(), t) != types.end();
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& in = ctx.inputs.at(0);
    const std::string& name = ctx.attrs.get_string("func");
    const Func f = parse_func(name, ctx.node);
    const double alpha = ctx.attrs.get_float("alpha"), beta = ctx.attrs.get_float("beta");
    if (contains(kIntTypes, in.dtype) && !takes_integers(f))
        throw infer_error(ctx, "func",
                          "activation '" + name + "' takes floating-point input, got " + in.to_string() +
                              " (integer inputs take relu, abs, neg, sign, clamp, identity)");
    if (!contains(kFloatTypes, in.dtype) && !contains(kIntTypes, in.dtype))
        throw infer_error(ctx, "inputs", "activation takes floating-point or integer input, got " + in.to_string());
    if (f == Func::clamp && alpha > beta)
        throw infer_error(ctx, "beta",
                          "clamp needs alpha (min) <= beta (max), got alpha " + std::to_string(alpha) + " and beta " +
                              std::to_string(beta));
    if (f == Func::celu && alpha == 0.0) throw infer_error(ctx, "alpha", "celu needs alpha != 0, got 0");
    return {dynrt::Layout(in.shape, in.dtype)};
}

void kernel(dynrt::HostCall& call) {
    const Func f = parse_func(call.attrs().get_string("func"), call.node());
    if (!dynrt::is_floating(call.in_type(0))) return int_kernel(call, f);
    const double alpha = call.attrs().get_float("alpha");
    const double beta = call.attrs().get_float("beta");
    const size_t n = call.in_shape(0).count();
    if (call.in_type(0) == DataType::f32 && call.out_type(0) == DataType::f32) {
        const float* x = call.in<float>(0);
        float* y = call.out<float>(0);
        for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(apply(f, x[i], alpha, beta));
        return;
    }
    for (size_t i = 0; i < n; ++i) call.set(0, i, apply(f, call.get(0, i), alpha, beta));
}

// ---- OpenCL ---------------------------------------------------------------

// An exact OpenCL C float literal (hex float, so no digits are lost).
std::string float_literal(double v) {
    const float f = static_cast<float>(v);
    if (std::isnan(f)) return "NAN";
    if (std::isinf(f)) return f > 0 ? "INFINITY" : "(-INFINITY)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "(%af)", static_cast<double>(f));
    return buf;
}

// An OpenCL C literal of an integer bound (ALPHA, BETA) of type t.
std::string int_literal(double v, DataType t, bool lower) {
    const int64_t b = int_bound(v, t, lower);
    if (t != DataType::i64) return "(" + std::to_string(b) + ")";
    // -2^63 has no literal: its negation overflows long.
    if (b == INT64_MIN) return "(-9223372036854775807L - 1L)";
    return "(" + std::to_string(b) + "L)";
}

// FUNC_EXPR, ACC_TYPE (the type act() computes in), ALPHA and BETA for an
// input of type t; for integers also UACC_TYPE, the unsigned type of their
// width.
dynrt::JitDefines func_defines(const dynrt::KernelParams& p) {
    const FuncInfo& info = func_info(p.attrs->get_string("func"), p.node);
    const DataType t = p.inputs.at(0).dtype;
    const double alpha = p.attrs->get_float("alpha"), beta = p.attrs->get_float("beta");
    if (dynrt::is_floating(t))
        return {{"FUNC_EXPR", info.ocl},
                {"ACC_TYPE", "float"},
                {"ALPHA", float_literal(alpha)},
                {"BETA", float_literal(beta)}};
    return {{"FUNC_EXPR", info.ocl_int},
            {"ACC_TYPE", dynrt::ocl_type_name(t)},
            {"UACC_TYPE", dynrt::ocl_bits_type(t)},
            {"ALPHA", int_literal(alpha, t, true)},
            {"BETA", int_literal(beta, t, false)}};
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = activation_cl;
    spec.kernel_name = "activation_ref";
    spec.padded_outputs = true;   // stores through OUTPUT0_PHYS
    // The function and its parameters are node attributes: both builds bake
    // them in, so one kernel has no branch on the function.
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        dynrt::JitDefines d = func_defines(p);
        d.push_back(dynrt::jit_data_f16(p.inputs.at(0).dtype));
        return d;
    };
    // Grid-stride over float4 vectors; at least one work-item per tail element.
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& limits) {
        return dynrt::dispatch_vec4(p.outputs.at(0).count(), limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).

// An ONNX activation with up to two float attributes, mapped to `alpha` and
// `beta` ("" where the op has no such attribute).
struct OnnxParams {
    const char* alpha;
    double alpha_def;
    const char* beta;
    double beta_def;
};

dynrt::ImportFn onnx_params(const std::string& func, OnnxParams p) {
    return [func, p](dynrt::ImportContext& c) {
        if (!c.only_attrs({p.alpha, p.beta})) return false;
        c.set("func", func);
        if (*p.alpha) c.set("alpha", c.f(p.alpha, p.alpha_def));
        if (*p.beta) c.set("beta", c.f(p.beta, p.beta_def));
        c.use_inputs({0});
        return true;
    };
}

// Clip: bounds as attributes before opset 11, as (constant) inputs since.
bool onnx_clip(dynrt::ImportContext& c) {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (c.opset() < 11) {
        if (!c.only_attrs({"min", "max"})) return false;
        lo = c.f("min", lo);
        hi = c.f("max", hi);
    } else {
        if (!c.only_attrs({})) return false;
        for (size_t k : {1, 2}) {
            if (!c.present(k)) continue;
            if (!c.value(k) || c.value(k)->count() != 1)
                return c.unsupported("Clip's min/max input has no known single value");
            (k == 1 ? lo : hi) = c.value(k)->get_as_double(0);
        }
    }
    if (lo > hi) return c.unsupported("Clip with min > max");
    c.set("func", std::string("clamp"));
    c.set("alpha", lo);
    c.set("beta", hi);
    c.use_inputs({0});
    return true;
}

bool onnx_gelu(dynrt::ImportContext& c) {
    if (!c.only_attrs({"approximate"})) return false;
    const std::string a = c.s("approximate", "none");
    if (a != "none" && a != "tanh") return c.unsupported("Gelu approximate='" + a + "'");
    c.set("func", std::string(a == "tanh" ? "gelu_tanh" : "gelu"));
    c.use_inputs({0});
    return true;
}

// Swish (opset 24): x * sigmoid(alpha * x); the default alpha 1 is silu.
bool onnx_swish(dynrt::ImportContext& c) {
    if (!c.only_attrs({"alpha"})) return false;
    const double alpha = c.f("alpha", 1.0);
    if (alpha != 1.0) return c.unsupported("Swish alpha=" + std::to_string(alpha) + " (only 1.0, silu, is supported)");
    c.set("func", std::string("silu"));
    c.use_inputs({0});
    return true;
}

// A rule that also refuses the input types activation lacks (f64, boolean)
// or that its function does not take (integers for most), naming the type.
dynrt::ImportFn typed(dynrt::ImportFn map) {
    return [map](dynrt::ImportContext& c) {
        if (!map(c)) return false;
        const DataType t = c.layout(0).dtype;
        const Func f = parse_func(c.out.attrs.get_string("func"), c.node().name);
        if (contains(kFloatTypes, t) || (contains(kIntTypes, t) && takes_integers(f))) return true;
        return c.unsupported(std::string("input type ") + dynrt::to_string(t) + " is not supported");
    };
}

// ---- cpu: vectorised f32 loops over the engine's threads -------------------
//
// The functions common in models, in float with dynrt/cpu_vec_math.hpp
// (built for AVX-512, AVX2 and the baseline); the rest, and f16 and integers,
// run on the reference impl.

bool has_fast_loop(Func f) {
    switch (f) {
        case Func::relu:
        case Func::gelu:
        case Func::gelu_tanh:
        case Func::silu:
        case Func::sigmoid:
        case Func::tanh_:
        case Func::exp_:
        case Func::abs_:
        case Func::neg:
        case Func::elu:
        case Func::leaky_relu:
        case Func::clamp:
        case Func::hswish:
        case Func::softplus:
        case Func::identity:
        case Func::reciprocal:
        case Func::erf_:
        case Func::hard_sigmoid:
        case Func::softsign: return true;
        default: return false;
    }
}

// One loop per function, so that each vectorises on its own.
DYNRT_CPU_CLONES void fast_loop(Func f, const float* x, float* y, size_t n, float alpha, float beta) {
    namespace v = dynrt::vec;
    switch (f) {
        case Func::relu:
            // Not max(x, 0): NaN stays NaN (x != x), as on the reference.
            for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f || x[i] != x[i] ? x[i] : 0.0f;
            break;
        case Func::gelu:
            for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + v::erf(x[i] * 0.70710678118654752f));
            break;
        case Func::gelu_tanh:
            for (size_t i = 0; i < n; ++i)
                y[i] = 0.5f * x[i] * (1.0f + v::tanh(0.7978845608028654f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
            break;
        case Func::silu:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] * v::sigmoid(x[i]);
            break;
        case Func::sigmoid:
            for (size_t i = 0; i < n; ++i) y[i] = v::sigmoid(x[i]);
            break;
        case Func::tanh_:
            for (size_t i = 0; i < n; ++i) y[i] = v::tanh(x[i]);
            break;
        case Func::exp_:
            for (size_t i = 0; i < n; ++i) y[i] = v::exp(x[i]);
            break;
        case Func::abs_:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? -x[i] : x[i];
            break;
        case Func::neg:
            for (size_t i = 0; i < n; ++i) y[i] = -x[i];
            break;
        case Func::elu:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * (v::exp(x[i]) - 1.0f);
            break;
        case Func::leaky_relu:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
            break;
        case Func::clamp:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] < alpha ? alpha : (x[i] > beta ? beta : x[i]);
            break;
        case Func::hswish:
            for (size_t i = 0; i < n; ++i) {
                const float t = x[i] + 3.0f;
                y[i] = x[i] * (t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t)) / 6.0f;
            }
            break;
        case Func::softplus:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] > 30.0f ? x[i] : v::log(1.0f + v::exp(x[i]));
            break;
        case Func::reciprocal:
            for (size_t i = 0; i < n; ++i) y[i] = 1.0f / x[i];
            break;
        case Func::erf_:
            for (size_t i = 0; i < n; ++i) y[i] = v::erf(x[i]);
            break;
        case Func::hard_sigmoid:
            for (size_t i = 0; i < n; ++i) {
                const float t = alpha * x[i] + beta;
                y[i] = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
            }
            break;
        case Func::softsign:
            for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + (x[i] < 0.0f ? -x[i] : x[i]));
            break;
        default:
            for (size_t i = 0; i < n; ++i) y[i] = x[i];
            break;
    }
}

// A padded output (a slice of an in-place concat, dynrt/cpu_padded.hpp) is
// written run by run: the trailing dims it stores contiguously.
void fast_kernel(dynrt::HostCall& call, const dynrt::StridedOutput& out) {
    const Func f = parse_func(call.attrs().get_string("func"), call.node());
    const float alpha = static_cast<float>(call.attrs().get_float("alpha"));
    const float beta = static_cast<float>(call.attrs().get_float("beta"));
    const float* x = call.in<float>(0);
    auto* y = static_cast<float*>(out.data);
    const dynrt::CpuThreads threads(call.params().engine);
    const dynrt::Shape& shape = call.out_shape(0);
    if (out.dense) {
        dynrt::parallel_for(threads, shape.count(), 16384,
                            [&](size_t b, size_t e) { fast_loop(f, x + b, y + b, e - b, alpha, beta); });
        return;
    }
    const size_t from = dynrt::contiguous_from(shape, out.strides);
    const size_t run = dynrt::dims_product(shape, from, shape.rank());
    if (run == 0) return;
    dynrt::parallel_for(threads, shape.count() / run, std::max<size_t>(1, 16384 / run), [&](size_t b, size_t e) {
        for (size_t r = b; r < e; ++r) {
            const size_t at = dynrt::strided_offset(shape.dims().data(), out.strides.data(), from, r);
            fast_loop(f, x + r * run, y + at, run, alpha, beta);
        }
    });
}

std::string fast_supported(const dynrt::KernelParams& p) {
    const std::string& name = p.attrs->get_string("func");
    if (!has_fast_loop(parse_func(name, p.node))) return "no vectorised loop for func " + name;
    return {};
}

void add_rule(std::vector<dynrt::ImportRule>& rules, const std::string& onnx, size_t max_inputs, dynrt::ImportFn map,
              const std::string& doc) {
    rules.push_back(dynrt::onnx_rule(onnx, 1, max_inputs, typed(std::move(map)), doc));
}

std::vector<dynrt::ImportRule> onnx_rules() {
    std::vector<dynrt::ImportRule> rules;
    const std::vector<std::pair<std::string, std::string>> plain = {{"Abs", "abs"},
                                                                    {"Acos", "acos"},
                                                                    {"Acosh", "acosh"},
                                                                    {"Asin", "asin"},
                                                                    {"Asinh", "asinh"},
                                                                    {"Atan", "atan"},
                                                                    {"Atanh", "atanh"},
                                                                    {"Ceil", "ceil"},
                                                                    {"Cos", "cos"},
                                                                    {"Cosh", "cosh"},
                                                                    {"Erf", "erf"},
                                                                    {"Exp", "exp"},
                                                                    {"Floor", "floor"},
                                                                    {"HardSwish", "hswish"},
                                                                    {"Identity", "identity"},
                                                                    {"Log", "log"},
                                                                    {"Mish", "mish"},
                                                                    {"Neg", "neg"},
                                                                    {"Reciprocal", "reciprocal"},
                                                                    {"Relu", "relu"},
                                                                    {"Round", "round"},
                                                                    {"Sigmoid", "sigmoid"},
                                                                    {"Sign", "sign"},
                                                                    {"Sin", "sin"},
                                                                    {"Sinh", "sinh"},
                                                                    {"Softplus", "softplus"},
                                                                    {"Softsign", "softsign"},
                                                                    {"Sqrt", "sqrt"},
                                                                    {"Tan", "tan"},
                                                                    {"Tanh", "tanh"}};
    for (const auto& [onnx, func] : plain)
        add_rule(rules, onnx, 1, dynrt::import_plain({{"func", func}}), "`func` " + func);
    add_rule(rules, "Elu", 1, onnx_params("elu", {"alpha", 1.0, "", 0}), "`func` elu, `alpha` (default 1.0)");
    add_rule(rules, "LeakyRelu", 1, onnx_params("leaky_relu", {"alpha", 0.01, "", 0}),
             "`func` leaky_relu, `alpha` (default 0.01)");
    add_rule(rules, "Selu", 1,
             onnx_params("selu", {"alpha", 1.67326319217681884765625, "gamma", 1.05070102214813232421875}),
             "`func` selu, `alpha` (default 1.6733), gamma -> `beta` (default 1.0507)");
    add_rule(rules, "Celu", 1, onnx_params("celu", {"alpha", 1.0, "", 0}), "`func` celu, `alpha` (default 1.0)");
    add_rule(rules, "HardSigmoid", 1, onnx_params("hard_sigmoid", {"alpha", 0.2, "beta", 0.5}),
             "`func` hard_sigmoid, `alpha` (default 0.2), `beta` (default 0.5)");
    add_rule(rules, "ThresholdedRelu", 1, onnx_params("thresholded_relu", {"alpha", 1.0, "", 0}),
             "`func` thresholded_relu, `alpha` (default 1.0)");
    add_rule(rules, "Shrink", 1, onnx_params("shrink", {"lambd", 0.5, "bias", 0.0}),
             "`func` shrink, lambd -> `alpha` (default 0.5), bias -> `beta` (default 0.0)");
    add_rule(rules, "Clip", 3, onnx_clip,
             "`func` clamp; the min/max inputs' values (opset >= 11) or attributes -> `alpha`/`beta`; missing "
             "bounds are +-inf (the type's limits for integers)");
    add_rule(rules, "Gelu", 1, onnx_gelu, "`func` gelu, or gelu_tanh for approximate='tanh'");
    add_rule(rules, "Swish", 1, onnx_swish, "`func` silu (alpha 1.0 only)");
    return rules;
}

void register_activation(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "activation", "Elementwise unary activation function selected by `func`", 1, 1,
        {dynrt::attr_string("func", std::nullopt, func_names(), "function to apply"),
         dynrt::attr_float("alpha", 0.0,
                           "elu/selu/celu alpha, leaky_relu slope, clamp min, hard_sigmoid slope, "
                           "thresholded_relu threshold, shrink lambd"),
         dynrt::attr_float("beta", 0.0, "clamp max, selu scale (gamma), hard_sigmoid offset, shrink bias")},
        infer);
    // Fused into its producer (docs/architecture.md, "Fusion"); on OpenCL the
    // kernel's own expression with the attributes inlined.
    def.traits.fusable = true;
    def.ocl_post_op = [](const dynrt::Attributes& a, const std::vector<std::string>& args) {
        std::string e = func_info(a.get_string("func"), "").ocl;
        e = dynrt::replace_identifier(e, "x", "(" + args.at(0) + ")");
        e = dynrt::replace_identifier(e, "ALPHA", float_literal(a.get_float("alpha")));
        return dynrt::replace_identifier(e, "BETA", float_literal(a.get_float("beta")));
    };
    def.post_op = post_op;
    def.imports = onnx_rules();
    reg.add_op(def);

    std::vector<DataType> dtypes = kFloatTypes;
    dtypes.insert(dtypes.end(), kIntTypes.begin(), kIntTypes.end());
    dynrt::add_host_impls(reg, "activation", kernel, dynrt::host_options(dtypes));
    dynrt::add_strided_output_impls(reg, "activation", fast_kernel,
                                    dynrt::optimised_host_options({DataType::f32}, fast_supported));
    dynrt::add_ocl_impls(reg, "activation", ocl_spec(), dynrt::ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("activation", register_activation)
