// batch_norm: per-channel normalisation of x [N, C, D1, ...] (ONNX
// BatchNormalization). Inputs: x, scale, bias, mean, var (the last four 1-D
// of C).
//
// Inference (training_mode false): y = (x - mean[c]) / sqrt(var[c] + epsilon)
// * scale[c] + bias[c], elementwise. Training (training_mode true): the mean
// and the biased variance are those of the batch, taken over every dim but
// the channel's; outputs 1 and 2 are the updated running statistics,
// mean * momentum + batch_mean * (1 - momentum) (and likewise the variance).
// The reference accumulates in double.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "batch_norm_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const char* const kInputNames[] = {"x", "scale", "bias", "mean", "var"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "batch_norm", field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() != 5)
        throw node_error(
            ctx, "inputs",
            "batch_norm takes 5 inputs (x, scale, bias, mean, var), got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "batch_norm takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() < 2)
        throw node_error(ctx, "x", "x " + x.to_string() + " must have rank >= 2 (N, C, spatial dims...)");
    const Dimension& c = x.shape[1];
    for (size_t i = 1; i < 5; ++i) {
        const Layout& a = ctx.inputs[i];
        const std::string name = kInputNames[i];
        if (a.dtype != x.dtype)
            throw node_error(ctx, name, name + " " + a.to_string() + " must have the type of x " + x.to_string());
        if (a.shape.rank() != 1 || (a.shape[0].is_static() && c.is_static() && a.shape[0] != c))
            throw node_error(ctx, name,
                             name + " " + a.shape.to_string() + " must be 1-D of x " + x.shape.to_string() +
                                 "'s channel count (dim 1)");
    }
    if (!ctx.attrs.get_bool("training_mode")) return {Layout(x.shape, x.dtype)};
    const Layout stat(PartialShape{c}, x.dtype);
    return {Layout(x.shape, x.dtype), stat, stat};
}

// ---- reference ------------------------------------------------------------

struct Dims {
    size_t n, channels, inner;
};
Dims dims_of(const Shape& s) {
    return {static_cast<size_t>(s[0]), static_cast<size_t>(s[1]), dims_product(s, 2, s.rank())};
}

// The batch's mean and biased variance of channel c.
std::pair<double, double> batch_stats(const HostCall& call, const Dims& d, size_t c) {
    const size_t count = d.n * d.inner;
    double sum = 0.0, sq = 0.0;
    for (size_t b = 0; b < d.n; ++b)
        for (size_t k = 0; k < d.inner; ++k) sum += call.get(0, (b * d.channels + c) * d.inner + k);
    const double mean = sum / static_cast<double>(count);
    for (size_t b = 0; b < d.n; ++b) {
        for (size_t k = 0; k < d.inner; ++k) {
            const double v = call.get(0, (b * d.channels + c) * d.inner + k) - mean;
            sq += v * v;
        }
    }
    return {mean, sq / static_cast<double>(count)};
}

