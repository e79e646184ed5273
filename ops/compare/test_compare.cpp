// compare: shape-inference table (broadcasting, dynamic and bounded dims,
// errors), hand-computed values (NaN, i64 past 2^53, booleans), every impl
// against the reference over a dtype x mode x shape matrix (ranks 0 to 8,
// tails, broadcasts, empty tensors, NaN), and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes mode(const std::string& m) { return test::attrs({{"mode", m}}); }

const std::vector<std::string> kModes = {"equal", "less", "less_equal", "greater", "greater_equal"};

Layout bool_of(PartialShape s) { return Layout(std::move(s), DataType::boolean); }

// ---- 1. shape inference ----------------------------------------------------

TEST(CompareShape, BroadcastShapeWithABooleanResult) {
    const Dimension dyn;
    const Layout i64_row({1, 4}, DataType::i64), i64_col({3, 1}, DataType::i64);
    const Layout boolean({2, 3}, DataType::boolean);
    test::expect_shapes(
        "compare",
        {
            {{test::f32({2, 3}), test::f32({2, 3})}, mode("less"), {bool_of({2, 3})}},
            {{test::f32({2, 3}), test::f32({3})}, mode("greater"), {bool_of({2, 3})}},
            {{test::f32({}), test::f32({5})}, mode("equal"), {bool_of({5})}},
            {{test::f32({}), test::f32({})}, mode("equal"), {bool_of({})}},
            {{i64_row, i64_col}, mode("less_equal"), {bool_of({3, 4})}},
            {{test::f32({0, 3}), test::f32({1, 3})}, mode("less"), {bool_of({0, 3})}},
            {{test::f32({dyn, 1, 4}), test::f32({5, 1})}, mode("less"), {bool_of({dyn, 5, 4})}},
            {{test::f32({dyn}), test::f32({7})}, mode("less"), {bool_of({7})}},
            {{test::f32({Dimension(1, 8), 3}), test::f32({3})}, mode("less"), {bool_of({Dimension(1, 8), 3})}},
            // Two dynamic dims: the result is one of them, within their bounds.
            {{test::f32({Dimension(2, 8)}), test::f32({Dimension(1, 16)})},
             mode("less"),
             {bool_of({Dimension(1, 16)})}},
            {{test::f32({dyn}), test::f32({Dimension(1, 16)})}, mode("less"), {bool_of({dyn})}},
            {{boolean, boolean}, mode("equal"), {bool_of({2, 3})}},
            {{Layout({4}, DataType::f16), Layout({1}, DataType::f16)}, mode("greater_equal"), {bool_of({4})}},
            {{Layout({4}, DataType::u8), Layout({4}, DataType::u8)}, mode("less"), {bool_of({4})}},
            {{Layout({4}, DataType::i8), Layout({4}, DataType::i8)}, mode("less"), {bool_of({4})}},
            {{Layout({4}, DataType::i32), Layout({4}, DataType::i32)}, mode("less"), {bool_of({4})}},
        });
}

TEST(CompareShape, MismatchedInputsAreErrorsNamingNodeFieldAndShapes) {
    const Layout f32_3 = test::f32({3});
    test::expect_shapes(
        "compare",
        {
            {{f32_3, Layout({3}, DataType::i32)}, mode("less"), {}, {"node 'node'", "inputs", "f32[3]", "i32[3]"}},
            {{test::f32({2, 3}), test::f32({4})}, mode("less"), {}, {"node 'node'", "inputs", "[2,3]", "[4]"}},
            {{test::f32({Dimension(2, 3)}), test::f32({7})}, mode("less"), {}, {"node 'node'", "[2..3]", "[7]"}},
            {{f32_3}, mode("equal"), {}, {"node 'node'", "inputs", "2 inputs", "got 1"}},
            {{f32_3, f32_3, f32_3}, mode("equal"), {}, {"node 'node'", "got 3"}},
            {{bool_of({3}), bool_of({3})}, mode("less"), {}, {"node 'node'", "mode", "equal", "boolean[3]"}},
            {{test::f32({int64_t{1} << 40, int64_t{1} << 30}), test::f32({1})},
             mode("less"),
             {},
             {"node 'node'", "2^60"}},
        });
    EXPECT_NE(test::error_of([] {
                  test::infer_shapes("compare", {test::f32({3}), test::f32({3})}, mode("like"));
              }).find("like"),
              std::string::npos);
}

