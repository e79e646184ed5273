// gather: shape-inference table, reference vs hand-computed and naive values,
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

const test::ShapesOf infer{"gather"};

using test::axis_attr;

using test::expect_bytes_equal;

// Independent of the kernel: walks the *output* element by element, unravels
// its coordinates and maps them back into data.
HostTensor naive_gather(const HostTensor& data, const HostTensor& indices, int64_t axis) {
    const Shape& ds = data.shape();
    const size_t r = ds.rank();
    const auto ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(r) : axis);
    Shape os;
    for (size_t i = 0; i < ax; ++i) os.push_back(ds[i]);
    for (int64_t d : indices.shape()) os.push_back(d);
    for (size_t i = ax + 1; i < r; ++i) os.push_back(ds[i]);
    HostTensor out(data.dtype(), os);
    const std::vector<int64_t> idx = indices.to_int64();
    const size_t ir = indices.shape().rank();
    const size_t esize = byte_size(data.dtype());
    for (size_t flat = 0; flat < out.count(); ++flat) {
        std::vector<int64_t> oc(os.rank());
        size_t rem = flat;
        for (size_t k = os.rank(); k-- > 0;) {
            oc[k] = static_cast<int64_t>(rem % static_cast<size_t>(os[k]));
            rem /= static_cast<size_t>(os[k]);
        }
        size_t iflat = 0;
        for (size_t k = 0; k < ir; ++k)
            iflat = iflat * static_cast<size_t>(indices.shape()[k]) + static_cast<size_t>(oc[ax + k]);
        int64_t v = idx[iflat];
        if (v < 0) v += ds[ax];
        size_t dflat = 0;
        for (size_t k = 0; k < r; ++k) {
            const int64_t c = k < ax ? oc[k] : (k == ax ? v : oc[k - 1 + ir]);
            dflat = dflat * static_cast<size_t>(ds[k]) + static_cast<size_t>(c);
        }
        std::memcpy(static_cast<uint8_t*>(out.data()) + flat * esize,
                    static_cast<const uint8_t*>(data.data()) + dflat * esize, esize);
    }
    return out;
}

// ---- 1. shape inference ----------------------------------------------------

TEST(GatherShapeInfer, IndicesShapeReplacesTheAxis) {
    const auto out = infer({Layout({5, 4, 3}, DataType::f32), Layout({2, 7}, DataType::i64)}, 1);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, PartialShape({5, 2, 7, 3}));
    EXPECT_EQ(out[0].dtype, DataType::f32);
}

TEST(GatherShapeInfer, ScalarIndicesDropTheAxis) {
    EXPECT_EQ(infer({Layout({5, 4}, DataType::f16), Layout(PartialShape{}, DataType::i32)}, -1)[0].shape,
              PartialShape({5}));
    EXPECT_EQ(infer({Layout({5, 4}, DataType::f16), Layout(PartialShape{}, DataType::i32)}, 0)[0].shape,
              PartialShape({4}));
}

TEST(GatherShapeInfer, DynamicAndBoundedDimsPassThrough) {
    EXPECT_EQ(infer({Layout({Dimension(), 4}, DataType::f32), Layout({Dimension()}, DataType::i64)}, 0)[0].shape,
              PartialShape({Dimension(), 4}));
    EXPECT_EQ(
        infer({Layout({Dimension(2, 8), 4}, DataType::i32), Layout({Dimension(1, 3)}, DataType::i32)}, 1)[0].shape,
        PartialShape({Dimension(2, 8), Dimension(1, 3)}));
    // The gathered axis itself may be dynamic: its extent does not reach the output.
    EXPECT_EQ(infer({Layout({3, Dimension()}, DataType::f32), Layout({2}, DataType::i64)}, -1)[0].shape,
              PartialShape({3, 2}));
}

TEST(GatherShapeInfer, FloatIndicesAreRejected) {
    const std::string msg = error_of([] { infer({Layout({5, 4}, DataType::f32), Layout({2}, DataType::f32)}, 0); });
    EXPECT_NE(msg.find("indices must be i32 or i64"), std::string::npos) << msg;
}

