// scatter_nd: shape-inference table (tuple lengths, dynamic dims, errors),
// hand-computed values (the ONNX example, slices, every reduction over
// duplicate tuples, negative and out-of-range indices on the host and on the
// device), every impl against the reference for every element width and
// reduction, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes reduce(const std::string& r) { return test::attrs({{"reduction", r}}); }
Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ScatterNdShape, OutputIsData) {
    const Dimension dyn;
    test::expect_shapes(
        "scatter_nd",
        {
            {{test::f32({4, 5, 6}), i64({3, 2}), test::f32({3, 6})}, reduce("none"), {test::f32({4, 5, 6})}},
            {{test::f32({8}), i64({4, 1}), test::f32({4})}, reduce("add"), {test::f32({8})}},
            {{test::f32({4, 5}), i64({2, 7, 2}), test::f32({2, 7})}, reduce("max"), {test::f32({4, 5})}},
            // The tuple length follows from the ranks.
            {{test::f32({dyn, 5, 6}), i64({dyn, dyn}), test::f32({dyn, 6})}, reduce("mul"), {test::f32({dyn, 5, 6})}},
            {{Layout({3}, DataType::boolean), i64({0, 1}), Layout({0}, DataType::boolean)},
             reduce("none"),
             {Layout({3}, DataType::boolean)}},
        });
}

