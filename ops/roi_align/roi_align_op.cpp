// roi_align: pools each region of interest of x [N, C, H, W] into an
// output_height x output_width grid of bins by bilinear sampling (ONNX
// RoiAlign): y [R, C, oh, ow] for rois [R, 4] (x1, y1, x2, y2, scaled by
// spatial_scale) on the batch elements batch_indices [R].
//
// Each bin takes sampling_ratio^2 samples (adaptive when 0: ceil of the bin's
// extent per axis) at the centres of a regular sub-grid and averages them
// (avg) or keeps the largest (max). A sample more than one element outside x
// is 0; one nearer is clamped to the edge. As in the ONNX reference and
// onnxruntime, max mode takes the largest of the four weighted corner values
// of each sample, not of the interpolated values. Sample positions are
// computed in double, so the adaptive sample counts follow the exact extents.
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
#include "roi_align_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "roi_align";

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, kOp, field));
}

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

void check_attrs(const ShapeInferContext& ctx) {
    for (const char* a : {"output_height", "output_width"})
        if (ctx.attrs.get_int(a) < 1)
            throw node_error(ctx, a, std::string(a) + " must be >= 1, got " + std::to_string(ctx.attrs.get_int(a)));
    if (ctx.attrs.get_int("sampling_ratio") < 0)
        throw node_error(
            ctx, "sampling_ratio",
            "sampling_ratio must be >= 0 (0: adaptive), got " + std::to_string(ctx.attrs.get_int("sampling_ratio")));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const Layout& rois = ctx.inputs.at(1);
    const Layout& batch = ctx.inputs.at(2);
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "roi_align takes a floating-point x, got " + x.to_string());
    if (x.shape.rank() != 4) throw node_error(ctx, "x", "x " + x.to_string() + " must be 4-D (N, C, H, W)");
    for (size_t d : {2, 3})
        if (x.shape[d].is_static() && x.shape[d].get_length() == 0)
            throw node_error(ctx, "x", "x " + x.to_string() + " has an empty spatial dim: there is nothing to sample");
    if (rois.dtype != x.dtype)
        throw node_error(ctx, "rois", "rois " + rois.to_string() + " must have the type of x " + x.to_string());
    const Dimension& four = rois.shape.rank() == 2 ? rois.shape[1] : Dimension(4);
    if (rois.shape.rank() != 2 || (four.is_static() && four.get_length() != 4))
        throw node_error(ctx, "rois", "rois " + rois.to_string() + " must be [num_rois, 4]");
    if (!is_index_type(batch.dtype) || batch.shape.rank() != 1)
        throw node_error(ctx, "batch_indices", "batch_indices " + batch.to_string() + " must be 1-D of i32 or i64");
    const Dimension& r = rois.shape[0];
    const Dimension& b = batch.shape[0];
    if (r.is_static() && b.is_static() && r != b)
        throw node_error(ctx, "batch_indices",
                         "batch_indices " + batch.to_string() + " must have one index per roi of " + rois.to_string());
    check_attrs(ctx);
    return {Layout(PartialShape({r.is_static() ? r : b, x.shape[1], Dimension(ctx.attrs.get_int("output_height")),
                                 Dimension(ctx.attrs.get_int("output_width"))}),
                   x.dtype)};
}

// ---- reference ------------------------------------------------------------

// Samples per bin and axis at most: a bin far wider than any image, and a
// count that a non-finite or absurd box cannot push past int64.
constexpr double kMaxSamples = 65536;

// One roi's bins: the first bin's corner, the bin extents and the samples per bin and axis.
struct RoiGrid {
    double y0, x0, bin_h, bin_w;
    double samples_h, samples_w;
};

// Adaptive samples along one axis: ceil(extent / bins), none for an empty or inverted roi.
double adaptive_samples(double extent, double bins) {
    const double s = std::ceil(extent / bins);
    return s <= 0 ? 0 : s;   // NaN stays NaN: an error, not 0 samples
}

RoiGrid roi_grid(const Attributes& a, const double box[4]) {
    const bool half_pixel = a.get_string("coordinate_transformation_mode") == "half_pixel";
    const double scale = a.get_float("spatial_scale"), offset = half_pixel ? 0.5 : 0.0;
    const double x0 = box[0] * scale - offset, y0 = box[1] * scale - offset;
    double w = box[2] * scale - offset - x0, h = box[3] * scale - offset - y0;
    if (!half_pixel) {   // output_half_pixel makes malformed rois 1 x 1
        w = std::max(w, 1.0);
        h = std::max(h, 1.0);
    }
    const auto oh = static_cast<double>(a.get_int("output_height"));
    const auto ow = static_cast<double>(a.get_int("output_width"));
    const auto ratio = static_cast<double>(a.get_int("sampling_ratio"));
    return {y0,
            x0,
            h / oh,
            w / ow,
            ratio > 0 ? ratio : adaptive_samples(h, oh),
            ratio > 0 ? ratio : adaptive_samples(w, ow)};
}