// ---- hand-computed values ----------------------------------------------------

std::vector<int64_t> run(const std::string& m, const HostTensor& a, const HostTensor& b) {
    const HostTensor y =
        test::run_once(test::single_node_program("compare", {a.layout(), b.layout()}, mode(m)), {a, b});
    EXPECT_EQ(y.dtype(), DataType::boolean);
    return y.to_int64();
}

TEST(CompareValues, NanComparesFalseInEveryModeEqualIncluded) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const HostTensor a = HostTensor::from_floats(Shape{4}, {nan, 1, nan, 2});
    const HostTensor b = HostTensor::from_floats(Shape{4}, {nan, nan, 1, 2});
    EXPECT_EQ(run("equal", a, b), (std::vector<int64_t>{0, 0, 0, 1}));
    EXPECT_EQ(run("less", a, b), (std::vector<int64_t>{0, 0, 0, 0}));
    EXPECT_EQ(run("less_equal", a, b), (std::vector<int64_t>{0, 0, 0, 1}));
    EXPECT_EQ(run("greater", a, b), (std::vector<int64_t>{0, 0, 0, 0}));
    EXPECT_EQ(run("greater_equal", a, b), (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST(CompareValues, BroadcastRowAgainstColumn) {
    const HostTensor a = HostTensor::from_int64(DataType::i32, Shape{3, 1}, {1, 2, 3});
    const HostTensor b = HostTensor::from_int64(DataType::i32, Shape{3}, {1, 2, 3});
    EXPECT_EQ(run("less", a, b), (std::vector<int64_t>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(run("greater_equal", a, b), (std::vector<int64_t>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
}

TEST(CompareValues, Int64IsExactBeyondDoublePrecision) {
    const int64_t big = (int64_t{1} << 53) + 1;   // rounds to 2^53 as a double
    const HostTensor a = HostTensor::from_int64(DataType::i64, Shape{2}, {big, big - 1});
    const HostTensor b = HostTensor::from_int64(DataType::i64, Shape{1}, {big - 1});
    EXPECT_EQ(run("equal", a, b), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(run("greater", a, b), (std::vector<int64_t>{1, 0}));
}

TEST(CompareValues, BooleansAndSignedBytes) {
    const HostTensor p = HostTensor::from_int64(DataType::boolean, Shape{4}, {0, 0, 1, 1});
    const HostTensor q = HostTensor::from_int64(DataType::boolean, Shape{4}, {0, 1, 0, 1});
    EXPECT_EQ(run("equal", p, q), (std::vector<int64_t>{1, 0, 0, 1}));
    const HostTensor s = HostTensor::from_int64(DataType::i8, Shape{3}, {-128, 0, 127});
    const HostTensor u = HostTensor::from_int64(DataType::u8, Shape{3}, {0, 128, 255});
    EXPECT_EQ(run("less", s, HostTensor::from_int64(DataType::i8, Shape{}, {0})), (std::vector<int64_t>{1, 0, 0}));
    EXPECT_EQ(run("greater", u, HostTensor::from_int64(DataType::u8, Shape{}, {127})), (std::vector<int64_t>{0, 1, 1}));
}

// ---- 2. every impl against the reference ---------------------------------------

// Values from a few small integers, so equal and the ordered modes see both
// answers; every 5th float element is NaN.
HostTensor small_values(DataType t, const Shape& s, uint64_t seed) {
    const HostTensor ints = test::random_tensor(DataType::i32, s, seed, -2, 3);
    HostTensor out(t, s);
    for (size_t i = 0; i < out.count(); ++i) {
        const bool nan = is_floating(t) && i % 5 == 4;
        const double v = ints.get_as_double(i) + (t == DataType::u8 ? 2 : 0);
        out.set_from_double(i, nan ? std::numeric_limits<double>::quiet_NaN() : v);
    }
    return out;
}

std::vector<test::Run> runs_of(DataType t, const std::vector<std::vector<Shape>>& shapes) {
    std::vector<test::Run> runs;
    uint64_t seed = 1;
    for (const auto& row : shapes) {
        test::Run r;
        for (const Shape& s : row) r.push_back(small_values(t, s, seed++));
        runs.push_back(r);
    }
    return runs;
}

// Rank 2: tails, broadcasts on either side and both at once, an empty tensor.
const std::vector<std::vector<Shape>> kRank2 = {
    {{1, 1}, {1, 1}},     {{3, 13}, {3, 13}}, {{17, 16}, {1, 16}},  {{16, 1}, {1, 257}},
    {{255, 3}, {255, 1}}, {{0, 3}, {1, 3}},   {{2, 257}, {2, 257}},
};
// Fewer runs for the rest of the matrix (each static OpenCL run builds a program).
const std::vector<std::vector<Shape>> kShort = {
    {{3, 13}, {3, 13}}, {{17, 16}, {1, 16}}, {{16, 1}, {1, 257}}, {{0, 3}, {1, 3}}};

TEST(CompareImpls, EveryImplMatchesTheReferenceForEveryModeAndDtype) {
    const PartialShape dyn2{Dimension(), Dimension()};
    const auto check = [&](DataType t, const std::string& m, const std::vector<std::vector<Shape>>& shapes) {
        SCOPED_TRACE(std::string(to_string(t)) + " " + m);
        test::expect_impls_match_reference({"compare", mode(m), {Layout(dyn2, t), Layout(dyn2, t)}, {}},
                                           runs_of(t, shapes));
    };
    check(DataType::f32, "less", kRank2);
    for (const std::string& m : kModes) check(DataType::f32, m, kShort);
    // Each other dtype with one mode: the mode is one JIT expression, the
    // dtype changes the loads.
    check(DataType::f16, "less", kShort);
    check(DataType::i32, "greater_equal", kShort);
    check(DataType::i64, "equal", kShort);
    check(DataType::u8, "less_equal", kShort);
    check(DataType::i8, "greater", kShort);
    check(DataType::boolean, "equal", kRank2);
}

TEST(CompareImpls, RankEightAndScalarsMatchTheReference) {
    const Layout r8(PartialShape::dynamic_of_rank(8), DataType::f32),
        r3(PartialShape::dynamic_of_rank(3), DataType::f32);
    test::expect_impls_match_reference({"compare", mode("greater"), {r8, r3}, {}},
                                       runs_of(DataType::f32, {{{2, 1, 3, 1, 2, 1, 3, 2}, {1, 3, 2}},
                                                               {{1, 2, 1, 2, 1, 3, 1, 5}, {3, 1, 1}},
                                                               {{1, 1, 1, 1, 1, 1, 1, 1}, {2, 3, 4}}}));
    // A scalar against a dynamic vector (the dynamic impls need a dynamic dim).
    const Layout scalar(PartialShape{}, DataType::i64), vec(PartialShape{Dimension()}, DataType::i64);
    test::expect_impls_match_reference({"compare", mode("less"), {scalar, vec}, {}},
                                       runs_of(DataType::i64, {{{}, {1}}, {{}, {17}}, {{}, {0}}, {{}, {257}}}));
}

// Above rank 8 the OpenCL impls decline (their kernels split indices over 8
// dims) and the host impls serve.
TEST(CompareImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout r9(PartialShape::dynamic_of_rank(9), DataType::f32), r1(PartialShape{Dimension()}, DataType::f32);
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"compare", mode("less"), {r9, r1}, {}}, runs_of(DataType::f32, {{{2, 1, 2, 1, 2, 1, 2, 1, 3}, {3}}}), {},
        {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(CompareDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 3}, Shape{n % 2 == 0 ? n : 1, 1}});
    const test::OpSetup s{
        "compare", mode("less_equal"), {test::f32({Dimension(), 3}), test::f32({Dimension(), 1})}, {}};
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + " " + test::mode_name(o.mode));
        test::expect_sequence(s, runs_of(DataType::f32, shapes), o);
    }
}

}   // namespace
}   // namespace dynrt
