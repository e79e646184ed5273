// activation: shape-inference table, every impl against the reference for
// every function over a dtype x shape matrix, one instance fed changing shapes,
// the reference against hand-computed values, and NaN and infinities: the
// reference against their IEEE values, every impl (cpu vectorised loops,
// OpenCL) and the fused post-ops (oneDNN, OpenCL) against the reference.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "dynrt/network.hpp"

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
    for (const Layout& in :
         {Layout({2, 3}, DataType::f32), Layout({Dimension(), 4}, DataType::f16),
          Layout({Dimension(1, 8), Dimension(), 7}, DataType::f32), Layout(PartialShape{}, DataType::f32),
          Layout({0, 5}, DataType::f32), Layout({3}, DataType::i32), Layout({Dimension(), 2}, DataType::i64),
          Layout({4}, DataType::u8), Layout({0}, DataType::i8)})
        rows.push_back({{in}, func_attrs("relu"), {in}});
    const Layout f3({3}, DataType::f32);
    for (const char* f : {"abs", "neg", "sign", "identity"})
        rows.push_back({{Layout({3}, DataType::i8)}, func_attrs(f), {Layout({3}, DataType::i8)}});
    rows.push_back({{Layout({3}, DataType::i64)}, func_attrs("clamp", -2, 5), {Layout({3}, DataType::i64)}});
    rows.push_back({{Layout({3}, DataType::i32)}, func_attrs("gelu"), {}, {"func", "gelu", "floating", "i32[3]"}});
    rows.push_back({{Layout({3}, DataType::u8)}, func_attrs("floor"), {}, {"func", "floor", "u8[3]"}});
    rows.push_back({{Layout({3}, DataType::boolean)}, func_attrs("relu"), {}, {"inputs", "boolean[3]"}});
    rows.push_back({{f3}, {}, {}, {"func"}});
    rows.push_back({{f3}, func_attrs("swishy"), {}, {"swishy"}});
    rows.push_back({{f3}, func_attrs("clamp", 2.0, 1.0), {}, {"clamp"}});
    rows.push_back({{f3}, func_attrs("celu"), {}, {"alpha", "celu"}});
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

// The functions' parameters in the impl tests: each one's own kind of value.
Attributes params_of(const std::string& func) {
    if (func == "clamp") return func_attrs(func, -0.5, 0.8);
    if (func == "leaky_relu") return func_attrs(func, 0.1);
    if (func == "selu") return func_attrs(func, 1.6733, 1.0507);
    if (func == "hard_sigmoid") return func_attrs(func, 0.2, 0.5);
    if (func == "shrink") return func_attrs(func, 0.5, 0.3);
    return func_attrs(func, 0.7);
}

// Inputs within each function's domain (NaN outside it would also match, but
// test nothing).
std::pair<double, double> domain_of(const std::string& func) {
    if (func == "sqrt" || func == "log") return {0.01, 4.0};
    if (func == "asin" || func == "acos" || func == "atanh") return {-0.99, 0.99};
    if (func == "acosh") return {1.0, 5.0};
    return {-4.0, 4.0};
}

// The functions the cpu's vectorised f32 loops take (the others, and f16 and
// integers, stay on the reference impl).
bool has_fast_loop(const std::string& func) {
    static const std::vector<std::string> fast = {"relu",       "gelu",  "gelu_tanh",    "silu",     "sigmoid",
                                                  "tanh",       "exp",   "abs",          "neg",      "elu",
                                                  "leaky_relu", "clamp", "hswish",       "softplus", "identity",
                                                  "reciprocal", "erf",   "hard_sigmoid", "softsign"};
    return std::find(fast.begin(), fast.end(), func) != fast.end();
}

