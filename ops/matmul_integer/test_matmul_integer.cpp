// matmul_integer: shape-inference table, every impl against the reference
// (u8/i8 mixes, zero points per tensor, row and column, requantized to u8
// and i8, batch broadcasting), one instance fed changing shapes, and
// hand-computed values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

const char* const kOp = "matmul_integer";
const Attributes kZps = attrs({{"a_zero_point", true}, {"b_zero_point", true}});
const Attributes kRequant = attrs({{"requantize", true}});

Layout u8(PartialShape s) { return Layout(std::move(s), DataType::u8); }
Layout i8(PartialShape s) { return Layout(std::move(s), DataType::i8); }

// ---- 1. shape inference ------------------------------------------------------

TEST(MatmulIntegerShape, OutputIsTheBroadcastProductInI32OrTheOutputZeroPointsType) {
    const Dimension dyn;
    test::expect_shapes(
        kOp,
        {
            {{u8({4, 3}), u8({3, 2})}, {}, {Layout({4, 2}, DataType::i32)}},
            {{i8({2, dyn, 3}), u8({3, 5})}, {}, {Layout({2, dyn, 5}, DataType::i32)}},
            {{u8({2, 1, 4, 3}), u8({5, 3, 2}), u8({4}), u8({})}, kZps, {Layout({2, 5, 4, 2}, DataType::i32)}},
            {{u8({4, 3}), u8({3, 2}), u8({2})}, attrs({{"b_zero_point", true}}), {Layout({4, 2}, DataType::i32)}},
            {{u8({2, 4}), f32({}), u8({}), i8({4, 3}), f32({3}), i8({3}), f32({}), i8({})}, kRequant, {i8({2, 3})}},
        });
}

