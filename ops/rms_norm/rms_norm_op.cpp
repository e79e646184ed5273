// rms_norm: y = x / sqrt(mean(x^2) + epsilon) * scale, the mean taken over
// the last axis (ONNX RMSNormalization with axis -1; the RMSNorm of Llama,
// Mistral, Qwen2 and T5, which exporters spell out in 6-9 nodes and the ONNX
// import pass pattern_rms_norm gathers into this op). scale is optional and
// broadcasts over the last axis: one element, or one per element of the row.
//
// The reference sums the squares in double; so does the cpu impl, in lanes
// (dynrt/cpu_norm.hpp); the OpenCL kernels in FLOAT_ACC (double where the
// device has fp64).
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
#include "rms_norm_cl.hpp"

namespace {

using namespace dynrt;

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "rms_norm", field));
}

// scale broadcasts over the last axis of x: rank <= x's, every dim but its
// last 1, the last 1 or x's last dim. A dynamic dim passes here and is
// checked when the shapes are known.
void check_scale(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs[0];
    const Layout& s = ctx.inputs[1];
    if (s.dtype != x.dtype)
        throw node_error(ctx, "scale", "scale " + s.to_string() + " must have the type of x " + x.to_string());
    const std::string shapes = "scale " + s.shape.to_string() + " and x " + x.shape.to_string();
    if (s.shape.rank() > x.shape.rank()) throw node_error(ctx, "scale", shapes + ": scale has more dims than x");
    for (size_t d = 0; d < s.shape.rank(); ++d) {
        const Dimension& sd = s.shape[d];
        if (!sd.is_static() || sd.get_length() == 1) continue;
        const bool last = d + 1 == s.shape.rank();
        const Dimension& xd = x.shape[x.shape.rank() - 1];
        if (!last)
            throw node_error(ctx, "scale",
                             shapes + ": dim " + std::to_string(d) + " is not 1 (scale broadcasts over the last axis)");
        if (xd.is_static() && sd.get_length() != xd.get_length())
            throw node_error(ctx, "scale", shapes + ": the last dims differ (scale broadcasts over the last axis)");
    }
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.empty() || ctx.inputs.size() > 2)
        throw node_error(ctx, "inputs",
                         "rms_norm takes 1 or 2 inputs (x[, scale]), got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "rms_norm takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() == 0)
        throw node_error(ctx, "x", "x " + x.to_string() + " is a scalar; rms_norm needs rank >= 1");
    if (ctx.inputs.size() == 2) check_scale(ctx);
    return {Layout(x.shape, x.dtype)};
}

// Rows of x (its last axis, n elements) and whether scale holds one per element.
struct Rows {
    size_t count = 0, n = 0;
    bool has_scale = false, scale_per_element = false;
};

Rows rows_of(const HostCall& call) {
    const Shape& s = call.in_shape(0);
    Rows r;
    r.n = static_cast<size_t>(s[s.rank() - 1]);
    r.count = r.n == 0 ? 0 : s.count() / r.n;
    r.has_scale = call.num_inputs() > 1;
    r.scale_per_element = r.has_scale && call.in_shape(1).count() == r.n && r.n != 1;
    return r;
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Rows r = rows_of(call);
    const double eps = call.attrs().get_float("epsilon");
    for (size_t row = 0; row < r.count; ++row) {
        const size_t base = row * r.n;
        double sq = 0.0;
        for (size_t j = 0; j < r.n; ++j) sq += call.get(0, base + j) * call.get(0, base + j);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(r.n) + eps);
        for (size_t j = 0; j < r.n; ++j) {
            const double scale = r.has_scale ? call.get(1, r.scale_per_element ? j : 0) : 1.0;
            call.set(0, base + j, call.get(0, base + j) * inv * scale);
        }
    }
}

// ---- cpu: vectorised f32 rows over the engine's threads ---------------------
//
// The squares are summed in norm::kLanes double lanes (the loop vectorises
// without reassociating one sum); the row is then written as x * (inv *
// scale) in float. A scale of one element is folded into inv.
DYNRT_CPU_CLONES void normalise_rows(const float* x, const float* scale, float* y, size_t begin, size_t end, size_t n,
                                     double eps, bool per_element, float one_scale) {
    for (size_t row = begin; row < end; ++row) {
        const float* xr = x + row * n;
        float* yr = y + row * n;
        const double sq = norm::lane_sum(xr, n, [](float v) {
            const auto d = static_cast<double>(v);
            return d * d;
        });
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
        if (per_element) {
            const auto k = static_cast<float>(inv);
            for (size_t j = 0; j < n; ++j) yr[j] = xr[j] * k * scale[j];
        } else {
            const auto k = static_cast<float>(inv * static_cast<double>(one_scale));
            for (size_t j = 0; j < n; ++j) yr[j] = xr[j] * k;
        }
    }
}

