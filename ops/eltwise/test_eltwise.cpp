// Tests of the eltwise op: broadcasting shape inference, hand-computed values
// for every mode (floats and integers), and one network instance fed a sequence
// of changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes mode(const std::string& m) { return test::attrs({{"mode", m}}); }

const test::ShapesOf infer{"eltwise"};

using test::f32;

// ---- 1. shape inference ------------------------------------------------------

TEST(EltwiseShape, BroadcastingTable) {
    const Dimension dyn;
    struct Case {
        PartialShape a, b, out;
    };
    const std::vector<Case> cases = {
        {{2, 3}, {2, 3}, {2, 3}},
        {{2, 3}, {3}, {2, 3}},
        {{3}, {2, 3}, {2, 3}},
        {{2, 1, 4}, {5, 1}, {2, 5, 4}},
        {{dyn, 1, 4}, {5, 1}, {dyn, 5, 4}},
        {{dyn}, {1}, {dyn}},
        {{dyn}, {7}, {7}},
        {{2, dyn}, {dyn}, {2, dyn}},
        {{}, {4}, {4}},
        {{}, {}, {}},
        {{0, 3}, {1, 3}, {0, 3}},
        {{Dimension(1, 8), 3}, {3}, {Dimension(1, 8), 3}},
    };
    for (const Case& c : cases) {
        const std::vector<Layout> out = infer({f32(c.a), f32(c.b)}, mode("add"));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape, c.out) << c.a.to_string() << " + " << c.b.to_string() << " -> "
                                       << out[0].shape.to_string();
        EXPECT_EQ(out[0].dtype, DataType::f32);
    }
}

TEST(EltwiseShape, IntegerInputsKeepTheirType) {
    for (DataType t : {DataType::i32, DataType::i64, DataType::i8, DataType::u8, DataType::f16}) {
        const std::vector<Layout> out = infer({Layout(PartialShape{4}, t), Layout(PartialShape{1}, t)}, mode("div"));
        EXPECT_EQ(out[0].dtype, t);
        EXPECT_EQ(out[0].shape, PartialShape({4}));
    }
}

TEST(EltwiseShape, IncompatibleShapesNameBothShapes) {
    const std::string msg = test::error_of([] { infer({f32({2, 3}), f32({4})}, mode("add")); });
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
}

TEST(EltwiseShape, MixedTypesAreRejected) {
    const std::string msg = test::error_of([] {
        infer({f32({3}), Layout(PartialShape{3}, DataType::i32)}, mode("add"));
    });
    EXPECT_NE(msg.find("same data type"), std::string::npos) << msg;
    EXPECT_NE(msg.find("i32[3]"), std::string::npos) << msg;
}

TEST(EltwiseShape, BooleanAndUnknownModeAreRejected) {
    const Layout b(PartialShape{3}, DataType::boolean);
    EXPECT_NE(test::error_of([&] { infer({b, b}, mode("add")); }).find("boolean"), std::string::npos);
    EXPECT_NE(test::error_of([] { infer({f32({3}), f32({3})}, mode("modulo")); }).find("modulo"), std::string::npos);
    EXPECT_NE(test::error_of([] { infer({f32({3}), f32({3})}, Attributes()); }).find("mode"), std::string::npos);
}

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const std::string& m, const HostTensor& a, const HostTensor& b) {
    auto prog = test::single_node_program("eltwise", {a.layout(), b.layout()}, mode(m));
    return test::run_once(prog, {a, b});
}

