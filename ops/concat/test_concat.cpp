// concat: shape-inference table, reference vs hand-computed and naive values,
// and one network instance fed a sequence of changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::error_of;

using test::registry;

const test::ShapesOf infer{"concat"};

using test::axis_attr;

using test::f32;

using test::expect_bytes_equal;

// Independent of the kernel: for every output element, find the input that
// owns its coordinate along the axis and read that input's element.
HostTensor naive_concat(const std::vector<HostTensor>& ins, int64_t axis) {
    const size_t r = ins[0].shape().rank();
    const auto ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(r) : axis);
    Shape os = ins[0].shape();
    os[ax] = 0;
    for (const HostTensor& t : ins) os[ax] += t.shape()[ax];
    HostTensor out(ins[0].dtype(), os);
    const size_t esize = byte_size(out.dtype());
    for (size_t flat = 0; flat < out.count(); ++flat) {
        std::vector<int64_t> c(r);
        size_t rem = flat;
        for (size_t k = r; k-- > 0;) {
            c[k] = static_cast<int64_t>(rem % static_cast<size_t>(os[k]));
            rem /= static_cast<size_t>(os[k]);
        }
        size_t which = 0;
        while (c[ax] >= ins[which].shape()[ax]) c[ax] -= ins[which++].shape()[ax];
        const Shape& is = ins[which].shape();
        size_t iflat = 0;
        for (size_t k = 0; k < r; ++k) iflat = iflat * static_cast<size_t>(is[k]) + static_cast<size_t>(c[k]);
        std::memcpy(static_cast<uint8_t*>(out.data()) + flat * esize,
                    static_cast<const uint8_t*>(ins[which].data()) + iflat * esize, esize);
    }
    return out;
}

// ---- 1. shape inference ----------------------------------------------------

TEST(ConcatShapeInfer, StaticAxisDimIsTheSum) {
    EXPECT_EQ(infer({f32({2, 3}), f32({4, 3})}, 0)[0].shape, PartialShape({6, 3}));
    EXPECT_EQ(infer({f32({2, 3}), f32({2, 1}), f32({2, 5})}, -1)[0].shape, PartialShape({2, 9}));
    EXPECT_EQ(infer({f32({2, 3})}, 1)[0].shape, PartialShape({2, 3}));
}

TEST(ConcatShapeInfer, DynamicDimMergesWithStatic) {
    EXPECT_EQ(infer({f32({2, Dimension()}), f32({2, 5})}, 0)[0].shape, PartialShape({4, 5}));
    EXPECT_EQ(infer({f32({Dimension(), 5}), f32({Dimension(), 5})}, 1)[0].shape, PartialShape({Dimension(), 10}));
    // Bounds intersect.
    EXPECT_EQ(infer({f32({Dimension(1, 4), 3}), f32({Dimension(2, 6), 3})}, 1)[0].shape,
              PartialShape({Dimension(2, 4), 6}));
    EXPECT_EQ(infer({f32({Dimension(1, 4), 3}), f32({Dimension(4, 6), 3})}, 1)[0].shape, PartialShape({4, 6}));
}

TEST(ConcatShapeInfer, DynamicAxisDimStaysDynamicWithSummedBounds) {
    const auto out = infer({f32({Dimension(), 3}), f32({2, 3})}, 0)[0].shape;
    EXPECT_TRUE(out[0].is_dynamic());
    EXPECT_EQ(out[0], Dimension(2, Dimension::kUnbounded));
    EXPECT_EQ(out[1], Dimension(3));
    EXPECT_EQ(infer({f32({Dimension(1, 4), 3}), f32({Dimension(0, 2), 3})}, 0)[0].shape,
              PartialShape({Dimension(1, 6), 3}));
}

