// where: shape-inference table (three-way broadcasting, dynamic and bounded
// dims, errors), hand-computed values (broadcast condition, NaN and -0 kept
// bit for bit), every impl against the reference for every data type (ranks
// 0 to 8, tails, broadcasts, empty tensors), and one instance fed changing
// shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Layout cond(PartialShape s) { return Layout(std::move(s), DataType::boolean); }

// ---- 1. shape inference ----------------------------------------------------

TEST(WhereShape, ThreeWayBroadcastWithTheTypeOfX) {
    const Dimension dyn;
    const Layout i64_1({1}, DataType::i64);
    test::expect_shapes(
        "where",
        {
            {{cond({2, 3}), test::f32({2, 3}), test::f32({2, 3})}, {}, {test::f32({2, 3})}},
            {{cond({3, 1}), test::f32({1, 4}), test::f32({})}, {}, {test::f32({3, 4})}},
            {{cond({}), test::f32({}), test::f32({})}, {}, {test::f32({})}},
            {{cond({2, 1, 1}), i64_1, Layout({5}, DataType::i64)}, {}, {Layout({2, 1, 5}, DataType::i64)}},
            {{cond({0, 3}), test::f32({1}), test::f32({3})}, {}, {test::f32({0, 3})}},
            {{cond({dyn, 1}), test::f32({4}), test::f32({1, 1})}, {}, {test::f32({dyn, 4})}},
            {{cond({dyn}), test::f32({dyn}), test::f32({7})}, {}, {test::f32({7})}},
            {{cond({Dimension(1, 4)}), test::f32({Dimension(2, 9)}), test::f32({1})},
             {},
             {test::f32({Dimension(1, 9)})}},
            {{cond({3}), Layout({3}, DataType::boolean), Layout({3}, DataType::boolean)},
             {},
             {Layout({3}, DataType::boolean)}},
            {{cond({3}), Layout({3}, DataType::f16), Layout({1}, DataType::f16)}, {}, {Layout({3}, DataType::f16)}},
        });
}