// One run per function (each OpenCL build compiles a program): 14 elements,
// three vectors and a tail of two. The dynamic sequences below cover shape
// changes and the other tails.
TEST(ActivationImpls, EveryImplMatchesTheReferenceForEveryFunction) {
    for (const std::string& func : test::registry()->op("activation").def.attrs.at(0).allowed) {
        const auto [low, high] = domain_of(func);
        // f16 shares the f32 math after the load: two functions cover its path.
        const bool f16 = func == "silu" || func == "gelu";
        for (DataType t : {DataType::f32, DataType::f16}) {
            if (t == DataType::f16 && !f16) continue;
            SCOPED_TRACE(func + " " + to_string(t));
            const test::OpSetup s{"activation", params_of(func), {Layout({Dimension(), 7}, t)}, {}};
            const bool fast = t == DataType::f32 && has_fast_loop(func);
            test::expect_impls_match_reference(s, test::random_runs(t, {{{2, 7}}}, 3, low, high), tol(t),
                                               fast ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
        }
    }
}

// The two smallest and two largest values of an integer type.
std::vector<int64_t> extremes(DataType t) {
    switch (t) {
        case DataType::i8: return {-128, -127, 126, 127};
        case DataType::u8: return {0, 1, 254, 255};
        case DataType::i32: return {INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, INT32_MAX};
        default: return {INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, INT64_MAX};
    }
}

// 17 random values and the type's four extremes (where neg and abs wrap):
// five vectors and a tail of one.
test::Run int_run(DataType t) {
    const HostTensor r = test::random_tensor(t, Shape{17}, 5, -3e9, 3e9);
    std::vector<int64_t> v = r.to_int64();
    for (int64_t e : extremes(t)) v.push_back(e);
    return {HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v)};
}

