// gather_elements: shape-inference table (dynamic and bounded dims, errors),
// hand-computed values (both axes, negative indices, out-of-range indices
// raising the host impls' error on the host and on the device), every impl against the reference for every
// element width, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::axis_attr;

Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

// ---- 1. shape inference ----------------------------------------------------

TEST(GatherElementsShape, OutputHasTheShapeOfIndicesAndTheTypeOfData) {
    const Dimension dyn;
    test::expect_shapes(
        "gather_elements",
        {
            {{test::f32({3, 4}), i64({5, 4})}, axis_attr(0), {test::f32({5, 4})}},
            {{test::f32({3, 4}), i64({2, 7})}, axis_attr(-1), {test::f32({2, 7})}},
            {{Layout({3}, DataType::u8), Layout({0}, DataType::i32)}, axis_attr(0), {Layout({0}, DataType::u8)}},
            {{test::f32({dyn, 4}), i64({dyn, Dimension(1, 4)})}, axis_attr(0), {test::f32({dyn, Dimension(1, 4)})}},
            {{test::f32({dyn, 2}), i64({5, dyn})}, axis_attr(1), {test::f32({5, dyn})}},
        });
}

TEST(GatherElementsShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "gather_elements",
        {
            {{test::f32({3, 4}), test::f32({3, 4})}, axis_attr(0), {}, {"node 'node'", "indices", "i32 or i64"}},
            {{test::f32({3, 4}), i64({3})}, axis_attr(0), {}, {"node 'node'", "same rank", "[3,4]", "i64[3]"}},
            {{test::f32({}), i64({})}, axis_attr(0), {}, {"node 'node'", "scalar"}},
            {{test::f32({3, 4}), i64({3, 4})}, axis_attr(2), {}, {"axis"}},
            {{test::f32({3, 4}), i64({3, 5})}, axis_attr(0), {}, {"node 'node'", "dim 1", "longer", "[3,5]"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& data, const HostTensor& idx, int64_t axis, const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("gather_elements", {data.layout(), idx.layout()}, axis_attr(axis)),
                          {data, idx}, NetworkOptions{}, engine);
}

const HostTensor k3x3 = HostTensor::from_floats(Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(GatherElementsValues, Axis0PicksRowsPerColumnAndNegativeIndicesCountFromTheEnd) {
    const HostTensor idx = HostTensor::from_int64(DataType::i64, Shape{2, 3}, {-1, -2, 0, 2, 0, 0});
    const HostTensor out = run(k3x3, idx, 0);
    EXPECT_EQ(out.shape(), (Shape{2, 3}));
    test::expect_bytes_equal(out, HostTensor::from_floats(Shape{2, 3}, {7, 5, 3, 7, 2, 3}));
}

TEST(GatherElementsValues, LastAxisPicksColumnsPerRow) {
    const HostTensor idx = HostTensor::from_int64(DataType::i32, Shape{2, 2}, {0, 0, 1, 0});
    const HostTensor data = HostTensor::from_int64(DataType::i64, Shape{2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(run(data, idx, -1).to_int64(), (std::vector<int64_t>{1, 1, 4, 3}));
}

TEST(GatherElementsValues, OutOfRangeIndexIsAnErrorNamingNodeAndIndex) {
    for (int64_t bad : {3, -4}) {
        const HostTensor idx = HostTensor::from_int64(DataType::i64, Shape{1, 3}, {0, bad, 1});
        const std::string msg = test::error_of([&] { run(k3x3, idx, 0); });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// Both OpenCL impls raise the host impls' error, naming the indices input and
// the value (past the end, negative beyond -dim, beyond 32 bits), and the same
// instance then gives the reference's values for good indices.
TEST(GatherElementsValues, DeviceRaisesTheHostErrorAndTheNextRunIsGood) {
    std::vector<test::BadIndexRun> bad;
    for (int64_t v : std::vector<int64_t>{3, -4, int64_t(1) << 40})
        bad.push_back({{k3x3, HostTensor::from_int64(DataType::i64, Shape{2, 3}, {0, 1, 2, 1, v, 0})},
                       {"indices", "index " + std::to_string(v) + " (at position 4)", "[3,3]"}});
    const HostTensor good = HostTensor::from_int64(DataType::i64, Shape{2, 3}, {-1, -3, 2, 0, 1, -2});
    test::expect_device_index_errors({"gather_elements", axis_attr(0), {k3x3.layout(), i64({Dimension(), 3})}, {}}, bad,
                                     {k3x3, good});
}

// ---- 2. every impl against the reference ---------------------------------------

// Indices in [-len, len) along the axis, dims no longer than data's off it.
test::Run make_run(DataType t, const Shape& data, const Shape& idx, size_t axis, uint64_t seed) {
    const auto len = static_cast<double>(data[axis]);
    return {test::random_tensor(t, data, seed, -100, 100),
            test::random_tensor(DataType::i64, idx, seed + 1, -len, len)};
}

TEST(GatherElementsImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    // Each element width on one axis (every axis on f32): a static OpenCL
    // build per shape, so the matrix is kept small.
    for (const auto& [t, axis] : std::vector<std::pair<DataType, int64_t>>{{DataType::f32, 0},
                                                                           {DataType::f32, 1},
                                                                           {DataType::f32, -1},
                                                                           {DataType::f16, 1},
                                                                           {DataType::i64, 0},
                                                                           {DataType::boolean, -1},
                                                                           {DataType::f64, 1}}) {
        {
            SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(axis));
            const size_t a = axis < 0 ? 2 : static_cast<size_t>(axis);
            std::vector<test::Run> runs;
            uint64_t seed = 10;
            // The index dims: m along the axis, the next dim halved, the rest as data's.
            for (const auto& [d, m] : std::vector<std::pair<Shape, int64_t>>{
                     {{1, 1, 1}, 1}, {{3, 13, 2}, 5}, {{2, 257, 1}, 3}, {{4, 0, 2}, 2}}) {
                if (d[a] == 0) continue;
                Shape i = d;
                i[a] = m;
                i[(a + 1) % 3] = (d[(a + 1) % 3] + 1) / 2;
                runs.push_back(make_run(t, d, i, a, seed++));
            }
            const Layout dyn(PartialShape::dynamic_of_rank(3), t);
            test::expect_impls_match_reference({"gather_elements",
                                                axis_attr(axis),
                                                {dyn, Layout(PartialShape::dynamic_of_rank(3), DataType::i64)},
                                                {}},
                                               runs);
        }
    }
}

TEST(GatherElementsImpls, RankEightOnEveryImplAndRankNineOnTheHostOnly) {
    const Shape d8{2, 1, 3, 1, 2, 1, 1, 5}, i8{2, 1, 3, 1, 2, 1, 1, 7};
    test::expect_impls_match_reference({"gather_elements",
                                        axis_attr(-1),
                                        {Layout(PartialShape::dynamic_of_rank(8), DataType::f32),
                                         Layout(PartialShape::dynamic_of_rank(8), DataType::i64)},
                                        {}},
                                       {make_run(DataType::f32, d8, i8, 7, 3)});
    const Shape d9{2, 1, 3, 1, 2, 1, 1, 5, 1};
    const std::vector<std::string> ran =
        test::expect_impls_match_reference({"gather_elements",
                                            axis_attr(2),
                                            {Layout(PartialShape::dynamic_of_rank(9), DataType::f32),
                                             Layout(PartialShape::dynamic_of_rank(9), DataType::i64)},
                                            {}},
                                           {make_run(DataType::f32, d9, d9, 2, 4)}, {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(GatherElementsDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes())
        runs.push_back(make_run(DataType::f32, Shape{n, 3}, Shape{n % 5 + 1, 3}, 0, seed));
    runs.push_back({test::random_tensor(DataType::f32, Shape{2, 3}, 9), HostTensor(DataType::i64, Shape{0, 3})});
    runs.push_back(make_run(DataType::f32, Shape{1, 3}, Shape{1, 1}, 0, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"gather_elements", axis_attr(0), {test::f32({Dimension(), 3}), i64({Dimension(), Dimension()})}, {}}, runs,
            o);
    }
}

}   // namespace
}   // namespace dynrt
