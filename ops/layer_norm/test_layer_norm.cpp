// layer_norm: shape-inference table, every impl against the reference over a
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

Attributes axis(int64_t a) { return attrs({{"axis", a}}); }
Layout stats(PartialShape s) { return f32(std::move(s)); }

// ---- 1. shape inference ------------------------------------------------------

TEST(LayerNormShape, StatisticsKeepTheDimsBeforeTheAxis) {
    const Dimension dyn;
    const Layout x({2, 3, 4}, DataType::f32), h({dyn, 5}, DataType::f16);
    test::expect_shapes("layer_norm",
                        {
                            {{x, f32({4}), f32({4})}, {}, {x, stats({2, 3, 1}), stats({2, 3, 1})}},
                            {{x, f32({3, 4})}, axis(1), {x, stats({2, 1, 1}), stats({2, 1, 1})}},
                            {{x, f32({2, 3, 4}), f32({1})}, axis(0), {x, stats({1, 1, 1}), stats({1, 1, 1})}},
                            {{x, f32({3, 1})}, axis(-2), {x, stats({2, 1, 1}), stats({2, 1, 1})}},
                            {{h, Layout({5}, DataType::f16)}, {}, {h, stats({dyn, 1}), stats({dyn, 1})}},
                            {{f32({dyn, dyn}), f32({dyn})}, {}, {f32({dyn, dyn}), stats({dyn, 1}), stats({dyn, 1})}},
                            {{f32({0, 7}), f32({7})}, {}, {f32({0, 7}), stats({0, 1}), stats({0, 1})}},
                        });
}

