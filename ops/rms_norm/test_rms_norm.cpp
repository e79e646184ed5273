// rms_norm: shape-inference table, every impl against the reference over a
// dtype x shape matrix, one instance fed changing shapes, and hand-computed
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Attributes eps(double e) { return attrs({{"epsilon", e}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(RmsNormShape, OutputIsXAndScaleBroadcastsOverTheLastAxis) {
    const Dimension dyn;
    const Layout x({2, 3, 4}, DataType::f32), h({dyn, 5}, DataType::f16);
    test::expect_shapes("rms_norm", {
                                        {{x}, {}, {x}},
                                        {{x, f32({4})}, {}, {x}},
                                        {{x, f32({1})}, eps(0.1), {x}},
                                        {{x, f32({})}, {}, {x}},
                                        {{x, f32({1, 1, 4})}, {}, {x}},
                                        {{x, f32({dyn})}, {}, {x}},
                                        {{h, Layout({5}, DataType::f16)}, {}, {h}},
                                        {{f32({dyn, dyn}), f32({dyn})}, {}, {f32({dyn, dyn})}},
                                        {{f32({0, 7}), f32({7})}, {}, {f32({0, 7})}},
                                        {{f32({3, 0}), f32({1})}, {}, {f32({3, 0})}},
                                        {{Layout({6}, DataType::f64)}, {}, {Layout({6}, DataType::f64)}},
                                    });
}

TEST(RmsNormShape, BadInputsAreErrorsNamingTheFieldAndShapes) {
    const Layout x({2, 3, 4}, DataType::f32);
    test::expect_shapes("rms_norm",
                        {
                            {{x, f32({3})}, {}, {}, {"node 'node'", "scale [3]", "x [2,3,4]", "last dims differ"}},
                            {{x, f32({3, 4})}, {}, {}, {"scale [3,4]", "dim 0 is not 1"}},
                            {{x, f32({1, 1, 1, 4})}, {}, {}, {"scale [1,1,1,4]", "more dims"}},
                            {{x, Layout({4}, DataType::f16)}, {}, {}, {"scale", "type of x"}},
                            {{Layout({4}, DataType::i32)}, {}, {}, {"floating", "i32[4]"}},
                            {{f32({})}, {}, {}, {"scalar"}},
                        });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

// The optimised cpu impls take f32 only: skippable for f16.
std::vector<std::string> f32_only(DataType t) {
    return t == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls;
}

TEST(RmsNormImpls, EveryImplMatchesTheReferenceWithAndWithoutScale) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        SCOPED_TRACE(to_string(t));
        // A scale per element: one element, tails, 64-item groups, no rows.
        test::expect_impls_match_reference(
            {"rms_norm", eps(1e-6), {Layout({Dimension(), Dimension()}, t), Layout({Dimension()}, t)}, {}},
            test::random_runs(t, {{{1, 1}, {1}}, {{3, 17}, {17}}, {{2, 257}, {257}}, {{0, 4}, {4}}, {{5, 16}, {16}}}, 1,
                              -4, 4),
            tol(t), f32_only(t));
        // No scale, rank 3.
        test::expect_impls_match_reference({"rms_norm", {}, {Layout(PartialShape::dynamic_of_rank(3), t)}, {}},
                                           test::random_runs(t, {{{2, 3, 5}}, {{1, 13, 8}}, {{3, 1, 1}}}, 7, -4, 4),
                                           tol(t), f32_only(t));
        // One scale element for every row, as [1, 1] and as a scalar.
        test::expect_impls_match_reference(
            {"rms_norm", eps(0.5), {Layout({Dimension(), Dimension()}, t), Layout({1, 1}, t)}, {}},
            test::random_runs(t, {{{4, 12}, {1, 1}}, {{2, 7}, {1, 1}}}, 9, -2, 2), tol(t), f32_only(t));
        test::expect_impls_match_reference(
            {"rms_norm", {}, {Layout({3, Dimension()}, t), Layout(PartialShape{}, t)}, {}},
            test::random_runs(t, {{{3, 8}, Shape{}}, {{3, 3}, Shape{}}}, 13, -2, 2), tol(t), f32_only(t));
    }
}

// The OpenCL kernel keeps a work-item's vectors of 4 in registers when the
// row holds whole vectors (64 work-items a row; up to 8 vectors each in the
// static build, 4 in the shape-agnostic one): a row of 1024 is read once by
// both, 2048 once by the static build and again by the dynamic one, 8192
// again by both; rows of 2051, 5 and 1 (a one-item group) go element by
// element, 4 is one vector. The optimised cpu impl runs on every f32 row.
TEST(RmsNormImpls, LongShortAndTailRowsMatchTheReference) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        SCOPED_TRACE(to_string(t));
        std::vector<std::vector<Shape>> rows;
        for (int64_t n : {1024, 2048, 8192, 2051, 4, 5, 1}) rows.push_back({Shape{3, n}, Shape{n}});
        test::expect_impls_match_reference(
            {"rms_norm", {}, {Layout({Dimension(), Dimension()}, t), Layout({Dimension()}, t)}, {}},
            test::random_runs(t, rows, 50, -4, 4), tol(t), f32_only(t));
    }
}

