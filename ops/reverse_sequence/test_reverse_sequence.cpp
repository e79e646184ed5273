// reverse_sequence: shape-inference table (dynamic dims, errors), hand values
// from the ONNX examples on both axis orders, out-of-range lengths on the host
// and on the device, every impl against the reference for every element
// width, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes axes(int64_t batch, int64_t time) { return test::attrs({{"batch_axis", batch}, {"time_axis", time}}); }
Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ReverseSequenceShape, OutputIsTheInput) {
    const Dimension dyn;
    test::expect_shapes(
        "reverse_sequence",
        {
            {{test::f32({4, 3}), i64({3})}, axes(1, 0), {test::f32({4, 3})}},
            {{test::f32({4, 3, 2}), i64({4})}, axes(0, 1), {test::f32({4, 3, 2})}},
            {{Layout({dyn, 0}, DataType::u8), i64({dyn})}, axes(0, 1), {Layout({dyn, 0}, DataType::u8)}},
            {{test::f32({dyn, dyn}), Layout({5}, DataType::i32)}, axes(1, 0), {test::f32({dyn, dyn})}},
        });
}

TEST(ReverseSequenceShape, BadInputsAndAxesAreErrorsNamingNodeAndField) {
    test::expect_shapes(
        "reverse_sequence",
        {
            {{test::f32({4, 3}), i64({3})}, axes(0, 0), {}, {"node 'node'", "time_axis", "differ"}},
            {{test::f32({4, 3}), i64({3})}, axes(2, 0), {}, {"node 'node'", "batch_axis", "0 or 1"}},
            {{test::f32({4, 3}), i64({3})}, axes(1, -1), {}, {"time_axis", "0 or 1"}},
            {{test::f32({4}), i64({4})}, axes(1, 0), {}, {"node 'node'", "rank >= 2", "f32[4]"}},
            {{test::f32({4, 3}), test::f32({3})}, axes(1, 0), {}, {"sequence_lens", "i32 or i64", "f32[3]"}},
            {{test::f32({4, 3}), i64({3, 1})}, axes(1, 0), {}, {"sequence_lens", "1-D"}},
            {{test::f32({4, 3}), i64({4})}, axes(1, 0), {}, {"sequence_lens", "batch", "i64[4]", "f32[4,3]"}},
        });
}

// ---- hand-computed values (the ONNX operator examples) ------------------------

HostTensor run(const HostTensor& x, const HostTensor& lens, const Attributes& a, const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("reverse_sequence", {x.layout(), lens.layout()}, a), {x, lens},
                          NetworkOptions{}, engine);
}

std::vector<std::string> engines() {
    std::vector<std::string> e{"cpu"};
    if (test::ocl_engine()) e.emplace_back("ocl");
    return e;
}