// Position of a sample along an axis of `size` elements: false when it lies
// more than one element outside; else the low neighbour and the fraction
// towards the high one (clamped at the edges).
bool sample_axis(double v, int64_t size, int64_t& low, double& frac) {
    if (!(v >= -1.0 && v <= static_cast<double>(size))) return false;   // NaN too
    v = std::max(v, 0.0);
    low = static_cast<int64_t>(v);
    if (low >= size - 1) {
        low = size - 1;
        v = static_cast<double>(low);
    }
    frac = v - static_cast<double>(low);
    return true;
}

Error samples_error(const HostCall& call, size_t roi, const RoiGrid& g) {
    return Error("roi " + std::to_string(roi) + " needs " + std::to_string(g.samples_h) + " x " +
                     std::to_string(g.samples_w) + " samples per bin (at most " + std::to_string(kMaxSamples) +
                     " per axis): its box or spatial_scale is too large or not finite",
                 node_context(call.node(), kOp, "rois"));
}

// The error of every impl for a batch index outside [0, N).
Error batch_error(const std::string& node, const Shape& x, int64_t value, size_t roi) {
    return Error("batch_indices[" + std::to_string(roi) + "] = " + std::to_string(value) + " is outside [0, " +
                     std::to_string(x[0]) + ") for x " + x.to_string(),
                 node_context(node, kOp, "batch_indices"));
}

void reference(HostCall& call) {
    const Shape& xs = call.in_shape(0);
    const int64_t channels = xs[1], height = xs[2], width = xs[3];
    const int64_t oh = call.attrs().get_int("output_height"), ow = call.attrs().get_int("output_width");
    const bool max_mode = call.attrs().get_string("mode") == "max";
    const std::vector<int64_t> batch = call.get_ints(2);
    for (size_t r = 0; r < batch.size(); ++r)
        if (batch[r] < 0 || batch[r] >= xs[0]) throw batch_error(call.node(), xs, batch[r], r);
    size_t o = 0;
    for (size_t r = 0; r < batch.size(); ++r) {
        const double box[4] = {call.get(1, r * 4), call.get(1, r * 4 + 1), call.get(1, r * 4 + 2),
                               call.get(1, r * 4 + 3)};
        const RoiGrid g = roi_grid(call.attrs(), box);
        if (!(g.samples_h <= kMaxSamples && g.samples_w <= kMaxSamples)) throw samples_error(call, r, g);
        const auto samples_h = static_cast<int64_t>(g.samples_h), samples_w = static_cast<int64_t>(g.samples_w);
        const double count = static_cast<double>(std::max<int64_t>(samples_h * samples_w, 1));
        for (int64_t c = 0; c < channels; ++c) {
            const size_t plane = static_cast<size_t>((batch[r] * channels + c) * height * width);
            const auto at = [&](int64_t y, int64_t x) {
                return call.get(0, plane + static_cast<size_t>(y * width + x));
            };
            for (int64_t ph = 0; ph < oh; ++ph)
                for (int64_t pw = 0; pw < ow; ++pw, ++o) {
                    double sum = 0, best = 0;
                    bool any = false;
                    for (int64_t iy = 0; iy < samples_h; ++iy)
                        for (int64_t ix = 0; ix < samples_w; ++ix) {
                            const double y = g.y0 + (ph + (iy + 0.5) / g.samples_h) * g.bin_h;
                            const double x = g.x0 + (pw + (ix + 0.5) / g.samples_w) * g.bin_w;
                            int64_t yl = 0, xl = 0;
                            double ly = 0, lx = 0;
                            double v[4] = {0, 0, 0, 0};
                            if (sample_axis(y, height, yl, ly) && sample_axis(x, width, xl, lx)) {
                                const int64_t yh = std::min(yl + 1, height - 1), xh = std::min(xl + 1, width - 1);
                                v[0] = (1 - ly) * (1 - lx) * at(yl, xl);
                                v[1] = (1 - ly) * lx * at(yl, xh);
                                v[2] = ly * (1 - lx) * at(yh, xl);
                                v[3] = ly * lx * at(yh, xh);
                            }
                            const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                            best = any ? std::max(best, m) : m;
                            any = true;
                            sum += v[0] + v[1] + v[2] + v[3];
                        }
                    call.set(0, o, max_mode ? best : sum / count);
                }
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

std::string check_inputs(const KernelParams& p) {
    if (!is_index_type(p.inputs.at(2).dtype))
        return std::string("batch_indices type ") + to_string(p.inputs.at(2).dtype) + " is not i32 or i64";
    return {};
}

// The report of roi_align_check holds the first roi + 1 whose batch index is
// bad (0: none) and that index's low and high 32 bits, so the roi count must
// stay below 2^31 - 1.
std::string check_ocl_inputs(const KernelParams& p) {
    const Dimension& rois = p.inputs.at(2).shape[0];
    if (rois.is_static() && rois.get_length() >= INT32_MAX) return "2^31 - 1 rois or more";
    return check_inputs(p);
}

// The work-group of roi_align_check (a power of two, at most the kernel's
// local buffer).
constexpr size_t kCheckGroup = 64;

OclDispatch check_dispatch(const KernelParams& p, const OclDeviceLimits& limits) {
    OclDispatch d;
    if (p.inputs.at(2).count() == 0) {
        d.gws[0] = 0;   // no rois: nothing to check, the report stays zero
        return d;
    }
    size_t g = kCheckGroup;
    while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
    d.gws[0] = d.lws[0] = g;
    return d;
}

void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const uint64_t bits = uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1));
    throw batch_error(p.node, p.inputs.at(0).get_shape(), static_cast<int64_t>(bits), size_t(report[0]) - 1);
}

