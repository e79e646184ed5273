// grid_sample: shape-inference table, hand-computed values of every mode and
// padding, every impl against the reference over modes x paddings x dtypes and
// 3-D to 5-D x, and one instance fed changing shapes.
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

Attributes sampling(const std::string& mode, const std::string& padding, bool align) {
    return attrs({{"mode", mode}, {"padding_mode", padding}, {"align_corners", align}});
}

// ---- 1. shape inference ------------------------------------------------------

TEST(GridSampleShape, OutputTakesNAndCFromXAndThePositionsFromGrid) {
    const Dimension dyn;
    const Attributes linear = sampling("linear", "zeros", false);
    test::expect_shapes("grid_sample",
                        {
                            {{f32({2, 3, 4, 5}), f32({2, 6, 7, 2})}, linear, {f32({2, 3, 6, 7})}},
                            {{f32({1, 2, 4, 5, 6}), f32({1, 3, 2, 1, 3})}, linear, {f32({1, 2, 3, 2, 1})}},
                            {{f32({1, 2, 9}), f32({1, 4, 1})}, linear, {f32({1, 2, 4})}},
                            {{f32({dyn, 3, dyn, dyn}), f32({2, dyn, 5, dyn})}, linear, {f32({2, 3, dyn, 5})}},
                            {{Layout({1, 1, 2, 2}, DataType::f16), f32({1, 0, 3, 2})},
                             sampling("cubic", "border", true),
                             {Layout({1, 1, 0, 3}, DataType::f16)}},
                            {{f32({0, 3, 4, 4}), f32({0, 2, 2, 2})}, linear, {f32({0, 3, 2, 2})}},
                        });
}

