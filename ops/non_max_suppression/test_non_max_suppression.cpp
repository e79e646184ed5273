// non_max_suppression: shape table (bound, dynamic dims, refusals), hand-worked
// selections (ordering, ties, flipped corners, centre boxes, strict thresholds),
// every impl against the reference, one instance fed changing shapes and
// values, run-time refusals and the ONNX import of gapped optional inputs.
#include <cmath>
#include <vector>

#include "dynrt/op_registry.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

const char* const kOp = "non_max_suppression";

Layout boxes_l(PartialShape s) { return Layout(std::move(s), DataType::f32); }
const Layout kMax({1}, DataType::i64), kThreshold({1}, DataType::f32), kScalar({}, DataType::f32);
Layout selected(Dimension rows) { return Layout(PartialShape{rows, 3}, DataType::i64); }

// ---- 1. shape inference ------------------------------------------------------------

TEST(NonMaxSuppressionShape, BoundIsBatchTimesClassesTimesBoxes) {
    const Attributes none;
    test::expect_shapes(kOp,
                        {
                            {{boxes_l({2, 6, 4}), boxes_l({2, 3, 6})}, none, {selected(36)}},
                            {{boxes_l({2, 6, 4}), boxes_l({2, 3, 6}), kMax, kThreshold, kScalar}, none, {selected(36)}},
                            {{boxes_l({1, 0, 4}), boxes_l({1, 5, 0}), kMax}, none, {selected(0)}},
                            {{boxes_l({Dimension(), Dimension(), 4}), boxes_l({Dimension(), 2, Dimension()})},
                             none,
                             {selected(Dimension())}},
                            {{boxes_l({Dimension(1, 2), 6, 4}), boxes_l({Dimension(1, 2), 3, Dimension()})},
                             none,
                             {selected(Dimension(0, 36))}},
                            {{boxes_l({Dimension(), 6, 4}), boxes_l({2, 3, Dimension()})}, none, {selected(36)}},
                        });
}

TEST(NonMaxSuppressionShape, MismatchedOrIllTypedInputsAndBadAttributesAreRefused) {
    const Attributes none;
    const Layout b({2, 6, 4}, DataType::f32), s({2, 1, 6}, DataType::f32);
    test::expect_shapes(
        kOp,
        {
            {{boxes_l({2, 6, 5}), s}, none, {}, {"boxes", "[2,6,5]"}},
            {{boxes_l({2, 6}), s}, none, {}, {"boxes", "3 dims"}},
            {{b, boxes_l({3, 1, 6})}, none, {}, {"batch", "[2,6,4]", "[3,1,6]"}},
            {{b, boxes_l({2, 1, 7})}, none, {}, {"box count", "[2,6,4]", "[2,1,7]"}},
            {{Layout({2, 6, 4}, DataType::f16), s}, none, {}, {"boxes", "f32"}},
            {{b, s, Layout({1}, DataType::f32)}, none, {}, {"max_output_boxes_per_class", "i64"}},
            {{b, s, kMax, Layout({2}, DataType::f32)}, none, {}, {"iou_threshold", "one value", "[2]"}},
            {{b, s, kMax, kThreshold, Layout({1}, DataType::i64)}, none, {}, {"score_threshold", "f32"}},
            {{b, s}, test::attrs({{"center_point_box", int64_t{2}}}), {}, {"center_point_box", "2"}},
            {{b, s}, test::attrs({{"iou_threshold", 1.5}}), {}, {"iou_threshold", "[0, 1]"}},
            {{b, s}, test::attrs({{"max_output_boxes_per_class", int64_t{-1}}}), {}, {"max_output_boxes_per_class"}},
        });
}

// ---- hand-worked selections ---------------------------------------------------------

