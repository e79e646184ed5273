// non_max_suppression: greedy non-maximum suppression per (batch, class) (ONNX
// NonMaxSuppression, opsets 10 and 11).
//
// Inputs: boxes [B, N, 4] f32, scores [B, C, N] f32 and, optionally, one-element
// tensors max_output_boxes_per_class (i64), iou_threshold and score_threshold
// (f32), read when the kernel runs; an absent one takes its attribute. Output:
// selected_indices [count, 3] i64, rows (batch, class, box) in batch, then
// class, then selection order. count depends on the data, so the op declares
// OpTraits::data_dependent_output: shape inference gives the bound
// [B * C * N, 3], the buffer is sized for it and the kernel reports the actual
// shape. The OpenCL impls (non_max_suppression.cl) select per (batch, class)
// pair, scan the pairs' counts and write the rows, reporting the count (or a
// bad parameter) through the SDK's report buffer (dynrt/ocl_impl.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "non_max_suppression_cl.hpp"

namespace {

using namespace dynrt;

constexpr size_t kMaxBoxesInput = 2, kIouInput = 3, kScoreInput = 4;
const char* const kInputNames[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};

std::string input_name(size_t i) { return std::string(kInputNames[i]) + " (input " + std::to_string(i) + ")"; }

// ---- shape inference ---------------------------------------------------------

// Optional inputs 2..4 hold one value each: i64 (or i32) for the box count,
// f32 for the thresholds.
void check_scalar_input(const Layout& l, size_t i) {
    const bool count_input = i == kMaxBoxesInput;
    const bool dtype_ok =
        count_input ? (l.dtype == DataType::i64 || l.dtype == DataType::i32) : l.dtype == DataType::f32;
    if (!dtype_ok)
        throw Error(input_name(i) + " must be " + (count_input ? "i64 or i32" : "f32") + ", got " + l.to_string());
    if (l.shape.rank() > 1 || (l.is_static() && l.count() != 1))
        throw Error(input_name(i) + " must hold one value (shape [] or [1]), got " + l.to_string());
}

// Dims that must agree between boxes and scores: both static and different is an error.
void check_same_dim(const Dimension& box_dim, const Dimension& score_dim, const std::string& what, const Layout& boxes,
                    const Layout& scores) {
    if (box_dim.is_static() && score_dim.is_static() && box_dim.get_length() != score_dim.get_length())
        throw Error(what + " differs between boxes " + boxes.shape.to_string() + " and scores " +
                    scores.shape.to_string());
}

void check_attrs(const Attributes& a) {
    const int64_t center = a.get_int("center_point_box");
    if (center != 0 && center != 1)
        throw attr_error("center_point_box", "center_point_box must be 0 or 1, got " + std::to_string(center));
    if (a.get_int("max_output_boxes_per_class") < 0)
        throw attr_error("max_output_boxes_per_class", "max_output_boxes_per_class must be >= 0, got " +
                                                           std::to_string(a.get_int("max_output_boxes_per_class")));
    const double iou = a.get_float("iou_threshold");
    if (!(iou >= 0.0 && iou <= 1.0))
        throw attr_error("iou_threshold", "iou_threshold must be in [0, 1], got " + std::to_string(iou));
}

// B * C * N: static when all three are, bounded when all three are bounded.
Dimension selected_bound(const Dimension& b, const Dimension& c, const Dimension& n) {
    if (b.is_static() && c.is_static() && n.is_static())
        return Dimension(checked_mul(checked_mul(b.get_length(), c.get_length(), "batch * classes"), n.get_length(),
                                     "batch * classes * boxes"));
    if (b.max() == Dimension::kUnbounded || c.max() == Dimension::kUnbounded || n.max() == Dimension::kUnbounded)
        return Dimension::dynamic();
    return Dimension(0,
                     checked_mul(checked_mul(b.max(), c.max(), "batch * classes"), n.max(), "batch * classes * boxes"));
}

std::vector<Layout> infer_nms(const ShapeInferContext& ctx) {
    check_attrs(ctx.attrs);
    const Layout& boxes = ctx.inputs.at(0);
    const Layout& scores = ctx.inputs.at(1);
    expect_rank(boxes, 3, input_name(0));
    expect_rank(scores, 3, input_name(1));
    for (size_t i : {0, 1})
        if (ctx.inputs[i].dtype != DataType::f32)
            throw Error(input_name(i) + " must be f32, got " + ctx.inputs[i].to_string());
    const Dimension& corners = boxes.shape[2];
    if (corners.is_static() && corners.get_length() != 4)
        throw Error(input_name(0) + " must be [batch, boxes, 4], got " + boxes.shape.to_string());
    check_same_dim(boxes.shape[0], scores.shape[0], "the batch (dim 0)", boxes, scores);
    check_same_dim(boxes.shape[1], scores.shape[2], "the box count (boxes dim 1, scores dim 2)", boxes, scores);
    for (size_t i = kMaxBoxesInput; i < ctx.inputs.size(); ++i) check_scalar_input(ctx.inputs[i], i);
    const Dimension& n = boxes.shape[1].is_static() ? boxes.shape[1] : scores.shape[2];
    const Dimension& b = boxes.shape[0].is_static() ? boxes.shape[0] : scores.shape[0];
    return {Layout(PartialShape{selected_bound(b, scores.shape[1], n), Dimension(3)}, DataType::i64)};
}

// ---- reference kernel -----------------------------------------------------------

struct NmsParams {
    int64_t max_per_class = 0;
    float iou_threshold = 0;
    float score_threshold = 0;
    bool center_point_box = false;
};

// Parameters read at run time that the op refuses, on every device.
Error bad_max_boxes(int64_t v) {
    return Error(input_name(kMaxBoxesInput) + " is " + std::to_string(v) + "; it must be >= 0");
}
Error bad_iou_threshold(float v) {
    return Error(input_name(kIouInput) + " is " + std::to_string(v) + "; it must be in [0, 1]");
}

// The run's parameters: present inputs override the attributes; values out of
// range are errors naming the input.
NmsParams read_params(const HostCall& call) {
    const Attributes& a = call.attrs();
    NmsParams p;
    p.center_point_box = a.get_int("center_point_box") == 1;
    const size_t n = call.num_inputs();
    p.max_per_class =
        n > kMaxBoxesInput ? call.get_ints(kMaxBoxesInput).at(0) : a.get_int("max_output_boxes_per_class");
    p.iou_threshold = n > kIouInput ? call.in<float>(kIouInput)[0] : static_cast<float>(a.get_float("iou_threshold"));
    p.score_threshold =
        n > kScoreInput ? call.in<float>(kScoreInput)[0] : static_cast<float>(a.get_float("score_threshold"));
    if (p.max_per_class < 0) throw bad_max_boxes(p.max_per_class);
    if (!(p.iou_threshold >= 0.0f && p.iou_threshold <= 1.0f)) throw bad_iou_threshold(p.iou_threshold);
    return p;
}

struct Corners {
    float y_min, x_min, y_max, x_max;
};

// Box `v` (4 values) as ordered corners: [y1, x1, y2, x2] with the corners of
// either diagonal in any order, or [x_center, y_center, width, height].
Corners corners_of(const float* v, bool center_point_box) {
    if (center_point_box) return {v[1] - v[3] * 0.5f, v[0] - v[2] * 0.5f, v[1] + v[3] * 0.5f, v[0] + v[2] * 0.5f};
    return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

// IoU(a, b) > threshold, in f32 as the data, without a division (inter >
// threshold * union), step by step as the OpenCL kernel does, so that every
// impl decides a pair near the threshold alike. Disjoint boxes and boxes
// without area never suppress.
bool overlaps(const Corners& a, const Corners& b, float threshold) {
    const float h = std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min);
    const float w = std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min);
    if (h <= 0 || w <= 0) return false;
    const float inter = h * w;
    const float area_a = (a.y_max - a.y_min) * (a.x_max - a.x_min);
    const float area_b = (b.y_max - b.y_min) * (b.x_max - b.x_min);
    const float uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter > threshold * uni;
}