TEST(LayerNormShape, BadInputsAreErrorsNamingTheFieldAndShapes) {
    const Layout x({2, 3, 4}, DataType::f32);
    test::expect_shapes("layer_norm",
                        {
                            {{x, f32({3})}, {}, {}, {"node 'node'", "scale [3]", "x [2,3,4]", "broadcast"}},
                            {{x, f32({4}), f32({2})}, {}, {}, {"bias [2]", "broadcast"}},
                            {{x, f32({3, 4})}, {}, {}, {"scale [3,4]", "more dims"}},
                            {{x, Layout({4}, DataType::f16)}, {}, {}, {"scale", "type of x"}},
                            {{x, f32({4})}, axis(3), {}, {"axis", "3"}},
                            {{x, f32({4})}, axis(-4), {}, {"axis", "-4"}},
                            {{Layout({4}, DataType::i32), Layout({4}, DataType::i32)}, {}, {}, {"floating"}},
                            {{f32({}), f32({})}, {}, {}, {"scalar"}},
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

TEST(LayerNormImpls, EveryImplMatchesTheReferenceOnEveryAxis) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        SCOPED_TRACE(to_string(t));
        // Last axis, scale and bias over the row: one element, tails, 64-item groups.
        test::expect_impls_match_reference(
            {"layer_norm",
             axis(-1),
             {Layout({Dimension(), Dimension()}, t), Layout({Dimension()}, t), Layout({Dimension()}, t)},
             {}},
            test::random_runs(
                t, {{{1, 1}, {1}, {1}}, {{3, 17}, {17}, {17}}, {{2, 257}, {257}, {257}}, {{0, 4}, {4}, {4}}}, 1, -4, 4),
            tol(t), f32_only(t));
        // Axis 1 of rank 3 with a broadcast scale [1, c] and no bias.
        test::expect_impls_match_reference(
            {"layer_norm", axis(1), {Layout(PartialShape::dynamic_of_rank(3), t), Layout({1, Dimension()}, t)}, {}},
            test::random_runs(t, {{{2, 3, 5}, {1, 5}}, {{1, 13, 17}, {1, 17}}, {{3, 1, 1}, {1, 1}}}, 7, -4, 4), tol(t),
            test::kOptimisedCpuImpls);
    }
}

// The OpenCL kernel keeps a work-item's vectors of 4 in registers when the
// row holds whole vectors (64 work-items a row; up to 8 vectors each in the
// static build, 4 in the shape-agnostic one): a row of 1024 is read once by
// both, 2048 once by the static build and again per pass by the dynamic one,
// 8192 again per pass by both; rows of 2051, 5 and 1 (a one-item group) go
// element by element, 4 is one vector. The optimised cpu impl (f32, scale and
// bias over the whole row) must run on every f32 row here; a scale broadcast
// inside the row runs the reference within it.
TEST(LayerNormImpls, LongShortAndTailRowsMatchTheReference) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        SCOPED_TRACE(to_string(t));
        std::vector<std::vector<Shape>> rows;
        for (int64_t n : {1024, 2048, 8192, 2051, 4, 5, 1}) rows.push_back({Shape{3, n}, Shape{n}, Shape{n}});
        const Layout w({Dimension()}, t);
        test::expect_impls_match_reference({"layer_norm", axis(-1), {Layout({Dimension(), Dimension()}, t), w, w}, {}},
                                           test::random_runs(t, rows, 50, -4, 4), tol(t), f32_only(t));
        // Rank 4 over the last two dims, scale [n] broadcast over the rows of the block.
        test::expect_impls_match_reference(
            {"layer_norm", axis(-2), {Layout(PartialShape::dynamic_of_rank(4), t), w}, {}},
            test::random_runs(t, {{{2, 1, 3, 8}, {8}}, {{1, 2, 4, 7}, {7}}}, 60, -4, 4), tol(t),
            test::kOptimisedCpuImpls);
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(LayerNormDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, 3, n}, Shape{n}, Shape{n}});
    rows.push_back({Shape{0, 3, 5}, Shape{5}, Shape{5}});
    rows.push_back({Shape{2, 3, 5}, Shape{5}, Shape{5}});
    std::vector<std::vector<Shape>> negative;   // axis -2: rows of [c, n], scale [n] broadcast over c
    for (int64_t n : {1, 3, 17, 3, 255, 1}) negative.push_back({Shape{4, 2, n}, Shape{n}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout w({Dimension()}, DataType::f32);
        test::expect_sequence(
            {"layer_norm", axis(-1), {Layout({Dimension(), 3, Dimension()}, DataType::f32), w, w}, {}},
            test::random_runs(DataType::f32, rows, 20, -3, 3), o);
        test::expect_sequence({"layer_norm", axis(-2), {Layout({4, 2, Dimension()}, DataType::f32), w}, {}},
                              test::random_runs(DataType::f32, negative, 40, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Row {1, 2, 3, 6}: mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5.
TEST(LayerNormValues, RowsMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 4}, {1, 2, 3, 6, 1e4f, 1e4f, 1e4f, 1e4f + 4});
    const HostTensor w = HostTensor::from_floats(Shape{4}, {1, 2, 1, 1});
    const HostTensor b = HostTensor::from_floats(Shape{1}, {0.5f});
    const test::OpSetup s{
        "layer_norm", attrs({{"axis", int64_t{-1}}, {"epsilon", 0.0}}), {x.layout(), w.layout(), b.layout()}, {}};
    const std::vector<HostTensor> y = test::reference_outputs(s, {x, w, b});
    const double inv = 1.0 / std::sqrt(3.5);
    const double want[] = {-2 * inv + 0.5, -1 * 2 * inv + 0.5, 0.5, 3 * inv + 0.5};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[0].get_as_double(i), want[i], 1e-6) << i;
    EXPECT_NEAR(y[1].get_as_double(0), 3.0, 1e-6);
    EXPECT_NEAR(y[2].get_as_double(0), inv, 1e-6);
    // Row two {c, c, c, c + 4}, c = 1e4: mean c + 1, variance 3, so the last
    // element is 3 / sqrt(3) = sqrt(3) whatever c is.
    EXPECT_NEAR(y[0].get_as_double(7), std::sqrt(3.0) + 0.5, 1e-4);
    EXPECT_NEAR(y[2].get_as_double(1), 1.0 / std::sqrt(3.0), 1e-6);
}

}   // namespace
}   // namespace dynrt
