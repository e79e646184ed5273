// resize: the input resampled along some axes (ONNX Resize, Upsample). Each
// output coordinate x of a resized axis maps back to a source coordinate
// x_src (coordinate_transformation_mode, from the axis' scale), and the output
// is a weighted sum of the input around x_src: the nearest element (nearest),
// a triangle filter (linear) or a cubic convolution (cubic), one axis after
// another (separable). Output extents come from input 1: scales (f32: extent
// floor(dim * scale)) or sizes (i32/i64: the extents, or one common scale with
// keep_aspect_ratio_policy), read by value during shape inference; without
// input 1 the `scales` attribute holds the scales. Input 2 (roi, f32) is the
// crop box of tf_crop_and_resize. Weights follow ONNX's reference: taps
// outside the input read the edge element, and a source coordinate that is an
// integer reads that element alone.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_axes.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "resize_cl.hpp"

namespace {

using namespace dynrt;

enum class Mode { nearest, linear, cubic };
enum class Coord {
    half_pixel,
    half_pixel_symmetric,
    pytorch_half_pixel,
    align_corners,
    asymmetric,
    tf_half_pixel_for_nn,
    tf_crop_and_resize
};
enum class Nearest { round_prefer_floor, round_prefer_ceil, floor, ceil };
enum class Policy { stretch, not_larger, not_smaller };
// Where the extents come from (the kernel's TARGET).
enum class Target { scales_attr, scales, sizes };

const std::vector<std::string> kModes = {"nearest", "linear", "cubic"};
const std::vector<std::string> kCoords = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const std::vector<std::string> kNearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
const std::vector<std::string> kPolicies = {"stretch", "not_larger", "not_smaller"};
constexpr size_t kOclMaxRank = 8;

Error resize_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "resize", field));
}

// The validated attributes as enums.
struct ResizeAttrs {
    Mode mode;
    Coord coord;
    Nearest nearest;
    Policy policy;
    double cubic_a;
    bool exclude_outside;
    bool antialias;
    double extrapolation;
};

ResizeAttrs read_attrs(const Attributes& a) {
    const auto index = [&](const char* name, const std::vector<std::string>& values) {
        return mode_index("resize", values, a.get_string(name));
    };
    return {static_cast<Mode>(index("mode", kModes)),
            static_cast<Coord>(index("coordinate_transformation_mode", kCoords)),
            static_cast<Nearest>(index("nearest_mode", kNearest)),
            static_cast<Policy>(index("keep_aspect_ratio_policy", kPolicies)),
            a.get_float("cubic_coeff_a"),
            a.get_bool("exclude_outside"),
            a.get_bool("antialias"),
            a.get_float("extrapolation_value")};
}

Target target_of(const std::vector<Layout>& inputs) {
    if (inputs.size() < 2) return Target::scales_attr;
    return is_floating(inputs[1].dtype) ? Target::scales : Target::sizes;
}

// The resized axes as positions (every axis when the attribute is empty).
std::vector<size_t> resized_axes(const std::string& node, const Attributes& a, const PartialShape& in) {
    OpAxes axes{a.get_ints("axes"), true, 0, "the `axes` attribute"};
    if (axes.values.empty()) {
        std::vector<size_t> all(in.rank());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        return all;
    }
    axes.count = axes.values.size();
    return normalize_axes(node, "resize", axes, in.rank(), AxesOf::input, in);
}

// Per input dim: the scale the coordinate transform divides by and the
// output extent (ONNX's reference: scales floor, a common scale rounds half up).
struct AxisPlan {
    double scale = 1;
    int64_t out = 0;
};

// The scales or sizes of the resized axes, as given.
struct TargetValues {
    Target target;
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    size_t count() const { return target == Target::sizes ? sizes.size() : scales.size(); }
};

int64_t scaled_extent(const std::string& node, const char* field, double extent, const std::string& what) {
    if (!(extent < static_cast<double>(kMaxElements)))
        throw resize_error(node, field, what + " has more than 2^60 elements");
    return static_cast<int64_t>(extent);
}

// The common scale of keep_aspect_ratio_policy not_larger / not_smaller over
// the resized axes' static extents `in`.
double common_scale(Policy policy, const std::vector<int64_t>& in, const std::vector<size_t>& axes,
                    const std::vector<int64_t>& sizes) {
    double s = policy == Policy::not_larger ? INFINITY : 0;
    for (size_t k = 0; k < axes.size(); ++k) {
        const double r = static_cast<double>(sizes[k]) / static_cast<double>(in[axes[k]]);
        s = policy == Policy::not_larger ? std::min(s, r) : std::max(s, r);
    }
    return s;
}

