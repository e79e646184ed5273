// stft: shape-inference table (frames and bins from frame_step, the window
// and frame_length, dynamic while unknown; bad inputs naming node and field),
// hand-computed frames, every impl against the reference with and without a
// window and frame_length over frame lengths that take each FFT path, and
// one instance fed changing signal lengths.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor scalar(int64_t n) { return HostTensor::from_int64(DataType::i64, Shape{}, {n}); }
const Layout kInt(PartialShape{}, DataType::i64);

Attributes stft_attrs(bool onesided, bool window, bool frame_length) {
    return test::attrs({{"onesided", onesided}, {"with_window", window}, {"with_frame_length", frame_length}});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(StftShape, FramesAndBinsFollowStepWindowAndFrameLength) {
    const Layout x = test::f32({2, 128, 1}), w = test::f32({16});
    const Layout dyn = test::f32({1, Dimension(), 2});
    test::expect_shapes(
        "stft",
        {
            {{x, kInt, kInt},
             stft_attrs(true, false, true),
             {test::f32({2, 15, 9, 2})},
             {},
             {{1, scalar(8)}, {2, scalar(16)}}},
            {{x, kInt, w}, stft_attrs(true, true, false), {test::f32({2, 15, 9, 2})}, {}, {{1, scalar(8)}}},
            {{x, kInt, w, kInt},
             stft_attrs(false, true, true),
             {test::f32({2, 8, 16, 2})},
             {},
             {{1, scalar(16)}, {3, scalar(16)}}},
            {{x, kInt, kInt},
             stft_attrs(true, false, true),
             {test::f32({2, 1, 64, 2})},
             {},
             {{1, scalar(5)}, {2, scalar(127)}}},
            {{x, kInt}, stft_attrs(false, false, false), {test::f32({2, 1, 128, 2})}, {}, {{1, scalar(3)}}},
            {{x, kInt, w}, stft_attrs(true, true, false), {test::f32({2, Dimension(), 9, 2})}},   // step unknown
            {{x, kInt, kInt}, stft_attrs(true, false, true), {test::f32({2, Dimension(), Dimension(), 2})}},
            {{dyn, kInt, w}, stft_attrs(true, true, false), {test::f32({1, Dimension(), 9, 2})}, {}, {{1, scalar(4)}}},
        });
}

TEST(StftShape, BadInputsAreErrorsNamingNodeAndField) {
    const Layout x = test::f32({1, 32, 1});
    test::expect_shapes(
        "stft",
        {
            {{x, kInt, kInt},
             stft_attrs(true, false, true),
             {},
             {"node 'node'", "frame_length", "40", "larger than the signal", "32"},
             {{1, scalar(4)}, {2, scalar(40)}}},
            {{x, kInt, test::f32({33})},
             stft_attrs(true, true, false),
             {},
             {"frame_length", "33", "larger"},
             {{1, scalar(4)}}},
            {{x, kInt, kInt},
             stft_attrs(true, false, true),
             {},
             {"node 'node'", "frame_step", "is 0"},
             {{1, scalar(0)}, {2, scalar(8)}}},
            {{x, kInt, kInt},
             stft_attrs(true, false, true),
             {},
             {"frame_length", "is -2"},
             {{1, scalar(2)}, {2, scalar(-2)}}},
            {{x, kInt, test::f32({8}), kInt},
             stft_attrs(true, true, true),
             {},
             {"node 'node'", "window", "frame_length 16"},
             {{1, scalar(2)}, {3, scalar(16)}}},
            {{x, kInt, Layout({8}, DataType::f16)}, stft_attrs(true, true, false), {}, {"window", "signal's type"}},
            {{test::f32({32, 1}), kInt}, stft_attrs(true, false, false), {}, {"signal", "[batch, length, 1 or 2]"}},
            {{test::f32({1, 32, 3}), kInt}, stft_attrs(true, false, false), {}, {"signal", "1 (real) or 2"}},
            {{x, test::f32({})}, stft_attrs(true, false, false), {}, {"frame_step", "integer scalar"}},
            {{x, kInt}, stft_attrs(true, true, false), {}, {"inputs", "takes 3 inputs"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

TEST(StftValues, FramesOfAConstantAndAnImpulseOnEveryEngine) {
    // Signal 1, 1, 1, 1, 0, 0 (real), frames of 4 every 2: frame 0 sums to 4
    // at bin 0 and nothing else; frame 1 is 1, 1, 0, 0: bins 2, 1 - i, 0.
    const HostTensor x = HostTensor::from_floats(Shape{1, 6, 1}, {1, 1, 1, 1, 0, 0});
    const Layout xl = x.layout();
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        const HostTensor y =
            test::run_once(test::single_node_program("stft", {xl, kInt, kInt}, stft_attrs(true, false, true)),
                           {x, scalar(2), scalar(4)}, {}, engine);
        ASSERT_EQ(y.shape(), (Shape{1, 2, 3, 2}));
        const std::vector<double> want = {4, 0, 0, 0, 0, 0, 2, 0, 1, -1, 0, 0};
        for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(y.get_as_double(j), want[j], 1e-6) << j;
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(StftImpls, EveryImplMatchesTheReferenceWithAndWithoutWindow) {
    const test::Tolerance tol{1e-4, 1e-4};
    // frame_length 12 (mixed radix) and 37 (Bluestein), given as an input.
    for (int64_t len : {12, 37}) {
        SCOPED_TRACE(len);
        std::vector<test::Run> runs;
        for (int64_t n : {len, int64_t{100}})
            runs.push_back({test::random_tensor(DataType::f32, Shape{2, n, 1}, static_cast<uint64_t>(n)), scalar(5)});
        test::expect_impls_match_reference(
            {"stft", stft_attrs(true, false, true), {test::f32({2, Dimension(), 1}), kInt, kInt}, {{2, scalar(len)}}},
            runs, tol);
    }
    // A window (constant) and a complex signal, two-sided.
    const HostTensor window = test::random_tensor(DataType::f32, Shape{20}, 7, 0.0, 1.0);
    std::vector<test::Run> runs;
    for (int64_t n : {20, 63}) runs.push_back({test::random_tensor(DataType::f32, Shape{1, n, 2}, 3), scalar(3)});
    test::expect_impls_match_reference({"stft",
                                        stft_attrs(false, true, false),
                                        {test::f32({1, Dimension(), 2}), kInt, test::f32({20})},
                                        {{2, window}}},
                                       runs, tol);
    // f16: the references and the OpenCL impls (the FFT takes f32 only).
    test::expect_impls_match_reference({"stft",
                                        stft_attrs(true, false, true),
                                        {Layout({1, Dimension(), 1}, DataType::f16), kInt, kInt},
                                        {{2, scalar(8)}}},
                                       {{test::random_tensor(DataType::f16, Shape{1, 30, 1}, 5), scalar(4)}}, {},
                                       test::kOptimisedCpuImpls);
}

// ---- 3. one instance, changing lengths --------------------------------------------

TEST(StftDynamic, OneInstanceFollowsChangingSignalLengthsOnEveryEngine) {
    std::vector<test::Run> runs;
    for (int64_t n : test::tail_sizes())
        if (n >= 13) runs.push_back({test::random_tensor(DataType::f32, Shape{1, n, 1}, static_cast<uint64_t>(n))});
    const HostTensor window = test::random_tensor(DataType::f32, Shape{13}, 9, 0.0, 1.0);
    for (test::SequenceOptions o : test::every_engine_and_mode(test::Tolerance{1e-4, 1e-4})) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"stft",
                               stft_attrs(true, true, false),
                               {test::f32({1, Dimension(), 1}), kInt, test::f32({13})},
                               {{1, scalar(4)}, {2, window}}},
                              runs, o);
    }
}

}   // namespace
}   // namespace dynrt