TEST(ConcatShapeInfer, MismatchedOtherDimIsRejected) {
    const std::string msg = error_of([] { infer({f32({2, 3}), f32({2, 4})}, 0); });
    EXPECT_NE(msg.find("input 1 has shape [2,4]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dim 1"), std::string::npos) << msg;
    // Disjoint bounds cannot be the same value either.
    error_of([] { infer({f32({Dimension(1, 2), 3}), f32({Dimension(3, 5), 3})}, 1); });
}

// Axis dims whose sum would wrap int64 (here to 5) are an error naming the
// inputs and the values, never a wrapped dim.
TEST(ConcatShapeInfer, AxisSumPastInt64_IsAnErrorNotAWrappedDim) {
    const int64_t big = int64_t{1} << 62;
    std::string msg = error_of([&] { infer({f32({big, 2}), f32({big, 2}), f32({big, 2}), f32({big + 5, 2})}, 0); });
    EXPECT_NE(msg.find("the axis 0 dim of inputs 0..1 (input 1 has shape [4611686018427387904,2]) overflows: "
                       "4611686018427387904 + 4611686018427387904"),
              std::string::npos)
        << msg;
    // The upper bounds of dynamic axis dims too.
    msg = error_of([&] { infer({f32({2, Dimension(1, big + (big - 1))}), f32({2, Dimension(1, big)})}, 1); });
    EXPECT_NE(msg.find("overflows: 9223372036854775807 + 4611686018427387904"), std::string::npos) << msg;
}

TEST(ConcatShapeInfer, RankAndTypeMismatchAreRejected) {
    std::string msg = error_of([] { infer({f32({2, 3}), f32({2, 3, 1})}, 0); });
    EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
    msg = error_of([] { infer({f32({2, 3}), Layout({2, 3}, DataType::i32)}, 0); });
    EXPECT_NE(msg.find("i32"), std::string::npos) << msg;
    msg = error_of([] { infer({f32({2, 3}), f32({2, 3})}, 2); });
    EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
    msg = error_of([] { infer({f32(PartialShape{}), f32(PartialShape{})}, 0); });
    EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
}

// ---- 2. reference values -----------------------------------------------------

TEST(ConcatReference, InnerAxisInterleavesRows) {
    const auto prog = test::single_node_program("concat", {f32({2, 2}), f32({2, 1})}, axis_attr(1));
    const HostTensor out = test::run_once(
        prog, {HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 4}), HostTensor::from_floats(Shape{2, 1}, {5, 6})});
    expect_bytes_equal(out, HostTensor::from_floats(Shape{2, 3}, {1, 2, 5, 3, 4, 6}));
}

TEST(ConcatReference, OuterAxisAppendsThreeInputs) {
    const auto prog = test::single_node_program("concat", {f32({2, 2}), f32({1, 2}), f32({0, 2})}, axis_attr(0));
    const HostTensor out =
        test::run_once(prog, {HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 4}),
                              HostTensor::from_floats(Shape{1, 2}, {7, 8}), HostTensor(DataType::f32, Shape{0, 2})});
    expect_bytes_equal(out, HostTensor::from_floats(Shape{3, 2}, {1, 2, 3, 4, 7, 8}));
}

TEST(ConcatReference, ShapeVectorsJoinAsI64) {
    // The shape-chain use: [batch] + constant [-1, 64] -> a reshape target.
    const auto prog =
        test::single_node_program("concat", {Layout({1}, DataType::i64), Layout({2}, DataType::i64)}, axis_attr(0),
                                  {{1, HostTensor::from_int64(DataType::i64, Shape{2}, {-1, 64})}});
    const HostTensor out = test::run_once(prog, {HostTensor::from_int64(DataType::i64, Shape{1}, {5})});
    EXPECT_EQ(out.to_int64(), std::vector<int64_t>({5, -1, 64}));
}