// Runs one node on `engine` with every optional input given and returns the
// selected rows, flattened.
std::vector<int64_t> select(const std::string& engine, const HostTensor& boxes, const HostTensor& scores,
                            int64_t max_boxes, float iou, float score, int64_t center = 0) {
    auto p = test::single_node_program(kOp,
                                       {boxes_l({Dimension(), Dimension(), 4}),
                                        boxes_l({Dimension(), Dimension(), Dimension()}), kMax, kThreshold, kThreshold},
                                       test::attrs({{"center_point_box", center}}));
    const HostTensor out = test::run_once(p,
                                          {boxes, scores, HostTensor::from_int64(DataType::i64, {1}, {max_boxes}),
                                           HostTensor::from_floats({1}, {iou}), HostTensor::from_floats({1}, {score})},
                                          {}, engine);
    EXPECT_EQ(out.shape().rank(), 2u);
    EXPECT_EQ(out.shape()[1], 3);
    return out.to_int64();
}

// Six unit-height boxes: 1 and 2 overlap box 0 with IoU 0.9 / 1.1, 4 overlaps 3
// the same way, 5 is apart.
HostTensor six_boxes() {
    return HostTensor::from_floats(
        {1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
}

class NonMaxSuppressionValues : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        if (std::string(GetParam()) == "ocl" && !test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    }
};

TEST_P(NonMaxSuppressionValues, GreedyByDescendingScoreWithinEachClass) {
    const HostTensor scores = HostTensor::from_floats({1, 2, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f,   //
                                                                  0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
    // Class 0: 3 (0.95), 0 (0.9), 1 and 2 suppressed by 0, 4 by 3, then 5.
    // Class 1: 5, 4, 3 suppressed by 4, 2, 1 and 0 suppressed by 2.
    EXPECT_EQ(select(GetParam(), six_boxes(), scores, 10, 0.5f, 0.0f),
              (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5, 0, 1, 5, 0, 1, 4, 0, 1, 2}));
    // At most two per class; the score threshold is strict (0.3 and 0.5 dropped).
    EXPECT_EQ(select(GetParam(), six_boxes(), scores, 2, 0.5f, 0.5f),
              (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 5}));
    EXPECT_TRUE(select(GetParam(), six_boxes(), scores, 0, 0.5f, 0.0f).empty());
}

TEST_P(NonMaxSuppressionValues, TiesKeepTheLowerBoxIndexFirst) {
    const HostTensor scores = HostTensor::from_floats({1, 1, 6}, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
    EXPECT_EQ(select(GetParam(), six_boxes(), scores, 10, 0.5f, 0.0f),
              (std::vector<int64_t>{0, 0, 0, 0, 0, 3, 0, 0, 5}));
}

TEST_P(NonMaxSuppressionValues, CornersInAnyOrderAndCentreBoxesGiveTheSameBoxes) {
    const HostTensor scores = HostTensor::from_floats({1, 1, 3}, {0.9f, 0.8f, 0.7f});
    // Box 1 is box 0 with both diagonals flipped; box 2 is apart.
    const HostTensor flipped = HostTensor::from_floats({1, 3, 4}, {0, 0, 2, 2, 2, 2, 0, 0, 5, 5, 6, 6});
    EXPECT_EQ(select(GetParam(), flipped, scores, 3, 0.5f, 0.0f), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
    const HostTensor centred = HostTensor::from_floats({1, 3, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 5.5f, 5.5f, 1, 1});
    EXPECT_EQ(select(GetParam(), centred, scores, 3, 0.5f, 0.0f, 1), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST_P(NonMaxSuppressionValues, IouEqualToTheThresholdDoesNotSuppress) {
    // Box 1 is half of box 0: IoU exactly 0.5.
    const HostTensor boxes = HostTensor::from_floats({1, 2, 4}, {0, 0, 1, 1, 0, 0, 1, 0.5f});
    const HostTensor scores = HostTensor::from_floats({1, 1, 2}, {0.9f, 0.8f});
    EXPECT_EQ(select(GetParam(), boxes, scores, 2, 0.5f, 0.0f), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
    EXPECT_EQ(select(GetParam(), boxes, scores, 2, 0.49f, 0.0f), (std::vector<int64_t>{0, 0, 0}));
}

TEST_P(NonMaxSuppressionValues, EachBatchReadsItsOwnBoxes) {
    // Batch 1 holds the boxes of batch 0 in reverse order.
    const HostTensor batch0 = six_boxes();
    std::vector<float> b(batch0.as<float>(), batch0.as<float>() + 24);
    for (size_t i = 0; i < 6; ++i)
        for (size_t k = 0; k < 4; ++k) b.push_back(b[(5 - i) * 4 + k]);
    const HostTensor scores = HostTensor::from_floats({2, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f,   //
                                                                  0.3f, 0.5f, 0.95f, 0.6f, 0.75f, 0.9f});
    EXPECT_EQ(select(GetParam(), HostTensor::from_floats({2, 6, 4}, b), scores, 3, 0.5f, 0.0f),
              (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5, 1, 0, 2, 1, 0, 5, 1, 0, 0}));
}

// ---- 2. every impl against the reference ------------------------------------------

const std::vector<Layout> kDynamicInputs = {boxes_l({Dimension(), Dimension(), 4}),
                                            boxes_l({Dimension(), Dimension(), Dimension()}), kMax, kThreshold,
                                            kThreshold};

// One run: boxes [b, n, 4] with random corners in [0, 1) (so diagonals come in
// any order and boxes overlap a lot), scores [b, c, n] in [0, 1), rounded to
// eighths with `ties` so that equal scores are common.
test::Run random_run(int64_t b, int64_t c, int64_t n, int64_t max_boxes, float iou, float score, uint64_t seed,
                     bool ties = false) {
    HostTensor scores = test::random_tensor(DataType::f32, {b, c, n}, seed + 1, 0.0, 1.0);
    if (ties)
        for (size_t i = 0; i < scores.count(); ++i)
            scores.set_from_double(i, std::floor(scores.get_as_double(i) * 8) / 8);
    return {test::random_tensor(DataType::f32, {b, n, 4}, seed, 0.0, 1.0), scores,
            HostTensor::from_int64(DataType::i64, {1}, {max_boxes}), HostTensor::from_floats({1}, {iou}),
            HostTensor::from_floats({1}, {score})};
}

TEST(NonMaxSuppressionImpls, EveryImplMatchesTheReference) {
    const std::vector<test::Run> runs = {
        random_run(1, 1, 1, 1, 0.5f, 0.0f, 1),
        random_run(2, 3, 13, 4, 0.3f, 0.2f, 2),
        random_run(1, 2, 17, 100, 0.7f, 0.0f, 3, true),
        random_run(3, 1, 16, 0, 0.5f, 0.0f, 4),
        random_run(2, 2, 257, 20, 0.5f, 0.5f, 5),
        random_run(1, 4, 0, 5, 0.5f, 0.0f, 6),
        random_run(1, 1, 255, 255, 0.0f, 0.9f, 7),
        random_run(2, 1, 64, 64, 1.0f, 0.0f, 8, true),
        random_run(1, 2, 1000, 1000, 0.5f, 0.0f, 9, true),
    };
    test::expect_impls_match_reference({kOp, {}, kDynamicInputs, {}}, runs);
}

// Absent optional inputs take the attributes (centre boxes here): the first
// two inputs only, and all but the score threshold.
TEST(NonMaxSuppressionImpls, AbsentInputsTakeTheAttributesOnEveryImpl) {
    const Attributes a = test::attrs({{"center_point_box", int64_t{1}},
                                      {"max_output_boxes_per_class", int64_t{6}},
                                      {"iou_threshold", 0.4},
                                      {"score_threshold", 0.25}});
    std::vector<test::Run> two, four;
    for (int64_t n : {1, 17, 200}) {
        const test::Run r = random_run(2, 3, n, 3, 0.6f, 0.0f, static_cast<uint64_t>(n), n == 17);
        two.push_back({r[0], r[1]});
        four.push_back({r[0], r[1], r[2], r[3]});
    }
    const std::vector<Layout> inputs(kDynamicInputs.begin(), kDynamicInputs.end() - 1);
    test::expect_impls_match_reference({kOp, a, {inputs[0], inputs[1]}, {}}, two);
    test::expect_impls_match_reference({kOp, a, inputs, {}}, four);
}

// ---- 3. one instance, changing shapes and values --------------------------------------

TEST(NonMaxSuppressionDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 10;
    for (int64_t n : test::tail_sizes()) runs.push_back(random_run(1 + n % 2, 2, n, 1 + n % 7, 0.5f, 0.1f, seed++));
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence({kOp, {}, kDynamicInputs, {}}, runs, o);
}

// ---- bad values at run time, ONNX import ---------------------------------------------

TEST_P(NonMaxSuppressionValues, ThresholdOutOfRangeAndNegativeCountAreRefusedWhenRun) {
    auto p = test::single_node_program(kOp, kDynamicInputs, {});
    auto run_with = [&](const test::Run& ok, size_t input, const HostTensor& value) {
        test::Run r = ok;
        r[input] = value;
        return test::error_of([&] { test::run_once(p, r, {}, GetParam()); });
    };
    const test::Run ok = random_run(1, 1, 4, 2, 0.5f, 0.0f, 1);
    const std::string iou = run_with(ok, 3, HostTensor::from_floats({1}, {1.5f}));
    EXPECT_NE(iou.find("node 'node'"), std::string::npos) << iou;
    EXPECT_NE(iou.find("iou_threshold (input 3) is 1.5"), std::string::npos) << iou;
    EXPECT_NE(iou.find("[0, 1]"), std::string::npos) << iou;
    const std::string nan = run_with(ok, 3, HostTensor::from_floats({1}, {std::nanf("")}));
    EXPECT_NE(nan.find("iou_threshold (input 3) is nan"), std::string::npos) << nan;
    const std::string count = run_with(ok, 2, HostTensor::from_int64(DataType::i64, {1}, {-5000000000}));
    EXPECT_NE(count.find("max_output_boxes_per_class (input 2) is -5000000000"), std::string::npos) << count;
    const std::string batch = run_with(ok, 1, test::random_tensor(DataType::f32, {2, 1, 4}, 3));
    EXPECT_NE(batch.find("batch"), std::string::npos) << batch;
    EXPECT_NE(batch.find("[1,4,4]"), std::string::npos) << batch;
}

INSTANTIATE_TEST_SUITE_P(Engines, NonMaxSuppressionValues, ::testing::Values("cpu", "ocl"));

ImportResult import(const std::vector<ImportInput>& inputs) {
    ImportNode node;
    node.name = "nms";
    node.op_type = "NonMaxSuppression";
    node.opset = 11;
    node.inputs = inputs;
    const ImportRule& rule = test::registry()->op(kOp).def.imports.at(0);
    ImportContext c(node, kOp);
    rule.map(c);
    return c.out;
}

TEST(NonMaxSuppressionImport, AConstantAfterAnAbsentInputBecomesItsAttribute) {
    const HostTensor iou = HostTensor::from_floats({1}, {0.4f});
    const ImportInput given{true, kThreshold, nullptr}, absent{}, constant{true, kThreshold, &iou};
    const ImportResult all = import({given, given, given, given, given});
    EXPECT_EQ(all.inputs, (std::vector<size_t>{0, 1, 2, 3, 4}));
    const ImportResult gapped = import({given, given, absent, constant});
    EXPECT_TRUE(gapped.unsupported.empty()) << gapped.unsupported;
    EXPECT_EQ(gapped.inputs, (std::vector<size_t>{0, 1}));
    EXPECT_FLOAT_EQ(static_cast<float>(gapped.attrs.get_float("iou_threshold")), 0.4f);
    const ImportResult unknown = import({given, given, absent, given});
    EXPECT_NE(unknown.unsupported.find("iou_threshold"), std::string::npos) << unknown.unsupported;
}

}   // namespace
}   // namespace dynrt