TEST(WhereShape, WrongCountsTypesAndShapesAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "where",
        {
            {{cond({3}), test::f32({3})}, {}, {}, {"node 'node'", "inputs", "3 inputs", "got 2"}},
            {{test::f32({3}), test::f32({3}), test::f32({3})},
             {},
             {},
             {"node 'node'", "inputs", "condition", "f32[3]", "boolean"}},
            {{cond({3}), test::f32({3}), Layout({3}, DataType::i32)}, {}, {}, {"node 'node'", "x f32[3]", "y i32[3]"}},
            {{cond({2}), test::f32({3}), test::f32({3})},
             {},
             {},
             {"node 'node'", "inputs", "condition [2]", "x [3]", "y [3]"}},
            {{cond({3}), test::f32({2, 3}), test::f32({4, 1})}, {}, {}, {"node 'node'", "x [2,3]", "y [4,1]"}},
            {{cond({int64_t{1} << 40, 1}), test::f32({int64_t{1} << 30}), test::f32({1})},
             {},
             {},
             {"node 'node'", "2^60"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& c, const HostTensor& x, const HostTensor& y) {
    return test::run_once(test::single_node_program("where", {c.layout(), x.layout(), y.layout()}, {}), {c, x, y});
}

TEST(WhereValues, ConditionColumnPicksRowsOfXOrY) {
    const HostTensor c = HostTensor::from_int64(DataType::boolean, Shape{2, 1}, {1, 0});
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{3}, {1, 2, 3});
    const HostTensor y = HostTensor::from_int64(DataType::i64, Shape{}, {-7});
    const HostTensor out = run(c, x, y);
    EXPECT_EQ(out.shape(), (Shape{2, 3}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{1, 2, 3, -7, -7, -7}));
    const int64_t big = (int64_t{1} << 62) + 1;   // not exact as a double
    EXPECT_EQ(run(HostTensor::from_int64(DataType::boolean, Shape{2}, {0, 1}),
                  HostTensor::from_int64(DataType::i64, Shape{1}, {big}),
                  HostTensor::from_int64(DataType::i64, Shape{1}, {-big}))
                  .to_int64(),
              (std::vector<int64_t>{-big, big}));
}

TEST(WhereValues, FloatsAreCopiedBitForBit) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const HostTensor c = HostTensor::from_int64(DataType::boolean, Shape{3}, {1, 1, 0});
    const HostTensor x = HostTensor::from_floats(Shape{3}, {nan, -0.0F, 1});
    const HostTensor y = HostTensor::from_floats(Shape{3}, {5, 6, 7});
    const HostTensor out = run(c, x, y);
    EXPECT_TRUE(std::isnan(out.get_as_double(0)));
    EXPECT_TRUE(std::signbit(out.get_as_double(1)));
    EXPECT_EQ(out.get_as_double(2), 7.0);
}

// ---- 2. every impl against the reference ---------------------------------------

// One run: a random condition and x, y of type t.
std::vector<test::Run> runs_of(DataType t, const std::vector<std::vector<Shape>>& shapes) {
    std::vector<test::Run> runs;
    uint64_t seed = 1;
    for (const auto& row : shapes) {
        runs.push_back({test::random_tensor(DataType::boolean, row[0], seed),
                        test::random_tensor(t, row[1], seed + 1, -100, 100),
                        test::random_tensor(t, row[2], seed + 2, -100, 100)});
        seed += 3;
    }
    return runs;
}

// Rank 2: tails, each input broadcast in turn, all three at once, an empty tensor.
const std::vector<std::vector<Shape>> kRank2 = {
    {{1, 1}, {1, 1}, {1, 1}},       {{3, 13}, {3, 13}, {3, 13}},  {{17, 16}, {1, 16}, {17, 1}},
    {{16, 1}, {1, 257}, {16, 257}}, {{1, 3}, {255, 3}, {255, 1}}, {{0, 3}, {1, 3}, {1, 1}},
    {{2, 257}, {2, 257}, {2, 257}},
};

TEST(WhereImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    const PartialShape dyn2{Dimension(), Dimension()};
    for (DataType t :
         {DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8, DataType::i8, DataType::boolean}) {
        SCOPED_TRACE(to_string(t));
        test::expect_impls_match_reference({"where", {}, {cond(dyn2), Layout(dyn2, t), Layout(dyn2, t)}, {}},
                                           runs_of(t, kRank2));
    }
}

TEST(WhereImpls, RankEightAndScalarsMatchTheReference) {
    const Layout r8(PartialShape::dynamic_of_rank(8), DataType::f32),
        r3(PartialShape::dynamic_of_rank(3), DataType::f32);
    // Rows of 6, 5 and 12 elements: the optimised impls decline them.
    test::expect_impls_match_reference({"where", {}, {cond(PartialShape::dynamic_of_rank(2)), r8, r3}, {}},
                                       runs_of(DataType::f32, {{{3, 2}, {2, 1, 3, 1, 2, 1, 3, 2}, {1, 3, 2}},
                                                               {{1, 5}, {1, 2, 1, 2, 1, 3, 1, 5}, {3, 1, 1}},
                                                               {{3, 4}, {1, 1, 1, 1, 1, 1, 1, 1}, {2, 3, 4}}}),
                                       {}, test::kOptimisedCpuImpls);
    const Layout scalar(PartialShape{}, DataType::i32), vec(PartialShape{Dimension()}, DataType::i32);
    test::expect_impls_match_reference({"where", {}, {cond({Dimension()}), scalar, vec}, {}},
                                       runs_of(DataType::i32, {{{1}, {}, {1}}, {{17}, {}, {1}}, {{0}, {}, {0}}}));
}

// The optimised impls' rows: same shapes (one row; tails around vector widths,
// an empty tensor, one element, one past the 64 KiB chunk for two threads),
// and broadcasts where each of condition, x and y is one value per row in
// turn, two at once, and rank 4 with the leading dims broadcast; the cpu_opt
// impls must take every run, for every element width.
TEST(WhereImpls, OptimisedImplsTakeSameShapesAndRowBroadcasts) {
    const std::vector<std::vector<Shape>> runs = {
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}},    {{1, 1, 3, 15}, {1, 1, 3, 15}, {1, 1, 3, 15}},
        {{1, 2, 1, 17}, {1, 2, 1, 17}, {1, 2, 1, 17}}, {{1, 1, 1, 70001}, {1, 1, 1, 70001}, {1, 1, 1, 70001}},
        {{0, 3, 2, 16}, {0, 3, 2, 16}, {0, 3, 2, 16}}, {{2, 3, 5, 1}, {2, 3, 5, 33}, {2, 3, 5, 33}},
        {{2, 3, 1, 33}, {1, 1, 1, 1}, {2, 3, 1, 33}},  {{1, 3, 1, 257}, {1, 3, 1, 257}, {1, 1, 1, 1}},
        {{4, 1, 2, 16}, {1, 1, 1, 1}, {1, 1, 1, 1}},   {{4, 3, 2, 1}, {1, 3, 2, 17}, {4, 1, 2, 17}},
        {{1, 1, 2, 40}, {3, 1, 2, 40}, {3, 4, 2, 1}},  {{5, 1, 1, 1}, {5, 1, 1, 1}, {1, 1, 1, 1}},
    };
    const PartialShape dyn4 = PartialShape::dynamic_of_rank(4);
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8, DataType::boolean}) {
        SCOPED_TRACE(to_string(t));
        const std::vector<std::string> ran = test::expect_impls_match_reference(
            {"where", {}, {cond(dyn4), Layout(dyn4, t), Layout(dyn4, t)}, {}}, runs_of(t, runs));
        for (const std::string& name : test::kOptimisedCpuImpls)
            EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
    }
}

