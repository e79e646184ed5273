// split: shape-inference table, hand-computed parts (sizes as attribute and
// input, equal and uneven parts, empty parts), every impl against the
// reference, and one network instance fed changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes split_attrs(int64_t axis, int64_t outputs, const std::vector<int64_t>& split = {}, bool uneven = false) {
    return test::attrs({{"axis", axis}, {"outputs", outputs}, {"split", split}, {"uneven", uneven}});
}

HostTensor ints(const std::vector<int64_t>& v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}

Layout f32(PartialShape s) { return Layout(std::move(s), DataType::f32); }

std::vector<double> values_of(const HostTensor& t) {
    std::vector<double> v;
    for (size_t i = 0; i < t.count(); ++i) v.push_back(t.get_as_double(i));
    return v;
}

// ---- 1. shape inference ----------------------------------------------------

TEST(SplitShapeInfer, PartsFromSizesEqualOrUnevenAndBadSizesAreRejected) {
    const Layout x = f32({6, 4});
    const Layout sizes({3}, DataType::i64);
    const std::vector<test::ShapeRow> rows = {
        {{x}, split_attrs(0, 3), {f32({2, 4}), f32({2, 4}), f32({2, 4})}},
        {{x}, split_attrs(-1, 2, {1, 3}), {f32({6, 1}), f32({6, 3})}},
        {{x, sizes}, split_attrs(0, 3), {f32({1, 4}), f32({0, 4}), f32({5, 4})}, {}, {{1, ints({1, 0, 5})}}},
        // Sizes unknown until run time: the axis is at most the input's.
        {{x, sizes},
         split_attrs(0, 3),
         {f32({Dimension(0, 6), 4}), f32({Dimension(0, 6), 4}), f32({Dimension(0, 6), 4})}},
        // num_outputs semantics: ceil(7 / 3) = 3, 3, 1; ceil(4 / 3) = 2, 2, 0.
        {{f32({7})}, split_attrs(0, 3, {}, true), {f32({3}), f32({3}), f32({1})}},
        {{f32({4})}, split_attrs(0, 3, {}, true), {f32({2}), f32({2}), f32({0})}},
        {{f32({0, 2})}, split_attrs(0, 2), {f32({0, 2}), f32({0, 2})}},
        {{f32({Dimension(), 3})}, split_attrs(0, 2), {f32({Dimension(), 3}), f32({Dimension(), 3})}},
        {{f32({Dimension(), 3})}, split_attrs(0, 2, {1, 2}), {f32({1, 3}), f32({2, 3})}},
        {{x}, split_attrs(0, 4), {}, {"6", "equal parts"}},
        {{f32({5})}, split_attrs(0, 4, {}, true), {}, {"leaves nothing"}},
        {{x}, split_attrs(0, 2, {1, 2}), {}, {"split", "sums to 3", "6"}},
        {{x}, split_attrs(0, 3, {1, 5}), {}, {"split", "2 sizes for 3 outputs"}},
        {{x}, split_attrs(0, 2, {7, -1}), {}, {"split", "negative"}},
        {{x}, split_attrs(2, 2), {}, {"axis"}},
        {{f32(PartialShape{})}, split_attrs(0, 1), {}, {"scalar"}},
        {{x, Layout({2}, DataType::f32)}, split_attrs(0, 2), {}, {"split", "i32/i64"}},
        {{x, sizes}, split_attrs(0, 3, {2, 2, 2}), {}, {"split", "both"}},
        {{x}, split_attrs(0, 0), {}, {"outputs", "at least 1"}},
    };
    test::expect_shapes("split", rows);
}

// ---- 2. hand-computed values ---------------------------------------------------

TEST(SplitReference, PartsByHandForSizesFromAnInput) {
    // [2, 5] holding 0..9 cut along axis 1 into 2, 0 and 3 columns.
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8}) {
        SCOPED_TRACE(to_string(t));
        HostTensor in(t, Shape{2, 5});
        for (size_t i = 0; i < 10; ++i) in.set_from_double(i, static_cast<double>(i));
        const test::OpSetup setup{"split", split_attrs(1, 3), {Layout({2, 5}, t), Layout({3}, DataType::i32)}, {}};
        const std::vector<HostTensor> out = test::reference_outputs(setup, {in, ints({2, 0, 3}, DataType::i32)});
        ASSERT_EQ(out.size(), 3u);
        EXPECT_EQ(values_of(out[0]), std::vector<double>({0, 1, 5, 6}));
        EXPECT_EQ(out[1].shape(), Shape({2, 0}));
        EXPECT_EQ(values_of(out[2]), std::vector<double>({2, 3, 4, 7, 8, 9}));
    }
}