void expect_values(const HostTensor& y, const Shape& shape, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(y.shape(), shape) << what;
    ASSERT_EQ(y.count(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << what << " at " << i;
}

TEST(EltwiseValues, FloatModesMatchHandComputedValues) {
    const HostTensor a = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    expect_values(run("add", a, HostTensor::from_floats(Shape{3}, {10, 20, 30})), Shape{2, 3}, {11, 22, 33, 14, 25, 36},
                  "add row");
    expect_values(run("sub", a, HostTensor::from_floats(Shape{2, 1}, {1, 2})), Shape{2, 3}, {0, 1, 2, 2, 3, 4},
                  "sub column");
    expect_values(run("mul", HostTensor::from_floats(Shape{}, {2}), a), Shape{2, 3}, {2, 4, 6, 8, 10, 12},
                  "mul scalar");
    const HostTensor p = HostTensor::from_floats(Shape{3}, {1, 5, 3});
    const HostTensor q = HostTensor::from_floats(Shape{3}, {4, 2, 3});
    expect_values(
        run("div", HostTensor::from_floats(Shape{3}, {1, 2, 3}), HostTensor::from_floats(Shape{3}, {2, 4, 8})),
        Shape{3}, {0.5, 0.5, 0.375}, "div");
    expect_values(run("min", p, q), Shape{3}, {1, 2, 3}, "min");
    expect_values(run("max", p, q), Shape{3}, {4, 5, 3}, "max");
    expect_values(run("squared_diff", p, q), Shape{3}, {9, 9, 0}, "squared_diff");
    expect_values(
        run("pow", HostTensor::from_floats(Shape{3}, {2, 3, 4}), HostTensor::from_floats(Shape{3}, {3, 2, 0.5})),
        Shape{3}, {8, 9, 2}, "pow");
    // Outer product by broadcasting both sides: [3,1] * [1,2].
    expect_values(
        run("mul", HostTensor::from_floats(Shape{3, 1}, {1, 2, 3}), HostTensor::from_floats(Shape{1, 2}, {10, 100})),
        Shape{3, 2}, {10, 100, 20, 200, 30, 300}, "outer");
}

TEST(EltwiseValues, IntegerDivisionTruncatesTowardZero) {
    const HostTensor a = HostTensor::from_int64(DataType::i32, Shape{4}, {7, -7, 7, -7});
    const HostTensor b = HostTensor::from_int64(DataType::i32, Shape{4}, {2, 2, -2, -2});
    const HostTensor y = run("div", a, b);
    ASSERT_EQ(y.dtype(), DataType::i32);
    EXPECT_EQ(y.to_int64(), (std::vector<int64_t>{3, -3, -3, 3}));
}

TEST(EltwiseValues, IntegerPowGoesThroughDoubleAndTruncates) {
    const HostTensor a = HostTensor::from_int64(DataType::i64, Shape{4}, {2, 3, -2, 2});
    const HostTensor b = HostTensor::from_int64(DataType::i64, Shape{4}, {10, 2, 3, -1});
    EXPECT_EQ(run("pow", a, b).to_int64(), (std::vector<int64_t>{1024, 9, -8, 0}));
}

TEST(EltwiseValues, Int64ArithmeticIsExactBeyondDoublePrecision) {
    const int64_t big = (int64_t{1} << 53) + 1;   // not representable as a double
    const HostTensor a = HostTensor::from_int64(DataType::i64, Shape{2}, {big, big});
    const HostTensor b = HostTensor::from_int64(DataType::i64, Shape{1}, {2});
    EXPECT_EQ(run("add", a, b).to_int64(), (std::vector<int64_t>{big + 2, big + 2}));
    EXPECT_EQ(run("sub", a, b).to_int64(), (std::vector<int64_t>{big - 2, big - 2}));
}

TEST(EltwiseValues, IntegerOverflowWrapsAround) {
    const HostTensor a = HostTensor::from_int64(DataType::i32, Shape{1}, {2147483647});
    const HostTensor b = HostTensor::from_int64(DataType::i32, Shape{1}, {1});
    EXPECT_EQ(run("add", a, b).to_int64(), (std::vector<int64_t>{-2147483648LL}));
    const HostTensor c = HostTensor::from_int64(DataType::u8, Shape{2}, {200, 3});
    const HostTensor d = HostTensor::from_int64(DataType::u8, Shape{2}, {100, 5});
    EXPECT_EQ(run("add", c, d).to_int64(), (std::vector<int64_t>{44, 8}));
    const HostTensor e = HostTensor::from_int64(DataType::i8, Shape{2}, {-5, 7});
    EXPECT_EQ(run("squared_diff", e, HostTensor::from_int64(DataType::i8, Shape{1}, {2})).to_int64(),
              (std::vector<int64_t>{49, 25}));
}

TEST(EltwiseValues, IntegerDivisionByZeroIsAnErrorNamingTheNode) {
    auto prog = std::make_shared<Program>(test::registry(), "div0");
    prog->add_input("a", Layout(PartialShape{3}, DataType::i32));
    prog->add_input("b", Layout(PartialShape{3}, DataType::i32));
    prog->add_node("ratio", "eltwise", {"a", "b"}, mode("div"));
    prog->add_output("ratio");
    prog->build();
    InferRequest req(Network::create(prog, test::engine()));
    req.set_input("a", HostTensor::from_int64(DataType::i32, Shape{3}, {1, 2, 3}));
    req.set_input("b", HostTensor::from_int64(DataType::i32, Shape{3}, {1, 0, 1}));
    const std::string msg = test::error_of([&] { req.infer(); });
    EXPECT_NE(msg.find("ratio"), std::string::npos) << msg;
    EXPECT_NE(msg.find("division by zero"), std::string::npos) << msg;
}

// Naive broadcasting: index each input by the output coordinates, clamping
// broadcast dims to 0.
double naive(const std::string& m, double a, double b) {
    if (m == "add") return a + b;
    if (m == "sub") return a - b;
    if (m == "mul") return a * b;
    if (m == "div") return a / b;
    if (m == "min") return a < b ? a : b;
    if (m == "max") return a > b ? a : b;
    if (m == "pow") return std::pow(a, b);
    return (a - b) * (a - b);
}

size_t source_index(const Shape& in, const std::vector<int64_t>& out_idx) {
    size_t flat = 0;
    const size_t lead = out_idx.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) flat = flat * in[d] + (in[d] == 1 ? 0 : out_idx[d + lead]);
    return flat;
}

HostTensor naive_eltwise(const std::string& m, const HostTensor& a, const HostTensor& b, const Shape& out) {
    HostTensor y(a.dtype(), out);
    std::vector<int64_t> idx(out.size(), 0);
    for (size_t o = 0; o < y.count(); ++o) {
        size_t rem = o;
        for (size_t d = out.size(); d-- > 0;) {
            idx[d] = static_cast<int64_t>(rem % out[d]);
            rem /= out[d];
        }
        y.set_from_double(
            o, naive(m, a.get_as_double(source_index(a.shape(), idx)), b.get_as_double(source_index(b.shape(), idx))));
    }
    return y;
}

TEST(EltwiseValues, RandomBroadcastMatchesNaiveForEveryModeAndFloatType) {
    const std::vector<std::string> modes = {"add", "sub", "mul", "div", "min", "max", "pow", "squared_diff"};
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (const std::string& m : modes) {
            // pow takes a positive base so results are real.
            const HostTensor a = test::random_tensor(t, Shape{4, 1, 5}, 1, m == "pow" ? 0.1 : -2.0, 2.0);
            const HostTensor b = test::random_tensor(t, Shape{3, 1}, 2, 0.5, 2.0);
            const HostTensor y = run(m, a, b);
            const HostTensor want = naive_eltwise(m, a, b, Shape{4, 3, 5});
            EXPECT_LE(test::max_abs_diff(y, want), t == DataType::f16 ? 2e-2 : 1e-5) << m << " " << to_string(t);
        }
    }
}