// Integer inputs: exact. i8 and i64 (the narrowest and the widest OpenCL
// type) take every function; u8 and i32 the ones whose code differs by sign
// or width. Clamp bounds inside and beyond the type's range.
TEST(ActivationImpls, IntegerFunctionsMatchTheReferenceExactly) {
    const Attributes clamp_in = func_attrs("clamp", -5, 100), clamp_out = func_attrs("clamp", -1e30, 7.5);
    const std::vector<Attributes> all = {func_attrs("relu"), func_attrs("abs"),      func_attrs("neg"),
                                         func_attrs("sign"), func_attrs("identity"), clamp_in,
                                         clamp_out};
    const std::vector<std::pair<DataType, std::vector<Attributes>>> cases = {
        {DataType::i8, all},
        {DataType::i64, all},
        {DataType::u8, {func_attrs("neg"), func_attrs("abs"), func_attrs("sign"), clamp_in}},
        {DataType::i32, {func_attrs("neg"), func_attrs("abs"), clamp_out}}};
    for (const auto& [t, funcs] : cases)
        for (const Attributes& a : funcs) {
            SCOPED_TRACE(a.to_string() + " " + to_string(t));
            const test::OpSetup s{"activation", a, {Layout({Dimension()}, t)}, {}};
            test::expect_impls_match_reference(s, {int_run(t)}, {}, test::kOptimisedCpuImpls);
        }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(ActivationDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    const std::vector<std::vector<Shape>> rows = {{{1, 1}},   {{1, 3}},   {{2, 13}}, {{2, 13}}, {{1, 16}}, {{3, 17}},
                                                  {{1, 255}}, {{1, 257}}, {{2, 13}}, {{1, 1}},  {{1, 1}}};
    std::vector<std::vector<Shape>> tails, flat;
    for (int64_t n : test::tail_sizes()) tails.push_back({Shape{n, 3}});
    for (int64_t n : test::tail_sizes()) flat.push_back({Shape{n}});
    flat.push_back({Shape{0}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({"activation",
                               func_attrs("leaky_relu", 0.25),
                               {Layout(PartialShape::dynamic_of_rank(2), DataType::f32)},
                               {}},
                              test::random_runs(DataType::f32, rows, 100, -3, 3), o);
        test::expect_sequence({"activation", func_attrs("gelu"), {Layout({Dimension(), 3}, DataType::f32)}, {}},
                              test::random_runs(DataType::f32, tails, 200, -3, 3), o);
        // Integers take the kernel's integer path (ACC_TYPE char).
        test::expect_sequence(
            {"activation", func_attrs("clamp", -5, 100), {Layout(PartialShape::dynamic_of_rank(1), DataType::i8)}, {}},
            test::random_runs(DataType::i8, flat, 300, -128, 128), o);
    }
}

// ---- the reference's values ----------------------------------------------------

HostTensor run(const std::string& func, const HostTensor& x, double alpha = 0.0, double beta = 0.0,
               const std::string& engine = "cpu") {
    auto prog = test::single_node_program("activation", {x.layout()}, func_attrs(func, alpha, beta));
    return test::run_once(prog, {x}, NetworkOptions{}, engine);
}

// cpu, and ocl where an OpenCL device is present.
std::vector<std::string> engines() {
    std::vector<std::string> e = {"cpu"};
    if (test::ocl_engine()) e.push_back("ocl");
    return e;
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
        {"erf", 0, 0, {-0.995322265, -0.5204998778, 0, 0.8427007929, 0.9999779095}},
        {"sin", 0, 0, {-0.9092974268, -0.4794255386, 0, 0.8414709848, 0.1411200081}},
        {"cos", 0, 0, {-0.4161468365, 0.8775825619, 1, 0.5403023059, -0.9899924966}},
        {"tan", 0, 0, {2.185039863, -0.5463024898, 0, 1.557407725, -0.1425465431}},
        {"atan", 0, 0, {-1.107148718, -0.463647609, 0, 0.7853981634, 1.249045772}},
        {"sinh", 0, 0, {-3.626860408, -0.5210953055, 0, 1.175201194, 10.01787493}},
        {"cosh", 0, 0, {3.762195691, 1.127625965, 1, 1.543080635, 10.067662}},
        {"asinh", 0, 0, {-1.443635475, -0.4812118251, 0, 0.881373587, 1.818446459}},
        {"floor", 0, 0, {-2, -1, 0, 1, 3}},
        {"ceil", 0, 0, {-2, 0, 0, 1, 3}},
        {"sign", 0, 0, {-1, -1, 0, 1, 1}},
        {"softsign", 0, 0, {-2.0 / 3.0, -1.0 / 3.0, 0, 0.5, 0.75}},
        // gamma * (x if x > 0 else alpha (e^x - 1)), gamma in beta
        {"selu", 1.6733, 1.0507, {-1.520198435, -0.691772734, 0, 1.0507, 3.1521}},
        // max(0, x) + min(0, alpha (e^(x / alpha) - 1))
        {"celu", 2.0, 0, {-1.264241118, -0.4423984339, 0, 1, 3}},
        // max(0, min(1, alpha x + beta))
        {"hard_sigmoid", 0.2, 0.5, {0.1, 0.4, 0.5, 0.7, 1}},
        // x if x > alpha else 0: 1 is not above 1
        {"thresholded_relu", 1.0, 0, {0, 0, 0, 0, 3}},
        // lambd 0.5 in alpha, bias 0.3 in beta: -0.5 is not below -0.5
        {"shrink", 0.5, 0.3, {-1.7, 0, 0, 0.7, 2.7}},
        {"mish", 0, 0, {-0.2525014827, -0.2207437747, 0, 0.8650983883, 2.986535005}},
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

TEST(ActivationValues, InverseFunctionsWithinTheirDomains) {
    const HostTensor x = HostTensor::from_floats(Shape{3}, {-0.5f, 0.f, 0.5f});
    const std::vector<std::pair<std::string, std::vector<double>>> cases = {
        {"asin", {-0.5235987756, 0, 0.5235987756}},
        {"acos", {2.094395102, 1.570796327, 1.047197551}},
        {"atanh", {-0.5493061443, 0, 0.5493061443}}};
    for (const auto& [func, want] : cases) {
        const HostTensor y = run(func, x);
        for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << func << " at " << i;
    }
    const HostTensor y = run("acosh", HostTensor::from_floats(Shape{3}, {1.f, 2.f, 4.f}));
    const double want[] = {0, 1.316957897, 2.063437069};
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << "acosh at " << i;
}

TEST(ActivationValues, RoundTakesHalvesToEvenAndReciprocalOfZeroIsInfinite) {
    const HostTensor x = HostTensor::from_floats(Shape{8}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.4f, -2.6f});
    for (const std::string& o : engines()) {
        SCOPED_TRACE(o);
        const HostTensor y = run("round", x, 0, 0, o);
        const double want[] = {-2, -2, 0, 0, 2, 2, 2, -3};
        for (size_t i = 0; i < 8; ++i) EXPECT_EQ(y.get_as_double(i), want[i]) << "round at " << i;
        const HostTensor r = run("reciprocal", HostTensor::from_floats(Shape{3}, {0.f, -0.f, 4.f}), 0, 0, o);
        EXPECT_EQ(r.get_as_double(0), std::numeric_limits<double>::infinity());
        EXPECT_EQ(r.get_as_double(1), -std::numeric_limits<double>::infinity());
        EXPECT_EQ(r.get_as_double(2), 0.25);
    }
}

TEST(ActivationValues, SignKeepsNanAndIntegersWrapLikeTheirType) {
    const HostTensor s = run("sign", HostTensor::from_floats(Shape{2}, {std::nanf(""), -0.f}));
    EXPECT_TRUE(std::isnan(s.get_as_double(0)));
    EXPECT_EQ(s.get_as_double(1), 0.0);
    const HostTensor i8 = HostTensor::from_int64(DataType::i8, Shape{4}, {-128, -1, 0, 127});
    const HostTensor u8 = HostTensor::from_int64(DataType::u8, Shape{3}, {0, 1, 255});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        EXPECT_EQ(run("neg", i8, 0, 0, e).to_int64(), (std::vector<int64_t>{-128, 1, 0, -127}));
        EXPECT_EQ(run("abs", i8, 0, 0, e).to_int64(), (std::vector<int64_t>{-128, 1, 0, 127}));
        EXPECT_EQ(run("sign", i8, 0, 0, e).to_int64(), (std::vector<int64_t>{-1, -1, 0, 1}));
        EXPECT_EQ(run("relu", i8, 0, 0, e).to_int64(), (std::vector<int64_t>{0, 0, 0, 127}));
        EXPECT_EQ(run("neg", u8, 0, 0, e).to_int64(), (std::vector<int64_t>{0, 255, 1}));
        EXPECT_EQ(run("clamp", u8, -1e30, 7.5, e).to_int64(), (std::vector<int64_t>{0, 1, 7}));
    }
}

TEST(ActivationValues, IntegerClampIsExactBeyondDoublePrecision) {
    const int64_t big = (int64_t{1} << 53) + 1;   // rounds to 2^53 as a double
    const std::vector<int64_t> v = {std::numeric_limits<int64_t>::min(), -big, big,
                                    std::numeric_limits<int64_t>::max()};
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{4}, v);
    const double inf = std::numeric_limits<double>::infinity();
    for (const std::string& o : engines()) {
        SCOPED_TRACE(o);
        EXPECT_EQ(run("clamp", x, -inf, inf, o).to_int64(), v);
        EXPECT_EQ(run("clamp", x, -3, 1e19, o).to_int64(),
                  (std::vector<int64_t>{-3, -3, big, std::numeric_limits<int64_t>::max()}));
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

// ---- NaN and infinities ---------------------------------------------------------
//
// One behaviour on every impl and device: a NaN input gives NaN for every
// function (relu, clamp, hard_sigmoid, thresholded_relu, shrink, celu
// included: a comparison with NaN is false, so `x > 0 ? x : 0` would give 0),
// and +-inf give the function's formula evaluated in IEEE arithmetic, as numpy
// and onnxruntime compute it (so inf * 0 in gelu(-inf), silu(-inf),
// hswish(-inf), mish(-inf) and inf / inf in softsign(+-inf) are NaN).

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// f(NaN), f(+inf), f(-inf) with params_of(func)'s alpha and beta, written out
// from the functions' definitions (README table), not from the impl.
std::map<std::string, std::vector<double>> ieee_specials() {
    const double pi2 = std::atan2(1.0, 0.0);
    return {
        {"relu", {kNan, kInf, 0}},
        {"gelu", {kNan, kInf, kNan}},
        {"gelu_tanh", {kNan, kInf, kNan}},
        {"silu", {kNan, kInf, kNan}},
        {"sigmoid", {kNan, 1, 0}},
        {"tanh", {kNan, 1, -1}},
        {"exp", {kNan, kInf, 0}},
        {"abs", {kNan, kInf, kInf}},
        {"neg", {kNan, -kInf, kInf}},
        {"sqrt", {kNan, kInf, kNan}},
        {"log", {kNan, kInf, kNan}},
        {"elu", {kNan, kInf, -0.7}},           // alpha 0.7
        {"leaky_relu", {kNan, kInf, -kInf}},   // slope 0.1
        {"clamp", {kNan, 0.8, -0.5}},          // [-0.5, 0.8]
        {"hswish", {kNan, kInf, kNan}},
        {"softplus", {kNan, kInf, 0}},
        {"identity", {kNan, kInf, -kInf}},
        {"reciprocal", {kNan, 0, 0}},
        {"erf", {kNan, 1, -1}},
        {"sin", {kNan, kNan, kNan}},
        {"cos", {kNan, kNan, kNan}},
        {"tan", {kNan, kNan, kNan}},
        {"asin", {kNan, kNan, kNan}},
        {"acos", {kNan, kNan, kNan}},
        {"atan", {kNan, pi2, -pi2}},
        {"sinh", {kNan, kInf, -kInf}},
        {"cosh", {kNan, kInf, kInf}},
        {"asinh", {kNan, kInf, -kInf}},
        {"acosh", {kNan, kInf, kNan}},
        {"atanh", {kNan, kNan, kNan}},
        {"floor", {kNan, kInf, -kInf}},
        {"ceil", {kNan, kInf, -kInf}},
        {"round", {kNan, kInf, -kInf}},
        {"sign", {kNan, 1, -1}},
        {"selu", {kNan, kInf, -1.0507 * 1.6733}},   // gamma (beta) x alpha x (e^-inf - 1)
        {"celu", {kNan, kInf, -0.7}},               // alpha 0.7
        {"hard_sigmoid", {kNan, 1, 0}},             // 0.2 x + 0.5 held to [0, 1]
        {"thresholded_relu", {kNan, kInf, 0}},      // threshold 0.7
        {"softsign", {kNan, kNan, kNan}},
        {"shrink", {kNan, kInf, -kInf}},   // lambd 0.5, bias 0.3
        {"mish", {kNan, kInf, kNan}},
    };
}

// NaN must be NaN, an infinity itself, a finite value within `rel` of it.
void expect_ieee(double got, double want, double rel, const std::string& what) {
    if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", want NaN";
    } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << what;
    } else {
        EXPECT_NEAR(got, want, rel * (1 + std::fabs(want))) << what;
    }
}

