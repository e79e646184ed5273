// reshape: shape-inference table (attribute and tensor targets, special_zero,
// -1, dynamic inputs), reference values and one network instance fed a
// sequence of changing shapes.
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

Attributes shape_attrs(std::vector<int64_t> target, bool special_zero = true) {
    Attributes a;
    a.set("shape", std::move(target));
    a.set("special_zero", special_zero);
    return a;
}

std::vector<Layout> infer(const std::vector<Layout>& inputs, const Attributes& raw,
                          const std::vector<const HostTensor*>& values = {}) {
    std::map<size_t, HostTensor> known;
    for (size_t i = 0; i < values.size(); ++i)
        if (values[i]) known.emplace(i, *values[i]);
    return test::infer_shapes("reshape", inputs, raw, known);
}

// Shape inference from the `shape` attribute alone.
PartialShape infer_attr(const PartialShape& in, std::vector<int64_t> target, bool special_zero = true) {
    return infer({Layout(in, DataType::f32)}, shape_attrs(std::move(target), special_zero)).at(0).shape;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- 1. shape inference ----------------------------------------------------

TEST(ReshapeShapeInfer, StaticTargetsFromTheAttribute) {
    EXPECT_EQ(infer_attr({2, 3}, {3, 2}), PartialShape({3, 2}));
    EXPECT_EQ(infer_attr({2, 3}, {-1}), PartialShape({6}));
    EXPECT_EQ(infer_attr({2, 3, 4}, {0, -1}), PartialShape({2, 12}));
    EXPECT_EQ(infer_attr({2, 3, 4}, {-1, 0, 2}), PartialShape({4, 3, 2}));
    EXPECT_EQ(infer_attr({1}, {}), PartialShape{});   // one element to a scalar
    EXPECT_EQ(infer_attr({0, 3}, {-1, 3}), PartialShape({0, 3}));
}

TEST(ReshapeShapeInfer, ZeroIsAnEmptyDimWithoutSpecialZero) {
    EXPECT_EQ(infer_attr({0, 3}, {3, 0}, false), PartialShape({3, 0}));
    const std::string msg = error_of([] { infer_attr({2, 3}, {0, -1}, false); });
    EXPECT_TRUE(contains(msg, "cannot reshape [2,3] (6 elements) to [0,-1]")) << msg;
}

TEST(ReshapeShapeInfer, DynamicInputKeepsResolvableDimsStatic) {
    const Dimension dyn;
    EXPECT_EQ(infer_attr({dyn, 3, 4}, {0, -1}), PartialShape({dyn, 12}));   // -1 from the static rest
    EXPECT_EQ(infer_attr({dyn, 3, 4}, {0, 12}), PartialShape({dyn, 12}));
    EXPECT_EQ(infer_attr({dyn, 3, 4}, {-1, 4}), PartialShape({dyn, 4}));   // -1 depends on ?
    EXPECT_EQ(infer_attr({dyn, 6}, {0, 2, 3}), PartialShape({dyn, 2, 3}));
    EXPECT_EQ(infer_attr({Dimension(2, 5), 6}, {0, 3, -1}), PartialShape({Dimension(2, 5), 3, 2}));
    EXPECT_EQ(infer_attr({dyn, dyn}, {0, 0, 1}), PartialShape({dyn, dyn, 1}));
    EXPECT_EQ(infer_attr({dyn, dyn}, {8, -1}), PartialShape({8, dyn}));
}

TEST(ReshapeShapeInfer, ElementCountMismatchIsRejected) {
    std::string msg = error_of([] { infer_attr({2, 3}, {4, -1}); });
    EXPECT_TRUE(contains(msg, "cannot reshape [2,3] (6 elements) to [4,-1]")) << msg;
    msg = error_of([] { infer_attr({2, 3}, {4, 2}); });
    EXPECT_TRUE(contains(msg, "cannot reshape [2,3] (6 elements) to [4,2]")) << msg;
    msg = error_of([] { infer_attr({Dimension(), 3, 4}, {0, 5}); });
    EXPECT_TRUE(contains(msg, "cannot reshape [?,3,4]")) << msg;
    msg = error_of([] { infer_attr({Dimension(), 3, 4}, {0, 5, -1}); });
    EXPECT_TRUE(contains(msg, "to [0,5,-1]")) << msg;
}

TEST(ReshapeShapeInfer, InvalidTargetsAreRejected) {
    std::string msg = error_of([] { infer_attr({2, 3}, {-1, -1}); });
    EXPECT_TRUE(contains(msg, "more than one -1")) << msg;
    msg = error_of([] { infer_attr({2, 3}, {-2, 3}); });
    EXPECT_TRUE(contains(msg, "invalid value -2")) << msg;
    msg = error_of([] { infer_attr({6}, {3, 0}); });
    EXPECT_TRUE(contains(msg, "copies dim 1")) << msg;
}

// Products of target dims that would wrap int64 (to the input's count, or to
// a divisor of it for the -1) are errors naming the target, never a shape.
TEST(ReshapeShapeInfer, TargetsWhoseProductOverflows_AreRejectedNotWrapped) {
    const int64_t big = int64_t{1} << 62;
    // (2^62 + 6) * 4 wraps to 24, the element count of [2,3,4].
    std::string msg = error_of([&] { infer_attr({2, 3, 4}, {big + 6, 4}); });
    EXPECT_TRUE(contains(msg, "field 'shape'")) << msg;
    EXPECT_TRUE(contains(msg, "to [4611686018427387910,4]: the `shape` attribute has more than 2^60 elements")) << msg;
    // (2^62 + 1) * 4 wraps to 4, which would make the -1 a 6.
    msg = error_of([&] { infer_attr({2, 3, 4}, {-1, big + 1, 4}); });
    EXPECT_TRUE(contains(msg, "the `shape` attribute (without the -1) has more than 2^60 elements")) << msg;
    // The same target from input 1.
    const HostTensor target = HostTensor::from_int64(DataType::i64, Shape{2}, {big + 6, 4});
    msg = error_of([&] {
        infer({Layout({2, 3, 4}, DataType::f32), Layout({2}, DataType::i64)}, {}, {nullptr, &target});
    });
    EXPECT_TRUE(contains(msg, "the target shape (input 1) has more than 2^60 elements")) << msg;
    // Dynamic input: the static rest on either side.
    msg = error_of([&] { infer_attr({Dimension(), 3, 4}, {0, big + 3, 4}); });
    EXPECT_TRUE(contains(msg, "to [0,4611686018427387907,4]")) << msg;
    EXPECT_TRUE(contains(msg, "besides the copied dims has more than 2^60 elements")) << msg;
    msg = error_of([] { infer_attr({Dimension(), int64_t{1} << 40, int64_t{1} << 40}, {0, -1}); });
    EXPECT_TRUE(contains(msg, "input [?,1099511627776,1099511627776] besides the copied dims has more than 2^60"))
        << msg;
    // A zero makes any product 0: an empty input reshapes to an empty target.
    EXPECT_EQ(infer_attr({0, 3}, {big, 4, 0}, false), PartialShape({big, 4, 0}));
}

TEST(ReshapeShapeInfer, TargetTensorValuesAreUsedWhenKnown) {
    const HostTensor target = HostTensor::from_int64(DataType::i32, Shape{3}, {0, -1, 2});
    const auto out =
        infer({Layout({Dimension(), 4, 3}, DataType::f16), Layout({3}, DataType::i32)}, {}, {nullptr, &target});
    EXPECT_EQ(out.at(0).shape, PartialShape({Dimension(), 6, 2}));
    EXPECT_EQ(out.at(0).dtype, DataType::f16);
}

TEST(ReshapeShapeInfer, UnknownTargetValuesGiveDynamicDimsOfTheTargetLength) {
    EXPECT_EQ(infer({Layout({2, 3}, DataType::f32), Layout({4}, DataType::i64)}, {}).at(0).shape,
              PartialShape::dynamic_of_rank(4));
    const std::string msg = error_of([] {
        infer({Layout({2, 3}, DataType::f32), Layout({Dimension()}, DataType::i64)}, {});
    });
    EXPECT_TRUE(contains(msg, "dynamic length")) << msg;
}

TEST(ReshapeShapeInfer, BadTargetTensorIsRejected) {
    std::string msg = error_of([] { infer({Layout({2, 3}, DataType::f32), Layout({2}, DataType::f32)}, {}); });
    EXPECT_TRUE(contains(msg, "i32 or i64")) << msg;
    msg = error_of([] { infer({Layout({2, 3}, DataType::f32), Layout({1, 2}, DataType::i64)}, {}); });
    EXPECT_TRUE(contains(msg, "1-D")) << msg;
}

// ---- 2. reference values -----------------------------------------------------

TEST(ReshapeReference, ElementsKeepTheirOrder) {
    const auto prog = test::single_node_program("reshape", {Layout({2, 3}, DataType::f32)}, shape_attrs({3, -1}));
    const HostTensor out = test::run_once(prog, {HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6})});
    ASSERT_EQ(out.shape(), Shape({3, 2}));
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(out.get_as_double(i), static_cast<double>(i + 1));
}

