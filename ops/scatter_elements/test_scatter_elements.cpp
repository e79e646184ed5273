// scatter_elements: shape-inference table (dynamic dims, errors), hand-computed
// values (both axes, every reduction over duplicates, negative and
// out-of-range indices on the host and on the device), every impl against the
// reference for every element width and reduction, and one instance fed
// changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes scatter(int64_t axis, const std::string& reduction = "none") {
    return test::attrs({{"axis", axis}, {"reduction", reduction}});
}
Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ScatterElementsShape, OutputIsData) {
    const Dimension dyn;
    test::expect_shapes(
        "scatter_elements",
        {
            {{test::f32({3, 4}), i64({2, 4}), test::f32({2, 4})}, scatter(0), {test::f32({3, 4})}},
            {{test::f32({3, 4}), i64({3, 7}), test::f32({3, 7})}, scatter(-1, "add"), {test::f32({3, 4})}},
            {{Layout({3}, DataType::boolean), i64({0}), Layout({0}, DataType::boolean)},
             scatter(0),
             {Layout({3}, DataType::boolean)}},
            {{test::f32({dyn, 4}), i64({dyn, dyn}), test::f32({5, dyn})}, scatter(0, "max"), {test::f32({dyn, 4})}},
        });
}

TEST(ScatterElementsShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "scatter_elements",
        {
            {{test::f32({3, 4}), test::f32({3, 4}), test::f32({3, 4})}, scatter(0), {}, {"node 'node'", "i32 or i64"}},
            {{test::f32({3, 4}), i64({3, 4}), Layout({3, 4}, DataType::f16)},
             scatter(0),
             {},
             {"node 'node'", "updates", "type of data", "f16[3,4]"}},
            {{test::f32({3, 4}), i64({3}), test::f32({3})}, scatter(0), {}, {"node 'node'", "same rank"}},
            {{test::f32({3, 4}), i64({3, 4}), test::f32({3, 3})}, scatter(0), {}, {"node 'node'", "shape of indices"}},
            {{test::f32({3, 4}), i64({3, 5}), test::f32({3, 5})}, scatter(0), {}, {"node 'node'", "dim 1", "longer"}},
            {{test::f32({3, 4}), i64({3, 4}), test::f32({3, 4})}, scatter(2), {}, {"axis"}},
            {{test::f32({}), i64({}), test::f32({})}, scatter(0), {}, {"node 'node'", "rank"}},
            {{Layout({3}, DataType::boolean), i64({1}), Layout({1}, DataType::boolean)},
             scatter(0, "add"),
             {},
             {"node 'node'", "reduction", "boolean"}},
            {{test::f32({3}), i64({1}), test::f32({1})}, scatter(0, "sub"), {}, {"reduction", "sub"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& data, const HostTensor& idx, const HostTensor& upd, const Attributes& a,
               const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("scatter_elements", {data.layout(), idx.layout(), upd.layout()}, a),
                          {data, idx, upd}, NetworkOptions{}, engine);
}

HostTensor ints(const Shape& s, std::vector<int64_t> v) { return HostTensor::from_int64(DataType::i64, s, v); }

TEST(ScatterElementsValues, Axis0WritesEachUpdateIntoItsColumn) {
    const HostTensor out = run(HostTensor(DataType::f32, Shape{3, 3}), ints({2, 3}, {1, 0, 2, 0, 2, 1}),
                               HostTensor::from_floats(Shape{2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}), scatter(0));
    test::expect_bytes_equal(out, HostTensor::from_floats(Shape{3, 3}, {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
}

TEST(ScatterElementsValues, DuplicatesCombineInOrderForEveryReduction) {
    const HostTensor data = ints({1, 5}, {1, 2, 3, 4, 5});
    const HostTensor idx = ints({1, 3}, {1, 1, -1});
    const HostTensor upd = ints({1, 3}, {10, 20, 7});
    for (const auto& [r, want] : std::vector<std::pair<std::string, std::vector<int64_t>>>{{"none", {1, 20, 3, 4, 7}},
                                                                                           {"add", {1, 32, 3, 4, 12}},
                                                                                           {"mul", {1, 400, 3, 4, 35}},
                                                                                           {"max", {1, 20, 3, 4, 7}},
                                                                                           {"min", {1, 2, 3, 4, 5}}})
        EXPECT_EQ(run(data, idx, upd, scatter(1, r)).to_int64(), want) << r;
}

TEST(ScatterElementsValues, OutOfRangeIndexIsAnErrorNamingNodeAndIndex) {
    for (int64_t bad : {5, -6}) {
        const std::string msg = test::error_of([&] {
            run(ints({1, 5}, {1, 2, 3, 4, 5}), ints({1, 2}, {0, bad}), ints({1, 2}, {9, 9}), scatter(1));
        });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// Both OpenCL impls raise the host impls' error, naming the indices input and
// the value (past the end, negative beyond -dim, beyond 32 bits), and the
// same instance then gives the reference's values for good indices.
TEST(ScatterElementsValues, DeviceRaisesTheHostErrorAndTheNextRunIsGood) {
    const HostTensor data = ints({2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    const HostTensor upd = ints({2, 3}, {10, 20, 30, 40, 50, 60});
    std::vector<test::BadIndexRun> bad;
    for (int64_t v : std::vector<int64_t>{5, -6, int64_t(1) << 40})
        bad.push_back({{data, ints({2, 3}, {0, 1, 2, 3, v, 4}), upd},
                       {"indices", "index " + std::to_string(v) + " (at position 4)", "[2,5]"}});
    test::expect_device_index_errors(
        {"scatter_elements", scatter(1, "add"), {data.layout(), i64({Dimension(), 3}), upd.layout()}, {}}, bad,
        {data, ints({2, 3}, {4, -1, 0, 2, 2, -5}), upd});
}

// ---- 2. every impl against the reference ---------------------------------------

// Indices in [-len, len) along the axis (duplicates likely), dims no longer than data's off it.
test::Run make_run(DataType t, const Shape& data, const Shape& idx, size_t axis, uint64_t seed) {
    const auto len = static_cast<double>(data[axis]);
    const bool small = t == DataType::u8 || t == DataType::i8 || t == DataType::f16;
    return {test::random_tensor(t, data, seed, small ? -3 : -100, small ? 3 : 100),
            test::random_tensor(DataType::i64, idx, seed + 1, -len, len),
            test::random_tensor(t, idx, seed + 2, small ? -3 : -100, small ? 3 : 100)};
}

TEST(ScatterElementsImpls, EveryImplMatchesTheReferenceForEveryElementWidthAndReduction) {
    for (const auto& [t, axis, r] :
         std::vector<std::tuple<DataType, int64_t, std::string>>{{DataType::f32, 0, "none"},
                                                                 {DataType::f32, 1, "add"},
                                                                 {DataType::f16, -1, "mul"},
                                                                 {DataType::i64, 0, "max"},
                                                                 {DataType::i32, 1, "min"},
                                                                 {DataType::u8, 0, "add"},
                                                                 {DataType::boolean, -1, "none"},
                                                                 {DataType::f64, 1, "add"}}) {
        SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(axis) + " " + r);
        const size_t a = axis < 0 ? 2 : static_cast<size_t>(axis);
        std::vector<test::Run> runs;
        uint64_t seed = 10;
        for (const auto& [d, m] : std::vector<std::pair<Shape, int64_t>>{
                 {{1, 1, 1}, 1}, {{3, 13, 2}, 5}, {{2, 257, 1}, 3}, {{4, 3, 2}, 0}}) {
            Shape i = d;
            i[a] = m;
            i[(a + 1) % 3] = (d[(a + 1) % 3] + 1) / 2;
            runs.push_back(make_run(t, d, i, a, seed += 3));
        }
        const Layout dyn(PartialShape::dynamic_of_rank(3), t);
        test::expect_impls_match_reference(
            {"scatter_elements", scatter(axis, r), {dyn, i64(PartialShape::dynamic_of_rank(3)), dyn}, {}}, runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ScatterElementsDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes())
        runs.push_back(make_run(DataType::f32, Shape{n, 3}, Shape{n % 5 + 1, 3}, 0, seed += 3));
    runs.push_back(make_run(DataType::f32, Shape{2, 3}, Shape{0, 3}, 0, 9));
    runs.push_back(make_run(DataType::f32, Shape{1, 3}, Shape{1, 1}, 0, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"scatter_elements",
             scatter(0, "add"),
             {test::f32({Dimension(), 3}), i64({Dimension(), Dimension()}), test::f32({Dimension(), Dimension()})},
             {}},
            runs, o);
    }
}

}   // namespace
}   // namespace dynrt
