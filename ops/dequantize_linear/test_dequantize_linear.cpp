// dequantize_linear: shape-inference table, every impl against the reference
// (per tensor and per axis, u8, i8 and i32 x, f32 and f16 scales), one
// instance fed changing shapes, hand-computed values and bad-input errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

const char* const kOp = "dequantize_linear";

Attributes axis(int64_t a) { return attrs({{"axis", a}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(DequantizeLinearShape, OutputIsXInTheScalesType) {
    const Dimension dyn;
    const Layout x({2, 3, dyn}, DataType::u8), xi({dyn, 4}, DataType::i8);
    const PartialShape xs = x.shape;
    test::expect_shapes(kOp, {
                                 {{x, f32({})}, {}, {f32(xs)}},
                                 {{x, f32({}), Layout({}, DataType::u8)}, {}, {f32(xs)}},
                                 {{x, f32({3}), Layout({3}, DataType::u8)}, axis(1), {f32(xs)}},
                                 {{x, f32({dyn})}, axis(-1), {f32(xs)}},
                                 {{xi, Layout({4}, DataType::f16)}, axis(1), {Layout(xi.shape, DataType::f16)}},
                                 {{Layout({5}, DataType::i32), f32({1})}, {}, {f32({5})}},
                                 {{Layout({0, 2}, DataType::u8), f32({})}, {}, {f32({0, 2})}},
                             });
}

TEST(DequantizeLinearShape, BadScalesAndZeroPointsAreErrorsNamingTheField) {
    const Layout x({2, 3, 4}, DataType::u8);
    test::expect_shapes(kOp,
                        {
                            {{x, f32({4})}, axis(1), {}, {"node 'node'", "x_scale", "4 elements", "3 along axis 1"}},
                            {{x, f32({2, 2})}, {}, {}, {"x_scale", "scalar or 1-D"}},
                            {{x, Layout({}, DataType::i32)}, {}, {}, {"x_scale", "f32 or f16"}},
                            {{x, f32({}), Layout({}, DataType::i8)}, {}, {}, {"x_zero_point", "x's type"}},
                            {{x, f32({3}), Layout({}, DataType::u8)}, axis(1), {}, {"x_zero_point", "x_scale's shape"}},
                            {{f32({3}), f32({})}, {}, {}, {"x", "u8, i8 or i32", "f32[3]"}},
                            {{x, f32({3})}, axis(-4), {}, {"axis"}},
                        });
}

// ---- 2. every impl against the reference -----------------------------------------

// Runs of x over its whole range with a positive scale and a zero point
// per channel of `ch` elements (ch 0: scalars).
std::vector<test::Run> runs(DataType xt, DataType st, const std::vector<Shape>& xs, size_t ch, bool with_zp,
                            uint64_t seed) {
    const double lo = xt == DataType::u8 ? 0 : xt == DataType::i8 ? -128 : -100000;
    const double hi = xt == DataType::u8 ? 256 : xt == DataType::i8 ? 128 : 100000;
    const Shape ps = ch == 0 ? Shape{} : Shape{static_cast<int64_t>(ch)};
    std::vector<test::Run> r;
    for (const Shape& s : xs) {
        test::Run run = {test::random_tensor(xt, s, seed, lo, hi), test::random_tensor(st, ps, seed + 1, 0.01, 2)};
        if (with_zp)
            run.push_back(xt == DataType::i32 ? HostTensor::from_int64(xt, ps, std::vector<int64_t>(ps.count(), 0))
                                              : test::random_tensor(xt, ps, seed + 2, lo, hi));
        r.push_back(run);
        seed += 3;
    }
    return r;
}

TEST(DequantizeLinearImpls, EveryImplMatchesTheReferencePerTensorAndPerAxis) {
    // Per tensor (tails, no elements) for u8; per axis for u8 and i8.
    test::expect_impls_match_reference(
        {kOp, {}, {Layout(PartialShape::dynamic_of_rank(2), DataType::u8), f32({}), Layout({}, DataType::u8)}, {}},
        runs(DataType::u8, DataType::f32, {{1, 1}, {3, 17}, {0, 5}}, 0, true, 1));
    for (DataType xt : {DataType::u8, DataType::i8}) {
        SCOPED_TRACE(to_string(xt));
        test::expect_impls_match_reference(
            {kOp, axis(1), {Layout({Dimension(), 3, Dimension()}, xt), f32({3}), Layout({3}, xt)}, {}},
            runs(xt, DataType::f32, {{2, 3, 5}, {3, 3, 1}}, 3, true, 20));
    }
    // No zero point, per last axis; an f16 scale (f16 output); an i32 x (the
    // optimised cpu impls take u8 and i8 x with f32 scales only).
    test::expect_impls_match_reference({kOp, axis(-1), {Layout({Dimension(), 7}, DataType::u8), f32({7})}, {}},
                                       runs(DataType::u8, DataType::f32, {{5, 7}}, 7, false, 40));
    test::expect_impls_match_reference(
        {kOp, {}, {Layout({Dimension()}, DataType::i8), Layout({}, DataType::f16), Layout({}, DataType::i8)}, {}},
        runs(DataType::i8, DataType::f16, {{13}, {300}}, 0, true, 50), {}, test::kOptimisedCpuImpls);
    test::expect_impls_match_reference(
        {kOp, {}, {Layout({Dimension()}, DataType::i32), f32({}), Layout({}, DataType::i32)}, {}},
        runs(DataType::i32, DataType::f32, {{17}}, 0, true, 60), {}, test::kOptimisedCpuImpls);
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(DequantizeLinearDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Shape> xs;
    for (int64_t n : test::tail_sizes()) xs.push_back(Shape{2, 3, n});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence(
            {kOp, axis(1), {Layout({2, 3, Dimension()}, DataType::i8), f32({3}), Layout({3}, DataType::i8)}, {}},
            runs(DataType::i8, DataType::f32, xs, 3, true, 80), o);
    }
}

// ---- the reference's values -------------------------------------------------------

TEST(DequantizeLinearValues, PerAxisValuesMatchHandComputedOnes) {
    const HostTensor x = HostTensor::from_int64(DataType::u8, Shape{2, 2}, {0, 255, 128, 10});
    const HostTensor s = HostTensor::from_floats(Shape{2}, {0.5f, 2.0f});
    const HostTensor z = HostTensor::from_int64(DataType::u8, Shape{2}, {128, 10});
    // Rows use scales 0.5 (zero point 128) and 2 (zero point 10).
    const std::vector<HostTensor> y =
        test::reference_outputs({kOp, axis(0), {x.layout(), s.layout(), z.layout()}, {}}, {x, s, z});
    const double want[] = {-64, 63.5, 236, 0};
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[0].get_as_double(i), want[i]) << i;
}

TEST(DequantizeLinearValues, BadScalesAndI32ZeroPointsAreErrorsNamingTheNodeAndField) {
    const HostTensor x = HostTensor::from_int64(DataType::i32, Shape{2}, {1, 2});
    const HostTensor bad = HostTensor::from_floats(Shape{}, {-0.5f});
    std::string e = test::error_of([&] {
        test::reference_outputs({kOp, {}, {x.layout(), bad.layout()}, {}}, {x, bad});
    });
    for (const char* w : {"node 'node'", "x_scale", "positive"}) EXPECT_NE(e.find(w), std::string::npos) << e;
    const HostTensor s = HostTensor::from_floats(Shape{}, {0.5f});
    const HostTensor z = HostTensor::from_int64(DataType::i32, Shape{}, {3});
    e = test::error_of([&] {
        test::reference_outputs({kOp, {}, {x.layout(), s.layout(), z.layout()}, {}}, {x, s, z});
    });
    for (const char* w : {"node 'node'", "x_zero_point", "0 only"}) EXPECT_NE(e.find(w), std::string::npos) << e;
}

// The OpenCL kernel reports bad scales and zero points (its own words); the host raises
// them naming the node, field and element.
TEST(DequantizeLinearValues, OpenClRaisesTheErrorsOfBadScalesAndZeroPoints) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL engine";
    const HostTensor x = HostTensor::from_int64(DataType::i32, Shape{2}, {1, 2});
    const HostTensor s = HostTensor::from_floats(Shape{}, {0.0f}), one = HostTensor::from_floats(Shape{}, {1.0f});
    const HostTensor z = HostTensor::from_int64(DataType::i32, Shape{}, {0}),
                     bad = HostTensor::from_int64(DataType::i32, Shape{}, {2});
    const auto program = test::single_node_program(kOp, {x.layout(), s.layout(), z.layout()}, {});
    std::string e = test::error_of([&] { test::run_once(program, {x, s, z}, {}, "ocl"); });
    for (const char* w : {"node 'node'", "x_scale[0]", "not positive"}) EXPECT_NE(e.find(w), std::string::npos) << e;
    e = test::error_of([&] { test::run_once(program, {x, one, bad}, {}, "ocl"); });
    for (const char* w : {"node 'node'", "x_zero_point[0]", "is not 0"}) EXPECT_NE(e.find(w), std::string::npos) << e;
}

}   // namespace
}   // namespace dynrt