// Greedy NMS of one (batch, class): boxes above the score threshold by
// descending score (ties: lower box index first), each kept unless it overlaps
// a kept box by more than the IoU threshold, until max_per_class are kept.
std::vector<size_t> select_boxes(const float* boxes, const float* scores, size_t n, const NmsParams& p) {
    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i)
        if (scores[i] > p.score_threshold) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return scores[i] > scores[j]; });
    std::vector<size_t> kept;
    std::vector<Corners> kept_boxes;
    for (size_t i : order) {
        if (kept.size() == static_cast<size_t>(p.max_per_class)) break;
        const Corners box = corners_of(boxes + i * 4, p.center_point_box);
        const bool suppressed = std::any_of(kept_boxes.begin(), kept_boxes.end(),
                                            [&](const Corners& k) { return overlaps(k, box, p.iou_threshold); });
        if (suppressed) continue;
        kept.push_back(i);
        kept_boxes.push_back(box);
    }
    return kept;
}

void nms_kernel(HostCall& call) {
    const NmsParams p = read_params(call);
    const Shape& s = call.in_shape(1);
    const auto batches = static_cast<size_t>(s[0]), classes = static_cast<size_t>(s[1]), n = static_cast<size_t>(s[2]);
    const float* boxes = call.in<float>(0);
    const float* scores = call.in<float>(1);
    int64_t* out = call.out<int64_t>(0);
    size_t rows = 0;
    for (size_t b = 0; b < batches; ++b)
        for (size_t c = 0; c < classes; ++c)
            for (size_t i : select_boxes(boxes + b * n * 4, scores + (b * classes + c) * n, n, p)) {
                out[rows * 3] = static_cast<int64_t>(b);
                out[rows * 3 + 1] = static_cast<int64_t>(c);
                out[rows * 3 + 2] = static_cast<int64_t>(i);
                ++rows;
            }
    call.set_output_shape(0, Shape{static_cast<int64_t>(rows), 3});
}

