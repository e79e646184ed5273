// squeeze: shape-inference table (attribute and input axes, negative axes,
// every size-1 dim, rank 0, empty and dynamic dims, errors), every impl against
// the reference for every dtype, and one instance fed changing shapes
// (including a dim that turns out not to be 1 at run time).
#include <gtest/gtest.h>

#include <cstring>

#include "layout_op_test.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::axes_attr;
using test::axes_value;
using test::every_dtype;

using test::error_of;

// ---- 1. shape inference ----------------------------------------------------

TEST(SqueezeShape, AxesFromTheAttributeRemoveSize1DimsOfEveryDtype) {
    const Dimension dyn, b18(1, 8);
    std::vector<test::ShapeRow> rows;
    for (DataType t : every_dtype()) {
        rows.push_back({{Layout({2, 1, 3}, t)}, axes_attr({1}), {Layout({2, 3}, t)}});
        rows.push_back({{Layout({2, 1, 3}, t)}, axes_attr({-2}), {Layout({2, 3}, t)}});
    }
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    rows.push_back({{f({1, 3, 1})}, axes_attr({0, -1}), {f({3})}});
    rows.push_back({{f({1})}, axes_attr({0}), {f(PartialShape{})}});             // to rank 0
    rows.push_back({{f({1, 1})}, axes_attr({}), {f(PartialShape{})}});           // every size-1 dim
    rows.push_back({{f({1, 3, 1, 4})}, axes_attr({}), {f({3, 4})}});             // every size-1 dim
    rows.push_back({{f(PartialShape{})}, axes_attr({}), {f(PartialShape{})}});   // a scalar stays one
    rows.push_back({{f({0, 1, 3})}, axes_attr({1}), {f({0, 3})}});               // empty tensor
    rows.push_back({{f({0, 2})}, axes_attr({}), {f({0, 2})}});
    // Dynamic dims keep their bounds; a dynamic squeezed dim may be 1.
    rows.push_back({{f({dyn, 1, b18})}, axes_attr({1}), {f({dyn, b18})}});
    rows.push_back({{f({dyn, 3})}, axes_attr({0}), {f({3})}});
    rows.push_back({{f({b18, Dimension(2, 5)})}, axes_attr({0}), {f({Dimension(2, 5)})}});
    rows.push_back({{f({1, Dimension(2, 5), Dimension(0, 0)})}, axes_attr({}), {f({Dimension(2, 5), 0})}});
    test::expect_shapes("squeeze", rows);
}

TEST(SqueezeShape, AxesFromInput1AreReadByValueOrLeaveTheRankOnly) {
    const Layout in({2, 1, 3, 1}, DataType::f16), ax2({2}, DataType::i64);
    test::expect_shapes("squeeze", {{{in, ax2}, {}, {Layout({2, 3}, DataType::f16)}, {}, {{1, axes_value({1, -1})}}},
                                    {{in, Layout({1}, DataType::i32)},
                                     {},
                                     {Layout({2, 3, 1}, DataType::f16)},
                                     {},
                                     {{1, axes_value({1}, DataType::i32)}}},
                                    // Unknown values: the rank is known from the length of input 1.
                                    {{in, ax2}, {}, {Layout(PartialShape::dynamic_of_rank(2), DataType::f16)}},
                                    // An empty axes input squeezes every size-1 dim, values or not.
                                    {{in, Layout({0}, DataType::i64)}, {}, {Layout({2, 3}, DataType::f16)}}});
}

TEST(SqueezeShape, BadAxesAreErrorsNamingNodeFieldAndShape) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const auto words = [](std::vector<std::string> w) {
        return test::with_node_and_field(std::move(w), "squeeze", "axes");
    };
    test::expect_shapes(
        "squeeze", {{{f({2, 1})}, axes_attr({2}), {}, words({"axis 2", "out of range", "[2,1]"})},
                    {{f({2, 1})}, axes_attr({-3}), {}, words({"axis -3", "out of range", "[2,1]"})},
                    {{f(PartialShape{})}, axes_attr({0}), {}, words({"out of range", "[]"})},
                    {{f({2, 3})}, axes_attr({0}), {}, words({"cannot squeeze dim 0", "[2,3]", "extent is 2, not 1"})},
                    {{f({0, 3})}, axes_attr({0}), {}, words({"cannot squeeze dim 0", "[0,3]"})},
                    {{f({Dimension(2, 8), 3})}, axes_attr({0}), {}, words({"[2..8,3]", "extent is 2..8, not 1"})},
                    {{f({2, 1, 3})}, axes_attr({1, -2}), {}, words({"more than once", "[2,1,3]"})},
                    {{f({Dimension(), 3})}, axes_attr({}), {}, words({"cannot tell", "[?,3]", "give the axes"})},
                    {{f({2, 1}), Layout({1}, DataType::f32)}, {}, {}, words({"i32 or i64", "f32[1]"})},
                    {{f({2, 1}), Layout({1, 1}, DataType::i64)}, {}, {}, words({"1-D"})},
                    {{f({2, 1}), Layout({Dimension()}, DataType::i64)}, {}, {}, words({"dynamic length"})},
                    {{f({2, 1}), Layout({3}, DataType::i64)}, {}, {}, words({"squeeze 3 dims", "[2,1]"})},
                    {{f({2, 1}), Layout({1}, DataType::i64)}, axes_attr({1}), {}, words({"given twice"})},
                    {{f({2, 1}), Layout({1}, DataType::i64)},
                     {},
                     {},
                     words({"axis 5", "input 1", "[2,1]"}),
                     {{1, axes_value({5})}}}});
}

