// layer_norm: y = (x - mean) / sqrt(var + epsilon) * scale + bias, the mean
// and the (biased) variance taken over every dim from `axis` to the last
// (ONNX LayerNormalization). Outputs 1 and 2 are the statistics of each row,
// mean and 1 / sqrt(var + epsilon), with the normalised dims kept as ones.
//
// The variance is taken in a second pass over (x - mean)^2, not as
// E[x^2] - E[x]^2, so rows far from zero lose no precision; the reference
// accumulates in double. The statistics are f32 whatever x is (ONNX's
// default stash_type).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "layer_norm_cl.hpp"

namespace {

using namespace dynrt;

const char* const kInputNames[] = {"x", "scale", "bias"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "layer_norm", field));
}

// Scale and bias broadcast into the normalised dims x[axis:], right-aligned:
// each of their dims is 1 or the dim of x it lines up with.
void check_affine(const ShapeInferContext& ctx, size_t i, size_t axis) {
    const Layout& x = ctx.inputs[0];
    const Layout& a = ctx.inputs[i];
    const std::string name = kInputNames[i];
    if (a.dtype != x.dtype)
        throw node_error(ctx, name, name + " " + a.to_string() + " must have the type of x " + x.to_string());
    const size_t norm_rank = x.shape.rank() - axis;
    const std::string shapes = name + " " + a.shape.to_string() + " and x " + x.shape.to_string() +
                               " normalised from axis " + std::to_string(axis);
    if (a.shape.rank() > norm_rank)
        throw node_error(ctx, name, shapes + ": " + name + " has more dims than are normalised");
    for (size_t d = 0; d < a.shape.rank(); ++d) {
        const Dimension& ad = a.shape[d];
        const Dimension& xd = x.shape[x.shape.rank() - a.shape.rank() + d];
        if (ad.is_static() && xd.is_static() && ad.get_length() != 1 && ad.get_length() != xd.get_length())
            throw node_error(ctx, name, shapes + ": dim " + std::to_string(d) + " does not broadcast");
    }
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() < 2 || ctx.inputs.size() > 3)
        throw node_error(ctx, "inputs",
                         "layer_norm takes 2 or 3 inputs (x, scale[, bias]), got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "layer_norm takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() == 0)
        throw node_error(ctx, "x", "x " + x.to_string() + " is a scalar; layer_norm needs rank >= 1");
    const auto rank = static_cast<int64_t>(x.shape.rank());
    const auto axis = static_cast<size_t>(normalize_axis(ctx.attrs.get_int("axis"), rank));
    for (size_t i = 1; i < ctx.inputs.size(); ++i) check_affine(ctx, i, axis);
    std::vector<Dimension> stats;
    for (size_t d = 0; d < x.shape.rank(); ++d) stats.push_back(d < axis ? x.shape[d] : Dimension(1));
    const Layout stat(PartialShape(stats), DataType::f32);
    return {Layout(x.shape, x.dtype), stat, stat};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), s.rank());
    const double eps = call.attrs().get_float("epsilon");
    const size_t rows = dims_product(s, 0, axis), n = dims_product(s, axis, s.rank());
    const Shape norm(std::vector<int64_t>(s.begin() + static_cast<std::ptrdiff_t>(axis), s.end()));
    const bool has_bias = call.num_inputs() > 2;
    BroadcastIndex ix(norm, {call.in_shape(1), has_bias ? call.in_shape(2) : call.in_shape(1)});
    for (size_t r = 0; r < rows; ++r) {
        const size_t base = r * n;
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < n; ++j) sum += call.get(0, base + j);
        const double mean = sum / static_cast<double>(n);
        for (size_t j = 0; j < n; ++j) sq += (call.get(0, base + j) - mean) * (call.get(0, base + j) - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
        for (size_t j = 0; j < n; ++j, ix.next()) {
            const double b = has_bias ? call.get(2, ix.in(1)) : 0.0;
            call.set(0, base + j, (call.get(0, base + j) - mean) * inv * call.get(1, ix.in(0)) + b);
        }
        call.set(1, r, mean);
        call.set(2, r, inv);
    }
}

// ---- cpu: vectorised f32 rows over the engine's threads ---------------------
//
// Rows of n contiguous floats with scale and bias of n elements each (no
// broadcast inside the row); other cases run on the reference. Sums go
// through kLanes float lanes (the loops vectorise without reassociating one
// scalar sum) and are combined in double; the variance is a second pass over
// (x - mean)^2, as in the reference.
constexpr size_t kLanes = 16;

DYNRT_CPU_CLONES double row_sum(const float* x, size_t n) {
    float lanes[kLanes] = {};
    size_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (size_t l = 0; l < kLanes; ++l) lanes[l] += x[k + l];
    double total = 0.0;
    for (; k < n; ++k) total += x[k];
    for (float l : lanes) total += l;
    return total;
}

// The mean as two floats, hi + lo: x - hi is exact near the mean, so rows far
// from zero lose no precision in float.
struct SplitMean {
    float hi, lo;
};

SplitMean split(double mean) {
    const auto hi = static_cast<float>(mean);
    return {hi, static_cast<float>(mean - hi)};
}

DYNRT_CPU_CLONES double row_squares(const float* x, size_t n, SplitMean m) {
    float lanes[kLanes] = {};
    size_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (size_t l = 0; l < kLanes; ++l) {
            const float d = (x[k + l] - m.hi) - m.lo;
            lanes[l] += d * d;
        }
    double total = 0.0;
    for (; k < n; ++k) {
        const float d = (x[k] - m.hi) - m.lo;
        total += d * d;
    }
    for (float l : lanes) total += l;
    return total;
}

