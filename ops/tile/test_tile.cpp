// tile: shape-inference table (repeats by value or unknown, zero repeats,
// dynamic and bounded dims, errors), hand-computed values, every impl against
// the reference for every dtype, and one instance fed changing shapes and
// changing repeats.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor repeats(std::vector<int64_t> v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}
Layout repeats_layout(int64_t n, DataType t = DataType::i64) { return Layout({n}, t); }

// ---- 1. shape inference ----------------------------------------------------

TEST(TileShape, OutputDimsAreInputDimsTimesRepeats) {
    const Dimension dyn;
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    test::expect_shapes(
        "tile", {
                    {{f({2, 3, 4, 5}), repeats_layout(4)}, {}, {f({14, 18, 16, 10})}, {}, {{1, repeats({7, 6, 4, 2})}}},
                    {{f({2, 3}), repeats_layout(2)}, {}, {f({0, 3})}, {}, {{1, repeats({0, 1})}}},
                    {{f({}), repeats_layout(0)}, {}, {f({})}, {}, {{1, repeats({})}}},   // a scalar
                    {{Layout({3}, DataType::u8), repeats_layout(1, DataType::i32)},
                     {},
                     {Layout({9}, DataType::u8)},
                     {},
                     {{1, repeats({3}, DataType::i32)}}},
                    {{f({dyn, Dimension(2, 5)}), repeats_layout(2)},
                     {},
                     {f({dyn, Dimension(6, 15)})},
                     {},
                     {{1, repeats({1, 3})}}},
                    {{f({dyn, 4}), repeats_layout(2)}, {}, {f({0, 4})}, {}, {{1, repeats({0, 1})}}},
                    // Unknown repeats: the rank, and empty dims.
                    {{f({3, 0}), repeats_layout(2)}, {}, {f({dyn, 0})}},
                });
}

TEST(TileShape, BadRepeatsAreErrorsNamingNodeFieldAndShapes) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    test::expect_shapes("tile", {
                                    {{f({3, 2}), repeats_layout(2)},
                                     {},
                                     {},
                                     {"node 'node'", "repeats", "-1", "negative"},
                                     {{1, repeats({1, -1})}}},
                                    {{f({3, 2}), repeats_layout(3)}, {}, {}, {"one count per dim", "[3,2]", "i64[3]"}},
                                    {{f({3}), Layout({1}, DataType::f32)}, {}, {}, {"i32 or i64", "f32[1]"}},
                                    {{f({3}), Layout({1, 1}, DataType::i64)}, {}, {}, {"1-D"}},
                                    {{f({1 << 20, 1 << 20}), repeats_layout(2)},
                                     {},
                                     {},
                                     {"[1048576,1048576]", "2^60"},
                                     {{1, repeats({1 << 20, 1 << 20})}}},
                                });
}

// ---- hand-computed values ----------------------------------------------------

TEST(TileValues, RowsAndColumnsRepeatInOrder) {
    const HostTensor x = HostTensor::from_int64(DataType::i32, Shape{2, 2}, {1, 2, 3, 4});
    const HostTensor out = test::run_once(
        test::single_node_program("tile", {x.layout(), repeats_layout(2)}, {}, {{1, repeats({2, 3})}}), {x});
    EXPECT_EQ(out.shape(), (Shape{4, 6}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,   //
                                                    1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
}

// ---- 2. every impl against the reference ---------------------------------------

// The kernels move elements as unsigned integers of their width: one type
// of each width (and f64, the newest) covers them.
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i64, DataType::boolean, DataType::f64};

TEST(TileImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    for (DataType t : kTypes) {
        SCOPED_TRACE(to_string(t));
        const std::vector<Shape> shapes = {{1, 1}, {3, 13}, {17, 2}, {2, 257}, {0, 3}};
        std::vector<test::Run> runs;
        for (const Shape& s : shapes) runs.push_back({test::random_tensor(t, s, runs.size() + 7, -100, 100)});
        const Layout in(PartialShape::dynamic_of_rank(2), t);
        test::expect_impls_match_reference({"tile", {}, {in, repeats_layout(2)}, {{1, repeats({3, 2})}}}, runs);
    }
}

TEST(TileImpls, RepeatsAsARunInputAndRankEightMatchTheReference) {
    const Layout in(PartialShape::dynamic_of_rank(8), DataType::f32);
    std::vector<test::Run> runs;
    uint64_t seed = 40;
    for (const auto& row : std::vector<std::pair<Shape, std::vector<int64_t>>>{
             {{2, 1, 3, 1, 1, 2, 1, 2}, {1, 2, 1, 3, 1, 1, 2, 1}},
             {{1, 1, 1, 1, 1, 1, 1, 17}, {2, 1, 1, 1, 1, 1, 1, 3}},
             {{1, 2, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}},
             {{1, 2, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 1, 1, 1, 1}},
         })
        runs.push_back({test::random_tensor(DataType::f32, row.first, seed++), repeats(row.second)});
    test::expect_impls_match_reference({"tile", {}, {in, repeats_layout(8)}, {}}, runs);
}

TEST(TileImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout in(PartialShape::dynamic_of_rank(9), DataType::i32);
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"tile", {}, {in, repeats_layout(9)}, {{1, repeats({2, 1, 2, 1, 1, 1, 1, 1, 3})}}},
        {{test::random_tensor(DataType::i32, Shape{1, 2, 1, 1, 2, 1, 1, 1, 3}, 5, -50, 50)}}, {},
        {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(TileDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 3}});
    shapes.push_back({Shape{0, 3}});
    shapes.push_back({Shape{1, 3}});
    // The repeats change with the data shape unchanged: counters are not checked there.
    std::vector<test::Run> with_repeats;
    uint64_t seed = 70;
    for (int64_t n : test::tail_sizes())
        with_repeats.push_back({test::random_tensor(DataType::f32, Shape{n, 3}, seed++), repeats({n % 3, 1 + n % 4})});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"tile", {}, {test::f32({Dimension(), 3}), repeats_layout(2)}, {{1, repeats({2, 5})}}},
                              test::random_runs(DataType::f32, shapes, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;
        test::expect_sequence({"tile", {}, {test::f32({Dimension(), 3}), repeats_layout(2)}, {}}, with_repeats, values);
    }
}

}   // namespace
}   // namespace dynrt
