// instance_norm: each (n, c) plane of x [N, C, D1, ...] normalised over its
// spatial dims, y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c]
// (ONNX InstanceNormalization).
//
// The variance is biased (divided by the plane size) and taken in a second
// pass over (x - mean)^2; the reference accumulates in double. A rank-2 x
// has planes of one element: its variance is 0 and y is the bias.
//
// The optimised impl (cpu_opt_*, f32) takes each plane in two vectorised
// passes (dynrt/cpu_norm.hpp: the moments in double lanes, then the scale and
// shift), the planes spread over the engine's threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_norm.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "instance_norm_cl.hpp"

namespace {

using namespace dynrt;

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "instance_norm", field));
}

// scale and bias: 1-D of x's channel count C (dim 1).
void check_channel_input(const ShapeInferContext& ctx, size_t i, const char* name) {
    const Layout& x = ctx.inputs[0];
    const Layout& a = ctx.inputs[i];
    if (a.dtype != x.dtype)
        throw node_error(ctx, name,
                         std::string(name) + " " + a.to_string() + " must have the type of x " + x.to_string());
    const Dimension& c = x.shape[1];
    if (a.shape.rank() != 1 || (a.shape[0].is_static() && c.is_static() && a.shape[0] != c))
        throw node_error(ctx, name,
                         std::string(name) + " " + a.shape.to_string() + " must be 1-D of x " + x.shape.to_string() +
                             "'s channel count (dim 1)");
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() != 3)
        throw node_error(ctx, "inputs",
                         "instance_norm takes 3 inputs (x, scale, bias), got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (!is_floating(x.dtype))
        throw node_error(ctx, "x", "instance_norm takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() < 2)
        throw node_error(ctx, "x", "x " + x.to_string() + " must have rank >= 2 (N, C, spatial dims...)");
    check_channel_input(ctx, 1, "scale");
    check_channel_input(ctx, 2, "bias");
    return {Layout(x.shape, x.dtype)};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const double eps = call.attrs().get_float("epsilon");
    const size_t channels = static_cast<size_t>(s[1]);
    const size_t planes = dims_product(s, 0, 2), n = dims_product(s, 2, s.rank());
    for (size_t p = 0; p < planes; ++p) {
        const size_t base = p * n, c = p % channels;
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < n; ++j) sum += call.get(0, base + j);
        const double mean = sum / static_cast<double>(n);
        for (size_t j = 0; j < n; ++j) sq += (call.get(0, base + j) - mean) * (call.get(0, base + j) - mean);
        const double k = call.get(1, c) / std::sqrt(sq / static_cast<double>(n) + eps);
        for (size_t j = 0; j < n; ++j) call.set(0, base + j, (call.get(0, base + j) - mean) * k + call.get(2, c));
    }
}

// ---- cpu: vectorised f32 -------------------------------------------------

// Planes [begin, end) of `n` elements; plane p has channel p % channels.
DYNRT_CPU_CLONES void normalize_planes(const float* x, const float* scale, const float* bias, float* y, size_t begin,
                                       size_t end, size_t n, size_t channels, double eps) {
    for (size_t p = begin; p < end; ++p) {
        const size_t c = p % channels;
        const norm::Moments m = norm::moments(x + p * n, n);
        norm::scale_shift(x + p * n, y + p * n, n, m.mean, static_cast<float>(norm::inv_stddev(m, eps) * scale[c]),
                          bias[c]);
    }
}

void fast_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t planes = dims_product(s, 0, 2), n = dims_product(s, 2, s.rank());
    if (planes == 0 || n == 0) return;
    const float* x = call.in<float>(0);
    const float* scale = call.in<float>(1);
    const float* bias = call.in<float>(2);
    float* y = call.out<float>(0);
    const double eps = call.attrs().get_float("epsilon");
    const CpuThreads threads(call.params().engine, checked_mul(planes * n, 2 * sizeof(float), "instance_norm bytes"));
    parallel_for(threads, planes, std::max<size_t>(1, 16384 / n), [&](size_t begin, size_t end) {
        normalize_planes(x, scale, bias, y, begin, end, n, static_cast<size_t>(s[1]), eps);
    });
}

// ---- OpenCL ---------------------------------------------------------------

// Work-items of the work-group that reduces one plane; the kernel's local
// buffer holds 64, the largest. A one-element plane gets a one-item group:
// PoCL crashed running a 16-item group over a plane whose length is the
// literal 1 (the static build).
constexpr size_t kMaxGroup = 64;

size_t group_size(size_t plane, const OclDeviceLimits& limits) {
    size_t g = plane >= 256 ? kMaxGroup : plane > 1 ? 16 : 1;
    while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
    return g;
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = instance_norm_cl;
    spec.kernel_name = "instance_norm_planes";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"CHANNELS", jit_dims_product("INPUT0", rank, 1, 2)},
                          {"PLANE", jit_dims_product("INPUT0", rank, 2, rank)},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // One work-group per plane; none when there are no planes.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const Shape s = p.inputs.at(0).get_shape();
        const size_t g = group_size(dims_product(s, 2, s.rank()), limits);
        OclDispatch d;
        d.gws[0] = checked_mul(dims_product(s, 0, 2), g, "instance_norm work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_instance_norm(ImportContext& c) {
    if (!c.only_attrs({"epsilon"})) return false;
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_instance_norm(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("instance_norm", "Per-(n, c) normalisation over the spatial dims, scale and bias per channel", 3, 3,
               {attr_float("epsilon", 1e-5, "added to the variance before the square root")}, infer);
    def.imports = {onnx_rule("InstanceNormalization", 3, 3, onnx_instance_norm, "`epsilon`")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "instance_norm", reference, host_options(dtypes));
    add_host_impls(reg, "instance_norm", fast_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, "instance_norm", ocl_spec(), ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("instance_norm", register_instance_norm)