// Plans every dim of a static input `in` (`what` describes the resize for messages).
std::vector<AxisPlan> plan_axes(const std::string& node, const std::vector<int64_t>& in,
                                const std::vector<size_t>& axes, const TargetValues& t, Policy policy,
                                const std::string& what) {
    std::vector<AxisPlan> plan(in.size());
    for (size_t d = 0; d < in.size(); ++d) plan[d].out = in[d];
    if (t.target != Target::sizes) {
        for (size_t k = 0; k < axes.size(); ++k)
            plan[axes[k]] = {t.scales[k],
                             scaled_extent(node, "scales", std::floor(t.scales[k] * double(in[axes[k]])), what)};
        return plan;
    }
    for (size_t k = 0; k < axes.size(); ++k)
        if (in[axes[k]] == 0 && t.sizes[k] != 0)
            throw resize_error(node, "sizes",
                               what + ": axis " + std::to_string(axes[k]) + " is empty and cannot grow to " +
                                   std::to_string(t.sizes[k]));
    if (policy == Policy::stretch) {
        for (size_t k = 0; k < axes.size(); ++k) {
            const int64_t n = in[axes[k]];
            plan[axes[k]] = {n == 0 ? 1.0 : double(t.sizes[k]) / double(n), t.sizes[k]};
        }
        return plan;
    }
    const double s = common_scale(policy, in, axes, t.sizes);
    for (size_t k = 0; k < axes.size(); ++k)
        plan[axes[k]] = {s, scaled_extent(node, "sizes", std::floor(s * double(in[axes[k]]) + 0.5), what)};
    return plan;
}

// ---- shape inference --------------------------------------------------------

void check_target_layout(const ShapeInferContext& ctx, Target target, size_t axes) {
    const std::vector<double> attr = ctx.attrs.get_floats("scales");
    if (target == Target::scales_attr) {
        if (attr.size() != axes)
            throw resize_error(ctx.node, "scales",
                               "without input 1 the `scales` attribute must hold one scale per resized axis (" +
                                   std::to_string(axes) + "), got " + std::to_string(attr.size()));
        return;
    }
    const Layout& l = ctx.inputs[1];
    const char* field = target == Target::sizes ? "sizes" : "scales";
    if (!attr.empty())
        throw resize_error(ctx.node, "scales", "scales given both as the attribute and as input 1 " + l.to_string());
    const bool type_ok = l.dtype == DataType::f32 || l.dtype == DataType::i32 || l.dtype == DataType::i64;
    if (!type_ok || l.shape.rank() != 1 || (l.shape[0].is_static() && l.shape[0].get_length() != int64_t(axes)))
        throw resize_error(ctx.node, field,
                           "input 1 (f32 scales or i32/i64 sizes) must be 1-D with one entry per resized axis (" +
                               std::to_string(axes) + "), got " + l.to_string());
}

void check_roi_layout(const ShapeInferContext& ctx, Coord coord, size_t axes) {
    const bool crop = coord == Coord::tf_crop_and_resize;
    if (ctx.inputs.size() < 3) {
        if (crop)
            throw resize_error(ctx.node, "roi",
                               "coordinate_transformation_mode tf_crop_and_resize needs the roi (input 2)");
        return;
    }
    const Layout& l = ctx.inputs[2];
    if (l.dtype != DataType::f32 || l.shape.rank() != 1 ||
        (l.shape[0].is_static() && l.shape[0].get_length() != int64_t(2 * axes)))
        throw resize_error(ctx.node, "roi",
                           "the roi (input 2) must be f32 [" + std::to_string(2 * axes) +
                               "] (starts, then ends of the resized axes), got " + l.to_string());
}

// The scales or sizes, checked; false while input 1's values are unknown.
bool read_target(const ShapeInferContext& ctx, Target target, size_t axes, TargetValues* t) {
    t->target = target;
    if (target == Target::scales_attr) {
        t->scales = ctx.attrs.get_floats("scales");
    } else {
        const HostTensor* v = ctx.value(1);
        if (v == nullptr) return false;
        if (target == Target::sizes) {
            t->sizes = v->to_int64();
        } else {
            for (size_t i = 0; i < v->count(); ++i) t->scales.push_back(v->get_as_double(i));
        }
    }
    const char* field = target == Target::sizes ? "sizes" : "scales";
    if (t->count() != axes)
        throw resize_error(ctx.node, field,
                           std::string(field) + " holds " + std::to_string(t->count()) + " values, expected " +
                               std::to_string(axes) + " (one per resized axis)");
    for (double s : t->scales)
        if (!(s > 0) || !std::isfinite(s))
            throw resize_error(ctx.node, "scales", "scales must be finite and > 0, got " + std::to_string(s));
    for (int64_t s : t->sizes)
        if (s < 0)
            throw resize_error(ctx.node, "sizes",
                               "sizes " + ints_to_string(t->sizes) + " holds the negative extent " + std::to_string(s));
    return true;
}

