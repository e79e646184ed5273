// Tests of the activation op: shape inference, hand-computed values for every
// function, and one network instance fed a sequence of changing shapes.
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

Attributes func_attrs(const std::string& func, double alpha = 0.0, double beta = 0.0) {
    Attributes a;
    a.set("func", func);
    if (alpha != 0.0) a.set("alpha", alpha);
    if (beta != 0.0) a.set("beta", beta);
    return a;
}

std::vector<Layout> infer(const std::vector<Layout>& inputs, const Attributes& raw) {
    const OpDefinition& def = registry()->op("activation").def;
    const Attributes attrs = Attributes::validate(def.attrs, raw);
    const std::string node = "act";
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

TEST(ActivationShape, OutputEqualsInputLayout) {
    const std::vector<Layout> cases = {
        Layout(PartialShape{2, 3}, DataType::f32),
        Layout(PartialShape{Dimension(), 4}, DataType::f16),
        Layout(PartialShape{Dimension(1, 8), Dimension(), 7}, DataType::f32),
        Layout(PartialShape{}, DataType::f32),   // scalar
        Layout(PartialShape{0, 5}, DataType::f32),
    };
    for (const Layout& in : cases) {
        const std::vector<Layout> out = infer({in}, func_attrs("relu"));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape, in.shape) << in.to_string();
        EXPECT_EQ(out[0].dtype, in.dtype) << in.to_string();
    }
}

TEST(ActivationShape, IntegerInputIsRejected) {
    const std::string msg = error_of([] { infer({Layout(PartialShape{3}, DataType::i32)}, func_attrs("relu")); });
    EXPECT_NE(msg.find("floating"), std::string::npos) << msg;
    EXPECT_NE(msg.find("i32[3]"), std::string::npos) << msg;
}

TEST(ActivationShape, FuncIsRequiredAndChecked) {
    const Layout in(PartialShape{3}, DataType::f32);
    EXPECT_NE(error_of([&] { infer({in}, Attributes()); }).find("func"), std::string::npos);
    const std::string msg = error_of([&] { infer({in}, func_attrs("swishy")); });
    EXPECT_NE(msg.find("swishy"), std::string::npos) << msg;
}

TEST(ActivationShape, ClampWithMinAboveMaxIsRejected) {
    const std::string msg =
        error_of([] { infer({Layout(PartialShape{3}, DataType::f32)}, func_attrs("clamp", 2.0, 1.0)); });
    EXPECT_NE(msg.find("clamp"), std::string::npos) << msg;
}

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const std::string& func, const HostTensor& x, double alpha = 0.0, double beta = 0.0,
               NetworkOptions opts = {}) {
    auto prog = test::single_node_program("activation", {x.layout()}, func_attrs(func, alpha, beta));
    return test::run_once(prog, {x}, opts);
}

struct HandCase {
    std::string func;
    double alpha, beta;
    std::vector<double> expected;   // for x = {-2, -0.5, 0, 1, 3}
};

TEST(ActivationValues, EveryFunctionMatchesHandComputedValues) {
    const std::vector<HandCase> cases = {
        {"relu", 0, 0, {0, 0, 0, 1, 3}},
        {"identity", 0, 0, {-2, -0.5, 0, 1, 3}},
        {"neg", 0, 0, {2, 0.5, 0, -1, -3}},
        {"abs", 0, 0, {2, 0.5, 0, 1, 3}},
        {"leaky_relu", 0.1, 0, {-0.2, -0.05, 0, 1, 3}},
        {"elu", 1.0, 0, {-0.8646647168, -0.3934693403, 0, 1, 3}},
        {"elu", 0.5, 0, {-0.4323323584, -0.19673467015, 0, 1, 3}},
        {"clamp", -1.0, 2.0, {-1, -0.5, 0, 1, 2}},
        // x * clip(x + 3, 0, 6) / 6
        {"hswish", 0, 0, {-1.0 / 3.0, -0.5 * 2.5 / 6.0, 0, 4.0 / 6.0, 3}},
        {"sigmoid", 0, 0, {0.119202922, 0.3775406688, 0.5, 0.7310585786, 0.9525741268}},
        {"silu", 0, 0, {-0.238405844, -0.1887703344, 0, 0.7310585786, 2.85772238}},
        {"tanh", 0, 0, {-0.9640275801, -0.4621171573, 0, 0.761594156, 0.9950547537}},
        {"gelu", 0, 0, {-0.0455002639, -0.1542687694, 0, 0.8413447461, 2.995950306}},
        {"gelu_tanh", 0, 0, {-0.04540230591, -0.1542859902, 0, 0.8411919906, 2.996362608}},
        {"softplus", 0, 0, {0.126928011, 0.4740769842, 0.6931471806, 1.313261688, 3.048587352}},
        {"exp", 0, 0, {0.1353352832, 0.6065306597, 1, 2.718281828, 20.08553692}},
    };
    const HostTensor x = HostTensor::from_floats(Shape{5}, {-2.f, -0.5f, 0.f, 1.f, 3.f});
    for (const HandCase& c : cases) {
        const HostTensor y = run(c.func, x, c.alpha, c.beta);
        ASSERT_EQ(y.shape(), Shape{5});
        for (size_t i = 0; i < 5; ++i)
            EXPECT_NEAR(y.get_as_double(i), c.expected[i], 1e-6 * (1 + std::fabs(c.expected[i])))
                << c.func << " alpha=" << c.alpha << " at " << i;
    }
}

TEST(ActivationValues, SqrtAndLogOfPositiveInputs) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 3}, {0.25f, 1.f, 4.f});
    const HostTensor s = run("sqrt", x);
    const HostTensor l = run("log", x);
    const double want_s[] = {0.5, 1.0, 2.0};
    const double want_l[] = {-1.3862943611, 0.0, 1.3862943611};
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(s.get_as_double(i), want_s[i], 1e-7);
        EXPECT_NEAR(l.get_as_double(i), want_l[i], 1e-6);
    }
}

