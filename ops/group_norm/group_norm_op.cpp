// group_norm: x [N, C, D1, ...] with its C channels split into num_groups
// groups of C / num_groups channels; each (n, group) block is normalised over
// its channels and spatial dims, y = (x - mean) / sqrt(var + epsilon), then
// scaled and shifted per channel (affine channel, ONNX GroupNormalization-21)
// or per group (affine group, GroupNormalization-18).
//
// The variance is biased (divided by the block size) and taken in a second
// pass over (x - mean)^2; the reference accumulates in double, the OpenCL
// kernel in FLOAT_ACC. The optimised impl (cpu_opt_*, f32) takes each block
// in two vectorised passes (dynrt/cpu_norm.hpp: the moments in double lanes,
// then the scale and shift per channel), the blocks spread over the engine's
// threads.
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
#include "group_norm_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "group_norm";

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, kOp, field));
}

// scale and bias: 1-D of `count` (num_groups or x's channel count).
void check_affine_input(const ShapeInferContext& ctx, size_t i, const char* name, const Dimension& count,
                        const std::string& of) {
    const Layout& x = ctx.inputs[0];
    const Layout& a = ctx.inputs[i];
    if (a.dtype != x.dtype)
        throw node_error(ctx, name,
                         std::string(name) + " " + a.to_string() + " must have the type of x " + x.to_string());
    if (a.shape.rank() != 1 || (a.shape[0].is_static() && count.is_static() && a.shape[0] != count))
        throw node_error(ctx, name, std::string(name) + " " + a.shape.to_string() + " must be 1-D of " + of);
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "group_norm takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() < 2)
        throw node_error(ctx, "x", "x " + x.to_string() + " must have rank >= 2 (N, C, spatial dims...)");
    const int64_t groups = ctx.attrs.get_int("num_groups");
    if (groups < 1) throw node_error(ctx, "num_groups", "num_groups must be >= 1, got " + std::to_string(groups));
    const Dimension& c = x.shape[1];
    if (c.is_static() && c.get_length() % groups != 0)
        throw node_error(ctx, "num_groups",
                         "x " + x.to_string() + " has " + std::to_string(c.get_length()) +
                             " channels, not divisible by num_groups " + std::to_string(groups));
    const bool per_group = ctx.attrs.get_string("affine") == "group";
    const Dimension count = per_group ? Dimension(groups) : c;
    const std::string of =
        per_group ? "num_groups " + std::to_string(groups) : "x " + x.shape.to_string() + "'s channel count (dim 1)";
    check_affine_input(ctx, 1, "scale", count, of);
    check_affine_input(ctx, 2, "bias", count, of);
    return {Layout(x.shape, x.dtype)};
}

// ---- reference ------------------------------------------------------------

// The blocks of one execution: N * num_groups of `size` contiguous elements,
// each of `channels` channels of `spatial` elements.
struct Blocks {
    size_t count, size, channels, spatial, groups;
};

Blocks blocks_of(const Shape& s, const Attributes& a) {
    const auto groups = static_cast<size_t>(a.get_int("num_groups"));
    const size_t cpg = static_cast<size_t>(s[1]) / groups, spatial = dims_product(s, 2, s.rank());
    return {checked_mul(static_cast<size_t>(s[0]), groups, "group_norm blocks"),
            checked_mul(cpg, spatial, "group_norm block size"), cpg, spatial, groups};
}

void reference(HostCall& call) {
    const Blocks b = blocks_of(call.in_shape(0), call.attrs());
    const double eps = call.attrs().get_float("epsilon");
    const bool per_group = call.attrs().get_string("affine") == "group";
    for (size_t p = 0; p < b.count; ++p) {
        const size_t base = p * b.size, g = p % b.groups;
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < b.size; ++j) sum += call.get(0, base + j);
        const double mean = sum / static_cast<double>(b.size);
        for (size_t j = 0; j < b.size; ++j) sq += (call.get(0, base + j) - mean) * (call.get(0, base + j) - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(b.size) + eps);
        for (size_t j = 0; j < b.size; ++j) {
            const size_t k = per_group ? g : g * b.channels + j / b.spatial;
            call.set(0, base + j, (call.get(0, base + j) - mean) * inv * call.get(1, k) + call.get(2, k));
        }
    }
}

// ---- cpu: vectorised f32 -------------------------------------------------