TEST(ActivationSpecials, ReferenceGivesTheIeeeValuesOfNanAndInfinitiesForEveryFunction) {
    const std::map<std::string, std::vector<double>> table = ieee_specials();
    const std::vector<std::string> funcs = test::registry()->op("activation").def.attrs.at(0).allowed;
    ASSERT_EQ(table.size(), funcs.size()) << "a function without expected specials";
    NetworkOptions reference_only;
    reference_only.host_reference_only = true;
    for (DataType t : {DataType::f32, DataType::f16}) {
        HostTensor x(t, Shape{3});
        x.set_from_double(0, kNan);
        x.set_from_double(1, kInf);
        x.set_from_double(2, -kInf);
        for (const std::string& func : funcs) {
            const std::vector<double>& want = table.at(func);
            const auto prog = test::single_node_program("activation", {x.layout()}, params_of(func));
            const HostTensor y = test::run_once(prog, {x}, reference_only);
            for (size_t i = 0; i < 3; ++i)
                expect_ieee(y.get_as_double(i), want[i], t == DataType::f16 ? 1e-3 : 1e-6,
                            func + " " + to_string(t) + " of " + std::to_string(x.get_as_double(i)));
        }
    }
}

// 67 elements (the vectorised loops' full vectors and a tail; 16 OpenCL
// vectors and a tail of 3): NaN, +-inf, +-100 (exp and cosh overflow, sigmoid
// and tanh saturate), then values of the function's domain.
HostTensor specials_input(DataType t, const std::string& func) {
    const auto [low, high] = domain_of(func);
    HostTensor x = test::random_tensor(t, Shape{67}, 11, low, high);
    const double specials[] = {kNan, kInf, -kInf, 100.0, -100.0, -kNan};
    for (size_t i = 0; i < x.count(); i += 3) x.set_from_double(i, specials[(i / 3) % 6]);
    return x;
}

