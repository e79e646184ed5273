// softmax: shape-inference table, every impl against the reference over a
// dtype x shape matrix, one instance fed changing shapes, and hand-computed
// values and stability of the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;

Attributes axis(int64_t a) { return attrs({{"axis", a}}); }

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
            test::expect_impls_match_reference(
                s, test::random_runs(t, {{{1, 1, 1}}, {{2, 3, 17}}, {{2, 257, 3}}}, 1, -8, 8), tol(t));
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
    }
}

// ---- the reference's values -------------------------------------------------------

HostTensor run(const HostTensor& x, int64_t a, const std::string& engine = "cpu") {
    return test::run_once(test::single_node_program("softmax", {x.layout()}, axis(a)), {x}, {}, engine);
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
