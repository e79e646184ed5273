// one_hot: shape-inference table (depth known or not, axes, dynamic dims,
// errors), hand-computed values (negative and out-of-range indices, floating
// indices, a middle axis), every impl against the reference for several index
// and value types, and one instance fed changing shapes and depths.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::axis_attr;

HostTensor scalar(DataType t, double v) {
    HostTensor h(t, Shape{});
    h.set_from_double(0, v);
    return h;
}
const Layout kDepth(PartialShape{}, DataType::i64);
Layout values_layout(DataType t = DataType::f32) { return Layout({2}, t); }

// ---- 1. shape inference ----------------------------------------------------

TEST(OneHotShape, DepthIsInsertedAtTheAxisWithTheTypeOfValues) {
    const Dimension dyn;
    const Layout idx({2, 3}, DataType::i64);
    test::expect_shapes(
        "one_hot",
        {
            {{idx, kDepth, values_layout()},
             axis_attr(-1),
             {test::f32({2, 3, 5})},
             {},
             {{1, scalar(DataType::i64, 5)}}},
            {{idx, kDepth, values_layout()}, axis_attr(0), {test::f32({5, 2, 3})}, {}, {{1, scalar(DataType::i64, 5)}}},
            {{idx, Layout({1}, DataType::f32), values_layout(DataType::u8)},
             axis_attr(-2),
             {Layout({2, 4, 3}, DataType::u8)},
             {},
             {{1, HostTensor::from_floats(Shape{1}, {4.7f})}}},
            {{Layout({}, DataType::f32), kDepth, values_layout()},
             axis_attr(0),
             {test::f32({7})},
             {},
             {{1, scalar(DataType::i64, 7)}}},
            {{Layout({dyn, 0}, DataType::i32), kDepth, values_layout()},
             axis_attr(1),
             {test::f32({dyn, 0, 0})},
             {},
             {{1, scalar(DataType::i64, 0)}}},
            // Depth unknown until run time: a dynamic dim.
            {{idx, kDepth, Layout({dyn}, DataType::i64)}, axis_attr(1), {Layout({2, dyn, 3}, DataType::i64)}},
        });
}

