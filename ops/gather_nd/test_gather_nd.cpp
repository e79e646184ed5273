// gather_nd: shape-inference table (tuple lengths, batch dims, dynamic dims,
// errors), hand-computed values (the ONNX examples, negative and
// out-of-range indices on the host and on the device), every impl against
// the reference for every element width, and one instance fed changing
// shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes batch(int64_t b, int64_t tuple_length = 0) {
    return test::attrs({{"batch_dims", b}, {"tuple_length", tuple_length}});
}
Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

// ---- 1. shape inference ----------------------------------------------------

TEST(GatherNdShape, IndicesLeadingDimsThenTheDataDimsAfterTheTuple) {
    const Dimension dyn;
    test::expect_shapes(
        "gather_nd", {
                         {{test::f32({2, 2}), i64({2, 2})}, batch(0), {test::f32({2})}},
                         {{test::f32({2, 2}), i64({2, 1})}, batch(0), {test::f32({2, 2})}},
                         {{test::f32({4, 5, 6}), i64({3, 7, 1})}, batch(0), {test::f32({3, 7, 5, 6})}},
                         {{test::f32({2, 2, 2}), i64({2, 1})}, batch(1), {test::f32({2, 2})}},
                         {{Layout({2, 3, 4, 5}, DataType::u8), Layout({2, 3, 6, 2}, DataType::i32)},
                          batch(2),
                          {Layout({2, 3, 6}, DataType::u8)}},
                         {{test::f32({3}), i64({1})}, batch(0), {test::f32({})}},
                         {{test::f32({dyn, 4, dyn}), i64({5, dyn, 2})}, batch(0), {test::f32({5, dyn, dyn})}},
                         {{test::f32({3, dyn, 4}), i64({dyn, 0, 1})}, batch(1), {test::f32({3, 0, 4})}},
                         // A dynamic tuple length fixed by the attribute.
                         {{test::f32({dyn, 4, 5}), i64({dyn, dyn})}, batch(0, 2), {test::f32({dyn, 5})}},
                         {{test::f32({dyn, 4, 5}), i64({dyn, Dimension(1, 3)})}, batch(0, 1), {test::f32({dyn, 4, 5})}},
                     });
}

