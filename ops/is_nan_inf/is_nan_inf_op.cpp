// is_nan_inf: an elementwise test of a floating-point tensor for NaN or for
// infinities (ONNX IsNaN, IsInf), a boolean result of the input's shape.
//
// `mode` picks the test; for `inf`, detect_positive and detect_negative pick
// which signs count. f16 is decoded exactly, so its NaN and infinities are
// seen as they are.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "is_nan_inf_cl.hpp"

namespace {

using namespace dynrt;

const std::vector<std::string> kModes = {"nan", "inf"};
// The impls' dtypes name input 0 and output 0 together: the floating inputs
// and the boolean output (shape inference refuses a boolean input).
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::boolean};

// What one node tests for.
struct Test {
    bool nan;        // mode nan; else inf:
    bool positive;   // +inf counts
    bool negative;   // -inf counts
};

Test test_of(const Attributes& a) {
    return {mode_index("is_nan_inf", kModes, a.get_string("mode")) == 0, a.get_bool("detect_positive"),
            a.get_bool("detect_negative")};
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    test_of(ctx.attrs);   // an unknown mode is an error here
    const Layout& x = ctx.inputs.at(0);
    if (x.dtype != DataType::f32 && x.dtype != DataType::f16)
        throw Error("is_nan_inf takes an f32 or f16 input, got " + x.to_string(),
                    node_context(ctx.node, "is_nan_inf", "inputs"));
    return {Layout(x.shape, DataType::boolean)};
}

// ---- reference ------------------------------------------------------------

bool holds(const Test& t, double v) {
    if (t.nan) return std::isnan(v);
    return std::isinf(v) && (v > 0 ? t.positive : t.negative);
}

void reference(HostCall& call) {
    const Test t = test_of(call.attrs());
    auto* y = call.out<uint8_t>(0);
    for (size_t i = 0; i < call.in_shape(0).count(); ++i) y[i] = holds(t, call.get(0, i)) ? 1 : 0;
}

// ---- cpu: an f32 loop over the engine's threads ------------------------------
//
// The reference reads every value through double; attention masks test
// every score (12 x 256 x 256 per layer of a GPT-2 prefill), so f32 inputs
// get a plain loop, split over the threads.

void fast_kernel(HostCall& call) {
    const Test t = test_of(call.attrs());
    const float* x = call.in<float>(0);
    auto* y = call.out<uint8_t>(0);
    const size_t n = call.in_shape(0).count();
    const CpuThreads threads(call.params().engine, n * (sizeof(float) + 1));
    const float inf = std::numeric_limits<float>::infinity();
    parallel_for(threads, n, 16384, [&](size_t begin, size_t end) {
        if (t.nan) {
            for (size_t i = begin; i < end; ++i) y[i] = std::isnan(x[i]) ? 1 : 0;
        } else {
            for (size_t i = begin; i < end; ++i)
                y[i] = ((x[i] == inf && t.positive) || (x[i] == -inf && t.negative)) ? 1 : 0;
        }
    });
}

std::string fast_supported(const KernelParams& p) {
    return p.inputs.at(0).dtype == DataType::f32 ? std::string() : "the loop takes f32 inputs";
}

// ---- OpenCL ---------------------------------------------------------------

// TEST(x) for one node: an int expression of a loaded value.
std::string ocl_test(const Test& t) {
    if (t.nan) return "isnan(x)";
    if (t.positive && t.negative) return "isinf(x)";
    if (t.positive) return "(isinf(x) && (x) > 0)";
    if (t.negative) return "(isinf(x) && (x) < 0)";
    return "0";
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = is_nan_inf_cl;
    spec.kernel_name = "is_nan_inf_ref";
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    // IN_F16: f16 inputs load as float; the output is boolean.
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"IN_F16", p.inputs.at(0).dtype == DataType::f16 ? "1" : "0"},
                          {"TEST(x)", ocl_test(test_of(*p.attrs))}};
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// ONNX IsNaN and IsInf take float16, float, double (and bfloat16); dynrt takes
// f32 and f16.
bool typed(ImportContext& c) {
    const DataType t = c.layout(0).dtype;
    if (t == DataType::f32 || t == DataType::f16) return true;
    return c.unsupported(std::string("input type ") + to_string(t) + " is not supported");
}

bool onnx_isnan(ImportContext& c) {
    if (!c.only_attrs({})) return false;
    c.set("mode", std::string("nan"));
    c.use_inputs({0});
    return typed(c);
}

bool onnx_isinf(ImportContext& c) {
    if (!c.only_attrs({"detect_positive", "detect_negative"})) return false;
    c.set("mode", std::string("inf"));
    c.set("detect_positive", c.i("detect_positive", 1) != 0);
    c.set("detect_negative", c.i("detect_negative", 1) != 0);
    c.use_inputs({0});
    return typed(c);
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("IsNaN", 1, 1, onnx_isnan, "`mode` nan"),
            onnx_rule("IsInf", 1, 1, onnx_isinf, "`mode` inf, `detect_positive`, `detect_negative` (default 1)")};
}

void register_is_nan_inf(ModuleRegistrar& reg) {
    OpDefinition def = op_def("is_nan_inf", "Elementwise test for NaN or infinities, boolean result", 1, 1,
                              {attr_string("mode", std::nullopt, kModes, "nan: x is NaN; inf: x is an infinity"),
                               attr_bool("detect_positive", true, "inf: +inf counts"),
                               attr_bool("detect_negative", true, "inf: -inf counts")},
                              infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "is_nan_inf", reference, host_options(kTypes));   // cpu_ref_dynamic, cpu_ref_static
    add_host_impls(reg, "is_nan_inf", fast_kernel,
                   optimised_host_options({DataType::f32, DataType::boolean}, fast_supported));   // cpu_opt_*
    add_ocl_impls(reg, "is_nan_inf", ocl_spec(), ocl_options(kTypes));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("is_nan_inf", register_is_nan_inf)