TEST(ConcatReference, RandomInputsMatchNaiveConcatForEveryDtype) {
    uint64_t seed = 1;
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64}) {
        for (int64_t axis : {0, 1, 2, -2}) {
            std::vector<Shape> shapes{{3, 4, 5}, {3, 4, 5}, {3, 4, 5}};
            const auto ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
            shapes[1][ax] = 1;
            shapes[2][ax] = 7;
            std::vector<Layout> layouts;
            std::vector<HostTensor> ins;
            for (const Shape& s : shapes) {
                layouts.emplace_back(PartialShape(s), t);
                ins.push_back(test::random_tensor(t, s, seed++, -50, 50));
            }
            SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(axis));
            const auto prog = test::single_node_program("concat", layouts, axis_attr(axis));
            expect_bytes_equal(test::run_once(prog, ins), naive_concat(ins, axis));
        }
    }
}

// ---- every impl against the reference -------------------------------------------

// The optimised impls walk the output's bytes in chunks over the threads:
// whole rows when there are many, pieces of rows when there are few (axis 0:
// one row). Shapes below put chunk edges inside rows and inside elements
// (odd extents past the 64 KiB grain), give empty inputs and outputs and
// size-1 dims; the cpu_opt impls must take every run.
TEST(ConcatImpls, OptimisedImplsMatchTheReferenceForRowsPiecesEmptyInputsAndWidths) {
    struct Case {
        int64_t axis;
        std::vector<std::vector<Shape>> runs;
    };
    const std::vector<Case> cases = {
        {0,
         {{Shape{3, 4}, Shape{1, 4}, Shape{2, 4}},
          {Shape{20001, 3}, Shape{0, 3}, Shape{7, 3}},
          {Shape{1, 1}, Shape{1, 1}, Shape{1, 1}},
          {Shape{0, 5}, Shape{0, 5}, Shape{0, 5}}}},
        {1,
         {{Shape{2, 3}, Shape{2, 1}, Shape{2, 5}},
          {Shape{30001, 1}, Shape{30001, 2}, Shape{30001, 0}},
          {Shape{3, 40001}, Shape{3, 3}, Shape{3, 1}},
          {Shape{0, 2}, Shape{0, 1}, Shape{0, 3}},
          {Shape{1, 1}, Shape{1, 0}, Shape{1, 1}}}},
        {-2,
         {{Shape{2, 3, 5}, Shape{2, 1, 5}, Shape{2, 4, 5}},
          {Shape{5, 1, 9001}, Shape{5, 2, 9001}, Shape{5, 1, 9001}},
          {Shape{4, 3, 1}, Shape{4, 0, 1}, Shape{4, 2, 1}}}},
    };
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8, DataType::boolean}) {
        for (size_t c = 0; c < cases.size(); ++c) {
            SCOPED_TRACE(std::string(to_string(t)) + " case " + std::to_string(c));
            const size_t rank = cases[c].runs[0][0].rank();
            const Layout in(PartialShape::dynamic_of_rank(rank), t);
            const std::vector<std::string> ran =
                test::expect_impls_match_reference({"concat", axis_attr(cases[c].axis), {in, in, in}, {}},
                                                   test::random_runs(t, cases[c].runs, 3, -100, 100));
            for (const std::string& name : test::kOptimisedCpuImpls)
                EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
        }
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

class ConcatSweep : public ::testing::TestWithParam<bool> {};

// A KV-cache-like concat: past [?, 4] + new [?, 4] along axis 0 (both dynamic),
// and a second case along the inner axis: [2, ?] + [2, ?] along axis 1.
TEST_P(ConcatSweep, ConcatDynamicAxis_GrowsAlongAxis) {
    for (int64_t axis : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis));
        const PartialShape ps = axis == 0 ? PartialShape{Dimension(), 4} : PartialShape{2, Dimension()};
        const test::OpSetup setup{"concat", axis_attr(axis), {f32(ps), f32(ps)}, {}};
        std::vector<test::Run> runs;
        uint64_t seed = 100;
        for (int64_t n : {1, 3, 13, 16, 17, 255, 257, 16, 16, 1, 257}) {
            const int64_t m = n % 5 + 1;
            const Shape a = axis == 0 ? Shape{n, 4} : Shape{2, n};
            const Shape b = axis == 0 ? Shape{m, 4} : Shape{2, m};
            runs.push_back(
                {test::random_tensor(DataType::f32, a, seed), test::random_tensor(DataType::f32, b, seed + 1)});
            seed += 2;
        }
        test::SequenceOptions o = test::sweep_options(GetParam());
        o.on_step = [&](const InferRequest& req, size_t step) {
            test::expect_bytes_equal(req.get_output(0), naive_concat(runs[step], axis));
        };
        test::expect_sequence(setup, runs, o);
    }
}

