// Tests of the softmax op: shape inference, hand-computed values, stability for
// large inputs, and one network instance fed a sequence of changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

using test::registry;

Attributes axis_attrs(int64_t axis) {
    Attributes a;
    a.set("axis", axis);
    return a;
}

std::vector<Layout> infer(const std::vector<Layout>& inputs, const Attributes& raw) {
    const OpDefinition& def = registry()->op("softmax").def;
    const Attributes attrs = Attributes::validate(def.attrs, raw);
    const std::string node = "sm";
    return def.infer(ShapeInferContext{node, inputs, attrs, {}});
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "<no error>";
}

// ---- 1. shape inference ------------------------------------------------------

TEST(SoftmaxShape, OutputEqualsInputForEveryValidAxis) {
    const std::vector<Layout> cases = {
        Layout(PartialShape{2, 3}, DataType::f32),
        Layout(PartialShape{Dimension(), 4}, DataType::f16),
        Layout(PartialShape{Dimension(1, 8), Dimension(), 7}, DataType::f32),
        Layout(PartialShape{5}, DataType::f32),
    };
    for (const Layout& in : cases) {
        const int64_t r = static_cast<int64_t>(in.shape.rank());
        for (int64_t axis = -r; axis < r; ++axis) {
            const std::vector<Layout> out = infer({in}, axis_attrs(axis));
            ASSERT_EQ(out.size(), 1u);
            EXPECT_EQ(out[0], Layout(in.shape, in.dtype)) << in.to_string() << " axis " << axis;
        }
    }
    // The default axis is -1.
    EXPECT_EQ(infer({Layout(PartialShape{2, 3}, DataType::f32)}, Attributes())[0].shape, PartialShape({2, 3}));
}

TEST(SoftmaxShape, AxisOutOfRangeIsRejected) {
    const Layout in(PartialShape{2, 3}, DataType::f32);
    for (int64_t axis : {2, -3, 7}) {
        const std::string msg = error_of([&] { infer({in}, axis_attrs(axis)); });
        EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(axis)), std::string::npos) << msg;
    }
}

TEST(SoftmaxShape, IntegerAndScalarInputsAreRejected) {
    EXPECT_NE(error_of([] { infer({Layout(PartialShape{3}, DataType::i64)}, Attributes()); }).find("floating"),
              std::string::npos);
    EXPECT_NE(error_of([] { infer({Layout(PartialShape{}, DataType::f32)}, Attributes()); }).find("scalar"),
              std::string::npos);
}

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const HostTensor& x, int64_t axis) {
    auto prog = test::single_node_program("softmax", {x.layout()}, axis_attrs(axis));
    return test::run_once(prog, {x});
}

TEST(SoftmaxValues, LastAxisMatchesHandComputedValues) {
    // e^(x-3) = {e^-2, e^-1, 1}, divided by their sum 1.5032147244.
    const HostTensor y = run(HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 0, 0, 0}), -1);
    const double want[] = {0.09003057317, 0.2447284711, 0.6652409558, 1.0 / 3, 1.0 / 3, 1.0 / 3};
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-7) << i;
}

TEST(SoftmaxValues, FirstAxisNormalisesColumns) {
    // Columns {1,1} -> {1/2, 1/2}; {1,3} -> {1/(1+e^2), 1/(1+e^-2)}.
    const HostTensor y = run(HostTensor::from_floats(Shape{2, 2}, {1, 1, 1, 3}), 0);
    const double want[] = {0.5, 0.119202922, 0.5, 0.880797078};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-7) << i;
}

TEST(SoftmaxValues, LargeInputsDoNotOverflow) {
    const HostTensor y = run(HostTensor::from_floats(Shape{3}, {1000, 1000, -1000}), 0);
    EXPECT_NEAR(y.get_as_double(0), 0.5, 1e-7);
    EXPECT_NEAR(y.get_as_double(1), 0.5, 1e-7);
    EXPECT_NEAR(y.get_as_double(2), 0.0, 1e-7);
}

// Independent computation: plain exp/sum without max subtraction (inputs are
// small), indexing through explicit coordinates.
HostTensor naive_softmax(const HostTensor& x, size_t axis) {
    const Shape& s = x.shape();
    HostTensor y(x.dtype(), s);
    std::vector<size_t> stride(s.size(), 1);
    for (size_t d = s.size(); d-- > 1;) stride[d - 1] = stride[d] * s[d];
    for (size_t i = 0; i < x.count(); ++i) {
        const size_t pos = (i / stride[axis]) % s[axis];
        const size_t row_start = i - pos * stride[axis];
        double sum = 0.0;
        for (int64_t k = 0; k < s[axis]; ++k) sum += std::exp(x.get_as_double(row_start + k * stride[axis]));
        y.set_from_double(i, std::exp(x.get_as_double(i)) / sum);
    }
    return y;
}

TEST(SoftmaxValues, RandomInputsMatchNaiveOnEveryAxis) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        const HostTensor x = test::random_tensor(t, Shape{3, 5, 4}, 11, -3.0, 3.0);
        for (int64_t axis = 0; axis < 3; ++axis) {
            const HostTensor y = run(x, axis);
            EXPECT_LE(test::max_abs_diff(y, naive_softmax(x, static_cast<size_t>(axis))),
                      t == DataType::f16 ? 1e-3 : 1e-6)
                << to_string(t) << " axis " << axis;
        }
    }
}

