// lrn: local response normalisation across channels (ONNX LRN). For x
// [N, C, D1, ...], each element is divided by a power of the sum of squares
// of its `size` channel neighbours:
//   y = x / (bias + alpha / size * sum_{c' in window(c)} x[n, c', ...]^2)^beta
// with window(c) = [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
// clipped to [0, C). The reference sums in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "lrn_cl.hpp"

namespace {

using namespace dynrt;

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "lrn", field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "lrn takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() < 2)
        throw node_error(ctx, "x", "x " + x.to_string() + " must have rank >= 2 (N, C, spatial dims...)");
    const int64_t size = ctx.attrs.get_int("size");
    if (size < 1) throw node_error(ctx, "size", "size is " + std::to_string(size) + "; it must be >= 1");
    return {Layout(x.shape, x.dtype)};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const Attributes& a = call.attrs();
    const auto size = a.get_int("size");
    const double scale = a.get_float("alpha") / static_cast<double>(size), beta = a.get_float("beta");
    const double bias = a.get_float("bias");
    const auto channels = static_cast<int64_t>(s[1]);
    const size_t inner = dims_product(s, 2, s.rank());
    for (size_t i = 0; i < s.count(); ++i) {
        const auto c = static_cast<int64_t>(i / inner % static_cast<size_t>(channels));
        const size_t first = i - static_cast<size_t>(c) * inner;   // element (n, 0, spatial)
        const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2);
        const int64_t hi = std::min<int64_t>(channels - 1, c + size / 2);   // ceil((size - 1) / 2) = size / 2
        double sq = 0.0;
        for (int64_t k = lo; k <= hi; ++k) {
            const double v = call.get(0, first + static_cast<size_t>(k) * inner);
            sq += v * v;
        }
        call.set(0, i, call.get(0, i) / std::pow(bias + scale * sq, beta));
    }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = lrn_cl;
    spec.kernel_name = "lrn_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const Attributes& a = *p.attrs;
        const int64_t size = a.get_int("size");
        return JitDefines{{"CHANNELS", jit_dims_product("INPUT0", rank, 1, 2)},
                          {"INNER", jit_dims_product("INPUT0", rank, 2, rank)},
                          {"BEFORE", std::to_string((size - 1) / 2)},
                          {"AFTER", std::to_string(size / 2)},
                          {"SCALE", jit_float_literal(a.get_float("alpha") / static_cast<double>(size))},
                          {"BETA", jit_float_literal(a.get_float("beta"))},
                          {"BIAS", jit_float_literal(a.get_float("bias"))},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs[0].count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_lrn(ImportContext& c) {
    if (!c.only_attrs({"size", "alpha", "beta", "bias"})) return false;
    if (!c.has("size")) return c.unsupported("LRN without its required `size`");
    c.set("size", c.i("size", 1));
    c.set("alpha", c.f("alpha", 1e-4));
    c.set("beta", c.f("beta", 0.75));
    c.set("bias", c.f("bias", 1.0));
    c.use_inputs({0});
    return true;
}

void register_lrn(ModuleRegistrar& reg) {
    OpDefinition def = op_def("lrn", "Local response normalisation across channels (dim 1)", 1, 1,
                              {attr_int("size", std::nullopt, "channels in the window, >= 1"),
                               attr_float("alpha", 1e-4, "scale of the sum of squares (divided by size)"),
                               attr_float("beta", 0.75, "exponent"), attr_float("bias", 1.0, "offset")},
                              infer);
    def.imports = {onnx_rule("LRN", 1, 1, onnx_lrn, "`size`, `alpha`, `beta`, `bias`")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "lrn", reference, host_options(dtypes));
    add_ocl_impls(reg, "lrn", ocl_spec(), ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("lrn", register_lrn)