std::vector<Layout> infer_resize(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    if (!is_floating(data.dtype))
        throw resize_error(ctx.node, "input", "resize takes a floating-point input, got " + data.to_string());
    if (data.shape.rank() == 0) throw resize_error(ctx.node, "input", "resize takes at least one dim, got a scalar");
    const ResizeAttrs a = read_attrs(ctx.attrs);
    const std::vector<size_t> axes = resized_axes(ctx.node, ctx.attrs, data.shape);
    const Target target = target_of(ctx.inputs);
    check_target_layout(ctx, target, axes.size());
    check_roi_layout(ctx, a.coord, axes.size());
    if (a.policy != Policy::stretch && target != Target::sizes)
        throw resize_error(ctx.node, "keep_aspect_ratio_policy",
                           "keep_aspect_ratio_policy " + kPolicies[size_t(a.policy)] + " applies to sizes only");
    std::vector<Dimension> out(data.shape.begin(), data.shape.end());
    TargetValues t;
    if (!read_target(ctx, target, axes.size(), &t)) {   // unknown until input 1's producer runs
        for (size_t d : axes) out[d] = Dimension();
        return {Layout(PartialShape(std::move(out)), data.dtype)};
    }
    // Scales and stretched sizes size each axis alone; a common scale needs every resized dim.
    const bool per_axis = target != Target::sizes || a.policy == Policy::stretch;
    bool all_static = true;
    std::vector<int64_t> in(data.shape.rank(), 1);   // 1 stands for a dynamic dim
    for (size_t d : axes) {
        all_static = all_static && data.shape[d].is_static();
        if (data.shape[d].is_static()) in[d] = data.shape[d].get_length();
    }
    const std::vector<AxisPlan> plan = plan_axes(ctx.node, in, axes, t, a.policy, "resizing " + data.shape.to_string());
    for (size_t d : axes) {
        const bool fixed = target == Target::sizes ? per_axis || all_static : data.shape[d].is_static();
        out[d] = fixed ? Dimension(plan[d].out) : Dimension();
    }
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.min());
    size_t count = 0;
    if (!count_fits(known, &count))
        throw resize_error(ctx.node, target == Target::sizes ? "sizes" : "scales",
                           "resizing " + data.shape.to_string() + " gives more than 2^60 elements");
    return {Layout(PartialShape(std::move(out)), data.dtype)};
}

// ---- reference ----------------------------------------------------------------