TEST(GridSampleShape, BadInputsAndAttributesAreErrorsNamingThem) {
    const Attributes linear = sampling("linear", "zeros", false);
    test::expect_shapes(
        "grid_sample",
        {
            {{f32({2, 3}), f32({2, 1})}, linear, {}, {"node 'node'", "x f32[2,3]", "rank 3 to 5"}},
            {{f32({1, 1, 2, 2, 2, 2}), f32({1, 1, 1, 1, 1, 4})}, linear, {}, {"rank 3 to 5"}},
            {{f32({1, 1, 4, 4}), f32({1, 4, 2})}, linear, {}, {"grid", "same rank"}},
            {{f32({1, 1, 4, 4}), f32({1, 4, 4, 3})}, linear, {}, {"grid", "last dim", "spatial rank 2"}},
            {{f32({2, 1, 4, 4}), f32({3, 4, 4, 2})}, linear, {}, {"grid", "same batch", "[2,1,4,4]"}},
            {{f32({1, 1, 2, 2, 2}), f32({1, 1, 1, 1, 3})}, sampling("cubic", "zeros", false), {}, {"mode", "4-D"}},
            {{Layout({1, 1, 4, 4}, DataType::i32), f32({1, 4, 4, 2})}, linear, {}, {"x", "floating"}},
            {{f32({1, 1, 4, 4}), Layout({1, 4, 4, 2}, DataType::i64)}, linear, {}, {"grid", "floating"}},
            {{f32({1, 1, 4, 4}), f32({1, 4, 4, 2})}, sampling("bilinear", "zeros", false), {}, {"mode"}},
            {{f32({1, 1, 4, 4}), f32({1, 4, 4, 2})}, sampling("linear", "mirror", false), {}, {"padding_mode"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

// x = [[1, 2], [3, 4]] sampled at grid points given as (x, y) pairs.
HostTensor sample(const std::vector<float>& points, const Attributes& a, const std::string& engine = "cpu") {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
    const auto n = static_cast<int64_t>(points.size() / 2);
    const HostTensor grid = HostTensor::from_floats(Shape{1, 1, n, 2}, points);
    return test::run_once(test::single_node_program("grid_sample", {x.layout(), grid.layout()}, a), {x, grid},
                          NetworkOptions{}, engine);
}

void expect_values(const HostTensor& got, const std::vector<double>& want) {
    ASSERT_EQ(got.shape().count(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.get_as_double(i), want[i], 1e-5) << i;
}

TEST(GridSampleValues, AlignedCornersAreElementCentres) {
    // (0, 0) the middle; (1, -1) the top right; (0, 1) halfway along the bottom row.
    expect_values(sample({0, 0, -1, -1, 1, -1, 0, 1}, sampling("linear", "zeros", true)), {2.5, 1, 2, 3.5});
}

TEST(GridSampleValues, UnalignedCornersAreOuterEdgesAndZerosPadOutside) {
    // Without align_corners -1 is the left edge: half of element 0, half of the zero outside.
    // (-0.5, -0.5) is element (0, 0)'s centre; (1, 1) the bottom-right corner: a quarter of 4.
    expect_values(sample({-0.5, -0.5, -1, -0.5, 1, 1, 3, 0}, sampling("linear", "zeros", false)), {1, 0.5, 1, 0});
}

TEST(GridSampleValues, BorderAndReflectionPadKeepOutsidePositionsInside) {
    // Unaligned, grid 3 is position 3.5, past the right border 1.5: border clamps it
    // to element 1; reflection folds it at 1.5 and at -0.5, half on element 0 and half
    // on the mirrored -1, element 0 again. Grid -2.5 is -2: border clamps it to
    // element 0 and reflection folds it at -0.5 to element 1.
    expect_values(sample({3, -0.5, -2.5, 0.5}, sampling("linear", "border", false)), {2, 3});
    expect_values(sample({3, -0.5, -2.5, 0.5}, sampling("linear", "reflection", false)), {1, 4});
}

TEST(GridSampleValues, NearestRoundsHalfToEven) {
    // Aligned, x = 0.5 exactly rounds to element 0, x = 0.51 to element 1; y = 1 is row 1.
    expect_values(sample({0, -1, 0.02f, -1, 0, 1}, sampling("nearest", "zeros", true)), {1, 2, 3});
}

TEST(GridSampleValues, CubicUsesKeysWeightsOfFourNeighbours) {
    // x[h][w] = w^2 on 3 x 4, aligned: grid (0, 0) is x = 1.5 on row 1. At t = 0.5 Keys'
    // weights (a = -0.75) are -0.09375, 0.59375, 0.59375, -0.09375 over columns 0..3:
    // 0.59375 * (1 + 4) - 0.09375 * 9 = 2.125 (linear would give 2.5). Grid (-1/3, 1)
    // is x = 1 (t = 0, weight 1 on the element itself) on row 2: 1.
    std::vector<float> sq(12);
    for (size_t i = 0; i < sq.size(); ++i) sq[i] = static_cast<float>((i % 4) * (i % 4));
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 3, 4}, sq);
    const HostTensor grid = HostTensor::from_floats(Shape{1, 1, 2, 2}, {0, 0, -1.0f / 3, 1});
    const HostTensor y = test::run_once(
        test::single_node_program("grid_sample", {x.layout(), grid.layout()}, sampling("cubic", "zeros", true)),
        {x, grid}, NetworkOptions{}, "cpu");
    expect_values(y, {2.125, 1});
}

TEST(GridSampleValues, HugeAndNanCoordinatesSampleNothingOrTheBorder) {
    const float nan = std::nanf(""), huge = 1e30f;
    expect_values(sample({huge, 0, -huge, 0, 0, nan}, sampling("cubic", "zeros", false)), {0, 0, 0});
    // border: x = huge clamps to column 1, row 0.5: (2 + 4) / 2.
    expect_values(sample({huge, 0, -huge, -1, 0, 1}, sampling("linear", "border", true)), {3, 1, 3.5});
}

TEST(GridSampleValues, DeviceAgreesWithHandValues) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    expect_values(sample({0, 0, -1, -1, 1, -1, 0, 1}, sampling("linear", "zeros", true), "ocl"), {2.5, 1, 2, 3.5});
    expect_values(sample({3, -0.5, -2.5, 0.5}, sampling("linear", "reflection", false), "ocl"), {1, 4});
    expect_values(sample({0, -1, 0.02f, -1, 0, 1}, sampling("nearest", "zeros", true), "ocl"), {1, 2, 3});
    const float nan = std::nanf(""), huge = 1e30f;
    expect_values(sample({huge, 0, -huge, 0, 0, nan}, sampling("cubic", "zeros", false), "ocl"), {0, 0, 0});
    expect_values(sample({huge, 0, -huge, -1, 0, 1}, sampling("linear", "border", true), "ocl"), {3, 1, 3.5});
}

// ---- 2. every impl against the reference ---------------------------------------

// x in [-4, 4), grid in [-1.3, 1.3) so that some positions fall outside.
test::Run make_run(DataType t, const Shape& x, const Shape& grid, uint64_t seed) {
    return {test::random_tensor(t, x, seed, -4, 4), test::random_tensor(t, grid, seed + 1, -1.3, 1.3)};
}

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 1e-2} : test::Tolerance{1e-4, 1e-5};
}

TEST(GridSampleImpls, EveryImplMatchesTheReferenceForEveryModeAndPadding) {
    const std::vector<std::string> modes = {"nearest", "linear", "cubic"}, pads = {"zeros", "border", "reflection"};
    bool align = false;
    for (const std::string& mode : modes)
        for (const std::string& pad : pads) {
            align = !align;
            SCOPED_TRACE(mode + " " + pad + (align ? " aligned" : ""));
            test::expect_impls_match_reference(
                {"grid_sample",
                 sampling(mode, pad, align),
                 {f32(PartialShape::dynamic_of_rank(4)), f32(PartialShape::dynamic_of_rank(4))},
                 {}},
                {make_run(DataType::f32, {2, 3, 5, 7}, {2, 4, 3, 2}, 1),
                 make_run(DataType::f32, {1, 1, 1, 1}, {1, 3, 1, 2}, 3),
                 make_run(DataType::f32, {1, 2, 17, 1}, {1, 1, 17, 2}, 5)},
                tol(DataType::f32));
        }
}

TEST(GridSampleImpls, EveryImplMatchesTheReferenceOnThreeAndFiveDimsAndF16) {
    for (const std::string pad : {"zeros", "reflection"})
        for (bool align : {false, true}) {
            SCOPED_TRACE(pad + std::string(align ? " aligned" : ""));
            test::expect_impls_match_reference(
                {"grid_sample",
                 sampling("linear", pad, align),
                 {f32(PartialShape::dynamic_of_rank(5)), f32(PartialShape::dynamic_of_rank(5))},
                 {}},
                {make_run(DataType::f32, {2, 2, 3, 4, 5}, {2, 2, 3, 4, 3}, 7)}, tol(DataType::f32));
            test::expect_impls_match_reference(
                {"grid_sample",
                 sampling("nearest", pad, align),
                 {f32(PartialShape::dynamic_of_rank(3)), f32(PartialShape::dynamic_of_rank(3))},
                 {}},
                {make_run(DataType::f32, {2, 3, 13}, {2, 16, 1}, 9)}, tol(DataType::f32));
        }
    const Layout h(PartialShape::dynamic_of_rank(4), DataType::f16);
    test::expect_impls_match_reference({"grid_sample", sampling("cubic", "border", false), {h, h}, {}},
                                       {make_run(DataType::f16, {1, 3, 6, 5}, {1, 4, 4, 2}, 11)}, tol(DataType::f16));
}

TEST(GridSampleImpls, EmptyOutputsRunOnEveryImpl) {
    const Layout d(PartialShape::dynamic_of_rank(4), DataType::f32);
    test::expect_impls_match_reference({"grid_sample", sampling("linear", "zeros", false), {d, d}, {}},
                                       {make_run(DataType::f32, {1, 2, 3, 3}, {1, 0, 4, 2}, 13),
                                        make_run(DataType::f32, {0, 2, 3, 3}, {0, 2, 4, 2}, 15)});
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(GridSampleDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 20;
    for (int64_t n : test::tail_sizes()) runs.push_back(make_run(DataType::f32, {1, 2, 5, 4}, {1, 1, n, 2}, seed));
    runs.push_back(make_run(DataType::f32, {2, 1, 9, 3}, {2, 3, 3, 2}, seed + 2));
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout d(PartialShape::dynamic_of_rank(4), DataType::f32);
        test::expect_sequence({"grid_sample", sampling("linear", "border", false), {d, d}, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