TEST(ActivationValues, SoftplusOfLargeInputDoesNotOverflow) {
    const HostTensor y = run("softplus", HostTensor::from_floats(Shape{2}, {100.f, -100.f}));
    EXPECT_FLOAT_EQ(static_cast<float>(y.get_as_double(0)), 100.f);
    // log1p(e^-100) = 3.7e-44: positive, and tiny.
    EXPECT_GE(y.get_as_double(1), 0.0);
    EXPECT_LT(y.get_as_double(1), 1e-40);
}

// Independent formula for random inputs.
double gelu_ref(double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(ActivationValues, RandomF32AndF16MatchNaiveGelu) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        const HostTensor x = test::random_tensor(t, Shape{3, 17}, 7, -4.0, 4.0);
        const HostTensor y = run("gelu", x);
        ASSERT_EQ(y.dtype(), t);
        const double tol = t == DataType::f16 ? 4e-3 : 1e-6;
        for (size_t i = 0; i < x.count(); ++i) {
            const double want = gelu_ref(x.get_as_double(i));
            EXPECT_NEAR(y.get_as_double(i), want, tol * (1 + std::fabs(want))) << to_string(t) << " at " << i;
        }
    }
}

// ---- 3. changing shapes on one instance ----------------------------------------

using test::node_counters;

void sweep(NetworkOptions opts) {
    auto prog = std::make_shared<Program>(registry(), "activation_sweep");
    prog->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    prog->add_node("act", "activation", {"x"}, func_attrs("leaky_relu", 0.25));
    prog->add_output("act");
    prog->build();
    auto net = Network::create(prog, test::engine(), opts);
    InferRequest req(net);

    const std::vector<Shape> shapes = {{1, 1},  {1, 3},   {2, 13}, {2, 13}, {1, 16}, {3, 17},
                                       {1, 255}, {1, 257}, {2, 13}, {1, 1},  {1, 1}};
    std::set<Shape> seen;
    Shape prev;
    for (size_t step = 0; step < shapes.size(); ++step) {
        const Shape& s = shapes[step];
        const HostTensor x = test::random_tensor(DataType::f32, s, 100 + step, -3.0, 3.0);
        req.set_input("x", x);
        req.infer();
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), s) << "step " << step;
        for (size_t i = 0; i < x.count(); ++i) {
            const double v = x.get_as_double(i);
            ASSERT_NEAR(y.get_as_double(i), v >= 0 ? v : 0.25 * v, 1e-6) << "step " << step << " at " << i;
        }
        const Counters& c = node_counters(req, "act");
        test::expect_sweep_counters(c, opts.use_dynamic_impls, s == prev, seen.count(s) > 0, step);
        seen.insert(s);
        prev = s;
    }
}

TEST(ActivationDynamic, OneInstanceFollowsChangingShapesWithDynamicImpl) { sweep(NetworkOptions{}); }

TEST(ActivationDynamic, OneInstanceFollowsChangingShapesWithStaticImpls) {
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

Attributes act_attrs(const std::string& func, double alpha = 0.0, double beta = 0.0) {
    Attributes a;
    a.set("func", func);
    a.set("alpha", alpha);
    a.set("beta", beta);
    return a;
}

// x in [low, high) for an [n, 3] input.
std::function<OclInputs(int64_t, uint64_t)> act_inputs(DataType t, double low, double high) {
    return [t, low, high](int64_t n, uint64_t seed) {
        return OclInputs{{"in0", test::random_tensor(t, Shape{n, 3}, seed, low, high)}};
    };
}

// f32 tolerance: 1e-5 relative (float math against the host's double math
// rounded once), plus 2e-6 absolute for the results near zero where 1 + erf(x)
// or 1 + tanh(x) cancel (gelu and gelu_tanh of negative x).
constexpr double kF32Rtol = 1e-5, kF32Atol = 2e-6;

TEST(ActivationOcl, GeluSweepMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("activation", {Layout({Dimension(), 3}, DataType::f32)},
                                                act_attrs("gelu"));
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, kOclSizes, dynamic, act_inputs(DataType::f32, -3.0, 3.0), kF32Rtol, kF32Atol);
}

TEST(ActivationOcl, EveryFunctionMatchesCpuOnTheDynamicImpl) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (const std::string& func : registry()->op("activation").def.attrs.at(0).allowed) {
        SCOPED_TRACE(func);
        const bool positive = func == "sqrt" || func == "log";
        const double alpha = func == "clamp" ? -0.5 : func == "leaky_relu" ? 0.1 : 0.7;
        const double beta = func == "clamp" ? 0.8 : 0.0;
        const auto prog = test::single_node_program("activation", {Layout({Dimension(), 3}, DataType::f32)},
                                                    act_attrs(func, alpha, beta));
        ocl_sweep(eng, prog, {1, 13, 257, 16}, true,
                  act_inputs(DataType::f32, positive ? 0.01 : -4.0, 4.0), kF32Rtol, kF32Atol);
    }
}

// f16 is loaded and stored with vload_half / vstore_half and computed in
// float: at most one f16 rounding step (2^-11 relative) from the host's value.
TEST(ActivationOcl, F16SiluMatchesCpuOnBothImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("activation", {Layout({Dimension(), 3}, DataType::f16)},
                                                act_attrs("silu"));
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, {1, 17, 255, 17}, dynamic, act_inputs(DataType::f16, -4.0, 4.0), 1e-3, 1e-4);
}

}  // namespace
}  // namespace dynrt