// ONNX's filters: linear's triangle, cubic's convolution kernel with coefficient `a`.
double filter(Mode mode, double d, double a) {
    d = std::fabs(d);
    if (mode == Mode::linear) return std::max(0.0, 1 - d);
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

// Source coordinate of output coordinate x along an axis of extent `in`
// resized to `out`. As ONNX's reference, the output length in the formulas is
// the unfloored scale * in.
double source_coord(Coord c, double x, double scale, int64_t in, int64_t out, double roi0, double roi1) {
    const double n = double(in), width = scale * n;
    switch (c) {
        case Coord::half_pixel: return (x + 0.5) / scale - 0.5;
        case Coord::half_pixel_symmetric: return n / 2 * (1 - double(out) / width) + (x + 0.5) / scale - 0.5;
        case Coord::pytorch_half_pixel: return width > 1 ? (x + 0.5) / scale - 0.5 : 0;
        case Coord::align_corners: return width == 1 ? 0 : x * (n - 1) / (width - 1);
        case Coord::asymmetric: return x / scale;
        case Coord::tf_half_pixel_for_nn: return (x + 0.5) / scale;
        case Coord::tf_crop_and_resize:
            return roi0 * (n - 1) +
                   (width == 1 ? (roi1 - roi0) * (n - 1) / 2 : x * (roi1 - roi0) * (n - 1) / (width - 1));
    }
    return x;
}

int64_t nearest_index(Nearest m, double src) {
    switch (m) {
        case Nearest::round_prefer_floor: return int64_t(std::ceil(src - 0.5));
        case Nearest::round_prefer_ceil: return int64_t(std::floor(src + 0.5));
        case Nearest::floor: return int64_t(std::floor(src));
        case Nearest::ceil: return int64_t(std::ceil(src));
    }
    return 0;
}

struct Tap {
    int64_t index;   // clamped into the input: outside taps read the edge element
    double weight;
};

// What one output coordinate reads along one axis.
struct AxisTaps {
    bool outside = false;   // tf_crop_and_resize left the input: the extrapolation value
    std::vector<Tap> taps;
};

AxisTaps axis_taps(const ResizeAttrs& a, const AxisPlan& p, int64_t in, int64_t x, double roi0, double roi1) {
    const double src = source_coord(a.coord, double(x), p.scale, in, p.out, roi0, roi1);
    if (a.coord == Coord::tf_crop_and_resize && (src < 0 || src > double(in - 1))) return {true, {}};
    const auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
    if (a.mode == Mode::nearest) return {false, {{clamp(nearest_index(a.nearest, src)), 1.0}}};
    // Antialiasing widens the filter by 1/scale when downsampling.
    const double s = a.antialias ? std::min(p.scale, 1.0) : 1.0;
    const int64_t start = int64_t(std::floor((a.mode == Mode::linear ? -1 : -2) / s)) + 1;
    // The taps lie left of src first, so an integer src is the right one of the middle pair.
    const int64_t base = int64_t(std::ceil(src)) - 1;
    std::vector<Tap> raw;
    double sum = 0;
    for (int64_t i = start; i <= 1 - start; ++i) {
        const int64_t idx = base + i;
        const bool out_of_input = idx < 0 || idx >= in;
        const double w = a.exclude_outside && out_of_input ? 0.0 : filter(a.mode, (double(idx) - src) * s, a.cubic_a);
        sum += w;
        raw.push_back({idx, w});
    }
    const bool normalize = (a.antialias || a.exclude_outside) && sum != 0;
    AxisTaps t;
    for (const Tap& r : raw)
        if (r.weight != 0) t.taps.push_back({clamp(r.index), normalize ? r.weight / sum : r.weight});
    return t;
}

// Odometer step over `limits` (row-major); false after the last position.
bool next_position(std::vector<size_t>& pos, const std::vector<size_t>& limits) {
    for (size_t d = pos.size(); d-- > 0;) {
        if (++pos[d] < limits[d]) return true;
        pos[d] = 0;
    }
    return false;
}

double interpolate(const HostCall& call, const std::vector<std::vector<AxisTaps>>& taps, const std::vector<size_t>& c,
                   const std::vector<size_t>& in_strides, double extrapolation) {
    const size_t rank = c.size();
    std::vector<size_t> counts(rank);
    for (size_t d = 0; d < rank; ++d) {
        const AxisTaps& t = taps[d][c[d]];
        if (t.outside) return extrapolation;
        if (t.taps.empty()) return 0;   // every weight excluded
        counts[d] = t.taps.size();
    }
    double acc = 0;
    std::vector<size_t> k(rank, 0);
    do {
        double w = 1;
        size_t from = 0;
        for (size_t d = 0; d < rank; ++d) {
            const Tap& t = taps[d][c[d]].taps[k[d]];
            w *= t.weight;
            from += size_t(t.index) * in_strides[d];
        }
        acc += w * call.get(0, from);
    } while (next_position(k, counts));
    return acc;
}

TargetValues target_values(const HostCall& call) {
    TargetValues t;
    t.target = target_of(call.params().inputs);
    if (t.target == Target::scales_attr) {
        t.scales = call.attrs().get_floats("scales");
    } else if (t.target == Target::sizes) {
        t.sizes = call.get_ints(1);
    } else {
        for (size_t i = 0; i < call.in_shape(1).count(); ++i) t.scales.push_back(call.get(1, i));
    }
    return t;
}

void resize_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    if (out.count() == 0) return;
    const size_t rank = in.rank();
    const ResizeAttrs a = read_attrs(call.attrs());
    const std::vector<size_t> axes = resized_axes(call.node(), call.attrs(), PartialShape(in));
    const std::vector<int64_t> dims(in.begin(), in.end());
    const std::vector<AxisPlan> plan = plan_axes(call.node(), dims, axes, target_values(call), a.policy, "resize");
    std::vector<bool> resized(rank, false);
    std::vector<double> roi0(rank, 0), roi1(rank, 1);
    for (size_t k = 0; k < axes.size(); ++k) {
        resized[axes[k]] = true;
        if (call.num_inputs() < 3) continue;
        roi0[axes[k]] = call.get(2, k);
        roi1[axes[k]] = call.get(2, axes.size() + k);
    }
    std::vector<std::vector<AxisTaps>> taps(rank);
    for (size_t d = 0; d < rank; ++d)
        for (int64_t x = 0; x < int64_t(out[d]); ++x)
            taps[d].push_back(resized[d] ? axis_taps(a, plan[d], dims[d], x, roi0[d], roi1[d])
                                         : AxisTaps{false, {{x, 1.0}}});
    const std::vector<size_t> in_strides = strides_of(in);
    const std::vector<size_t> out_dims(out.begin(), out.end());
    std::vector<size_t> c(rank, 0);
    size_t o = 0;
    do {
        call.set(0, o++, interpolate(call, taps, c, in_strides, a.extrapolation));
    } while (next_position(c, out_dims));
}

