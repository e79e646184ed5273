// flatten: shape-inference table (every axis incl. negative and axis == rank,
// rank 0, empty and dynamic dims with their bounds, overflow, errors), every
// impl against the reference for every dtype, and one instance fed changing
// shapes.
#include <gtest/gtest.h>

#include <cstring>

#include "layout_op_test.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::every_dtype;

// ---- 1. shape inference ----------------------------------------------------

TEST(FlattenShape, DimsBeforeAxisAreRowsTheRestColumns) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    std::vector<test::ShapeRow> rows;
    for (DataType t : every_dtype()) rows.push_back({{Layout({2, 3, 4}, t)}, Attributes{}, {Layout({2, 12}, t)}});
    const auto at = [](int64_t axis) { return test::axis_attr(axis); };
    rows.push_back({{f({2, 3, 4})}, at(0), {f({1, 24})}});
    rows.push_back({{f({2, 3, 4})}, at(2), {f({6, 4})}});
    rows.push_back({{f({2, 3, 4})}, at(3), {f({24, 1})}});   // axis == rank
    rows.push_back({{f({2, 3, 4})}, at(-1), {f({6, 4})}});
    rows.push_back({{f({2, 3, 4})}, at(-3), {f({1, 24})}});
    rows.push_back({{f(PartialShape{})}, at(0), {f({1, 1})}});   // rank 0
    rows.push_back({{f({5})}, at(1), {f({5, 1})}});
    rows.push_back({{f({1, 1})}, at(1), {f({1, 1})}});
    rows.push_back({{f({3, 0, 4})}, at(1), {f({3, 0})}});   // empty tensor
    rows.push_back({{f({3, 0, 4})}, at(2), {f({0, 4})}});
    test::expect_shapes("flatten", rows);
}

TEST(FlattenShape, DynamicDimsGiveProductsOfTheirBounds) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const Dimension dyn;
    const auto at = [](int64_t axis) { return test::axis_attr(axis); };
    test::expect_shapes(
        "flatten",
        {{{f({dyn, 3, 4})}, at(1), {f({dyn, 12})}},
         {{f({dyn, 3, 4})}, at(2), {f({dyn, 4})}},
         {{f({Dimension(2, 5), 3, 4})}, at(2), {f({Dimension(6, 15), 4})}},
         {{f({2, Dimension(1, 8), Dimension(3, 4)})}, at(1), {f({2, Dimension(3, 32)})}},
         {{f({2, Dimension(2, Dimension::kUnbounded), 5})}, at(1), {f({2, Dimension(10, Dimension::kUnbounded)})}},
         {{f({Dimension(0, 0), dyn})}, at(1), {f({0, dyn})}},   // can only be 0
         {{f({dyn, 0})}, at(0), {f({1, 0})}},
         // Maxima whose product does not fit stay unbounded.
         {{f({Dimension(1, int64_t{1} << 40), Dimension(1, int64_t{1} << 40)})},
          at(0),
          {f({1, Dimension(1, Dimension::kUnbounded)})}}});
}

TEST(FlattenShape, BadAxesAndOverflowingProductsAreErrors) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const auto at = [](int64_t axis) { return test::axis_attr(axis); };
    const int64_t big = int64_t{1} << 40;
    test::expect_shapes(
        "flatten",
        {{{f({2, 3})}, at(3), {}, {"node 'node' (flatten)", "field 'axis'", "axis 3", "[2,3]", "[-2, 2]"}},
         {{f({2, 3})}, at(-3), {}, {"field 'axis'", "axis -3", "[2,3]"}},
         {{f(PartialShape{})}, at(1), {}, {"axis 1", "[]"}},
         {{f({big, big, 2})}, at(2), {}, {"node 'node' (flatten)", "[1099511627776,1099511627776,2]", "2^60"}},
         {{f({2, Dimension(big, Dimension::kUnbounded), big})}, at(1), {}, {"2^60"}}});
}

// ---- 2. every impl against the reference -------------------------------------

TEST(FlattenImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 1, 1}},   {{3, 1, 1}}, {{1, 13, 1}}, {{17, 3, 5}},
                                                    {{2, 257, 1}}, {{0, 5, 2}}, {{4, 0, 3}}};
    for (DataType t : every_dtype()) {
        SCOPED_TRACE(to_string(t));
        const auto runs = test::random_runs(t, shapes, 31, -100, 100);
        for (int64_t axis : {1, -1, 0, 3})
            test::expect_impls_match_reference(
                {"flatten", test::axis_attr(axis), {Layout(PartialShape::dynamic_of_rank(3), t)}, {}}, runs);
    }
}

TEST(FlattenReference, OutputHoldsTheInputBytes) {
    test::expect_reference_keeps_bytes("flatten", test::axis_attr(-1), Shape{2, 3, 5}, Shape({6, 5}));
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(FlattenDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, n, 3}});
    rows.push_back({Shape{2, 0, 3}});
    rows.push_back({Shape{2, 5, 3}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"flatten", test::axis_attr(2), {Layout({2, Dimension(), 3}, DataType::f16)}, {}},
                              test::random_runs(DataType::f16, rows, 100), o);
        test::expect_sequence({"flatten", test::axis_attr(1), {Layout({2, Dimension(), 3}, DataType::i64)}, {}},
                              test::random_runs(DataType::i64, rows, 200, -1000, 1000), o);
    }
}

// ---- views (OpTraits::view) ----------------------------------------------------

// With views on (the default), a plain input needs no kernel: the output is
// the input's buffer under the new shape, on every engine and every shape.
TEST(FlattenViews, NoKernelRunsAndTheOutputHoldsTheInputBytes) {
    test::expect_view_runs_no_kernel({"flatten", test::axis_attr(1),
                                      [](DataType t) {
                                          return Layout({2, Dimension(), 3}, t);
                                      },
                                      [](int64_t n) {
                                          return Shape{2, n, 3};
                                      },
                                      [](int64_t n) {
                                          return Shape({2, n * 3});
                                      }});
}

}   // namespace
}   // namespace dynrt