// ---- OpenCL ------------------------------------------------------------------------

// Codes of a bad parameter in report[1] (non_max_suppression.cl).
constexpr int32_t kBadMaxCode = 1, kBadIouCode = 2;

// Batch * classes * boxes of scores' static shape.
uint64_t scratch_ints(const Shape& scores) {
    return static_cast<uint64_t>(scores[0]) * static_cast<uint64_t>(scores[1]) * static_cast<uint64_t>(scores[2]);
}

// Counts, rows and positions in the pairs' areas are ints.
std::string int_range_problem(const Shape& scores) {
    if (scratch_ints(scores) <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return {};
    return "scores " + scores.to_string() + " has more than 2^31-1 elements (the OpenCL kernels count in int)";
}

std::string check_ocl(const KernelParams& p) {
    return p.inputs.at(1).is_static() ? int_range_problem(p.inputs[1].get_shape()) : std::string();
}

std::string float_literal(double v) {
    return std::isinf(v) ? (v < 0 ? "(-INFINITY)" : "INFINITY") : jit_float_literal(v);
}

JitDefines ocl_defines(const KernelParams& p, bool) {
    const Attributes& a = *p.attrs;
    const size_t n = p.inputs.size();
    auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
    return {{"CENTER_POINT_BOX", std::to_string(a.get_int("center_point_box"))},
            {"HAS_MAX_INPUT", flag(n > kMaxBoxesInput)},
            {"HAS_IOU_INPUT", flag(n > kIouInput)},
            {"HAS_SCORE_INPUT", flag(n > kScoreInput)},
            {"MAX_BOXES_ATTR", std::to_string(a.get_int("max_output_boxes_per_class")) + "L"},
            {"IOU_ATTR", float_literal(a.get_float("iou_threshold"))},
            {"SCORE_ATTR", float_literal(a.get_float("score_threshold"))},
            {"BAD_MAX_CODE", std::to_string(kBadMaxCode)},
            {"BAD_IOU_CODE", std::to_string(kBadIouCode)}};
}

size_t pairs_of(const KernelParams& p) { return dims_product(p.inputs.at(1).get_shape(), 0, 2); }

// report: [0] the rows, [1] a bad parameter's code, [2] and [3] its value's
// low and high 32 bits (an f32's bits for the IoU threshold).
std::vector<Shape> reported_shape(const KernelParams&, const std::vector<int32_t>& r) {
    if (r[1] == kBadMaxCode)
        throw bad_max_boxes(static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(r[3])) << 32) |
                                                 static_cast<uint32_t>(r[2])));
    if (r[1] == kBadIouCode) {
        float v = 0;
        std::memcpy(&v, &r[2], sizeof v);
        throw bad_iou_threshold(v);
    }
    return {Shape{r[0], 3}};
}

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = non_max_suppression_cl;
    spec.defines = ocl_defines;
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{
            {"nms_select",
             {OclArgRef::inputs(), OclArgRef::scratch(0), OclArgRef::scratch(1), OclArgRef::scratch(2),
              OclArgRef::report()}},
            {"nms_scan", {OclArgRef::scratch(2), OclArgRef::report()}},
            {"nms_write", {OclArgRef::scratch(0), OclArgRef::scratch(2), OclArgRef::output(0)}}};
    };
    // The flow runs no kernel for an empty bound, so there is a pair.
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const size_t pairs = pairs_of(p);
        runs[0].dispatch = dispatch_1d(pairs, l);
        runs[1].dispatch = dispatch_1d(1, l);
        runs[2].dispatch = dispatch_1d(pairs, l);
    };
    // order and tmp: BOXES ints per pair; counts: one per pair and the total.
    spec.scratch_bytes = [](const KernelParams& p) {
        const Shape scores = p.inputs.at(1).get_shape();
        const std::string problem = int_range_problem(scores);
        if (!problem.empty()) throw Error(problem);
        const size_t area = scratch_ints(scores) * sizeof(int32_t);
        return std::vector<size_t>{area, area, (pairs_of(p) + 1) * sizeof(int32_t)};
    };
    spec.report_ints = 4;
    spec.report_shapes = reported_shape;
    return spec;
}

