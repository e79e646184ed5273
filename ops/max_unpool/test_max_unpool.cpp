// max_unpool: shape-inference table (default extents, output_shape by value
// and unknown, errors), hand values from the ONNX examples on every engine,
// duplicate indices (the last one stays, on the device too), out-of-range
// indices, every impl against the reference, and one instance fed changing
// shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }
HostTensor ints(const Shape& s, const std::vector<int64_t>& v) { return HostTensor::from_int64(DataType::i64, s, v); }

Attributes window(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& pb = {}, const std::vector<int64_t>& pe = {}) {
    return test::attrs({{"kernel", kernel}, {"strides", strides}, {"pads_begin", pb}, {"pads_end", pe}});
}
const Attributes k2s2 = window({2, 2}, {2, 2});

// ---- 1. shape inference ----------------------------------------------------

TEST(MaxUnpoolShape, DefaultExtentsAndOutputShapeByValue) {
    const Dimension dyn;
    test::expect_shapes(
        "max_unpool",
        {
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2})}, k2s2, {test::f32({1, 1, 4, 4})}},
            {{test::f32({2, 3, 5}), i64({2, 3, 5})}, window({3}, {2}, {1}, {0}), {test::f32({2, 3, 10})}},
            {{test::f32({2, 3, 4, 4, 4}), i64({2, 3, 4, 4, 4})}, window({2, 1, 3}, {}), {test::f32({2, 3, 5, 4, 6})}},
            {{test::f32({dyn, 3, dyn, 2}), i64({dyn, 3, dyn, 2})}, k2s2, {test::f32({dyn, 3, dyn, 4})}},
            {{test::f32({1, 2, 0, 2}), i64({1, 2, 0, 2})}, k2s2, {test::f32({1, 2, 0, 4})}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2}), i64({4})},
             k2s2,
             {test::f32({1, 1, 5, 5})},
             {},
             {{2, ints(Shape{4}, {1, 1, 5, 5})}}},
            {{test::f32({2, 3, 5}), i64({2, 3, 5}), i64({3})},   // the pads are set aside: unpooled [2,3,11]
             window({3}, {2}, {1}, {0}),
             {test::f32({2, 3, 11})},
             {},
             {{2, ints(Shape{3}, {2, 3, 11})}}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2}), i64({4})}, k2s2, {test::f32({dyn, dyn, dyn, dyn})}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2}), i64({dyn})}, k2s2, {test::f32({dyn, dyn, dyn, dyn})}},
        });
}

TEST(MaxUnpoolShape, BadInputsAndAttributesAreErrorsNamingNodeAndField) {
    test::expect_shapes(
        "max_unpool",
        {
            {{test::f32({2, 2}), i64({2, 2})}, window({2}, {2}), {}, {"node 'node'", "input", "rank >= 3"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2})}, window({2}, {2, 2}), {}, {"kernel", "[2]", "per spatial"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2})}, window({2, 0}, {}), {}, {"kernel", ">= 1"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2})}, window({2, 2}, {1, 0}), {}, {"strides", ">= 1"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2})}, window({2, 2}, {}, {-1, 0}), {}, {"pads_begin", ">= 0"}},
            {{test::f32({1, 1, 1, 2}), i64({1, 1, 1, 2})},
             window({1, 1}, {}, {1, 0}, {1, 0}),
             {},
             {"pads_begin", "negative output extent -1"}},
            {{test::f32({1, 1, 2, 2}), test::f32({1, 1, 2, 2})}, k2s2, {}, {"indices", "i32 or i64"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 3})}, k2s2, {}, {"indices", "shape of input", "f32[1,1,2,2]"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2}), i64({3})}, k2s2, {}, {"output_shape", "4 values"}},
            {{test::f32({1, 1, 2, 2}), i64({1, 1, 2, 2}), i64({4})},
             k2s2,
             {},
             {"output_shape", "[1,1,-5,5]", "negative"},
             {{2, ints(Shape{4}, {1, 1, -5, 5})}}},
            {{test::f32({2, 3, 5}), i64({2, 3, 5}), i64({3})},
             window({3}, {2}, {1}, {0}),
             {},
             {"output_shape", "[2,3,10]", "below the unpooled shape [2,3,11]", "dim 2"},
             {{2, ints(Shape{3}, {2, 3, 10})}}},
        });
}

// ---- hand-computed values (the ONNX operator examples) ------------------------

std::vector<std::string> engines() {
    std::vector<std::string> e{"cpu"};
    if (test::ocl_engine()) e.emplace_back("ocl");
    return e;
}

HostTensor run(const std::vector<HostTensor>& in, const std::string& engine) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("max_unpool", layouts, k2s2), in, NetworkOptions{}, engine);
}

// Zeros of `n` elements with `at[k]` set to `v[k]`.
std::vector<float> placed(size_t n, const std::vector<size_t>& at, const std::vector<float>& v) {
    std::vector<float> out(n, 0.0f);
    for (size_t k = 0; k < at.size(); ++k) out[at[k]] = v[k];
    return out;
}

TEST(MaxUnpoolValues, OnnxExamplesWithAndWithoutOutputShapeOnEveryEngine) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 2, 2}, {5, 6, 7, 8});
    const HostTensor idx = ints(Shape{1, 1, 2, 2}, {5, 7, 13, 15});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        test::expect_bytes_equal(run({x, idx}, e),
                                 HostTensor::from_floats(Shape{1, 1, 4, 4}, placed(16, {5, 7, 13, 15}, {5, 6, 7, 8})));
        // The indices name elements of the unpooled [1,1,4,4], which sits at the start of the 5x5 output.
        test::expect_bytes_equal(run({x, idx, ints(Shape{4}, {1, 1, 5, 5})}, e),
                                 HostTensor::from_floats(Shape{1, 1, 5, 5}, placed(25, {6, 8, 16, 18}, {5, 6, 7, 8})));
    }
}