TEST(OneHotShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    const Layout idx({2, 3}, DataType::i64);
    test::expect_shapes(
        "one_hot",
        {
            {{idx, kDepth, values_layout()},
             axis_attr(3),
             {},
             {"node 'node'", "axis"},
             {{1, scalar(DataType::i64, 5)}}},
            {{idx, kDepth, values_layout()}, axis_attr(-4), {}, {"node 'node'", "axis"}},
            {{idx, kDepth, test::f32({3})}, axis_attr(-1), {}, {"node 'node'", "values", "2 elements", "f32[3]"}},
            {{idx, Layout({2}, DataType::i64), values_layout()}, axis_attr(-1), {}, {"node 'node'", "depth", "i64[2]"}},
            {{idx, kDepth, values_layout()},
             axis_attr(-1),
             {},
             {"node 'node'", "depth", "negative"},
             {{1, scalar(DataType::i64, -2)}}},
            {{Layout({2}, DataType::boolean), kDepth, values_layout()}, axis_attr(-1), {}, {"node 'node'", "numeric"}},
            {{Layout({int64_t{1} << 40}, DataType::i32), kDepth, values_layout()},
             axis_attr(-1),
             {},
             {"node 'node'", "2^60"},
             {{1, scalar(DataType::i64, double(int64_t{1} << 30))}}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& idx, int64_t depth, const HostTensor& values, int64_t axis) {
    return test::run_once(test::single_node_program("one_hot", {idx.layout(), kDepth, values.layout()}, axis_attr(axis),
                                                    {{1, scalar(DataType::i64, static_cast<double>(depth))}}),
                          {idx, values});
}

const HostTensor kOffOn = HostTensor::from_floats(Shape{2}, {-1, 3});

TEST(OneHotValues, NegativeIndicesCountFromTheEndAndOutOfRangeOnesAreAllOff) {
    const HostTensor idx = HostTensor::from_int64(DataType::i64, Shape{4}, {1, -1, 4, -5});
    const HostTensor out = run(idx, 4, kOffOn, -1);
    EXPECT_EQ(out.shape(), (Shape{4, 4}));
    test::expect_bytes_equal(out, HostTensor::from_floats(Shape{4, 4}, {-1, 3, -1, -1, -1, -1, -1, 3,   //
                                                                        -1, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(OneHotValues, AxisZeroPutsTheDepthFirst) {
    const HostTensor idx = HostTensor::from_int64(DataType::i32, Shape{3}, {2, 0, 1});
    const HostTensor vals = HostTensor::from_int64(DataType::i64, Shape{2}, {0, 1});
    const HostTensor out = run(idx, 3, vals, 0);
    EXPECT_EQ(out.shape(), (Shape{3, 3}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{0, 1, 0, 0, 0, 1, 1, 0, 0}));
}

TEST(OneHotValues, FloatingIndicesAreTruncatedTowardZero) {
    const HostTensor idx = HostTensor::from_floats(Shape{3}, {0.7f, -1.5f, 2.9f});
    const HostTensor vals = HostTensor::from_int64(DataType::u8, Shape{2}, {0, 1});
    EXPECT_EQ(run(idx, 3, vals, -1).to_int64(), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 1}));
}

// ---- 2. every impl against the reference ---------------------------------------

// Indices in [-depth-1, depth+1): some out of range on both sides.
test::Run make_run(DataType it, DataType vt, const Shape& s, int64_t depth, uint64_t seed) {
    const auto d = static_cast<double>(depth);
    return {test::random_tensor(it, s, seed, -d - 1, d + 1), test::random_tensor(vt, Shape{2}, seed + 1, -50, 50)};
}

TEST(OneHotImpls, EveryImplMatchesTheReferenceForIndexAndValueTypes) {
    for (const auto& [it, vt, axis] :
         std::vector<std::tuple<DataType, DataType, int64_t>>{{DataType::i64, DataType::f32, -1},
                                                              {DataType::i32, DataType::f16, 0},
                                                              {DataType::f32, DataType::i64, 1},
                                                              {DataType::f16, DataType::boolean, -1},
                                                              {DataType::f64, DataType::f64, 2},
                                                              {DataType::u8, DataType::i8, -2}}) {
        SCOPED_TRACE(std::string(to_string(it)) + " -> " + to_string(vt) + " axis " + std::to_string(axis));
        std::vector<test::Run> runs;
        for (const Shape& s : std::vector<Shape>{{1, 1}, {3, 13}, {17, 2}, {2, 257}, {0, 3}})
            runs.push_back(make_run(it, vt, s, 5, runs.size() + 3));
        test::expect_impls_match_reference({"one_hot",
                                            axis_attr(axis),
                                            {Layout(PartialShape::dynamic_of_rank(2), it), kDepth, values_layout(vt)},
                                            {{1, scalar(DataType::i64, 5)}}},
                                           runs);
    }
}

TEST(OneHotImpls, DepthAsARunInputMatchesTheReference) {
    std::vector<test::Run> runs;
    for (int64_t depth : {1, 3, 17, 0, 3}) {
        test::Run r = make_run(DataType::i64, DataType::f32, Shape{4, 3}, depth, 10 + depth);
        r.insert(r.begin() + 1, scalar(DataType::f32, static_cast<double>(depth) + 0.5));
        runs.push_back(r);
    }
    test::expect_impls_match_reference(
        {"one_hot", axis_attr(1), {Layout({4, 3}, DataType::i64), Layout({}, DataType::f32), values_layout()}, {}},
        runs);
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(OneHotDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 60;
    for (int64_t n : test::tail_sizes()) runs.push_back(make_run(DataType::i64, DataType::f32, Shape{n, 2}, 6, seed++));
    runs.push_back(make_run(DataType::i64, DataType::f32, Shape{0, 2}, 6, seed++));
    runs.push_back(make_run(DataType::i64, DataType::f32, Shape{1, 2}, 6, seed++));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"one_hot",
                               axis_attr(-2),
                               {Layout({Dimension(), 2}, DataType::i64), kDepth, values_layout()},
                               {{1, scalar(DataType::i64, 6)}}},
                              runs, o);
    }
}

}   // namespace
}   // namespace dynrt