TEST(GatherShapeInfer, AxisOutOfRangeIsRejected) {
    const std::string msg = error_of([] { infer({Layout({5, 4}, DataType::f32), Layout({2}, DataType::i64)}, 2); });
    EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
    error_of([] { infer({Layout({5, 4}, DataType::f32), Layout({2}, DataType::i64)}, -3); });
}

TEST(GatherShapeInfer, ScalarDataIsRejected) {
    const std::string msg = error_of([] {
        infer({Layout(PartialShape{}, DataType::f32), Layout({2}, DataType::i64)}, 0);
    });
    EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
}

// ---- 2. reference values -----------------------------------------------------

HostTensor data_3x2() { return HostTensor::from_floats(Shape{3, 2}, {1, 2, 3, 4, 5, 6}); }

TEST(GatherReference, Axis0WithNegativeIndexPicksRows) {
    const auto prog =
        test::single_node_program("gather", {Layout({3, 2}, DataType::f32), Layout({3}, DataType::i64)}, axis_attr(0));
    const HostTensor out =
        test::run_once(prog, {data_3x2(), HostTensor::from_int64(DataType::i64, Shape{3}, {2, 0, -1})});
    expect_bytes_equal(out, HostTensor::from_floats(Shape{3, 2}, {5, 6, 1, 2, 5, 6}));
}

TEST(GatherReference, LastAxisWithI32IndicesPicksColumns) {
    const auto prog =
        test::single_node_program("gather", {Layout({3, 2}, DataType::f32), Layout({3}, DataType::i32)}, axis_attr(-1));
    const HostTensor out =
        test::run_once(prog, {data_3x2(), HostTensor::from_int64(DataType::i32, Shape{3}, {1, 1, 0})});
    expect_bytes_equal(out, HostTensor::from_floats(Shape{3, 3}, {2, 2, 1, 4, 4, 3, 6, 6, 5}));
}

TEST(GatherReference, ScalarIndexDropsTheAxis) {
    const auto prog = test::single_node_program(
        "gather", {Layout({3, 2}, DataType::f32), Layout(PartialShape{}, DataType::i64)}, axis_attr(0));
    const HostTensor out = test::run_once(prog, {data_3x2(), HostTensor::from_int64(DataType::i64, Shape{}, {-2})});
    expect_bytes_equal(out, HostTensor::from_floats(Shape{2}, {3, 4}));
}

TEST(GatherReference, IntegerDataFromConstantIndices) {
    // shape_of -> gather is the typical use: pick dims out of an i64 vector.
    const auto prog =
        test::single_node_program("gather", {Layout({4}, DataType::i64), Layout({2}, DataType::i64)}, axis_attr(0),
                                  {{1, HostTensor::from_int64(DataType::i64, Shape{2}, {3, 1})}});
    const HostTensor out = test::run_once(prog, {HostTensor::from_int64(DataType::i64, Shape{4}, {10, 20, 30, 40})});
    EXPECT_EQ(out.shape(), Shape({2}));
    EXPECT_EQ(out.to_int64(), std::vector<int64_t>({40, 20}));
}

TEST(GatherReference, OutOfRangeIndexNamesNodeAndIndex) {
    const auto prog =
        test::single_node_program("gather", {Layout({3, 2}, DataType::f32), Layout({2}, DataType::i64)}, axis_attr(0));
    for (int64_t bad : {3, -4}) {
        const std::string msg = error_of([&] {
            test::run_once(prog, {data_3x2(), HostTensor::from_int64(DataType::i64, Shape{2}, {0, bad})});
        });
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("index " + std::to_string(bad)), std::string::npos) << msg;
    }
}