// ---- OpenCL ---------------------------------------------------------------------

// A double as an OpenCL literal of the kernel's accumulation type.
std::string acc_literal(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "((FLOAT_ACC)(%.17g))", v);
    return buf;
}

// "{a,b,...}" over the 8 right-aligned kernel dims of a rank-`rank` tensor,
// `fill` before the tensor's dims.
template <typename T, typename F>
std::string aligned_list(size_t rank, T fill, F value_of) {
    std::string s = "{";
    for (size_t j = 0; j < kOclMaxRank; ++j) {
        if (j) s += ",";
        s += j < kOclMaxRank - rank ? fill : value_of(j - (kOclMaxRank - rank));
    }
    return s + "}";
}

JitDefines resize_defines(const KernelParams& p, bool) {
    const Attributes& attrs = *p.attrs;
    const ResizeAttrs a = read_attrs(attrs);
    const size_t rank = p.inputs.at(0).shape.rank();
    const std::vector<size_t> axes = resized_axes(p.node, attrs, p.inputs[0].shape);
    std::vector<int> pos(rank, -1);   // per dim: its index in scales / sizes / roi, -1 when not resized
    for (size_t k = 0; k < axes.size(); ++k) pos[axes[k]] = int(k);
    const std::vector<double> attr_scales = attrs.get_floats("scales");
    const auto scale_of = [&](size_t d) { return pos[d] < 0 ? std::string("1") : acc_literal(attr_scales[pos[d]]); };
    JitDefines j{jit_data_f16(p.inputs[0].dtype),
                 {"TARGET", std::to_string(int(target_of(p.inputs)))},
                 {"HAS_ROI", p.inputs.size() > 2 ? "1" : "0"},
                 {"NUM_AXES", std::to_string(axes.size())},
                 {"AXIS_POS", aligned_list(rank, std::string("-1"), [&](size_t d) { return std::to_string(pos[d]); })},
                 {"MODE", std::to_string(int(a.mode))},
                 {"COORD", std::to_string(int(a.coord))},
                 {"NEAREST", std::to_string(int(a.nearest))},
                 {"POLICY", std::to_string(int(a.policy))},
                 {"CUBIC_A", acc_literal(a.cubic_a)},
                 {"EXCLUDE_OUTSIDE", a.exclude_outside ? "1" : "0"},
                 {"ANTIALIAS", a.antialias ? "1" : "0"},
                 {"EXTRAPOLATION", acc_literal(a.extrapolation)}};
    if (!attr_scales.empty()) j.push_back({"ATTR_SCALES", aligned_list(rank, std::string("1"), scale_of)});
    return j;
}

