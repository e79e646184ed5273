// activation: an elementwise unary function chosen by the `func` attribute.
//
// One op for every pointwise activation keeps the registry short and lets a
// YAML file switch functions by changing one string. The math runs in double
// and is rounded once on store, so f16 and f32 results are the correctly
// rounded values of the exact function (up to libm accuracy).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "activation_cl.hpp"
#include "dynrt/attributes.hpp"
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
    identity
};

struct FuncName {
    const char* name;
    Func func;
};

const FuncName kFuncs[] = {
    {"relu", Func::relu},
    {"gelu", Func::gelu},
    {"gelu_tanh", Func::gelu_tanh},
    {"silu", Func::silu},
    {"sigmoid", Func::sigmoid},
    {"tanh", Func::tanh_},
    {"exp", Func::exp_},
    {"abs", Func::abs_},
    {"neg", Func::neg},
    {"sqrt", Func::sqrt_},
    {"log", Func::log_},
    {"elu", Func::elu},
    {"leaky_relu", Func::leaky_relu},
    {"clamp", Func::clamp},
    {"hswish", Func::hswish},
    {"softplus", Func::softplus},
    {"identity", Func::identity},
};

std::vector<std::string> func_names() {
    std::vector<std::string> names;
    for (const FuncName& f : kFuncs) names.emplace_back(f.name);
    return names;
}

Func parse_func(const std::string& s, const std::string& node) {
    for (const FuncName& f : kFuncs)
        if (s == f.name) return f.func;
    dynrt::ErrorContext ctx;
    ctx.node = node;
    ctx.op = "activation";
    ctx.field = "func";
    throw dynrt::Error("unknown activation function '" + s + "'", ctx);
}

// alpha: elu alpha, leaky_relu slope, clamp min; beta: clamp max.
double apply(Func f, double x, double alpha, double beta) {
    switch (f) {
        case Func::relu: return x > 0.0 ? x : 0.0;
        case Func::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        case Func::gelu_tanh: {
            const double k = 0.7978845608028654;   // sqrt(2 / pi)
            return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
        }
        case Func::silu: return x / (1.0 + std::exp(-x));
        case Func::sigmoid: return 1.0 / (1.0 + std::exp(-x));
        case Func::tanh_: return std::tanh(x);
        case Func::exp_: return std::exp(x);
        case Func::abs_: return std::fabs(x);
        case Func::neg: return -x;
        case Func::sqrt_: return std::sqrt(x);
        case Func::log_: return std::log(x);
        case Func::elu: return x > 0.0 ? x : alpha * (std::exp(x) - 1.0);
        case Func::leaky_relu: return x >= 0.0 ? x : alpha * x;
        case Func::clamp: return std::min(std::max(x, alpha), beta);
        case Func::hswish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
        // log1p(exp(x)) overflows for large x, where softplus(x) == x to double
        // precision anyway.
        case Func::softplus: return x > 30.0 ? x : std::log1p(std::exp(x));
        case Func::identity: return x;
    }
    return x;
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& in = ctx.inputs.at(0);
    if (!dynrt::is_floating(in.dtype))
        throw dynrt::Error("activation takes floating-point input, got " + in.to_string());
    const std::string& func = ctx.attrs.get_string("func");
    if (parse_func(func, ctx.node) == Func::clamp && ctx.attrs.get_float("alpha") > ctx.attrs.get_float("beta")) {
        dynrt::ErrorContext ec;
        ec.field = "beta";
        throw dynrt::Error("clamp needs alpha (min) <= beta (max), got alpha " +
                               std::to_string(ctx.attrs.get_float("alpha")) + " and beta " +
                               std::to_string(ctx.attrs.get_float("beta")),
                           ec);
    }
    return {dynrt::Layout(in.shape, in.dtype)};
}