// Elements of 1e4 and 1e-4: the mean of squares far from 1 either way.
TEST(RmsNormImpls, LargeAndSmallValuesMatchTheReference) {
    const Layout x({Dimension(), 64}, DataType::f32);
    test::expect_impls_match_reference({"rms_norm", eps(0.0), {x}, {}},
                                       test::random_runs(DataType::f32, {{{3, 64}}}, 3, 1e4, 2e4));
    test::expect_impls_match_reference({"rms_norm", eps(1e-12), {x}, {}},
                                       test::random_runs(DataType::f32, {{{3, 64}}}, 5, -1e-4, 1e-4));
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(RmsNormDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, 3, n}, Shape{n}});
    rows.push_back({Shape{0, 3, 5}, Shape{5}});
    rows.push_back({Shape{2, 3, 5}, Shape{5}});
    std::vector<std::vector<Shape>> tokens;   // a growing sequence of a fixed hidden size, no scale
    for (int64_t s : {1, 7, 8, 1, 16, 17, 7}) tokens.push_back({Shape{1, s, 32}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence(
            {"rms_norm", eps(1e-6), {Layout({Dimension(), 3, Dimension()}, DataType::f32), f32({Dimension()})}, {}},
            test::random_runs(DataType::f32, rows, 20, -3, 3), o);
        test::expect_sequence({"rms_norm", {}, {Layout({1, Dimension(), 32}, DataType::f32)}, {}},
                              test::random_runs(DataType::f32, tokens, 40, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Row {1, 2, 3, 6}: mean of squares (1 + 4 + 9 + 36) / 4 = 12.5, epsilon 0.
TEST(RmsNormValues, RowsMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 4}, {1, 2, 3, 6, -2, 0, 0, 4});
    const HostTensor w = HostTensor::from_floats(Shape{4}, {1, 2, 1, 0.5f});
    const test::OpSetup s{"rms_norm", eps(0.0), {x.layout(), w.layout()}, {}};
    const std::vector<HostTensor> y = test::reference_outputs(s, {x, w});
    const double inv = 1.0 / std::sqrt(12.5);
    const double want0[] = {inv, 4 * inv, 3 * inv, 3 * inv};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[0].get_as_double(i), want0[i], 1e-6) << i;
    // Row two: mean of squares (4 + 16) / 4 = 5.
    const double inv2 = 1.0 / std::sqrt(5.0);
    const double want1[] = {-2 * inv2, 0, 0, 4 * 0.5 * inv2};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[0].get_as_double(4 + i), want1[i], 1e-6) << i;
    // Epsilon counts: a zero row gives zeros, not NaN, with epsilon 1.
    const HostTensor z = HostTensor::from_floats(Shape{1, 2}, {0, 3});
    const std::vector<HostTensor> yz = test::reference_outputs({"rms_norm", eps(1.0), {z.layout()}, {}}, {z});
    EXPECT_NEAR(yz[0].get_as_double(1), 3.0 / std::sqrt(4.5 + 1.0), 1e-6);
}

}   // namespace
}   // namespace dynrt