// ---- 3. changing shapes on one instance ----------------------------------------

using test::node_counters;

void sweep(NetworkOptions opts, DataType t) {
    auto prog = std::make_shared<Program>(test::registry(), "eltwise_sweep");
    prog->add_input("a", Layout(PartialShape{Dimension(), Dimension()}, t));
    prog->add_input("b", Layout(PartialShape{1, Dimension()}, t));
    prog->add_node("elt", "eltwise", {"a", "b"}, mode("mul"));
    prog->add_output("elt");
    prog->build();
    auto net = Network::create(prog, test::engine(), opts);
    InferRequest req(net);

    const std::vector<Shape> shapes = {{1, 1},   {3, 1},   {13, 3}, {13, 3}, {16, 16}, {17, 13},
                                       {1, 255}, {2, 257}, {13, 3}, {1, 1},  {1, 1}};
    std::set<Shape> seen;
    Shape prev;
    for (size_t step = 0; step < shapes.size(); ++step) {
        const Shape& s = shapes[step];
        const HostTensor a = test::random_tensor(t, s, 10 + step, -50, 50);
        const HostTensor b = test::random_tensor(t, Shape{1, s[1]}, 20 + step, -50, 50);
        req.set_input("a", a);
        req.set_input("b", b);
        req.infer();
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), s) << "step " << step;
        EXPECT_EQ(test::max_abs_diff(y, naive_eltwise("mul", a, b, s)), 0.0) << "step " << step;
        const Counters& c = node_counters(req, "elt");
        test::expect_sweep_counters(c, opts.use_dynamic_impls, s == prev, seen.count(s) > 0, step);
        seen.insert(s);
        prev = s;
    }
}

