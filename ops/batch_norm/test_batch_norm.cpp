// batch_norm: shape-inference table (inference and training), every impl
// against the reference over a dtype x shape matrix in both modes, one
// instance fed changing shapes, and hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Attributes training(double momentum = 0.9) { return attrs({{"training_mode", true}, {"momentum", momentum}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(BatchNormShape, InferenceGivesYTrainingAddsTheRunningStatistics) {
    const Dimension dyn;
    const Layout x({2, 3, 4, 5}, DataType::f32), c({3}, DataType::f32), h({dyn, 3}, DataType::f16);
    const Layout hc({3}, DataType::f16);
    test::expect_shapes(
        "batch_norm",
        {
            {{x, c, c, c, c}, {}, {x}},
            {{x, c, c, c, c}, training(), {x, c, c}},
            {{h, hc, hc, hc, hc}, {}, {h}},
            {{f32({dyn, dyn}), f32({dyn}), c, c, c}, training(), {f32({dyn, dyn}), f32({dyn}), f32({dyn})}},
            {{f32({0, 3, 2}), c, c, c, c}, {}, {f32({0, 3, 2})}},
        });
}

TEST(BatchNormShape, BadInputsAreErrorsNamingTheFieldAndShapes) {
    const Layout x({2, 3, 4, 5}, DataType::f32), c({3}, DataType::f32);
    test::expect_shapes("batch_norm",
                        {
                            {{x, f32({4}), c, c, c}, {}, {}, {"node 'node'", "scale [4]", "x [2,3,4,5]", "channel"}},
                            {{x, c, c, c, f32({1, 3})}, {}, {}, {"var [1,3]", "1-D"}},
                            {{x, c, c, Layout({3}, DataType::f16), c}, {}, {}, {"mean", "type of x"}},
                            {{f32({3}), c, c, c, c}, {}, {}, {"rank >= 2"}},
                            {{Layout({2, 3}, DataType::i32), c, c, c, c}, {}, {}, {"floating"}},
                        });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

// Runs of x [n, c, h, w] with per-channel inputs; var drawn from [0.1, 2).
std::vector<test::Run> runs(DataType t, const std::vector<Shape>& shapes, uint64_t seed) {
    std::vector<test::Run> out;
    for (const Shape& s : shapes) {
        const Shape ch{s[1]};
        out.push_back({test::random_tensor(t, s, seed, -3, 3), test::random_tensor(t, ch, seed + 1, -2, 2),
                       test::random_tensor(t, ch, seed + 2, -1, 1), test::random_tensor(t, ch, seed + 3, -1, 1),
                       test::random_tensor(t, ch, seed + 4, 0.1, 2)});
        seed += 5;
    }
    return out;
}

TEST(BatchNormImpls, EveryImplMatchesTheReferenceInBothModes) {
    const std::vector<Shape> shapes = {{1, 1, 1, 1}, {2, 3, 4, 5}, {1, 16, 3, 17}, {3, 2, 1, 257}, {0, 3, 2, 2}};
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (bool train : {false, true}) {
            SCOPED_TRACE(std::string(to_string(t)) + (train ? " training" : " inference"));
            const Layout c({Dimension()}, t);
            test::expect_impls_match_reference(
                {"batch_norm",
                 train ? training(0.7) : Attributes{},
                 {Layout(PartialShape::dynamic_of_rank(4), t), c, c, c, c},
                 {}},
                runs(t, t == DataType::f32 ? shapes : std::vector<Shape>{{2, 3, 4, 5}, {1, 16, 3, 17}}, 3), tol(t));
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(BatchNormDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Shape> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back(Shape{2, 3, n});
    shapes.push_back(Shape{1, 3, 1});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout c({3}, DataType::f32);
        for (bool train : {false, true})
            test::expect_sequence(
                {"batch_norm", train ? training() : Attributes{}, {f32({Dimension(), 3, Dimension()}), c, c, c, c}, {}},
                runs(DataType::f32, shapes, 30), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Channel 0 {1, 3} (over the batch), channel 1 {2, 6}: batch means 2 and 4,
// variances 1 and 4; given mean 0, var 1 (inference) y = x * scale + bias.
TEST(BatchNormValues, BothModesMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 6});
    const HostTensor scale = HostTensor::from_floats(Shape{2}, {2, 1});
    const HostTensor bias = HostTensor::from_floats(Shape{2}, {0, 1});
    const HostTensor mean = HostTensor::from_floats(Shape{2}, {0, 0});
    const HostTensor var = HostTensor::from_floats(Shape{2}, {1, 1});
    const std::vector<Layout> l(5, Layout({2}, DataType::f32));
    const std::vector<Layout> in = {x.layout(), l[1], l[2], l[3], l[4]};
    const HostTensor y =
        test::reference_outputs({"batch_norm", attrs({{"epsilon", 0.0}}), in, {}}, {x, scale, bias, mean, var})[0];
    const double want[] = {2, 3, 6, 7};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << i;
    const std::vector<HostTensor> t = test::reference_outputs(
        {"batch_norm", attrs({{"epsilon", 0.0}, {"training_mode", true}, {"momentum", 0.5}}), in, {}},
        {x, scale, bias, mean, var});
    const double want_t[] = {-2, 0, 2, 2};   // channel 0: (x - 2) * 2; channel 1: (x - 4) / 2 + 1
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(t[0].get_as_double(i), want_t[i], 1e-6) << i;
    EXPECT_NEAR(t[1].get_as_double(0), 1.0, 1e-6);   // 0 * 0.5 + 2 * 0.5
    EXPECT_NEAR(t[1].get_as_double(1), 2.0, 1e-6);
    EXPECT_NEAR(t[2].get_as_double(0), 1.0, 1e-6);   // 1 * 0.5 + 1 * 0.5
    EXPECT_NEAR(t[2].get_as_double(1), 2.5, 1e-6);   // 1 * 0.5 + 4 * 0.5
}

}   // namespace
}   // namespace dynrt