void reference(HostCall& call) {
    const Dims d = dims_of(call.in_shape(0));
    const double eps = call.attrs().get_float("epsilon");
    const bool training = call.attrs().get_bool("training_mode");
    const double momentum = call.attrs().get_float("momentum");
    for (size_t c = 0; c < d.channels; ++c) {
        double mean = call.get(3, c), var = call.get(4, c);
        if (training) {
            std::tie(mean, var) = batch_stats(call, d, c);
            call.set(1, c, call.get(3, c) * momentum + mean * (1 - momentum));
            call.set(2, c, call.get(4, c) * momentum + var * (1 - momentum));
        }
        const double k = call.get(1, c) / std::sqrt(var + eps), b = call.get(2, c);
        for (size_t n = 0; n < d.n; ++n) {
            const size_t base = (n * d.channels + c) * d.inner;
            for (size_t i = 0; i < d.inner; ++i) call.set(0, base + i, (call.get(0, base + i) - mean) * k + b);
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

// Training: work-items of the work-group that reduces one channel; the
// kernel's local buffer holds 64, the largest. A one-element channel gets a
// one-item group: PoCL crashed running a 16-item group over a length that is
// the literal 1 (the static build).
constexpr size_t kMaxGroup = 64;

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = batch_norm_cl;
    spec.kernel_name = "batch_norm_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"TRAINING", p.attrs->get_bool("training_mode") ? "1" : "0"},
                          {"BATCH", jit_dims_product("INPUT0", rank, 0, 1)},
                          {"CHANNELS", jit_dims_product("INPUT0", rank, 1, 2)},
                          {"INNER", jit_dims_product("INPUT0", rank, 2, rank)},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"MOMENTUM", jit_float_literal(p.attrs->get_float("momentum"))},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // Inference: one work-item per element. Training: one work-group per
    // channel (the running statistics are written even for an empty batch).
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        if (!p.attrs->get_bool("training_mode")) return dispatch_1d(p.outputs[0].count(), limits);
        const Shape s = p.inputs.at(0).get_shape();
        const size_t n = dims_product(s, 0, 1) * dims_product(s, 2, s.rank());
        size_t g = n >= 256 ? kMaxGroup : n > 1 ? 16 : 1;
        while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
        OclDispatch d;
        d.gws[0] = checked_mul(static_cast<size_t>(s[1]), g, "batch_norm work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- affine folding -------------------------------------------------------

// Inference with constant statistics is y = x * k[c] + (bias[c] - mean[c] *
// k[c]), k = scale / sqrt(var + epsilon): foldable into a producer's weights.
std::optional<ChannelAffine> channel_affine(const Attributes& a, const ConstantInputs& k) {
    if (a.get_bool("training_mode") || k.size() != 5) return std::nullopt;
    for (size_t i = 1; i < 5; ++i)
        if (!k[i] || k[i]->shape().rank() != 1 || k[i]->count() != k[1]->count()) return std::nullopt;
    const double eps = a.get_float("epsilon");
    ChannelAffine f;
    for (size_t c = 0; c < k[1]->count(); ++c) {
        const double scale = k[1]->get_as_double(c) / std::sqrt(k[4]->get_as_double(c) + eps);
        f.scale.push_back(scale);
        f.shift.push_back(k[2]->get_as_double(c) - k[3]->get_as_double(c) * scale);
    }
    return f;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_batch_norm(ImportContext& c) {
    if (c.opset() < 7) return c.unsupported("BatchNormalization opset " + std::to_string(c.opset()) + " (before 7)");
    if (!c.only_attrs({"epsilon", "momentum", "training_mode", "spatial"})) return false;
    if (c.i("spatial", 1) != 1) return c.unsupported("`spatial` 0 (statistics per element, not per channel)");
    const bool training = c.i("training_mode", 0) != 0;
    if (c.node().outputs > 1 && (c.opset() < 14 || !training))
        return c.unsupported(std::to_string(c.node().outputs) + " outputs at opset " + std::to_string(c.opset()) +
                             ": only opset >= 14 training mode gives the running mean and variance");
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.set("momentum", c.f("momentum", 0.9));
    c.set("training_mode", training);
    c.use_inputs({0, 1, 2, 3, 4});
    return true;
}

void register_batch_norm(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("batch_norm", "Per-channel normalisation with given (inference) or batch (training) statistics", 5, 5,
               {attr_float("epsilon", 1e-5, "added to the variance before the square root"),
                attr_float("momentum", 0.9, "training: weight of the old running statistics"),
                attr_bool("training_mode", false, "normalise with the batch's statistics and give the running ones")},
               infer);
    def.num_outputs = 3;
    def.channel_affine = channel_affine;
    def.output_count = [](const Attributes& a) { return a.get_bool("training_mode") ? size_t{3} : size_t{1}; };
    def.imports = {onnx_rule("BatchNormalization", 5, 5, onnx_batch_norm,
                             "opset >= 7, `epsilon`, `momentum`, `training_mode` (outputs Y, running_mean, "
                             "running_var); `spatial` 1 only",
                             3)};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "batch_norm", reference, host_options(dtypes));
    add_ocl_impls(reg, "batch_norm", ocl_spec(), ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("batch_norm", register_batch_norm)