// ---- 3. changing shapes on one instance ----------------------------------------

using test::node_counters;

void sweep(NetworkOptions opts) {
    auto prog = std::make_shared<Program>(registry(), "softmax_sweep");
    prog->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    prog->add_node("sm", "softmax", {"x"}, axis_attrs(-1));
    prog->add_output("sm");
    prog->build();
    auto net = Network::create(prog, test::engine(), opts);
    InferRequest req(net);

    const std::vector<Shape> shapes = {{1, 1},  {1, 3},   {2, 13}, {2, 13}, {1, 16}, {3, 17},
                                       {1, 255}, {2, 257}, {2, 13}, {1, 1},  {1, 1}};
    std::set<Shape> seen;
    Shape prev;
    for (size_t step = 0; step < shapes.size(); ++step) {
        const Shape& s = shapes[step];
        const HostTensor x = test::random_tensor(DataType::f32, s, 40 + step, -4.0, 4.0);
        req.set_input("x", x);
        req.infer();
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), s) << "step " << step;
        EXPECT_LE(test::max_abs_diff(y, naive_softmax(x, 1)), 1e-6) << "step " << step;
        const Counters& c = node_counters(req, "sm");
        test::expect_sweep_counters(c, opts.use_dynamic_impls, s == prev, seen.count(s) > 0, step);
        seen.insert(s);
        prev = s;
    }
}

TEST(SoftmaxDynamic, OneInstanceFollowsChangingShapesWithDynamicImpl) { sweep(NetworkOptions{}); }

TEST(SoftmaxDynamic, OneInstanceFollowsChangingShapesWithStaticImpls) {
    NetworkOptions opts;
    opts.use_dynamic_impls = false;
    sweep(opts);
}

// ---- OpenCL: ocl_dynamic and ocl_static against the cpu reference ------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists
// (helpers in tests/support/ocl_sweep.hpp).

using test::expect_close;
using test::ocl_engine;
using test::ocl_sweep;
using test::OclInputs;

// Tail sizes, then revisits (never the same size twice in a row, so each run
// selects an impl).
const std::vector<int64_t> kOclSizes = {1, 3, 13, 16, 17, 255, 257, 16, 1, 257};

// A reduction per row: 1e-4 relative (float exp, the sum in double where the
// device has fp64, else float) and 1e-7 absolute for the tiny probabilities.
constexpr double kRtol = 1e-4, kAtol = 1e-7;

TEST(SoftmaxOcl, LastAxisSweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // Rows of n elements: the axis itself changes length.
    const auto prog = test::single_node_program("softmax", {Layout({3, Dimension()}, DataType::f32)}, axis_attrs(-1));
    const auto make = [](int64_t n, uint64_t seed) {
        return OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{3, n}, seed, -8.0, 8.0)}};
    };
    for (bool dynamic : {true, false}) ocl_sweep(eng, prog, kOclSizes, dynamic, make, kRtol, kAtol);
}

TEST(SoftmaxOcl, MiddleAxisSweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // [2, 5, n]: rows along axis 1 with a changing inner extent.
    const auto prog =
        test::single_node_program("softmax", {Layout({2, 5, Dimension()}, DataType::f32)}, axis_attrs(1));
    const auto make = [](int64_t n, uint64_t seed) {
        return OclInputs{{"in0", test::random_tensor(DataType::f32, Shape{2, 5, n}, seed, -8.0, 8.0)}};
    };
    for (bool dynamic : {true, false}) ocl_sweep(eng, prog, kOclSizes, dynamic, make, kRtol, kAtol);
}

// Large inputs: without the max subtraction exp() would overflow to inf.
TEST(SoftmaxOcl, LargeInputsStayFinite) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("softmax", {Layout({Dimension()}, DataType::f32)}, axis_attrs(0));
    HostTensor in = HostTensor::from_floats(Shape{3}, {1000.0f, 1000.0f, 0.0f});
    const HostTensor out = test::run_once(prog, {in}, NetworkOptions{}, "ocl");
    EXPECT_NEAR(out.get_as_double(0), 0.5, 1e-6);
    EXPECT_NEAR(out.get_as_double(1), 0.5, 1e-6);
    EXPECT_EQ(out.get_as_double(2), 0.0);
}

// f16 through vload_half / vstore_half: one f16 rounding step at most.
TEST(SoftmaxOcl, F16MatchesCpuOnTheDynamicImpl) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("softmax", {Layout({3, Dimension()}, DataType::f16)}, axis_attrs(-1));
    const auto make = [](int64_t n, uint64_t seed) {
        return OclInputs{{"in0", test::random_tensor(DataType::f16, Shape{3, n}, seed, -4.0, 4.0)}};
    };
    ocl_sweep(eng, prog, {1, 17, 255}, true, make, 2e-3, 1e-5);
}

}  // namespace
}  // namespace dynrt