// The optimised cpu impl checks every index as the reference does and raises
// the same error (it ranks first, so a default network runs it).
TEST(GatherReference, OutOfRangeIndexGivesTheSameErrorOnTheOptimisedImpl) {
    const auto prog =
        test::single_node_program("gather", {Layout({3, 2}, DataType::f32), Layout({2}, DataType::i64)}, axis_attr(0));
    NetworkOptions reference_only;
    reference_only.host_reference_only = true;
    for (int64_t bad : {3, -4}) {
        const std::vector<HostTensor> in = {data_3x2(), HostTensor::from_int64(DataType::i64, Shape{2}, {0, bad})};
        const std::string fast = error_of([&] { test::run_once(prog, in); });
        EXPECT_EQ(fast, error_of([&] { test::run_once(prog, in, reference_only); }));
    }
}

TEST(GatherReference, RandomInputsMatchNaiveGatherForEveryDtype) {
    uint64_t seed = 1;
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64}) {
        for (int64_t axis : {0, 1, 2, -1}) {
            const Shape ds{4, 5, 6};
            const int64_t len = ds[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
            const HostTensor data = test::random_tensor(t, ds, seed++, -50, 50);
            const HostTensor idx = test::random_tensor(DataType::i32, Shape{2, 3}, seed++, static_cast<double>(-len),
                                                       static_cast<double>(len));
            const auto prog = test::single_node_program(
                "gather", {Layout(PartialShape(ds), t), Layout({2, 3}, DataType::i32)}, axis_attr(axis));
            SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(axis));
            expect_bytes_equal(test::run_once(prog, {data, idx}), naive_gather(data, idx, axis));
        }
    }
}

// Every impl against the reference: the OpenCL kernel copies rows of INNER
// elements as whole 4-element vectors when INNER is a multiple of 4 (1024, 8)
// and element by element otherwise (7, 1); the optimised cpu impl copies
// blocks per index. Axes first, middle and last, negative indices, ranks 1 to
// 6, element widths 1, 2, 4 and 8 bytes (one per case, in turn).
TEST(GatherImpls, RowsVectorsAndTailsMatchTheReferenceOnEveryImpl) {
    struct Case {
        int64_t axis;
        std::vector<Shape> shapes;   // data shapes of one dynamic network's runs
        Shape indices;
    };
    const std::vector<Case> cases = {
        {0, {{9}, {1}, {5}}, {4}},
        {0, {{6, 1024}, {3, 7}, {4, 8}, {5, 1}}, {7}},
        {1, {{2, 5, 3}, {3, 4, 8}, {1, 1, 1}}, {2, 3}},
        {-1, {{2, 3, 4, 7}, {1, 2, 3, 1}}, {5}},
        {2, {{2, 1, 6, 3, 4}, {1, 2, 3, 2, 5}}, {3}},
        {-3, {{2, 1, 5, 3, 2, 4}, {1, 2, 2, 1, 1, 3}}, {2, 2}},
    };
    const DataType widths[] = {DataType::u8, DataType::f16, DataType::f32, DataType::i64};
    for (size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        const DataType t = widths[k % 4];
        SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(c.axis) + " rank " +
                     std::to_string(c.shapes[0].rank()));
        std::vector<test::Run> runs;
        uint64_t seed = 30;
        for (const Shape& ds : c.shapes) {
            const auto len = static_cast<double>(
                ds[static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int64_t>(ds.rank()) : c.axis)]);
            runs.push_back({test::random_tensor(t, ds, seed, -100, 100),
                            test::random_tensor(DataType::i64, c.indices, seed + 1, -len, len)});
            seed += 2;
        }
        test::expect_impls_match_reference({"gather",
                                            axis_attr(c.axis),
                                            {Layout(PartialShape::dynamic_of_rank(c.shapes[0].rank()), t),
                                             Layout(PartialShape::dynamic_of_rank(c.indices.rank()), DataType::i64)},
                                            {}},
                                           runs);
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

class GatherSweep : public ::testing::TestWithParam<bool> {};

