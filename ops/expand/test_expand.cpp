// expand: shape-inference table (target by value or only its length, both
// ways of broadcasting, dynamic dims, errors), hand-computed values, every
// impl against the reference for every dtype, and one instance fed changing
// shapes and changing targets.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor target(std::vector<int64_t> v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}
Layout target_layout(int64_t n, DataType t = DataType::i64) { return Layout({n}, t); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ExpandShape, OutputIsTheBroadcastOfInputAndTarget) {
    const Dimension dyn;
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    test::expect_shapes(
        "expand", {
                      {{f({3, 1}), target_layout(3)}, {}, {f({2, 3, 6})}, {}, {{1, target({2, 1, 6})}}},
                      {{f({3, 1}), target_layout(2)}, {}, {f({3, 4})}, {}, {{1, target({3, 4})}}},
                      {{f({3, 4}), target_layout(1)}, {}, {f({3, 4})}, {}, {{1, target({1})}}},   // shorter target
                      {{f({}), target_layout(2)}, {}, {f({2, 5})}, {}, {{1, target({2, 5})}}},    // a scalar
                      {{f({1}), target_layout(0)}, {}, {f({1})}, {}, {{1, target({})}}},
                      {{f({1, 3}), target_layout(2)}, {}, {f({0, 3})}, {}, {{1, target({0, 1})}}},   // empty
                      {{Layout({2, 1}, DataType::i8), target_layout(2, DataType::i32)},
                       {},
                       {Layout({2, 7}, DataType::i8)},
                       {},
                       {{1, target({1, 7}, DataType::i32)}}},
                      {{f({dyn, 1}), target_layout(2)}, {}, {f({dyn, 5})}, {}, {{1, target({1, 5})}}},
                      // Unknown target values: the rank, and input dims other than 1.
                      {{f({3, 1}), target_layout(3)}, {}, {f({dyn, 3, dyn})}},
                      {{f({4, dyn, 2}), target_layout(1)}, {}, {f({4, dyn, 2})}},
                  });
}

TEST(ExpandShape, BadTargetsAreErrorsNamingNodeFieldAndShapes) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    test::expect_shapes(
        "expand",
        {
            {{f({3, 2}), target_layout(2)},
             {},
             {},
             {"node 'node'", "shape", "[3,2]", "[3,4]", "cannot be broadcast"},
             {{1, target({3, 4})}}},
            {{f({3}), target_layout(1)}, {}, {}, {"negative", "-2"}, {{1, target({-2})}}},
            {{f({3}), Layout({1}, DataType::f32)}, {}, {}, {"i32 or i64", "f32[1]"}},
            {{f({3}), Layout({1, 1}, DataType::i64)}, {}, {}, {"1-D"}},
            {{f({3}), Layout({Dimension()}, DataType::i64)}, {}, {}, {"dynamic length"}},
            {{f({3}), target_layout(3)}, {}, {}, {"2^60"}, {{1, target({int64_t{1} << 40, int64_t{1} << 30, 3})}}},
        });
}

// ---- hand-computed values ----------------------------------------------------

TEST(ExpandValues, ColumnIsRepeatedAlongNewAndStretchedDims) {
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{2, 1}, {(int64_t{1} << 62) + 1, -5});
    const HostTensor out = test::run_once(
        test::single_node_program("expand", {x.layout(), target_layout(3)}, {}, {{1, target({2, 1, 3})}}), {x});
    EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
    const int64_t b = (int64_t{1} << 62) + 1;
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{b, b, b, -5, -5, -5, b, b, b, -5, -5, -5}));
}

// ---- 2. every impl against the reference ---------------------------------------

// The kernels move elements as unsigned integers of their width: one type
// of each width (and f64, the newest) covers them.
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i64, DataType::boolean, DataType::f64};

TEST(ExpandImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    for (DataType t : kTypes) {
        SCOPED_TRACE(to_string(t));
        const std::vector<std::vector<Shape>> shapes = {{{1, 1}}, {{13, 16}}, {{17, 1}}, {{257, 16}}, {{0, 1}}};
        std::vector<test::Run> runs;
        for (const auto& row : shapes) runs.push_back({test::random_tensor(t, row[0], runs.size() + 3, -100, 100)});
        const Layout in(PartialShape::dynamic_of_rank(2), t);
        // Target [2, 1, 16]: input [n, m] (m 1 or 16) -> [2, n, 16].
        test::expect_impls_match_reference({"expand", {}, {in, target_layout(3)}, {{1, target({2, 1, 16})}}}, runs);
    }
}