DYNRT_CPU_CLONES void normalise_row(const float* x, const float* scale, const float* bias, float* y, size_t n,
                                    SplitMean m, float inv) {
    if (bias) {
        for (size_t k = 0; k < n; ++k) y[k] = ((x[k] - m.hi) - m.lo) * inv * scale[k] + bias[k];
    } else {
        for (size_t k = 0; k < n; ++k) y[k] = ((x[k] - m.hi) - m.lo) * inv * scale[k];
    }
}

void fast_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), s.rank());
    const size_t rows = dims_product(s, 0, axis), n = dims_product(s, axis, s.rank());
    if (rows == 0 || n == 0) return;
    const bool has_bias = call.num_inputs() > 2;
    if (call.in_shape(1).count() != n || (has_bias && call.in_shape(2).count() != n))
        return reference(call);   // scale or bias broadcasts inside the row
    const double eps = call.attrs().get_float("epsilon");
    const float* x = call.in<float>(0);
    const float* scale = call.in<float>(1);
    const float* bias = has_bias ? call.in<float>(2) : nullptr;
    float* y = call.out<float>(0);
    float* means = call.out<float>(1);
    float* invs = call.out<float>(2);
    const CpuThreads threads(call.params().engine, 2 * rows * n * sizeof(float));
    parallel_for(threads, rows, std::max<size_t>(1, 16384 / n), [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            const float* row = x + r * n;
            const SplitMean mean = split(row_sum(row, n) / static_cast<double>(n));
            const auto inv =
                static_cast<float>(1.0 / std::sqrt(row_squares(row, n, mean) / static_cast<double>(n) + eps));
            normalise_row(row, scale, bias, y + r * n, n, mean, inv);
            means[r] = mean.hi;
            invs[r] = inv;
        }
    });
}

// Declines scale or bias known to broadcast inside the row (an element count
// other than the row's); with dynamic dims the kernel checks each call and
// runs the reference for such a call.
std::string fast_supported(const KernelParams& p) {
    const PartialShape& x = p.inputs.at(0).shape;
    const size_t axis = axis_attr(*p.attrs, x.rank());
    const PartialShape row(std::vector<Dimension>(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end()));
    if (!row.is_static()) return {};
    for (size_t i = 1; i < p.inputs.size(); ++i) {
        const PartialShape& a = p.inputs[i].shape;
        if (a.is_static() && a.to_shape().count() != row.to_shape().count())
            return std::string(kInputNames[i]) + " " + a.to_string() + " broadcasts inside the row";
    }
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

// Work-items of the work-group that reduces one row: 64 for rows of 256
// elements or more (each then keeps several vectors in flight), 16 for
// shorter ones. The kernel's local buffer holds kMaxGroup, the largest. A
// one-element row gets a one-item group: PoCL crashed running a 16-item group
// over a row whose length is the literal 1 (the static build).
constexpr size_t kMaxGroup = 64;

size_t group_size(size_t row_len, const OclDeviceLimits& limits) {
    size_t g = row_len >= 256 ? kMaxGroup : row_len > 1 ? 16 : 1;
    while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
    return g;
}

// 4-element vectors each work-item keeps in registers (rows of up to
// group x CACHED vectors are read once): as many as the row needs in the
// static build, at most 8; 4 in the shape-agnostic one (rows up to 1024
// elements), where the registers are reserved for every shape.
std::string cached_vectors(const KernelParams& p, bool is_dynamic, size_t axis) {
    if (is_dynamic) return "4";
    const Shape s = p.inputs.at(0).get_shape();
    const size_t n4 = dims_product(s, axis, s.rank()) / 4;
    const size_t g = std::max<size_t>(group_size(n4 * 4, OclDeviceLimits{}), 1);
    return std::to_string(std::clamp<size_t>((n4 + g - 1) / g, 1, 8));
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = layer_norm_cl;
    spec.kernel_name = "layer_norm_rows";
    spec.defines = [](const KernelParams& p, bool is_dynamic) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"ROW_LEN", jit_dims_product("INPUT0", rank, axis, rank)},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"HAS_BIAS", p.inputs.size() > 2 ? "1" : "0"},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          {"CACHED", cached_vectors(p, is_dynamic, axis)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // One work-group per row; none when there are no rows.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const Shape s = p.inputs.at(0).get_shape();
        const size_t axis = axis_attr(*p.attrs, s.rank());
        const size_t g = group_size(dims_product(s, axis, s.rank()), limits);
        OclDispatch d;
        d.gws[0] = checked_mul(dims_product(s, 0, axis), g, "layer_norm work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_layer_norm(ImportContext& c) {
    if (!c.only_attrs({"axis", "epsilon", "stash_type"})) return false;
    if (c.i("stash_type", 1) != 1)
        return c.unsupported("stash_type " + std::to_string(c.i("stash_type", 1)) +
                             ": the statistics are computed and given in f32 only");
    c.set("axis", c.i("axis", -1));
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_layer_norm(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("layer_norm", "Layer normalisation over the dims from `axis` on, with scale and optional bias", 2, 3,
               {attr_int("axis", -1, "first normalised dim (negative counts from the end)"),
                attr_float("epsilon", 1e-5, "added to the variance before the square root")},
               infer);
    def.num_outputs = 3;
    def.imports = {onnx_rule("LayerNormalization", 2, 3, onnx_layer_norm,
                             "`axis`, `epsilon`; `stash_type` 1 only; outputs Mean and InvStdDev in f32", 3)};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "layer_norm", reference, host_options(dtypes));
    add_host_impls(reg, "layer_norm", fast_kernel, optimised_host_options({DataType::f32}, fast_supported));
    add_ocl_impls(reg, "layer_norm", ocl_spec(), ocl_options(dtypes, validate_broadcast_rank));
}

}   // namespace

DYNRT_MODULE("layer_norm", register_layer_norm)
