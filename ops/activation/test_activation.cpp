// activation: shape-inference table, every impl against the reference for
// every function over a dtype x shape matrix, one instance fed changing shapes,
// and the reference against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes func_attrs(const std::string& func, double alpha = 0.0, double beta = 0.0) {
    Attributes a = test::attrs({{"func", func}});
    if (alpha != 0.0) a.set("alpha", alpha);
    if (beta != 0.0) a.set("beta", beta);
    return a;
}

// ---- 1. shape inference ------------------------------------------------------

TEST(ActivationShape, OutputEqualsInputLayoutAndBadInputsAreRejected) {
    std::vector<test::ShapeRow> rows;
    for (const Layout& in : {Layout({2, 3}, DataType::f32), Layout({Dimension(), 4}, DataType::f16),
                             Layout({Dimension(1, 8), Dimension(), 7}, DataType::f32),
                             Layout(PartialShape{}, DataType::f32), Layout({0, 5}, DataType::f32)})
        rows.push_back({{in}, func_attrs("relu"), {in}});
    const Layout f3({3}, DataType::f32);
    rows.push_back({{Layout({3}, DataType::i32)}, func_attrs("relu"), {}, {"floating", "i32[3]"}});
    rows.push_back({{f3}, {}, {}, {"func"}});
    rows.push_back({{f3}, func_attrs("swishy"), {}, {"swishy"}});
    rows.push_back({{f3}, func_attrs("clamp", 2.0, 1.0), {}, {"clamp"}});
    test::expect_shapes("activation", rows);
}

// ---- 2. every impl against the reference -----------------------------------------

// f32: 1e-5 relative (float math against the host's double math rounded once),
// plus 2e-6 absolute for the results near zero where 1 + erf(x) or 1 + tanh(x)
// cancel (gelu and gelu_tanh of negative x). f16 is loaded and stored with
// vload_half / vstore_half and computed in float: one f16 rounding step.
test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-3, 1e-4} : test::Tolerance{1e-5, 2e-6};
}

TEST(ActivationImpls, EveryImplMatchesTheReferenceForEveryFunction) {
    for (const std::string& func : test::registry()->op("activation").def.attrs.at(0).allowed) {
        const bool positive = func == "sqrt" || func == "log";
        const double alpha = func == "clamp" ? -0.5 : func == "leaky_relu" ? 0.1 : 0.7;
        const double beta = func == "clamp" ? 0.8 : 0.0;
        // f16 shares the f32 math after the load: two functions cover its path.
        const bool f16 = func == "silu" || func == "gelu";
        for (DataType t : {DataType::f32, DataType::f16}) {
            if (t == DataType::f16 && !f16) continue;
            SCOPED_TRACE(func + " " + to_string(t));
            const test::OpSetup s{"activation", func_attrs(func, alpha, beta), {Layout({Dimension(), 3}, t)}, {}};
            test::expect_impls_match_reference(
                s, test::random_runs(t, {{{1, 3}}, {{257, 3}}}, 3, positive ? 0.01 : -4.0, 4.0), tol(t));
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(ActivationDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    const std::vector<std::vector<Shape>> rows = {{{1, 1}},   {{1, 3}},   {{2, 13}}, {{2, 13}}, {{1, 16}}, {{3, 17}},
                                                  {{1, 255}}, {{1, 257}}, {{2, 13}}, {{1, 1}},  {{1, 1}}};
    std::vector<std::vector<Shape>> tails;
    for (int64_t n : test::tail_sizes()) tails.push_back({Shape{n, 3}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({"activation",
                               func_attrs("leaky_relu", 0.25),
                               {Layout(PartialShape::dynamic_of_rank(2), DataType::f32)},
                               {}},
                              test::random_runs(DataType::f32, rows, 100, -3, 3), o);
        test::expect_sequence({"activation", func_attrs("gelu"), {Layout({Dimension(), 3}, DataType::f32)}, {}},
                              test::random_runs(DataType::f32, tails, 200, -3, 3), o);
    }
}

// ---- the reference's values ----------------------------------------------------

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

}   // namespace
}   // namespace dynrt