// ---- ONNX import ---------------------------------------------------------------

// Inputs are positional: an absent optional input followed by a present one
// leaves a gap, so from the first gap on a present input must be constant and
// becomes its attribute.
bool onnx_nms(ImportContext& c) {
    if (!c.only_attrs({"center_point_box"})) return false;
    c.set("center_point_box", c.i("center_point_box", 0));
    c.use_inputs({0, 1});
    bool gap = false;
    for (size_t k = kMaxBoxesInput; k <= kScoreInput; ++k) {
        if (!c.present(k)) {
            gap = true;
            continue;
        }
        if (!gap) {
            c.use_inputs({k});
            continue;
        }
        const HostTensor* v = c.value(k);
        if (v == nullptr || v->count() != 1)
            return c.unsupported("NonMaxSuppression with " + input_name(k) +
                                 " after an absent optional input, and no known single value for it");
        if (k == kMaxBoxesInput) c.set(kInputNames[k], v->to_int64().at(0));
        else c.set(kInputNames[k], v->get_as_double(0));
    }
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("NonMaxSuppression", 2, 5, onnx_nms,
                      "`center_point_box`; max_output_boxes_per_class, iou_threshold, score_threshold as inputs 2-4 "
                      "(read at run time)")};
}

void register_nms(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "non_max_suppression", "Greedy non-maximum suppression per batch and class, [count, 3] i64 (batch, class, box)",
        2, 5,
        {attr_int("center_point_box", 0, "0: boxes are [y1, x1, y2, x2] corners; 1: [x_center, y_center, w, h]"),
         attr_int("max_output_boxes_per_class", 0, "boxes kept per batch and class when input 2 is absent; 0: none"),
         attr_float("iou_threshold", 0.0, "IoU above which a box is suppressed, in [0, 1] (input 3 absent)"),
         attr_float("score_threshold", -std::numeric_limits<double>::infinity(),
                    "boxes scoring at most this are dropped (input 4 absent); -inf: none")},
        infer_nms);
    def.traits.data_dependent_output = true;
    def.imports = onnx_rules();
    reg.add_op(def);
    // The output layout changes with the data: the kernel reports it, so the
    // static impl (keyed on the input layouts) serves networks built with
    // static impls too.
    add_host_impls(reg, "non_max_suppression", nms_kernel);
    add_ocl_multi_impls(reg, "non_max_suppression", ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("non_max_suppression", register_nms)