TEST(GatherNdShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "gather_nd",
        {
            {{test::f32({2, 2}), test::f32({2, 2})}, batch(0), {}, {"node 'node'", "indices", "i32 or i64"}},
            {{test::f32({2, 2}), i64({2, 3})}, batch(0), {}, {"node 'node'", "tuple length 3", "[2,2]", "i64[2,3]"}},
            {{test::f32({2, 2}), i64({2, 2})}, batch(1), {}, {"node 'node'", "tuple length 2"}},
            {{test::f32({2, 2}), i64({2, 1})}, batch(2), {}, {"node 'node'", "batch_dims", "batch_dims 2"}},
            {{test::f32({2, 2}), i64({3, 1})}, batch(1), {}, {"node 'node'", "batch_dims", "batch dim 0"}},
            {{test::f32({2, 2}), i64({2, Dimension()})}, batch(0), {}, {"node 'node'", "tuple_length", "dynamic"}},
            {{test::f32({2, 2}), i64({2, 1})}, batch(0, 2), {}, {"node 'node'", "tuple_length 2", "i64[2,1]"}},
            {{test::f32({2, 2}), i64({2, Dimension()})}, batch(0, 3), {}, {"node 'node'", "tuple length 3"}},
            {{test::f32({}), i64({1})}, batch(0), {}, {"node 'node'", "rank"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& data, const HostTensor& idx, int64_t b, const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("gather_nd", {data.layout(), idx.layout()}, batch(b)), {data, idx},
                          NetworkOptions{}, engine);
}

const HostTensor k2x2 = HostTensor::from_int64(DataType::i32, Shape{2, 2}, {0, 1, 2, 3});
HostTensor ints(const Shape& s, std::vector<int64_t> v) { return HostTensor::from_int64(DataType::i64, s, v); }

TEST(GatherNdValues, FullTuplesPickElementsAndShortOnesPickRows) {
    EXPECT_EQ(run(k2x2, ints({2, 2}, {0, 0, 1, 1}), 0).to_int64(), (std::vector<int64_t>{0, 3}));
    const HostTensor rows = run(k2x2, ints({2, 1}, {1, 0}), 0);
    EXPECT_EQ(rows.shape(), (Shape{2, 2}));
    EXPECT_EQ(rows.to_int64(), (std::vector<int64_t>{2, 3, 0, 1}));
    EXPECT_EQ(run(k2x2, ints({1, 2}, {-1, -2}), 0).to_int64(), (std::vector<int64_t>{2}));
}

TEST(GatherNdValues, BatchDimsIndexWithinEachBatch) {
    const HostTensor data = HostTensor::from_int64(DataType::i32, Shape{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    const HostTensor out = run(data, ints({2, 1}, {1, 0}), 1);
    EXPECT_EQ(out.shape(), (Shape{2, 2}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{2, 3, 4, 5}));
}

TEST(GatherNdValues, OutOfRangeIndexIsAnErrorNamingNodeAndIndex) {
    for (int64_t bad : {2, -3}) {
        const std::string msg = test::error_of([&] { run(k2x2, ints({2, 2}, {0, 0, 1, bad}), 0); });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// Both OpenCL impls raise the host impls' error, naming the indices input,
// the value, its position and the data dim (past the end, negative beyond
// -dim, beyond 32 bits, in either place of a tuple), and the same instance
// then gives the reference's values for good tuples.
TEST(GatherNdValues, DeviceRaisesTheHostErrorAndTheNextRunIsGood) {
    std::vector<test::BadIndexRun> bad;
    for (int64_t v : std::vector<int64_t>{2, -3, int64_t(1) << 40})
        for (size_t at : {size_t(2), size_t(3)}) {
            std::vector<int64_t> idx = {0, 1, 1, 1, 0, 0};
            idx[at] = v;
            bad.push_back({{k2x2, ints({3, 2}, idx)},
                           {"indices", "index " + std::to_string(v) + " (at position " + std::to_string(at),
                            "dim " + std::to_string(at % 2)}});
        }
    test::expect_device_index_errors({"gather_nd", batch(0), {k2x2.layout(), i64({Dimension(), 2})}, {}}, bad,
                                     {k2x2, ints({3, 2}, {1, 0, -1, -1, 0, -2})});
}

// ---- 2. every impl against the reference ---------------------------------------

// Indices in [-m, m), m the smallest dim the tuples address.
test::Run make_run(DataType t, const Shape& data, const Shape& idx, size_t b, uint64_t seed) {
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < static_cast<size_t>(idx[idx.rank() - 1]); ++i) m = std::min(m, data[b + i]);
    const auto lim = static_cast<double>(m);
    return {test::random_tensor(t, data, seed, -100, 100),
            test::random_tensor(DataType::i64, idx, seed + 1, -lim, lim)};
}

TEST(GatherNdImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    struct Case {
        DataType t;
        int64_t b;
        std::vector<std::pair<Shape, Shape>> shapes;
    };
    for (const Case& c :
         std::vector<Case>{{DataType::f32,
                            0,
                            {{{1, 1, 1}, {1, 1}}, {{3, 13, 2}, {5, 1}}, {{17, 4, 3}, {2, 1}}, {{2, 257, 1}, {0, 1}}}},
                           {DataType::f16, 0, {{{3, 4, 2}, {7, 2}}, {{13, 2, 5}, {2, 2}}}},
                           {DataType::i64, 1, {{{2, 3, 4}, {2, 5, 1}}, {{3, 17, 2}, {3, 2, 1}}}},
                           {DataType::boolean, 0, {{{3, 4, 2}, {2, 3, 3}}, {{5, 2, 2}, {1, 1, 3}}}},
                           {DataType::f64, 2, {{{2, 3, 4}, {2, 3, 2, 1}}, {{2, 1, 13}, {2, 1, 5, 1}}}}}) {
        SCOPED_TRACE(std::string(to_string(c.t)) + " batch_dims " + std::to_string(c.b));
        std::vector<test::Run> runs;
        for (const auto& [d, i] : c.shapes)
            runs.push_back(make_run(c.t, d, i, static_cast<size_t>(c.b), runs.size() + 3));
        // Every dim of indices dynamic, the tuple length from the attribute.
        const Shape& first = c.shapes[0].second;
        test::expect_impls_match_reference(
            {"gather_nd",
             batch(c.b, first[first.rank() - 1]),
             {Layout(PartialShape::dynamic_of_rank(3), c.t), i64(PartialShape::dynamic_of_rank(first.rank()))},
             {}},
            runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(GatherNdDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes())
        runs.push_back(make_run(DataType::f32, Shape{n, 3}, Shape{n % 5 + 1, 1}, 0, seed++));
    runs.push_back({test::random_tensor(DataType::f32, Shape{2, 3}, 9), HostTensor(DataType::i64, Shape{0, 1})});
    runs.push_back(make_run(DataType::f32, Shape{1, 3}, Shape{1, 1}, 0, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"gather_nd", batch(0, 1), {test::f32({Dimension(), 3}), i64({Dimension(), Dimension()})}, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