OclKernelSpec resize_ocl_spec() {
    OclKernelSpec spec;
    spec.source = resize_cl;
    spec.kernel_name = "resize_ref";
    spec.defines = resize_defines;
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ---- ONNX import ------------------------------------------------------------------

// Input k of a node holds values: present and no empty 1-D tensor (ONNX marks
// an unused roi or scales with one).
bool holds_values(const ImportContext& c, size_t k) {
    if (!c.present(k)) return false;
    const PartialShape& s = c.layout(k).shape;
    return !(s.rank() == 1 && s[0].is_static() && s[0].get_length() == 0);
}

// Resize-10 and Upsample: asymmetric coordinates, nearest rounding down.
void set_legacy_attrs(ImportContext& c) {
    c.set("mode", c.s("mode", "nearest"));
    c.set("coordinate_transformation_mode", std::string("asymmetric"));
    c.set("nearest_mode", std::string("floor"));
}

// Resize-10 and Upsample-9: the data and the scales (input 1).
bool map_legacy_scales(ImportContext& c, const std::string& op) {
    if (!c.present(1)) return c.unsupported(op + " gives no scales (input 1)");
    set_legacy_attrs(c);
    c.use_inputs({0, 1});
    return true;
}

bool onnx_resize(ImportContext& c) {
    if (c.opset() < 11) return c.only_attrs({"mode"}) && map_legacy_scales(c, "Resize-10");
    if (!c.only_attrs({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                       "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"}))
        return false;
    for (const char* s : {"mode", "coordinate_transformation_mode", "nearest_mode", "keep_aspect_ratio_policy"})
        if (c.has(s)) c.set(s, c.s(s, ""));
    for (const char* b : {"exclude_outside", "antialias"})
        if (c.has(b)) c.set(b, c.i(b, 0) != 0);
    for (const char* f : {"cubic_coeff_a", "extrapolation_value"})
        if (c.has(f)) c.set(f, c.f(f, 0));
    if (c.has("axes")) c.set("axes", c.ints("axes"));
    const bool scales = holds_values(c, 2), sizes = holds_values(c, 3);
    if (scales && sizes)
        return c.unsupported("Resize gives both scales (input 2) and sizes (input 3); ONNX allows one");
    if (!scales && !sizes) return c.unsupported("Resize gives neither scales (input 2) nor sizes (input 3)");
    const size_t target = scales ? 2 : 3;
    if (c.s("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize") {
        c.use_inputs({0, target});
        return true;
    }
    if (!holds_values(c, 1)) return c.unsupported("Resize with tf_crop_and_resize gives no roi (input 1)");
    c.use_inputs({0, target, 1});
    return true;
}

bool onnx_upsample(ImportContext& c) {
    if (c.opset() < 7) return c.unsupported("Upsample before opset 7 (height_scale / width_scale) is not mapped");
    if (!c.only_attrs(c.opset() < 9 ? std::initializer_list<const char*>{"mode", "scales"}
                                    : std::initializer_list<const char*>{"mode"}))
        return false;
    if (c.opset() < 9) {
        set_legacy_attrs(c);
        c.set("scales", c.floats("scales"));
        c.use_inputs({0});
        return true;
    }
    return map_legacy_scales(c, "Upsample-9");
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Resize", 1, 4, onnx_resize,
                      "every mode and coordinate mode; roi only with tf_crop_and_resize; opset 10 as asymmetric / "
                      "floor"),
            onnx_rule("Upsample", 1, 2, onnx_upsample, "asymmetric coordinates, nearest rounds down; opset >= 7")};
}

std::vector<AttrSpec> resize_attrs() {
    return {attr_string("mode", "nearest", kModes, "interpolation: nearest, linear or cubic"),
            attr_string("coordinate_transformation_mode", "half_pixel", kCoords,
                        "how an output coordinate maps to an input coordinate"),
            attr_string("nearest_mode", "round_prefer_floor", kNearest, "rounding of mode nearest"),
            attr_float("cubic_coeff_a", -0.75, "the cubic kernel's coefficient a"),
            attr_bool("exclude_outside", false, "taps outside the input get weight 0, the rest renormalised"),
            attr_float("extrapolation_value", 0.0, "tf_crop_and_resize: the value outside the input"),
            attr_bool("antialias", false, "linear / cubic: widen the filter by 1/scale when downsampling"),
            attr_ints("axes", std::vector<int64_t>{}, "the resized axes (empty: every axis)"),
            attr_string("keep_aspect_ratio_policy", "stretch", kPolicies,
                        "sizes: stretch, or one common scale that fits inside / covers the sizes"),
            attr_floats("scales", std::vector<double>{}, "the scales when input 1 is absent (Upsample-7)")};
}

void register_resize(ModuleRegistrar& reg) {
    OpDefinition def = op_def("resize", "The input resampled along some axes: nearest, linear or cubic (ONNX Resize)",
                              1, 3, resize_attrs(), infer_resize);
    def.value_inputs = {1};
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> floats = {DataType::f32, DataType::f16};
    add_host_impls(reg, "resize", resize_kernel, host_options(floats));
    add_ocl_impls(reg, "resize", resize_ocl_spec(), ocl_options(floats, validate_broadcast_rank));
}

}   // namespace

DYNRT_MODULE("resize", register_resize)
