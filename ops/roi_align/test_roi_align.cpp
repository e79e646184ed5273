// roi_align: shape-inference table, hand-computed values (avg and max modes,
// both coordinate modes, samples outside x, batch indices out of range an
// error on the host and on the device, static and shape-agnostic), every impl
// against the reference over modes x sampling ratios x dtypes, and one
// instance fed changing roi counts.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

Attributes roi_attrs(const std::string& mode, const std::string& ctm, int64_t oh, int64_t ow, int64_t ratio,
                     double scale = 1.0) {
    return attrs({{"mode", mode},
                  {"coordinate_transformation_mode", ctm},
                  {"output_height", oh},
                  {"output_width", ow},
                  {"sampling_ratio", ratio},
                  {"spatial_scale", scale}});
}

// ---- 1. shape inference ------------------------------------------------------

TEST(RoiAlignShape, OutputIsRoisByChannelsByBins) {
    const Dimension dyn;
    const Attributes a = roi_attrs("avg", "half_pixel", 5, 3, 0);
    test::expect_shapes("roi_align",
                        {
                            {{f32({2, 3, 10, 10}), f32({7, 4}), i64({7})}, a, {f32({7, 3, 5, 3})}},
                            {{f32({dyn, dyn, dyn, dyn}), f32({dyn, 4}), i64({dyn})}, a, {f32({dyn, dyn, 5, 3})}},
                            {{f32({1, 2, 4, 4}), f32({dyn, dyn}), Layout({6}, DataType::i32)}, a, {f32({6, 2, 5, 3})}},
                            {{Layout({1, 2, 4, 4}, DataType::f16), Layout({0, 4}, DataType::f16), i64({0})},
                             roi_attrs("max", "output_half_pixel", 1, 1, 2),
                             {Layout({0, 2, 1, 1}, DataType::f16)}},
                        });
}

