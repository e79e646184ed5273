// quantize_linear: shape-inference table, every impl against the reference
// (per tensor and per axis, u8 and i8, f32 and f16 x), one instance fed
// changing shapes, hand-computed values and the errors of bad scales.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

const char* const kOp = "quantize_linear";

Attributes axis(int64_t a) { return attrs({{"axis", a}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(QuantizeLinearShape, OutputIsXInTheZeroPointsTypeOrTo) {
    const Dimension dyn;
    const Layout x({2, 3, dyn}, DataType::f32), h({dyn, 4}, DataType::f16);
    const Layout u8s({}, DataType::u8), i8s({}, DataType::i8), u8c({3}, DataType::u8);
    test::expect_shapes(kOp, {
                                 {{x, f32({})}, {}, {Layout(x.shape, DataType::u8)}},
                                 {{x, f32({}), i8s}, {}, {Layout(x.shape, DataType::i8)}},
                                 {{x, f32({1}), Layout({1}, DataType::u8)}, {}, {Layout(x.shape, DataType::u8)}},
                                 {{x, f32({3}), u8c}, axis(1), {Layout(x.shape, DataType::u8)}},
                                 {{x, f32({3}), u8c}, axis(-2), {Layout(x.shape, DataType::u8)}},
                                 {{x, f32({dyn})}, axis(2), {Layout(x.shape, DataType::u8)}},
                                 {{x, f32({})}, attrs({{"to", std::string("i8")}}), {Layout(x.shape, DataType::i8)}},
                                 {{h, Layout({}, DataType::f16), u8s}, {}, {Layout(h.shape, DataType::u8)}},
                                 {{f32({0, 3}), f32({3}), u8c}, {}, {Layout({0, 3}, DataType::u8)}},
                             });
}

TEST(QuantizeLinearShape, BadScalesAndZeroPointsAreErrorsNamingTheField) {
    const Layout x({2, 3, 4}, DataType::f32);
    test::expect_shapes(kOp,
                        {
                            {{x, f32({4})}, axis(1), {}, {"node 'node'", "y_scale", "4 elements", "3 along axis 1"}},
                            {{x, f32({3})}, axis(3), {}, {"axis"}},
                            {{x, f32({3, 1})}, {}, {}, {"y_scale", "scalar or 1-D"}},
                            {{x, Layout({}, DataType::i32)}, {}, {}, {"y_scale", "f32"}},
                            {{x, f32({}), Layout({}, DataType::i32)}, {}, {}, {"y_zero_point", "u8 or i8"}},
                            {{x, f32({3}), Layout({}, DataType::u8)}, axis(1), {}, {"y_zero_point", "y_scale's shape"}},
                            {{Layout({3}, DataType::i32), f32({})}, {}, {}, {"x", "f32 or f16", "i32[3]"}},
                            {{x}, {}, {}, {"2 or 3 inputs"}},
                        });
}

// ---- 2. every impl against the reference -----------------------------------------

// Runs of x (values to +-40, past the range of a scale of 0.05) with a
// positive scale and a zero point per channel of `ch` elements (ch 0: scalars).
std::vector<test::Run> runs(DataType xt, DataType zt, const std::vector<Shape>& xs, size_t ch, bool with_zp,
                            uint64_t seed) {
    std::vector<test::Run> r;
    const Shape ps = ch == 0 ? Shape{} : Shape{static_cast<int64_t>(ch)};
    for (const Shape& s : xs) {
        test::Run run = {test::random_tensor(xt, s, seed, -40, 40),
                         test::random_tensor(DataType::f32, ps, seed + 1, 0.05, 0.5)};
        if (with_zp)
            run.push_back(
                test::random_tensor(zt, ps, seed + 2, zt == DataType::u8 ? 0 : -128, zt == DataType::u8 ? 256 : 128));
        r.push_back(run);
        seed += 3;
    }
    return r;
}

TEST(QuantizeLinearImpls, EveryImplMatchesTheReferencePerTensorAndPerAxis) {
    // Every form with f32 x to u8; i8 and f16 x per axis (a static OpenCL
    // kernel per shape and form: the test keeps their count small).
    for (const auto& [xt, zt] : std::vector<std::pair<DataType, DataType>>{
             {DataType::f32, DataType::u8}, {DataType::f32, DataType::i8}, {DataType::f16, DataType::u8}}) {
        SCOPED_TRACE(std::string(to_string(xt)) + " -> " + to_string(zt));
        const std::vector<std::string> skip =
            xt == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls;
        // Per axis 1 of a rank-3 x.
        test::expect_impls_match_reference(
            {kOp, axis(1), {Layout({Dimension(), 3, Dimension()}, xt), f32({3}), Layout({3}, zt)}, {}},
            runs(xt, zt, {{2, 3, 5}, {3, 3, 1}}, 3, true, 20), {}, skip);
        if (xt != DataType::f32 || zt != DataType::u8) continue;
        // Per tensor (tails, no elements) and per last axis.
        test::expect_impls_match_reference(
            {kOp, {}, {f32(PartialShape::dynamic_of_rank(2)), f32({}), Layout({}, zt)}, {}},
            runs(xt, zt, {{1, 1}, {3, 17}, {0, 5}}, 0, true, 1));
        test::expect_impls_match_reference({kOp, axis(-1), {f32({Dimension(), 7}), f32({7}), Layout({7}, zt)}, {}},
                                           runs(xt, zt, {{5, 7}}, 7, true, 40));
    }
    // No zero point: u8 by default, i8 by `to`.
    for (const char* to : {"u8", "i8"})
        test::expect_impls_match_reference({kOp, attrs({{"to", std::string(to)}}), {f32({Dimension()}), f32({})}, {}},
                                           runs(DataType::f32, DataType::u8, {{13}, {300}}, 0, false, 60));
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(QuantizeLinearDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Shape> xs;
    for (int64_t n : test::tail_sizes()) xs.push_back(Shape{2, 3, n});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence(
            {kOp, axis(1), {Layout({2, 3, Dimension()}, DataType::f32), f32({3}), Layout({3}, DataType::i8)}, {}},
            runs(DataType::f32, DataType::i8, xs, 3, true, 80), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Ties round to even, then the zero point is added and the sum saturated.
TEST(QuantizeLinearValues, TiesRoundToEvenAndResultsSaturate) {
    const float nan = std::nanf("");
    const HostTensor x = HostTensor::from_floats(Shape{9}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 1000, -1000, 0.25f, nan});
    const HostTensor s = HostTensor::from_floats(Shape{}, {0.5f});
    for (DataType zt : {DataType::u8, DataType::i8}) {
        const HostTensor z = HostTensor::from_int64(zt, Shape{}, {zt == DataType::u8 ? 10 : -10});
        const std::vector<HostTensor> y =
            test::reference_outputs({kOp, {}, {x.layout(), s.layout(), z.layout()}, {}}, {x, s, z});
        // x / 0.5: 1, 3, 5, -1, -5, 2000, -2000, 0.5 -> 0 (tie to even), NaN -> 0.
        const int64_t zp = zt == DataType::u8 ? 10 : -10, lo = zt == DataType::u8 ? 0 : -128,
                      hi = zt == DataType::u8 ? 255 : 127;
        const int64_t want[] = {1 + zp, 3 + zp, 5 + zp, -1 + zp, -5 + zp, hi, lo, zp, 0};
        for (size_t i = 0; i < 9; ++i)
            EXPECT_EQ(static_cast<int64_t>(y[0].get_as_double(i)), want[i]) << to_string(zt) << " " << i;
    }
    // Scale 1: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -2.5 -> -2.
    const HostTensor one = HostTensor::from_floats(Shape{}, {1.0f});
    const HostTensor z = HostTensor::from_int64(DataType::i8, Shape{}, {0});
    const std::vector<HostTensor> y =
        test::reference_outputs({kOp, {}, {x.layout(), one.layout(), z.layout()}, {}}, {x, one, z});
    const int64_t want[] = {0, 2, 2, 0, -2};
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(static_cast<int64_t>(y[0].get_as_double(i)), want[i]) << i;
}

TEST(QuantizeLinearValues, AScaleThatIsNotPositiveIsAnErrorNamingTheNodeAndField) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 4});
    for (float bad : {0.0f, -1.0f}) {
        const HostTensor s = HostTensor::from_floats(Shape{2}, {0.5f, bad});
        const std::string e = test::error_of([&] {
            test::reference_outputs({kOp, axis(0), {x.layout(), s.layout()}, {}}, {x, s});
        });
        for (const char* w : {"node 'node'", "y_scale", "y_scale[1]", "positive"})
            EXPECT_NE(e.find(w), std::string::npos) << e;
    }
}

// The OpenCL kernel reports a bad scale (its own words: "not positive"); the
// host raises it naming the node, field and element.
TEST(QuantizeLinearValues, OpenClRaisesTheErrorOfANonPositiveScale) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL engine";
    const HostTensor x = HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 4});
    const HostTensor s = HostTensor::from_floats(Shape{2}, {0.5f, -1.0f});
    const auto program = test::single_node_program(kOp, {x.layout(), s.layout()}, axis(0));
    const std::string e = test::error_of([&] { test::run_once(program, {x, s}, {}, "ocl"); });
    for (const char* w : {"node 'node'", "y_scale[1]", "not positive"}) EXPECT_NE(e.find(w), std::string::npos) << e;
    const HostTensor good = HostTensor::from_floats(Shape{2}, {0.5f, 1.0f});
    EXPECT_EQ(test::run_once(program, {x, good}, {}, "ocl").get_as_double(3), 4);
}

}   // namespace
}   // namespace dynrt