// ---- 3. every impl against the reference -------------------------------------

TEST(SplitImpls, EveryImplMatchesTheReference) {
    // One dtype per element width (the kernels move bits).
    const std::vector<std::vector<Shape>> shapes = {{{1, 6, 5}}, {{17, 6, 3}}, {{0, 6, 4}}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::boolean}) {
        SCOPED_TRACE(to_string(t));
        const Layout in({Dimension(), 6, Dimension()}, t);
        test::expect_impls_match_reference({"split", split_attrs(-2, 3, {4, 0, 2}), {in}, {}},
                                           test::random_runs(t, shapes, 5));
    }
    test::expect_impls_match_reference({"split", split_attrs(1, 3), {test::f32({Dimension(), 6, 2})}, {}},
                                       test::random_runs(DataType::f32, {{{3, 6, 2}}, {{257, 6, 2}}}, 3));
    // Along a dynamic axis, sizes from a constant input; uneven parts.
    const std::vector<std::vector<Shape>> rows = {{{7, 3}}, {{13, 2}}, {{9, 1}}};
    test::expect_impls_match_reference(
        {"split", split_attrs(0, 3, {}, true), {test::f32({Dimension(), Dimension()})}, {}},
        test::random_runs(DataType::f32, rows, 9));
}

// The optimised impls walk the input's bytes in chunks over the threads:
// whole rows when there are many, pieces of rows when there are few. Shapes
// below put chunk edges inside rows and inside elements (odd extents past
// the 64 KiB grain), give empty parts and empty inputs, size-1 dims, and one
// output; the cpu_opt impls must take every run.
TEST(SplitImpls, OptimisedImplsCoverRowsPiecesEmptyPartsAndWidths) {
    struct Case {
        Attributes attrs;
        std::vector<Shape> shapes;
    };
    const std::vector<Case> cases = {
        {split_attrs(0, 3, {}, true), {Shape{7, 3}, Shape{3, 40001}, Shape{4, 5}, Shape{0, 4}, Shape{5, 1}}},
        {split_attrs(1, 3, {}, true), {Shape{2, 7}, Shape{40001, 5}, Shape{1, 3}, Shape{3, 0}, Shape{2, 90001}}},
        {split_attrs(-1, 1), {Shape{3, 5}, Shape{1, 1}, Shape{0, 3}, Shape{2, 70001}}},
        {split_attrs(1, 2, {3, 0}), {Shape{2, 3, 5}, Shape{20001, 3, 1}, Shape{1, 3, 1}, Shape{0, 3, 7}}},
    };
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8, DataType::boolean}) {
        for (size_t c = 0; c < cases.size(); ++c) {
            SCOPED_TRACE(std::string(to_string(t)) + " case " + std::to_string(c));
            std::vector<std::vector<Shape>> runs;
            for (const Shape& s : cases[c].shapes) runs.push_back({s});
            const size_t rank = cases[c].shapes[0].rank();
            const std::vector<std::string> ran = test::expect_impls_match_reference(
                {"split", cases[c].attrs, {Layout(PartialShape::dynamic_of_rank(rank), t)}, {}},
                test::random_runs(t, runs, 11, -100, 100));
            for (const std::string& name : test::kOptimisedCpuImpls)
                EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
        }
    }
}

// ---- 4. one instance, changing shapes --------------------------------------------

TEST(SplitDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows, halves;
    for (int64_t n : test::tail_sizes()) {
        rows.push_back({Shape{n, 6}});
        halves.push_back({Shape{3, 2 * n}});
    }
    rows.push_back({Shape{0, 6}});
    rows.push_back({Shape{2, 6}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"split", split_attrs(1, 3, {1, 3, 2}), {test::f32({Dimension(), 6})}, {}},
                              test::random_runs(DataType::f32, rows, 100), o);
        test::expect_sequence({"split", split_attrs(-1, 2), {test::f32({3, Dimension()})}, {}},
                              test::random_runs(DataType::f32, halves, 200), o);
    }
}

}   // namespace
}   // namespace dynrt