TEST(ReshapeReference, ConstantTargetTensorWithSpecialZero) {
    const auto prog =
        test::single_node_program("reshape", {Layout({2, 2, 3}, DataType::i64), Layout({2}, DataType::i64)}, {},
                                  {{1, HostTensor::from_int64(DataType::i64, Shape{2}, {0, -1})}});
    const std::vector<int64_t> v{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
    const HostTensor out = test::run_once(prog, {HostTensor::from_int64(DataType::i64, Shape{2, 2, 3}, v)});
    EXPECT_EQ(out.shape(), Shape({2, 6}));
    EXPECT_EQ(out.to_int64(), v);
}

TEST(ReshapeReference, RandomInputsKeepTheirBytesForEveryDtype) {
    uint64_t seed = 1;
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8}) {
        const HostTensor in = test::random_tensor(t, Shape{4, 5, 6}, seed++, 0, 100);
        const auto prog = test::single_node_program("reshape", {Layout({4, 5, 6}, t)}, shape_attrs({5, -1, 2}));
        const HostTensor out = test::run_once(prog, {in});
        SCOPED_TRACE(to_string(t));
        ASSERT_EQ(out.shape(), Shape({5, 12, 2}));
        ASSERT_EQ(out.dtype(), t);
        EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
    }
}