TEST(MatmulIntegerShape, BadInputsAreErrorsNamingTheField) {
    test::expect_shapes(
        kOp,
        {
            {{u8({4, 3}), u8({2, 2})}, {}, {}, {"node 'node'", "inner dims differ"}},
            {{f32({4, 3}), u8({3, 2})}, {}, {}, {"A must be u8 or i8"}},
            {{u8({4, 3}), u8({3, 2}), u8({3})}, attrs({{"a_zero_point", true}}), {}, {"a_zero_point", "row of A"}},
            {{u8({4, 3}), u8({3, 2}), i8({})}, attrs({{"a_zero_point", true}}), {}, {"a_zero_point", "must be u8"}},
            {{u8({4, 3}), u8({3, 2})}, kZps, {}, {"takes 4 inputs"}},
            {{u8({2, 4}), f32({3}), u8({}), u8({4, 3}), f32({3}), u8({3}), f32({}), u8({})},
             kRequant,
             {},
             {"a_scale", "row of A"}},
            {{u8({3}), u8({3, 2})}, {}, {}, {"rank >= 2"}},
            {{u8({2, 4, 3}), u8({3, 3, 2})}, {}, {}, {"batch dims"}},
        });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Run mats(DataType ta, DataType tb, const Shape& a, const Shape& b, uint64_t seed) {
    auto full = [&](DataType t, const Shape& s, uint64_t sd) {
        return test::random_tensor(t, s, sd, t == DataType::u8 ? 0 : -128, t == DataType::u8 ? 256 : 128);
    };
    return {full(ta, a, seed), full(tb, b, seed + 1)};
}

TEST(MatmulIntegerImpls, EveryImplMatchesTheReferenceWithZeroPoints) {
    for (DataType ta : {DataType::u8, DataType::i8})
        for (DataType tb : {DataType::u8, DataType::i8}) {
            SCOPED_TRACE(std::string(to_string(ta)) + " x " + to_string(tb));
            // Zero points per row of A and per column of B, as constants.
            const HostTensor azp = test::random_tensor(ta, Shape{5}, 3, 0, 20);
            const HostTensor bzp = test::random_tensor(tb, Shape{1}, 4, 0, 20);
            std::vector<test::Run> runs;
            uint64_t seed = 10;
            for (int64_t k : {1, 17, 64}) runs.push_back(mats(ta, tb, Shape{2, 5, k}, Shape{k, 13}, seed += 2));
            test::expect_impls_match_reference(
                {kOp,
                 kZps,
                 {Layout({Dimension(), 5, Dimension()}, ta), Layout({Dimension(), 13}, tb), azp.layout(), bzp.layout()},
                 {{2, azp}, {3, bzp}}},
                runs);
        }
    // No zero points; one B against a batch of A; a batch against a batch.
    std::vector<test::Run> runs = {mats(DataType::u8, DataType::i8, Shape{3, 1, 7}, Shape{3, 7, 1}, 30),
                                   mats(DataType::u8, DataType::i8, Shape{2, 4, 3}, Shape{2, 3, 17}, 32)};
    test::expect_impls_match_reference({kOp,
                                        {},
                                        {Layout(PartialShape::dynamic_of_rank(3), DataType::u8),
                                         Layout(PartialShape::dynamic_of_rank(3), DataType::i8)},
                                        {}},
                                       runs);
}

TEST(MatmulIntegerImpls, RequantizedProductsMatchTheReference) {
    for (DataType t : {DataType::u8, DataType::i8}) {
        SCOPED_TRACE(to_string(t));
        const auto zp = [&](const Shape& s, uint64_t seed) {
            return test::random_tensor(t, s, seed, t == DataType::u8 ? 100 : -20, t == DataType::u8 ? 150 : 20);
        };
        // Per-row a_scale, per-column b_scale and b_zero_point.
        const std::map<size_t, HostTensor> c = {
            {1, test::random_tensor(DataType::f32, Shape{4}, 1, 0.01, 0.1)}, {2, zp(Shape{}, 2)},
            {4, test::random_tensor(DataType::f32, Shape{9}, 3, 0.01, 0.1)}, {5, zp(Shape{9}, 4)},
            {6, test::random_tensor(DataType::f32, Shape{}, 5, 0.5, 2)},     {7, zp(Shape{}, 6)}};

        std::vector<test::Run> runs;
        uint64_t seed = 40;
        for (int64_t k : {1, 16, 33}) runs.push_back(mats(t, t, Shape{4, k}, Shape{k, 9}, seed += 2));
        test::expect_impls_match_reference(
            {kOp,
             kRequant,
             {Layout({4, Dimension()}, t), c.at(1).layout(), c.at(2).layout(), Layout({Dimension(), 9}, t),
              c.at(4).layout(), c.at(5).layout(), c.at(6).layout(), c.at(7).layout()},
             c},
            runs);
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(MatmulIntegerDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 60;
    for (int64_t m : test::tail_sizes())
        runs.push_back(mats(DataType::u8, DataType::u8, Shape{m, 16}, Shape{16, 5}, seed += 2));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({kOp, {}, {u8({Dimension(), 16}), u8({16, 5})}, {}}, runs, o);
    }
}

// ---- the reference's values -------------------------------------------------------

// ONNX's MatMulInteger example: A - 12 times B - 0.
TEST(MatmulIntegerValues, ProductsMatchHandComputedValues) {
    const HostTensor a = HostTensor::from_int64(DataType::u8, Shape{2, 2}, {11, 7, 3, 13});
    const HostTensor b = HostTensor::from_int64(DataType::u8, Shape{2, 2}, {1, 2, 3, 4});
    const HostTensor az = HostTensor::from_int64(DataType::u8, Shape{}, {3});
    const HostTensor bz = HostTensor::from_int64(DataType::u8, Shape{2}, {1, 0});
    const std::vector<HostTensor> y =
        test::reference_outputs({kOp, kZps, {a.layout(), b.layout(), az.layout(), bz.layout()}, {}}, {a, b, az, bz});
    // (A - 3) = [[8, 4], [0, 10]]; (B - [1, 0]) = [[0, 2], [2, 4]].
    const int64_t want[] = {8, 32, 20, 40};
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int64_t>(y[0].get_as_double(i)), want[i]) << i;
    // Requantized with scales 0.5 * 1 / 4: acc / 8, ties to even, + 100.
    const HostTensor s = HostTensor::from_floats(Shape{}, {0.5f}), one = HostTensor::from_floats(Shape{}, {1.0f});
    const HostTensor ys = HostTensor::from_floats(Shape{}, {4.0f}),
                     yz = HostTensor::from_int64(DataType::u8, Shape{}, {100});
    const HostTensor bz0 = HostTensor::from_int64(DataType::u8, Shape{2}, {1, 0});
    const std::vector<HostTensor> q = test::reference_outputs(
        {kOp,
         kRequant,
         {a.layout(), s.layout(), az.layout(), b.layout(), one.layout(), bz0.layout(), ys.layout(), yz.layout()},
         {}},
        {a, s, az, b, one, bz0, ys, yz});
    const int64_t wantq[] = {101, 104, 102, 105};   // 1, 4, 2.5 -> 2, 5
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int64_t>(q[0].get_as_double(i)), wantq[i]) << i;
}

// The OpenCL kernel reports a bad scale; the host raises an error naming it.
TEST(MatmulIntegerValues, OpenClRaisesTheErrorOfANonPositiveScale) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL engine";
    const HostTensor a = HostTensor::from_int64(DataType::u8, Shape{1, 2}, {1, 2});
    const HostTensor b = HostTensor::from_int64(DataType::u8, Shape{2, 1}, {3, 4});
    const HostTensor z = HostTensor::from_int64(DataType::u8, Shape{}, {0});
    const HostTensor one = HostTensor::from_floats(Shape{}, {1.0f}), bad = HostTensor::from_floats(Shape{1}, {-2.0f});
    const auto program = test::single_node_program(
        kOp, {a.layout(), one.layout(), z.layout(), b.layout(), bad.layout(), z.layout(), one.layout(), z.layout()},
        kRequant);
    const std::string e = test::error_of([&] { test::run_once(program, {a, one, z, b, bad, z, one, z}, {}, "ocl"); });
    for (const char* w : {"node 'node'", "b_scale", "not positive"}) EXPECT_NE(e.find(w), std::string::npos) << e;
}

}   // namespace
}   // namespace dynrt