void kernel(dynrt::HostCall& call) {
    const Func f = parse_func(call.attrs().get_string("func"), call.node());
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

// The function as an OpenCL C expression of a float `x` (ALPHA and BETA are
// JIT constants). Mirrors apply() above, in float.
const char* ocl_func(Func f) {
    switch (f) {
        case Func::relu: return "(x > 0.0f ? x : 0.0f)";
        case Func::gelu: return "(0.5f * x * (1.0f + erf(x * 0.70710678118654752f)))";
        case Func::gelu_tanh: return "(0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x))))";
        case Func::silu: return "(x / (1.0f + exp(-x)))";
        case Func::sigmoid: return "(1.0f / (1.0f + exp(-x)))";
        case Func::tanh_: return "tanh(x)";
        case Func::exp_: return "exp(x)";
        case Func::abs_: return "fabs(x)";
        case Func::neg: return "(-x)";
        case Func::sqrt_: return "sqrt(x)";
        case Func::log_: return "log(x)";
        // expm1 keeps the small-|x| values accurate (exp(x) - 1 cancels).
        case Func::elu: return "(x > 0.0f ? x : ALPHA * expm1(x))";
        case Func::leaky_relu: return "(x >= 0.0f ? x : ALPHA * x)";
        case Func::clamp: return "fmin(fmax(x, ALPHA), BETA)";
        case Func::hswish: return "(x * fmin(fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f)";
        case Func::softplus: return "(x > 30.0f ? x : log1p(exp(x)))";
        case Func::identity: return "(x)";
    }
    return "(x)";
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = activation_cl;
    spec.kernel_name = "activation_ref";
    spec.padded_outputs = true;   // stores through OUTPUT0_PHYS
    // The function and its parameters are node attributes: both builds bake
    // them in, so one kernel has no branch on the function.
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        dynrt::JitDefines d{{"FUNC_EXPR", ocl_func(parse_func(p.attrs->get_string("func"), p.node))},
                            {"ALPHA", float_literal(p.attrs->get_float("alpha"))},
                            {"BETA", float_literal(p.attrs->get_float("beta"))}};
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
dynrt::ImportFn onnx_with_alpha(const std::string& func, double def) {
    return [func, def](dynrt::ImportContext& c) {
        if (!c.only_attrs({"alpha"})) return false;
        c.set("func", func);
        c.set("alpha", c.f("alpha", def));
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

std::vector<dynrt::ImportRule> onnx_rules() {
    std::vector<dynrt::ImportRule> rules;
    const std::vector<std::pair<std::string, std::string>> plain = {
        {"Abs", "abs"},   {"Exp", "exp"},           {"HardSwish", "hswish"}, {"Identity", "identity"},
        {"Log", "log"},   {"Neg", "neg"},           {"Relu", "relu"},        {"Sigmoid", "sigmoid"},
        {"Sqrt", "sqrt"}, {"Softplus", "softplus"}, {"Tanh", "tanh"}};
    for (const auto& [onnx, func] : plain)
        rules.push_back(dynrt::onnx_rule(onnx, 1, 1, dynrt::import_plain({{"func", func}}), "`func` " + func));
    rules.push_back(dynrt::onnx_rule("Elu", 1, 1, onnx_with_alpha("elu", 1.0), "`func` elu, `alpha` (default 1.0)"));
    rules.push_back(dynrt::onnx_rule("LeakyRelu", 1, 1, onnx_with_alpha("leaky_relu", 0.01),
                                     "`func` leaky_relu, `alpha` (default 0.01)"));
    rules.push_back(dynrt::onnx_rule("Clip", 1, 3, onnx_clip,
                                     "`func` clamp; the min/max inputs' values (opset >= 11) or attributes -> "
                                     "`alpha`/`beta`; missing bounds are +-inf"));
    rules.push_back(dynrt::onnx_rule("Gelu", 1, 1, onnx_gelu, "`func` gelu, or gelu_tanh for approximate='tanh'"));
    return rules;
}

void register_activation(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def =
        dynrt::op_def("activation", "Elementwise unary activation function selected by `func`", 1, 1,
                      {dynrt::attr_string("func", std::nullopt, func_names(), "function to apply"),
                       dynrt::attr_float("alpha", 0.0, "elu alpha, leaky_relu slope, clamp min"),
                       dynrt::attr_float("beta", 0.0, "clamp max")},
                      infer);
    // Fused into its producer (docs/architecture.md, "Fusion"); on OpenCL the
    // kernel's own expression with the attributes inlined.
    def.traits.fusable = true;
    def.ocl_post_op = [](const dynrt::Attributes& a, const std::vector<std::string>& args) {
        std::string e = ocl_func(parse_func(a.get_string("func"), ""));
        e = dynrt::replace_identifier(e, "x", "(" + args.at(0) + ")");
        e = dynrt::replace_identifier(e, "ALPHA", float_literal(a.get_float("alpha")));
        return dynrt::replace_identifier(e, "BETA", float_literal(a.get_float("beta")));
    };
    def.imports = onnx_rules();
    reg.add_op(def);

    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    dynrt::add_host_impls(reg, "activation", kernel, dynrt::host_options(dtypes));
    dynrt::add_ocl_impls(reg, "activation", ocl_spec(), dynrt::ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("activation", register_activation)
