// slice: shape-inference table, hand-computed values (negative, clamped and
// INT_MAX/INT_MIN bounds, negative steps, empty results), every impl against
// the reference, and one network instance fed changing shapes and values.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

HostTensor ints(const std::vector<int64_t>& v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}

Layout index_layout(size_t n, DataType t = DataType::i64) { return Layout({static_cast<int64_t>(n)}, t); }

Attributes slice_attrs(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                       const std::vector<int64_t>& axes = {}, const std::vector<int64_t>& steps = {}) {
    return test::attrs({{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(SliceShapeInfer, ValuesGiveStaticDimsAndUnknownValuesKeepTheRank) {
    const Layout x({20, 10, 5}, DataType::f32);
    const Layout idx2 = index_layout(2);
    const std::map<size_t, HostTensor> vals = {
        {1, ints({0, 0})}, {2, ints({3, 10})}, {3, ints({0, 1})}, {4, ints({1, 3})}};
    std::vector<test::ShapeRow> rows = {
        // test_slice: [0:3, 0:10:3]
        {{x, idx2, idx2, idx2, idx2}, {}, {Layout({3, 4, 5}, DataType::f32)}, {}, vals},
        // Values unknown: rank only, each dim at most the input's.
        {{x, idx2, idx2}, {}, {Layout({Dimension(0, 20), Dimension(0, 10), Dimension(0, 5)}, DataType::f32)}},
        // Attributes: negative step over the whole axis, a clamped end, an empty range.
        {{x}, slice_attrs({-1, 0, 4}, {kMin, kMax, 2}, {0, 1, 2}, {-1, 1, 1}), {Layout({20, 10, 0}, DataType::f32)}},
        // A dynamic sliced dim keeps its bound; unsliced dims pass through.
        {{Layout({Dimension(1, 8), 7}, DataType::f16)},
         slice_attrs({1}, {3}, {-1}),
         {Layout({Dimension(1, 8), 2}, DataType::f16)}},
        {{Layout({Dimension(1, 8), 7}, DataType::f16)},
         slice_attrs({1}, {3}, {0}),
         {Layout({Dimension(0, 8), 7}, DataType::f16)}},
        // Empty starts: the input as it is, scalars included.
        {{Layout(PartialShape{}, DataType::i32)}, {}, {Layout(PartialShape{}, DataType::i32)}},
        {{Layout({0, 3}, DataType::u8)}, slice_attrs({0}, {kMax}), {Layout({0, 3}, DataType::u8)}},
        // Errors.
        {{x}, slice_attrs({0}, {1}, {0}, {0}), {}, {"steps", "step of 0"}},
        {{x}, slice_attrs({0}, {1}, {3}), {}, {"axes", "out of range", "[20,10,5]"}},
        {{x}, slice_attrs({0, 0}, {1, 1}, {1, -2}), {}, {"axes", "twice"}},
        {{x}, slice_attrs({0, 0}, {1}), {}, {"ends", "entries"}},
        {{x, idx2}, {}, {}, {"ends", "without"}},
        {{x, Layout({2}, DataType::f32), idx2}, {}, {}, {"starts", "i32/i64"}},
        {{x, idx2, idx2}, slice_attrs({1}, {}), {}, {"starts", "both"}},
    };
    test::expect_shapes("slice", rows);
}

// ---- 2. hand-computed values ---------------------------------------------------

struct Hand {
    int64_t start, end, step;
    std::vector<int64_t> want;   // positions of [0, 1, ..., 9]
};

// Each case is what Python's list slicing gives for range(10)[start:end:step].
TEST(SliceReference, OneAxisByHandOnEveryDtypeAndIndexType) {
    const std::vector<Hand> cases = {{2, 7, 1, {2, 3, 4, 5, 6}},
                                     {-3, kMax, 1, {7, 8, 9}},
                                     {0, 10, 3, {0, 3, 6, 9}},
                                     {-1, kMin, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
                                     {20, 0, -4, {9, 5, 1}},
                                     {8, 2, -2, {8, 6, 4}},
                                     {-100, 3, 1, {0, 1, 2}},
                                     {5, 5, 1, {}},
                                     {7, 2, 1, {}},
                                     {2, 7, -1, {}},
                                     {1000, kMax, 1, {}},
                                     {0, -1, kMax, {0}},
                                     {9, -11, kMin, {9}}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8, DataType::boolean}) {
        for (DataType it : {DataType::i64, DataType::i32}) {
            for (const Hand& h : cases) {
                if (it == DataType::i32 && (h.end == kMax || h.end == kMin || h.step == kMax || h.step == kMin))
                    continue;
                SCOPED_TRACE(std::string(to_string(t)) + " " + to_string(it) + " [" + std::to_string(h.start) + ":" +
                             std::to_string(h.end) + ":" + std::to_string(h.step) + "]");
                HostTensor in(t, Shape{10});
                for (size_t i = 0; i < 10; ++i) in.set_from_double(i, t == DataType::boolean ? (i % 3 == 0) : i);
                const auto prog = test::single_node_program("slice",
                                                            {Layout({10}, t), index_layout(1, it), index_layout(1, it),
                                                             index_layout(1, it), index_layout(1, it)},
                                                            {});
                const HostTensor out = test::run_once(
                    prog, {in, ints({h.start}, it), ints({h.end}, it), ints({0}, it), ints({h.step}, it)});
                ASSERT_EQ(out.shape(), Shape({static_cast<int64_t>(h.want.size())}));
                for (size_t i = 0; i < h.want.size(); ++i)
                    EXPECT_EQ(out.get_as_double(i), in.get_as_double(static_cast<size_t>(h.want[i]))) << i;
            }
        }
    }
}

// [3, 4] holding 0..11: rows 2 and 0 (from the last, step -2), columns 1 and 2.
TEST(SliceReference, TwoAxesWithNegativeAxisAndStep) {
    HostTensor in(DataType::f32, Shape{3, 4});
    for (size_t i = 0; i < 12; ++i) in.set_from_double(i, static_cast<double>(i));
    const auto prog = test::single_node_program("slice", {Layout({3, 4}, DataType::f32)},
                                                slice_attrs({-1, 1}, {kMin, 3}, {0, -1}, {-2, 1}));
    const HostTensor out = test::run_once(prog, {in});
    ASSERT_EQ(out.shape(), Shape({2, 2}));
    const std::vector<double> want = {9, 10, 1, 2};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out.get_as_double(i), want[i]) << i;
}

// ---- 3. every impl against the reference -------------------------------------

TEST(SliceImpls, EveryImplMatchesTheReferenceForAttributesAndInputs) {
    // One dtype per element width (the kernels move bits).
    const std::vector<std::vector<Shape>> shapes = {{{1, 3, 5}}, {{17, 4, 2}}, {{0, 3, 4}}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8}) {
        SCOPED_TRACE(to_string(t));
        const Layout in = Layout(PartialShape::dynamic_of_rank(3), t);
        test::expect_impls_match_reference(
            {"slice", slice_attrs({-2, 5, 1}, {kMin, 0, kMax}, {1, 0, -1}, {-1, -3, 2}), {in}, {}},
            test::random_runs(t, shapes, 3));
    }
    // starts/ends/axes/steps as constant inputs (i32 and i64 mixed).
    const test::OpSetup s{
        "slice",
        {},
        {Layout(PartialShape::dynamic_of_rank(3), DataType::f32), index_layout(2), index_layout(2),
         index_layout(2, DataType::i32), index_layout(2)},
        {{1, ints({1, -100})}, {2, ints({kMax, -1})}, {3, ints({0, 2}, DataType::i32)}, {4, ints({2, 1})}}};
    test::expect_impls_match_reference(s, test::random_runs(DataType::f32, shapes, 5));
}

// The OpenCL walk merges the dims that continue each other and copies whole
// 4-element vectors where every row starts 4-aligned: columns 256..768 of
// 1024 (vectors), columns 1..5 and 3..8 (element by element: unaligned start
// or a 5-column row), an unsliced inner dim under a sliced outer one (merged
// into one run), negative steps, 1-element rows, ranks 1 to 6, element widths
// 1, 2, 4 and 8 bytes (one per rank, in turn). Starts, ends and steps are run inputs, so one dynamic
// network per rank serves every row.
TEST(SliceImpls, MergedRowsVectorsAndTailsMatchTheReferenceOnRanksOneToSix) {
    struct Row {
        Shape in;
        std::vector<int64_t> starts, ends, steps;
    };
    const std::vector<std::vector<Row>> by_rank = {
        {{{9}, {1}, {9}, {1}}, {{16}, {4}, {12}, {1}}, {{7}, {-1}, {kMin}, {-2}}, {{1}, {0}, {1}, {1}}},
        {{{3, 1024}, {0, 256}, {3, 768}, {1, 1}},
         {{4, 9}, {1, 1}, {3, 6}, {1, 1}},
         {{5, 16}, {0, 3}, {5, 11}, {2, 1}},
         {{5, 8}, {1, 0}, {4, 8}, {1, 1}},
         {{6, 1}, {kMax, 0}, {kMin, 1}, {-1, 1}}},
        {{{2, 3, 8}, {0, 1, 0}, {2, 3, 8}, {1, 1, 1}}, {{3, 4, 5}, {2, 0, 4}, {kMin, 4, kMin}, {-1, 2, -1}}},
        {{{2, 3, 4, 8}, {0, 0, 1, 4}, {2, 3, 3, 8}, {1, 1, 1, 1}},
         {{2, 2, 3, 3}, {1, 0, 0, 1}, {2, 2, 3, 2}, {1, 1, 1, 1}}},
        {{{2, 2, 3, 2, 4}, {0, 1, 0, 0, 0}, {2, 2, 3, 2, 4}, {1, 1, 2, 1, 1}}},
        {{{2, 1, 3, 2, 2, 5}, {1, 0, 0, 0, 0, 1}, {2, 1, 3, 2, 2, 5}, {1, 1, 1, 1, 1, 1}},
         {{2, 2, 3, 1, 2, 8}, {0, 0, 0, 0, 0, 0}, {2, 2, 3, 1, 2, 8}, {1, 1, 1, 1, 1, 1}}},
    };
    const DataType widths[] = {DataType::u8, DataType::f16, DataType::f32, DataType::i64};
    for (size_t r = 0; r < by_rank.size(); ++r) {
        const DataType t = widths[r % 4];
        SCOPED_TRACE(std::string(to_string(t)) + " rank " + std::to_string(r + 1));
        std::vector<int64_t> axes(r + 1);
        for (size_t k = 0; k <= r; ++k) axes[k] = static_cast<int64_t>(k);
        std::vector<test::Run> runs;
        for (const Row& row : by_rank[r])
            runs.push_back({test::random_tensor(t, row.in, runs.size() + 11, -100, 100), ints(row.starts),
                            ints(row.ends), ints(row.steps)});
        const Layout idx = index_layout(r + 1);
        test::expect_impls_match_reference(
            {"slice", {}, {Layout(PartialShape::dynamic_of_rank(r + 1), t), idx, idx, idx, idx}, {{3, ints(axes)}}},
            runs);
    }
}

// ---- 4. one instance, changing shapes and values --------------------------------

TEST(SliceDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{n, 3}});
    rows.push_back({Shape{0, 3}});
    rows.push_back({Shape{1, 3}});
    // Values from graph inputs: they change from run to run with the shape.
    std::vector<test::Run> with_values;
    uint64_t seed = 40;
    int64_t k = 0;
    for (int64_t n : test::tail_sizes()) {
        const int64_t s = (k % 3) - 1, e = (k % 2) ? kMax : -1, st = (k % 2) ? 2 : -1;
        with_values.push_back({test::random_tensor(DataType::f32, Shape{n, 3}, seed++), ints({s, 0}), ints({e, 3}),
                               ints({0, 1}), ints({st, 1})});
        ++k;
    }
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"slice", slice_attrs({1, -1}, {kMax, kMin}, {0, 1}, {2, -1}), {test::f32({Dimension(), 3})}, {}},
            test::random_runs(DataType::f32, rows, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;   // the values change with the data shape unchanged
        const Layout idx = index_layout(2);
        test::expect_sequence({"slice", {}, {test::f32({Dimension(), 3}), idx, idx, idx, idx}, {}}, with_values,
                              values);
    }
}

}   // namespace
}   // namespace dynrt
