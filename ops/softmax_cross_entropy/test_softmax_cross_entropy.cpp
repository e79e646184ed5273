// softmax_cross_entropy: shape-inference table (ranks, reductions, weights,
// errors), hand-computed values (weights, ignore_index, mean, log_prob, an
// out-of-range label on the host and on the device), every impl against the
// reference (both outputs), and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

Attributes red(const std::string& r, int64_t ignore = std::numeric_limits<int64_t>::min()) {
    return test::attrs({{"reduction", r}, {"ignore_index", ignore}});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(SoftmaxCrossEntropyShape, NoneKeepsTheTargetShapeSumAndMeanGiveAScalar) {
    const Dimension dyn;
    test::expect_shapes(
        "softmax_cross_entropy",
        {
            {{test::f32({3, 5}), i64({3})}, red("none"), {test::f32({3}), test::f32({3, 5})}},
            {{test::f32({3, 5, 2, 4}), i64({3, 2, 4})}, red("none"), {test::f32({3, 2, 4}), test::f32({3, 5, 2, 4})}},
            {{test::f32({dyn, 5, 2}), i64({4, dyn})}, red("none"), {test::f32({4, 2}), test::f32({dyn, 5, 2})}},
            {{test::f32({3, 5}), i64({3}), test::f32({5})}, red("sum"), {test::f32({}), test::f32({3, 5})}},
            {{test::f32({0, 5}), i64({0})}, red("mean"), {test::f32({}), test::f32({0, 5})}},
        });
}

TEST(SoftmaxCrossEntropyShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "softmax_cross_entropy",
        {
            {{test::f32({3, 5}), test::f32({3})}, red("none"), {}, {"node 'node'", "labels", "i32 or i64"}},
            {{test::f32({3}), i64({3})}, red("none"), {}, {"node 'node'", "scores", "rank >= 2"}},
            {{test::f32({3, 5, 2}), i64({3})}, red("none"), {}, {"node 'node'", "rank 2", "i64[3]"}},
            {{test::f32({3, 5, 2}), i64({3, 4})}, red("none"), {}, {"node 'node'", "dim 1", "[3,5,2]"}},
            {{test::f32({3, 5}), i64({3}), test::f32({4})}, red("sum"), {}, {"node 'node'", "weights"}},
            {{test::f32({3, 5}), i64({3})}, red("max"), {}, {"reduction"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const std::vector<HostTensor>& in, const Attributes& a, const std::string& engine = "cpu") {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("softmax_cross_entropy", layouts, a), in, NetworkOptions{}, engine);
}

const HostTensor kIn = HostTensor::from_floats(Shape{2, 3}, {-1, -2, -3, -4, -5, -6});
const HostTensor kW = HostTensor::from_floats(Shape{3}, {1, 2, 4});

// Each row of kIn is log_softmax'ed to {-L, -1 - L, -2 - L}, L = log(1 + 1/e + 1/e^2).
const float kL = static_cast<float>(std::log(1 + std::exp(-1.0) + std::exp(-2.0)));

TEST(SoftmaxCrossEntropyValues, WeightsIgnoreIndexAndReductions) {
    const float L = kL;
    const HostTensor t = HostTensor::from_int64(DataType::i64, Shape{2}, {2, 1});
    test::expect_close(run({kIn, t}, red("none")), HostTensor::from_floats(Shape{2}, {2 + L, 1 + L}), 1e-6, 0);
    test::expect_close(run({kIn, t, kW}, red("none")), HostTensor::from_floats(Shape{2}, {8 + 4 * L, 2 + 2 * L}), 1e-6,
                       0);
    test::expect_close(run({kIn, t, kW}, red("sum")), HostTensor::from_floats(Shape{}, {10 + 6 * L}), 1e-6, 0);
    test::expect_close(run({kIn, t, kW}, red("mean")), HostTensor::from_floats(Shape{}, {(10 + 6 * L) / 6}), 1e-6, 0);
    test::expect_close(run({kIn, t, kW}, red("mean", 1)), HostTensor::from_floats(Shape{}, {2 + L}), 1e-6, 0);
    test::expect_close(run({kIn, t}, red("none", 2)), HostTensor::from_floats(Shape{2}, {0, 1 + L}), 1e-6, 0);
}

TEST(SoftmaxCrossEntropyValues, LogProbIsTheSecondOutput) {
    const float L = kL;
    const HostTensor t = HostTensor::from_int64(DataType::i64, Shape{2}, {2, 1});
    // The reference's outputs; the impl tests below compare both outputs of every impl with it.
    const std::vector<HostTensor> out =
        test::reference_outputs({"softmax_cross_entropy", red("sum"), {kIn.layout(), t.layout()}, {}}, {kIn, t});
    ASSERT_EQ(out.size(), 2u);
    test::expect_close(out[1], HostTensor::from_floats(Shape{2, 3}, {-L, -1 - L, -2 - L, -L, -1 - L, -2 - L}), 1e-6, 0);
}

TEST(SoftmaxCrossEntropyValues, OutOfRangeLabelIsAnErrorNamingNodeAndTarget) {
    for (int64_t bad : {3, -1}) {
        const HostTensor t = HostTensor::from_int64(DataType::i32, Shape{2}, {0, bad});
        const std::string msg = test::error_of([&] { run({kIn, t}, red("none")); });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("label " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// The device cannot raise an error: a label out of range contributes 0.
TEST(SoftmaxCrossEntropyValues, OutOfRangeLabelContributesNothingOnTheDevice) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    const HostTensor t = HostTensor::from_int64(DataType::i64, Shape{2}, {7, 1});
    test::expect_close(run({kIn, t}, red("none"), "ocl"), HostTensor::from_floats(Shape{2}, {0, 1 + kL}), 1e-6, 0);
    test::expect_close(run({kIn, t}, red("mean"), "ocl"), HostTensor::from_floats(Shape{}, {1 + kL}), 1e-6, 0);
}

// ---- 2. every impl against the reference ---------------------------------------

// Labels in [0, C); with a weight when `weighted`.
test::Run make_run(DataType t, const Shape& in, bool weighted, uint64_t seed) {
    Shape ts;
    for (size_t d = 0; d < in.rank(); ++d)
        if (d != 1) ts.push_back(in[d]);
    test::Run r = {test::random_tensor(t, in, seed, -5, 5),
                   test::random_tensor(DataType::i64, ts, seed + 1, 0, static_cast<double>(in[1]))};
    if (weighted) r.push_back(test::random_tensor(t, Shape{in[1]}, seed + 2, 0.5, 2));
    return r;
}

TEST(SoftmaxCrossEntropyImpls, EveryImplMatchesTheReference) {
    // Every reduction with and without weight on f32, weighted mean on f16 and
    // f64: a static OpenCL build per shape, so the matrix is kept small.
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64}) {
        for (const std::string r : {"none", "sum", "mean"}) {
            for (bool weighted : {false, true}) {
                if (t != DataType::f32 && (r != "mean" || !weighted)) continue;
                SCOPED_TRACE(std::string(to_string(t)) + " " + r + (weighted ? " weighted" : ""));
                std::vector<test::Run> runs;
                uint64_t seed = 10;
                for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {3, 5, 7}, {2, 4, 257}})
                    runs.push_back(make_run(t, s, weighted, seed += 3));
                std::vector<Layout> in = {Layout(PartialShape::dynamic_of_rank(3), t),
                                          Layout(PartialShape::dynamic_of_rank(2), DataType::i64)};
                if (weighted) in.push_back(Layout(PartialShape::dynamic_of_rank(1), t));
                // f64: exp and log round differently on the device, a few ulps.
                std::optional<test::Tolerance> tol;
                if (t == DataType::f64) tol = test::Tolerance{1e-12, 1e-14};
                test::expect_impls_match_reference({"softmax_cross_entropy", red(r, 2), in, {}}, runs, tol);
            }
        }
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(SoftmaxCrossEntropyDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    for (const std::string r : {"none", "sum"}) {
        std::vector<test::Run> runs;
        uint64_t seed = 50;
        for (int64_t n : test::tail_sizes())
            runs.push_back(make_run(DataType::f32, Shape{n, 3, n % 3 + 1}, true, seed));
        runs.push_back({HostTensor(DataType::f32, Shape{0, 3, 2}), HostTensor(DataType::i64, Shape{0, 2}),
                        test::random_tensor(DataType::f32, Shape{3}, 9)});
        runs.push_back(make_run(DataType::f32, Shape{1, 3, 1}, true, 11));
        for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
            SCOPED_TRACE(r + ", " + o.engine + ", " + test::mode_name(o.mode));
            test::expect_sequence(
                {"softmax_cross_entropy",
                 red(r),
                 {test::f32({Dimension(), 3, Dimension()}), i64({Dimension(), Dimension()}), test::f32({3})},
                 {}},
                runs, o);
        }
    }
}

}   // namespace
}   // namespace dynrt