TEST(ExpandImpls, TargetAsARunInputAndRankEightMatchTheReference) {
    const Layout in(PartialShape::dynamic_of_rank(3), DataType::f32);
    std::vector<test::Run> runs;
    uint64_t seed = 40;
    for (const auto& row : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{5, 1, 3}, {2, 1, 1, 2, 1, 5, 3, 1}},
             {{1, 4, 1}, {3, 1, 2, 1, 1, 1, 1, 17}},
             {{3, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}},
         })
        runs.push_back({test::random_tensor(DataType::f32, row.first, seed++), target(row.second)});
    test::expect_impls_match_reference({"expand", {}, {in, target_layout(8)}, {}}, runs);
}

// The OpenCL walk merges dims that broadcast alike and copies whole 4-element
// vectors where the rows allow: rows of 1024 and of 8 (vectors), a broadcast
// inner dim of 8 (one element repeated), inner extents that are not multiples
// of 4 and 1-element rows (element by element), ranks 1 to 6, element widths
// 1, 2, 4 and 8 bytes (one per rank, in turn). The target is a run input, so
// one dynamic network per rank serves every row.
TEST(ExpandImpls, MergedRowsVectorsAndTailsMatchTheReferenceOnRanksOneToSix) {
    const std::vector<std::vector<std::pair<Shape, std::vector<int64_t>>>> by_rank = {
        {{{1}, {9}}, {{6}, {6}}, {{8}, {8}}, {{1}, {1}}},
        {{{1, 1024}, {3, 1024}}, {{1, 7}, {5, 7}}, {{4, 1}, {4, 8}}, {{3, 1}, {3, 6}}, {{5, 1}, {5, 1}}},
        {{{2, 1, 8}, {2, 3, 8}}, {{1, 3, 5}, {4, 3, 5}}, {{2, 3, 1}, {2, 3, 3}}},
        {{{1, 3, 4, 1}, {2, 3, 4, 5}}, {{2, 1, 1, 4}, {2, 3, 5, 4}}, {{1, 1, 1, 1}, {2, 1, 3, 1}}},
        {{{2, 1, 3, 1, 4}, {2, 2, 3, 2, 4}}, {{1, 2, 1, 2, 1}, {3, 2, 2, 2, 3}}},
        {{{2, 1, 3, 1, 2, 5}, {2, 4, 3, 2, 2, 5}}, {{1, 1, 1, 1, 1, 4}, {2, 1, 3, 1, 1, 4}}},
    };
    const DataType widths[] = {DataType::u8, DataType::f16, DataType::f32, DataType::i64};
    for (size_t r = 0; r < by_rank.size(); ++r) {
        const DataType t = widths[r % 4];
        SCOPED_TRACE(std::string(to_string(t)) + " rank " + std::to_string(r + 1));
        std::vector<test::Run> runs;
        for (const auto& [in, to] : by_rank[r])
            runs.push_back({test::random_tensor(t, in, runs.size() + 9, -100, 100), target(to)});
        const Layout in(PartialShape::dynamic_of_rank(r + 1), t);
        test::expect_impls_match_reference({"expand", {}, {in, target_layout(static_cast<int64_t>(r + 1))}, {}}, runs);
    }
}

TEST(ExpandImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout in(PartialShape::dynamic_of_rank(1), DataType::i32);
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"expand", {}, {in, target_layout(9)}, {{1, target({2, 1, 2, 1, 2, 1, 2, 1, 1})}}},
        {{test::random_tensor(DataType::i32, Shape{3}, 5, -50, 50)}}, {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ExpandDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 1}});
    shapes.push_back({Shape{0, 1}});
    shapes.push_back({Shape{1, 1}});
    // The target changes with the data shape unchanged: counters are not checked there.
    std::vector<test::Run> with_target;
    uint64_t seed = 70;
    for (int64_t n : test::tail_sizes())
        with_target.push_back(
            {test::random_tensor(DataType::f32, Shape{n, 1}, seed++), target({seed % 2 ? n : 1, 1, 3 + n % 5})});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"expand", {}, {test::f32({Dimension(), 1}), target_layout(3)}, {{1, target({2, 1, 17})}}},
            test::random_runs(DataType::f32, shapes, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;
        test::expect_sequence({"expand", {}, {test::f32({Dimension(), 1}), target_layout(3)}, {}}, with_target, values);
    }
}

}   // namespace
}   // namespace dynrt
