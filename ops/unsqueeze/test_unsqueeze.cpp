// unsqueeze: shape-inference table (attribute and input axes, negative and
// unordered axes, rank 0, empty and dynamic dims, errors), every impl against
// the reference for every dtype, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstring>

#include "layout_op_test.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::axes_attr;
using test::axes_value;
using test::every_dtype;

// ---- 1. shape inference ----------------------------------------------------

TEST(UnsqueezeShape, AxesAreOutputPositionsOfNewSize1Dims) {
    const Dimension dyn, b28(2, 8);
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    std::vector<test::ShapeRow> rows;
    for (DataType t : every_dtype()) rows.push_back({{Layout({2, 3}, t)}, axes_attr({1}), {Layout({2, 1, 3}, t)}});
    rows.push_back({{f({2, 3})}, axes_attr({0}), {f({1, 2, 3})}});
    rows.push_back({{f({2, 3})}, axes_attr({2}), {f({2, 3, 1})}});
    rows.push_back({{f({2, 3})}, axes_attr({-1}), {f({2, 3, 1})}});   // of the output's rank
    rows.push_back({{f({2, 3})}, axes_attr({-3}), {f({1, 2, 3})}});
    rows.push_back({{f({2, 3})}, axes_attr({3, 0}), {f({1, 2, 3, 1})}});   // any order
    rows.push_back({{f({2, 3})}, axes_attr({1, 2}), {f({2, 1, 1, 3})}});
    rows.push_back({{f(PartialShape{})}, axes_attr({0}), {f({1})}});   // a scalar
    rows.push_back({{f(PartialShape{})}, axes_attr({-1, 0}), {f({1, 1})}});
    rows.push_back({{f({1})}, axes_attr({0}), {f({1, 1})}});
    rows.push_back({{f({0, 3})}, axes_attr({1}), {f({0, 1, 3})}});   // empty tensor
    rows.push_back({{f({dyn, b28})}, axes_attr({0, -2}), {f({1, dyn, 1, b28})}});
    test::expect_shapes("unsqueeze", rows);
}

TEST(UnsqueezeShape, AxesFromInput1AreReadByValueOrLeaveTheRankOnly) {
    const Layout in({Dimension(), 3}, DataType::i8);
    test::expect_shapes(
        "unsqueeze",
        {{{in, Layout({2}, DataType::i64)},
          {},
          {Layout({1, Dimension(), 3, 1}, DataType::i8)},
          {},
          {{1, axes_value({0, -1})}}},
         {{in, Layout({1}, DataType::i32)},
          {},
          {Layout({Dimension(), 1, 3}, DataType::i8)},
          {},
          {{1, axes_value({1}, DataType::i32)}}},
         {{in, Layout({2}, DataType::i64)}, {}, {Layout(PartialShape::dynamic_of_rank(4), DataType::i8)}}});
}

TEST(UnsqueezeShape, BadAxesAreErrorsNamingNodeFieldAndShape) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const auto words = [](std::vector<std::string> w) {
        return test::with_node_and_field(std::move(w), "unsqueeze", "axes");
    };
    test::expect_shapes(
        "unsqueeze", {{{f({2, 3})}, axes_attr({3}), {}, words({"axis 3", "out of range", "rank 3", "[2,3]"})},
                      {{f({2, 3})}, axes_attr({-4}), {}, words({"axis -4", "out of range", "[2,3]"})},
                      {{f(PartialShape{})}, axes_attr({1}), {}, words({"out of range", "[]"})},
                      {{f({2, 3})}, axes_attr({1, 1}), {}, words({"more than once", "[2,3]"})},
                      {{f({2, 3})}, axes_attr({0, -4}), {}, words({"more than once", "[2,3]"})},   // -4 is 0 in rank 4
                      {{f({2, 3})}, axes_attr({}), {}, words({"at least one axis", "[2,3]"})},
                      {{f({2, 3}), Layout({0}, DataType::i64)}, {}, {}, words({"at least one axis"})},
                      {{f({2, 3}), Layout({1}, DataType::f16)}, {}, {}, words({"i32 or i64", "f16[1]"})},
                      {{f({2, 3}), Layout({1, 1}, DataType::i64)}, {}, {}, words({"1-D"})},
                      {{f({2, 3}), Layout({Dimension()}, DataType::i64)}, {}, {}, words({"dynamic length"})},
                      {{f({2, 3}), Layout({1}, DataType::i64)}, axes_attr({0}), {}, words({"given twice"})},
                      {{f({2, 3}), Layout({1}, DataType::i64)},
                       {},
                       {},
                       words({"axis 7", "input 1", "[2,3]"}),
                       {{1, axes_value({7})}}}});
}

// ---- 2. every impl against the reference -------------------------------------

TEST(UnsqueezeImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 1}}, {{3, 1}}, {{1, 13}}, {{17, 3}}, {{2, 257}}, {{0, 5}}};
    for (DataType t : every_dtype()) {
        SCOPED_TRACE(to_string(t));
        const Layout in(PartialShape::dynamic_of_rank(2), t);
        const auto runs = test::random_runs(t, shapes, 21, -100, 100);
        test::expect_impls_match_reference({"unsqueeze", axes_attr({0, -1}), {in}, {}}, runs);
        test::expect_impls_match_reference({"unsqueeze", {}, {in, Layout({1}, DataType::i64)}, {{1, axes_value({1})}}},
                                           runs);
    }
}

TEST(UnsqueezeReference, OutputHoldsTheInputBytes) {
    test::expect_reference_keeps_bytes("unsqueeze", axes_attr({2, 0}), Shape{4, 5}, Shape({1, 4, 1, 5}));
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(UnsqueezeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{n, 3}});
    rows.push_back({Shape{0, 3}});
    rows.push_back({Shape{5, 3}});
    // Axes from a graph input: its values arrive with every run and change.
    std::vector<test::Run> with_input;
    uint64_t seed = 50;
    int64_t k = 0;
    for (int64_t n : test::tail_sizes())
        with_input.push_back(
            {test::random_tensor(DataType::u8, Shape{n}, seed++, 0, 200), axes_value({(k++ % 2) ? 0 : -1})});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"unsqueeze", axes_attr({1}), {test::f32({Dimension(), 3})}, {}},
                              test::random_runs(DataType::f32, rows, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;   // the axes change with the data shape unchanged
        test::expect_sequence({"unsqueeze", {}, {Layout({Dimension()}, DataType::u8), Layout({1}, DataType::i64)}, {}},
                              with_input, values);
    }
}

// ---- views (OpTraits::view) ----------------------------------------------------

// With views on (the default), a plain input needs no kernel: the output is
// the input's buffer under the new shape, on every engine and every shape.
TEST(UnsqueezeViews, NoKernelRunsAndTheOutputHoldsTheInputBytes) {
    test::expect_view_runs_no_kernel({"unsqueeze", axes_attr({1}),
                                      [](DataType t) {
                                          return Layout({Dimension(), 3}, t);
                                      },
                                      [](int64_t n) {
                                          return Shape{n, 3};
                                      },
                                      [](int64_t n) {
                                          return Shape({n, 1, 3});
                                      }});
}

}   // namespace
}   // namespace dynrt