// ---- views (OpTraits::view) ----------------------------------------------------

// activation -> reshape [?, ?, 4] -> [-1, 4] -> activation on each device: the
// reshape runs no kernel (its output views the activation's buffer), over
// changing shapes on one network, with the values of the cpu run with views off.
TEST(ReshapeViews, NoKernelRunsOnEachDeviceAndResultsMatchTheKernels) {
    auto prog = std::make_shared<Program>(registry(), "views");
    prog->add_input("x", Layout({Dimension(), Dimension(), 4}, DataType::f32));
    Attributes relu;
    relu.set("func", std::string("relu"));
    prog->add_node("a", "activation", {"x"}, relu);
    prog->add_node("r", "reshape", {"a"}, shape_attrs({-1, 4}));
    Attributes neg;
    neg.set("func", std::string("neg"));
    prog->add_node("b", "activation", {"r"}, neg);
    prog->add_output("b");
    prog->build();
    NetworkOptions kernels;
    kernels.views = false;
    InferRequest want(Network::create(prog, test::engine("cpu"), kernels));
    std::vector<EnginePtr> engines{test::engine("cpu")};
    if (EnginePtr ocl = test::ocl_engine()) engines.push_back(ocl);
    for (const EnginePtr& eng : engines) {
        SCOPED_TRACE(eng->info().type);
        InferRequest req(Network::create(prog, eng, NetworkOptions()));
        uint64_t seed = 3;
        for (const Shape& s : {Shape{2, 3, 4}, Shape{1, 17, 4}, Shape{2, 3, 4}, Shape{5, 1, 4}}) {
            SCOPED_TRACE(s.to_string());
            const HostTensor x = test::random_tensor(DataType::f32, s, seed++);
            req.set_input("x", x);
            req.infer();
            want.set_input("x", x);
            want.infer();
            EXPECT_EQ(test::max_abs_diff(req.get_output(0), want.get_output(0)), 0.0);
            EXPECT_EQ(req.get_output(0).shape(), Shape({s[0] * s[1], 4}));
            EXPECT_EQ(test::node_counters(req, "r").views, 1u);
            EXPECT_EQ(test::node_counters(req, "r").executions, 0u);
            EXPECT_EQ(test::node_counters(want, "r").executions, 1u);
        }
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

class ReshapeSweep : public ::testing::TestWithParam<bool> {};

// [?, 6] -> [0, 2, 3]: the batch follows the input, the rest stays static.
TEST_P(ReshapeSweep, SpecialZeroFollowsTheBatchOnOneInstance) {
    const auto prog =
        test::single_node_program("reshape", {Layout({Dimension(), 6}, DataType::f32)}, shape_attrs({0, 2, 3}));
    EXPECT_EQ(prog->nodes()[prog->node_index("node")].out_layouts.at(0).shape, PartialShape({Dimension(), 2, 3}));
    const test::OpSetup setup{"reshape", shape_attrs({0, 2, 3}), {Layout({Dimension(), 6}, DataType::f32)}, {}};
    std::vector<test::Run> runs;
    uint64_t seed = 100;
    for (int64_t n : {1, 3, 13, 16, 17, 255, 257, 16, 16, 1, 257})
        runs.push_back({test::random_tensor(DataType::f32, Shape{n, 6}, seed++)});
    test::SequenceOptions o = test::sweep_options(GetParam());
    o.on_step = [&](const InferRequest& req, size_t step) {
        const HostTensor& in = runs[step][0];
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), Shape({in.shape()[0], 2, 3}));
        EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
    };
    test::expect_sequence(setup, runs, o);
}

