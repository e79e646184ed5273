// softmax, log_softmax and hardmax, along one axis or coerce_2d:
// shape-inference table, every impl against the reference over a dtype x
// mode x shape matrix, one instance fed changing shapes, and hand-computed
// values (ties, NaN, flattened rows) and stability.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;

Attributes axis(int64_t a) { return attrs({{"axis", a}}); }
Attributes with(const std::string& mode, int64_t a, bool coerce_2d) {
    return attrs({{"mode", mode}, {"axis", a}, {"coerce_2d", coerce_2d}});
}
const char* const kModes[] = {"softmax", "log_softmax", "hardmax"};

// ---- 1. shape inference ------------------------------------------------------

TEST(SoftmaxShape, OutputEqualsInputForEveryValidAxisAndBadInputsAreRejected) {
    std::vector<test::ShapeRow> rows;
    for (const Layout& in : {Layout({2, 3}, DataType::f32), Layout({Dimension(), 4}, DataType::f16),
                             Layout({Dimension(1, 8), Dimension(), 7}, DataType::f32), Layout({5}, DataType::f32)}) {
        const auto r = static_cast<int64_t>(in.shape.rank());
        for (int64_t a = -r; a < r; ++a) rows.push_back({{in}, axis(a), {in}});
    }
    const Layout l23({2, 3}, DataType::f32);
    rows.push_back({{l23}, {}, {l23}});   // the default axis is -1
    for (int64_t a : {2, -3, 7}) rows.push_back({{l23}, axis(a), {}, {"axis", std::to_string(a)}});
    rows.push_back({{Layout({3}, DataType::i64)}, {}, {}, {"floating"}});
    rows.push_back({{Layout(PartialShape{}, DataType::f32)}, {}, {}, {"scalar"}});
    const Layout f64({Dimension(), 3}, DataType::f64);
    for (const char* m : {"softmax", "log_softmax", "hardmax"}) {
        rows.push_back({{l23}, with(m, 0, false), {l23}});
        rows.push_back({{f64}, with(m, -2, true), {f64}});
        rows.push_back({{l23}, with(m, 2, true), {}, {"axis", "2"}});
    }
    rows.push_back({{l23}, test::attrs({{"mode", std::string("argmax")}}), {}, {"mode", "argmax"}});
    test::expect_shapes("softmax", rows);
}

// ---- 2. every impl against the reference -----------------------------------------

// A reduction per row: float exp and sum on devices; 1e-7 absolute for the tiny
// probabilities.
test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{2e-3, 1e-5} : test::Tolerance{1e-4, 1e-7};
}

TEST(SoftmaxImpls, EveryImplMatchesTheReferenceOnEveryAxis) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (int64_t a : {-1, 1}) {
            SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(a));
            const test::OpSetup s{"softmax", axis(a), {Layout(PartialShape::dynamic_of_rank(3), t)}, {}};
            // The cpu's vectorised rows: f32 over the last axis.
            const bool fast = t == DataType::f32 && a == -1;
            test::expect_impls_match_reference(
                s, test::random_runs(t, {{{1, 1, 1}}, {{2, 3, 17}}, {{2, 257, 3}}}, 1, -8, 8), tol(t),
                fast ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
        }
    }
}