INSTANTIATE_TEST_SUITE_P(Impls, ConcatSweep, ::testing::Values(true, false), test::dynamic_or_static);

// ---- OpenCL: ocl_dynamic and ocl_static against the cpu reference ------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists
// (helpers in tests/support/ocl_sweep.hpp).

// Concat moves bits: every comparison is exact.
TEST(ConcatOcl, ThreeInputsAlongTheMiddleAxisMatchCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // [2, n, 3] + [2, 5, 3] + [2, n % 3, 3] (sometimes empty) along axis 1.
    const auto prog =
        test::single_node_program("concat",
                                  {Layout({2, Dimension(), 3}, DataType::f32), Layout({2, 5, 3}, DataType::f32),
                                   Layout({2, Dimension(), 3}, DataType::f32)},
                                  axis_attr(1));
    const auto make = [](int64_t n, uint64_t seed) {
        return test::OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{2, n, 3}, seed)},
                               {"in1", test::random_tensor(DataType::f32, Shape{2, 5, 3}, seed + 100)},
                               {"in2", test::random_tensor(DataType::f32, Shape{2, n % 3, 3}, seed + 200)}};
    };
    test::ocl_sweep_exact(eng, prog, test::ocl_tail_sizes(), make);
}

TEST(ConcatOcl, OuterAxisMatchesCpuForEveryElementWidth) {
    test::ocl_sweep_every_width(
        {1, 16, 257, 16},
        [](DataType t) {
            return test::single_node_program("concat", {Layout({Dimension(), 4}, t), Layout({Dimension(), 4}, t)},
                                             axis_attr(-2));
        },
        [](DataType t, int64_t n, uint64_t seed) {
            return test::OclInputs{{"in0", test::random_tensor(t, Shape{n, 4}, seed, -100, 100)},
                                   {"in1", test::random_tensor(t, Shape{n + 1, 4}, seed + 1, -100, 100)}};
        });
}

// 1-D inputs along axis 0: each input is one contiguous block of the output
// (the kernel's vector copy path). Lengths n, n + 2 and 3 put the second and
// third blocks at starts that are not multiples of 4 and give every tail.
TEST(ConcatOcl, FlatInputsAtUnalignedStartsMatchCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program(
        "concat",
        {Layout({Dimension()}, DataType::f32), Layout({Dimension()}, DataType::f32), Layout({3}, DataType::f32)},
        axis_attr(0));
    const auto make = [](int64_t n, uint64_t seed) {
        return test::OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{n}, seed)},
                               {"in1", test::random_tensor(DataType::f32, Shape{n + 2}, seed + 100)},
                               {"in2", test::random_tensor(DataType::f32, Shape{3}, seed + 200)}};
    };
    test::ocl_sweep_exact(eng, prog, test::ocl_tail_sizes(), make);
}

TEST(ConcatOcl, SingleInputIsACopy) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("concat", {Layout({Dimension()}, DataType::i32)}, axis_attr(0));
    const HostTensor in = HostTensor::from_int64(DataType::i32, Shape{4}, {4, -3, 2, 1});
    EXPECT_EQ(test::run_once(prog, {in}, NetworkOptions{}, "ocl").to_int64(), std::vector<int64_t>({4, -3, 2, 1}));
}

}   // namespace
}   // namespace dynrt
