// window: the cosine windows of ONNX's signal ops (HannWindow, HammingWindow,
// BlackmanWindow, opset 17). The input is the window size, an integer scalar;
// the output holds `size` elements, element n of
//   hann      0.5 - 0.5 cos(2 pi n / N)                (= sin^2(pi n / N))
//   hamming   25/46 - 21/46 cos(2 pi n / N)
//   blackman  0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// with N = size when periodic (the default: windows for spectral analysis,
// the first point of the next period left out) and N = size - 1 otherwise
// (symmetric). A symmetric window of one element is [1] (N would be 0: the
// value of torch's windows, which the ONNX spec follows).
//
// The size is a value input: shape inference reads it when it is known and
// gives a dynamic length until then; a negative size is an error there.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "window_cl.hpp"

namespace {

using namespace dynrt;

constexpr double kPi = 3.14159265358979323846;
const std::vector<std::string> kKinds = {"hann", "hamming", "blackman"};
const std::vector<std::string> kTypes = {"f32", "f16", "f64"};

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "window", field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& size = ctx.inputs.at(0);
    if (is_floating(size.dtype) || size.dtype == DataType::boolean || size.shape.rank() > 1 ||
        (size.shape.rank() == 1 && size.shape[0].is_static() && size.shape[0].get_length() != 1))
        throw node_error(ctx.node, "size", "size must be an integer scalar, got " + size.to_string());
    const DataType out = parse_data_type(ctx.attrs.get_string("dtype"));
    const HostTensor* v = ctx.value(0);
    if (v == nullptr) return {Layout(PartialShape{Dimension::dynamic()}, out)};   // known once the value is
    const std::vector<int64_t> sizes = v->to_int64();
    if (sizes.size() != 1)
        throw node_error(ctx.node, "size", "size must hold one value, got " + std::to_string(sizes.size()));
    const int64_t n = sizes[0];
    if (n < 0) throw node_error(ctx.node, "size", "the window size is " + std::to_string(n) + ", it must be >= 0");
    if (static_cast<uint64_t>(n) > kMaxElements)
        throw node_error(ctx.node, "size", "the window size " + std::to_string(n) + " is above 2^60 elements");
    return {Layout(PartialShape{Dimension(n)}, out)};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const size_t size = call.out_shape(0).count();
    const size_t kind = mode_index("window", kKinds, call.attrs().get_string("kind"));
    const bool periodic = call.attrs().get_bool("periodic");
    if (size == 1 && !periodic) {
        call.set(0, 0, 1.0);
        return;
    }
    const double n_1 = static_cast<double>(periodic ? size : size - 1);
    for (size_t n = 0; n < size; ++n) {
        const double a = 2.0 * kPi * static_cast<double>(n) / n_1;
        double w = 0;
        if (kind == 0) w = 0.5 - 0.5 * std::cos(a);
        else if (kind == 1) w = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
        else w = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a);
        call.set(0, n, w);
    }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = window_cl;
    spec.kernel_name = "window_cosine";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t kind = mode_index("window", kKinds, p.attrs->get_string("kind"));
        return JitDefines{{"KIND", std::to_string(kind)},
                          {"PERIODIC", p.attrs->get_bool("periodic") ? "1" : "0"},
                          jit_data_f16(p.outputs.at(0).dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// f32 and f16 windows (f64 needs a device with fp64: the reference serves it).
std::string ocl_validate(const KernelParams& p) {
    const DataType t = p.outputs.at(0).dtype;
    if (t != DataType::f32 && t != DataType::f16)
        return std::string("the OpenCL window writes f32 or f16, not ") + to_string(t);
    return "";
}

// ---- ONNX -----------------------------------------------------------------

const char* onnx_float_type(int64_t t) {
    switch (t) {
        case 1: return "f32";
        case 10: return "f16";
        case 11: return "f64";
        default: return nullptr;
    }
}

ImportFn onnx_window(const std::string& kind, const std::string& op_type) {
    return [kind, op_type](ImportContext& c) {
        if (!c.only_attrs({"periodic", "output_datatype"})) return false;
        const int64_t t = c.i("output_datatype", 1);
        const char* type = onnx_float_type(t);
        if (type == nullptr)
            return c.unsupported(op_type + "'s output_datatype " + std::to_string(t) +
                                 ": windows are written as float, float16 or double only");
        c.set("kind", kind);
        c.set("periodic", c.i("periodic", 1) != 0);
        c.set("dtype", std::string(type));
        c.use_inputs({0});
        return true;
    };
}

void register_window(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("window", "a Hann, Hamming or Blackman window of `size` (an integer scalar input) elements", 1, 1,
               {attr_string("kind", std::string("hann"), kKinds, "the window: hann, hamming or blackman"),
                attr_bool("periodic", true, "periodic (N = size) or symmetric (N = size - 1)"),
                attr_string("dtype", std::string("f32"), kTypes, "the output's type")},
               infer);
    def.value_inputs = {0};
    const std::string doc = "size as input 0 (read by value); `periodic`; `output_datatype` float, float16, double";
    def.imports = {onnx_rule("HannWindow", 1, 1, onnx_window("hann", "HannWindow"), doc),
                   onnx_rule("HammingWindow", 1, 1, onnx_window("hamming", "HammingWindow"), doc),
                   onnx_rule("BlackmanWindow", 1, 1, onnx_window("blackman", "BlackmanWindow"), doc)};
    reg.add_op(def);
    // Input 0 (the size) and output 0 differ in type: no dtype filter.
    add_host_impls(reg, "window", reference);
    add_ocl_impls(reg, "window", ocl_spec(), ocl_options({}, ocl_validate));
}

}   // namespace

DYNRT_MODULE("window", register_window)