// Every impl (the reference, the cpu's vectorised loops, both OpenCL impls)
// gives the reference's NaN, infinities and values on the same input.
TEST(ActivationSpecials, EveryImplKeepsNanAndInfinitiesAsTheReferenceDoes) {
    for (const std::string& func : test::registry()->op("activation").def.attrs.at(0).allowed) {
        // f16 shares the f32 math after the load: relu and clamp cover its path.
        for (DataType t : {DataType::f32, DataType::f16}) {
            if (t == DataType::f16 && func != "relu" && func != "clamp") continue;
            SCOPED_TRACE(func + " " + to_string(t));
            const test::OpSetup s{"activation", params_of(func), {Layout({Dimension()}, t)}, {}};
            const bool fast = t == DataType::f32 && has_fast_loop(func);
            test::expect_impls_match_reference(s, {{specials_input(t, func)}}, tol(t),
                                               fast ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
        }
    }
}

const NodeStats& stats_of(const InferRequest& r, const std::string& node) {
    for (const NodeStats& s : r.last_run().nodes)
        if (s.node == node) return s;
    throw Error("no stats for node " + node);
}

// fully_connected -> activation, fused: x holds NaN (row 0), +inf (row 1)
// and -inf (row 2) and the weights are positive, so the product's rows are
// NaN, +inf and -inf before the post-op. The fused result must equal the
// unfused reference's: cpu (oneDNN post-ops on the dynamic and static plans,
// or the host impl after the primitive) for every function, OpenCL
// (FUSED_OPS built from the activation's expression) for relu and clamp.
void expect_fused_specials(const std::string& engine, const std::vector<std::string>& funcs) {
    const EnginePtr eng = engine == "cpu" ? test::engine() : test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no " << engine << " engine";
    HostTensor x = test::random_tensor(DataType::f32, Shape{5, 16}, 21, -1, 1);
    x.set_from_double(3, kNan);
    x.set_from_double(16 + 5, kInf);
    x.set_from_double(32 + 9, -kInf);
    for (const std::string& func : funcs) {
        auto p = std::make_shared<Program>(test::registry());
        p->add_input("x", Layout(PartialShape{Dimension(), 16}, DataType::f32));
        p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 16}, 4, 0.5, 1.5));
        p->add_node("fc", "fully_connected", {"x", "w"});
        p->add_node("act", "activation", {"fc"}, params_of(func));
        p->add_output("act");
        p->build();
        NetworkOptions unfused;
        unfused.fusion = false;
        unfused.host_reference_only = true;
        InferRequest ref(Network::create(p, test::engine(), unfused));
        ref.set_input("x", x);
        ref.infer();
        for (bool dynamic : {true, false}) {
            SCOPED_TRACE(func + (dynamic ? " dynamic" : " static") + " on " + engine);
            NetworkOptions opts;
            opts.use_dynamic_impls = dynamic;
            opts.async_compile = false;
            InferRequest fused(Network::create(p, eng, opts));
            fused.set_input("x", x);
            fused.infer();
            EXPECT_EQ(stats_of(fused, "fc").counters.fused_runs, 1u) << stats_of(fused, "fc").impl;
            EXPECT_EQ(stats_of(fused, "act").impl, "fused");
            const HostTensor& got = fused.get_output(0);
            const HostTensor& want = ref.get_output(0);
            // The specials' rows hold what the post-op made of NaN, +inf, -inf.
            EXPECT_TRUE(std::isnan(want.get_as_double(0))) << "the reference's row 0 gave " << want.get_as_double(0);
            EXPECT_TRUE(std::isnan(got.get_as_double(0))) << "row 0 gave " << got.get_as_double(0);
            // The product is summed in another order by oneDNN than by the
            // reference loop: an output that cancels to near 0 (0.006 from
            // 16 terms near 1) carries a relative error of about 1e-5 into
            // functions with a pole there (reciprocal), hence rtol 1e-4.
            test::expect_close(got, want, test::Tolerance{1e-4, 2e-6});
        }
    }
}

// Every function: the ones with a oneDNN post-op inside the primitive, the
// others (relu, clamp and exp among them: oneDNN's max/min lose NaN there)
// by the host impl after it.
TEST(ActivationSpecials, FusedPostOpsKeepNanAndInfinitiesOnTheCpu) {
    expect_fused_specials("cpu", test::registry()->op("activation").def.attrs.at(0).allowed);
}

TEST(ActivationSpecials, FusedPostOpsKeepNanAndInfinitiesOnTheDevice) {
    expect_fused_specials("ocl", {"relu", "clamp"});
}

}   // namespace
}   // namespace dynrt