// The target comes from a graph input, so its values are only known at run
// time: the same data shape reshaped three ways, read afresh on every run.
TEST_P(ReshapeSweep, TargetTensorFromAnInputIsReadOnEveryRun) {
    NetworkOptions opts;
    opts.use_dynamic_impls = GetParam();
    const auto prog =
        test::single_node_program("reshape", {Layout({Dimension(), 4}, DataType::f32), Layout({2}, DataType::i64)}, {});
    EXPECT_EQ(prog->nodes()[prog->node_index("node")].out_layouts.at(0).shape, PartialShape::dynamic_of_rank(2));
    InferRequest req(Network::create(prog, test::engine(), opts));
    struct Case {
        int64_t rows;
        std::vector<int64_t> target;
        Shape want;
    };
    const std::vector<Case> cases = {{3, {0, -1}, {3, 4}},   {3, {-1, 2}, {6, 2}}, {3, {2, 6}, {2, 6}},
                                     {17, {1, -1}, {1, 68}}, {3, {-1, 2}, {6, 2}}, {3, {-1, 2}, {6, 2}}};
    uint64_t seed = 7;
    for (const Case& k : cases) {
        SCOPED_TRACE("rows " + std::to_string(k.rows) + " want " + k.want.to_string());
        const HostTensor in = test::random_tensor(DataType::f32, Shape{k.rows, 4}, seed++);
        req.set_input("in0", in);
        req.set_input("in1", HostTensor::from_int64(DataType::i64, Shape{2}, k.target));
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), k.want);
        EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
    }
}

TEST_P(ReshapeSweep, TargetTensorWithWrongCountFailsAtRunTime) {
    NetworkOptions opts;
    opts.use_dynamic_impls = GetParam();
    const auto prog =
        test::single_node_program("reshape", {Layout({Dimension(), 4}, DataType::f32), Layout({2}, DataType::i64)}, {});
    InferRequest req(Network::create(prog, test::engine(), opts));
    req.set_input("in0", test::random_tensor(DataType::f32, Shape{3, 4}, 1));
    req.set_input("in1", HostTensor::from_int64(DataType::i64, Shape{2}, {5, -1}));
    const std::string msg = error_of([&] { req.infer(); });
    EXPECT_TRUE(contains(msg, "cannot reshape [3,4] (12 elements) to [5,-1]")) << msg;
}

INSTANTIATE_TEST_SUITE_P(Impls, ReshapeSweep, ::testing::Values(true, false), test::dynamic_or_static);

// ---- OpenCL: ocl_dynamic and ocl_static against the cpu reference ------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists
// (helpers in tests/support/ocl_sweep.hpp).

// A copy: every comparison is exact.
TEST(ReshapeOcl, FlattenSweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // [n, 3] -> [3n]: 3, 9, 39, 48, 51, 765, 771 elements hit every tail of the
    // four-element copies.
    Attributes attrs;
    attrs.set("shape", std::vector<int64_t>{-1});
    const auto prog = test::single_node_program("reshape", {Layout({Dimension(), 3}, DataType::f32)}, attrs);
    const auto make = [](int64_t n, uint64_t seed) {
        return test::OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{n, 3}, seed)}};
    };
    test::ocl_sweep_exact(eng, prog, test::ocl_tail_sizes(), make);
}

TEST(ReshapeOcl, TargetFromAConstantInputMatchesCpuForEveryElementWidth) {
    // [n, 6] -> [0, 2, 3] (special_zero copies n).
    test::ocl_sweep_every_width(
        {1, 13, 16, 13},
        [](DataType t) {
            return test::single_node_program("reshape", {Layout({Dimension(), 6}, t), Layout({3}, DataType::i64)}, {},
                                             {{1, HostTensor::from_int64(DataType::i64, Shape{3}, {0, 2, 3})}});
        },
        [](DataType t, int64_t n, uint64_t seed) {
            return test::OclInputs{{"in0", test::random_tensor(t, Shape{n, 6}, seed, -100, 100)}};
        });
}

}   // namespace
}   // namespace dynrt