TEST(RoiAlignShape, BadInputsAndAttributesAreErrorsNamingThem) {
    const Attributes a = roi_attrs("avg", "half_pixel", 2, 2, 0);
    const Layout x = f32({1, 3, 8, 8});
    test::expect_shapes(
        "roi_align",
        {
            {{f32({3, 8, 8}), f32({2, 4}), i64({2})}, a, {}, {"node 'node'", "x f32[3,8,8]", "4-D"}},
            {{f32({1, 3, 0, 8}), f32({2, 4}), i64({2})}, a, {}, {"x", "empty spatial dim"}},
            {{Layout({1, 3, 8, 8}, DataType::i32), f32({2, 4}), i64({2})}, a, {}, {"x", "floating"}},
            {{x, f32({2, 5}), i64({2})}, a, {}, {"rois", "[2,5]", "[num_rois, 4]"}},
            {{x, f32({8}), i64({2})}, a, {}, {"rois", "[num_rois, 4]"}},
            {{x, Layout({2, 4}, DataType::f16), i64({2})}, a, {}, {"rois", "type of x"}},
            {{x, f32({2, 4}), f32({2})}, a, {}, {"batch_indices", "i32 or i64"}},
            {{x, f32({2, 4}), i64({2, 1})}, a, {}, {"batch_indices", "1-D"}},
            {{x, f32({2, 4}), i64({3})}, a, {}, {"batch_indices", "one index per roi", "[2,4]"}},
            {{x, f32({2, 4}), i64({2})}, roi_attrs("avg", "half_pixel", 0, 2, 0), {}, {"output_height", ">= 1"}},
            {{x, f32({2, 4}), i64({2})}, roi_attrs("avg", "half_pixel", 2, -1, 0), {}, {"output_width", ">= 1"}},
            {{x, f32({2, 4}), i64({2})}, roi_attrs("avg", "half_pixel", 2, 2, -1), {}, {"sampling_ratio", ">= 0"}},
            {{x, f32({2, 4}), i64({2})}, roi_attrs("sum", "half_pixel", 2, 2, 0), {}, {"mode"}},
            {{x, f32({2, 4}), i64({2})},
             roi_attrs("avg", "asymmetric", 2, 2, 0),
             {},
             {"coordinate_transformation_mode"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

// x[h][w] = 4h + w on a 4 x 4 plane; bilinear sampling reproduces it inside.
const HostTensor kRamp = [] {
    std::vector<float> v(16);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    return HostTensor::from_floats(Shape{1, 1, 4, 4}, v);
}();

HostTensor pool(const std::vector<float>& boxes, const std::vector<int64_t>& batch, const Attributes& a,
                const std::string& engine = "cpu", const NetworkOptions& options = {},
                DataType index_type = DataType::i64) {
    const auto r = static_cast<int64_t>(batch.size());
    const HostTensor rois = HostTensor::from_floats(Shape{r, 4}, boxes);
    const HostTensor idx = HostTensor::from_int64(index_type, Shape{r}, batch);
    return test::run_once(test::single_node_program("roi_align", {kRamp.layout(), rois.layout(), idx.layout()}, a),
                          {kRamp, rois, idx}, options, engine);
}

NetworkOptions impls(bool dynamic) {
    NetworkOptions o;
    o.use_dynamic_impls = dynamic;
    o.async_compile = false;
    return o;
}

void expect_values(const HostTensor& got, const std::vector<double>& want) {
    ASSERT_EQ(got.shape().count(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.get_as_double(i), want[i], 1e-5) << i;
}

TEST(RoiAlignValues, AvgIsTheRampAtTheBinCentre) {
    // Box (0, 0)-(2, 2), one bin of 2 x 2 samples: at 0.5 and 1.5 (output_half_pixel),
    // centre (1, 1) = 5; half_pixel shifts the box by -0.5: centre (0.5, 0.5) = 2.5.
    expect_values(pool({0, 0, 2, 2}, {0}, roi_attrs("avg", "output_half_pixel", 1, 1, 2)), {5});
    expect_values(pool({0, 0, 2, 2}, {0}, roi_attrs("avg", "half_pixel", 1, 1, 2)), {2.5});
    // Two bins along w, adaptive sampling (1 sample each): centres x = 0.5 and 1.5 at y = 1.
    expect_values(pool({0, 0, 2, 2}, {0}, roi_attrs("avg", "output_half_pixel", 1, 2, 0)), {4.5, 5.5});
    // spatial_scale 0.5 halves the box (0, 0)-(4, 4) to the first one.
    expect_values(pool({0, 0, 4, 4}, {0}, roi_attrs("avg", "output_half_pixel", 1, 1, 2, 0.5)), {5});
}

TEST(RoiAlignValues, MaxKeepsTheLargestWeightedCornerOfEverySample) {
    // Samples at (1.5, 1.5) and others inside box (0, 0)-(2, 2): each corner weighs
    // 0.25, the largest weighted corner is 0.25 * x[2][2] = 2.5 (not 7.5, the
    // largest interpolated sample).
    expect_values(pool({0, 0, 2, 2}, {0}, roi_attrs("max", "output_half_pixel", 1, 1, 2)), {2.5});
}

TEST(RoiAlignValues, SamplesFarOutsideAreZeroAndNearOnesClamp) {
    // Box (10, 10)-(12, 12): every sample beyond one element past the edge.
    // Box (-1, 0)-(0, 1): sample x = -0.5 clamps to 0, y = 0.5: x[0.5][0] = 2.
    expect_values(pool({10, 10, 12, 12, -1, 0, 0, 1}, {0, 0}, roi_attrs("avg", "output_half_pixel", 1, 1, 1)), {0, 2});
}

void expect_batch_error(const std::string& msg, size_t roi, int64_t value) {
    EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("field 'batch_indices'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("batch_indices[" + std::to_string(roi) + "] = " + std::to_string(value) + " is outside [0, 1)"),
              std::string::npos)
        << msg;
}

TEST(RoiAlignValues, BatchIndexOutOfRangeIsAnErrorNamingTheInput) {
    for (int64_t bad : {1, -1}) {
        const std::string msg = test::error_of([&] {
            pool({0, 0, 2, 2, 0, 0, 1, 1}, {0, bad}, roi_attrs("avg", "half_pixel", 1, 1, 0));
        });
        expect_batch_error(msg, 1, bad);
    }
}

TEST(RoiAlignValues, AdaptiveSamplingOfAnAbsurdBoxIsAnErrorNamingRois) {
    // A 1e6-wide bin would take 1e6 x 1e6 samples; a NaN box none that can be counted.
    const float nan = std::nanf("");
    for (const std::vector<float>& box : {std::vector<float>{0, 0, 1e6f, 1e6f}, std::vector<float>{0, 0, nan, 2}}) {
        const std::string msg = test::error_of([&] { pool(box, {0}, roi_attrs("avg", "half_pixel", 1, 1, 0)); });
        EXPECT_NE(msg.find("field 'rois'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("samples per bin"), std::string::npos) << msg;
    }
    // A fixed sampling_ratio samples such a box as any other: all of it lies outside but a corner.
    EXPECT_EQ(pool({0, 0, 1e6f, 1e6f}, {0}, roi_attrs("avg", "half_pixel", 1, 1, 1)).shape(), (Shape{1, 1, 1, 1}));
}

TEST(RoiAlignValues, DeviceAgreesWithHandValues) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    expect_values(pool({0, 0, 2, 2, 0, 0, 2, 2}, {0, 0}, roi_attrs("avg", "output_half_pixel", 1, 1, 2), "ocl"),
                  {5, 5});
    expect_values(pool({0, 0, 2, 2}, {0}, roi_attrs("max", "output_half_pixel", 1, 1, 2), "ocl"), {2.5});
}

// The device's check stage reports the first bad index of any roi (past the
// check work-group's first stride too), i32 and i64 indices beyond 32 bits,
// with the host impls' error, on both OpenCL impls.
TEST(RoiAlignValues, DeviceRaisesTheHostErrorForTheFirstBadBatchIndex) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    struct Case {
        size_t rois, roi;
        int64_t value;
        DataType type;
        size_t later_bad;   // a second bad roi after the first (0: none)
    };
    const std::vector<Case> cases = {{2, 1, 3, DataType::i64, 0},
                                     {1, 0, -1, DataType::i32, 0},
                                     {300, 130, int64_t(1) << 40, DataType::i64, 250},
                                     {300, 70, -5000000000, DataType::i64, 71},
                                     {200, 199, 2, DataType::i32, 0}};
    for (bool dynamic : {true, false})
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(dynamic ? "dynamic" : "static") + " roi " + std::to_string(c.roi));
            std::vector<int64_t> batch(c.rois, 0);
            batch[c.roi] = c.value;
            if (c.later_bad) batch[c.later_bad] = 9;
            const std::vector<float> boxes(c.rois * 4, 1.0f);
            const std::string msg = test::error_of(
                [&] { pool(boxes, batch, roi_attrs("avg", "half_pixel", 1, 1, 0), "ocl", impls(dynamic), c.type); });
            expect_batch_error(msg, c.roi, c.value);
        }
}

// One shape-agnostic instance: a bad run between good ones leaves no stale
// report behind, also when the next run has no rois.
TEST(RoiAlignValues, DeviceErrorOnOneRunLeavesTheNextRunsAlone) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic" : "static");
        const std::vector<Layout> in = {kRamp.layout(), f32({Dimension(), 4}), i64({Dimension()})};
        InferRequest req(
            Network::create(test::single_node_program("roi_align", in, roi_attrs("avg", "output_half_pixel", 1, 1, 2)),
                            test::ocl_engine(), impls(dynamic)));
        const auto run = [&](const std::vector<int64_t>& batch) {
            const auto r = static_cast<int64_t>(batch.size());
            req.set_input("in0", kRamp);
            req.set_input("in1", HostTensor::from_floats(Shape{r, 4}, std::vector<float>(batch.size() * 4, 2.0f)));
            req.set_input("in2", HostTensor::from_int64(DataType::i64, Shape{r}, batch));
            req.infer();
            return req.get_output(0);
        };
        EXPECT_EQ(run({0, 0}).shape(), (Shape{2, 1, 1, 1}));
        expect_batch_error(test::error_of([&] { run({0, 0, 4}); }), 2, 4);
        EXPECT_EQ(run({0, 0, 0}).shape(), (Shape{3, 1, 1, 1}));
        EXPECT_EQ(run({}).shape(), (Shape{0, 1, 1, 1}));
        expect_batch_error(test::error_of([&] { run({-3}); }), 0, -3);
        EXPECT_EQ(run({0}).shape(), (Shape{1, 1, 1, 1}));
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// x in [-4, 4), boxes with corners in [-2, 12) (some inverted, some outside x),
// batch indices in [0, N).
test::Run make_run(DataType t, const Shape& x, int64_t rois, uint64_t seed) {
    return {test::random_tensor(t, x, seed, -4, 4), test::random_tensor(t, Shape{rois, 4}, seed + 1, -2, 12),
            test::random_tensor(DataType::i64, Shape{rois}, seed + 2, 0, static_cast<double>(x[0]))};
}

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 1e-2} : test::Tolerance{1e-4, 1e-5};
}

std::vector<Layout> dynamic_inputs(DataType t) {
    return {Layout(PartialShape::dynamic_of_rank(4), t), Layout({Dimension(), 4}, t), i64({Dimension()})};
}

TEST(RoiAlignImpls, EveryImplMatchesTheReferenceForEveryModeAndSampling) {
    for (const std::string mode : {"avg", "max"})
        for (const std::string ctm : {"half_pixel", "output_half_pixel"})
            for (int64_t ratio : {0, 2}) {
                SCOPED_TRACE(mode + " " + ctm + " ratio " + std::to_string(ratio));
                test::expect_impls_match_reference(
                    {"roi_align", roi_attrs(mode, ctm, 3, 2, ratio, 0.75), dynamic_inputs(DataType::f32), {}},
                    {make_run(DataType::f32, {2, 3, 10, 9}, 5, 1), make_run(DataType::f32, {1, 1, 1, 1}, 1, 4),
                     make_run(DataType::f32, {3, 2, 4, 17}, 17, 7)},
                    tol(DataType::f32));
            }
    test::expect_impls_match_reference(
        {"roi_align", roi_attrs("avg", "half_pixel", 2, 2, 0), dynamic_inputs(DataType::f16), {}},
        {make_run(DataType::f16, {2, 2, 8, 8}, 6, 10)}, tol(DataType::f16));
}

TEST(RoiAlignImpls, NoRoisAndNoChannelsRunOnEveryImpl) {
    test::expect_impls_match_reference(
        {"roi_align", roi_attrs("avg", "half_pixel", 2, 2, 0), dynamic_inputs(DataType::f32), {}},
        {make_run(DataType::f32, {2, 3, 4, 4}, 0, 13), make_run(DataType::f32, {2, 0, 4, 4}, 3, 16)});
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(RoiAlignDynamic, OneInstanceFollowsChangingRoiCountsOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 20;
    for (int64_t r : test::tail_sizes()) runs.push_back(make_run(DataType::f32, {2, 2, 6, 5}, r, seed));
    runs.push_back(make_run(DataType::f32, {1, 3, 9, 9}, 4, seed + 3));
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({"roi_align", roi_attrs("avg", "half_pixel", 2, 3, 0), dynamic_inputs(DataType::f32), {}},
                              runs, o);
    }
}

}   // namespace
}   // namespace dynrt