// data [?, 3] gathered along axis 0 with indices [?]; both change size per step.
TEST_P(GatherSweep, OneInstanceFollowsChangingShapes) {
    const test::OpSetup setup{
        "gather", axis_attr(0), {Layout({Dimension(), 3}, DataType::f32), Layout({Dimension()}, DataType::i64)}, {}};
    std::vector<test::Run> runs;
    uint64_t seed = 100;
    for (int64_t n : {1, 3, 13, 16, 17, 255, 257, 13, 13, 1, 257}) {
        runs.push_back({test::random_tensor(DataType::f32, Shape{n, 3}, seed),
                        test::random_tensor(DataType::i64, Shape{(n % 7) + 1}, seed + 1, static_cast<double>(-n),
                                            static_cast<double>(n))});
        seed += 2;
    }
    test::SequenceOptions o = test::sweep_options(GetParam());
    o.on_step = [&](const InferRequest& req, size_t step) {
        test::expect_bytes_equal(req.get_output(0), naive_gather(runs[step][0], runs[step][1], 0));
    };
    test::expect_sequence(setup, runs, o);
}

INSTANTIATE_TEST_SUITE_P(Impls, GatherSweep, ::testing::Values(true, false), test::dynamic_or_static);

// ---- OpenCL: ocl_dynamic and ocl_static against the cpu reference ------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists
// (helpers in tests/support/ocl_sweep.hpp).

// Gathers move bits: every comparison is exact.
TEST(GatherOcl, Axis0SweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // data [n, 4], indices [5] in [-n, n): negative ones count from the end.
    const auto prog = test::single_node_program(
        "gather", {Layout({Dimension(), 4}, DataType::f32), Layout({Dimension()}, DataType::i64)}, axis_attr(0));
    const auto make = [](int64_t n, uint64_t seed) {
        return test::OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{n, 4}, seed)},
                               {"in1", test::random_tensor(DataType::i64, Shape{5}, seed + 7, static_cast<double>(-n),
                                                           static_cast<double>(n))}};
    };
    test::ocl_sweep_exact(eng, prog, test::ocl_tail_sizes(), make);
}

TEST(GatherOcl, MiddleAxisWithMatrixIndicesMatchesCpuForEveryElementWidth) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8}) {
        SCOPED_TRACE(to_string(t));
        // data [3, n, 2] along axis 1, i32 indices [2, m]: output [3, 2, m, 2].
        const auto prog = test::single_node_program(
            "gather", {Layout({3, Dimension(), 2}, t), Layout({2, Dimension()}, DataType::i32)}, axis_attr(1));
        const auto make = [t](int64_t n, uint64_t seed) {
            return test::OclInputs{{"in0", test::random_tensor(t, Shape{3, n, 2}, seed, -100, 100)},
                                   {"in1", test::random_tensor(DataType::i32, Shape{2, (n % 5) + 1}, seed + 7,
                                                               static_cast<double>(-n), static_cast<double>(n))}};
        };
        test::ocl_sweep_exact(eng, prog, {1, 13, 257, 13}, make);
    }
}

// Both OpenCL impls raise the cpu engine's error for an index out of range
// (past the end, below -len, beyond 32 bits), on the element path (rows of 2)
// and the vector path (rows of 4), naming the node, the value and its
// position; the same instance then gives the cpu engine's values for good
// indices (no stale report).
TEST(GatherOcl, OutOfRangeIndexRaisesTheHostErrorOnTheDevice) {
    std::vector<test::BadIndexRun> bad;
    for (int64_t inner : {2, 4})
        for (int64_t v : std::vector<int64_t>{3, -4, int64_t(1) << 40}) {
            const HostTensor data = test::random_tensor(DataType::f32, Shape{3, inner}, 5);
            bad.push_back({{data, HostTensor::from_int64(DataType::i64, Shape{4}, {0, 2, v, 1})},
                           {"index " + std::to_string(v) + " (at position 2)", "of size 3"}});
        }
    const HostTensor good = HostTensor::from_int64(DataType::i64, Shape{4}, {-1, 0, -3, 2});
    test::expect_device_index_errors(
        {"gather",
         axis_attr(0),
         {Layout({Dimension(), Dimension()}, DataType::f32), Layout({Dimension()}, DataType::i64)},
         {}},
        bad, {test::random_tensor(DataType::f32, Shape{3, 4}, 6), good});
}

}   // namespace
}   // namespace dynrt