TEST(EltwiseDynamic, OneInstanceFollowsChangingShapesWithDynamicImpl) {
    sweep(NetworkOptions{}, DataType::f32);
    sweep(NetworkOptions{}, DataType::i32);
}

TEST(EltwiseDynamic, OneInstanceFollowsChangingShapesWithStaticImpls) {
    NetworkOptions opts;
    opts.use_dynamic_impls = false;
    sweep(opts, DataType::f32);
    sweep(opts, DataType::i64);
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

Attributes mode_attrs(const std::string& mode) {
    Attributes a;
    a.set("mode", mode);
    return a;
}

// a: [n, 1, 5]; b: [r, 1] with r = 4 for even n and 1 for odd n, so the output
// [n, r, 5] broadcasts a along dim 1 and b along dims 0 and 2 (or everywhere).
std::shared_ptr<Program> broadcast_program(DataType t, const std::string& mode) {
    return test::single_node_program("eltwise", {Layout({Dimension(), 1, 5}, t), Layout({Dimension(), 1}, t)},
                                     mode_attrs(mode));
}

std::function<OclInputs(int64_t, uint64_t)> broadcast_inputs(DataType t, double a_low, double a_high, double b_low,
                                                             double b_high) {
    return [=](int64_t n, uint64_t seed) {
        const int64_t r = n % 2 == 0 ? 4 : 1;
        return OclInputs{{"in0", test::random_tensor(t, Shape{n, 1, 5}, seed, a_low, a_high)},
                         {"in1", test::random_tensor(t, Shape{r, 1}, seed + 1000, b_low, b_high)}};
    };
}

// f32: 1e-5 relative (float math against the host's double math rounded once).
constexpr double kF32Rtol = 1e-5, kF32Atol = 1e-7;

TEST(EltwiseOcl, BroadcastSweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = broadcast_program(DataType::f32, "mul");
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, kOclSizes, dynamic, broadcast_inputs(DataType::f32, -2, 2, -2, 2), kF32Rtol, kF32Atol);
}

TEST(EltwiseOcl, EveryFloatModeMatchesCpuOnTheDynamicImpl) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (const std::string& mode : test::registry()->op("eltwise").def.attrs.at(0).allowed) {
        SCOPED_TRACE(mode);
        // pow takes positive bases; div keeps away from zero divisors.
        const double a_low = mode == "pow" ? 0.1 : -2.0;
        const double b_low = mode == "div" ? 0.5 : -2.0;
        ocl_sweep(eng, broadcast_program(DataType::f32, mode), {1, 16, 255}, true,
                  broadcast_inputs(DataType::f32, a_low, 2.0, b_low, 2.0), kF32Rtol, kF32Atol);
    }
}