TEST(ReverseSequenceValues, TimeMajorAndBatchMajorExamplesOnEveryEngine) {
    const HostTensor x = HostTensor::from_floats(Shape{4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
    const HostTensor lens = HostTensor::from_int64(DataType::i64, Shape{4}, {4, 3, 2, 1});
    const HostTensor xb = HostTensor::from_floats(Shape{4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    const HostTensor lb = HostTensor::from_int64(DataType::i64, Shape{4}, {1, 2, 3, 4});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        test::expect_bytes_equal(
            run(x, lens, axes(1, 0), e),
            HostTensor::from_floats(Shape{4, 4}, {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15}));
        test::expect_bytes_equal(
            run(xb, lb, axes(0, 1), e),
            HostTensor::from_floats(Shape{4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
    }
}

TEST(ReverseSequenceValues, LengthOutOfRangeIsAnErrorNamingTheInput) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    for (int64_t bad : {4, -1}) {
        const HostTensor lens = HostTensor::from_int64(DataType::i64, Shape{2}, {1, bad});
        const std::string msg = test::error_of([&] { run(x, lens, axes(0, 1)); });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("sequence_lens[1] is " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// Both OpenCL impls (dynamic, then static only) raise the host impls' error
// for a length out of range (above the steps, negative, beyond 32 bits), on
// either axis order, naming the node, the input and the batch entry; the same
// instance then gives the host's values for good lengths (no stale report).
TEST(ReverseSequenceValues, LengthOutOfRangeRaisesTheHostErrorOnTheDevice) {
    const EnginePtr ocl = test::ocl_engine();
    if (!ocl) GTEST_SKIP() << "no ocl engine";
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor good = HostTensor::from_int64(DataType::i64, Shape{2}, {2, 3});
    const auto program =
        test::single_node_program("reverse_sequence", {test::f32({2, Dimension()}), i64({Dimension()})}, axes(0, 1));
    const HostTensor want = run(x, good, axes(0, 1));
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic" : "static");
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile = false;
        InferRequest req(Network::create(program, ocl, opts));
        const auto infer = [&](const HostTensor& lens) {
            req.set_input("in0", x);
            req.set_input("in1", lens);
            req.infer();
            return req.output(0);
        };
        for (int64_t bad : std::vector<int64_t>{4, -1, int64_t(1) << 40}) {
            const HostTensor lens = HostTensor::from_int64(DataType::i64, Shape{2}, {1, bad});
            const std::string host = test::error_of([&] { run(x, lens, axes(0, 1)); });
            const std::string msg = test::error_of([&] { infer(lens); });
            ASSERT_NE(host.find("sequence_lens[1] is " + std::to_string(bad)), std::string::npos) << host;
            EXPECT_NE(msg.find(host.substr(host.find("sequence_lens["))), std::string::npos) << msg << " vs " << host;
            EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
            EXPECT_NE(msg.find("field 'sequence_lens'"), std::string::npos) << msg;
            test::expect_bytes_equal(infer(good), want);
        }
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// Lengths in [0, steps] for input `x` with the time axis `time`.
test::Run make_run(DataType t, const Shape& x, size_t batch, size_t time, uint64_t seed) {
    return {test::random_tensor(t, x, seed, -100, 100),
            test::random_tensor(DataType::i64, Shape{x[batch]}, seed + 1, 0, static_cast<double>(x[time] + 1))};
}

TEST(ReverseSequenceImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    for (const auto& [t, batch] : std::vector<std::pair<DataType, size_t>>{
             {DataType::f32, 0}, {DataType::f32, 1}, {DataType::f16, 1}, {DataType::i64, 0}, {DataType::boolean, 1}}) {
        SCOPED_TRACE(std::string(to_string(t)) + " batch_axis " + std::to_string(batch));
        const size_t time = 1 - batch;
        std::vector<test::Run> runs;
        uint64_t seed = 10;
        for (const Shape& s : {Shape{1, 1, 1}, Shape{3, 13, 2}, Shape{257, 3, 1}, Shape{0, 4, 2}, Shape{4, 0, 2}})
            runs.push_back(make_run(t, s, batch, time, seed++));
        test::expect_impls_match_reference({"reverse_sequence",
                                            axes(static_cast<int64_t>(batch), static_cast<int64_t>(time)),
                                            {Layout(PartialShape::dynamic_of_rank(3), t), i64({Dimension()})},
                                            {}},
                                           runs);
    }
}

TEST(ReverseSequenceImpls, RankEightOnEveryImplAndRankNineOnTheHostOnly) {
    const Shape s8{3, 5, 1, 2, 1, 1, 3, 2};
    test::expect_impls_match_reference(
        {"reverse_sequence", axes(0, 1), {Layout(PartialShape::dynamic_of_rank(8), DataType::f32), i64({3})}, {}},
        {make_run(DataType::f32, s8, 0, 1, 3)});
    const Shape s9{3, 5, 1, 2, 1, 1, 3, 2, 1};
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"reverse_sequence", axes(0, 1), {Layout(PartialShape::dynamic_of_rank(9), DataType::f32), i64({3})}, {}},
        {make_run(DataType::f32, s9, 0, 1, 4)}, {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ReverseSequenceDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    uint64_t seed = 50;
    for (int64_t n : test::tail_sizes()) runs.push_back(make_run(DataType::f32, Shape{n, n % 7 + 1, 3}, 1, 0, seed));
    runs.push_back(make_run(DataType::f32, Shape{0, 2, 3}, 1, 0, 9));
    runs.push_back(make_run(DataType::f32, Shape{1, 1, 3}, 1, 0, 11));
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"reverse_sequence", axes(1, 0), {test::f32({Dimension(), Dimension(), 3}), i64({Dimension()})}, {}}, runs,
            o);
    }
}

}   // namespace
}   // namespace dynrt