// A broadcast whose rows are short ([4, 5, 1] against [1, 5, 3]: rows of 3)
// is declined: only the reference and OpenCL impls run it.
TEST(WhereImpls, ShortRowBroadcastsRunOnTheReference) {
    const PartialShape dyn3 = PartialShape::dynamic_of_rank(3);
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"where", {}, {cond(dyn3), test::f32(dyn3), test::f32(dyn3)}, {}},
        runs_of(DataType::f32, {{{4, 5, 1}, {1, 5, 3}, {4, 5, 3}}}), {}, test::kOptimisedCpuImpls);
    for (const std::string& name : test::kOptimisedCpuImpls)
        EXPECT_EQ(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " ran";
}

// Above rank 8 the OpenCL impls decline (their kernels split indices over 8
// dims) and the host impls serve (the reference: the optimised impls decline
// its rows of 3).
TEST(WhereImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout r9(PartialShape::dynamic_of_rank(9), DataType::i64), r1(PartialShape{Dimension()}, DataType::i64);
    const std::vector<std::string> ran =
        test::expect_impls_match_reference({"where", {}, {cond({Dimension()}), r9, r1}, {}},
                                           runs_of(DataType::i64, {{{3}, {2, 1, 2, 1, 2, 1, 2, 1, 3}, {1}}}), {},
                                           {"ocl_static", "ocl_dynamic", "cpu_opt_dynamic", "cpu_opt_static"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(WhereDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 1}, Shape{n, 3}, Shape{n % 2 == 0 ? n : 1, 3}});
    const test::OpSetup s{
        "where", {}, {cond({Dimension(), 1}), test::f32({Dimension(), 3}), test::f32({Dimension(), 3})}, {}};
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + " " + test::mode_name(o.mode));
        test::expect_sequence(s, runs_of(DataType::f32, shapes), o);
    }
}

}   // namespace
}   // namespace dynrt