TEST(ScatterNdShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "scatter_nd",
        {
            {{test::f32({4, 5}), test::f32({3, 1}), test::f32({3, 5})},
             reduce("none"),
             {},
             {"node 'node'", "i32 or i64"}},
            {{test::f32({4, 5}), i64({3, 1}), Layout({3, 5}, DataType::i32)},
             reduce("none"),
             {},
             {"node 'node'", "updates", "type of data"}},
            {{test::f32({4, 5, 6}), i64({3, 2}), test::f32({3, 5})},
             reduce("none"),
             {},
             {"node 'node'", "updates", "dim 1", "6", "f32[3,5]"}},
            {{test::f32({4, 5, 6}), i64({3, 2}), test::f32({3})}, reduce("none"), {}, {"node 'node'", "updates", "k"}},
            {{test::f32({4}), i64({3, 2}), test::f32({3, 1})}, reduce("none"), {}, {"node 'node'", "rank(data)"}},
            {{test::f32({}), i64({1}), test::f32({})}, reduce("none"), {}, {"node 'node'", "rank >= 1"}},
            {{Layout({3}, DataType::boolean), i64({1, 1}), Layout({1}, DataType::boolean)},
             reduce("min"),
             {},
             {"node 'node'", "reduction", "boolean"}},
            {{test::f32({3}), i64({1, 1}), test::f32({1})}, reduce("sub"), {}, {"reduction", "sub"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& data, const HostTensor& idx, const HostTensor& upd, const std::string& r,
               const std::string& engine = "cpu") {
    return test::run_once(
        test::single_node_program("scatter_nd", {data.layout(), idx.layout(), upd.layout()}, reduce(r)),
        {data, idx, upd}, NetworkOptions{}, engine);
}

HostTensor ints(const Shape& s, std::vector<int64_t> v) { return HostTensor::from_int64(DataType::i64, s, v); }

TEST(ScatterNdValues, ElementsAndSlicesLandAtTheirTuples) {
    EXPECT_EQ(run(ints({8}, {1, 2, 3, 4, 5, 6, 7, 8}), ints({4, 1}, {4, 3, 1, 7}), ints({4}, {9, 10, 11, 12}), "none")
                  .to_int64(),
              (std::vector<int64_t>{1, 11, 3, 10, 9, 6, 7, 12}));
    EXPECT_EQ(run(ints({2, 3}, {1, 2, 3, 4, 5, 6}), ints({1, 1}, {-1}), ints({1, 3}, {7, 8, 9}), "none").to_int64(),
              (std::vector<int64_t>{1, 2, 3, 7, 8, 9}));
}

TEST(ScatterNdValues, DuplicateTuplesCombineInOrderForEveryReduction) {
    const HostTensor data = ints({4}, {1, 2, 3, 4});
    const HostTensor idx = ints({3, 1}, {1, 1, -1});
    const HostTensor upd = ints({3}, {10, 20, 7});
    for (const auto& [r, want] : std::vector<std::pair<std::string, std::vector<int64_t>>>{{"none", {1, 20, 3, 7}},
                                                                                           {"add", {1, 32, 3, 11}},
                                                                                           {"mul", {1, 400, 3, 28}},
                                                                                           {"max", {1, 20, 3, 7}},
                                                                                           {"min", {1, 2, 3, 4}}})
        EXPECT_EQ(run(data, idx, upd, r).to_int64(), want) << r;
}

TEST(ScatterNdValues, OutOfRangeIndexIsAnErrorNamingNodeAndIndex) {
    for (int64_t bad : {4, -5}) {
        const std::string msg = test::error_of([&] {
            run(ints({4}, {1, 2, 3, 4}), ints({2, 1}, {0, bad}), ints({2}, {9, 9}), "none");
        });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// Both OpenCL impls raise the host impls' error, naming the indices input,
// the value, its position and the data dim (past the end, negative beyond
// -dim, beyond 32 bits, in either place of a tuple), and the same instance
// then gives the reference's values for good tuples.
TEST(ScatterNdValues, DeviceRaisesTheHostErrorAndTheNextRunIsGood) {
    const HostTensor data = ints({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    const HostTensor upd = ints({3}, {10, 20, 30});
    std::vector<test::BadIndexRun> bad;
    for (int64_t v : std::vector<int64_t>{4, -5, int64_t(1) << 40})
        for (size_t at : {size_t(2), size_t(3)}) {
            std::vector<int64_t> idx = {0, 1, 1, 1, 2, 0};
            idx[at] = v;
            bad.push_back({{data, ints({3, 2}, idx), upd},
                           {"indices", "index " + std::to_string(v) + " (at position " + std::to_string(at),
                            "dim " + std::to_string(at % 2)}});
        }
    test::expect_device_index_errors(
        {"scatter_nd", reduce("add"), {data.layout(), i64({Dimension(), 2}), i64({Dimension()})}, {}}, bad,
        {data, ints({3, 2}, {3, 2, -1, -1, 0, -3}), upd});
}

// ---- 2. every impl against the reference ---------------------------------------

// updates = indices[:-1] + data[k:]; indices in [-m, m), m the smallest addressed dim.
test::Run make_run(DataType t, const Shape& data, const Shape& idx, uint64_t seed) {
    const auto k = static_cast<size_t>(idx[idx.rank() - 1]);
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < k; ++i) m = std::min(m, data[i]);
    Shape upd(std::vector<int64_t>(idx.begin(), idx.end() - 1));
    for (size_t d = k; d < data.rank(); ++d) upd.push_back(data[d]);
    const bool small = t == DataType::u8 || t == DataType::i8 || t == DataType::f16;
    const double lo = small ? -3 : -100, hi = small ? 3 : 100;
    return {test::random_tensor(t, data, seed, lo, hi),
            test::random_tensor(DataType::i64, idx, seed + 1, -static_cast<double>(m), static_cast<double>(m)),
            test::random_tensor(t, upd, seed + 2, lo, hi)};
}

TEST(ScatterNdImpls, EveryImplMatchesTheReferenceForEveryElementWidthAndReduction) {
    struct Case {
        DataType t;
        std::string r;
        std::vector<std::pair<Shape, Shape>> shapes;   // data, indices; the updates follow
    };
    for (const Case& c :
         std::vector<Case>{{DataType::f32,
                            "none",
                            {{{1, 1, 1}, {1, 1}}, {{3, 13, 2}, {5, 1}}, {{17, 4, 3}, {2, 1}}, {{2, 9, 3}, {0, 1}}}},
                           {DataType::f32, "add", {{{3, 4, 2}, {7, 2}}, {{13, 2, 5}, {20, 2}}}},
                           {DataType::f16, "mul", {{{3, 4, 2}, {5, 3}}, {{2, 2, 2}, {9, 3}}}},
                           {DataType::i64, "max", {{{5, 257}, {2, 3, 1}}, {{3, 2}, {4, 4, 1}}}},
                           {DataType::i32, "min", {{{6, 3}, {5, 2}}, {{2, 16}, {3, 2}}}},
                           {DataType::u8, "add", {{{4, 4}, {9, 1}}}},
                           {DataType::boolean, "none", {{{3, 4, 2}, {2, 2}}, {{5, 2, 2}, {3, 2}}}},
                           {DataType::f64, "add", {{{2, 3, 4}, {6, 1}}, {{2, 1, 13}, {3, 1}}}}}) {
        SCOPED_TRACE(std::string(to_string(c.t)) + " " + c.r);
        std::vector<test::Run> runs;
        for (const auto& [d, i] : c.shapes) runs.push_back(make_run(c.t, d, i, runs.size() * 3 + 5));
        const size_t r = c.shapes[0].first.rank(), q = c.shapes[0].second.rank(), u = runs[0][2].shape().rank();
        test::expect_impls_match_reference(
            {"scatter_nd",
             reduce(c.r),
             {Layout(PartialShape::dynamic_of_rank(r), c.t), i64(PartialShape::dynamic_of_rank(q)),
              Layout(PartialShape::dynamic_of_rank(u), c.t)},
             {}},
            runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ScatterNdDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes())
        runs.push_back(make_run(DataType::f32, Shape{n, 3}, Shape{n % 5 + 1, 1}, seed += 3));
    runs.push_back(make_run(DataType::f32, Shape{2, 3}, Shape{0, 1}, 9));
    runs.push_back(make_run(DataType::f32, Shape{1, 3}, Shape{1, 1}, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"scatter_nd",
             reduce("add"),
             {test::f32({Dimension(), 3}), i64({Dimension(), Dimension()}), test::f32({Dimension(), Dimension()})},
             {}},
            runs, o);
    }
}

}   // namespace
}   // namespace dynrt