// Integers must match exactly, wrap-around included: i8 and u8 products and
// differences overflow their type with these ranges, i32 ones do not.
TEST(EltwiseOcl, IntegerModesMatchCpuExactlyIncludingWrapAround) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (DataType t : {DataType::i32, DataType::i64, DataType::i8, DataType::u8}) {
        for (const char* mode : {"add", "sub", "mul", "min", "max", "squared_diff"}) {
            SCOPED_TRACE(std::string(to_string(t)) + " " + mode);
            const bool narrow = t == DataType::i8 || t == DataType::u8;
            const double low = narrow ? -128 : -100000, high = narrow ? 256 : 100000;
            ocl_sweep(eng, broadcast_program(t, mode), {3, 16}, true, broadcast_inputs(t, low, high, low, high), 0, 0);
        }
    }
}

TEST(EltwiseOcl, IntegerDivRunsOnTheHostImplAndStillReportsDivisionByZero) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    InferRequest req(Network::create(broadcast_program(DataType::i32, "div"), eng, NetworkOptions{}));
    req.set_input("in0", HostTensor::from_int64(DataType::i32, Shape{2, 1, 5}, {7, -7, 9, 10, 11, 1, 2, 3, 4, 5}));
    req.set_input("in1", HostTensor::from_int64(DataType::i32, Shape{1, 1}, {2}));
    req.infer();
    EXPECT_EQ(req.get_output(0).to_int64(), std::vector<int64_t>({3, -3, 4, 5, 5, 0, 1, 1, 2, 2}));
    for (const NodeStats& s : req.last_run().nodes)
        if (s.node == "node") {
            EXPECT_EQ(s.impl.find("_ocl_"), std::string::npos) << s.impl;
        }
    req.set_input("in1", HostTensor::from_int64(DataType::i32, Shape{1, 1}, {0}));
    EXPECT_THROW(req.infer(), Error);
}

// Same shapes take the kernel's flat float4 path (grid-stride, tail elements
// done one by one), other shapes its broadcast path. In the shape-agnostic
// build the choice is made on every run, so one request alternates: b is [n]
// (same shape) except for n == 16, where it is [1] (broadcast). The lengths hit
// every tail of 4 (1, 3, 13, 17, 255, 257).
std::shared_ptr<Program> flat_program(DataType t, const std::string& mode) {
    return test::single_node_program("eltwise", {Layout({Dimension()}, t), Layout({Dimension()}, t)}, mode_attrs(mode));
}

std::function<OclInputs(int64_t, uint64_t)> flat_inputs(DataType t, double low, double high) {
    return [=](int64_t n, uint64_t seed) {
        return OclInputs{{"in0", test::random_tensor(t, Shape{n}, seed, low, high)},
                         {"in1", test::random_tensor(t, Shape{n == 16 ? 1 : n}, seed + 1000, low, high)}};
    };
}

TEST(EltwiseOcl, SameShapesTakeTheVectorPathAndAlternateWithBroadcastOnOneRequest) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = flat_program(DataType::f32, "sub");
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, kOclSizes, dynamic, flat_inputs(DataType::f32, -2, 2), kF32Rtol, kF32Atol);
}

// The vector path for every element width: integers exactly (i8 products
// wrap), f16 within one rounding step.
TEST(EltwiseOcl, SameShapesVectorPathMatchesCpuForIntegersAndF16) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    ocl_sweep(eng, flat_program(DataType::i8, "mul"), {3, 17, 257}, true, flat_inputs(DataType::i8, -128, 128), 0, 0);
    ocl_sweep(eng, flat_program(DataType::i64, "sub"), {13, 16, 255}, true, flat_inputs(DataType::i64, -100000, 100000),
              0, 0);
    ocl_sweep(eng, flat_program(DataType::f16, "add"), {1, 17, 255}, true, flat_inputs(DataType::f16, -2, 2), 1e-3,
              1e-4);
}

// f16 goes through vload_half / vstore_half with float math: one f16 rounding
// step (2^-11 relative) at most.
TEST(EltwiseOcl, F16AddMatchesCpuOnBothImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = broadcast_program(DataType::f16, "add");
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, {1, 16, 17, 16}, dynamic, broadcast_inputs(DataType::f16, -2, 2, -2, 2), 1e-3, 1e-4);
}

}   // namespace
}   // namespace dynrt