// Blocks [begin, end); scale and bias per channel, or per group (`per_group`).
DYNRT_CPU_CLONES void normalize_blocks(const float* x, const float* scale, const float* bias, float* y, size_t begin,
                                       size_t end, const Blocks& b, bool per_group, double eps) {
    for (size_t p = begin; p < end; ++p) {
        const size_t g = p % b.groups;
        const norm::Moments m = norm::moments(x + p * b.size, b.size);
        const double inv = norm::inv_stddev(m, eps);
        for (size_t ch = 0; ch < b.channels; ++ch) {
            const size_t k = per_group ? g : g * b.channels + ch, at = p * b.size + ch * b.spatial;
            norm::scale_shift(x + at, y + at, b.spatial, m.mean, static_cast<float>(inv * scale[k]), bias[k]);
        }
    }
}

void fast_kernel(HostCall& call) {
    const Blocks b = blocks_of(call.in_shape(0), call.attrs());
    if (b.count == 0 || b.size == 0) return;
    const float* x = call.in<float>(0);
    const float* scale = call.in<float>(1);
    const float* bias = call.in<float>(2);
    float* y = call.out<float>(0);
    const double eps = call.attrs().get_float("epsilon");
    const bool per_group = call.attrs().get_string("affine") == "group";
    const CpuThreads threads(call.params().engine,
                             checked_mul(b.count * b.size, 2 * sizeof(float), "group_norm bytes"));
    parallel_for(threads, b.count, std::max<size_t>(1, 16384 / b.size),
                 [&](size_t begin, size_t end) { normalize_blocks(x, scale, bias, y, begin, end, b, per_group, eps); });
}

// ---- OpenCL ---------------------------------------------------------------

// Work-items of the work-group that reduces one block: at most kMaxGroup (the
// kernel's local buffer), a power of two. A one-element block gets one item,
// as instance_norm found PoCL failing on wider groups over a literal 1.
constexpr size_t kMaxGroup = 64;

size_t work_group(size_t block, const OclDeviceLimits& limits) {
    size_t g = 1;
    while (g < kMaxGroup && g < block) g *= 2;
    while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
    return g;
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = group_norm_cl;
    spec.kernel_name = "group_norm_blocks";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const std::string groups = std::to_string(p.attrs->get_int("num_groups"));
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"GROUPS", groups},
                          {"CPG", "(" + jit_dims_product("INPUT0", rank, 1, 2) + " / " + groups + ")"},
                          {"SPATIAL", jit_dims_product("INPUT0", rank, 2, rank)},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"PER_GROUP", p.attrs->get_string("affine") == "group" ? "1" : "0"},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // One work-group per block; none when there are no blocks.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const Blocks b = blocks_of(p.inputs.at(0).get_shape(), *p.attrs);
        const size_t g = work_group(b.size, limits);
        OclDispatch d;
        d.gws[0] = checked_mul(b.count, g, "group_norm work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// GroupNormalization-18 scales per group, -21 per channel. stash_type 1
// (float) is what both impls give or exceed; another type is refused rather
// than computed in a precision the model did not ask for.
bool onnx_group_norm(ImportContext& c) {
    if (!c.only_attrs({"epsilon", "num_groups", "stash_type"})) return false;
    if (!c.has("num_groups")) return c.unsupported("GroupNormalization without num_groups");
    if (c.i("stash_type", 1) != 1)
        return c.unsupported("GroupNormalization stash_type " + std::to_string(c.i("stash_type", 1)) +
                             " (only 1, float)");
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.set("num_groups", c.i("num_groups", 1));
    c.set("affine", std::string(c.opset() < 21 ? "group" : "channel"));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_group_norm(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Per-(n, group) normalisation over a group's channels and spatial dims (ONNX GroupNormalization)", 3, 3,
        {attr_int("num_groups", std::nullopt, "groups the channels split into; must divide C"),
         attr_float("epsilon", 1e-5, "added to the variance before the square root"),
         attr_string("affine", std::string("channel"), {"channel", "group"},
                     "scale and bias hold one value per channel (C) or per group (num_groups)")},
        infer);
    def.imports = {onnx_rule("GroupNormalization", 3, 3, onnx_group_norm,
                             "`epsilon`, `num_groups`; scale/bias per group before opset 21; stash_type 1 only")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, kOp, reference, host_options(dtypes));
    add_host_impls(reg, kOp, fast_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("group_norm", register_group_norm)