// ---- 2. every impl against the reference -------------------------------------

// A byte copy: every dtype, exact; tail lengths of the four-element copies and
// an empty tensor, axes from the attribute and from a constant input 1.
TEST(SqueezeImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 1, 1}},  {{3, 1, 1}},   {{1, 1, 13}},
                                                    {{17, 1, 3}}, {{2, 1, 257}}, {{0, 1, 5}}};
    for (DataType t : every_dtype()) {
        SCOPED_TRACE(to_string(t));
        const Layout in({Dimension(), 1, Dimension()}, t);
        const auto runs = test::random_runs(t, shapes, 11, -100, 100);
        test::expect_impls_match_reference({"squeeze", axes_attr({-2}), {in}, {}}, runs);
        test::expect_impls_match_reference({"squeeze", {}, {in, Layout({1}, DataType::i64)}, {{1, axes_value({1})}}},
                                           runs);
    }
}

TEST(SqueezeReference, OutputHoldsTheInputBytes) {
    test::expect_reference_keeps_bytes("squeeze", axes_attr({}), Shape{1, 4, 1, 5}, Shape({4, 5}));
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(SqueezeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{n, 1, 3}});
    rows.push_back({Shape{0, 1, 3}});
    rows.push_back({Shape{5, 1, 3}});
    // Axes from a graph input: its values arrive with every run.
    std::vector<test::Run> with_input;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes())
        with_input.push_back({test::random_tensor(DataType::i32, Shape{3, 1, n}, seed++, -9, 9), axes_value({-2})});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"squeeze", axes_attr({1}), {test::f32({Dimension(), 1, 3})}, {}},
                              test::random_runs(DataType::f32, rows, 100), o);
        test::expect_sequence(
            {"squeeze", {}, {Layout({3, 1, Dimension()}, DataType::i32), Layout({1}, DataType::i64)}, {}}, with_input,
            o);
    }
}

// [?, 3] squeezed on axis 0: a run whose first dim is not 1 is an error naming
// the node, the field and the run's shape; the request serves the next run.
TEST(SqueezeDynamic, ADynamicDimThatIsNot1IsARunTimeError) {
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic impls" : "static impls");
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        const auto prog = test::single_node_program("squeeze", {test::f32({Dimension(), 3})}, axes_attr({0}));
        InferRequest req(Network::create(prog, test::engine(), opts));
        req.set_input("in0", test::random_tensor(DataType::f32, Shape{2, 3}, 1));
        const std::string msg = error_of([&] { req.infer(); });
        for (const char* w : {"node 'node' (squeeze)", "field 'axes'", "[2,3]", "not 1"})
            EXPECT_NE(msg.find(w), std::string::npos) << msg;
        const HostTensor ok = test::random_tensor(DataType::f32, Shape{1, 3}, 2);
        req.set_input("in0", ok);
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), Shape({3}));
        EXPECT_EQ(0, std::memcmp(out.data(), ok.data(), ok.bytes()));
    }
}

// ---- views (OpTraits::view) ----------------------------------------------------

// With views on (the default), a plain input needs no kernel: the output is
// the input's buffer under the new shape, on every engine and every shape.
TEST(SqueezeViews, NoKernelRunsAndTheOutputHoldsTheInputBytes) {
    test::expect_view_runs_no_kernel({"squeeze", axes_attr({1}),
                                      [](DataType t) {
                                          return Layout({Dimension(), 1, 3}, t);
                                      },
                                      [](int64_t n) {
                                          return Shape{n, 1, 3};
                                      },
                                      [](int64_t n) {
                                          return Shape({n, 3});
                                      }});
}

}   // namespace
}   // namespace dynrt