// Every mode, one axis (first and last) and coerce_2d (the rows flatten every
// dim from axis on), f64 too; size-1 dims and tails are the sequence's. Hardmax inputs are small integers so that rows
// have ties (the first maximum wins).
TEST(SoftmaxImpls, EveryModeMatchesTheReferenceWithOneAxisAndCoerced) {
    const std::vector<std::pair<int64_t, bool>> axes = {{0, false}, {-1, false}, {1, true}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64}) {
        for (const char* m : kModes) {
            const bool hard = std::string(m) == "hardmax";
            const auto runs = test::random_runs(t, {{{2, 3, 17}}, {{3, 0, 2}}}, 3, hard ? -2 : -8, hard ? 2 : 8);
            for (const auto& [a, coerce] : axes) {
                SCOPED_TRACE(std::string(to_string(t)) + " " + m + " axis " + std::to_string(a) +
                             (coerce ? " coerce_2d" : ""));
                // The cpu's vectorised rows: f32 softmax / log_softmax over trailing dims.
                const bool fast = t == DataType::f32 && !hard && (a == -1 || coerce);
                test::expect_impls_match_reference(
                    {"softmax", with(m, a, coerce), {Layout(PartialShape::dynamic_of_rank(3), t)}, {}}, runs, tol(t),
                    fast ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
            }
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

// [r, c] with both dims changing, then [2, 5, n] along axis 1 (a changing
// inner extent), on cpu and ocl, dynamic and static impls.
TEST(SoftmaxDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    const std::vector<std::vector<Shape>> rows = {{{1, 1}},   {{1, 3}},   {{2, 13}}, {{2, 13}}, {{1, 16}}, {{3, 17}},
                                                  {{1, 255}}, {{2, 257}}, {{2, 13}}, {{1, 1}},  {{1, 1}}};
    std::vector<std::vector<Shape>> rows3;
    for (int64_t n : test::tail_sizes()) rows3.push_back({Shape{2, 5, n}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({"softmax", axis(-1), {Layout({Dimension(), Dimension()}, DataType::f32)}, {}},
                              test::random_runs(DataType::f32, rows, 40, -8, 8), o);
        test::expect_sequence({"softmax", axis(1), {Layout({2, 5, Dimension()}, DataType::f32)}, {}},
                              test::random_runs(DataType::f32, rows3, 60, -8, 8), o);
        test::expect_sequence(
            {"softmax", with("log_softmax", 1, true), {Layout({2, 5, Dimension()}, DataType::f32)}, {}},
            test::random_runs(DataType::f32, rows3, 70, -8, 8), o);
        test::expect_sequence({"softmax", with("hardmax", -2, false), {Layout({2, 5, Dimension()}, DataType::f16)}, {}},
                              test::random_runs(DataType::f16, rows3, 80, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

HostTensor run(const HostTensor& x, int64_t a, const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("softmax", {x.layout()}, axis(a)), {x}, {}, engine);
}

HostTensor run_mode(const HostTensor& x, const Attributes& a, const std::string& engine) {
    return test::run_once(test::single_node_program("softmax", {x.layout()}, a), {x}, {}, engine);
}

std::vector<std::string> engines() {
    std::vector<std::string> e = {"cpu"};
    if (test::ocl_engine()) e.push_back("ocl");
    return e;
}

void expect_values(const HostTensor& y, const std::vector<double>& want, double tol, const std::string& what) {
    ASSERT_EQ(y.count(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.get_as_double(i), want[i], tol) << what << " " << i;
}

// log(e^-2 + e^-1 + 1) = 0.4076059644; x - 3 - that. Large inputs: the shift
// keeps them finite.
TEST(SoftmaxValues, LogSoftmaxMatchesHandComputedValuesOnEveryEngine) {
    for (const std::string& e : engines()) {
        const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 1000, 1000, -1000});
        expect_values(run_mode(x, with("log_softmax", -1, false), e),
                      {-2.4076059644, -1.4076059644, -0.4076059644, -0.6931471806, -0.6931471806, -2000.6931471806},
                      2e-4, e);
    }
}

// The first maximum wins ties; a NaN counts as the maximum (numpy argmax).
TEST(SoftmaxValues, HardmaxMarksTheFirstMaximumOnEveryEngine) {
    const float nan = std::nanf("");
    for (const std::string& e : engines()) {
        const HostTensor x = HostTensor::from_floats(Shape{3, 4}, {1, 3, 3, 2, -5, -1, -7, -1, 0, nan, 4, nan});
        expect_values(run_mode(x, with("hardmax", 1, false), e), {0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 0, e + " rows");
        expect_values(run_mode(x, with("hardmax", 0, false), e), {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, 0,
                      e + " columns");
    }
}

// coerce_2d at axis 1 of [2, 2, 2]: each of the two blocks of four is one
// row. Softmax of {0, 0, 0, ln 5}: {1/8, 1/8, 1/8, 5/8}; with one axis it
// would normalise pairs.
TEST(SoftmaxValues, Coerce2dNormalisesTheFlattenedTrailingDimsOnEveryEngine) {
    const float l5 = std::log(5.0f);
    const HostTensor x = HostTensor::from_floats(Shape{2, 2, 2}, {0, 0, 0, l5, 1, 1, 1, 1});
    for (const std::string& e : engines()) {
        expect_values(run_mode(x, with("softmax", 1, true), e), {0.125, 0.125, 0.125, 0.625, 0.25, 0.25, 0.25, 0.25},
                      1e-6, e);
        expect_values(run_mode(x, with("hardmax", -2, true), e), {0, 0, 0, 1, 1, 0, 0, 0}, 0, e);
        // Axis 0: all eight elements are one row; they sum to 1.
        const HostTensor all = run_mode(x, with("softmax", 0, true), e);
        double sum = 0;
        for (size_t i = 0; i < all.count(); ++i) sum += all.get_as_double(i);
        EXPECT_NEAR(sum, 1.0, 1e-6) << e;
    }
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

// Without the max subtraction exp() would overflow to inf.
TEST(SoftmaxValues, LargeInputsDoNotOverflowOnEveryEngine) {
    for (const char* eng : {"cpu", "ocl"}) {
        if (std::string(eng) == "ocl" && !test::ocl_engine()) continue;
        const HostTensor y = run(HostTensor::from_floats(Shape{3}, {1000, 1000, -1000}), 0, eng);
        EXPECT_NEAR(y.get_as_double(0), 0.5, 1e-6) << eng;
        EXPECT_NEAR(y.get_as_double(1), 0.5, 1e-6) << eng;
        EXPECT_NEAR(y.get_as_double(2), 0.0, 1e-7) << eng;
    }
}

// Independent computation: plain exp/sum without max subtraction (inputs are
// small), indexing through explicit coordinates.
HostTensor naive_softmax(const HostTensor& x, size_t ax) {
    const Shape& s = x.shape();
    HostTensor y(x.dtype(), s);
    std::vector<size_t> stride(s.size(), 1);
    for (size_t d = s.size(); d-- > 1;) stride[d - 1] = stride[d] * s[d];
    for (size_t i = 0; i < x.count(); ++i) {
        const size_t pos = (i / stride[ax]) % s[ax];
        const size_t row_start = i - pos * stride[ax];
        double sum = 0.0;
        for (int64_t k = 0; k < s[ax]; ++k) sum += std::exp(x.get_as_double(row_start + k * stride[ax]));
        y.set_from_double(i, std::exp(x.get_as_double(i)) / sum);
    }
    return y;
}

TEST(SoftmaxValues, RandomInputsMatchNaiveOnEveryAxis) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        const HostTensor x = test::random_tensor(t, Shape{3, 5, 4}, 11, -3.0, 3.0);
        for (int64_t a = 0; a < 3; ++a) {
            EXPECT_LE(test::max_abs_diff(run(x, a), naive_softmax(x, static_cast<size_t>(a))),
                      t == DataType::f16 ? 1e-3 : 1e-6)
                << to_string(t) << " axis " << a;
        }
    }
}

}   // namespace
}   // namespace dynrt
