// instance_norm: shape-inference table, every impl against the reference over a
// dtype x shape matrix, one instance fed changing shapes, and hand-computed
// values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

// ---- 1. shape inference ------------------------------------------------------

TEST(InstanceNormShape, OutputIsTheInputAndBadInputsAreRejected) {
    const Dimension dyn;
    const Layout x({2, 3, 4, 5}, DataType::f32), h({dyn, 3, dyn}, DataType::f16), c3({3}, DataType::f16);
    test::expect_shapes("instance_norm",
                        {
                            {{x, f32({3}), f32({3})}, {}, {x}},
                            {{h, c3, c3}, {}, {h}},
                            {{f32({2, dyn}), f32({dyn}), f32({4})}, {}, {f32({2, dyn})}},
                            {{f32({2, 3}), f32({3}), f32({3})}, {}, {f32({2, 3})}},
                            {{f32({0, 3, 7}), f32({3}), f32({3})}, {}, {f32({0, 3, 7})}},
                            {{x, f32({4}), f32({3})}, {}, {}, {"node 'node'", "scale [4]", "x [2,3,4,5]", "channel"}},
                            {{x, f32({3}), f32({1, 3})}, {}, {}, {"bias [1,3]", "1-D"}},
                            {{x, c3, f32({3})}, {}, {}, {"scale", "type of x"}},
                            {{f32({3}), f32({3}), f32({3})}, {}, {}, {"rank >= 2"}},
                            {{Layout({2, 3}, DataType::i64), Layout({3}, DataType::i64), Layout({3}, DataType::i64)},
                             {},
                             {},
                             {"floating"}},
                        });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

// The optimised impls take f32 only.
std::vector<std::string> f16_skip(DataType t) {
    return t == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls;
}

TEST(InstanceNormImpls, EveryImplMatchesTheReference) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        SCOPED_TRACE(to_string(t));
        const Layout c({Dimension()}, t);
        test::expect_impls_match_reference(
            {"instance_norm", {}, {Layout(PartialShape::dynamic_of_rank(4), t), c, c}, {}},
            test::random_runs(t,
                              {{{1, 1, 1, 1}, {1}, {1}},
                               {{2, 3, 4, 5}, {3}, {3}},
                               {{1, 2, 17, 15}, {2}, {2}},
                               {{2, 3, 1, 257}, {3}, {3}},
                               {{0, 3, 2, 2}, {3}, {3}}},
                              1, -4, 4),
            tol(t), f16_skip(t));
        test::expect_impls_match_reference(
            {"instance_norm", {}, {Layout(PartialShape::dynamic_of_rank(2), t), c, c}, {}},
            test::random_runs(t, {{{2, 3}, {3}, {3}}, {{5, 1}, {1}, {1}}}, 5, -4, 4), tol(t), f16_skip(t));
    }
}

// The optimised impls' loops: planes around their 8-lane sums (7, 8, 9, 15,
// 17 elements), planes past one thread's chunk, a plane of one element, empty
// planes, and values far from zero (a mean of 100 against a spread of 2,
// where subtracting the mean late would lose digits); they must take every
// run.
TEST(InstanceNormImpls, OptimisedImplsTakeTailsLongPlanesAndLargeMeans) {
    const Layout c({Dimension()}, DataType::f32);
    const test::OpSetup s{"instance_norm", {}, {test::f32(PartialShape::dynamic_of_rank(3)), c, c}, {}};
    const std::vector<std::vector<Shape>> shapes = {
        {{1, 3, 7}, {3}, {3}},  {{2, 2, 8}, {2}, {2}},     {{1, 5, 9}, {5}, {5}}, {{3, 1, 15}, {1}, {1}},
        {{1, 2, 17}, {2}, {2}}, {{2, 3, 40001}, {3}, {3}}, {{4, 2, 1}, {2}, {2}}, {{1, 3, 0}, {3}, {3}}};
    for (double offset : {0.0, 100.0}) {
        SCOPED_TRACE("values around " + std::to_string(offset));
        std::vector<test::Run> runs = test::random_runs(DataType::f32, shapes, 21, offset - 1, offset + 1);
        for (test::Run& r : runs) {
            r[1] = test::random_tensor(DataType::f32, r[1].shape(), 5, -2, 2);
            r[2] = test::random_tensor(DataType::f32, r[2].shape(), 6, -2, 2);
        }
        const std::vector<std::string> ran = test::expect_impls_match_reference(s, runs, tol(DataType::f32));
        for (const std::string& name : test::kOptimisedCpuImpls)
            EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(InstanceNormDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, 3, n}, Shape{3}, Shape{3}});
    rows.push_back({Shape{1, 1, 1}, Shape{1}, Shape{1}});
    rows.push_back({Shape{2, 3, 16}, Shape{3}, Shape{3}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout c({Dimension()}, DataType::f32);
        test::expect_sequence(
            {"instance_norm", {}, {Layout(PartialShape::dynamic_of_rank(3), DataType::f32), c, c}, {}},
            test::random_runs(DataType::f32, rows, 20, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Plane {1, 3}: mean 2, variance 1; plane {5, 5}: variance 0, y is the bias.
TEST(InstanceNormValues, PlanesMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 2, 2}, {1, 3, 5, 5});
    const HostTensor w = HostTensor::from_floats(Shape{2}, {2, 7});
    const HostTensor b = HostTensor::from_floats(Shape{2}, {0.5f, -1});
    const test::OpSetup s{"instance_norm", attrs({{"epsilon", 0.0}}), {x.layout(), w.layout(), b.layout()}, {}};
    const std::vector<HostTensor> y = test::reference_outputs(s, {x, w, b});
    const double want[] = {-2 + 0.5, 2 + 0.5, 0, 0};
    for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(y[0].get_as_double(i), want[i], 1e-6) << i;
    EXPECT_TRUE(std::isnan(y[0].get_as_double(2)));   // 0 / sqrt(0) with epsilon 0
    const test::OpSetup e{"instance_norm", attrs({{"epsilon", 1e-2}}), {x.layout(), w.layout(), b.layout()}, {}};
    EXPECT_NEAR(test::reference_outputs(e, {x, w, b})[0].get_as_double(3), -1.0, 1e-6);
}

}   // namespace
}   // namespace dynrt