void fast_kernel(HostCall& call) {
    const Rows r = rows_of(call);
    if (r.count == 0) return;
    const float* scale = r.has_scale ? call.in<float>(1) : nullptr;
    const float one_scale = r.has_scale && !r.scale_per_element ? scale[0] : 1.0f;
    const float* x = call.in<float>(0);
    float* y = call.out<float>(0);
    const double eps = call.attrs().get_float("epsilon");
    const CpuThreads threads(call.params().engine, checked_mul(r.count * r.n, 2 * sizeof(float), "rms_norm bytes"));
    parallel_for(threads, r.count, std::max<size_t>(1, 16384 / r.n), [&](size_t begin, size_t end) {
        normalise_rows(x, scale, y, begin, end, r.n, eps, r.scale_per_element, one_scale);
    });
}

// ---- OpenCL ---------------------------------------------------------------

// Work-items of the work-group that reduces one row: 64 for rows of 256
// elements or more, 16 for shorter ones, 1 for a one-element row (PoCL
// crashed running a 16-item group over a row whose length is the literal 1:
// layer_norm). The kernel's local buffer holds kMaxGroup, the largest.
constexpr size_t kMaxGroup = 64;

size_t group_size(size_t row_len, const OclDeviceLimits& limits) {
    size_t g = row_len >= 256 ? kMaxGroup : row_len > 1 ? 16 : 1;
    while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
    return g;
}

size_t row_len(const Shape& s) { return s.rank() == 0 ? 1 : static_cast<size_t>(s[s.rank() - 1]); }

// 4-element vectors each work-item keeps in registers (rows of up to
// group x CACHED vectors are read once): as many as the row needs in the
// static build, at most 8; 4 in the shape-agnostic one (rows up to 1024
// elements), where the registers are reserved for every shape.
std::string cached_vectors(const KernelParams& p, bool is_dynamic) {
    if (is_dynamic) return "4";
    const size_t n4 = row_len(p.inputs.at(0).get_shape()) / 4;
    const size_t g = std::max<size_t>(group_size(n4 * 4, OclDeviceLimits{}), 1);
    return std::to_string(std::clamp<size_t>((n4 + g - 1) / g, 1, 8));
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = rms_norm_cl;
    spec.kernel_name = "rms_norm_rows";
    spec.defines = [](const KernelParams& p, bool is_dynamic) {
        const size_t rank = p.inputs.at(0).shape.rank();
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"ROW_LEN", jit_dims_product("INPUT0", rank, rank - 1, rank)},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"HAS_SCALE", p.inputs.size() > 1 ? "1" : "0"},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          {"CACHED", cached_vectors(p, is_dynamic)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // One work-group per row; none when there are no rows.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const Shape s = p.inputs.at(0).get_shape();
        const size_t n = row_len(s);
        const size_t g = group_size(n, limits);
        OclDispatch d;
        d.gws[0] = checked_mul(n == 0 ? 0 : s.count() / n, g, "rms_norm work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// RMSNormalization (opset 23) normalises the dims from `axis` on; this op the
// last one.
bool onnx_rms_norm(ImportContext& c) {
    if (!c.only_attrs({"axis", "epsilon", "stash_type"})) return false;
    if (c.i("stash_type", 1) != 1)
        return c.unsupported("stash_type " + std::to_string(c.i("stash_type", 1)) +
                             ": the mean of squares is computed in f32 (or wider) only");
    const int64_t rank = static_cast<int64_t>(c.rank(0));
    const int64_t axis = c.i("axis", -1);
    if (axis != -1 && axis != rank - 1)
        return c.unsupported("axis " + std::to_string(axis) + " of X " + c.layout(0).shape.to_string() +
                             ": rms_norm normalises over the last axis only");
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.use_inputs({0, 1});
    return true;
}

// DynrtRmsNorm: the op itself, as dynrt's own graph patterns emit it (internal).
bool onnx_dynrt_rms_norm(ImportContext& c) {
    if (!c.only_attrs({"epsilon"})) return false;
    c.set("epsilon", c.f("epsilon", 1e-5));
    c.use_inputs({0, 1});
    return true;
}

void register_rms_norm(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("rms_norm", "RMS normalisation over the last axis, x / sqrt(mean(x^2) + epsilon), optional scale", 1, 2,
               {attr_float("epsilon", 1e-5, "added to the mean of squares before the square root")}, infer);
    def.imports = {onnx_rule("RMSNormalization", 2, 2, onnx_rms_norm,
                             "opset 23: `epsilon`; `axis` the last one only; `stash_type` 1 only"),
                   onnx_rule("DynrtRmsNorm", 1, 2, onnx_dynrt_rms_norm,
                             "internal (dynrt's graph pattern pattern_rms_norm): x, optional scale; `epsilon`")};
    reg.add_op(def);
    add_host_impls(reg, "rms_norm", reference, host_options({DataType::f32, DataType::f16, DataType::f64}));
    add_host_impls(reg, "rms_norm", fast_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, "rms_norm", ocl_spec(), ocl_options({DataType::f32, DataType::f16}));
}

}   // namespace

DYNRT_MODULE("rms_norm", register_rms_norm)