TEST(MaxUnpoolValues, OfElementsSentToOnePlaceTheLastStaysOnEveryEngine) {
    // 64 elements onto 3 places: on the device many work-items race for each.
    const Shape s{1, 1, 8, 8};
    std::vector<int64_t> at(64);
    std::vector<float> v(64);
    for (size_t j = 0; j < 64; ++j) at[j] = static_cast<int64_t>((j * 7) % 3), v[j] = static_cast<float>(j + 1);
    // j * 7 % 3 == j % 3: the last j sent to place r is 63 (r 0), 61 (r 1), 62 (r 2), holding j + 1.
    const std::vector<float> want = placed(256, {0, 1, 2}, {64, 62, 63});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        test::expect_bytes_equal(run({HostTensor::from_floats(s, v), ints(s, at)}, e),
                                 HostTensor::from_floats(Shape{1, 1, 16, 16}, want));
    }
}

TEST(MaxUnpoolValues, IndexOutOfRangeIsAnErrorNamingTheInputOnTheHost) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 1, 2}, {1, 2});
    for (int64_t bad : {8, -1}) {
        const HostTensor idx = ints(Shape{1, 1, 1, 2}, {bad, 3});
        const std::string msg = test::error_of([&] { run({x, idx}, "cpu"); });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad) + " (at position 0"), std::string::npos) << msg;
    }
}

// Both OpenCL impls raise the host impls' error (past the end, negative,
// beyond 32 bits; with and without output_shape, which leaves the unpooled
// shape the bound), and the same instance then gives the host's values.
TEST(MaxUnpoolValues, IndexOutOfRangeRaisesTheHostErrorOnTheDevice) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
    for (bool given : {false, true}) {
        SCOPED_TRACE(given ? "output_shape given" : "no output_shape");
        std::vector<test::BadIndexRun> bad;
        for (int64_t v : std::vector<int64_t>{16, -1, int64_t(1) << 40}) {
            test::Run r{x, ints(Shape{1, 1, 2, 2}, {0, 5, 9, v})};
            if (given) r.push_back(ints(Shape{4}, {1, 1, 5, 6}));
            bad.push_back({r, {"indices", "index " + std::to_string(v) + " (at position 3", "[1,1,4,4]"}});
        }
        test::Run good{x, ints(Shape{1, 1, 2, 2}, {15, 0, 9, 9})};
        test::OpSetup s{"max_unpool", k2s2, {test::f32({1, 1, Dimension(), 2}), i64({1, 1, Dimension(), 2})}, {}};
        if (given) {
            s.inputs.push_back(i64({4}));
            good.push_back(ints(Shape{4}, {1, 1, 5, 6}));
        }
        test::expect_device_index_errors(s, bad, good);
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// Indices drawn in [0, places) (places <= the output's element count).
test::Run make_run(DataType t, const Shape& x, int64_t places, uint64_t seed) {
    return {test::random_tensor(t, x, seed, -100, 100),
            test::random_tensor(DataType::i64, x, seed + 1, 0, static_cast<double>(places))};
}

TEST(MaxUnpoolImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    const Attributes w = window({3}, {2}, {1}, {0});   // out extent 2 * in
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64, DataType::boolean}) {
        SCOPED_TRACE(to_string(t));
        std::vector<test::Run> runs;
        uint64_t seed = 10;
        for (const auto& [s, places] : std::vector<std::pair<Shape, int64_t>>{
                 {{1, 1, 1}, 2}, {{3, 2, 13}, 156}, {{2, 3, 257}, 7}, {{0, 2, 3}, 1}, {{2, 1, 16}, 64}})
            runs.push_back(make_run(t, s, places, seed++));
        test::expect_impls_match_reference(
            {"max_unpool", w, {Layout(PartialShape::dynamic_of_rank(3), t), i64(PartialShape::dynamic_of_rank(3))}, {}},
            runs);
    }
}

TEST(MaxUnpoolImpls, OutputShapeAsAConstantOnEveryImpl) {
    test::expect_impls_match_reference(
        {"max_unpool",
         k2s2,
         {test::f32(PartialShape::dynamic_of_rank(4)), i64(PartialShape::dynamic_of_rank(4)), i64({4})},
         {{2, ints(Shape{4}, {2, 3, 5, 7})}}},
        {make_run(DataType::f32, Shape{2, 3, 2, 3}, 144, 1), make_run(DataType::f32, Shape{1, 3, 1, 1}, 5, 2)});
}

TEST(MaxUnpoolImpls, RankNineRunsOnTheHostOnly) {
    const Attributes w = window({1, 1, 1, 1, 1, 1, 1}, {});
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"max_unpool", w, {test::f32(PartialShape::dynamic_of_rank(9)), i64(PartialShape::dynamic_of_rank(9))}, {}},
        {make_run(DataType::f32, Shape{2, 1, 1, 3, 1, 2, 1, 1, 2}, 24, 4)}, {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(MaxUnpoolDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes()) runs.push_back(make_run(DataType::f32, Shape{n, 2, 3, 2}, n * 8, seed));
    runs.push_back(make_run(DataType::f32, Shape{0, 2, 3, 2}, 1, 9));
    runs.push_back(make_run(DataType::f32, Shape{1, 2, 1, 2}, 16, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"max_unpool",
                               k2s2,
                               {test::f32({Dimension(), 2, Dimension(), 2}), i64({Dimension(), 2, Dimension(), 2})},
                               {}},
                              runs, o);
    }
}

}   // namespace
}   // namespace dynrt