// Two stages: roi_align_check (one work-group finds the first bad batch index
// and reports it, checked by the host after the run) and roi_align_ref (one
// work-item per output element; a bad index writes 0 there and reads nothing).
OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = roi_align_cl;
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{{"roi_align_check", {OclArgRef::input(2), OclArgRef::report()}},
                                     {"roi_align_ref", {OclArgRef::inputs(), OclArgRef::outputs()}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = check_dispatch(p, l);
        runs[1].dispatch = dispatch_1d(p.outputs.at(0).count(), l);
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    spec.defines = [](const KernelParams& p, bool) {
        const Attributes& a = *p.attrs;
        return JitDefines{{"POOLED_H", std::to_string(a.get_int("output_height"))},
                          {"POOLED_W", std::to_string(a.get_int("output_width"))},
                          {"SAMPLING_RATIO", std::to_string(a.get_int("sampling_ratio"))},
                          {"SPATIAL_SCALE", jit_float_literal(a.get_float("spatial_scale"))},
                          {"HALF_PIXEL", a.get_string("coordinate_transformation_mode") == "half_pixel" ? "1" : "0"},
                          {"MAX_MODE", a.get_string("mode") == "max" ? "1" : "0"},
                          {"MAX_SAMPLES", std::to_string(static_cast<int64_t>(kMaxSamples))},
                          {"CHECK_GROUP", std::to_string(kCheckGroup)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// RoiAlign-10 has no coordinate_transformation_mode: it samples as
// output_half_pixel does; RoiAlign-16 defaults to half_pixel.
bool onnx_roi_align(ImportContext& c) {
    if (!c.only_attrs({"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale",
                       "coordinate_transformation_mode"}))
        return false;
    if (c.opset() < 16 && c.has("coordinate_transformation_mode"))
        return c.unsupported("RoiAlign before opset 16 has no coordinate_transformation_mode");
    c.set("mode", c.s("mode", "avg"));
    c.set("output_height", c.i("output_height", 1));
    c.set("output_width", c.i("output_width", 1));
    c.set("sampling_ratio", c.i("sampling_ratio", 0));
    c.set("spatial_scale", c.f("spatial_scale", 1.0));
    c.set("coordinate_transformation_mode",
          c.s("coordinate_transformation_mode", c.opset() < 16 ? "output_half_pixel" : "half_pixel"));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_roi_align(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Bilinear pooling of regions of interest into fixed-size bins (ONNX RoiAlign)", 3, 3,
        {attr_string("mode", std::string("avg"), {"avg", "max"}, "pooling of a bin's samples"),
         attr_int("output_height", 1, "bins per roi along H (>= 1)"),
         attr_int("output_width", 1, "bins per roi along W (>= 1)"),
         attr_int("sampling_ratio", 0, "samples per bin and axis; 0: ceil(bin extent)"),
         attr_float("spatial_scale", 1.0, "factor from roi coordinates to x's"),
         attr_string("coordinate_transformation_mode", std::string("half_pixel"), {"half_pixel", "output_half_pixel"},
                     "half_pixel shifts roi coordinates by -0.5; output_half_pixel does not and makes rois >= 1 x 1")},
        infer);
    def.imports = {onnx_rule("RoiAlign", 3, 3, onnx_roi_align,
                             "every attribute; output_half_pixel before opset 16; batch_indices as input 2")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, kOp, reference, host_options(dtypes, check_inputs));
    add_ocl_multi_impls(reg, kOp, ocl_spec(), ocl_options(dtypes, check_ocl_inputs));
}

}   // namespace

DYNRT_MODULE("roi_align", register_roi_align)
