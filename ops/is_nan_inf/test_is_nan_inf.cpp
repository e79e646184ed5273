// is_nan_inf: shape-inference table (dynamic dims, rank 0, empty tensors,
// bad inputs), hand-computed values of every mode and sign choice, every impl
// against the reference over a dtype x attribute x shape matrix, and one
// instance fed changing shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes nan_mode() { return test::attrs({{"mode", "nan"}}); }

Attributes inf_mode(bool positive = true, bool negative = true) {
    Attributes a = test::attrs({{"mode", "inf"}});
    a.set("detect_positive", positive);
    a.set("detect_negative", negative);
    return a;
}

// ---- 1. shape inference ----------------------------------------------------

TEST(IsNanInfShape, BooleanOfTheInputShapeAndBadInputsAreRejected) {
    std::vector<test::ShapeRow> rows;
    for (const PartialShape& s :
         {PartialShape{2, 3}, PartialShape{Dimension(), 4}, PartialShape{}, PartialShape{Dimension(1, 8), 0}})
        for (DataType t : {DataType::f32, DataType::f16}) {
            rows.push_back({{Layout(s, t)}, nan_mode(), {Layout(s, DataType::boolean)}});
            rows.push_back({{Layout(s, t)}, inf_mode(false, true), {Layout(s, DataType::boolean)}});
        }
    rows.push_back({{Layout({3}, DataType::i32)}, nan_mode(), {}, {"node 'node'", "inputs", "i32[3]"}});
    rows.push_back({{Layout({3}, DataType::boolean)}, inf_mode(), {}, {"inputs", "boolean[3]"}});
    rows.push_back({{test::f32({3})}, {}, {}, {"mode"}});
    rows.push_back({{test::f32({3})}, test::attrs({{"mode", "finite"}}), {}, {"mode", "finite"}});
    test::expect_shapes("is_nan_inf", rows);
}

// ---- hand-computed values ----------------------------------------------------

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> run(const Attributes& a, const HostTensor& x, const std::string& engine) {
    const HostTensor y =
        test::run_once(test::single_node_program("is_nan_inf", {x.layout()}, a), {x}, NetworkOptions{}, engine);
    EXPECT_EQ(y.dtype(), DataType::boolean);
    return y.to_int64();
}

std::vector<std::string> engines() {
    std::vector<std::string> e = {"cpu"};
    if (test::ocl_engine()) e.push_back("ocl");
    return e;
}

TEST(IsNanInfValues, EveryModeAndSignChoiceOnF32AndF16) {
    const std::vector<double> v = {kNan, kInf, -kInf, 0.0, -1.5, 65504.0, -kNan};
    for (DataType t : {DataType::f32, DataType::f16}) {
        HostTensor x(t, Shape{7});
        for (size_t i = 0; i < v.size(); ++i) x.set_from_double(i, v[i]);
        for (const std::string& e : engines()) {
            SCOPED_TRACE(e + " " + to_string(t));
            EXPECT_EQ(run(nan_mode(), x, e), (std::vector<int64_t>{1, 0, 0, 0, 0, 0, 1}));
            EXPECT_EQ(run(inf_mode(), x, e), (std::vector<int64_t>{0, 1, 1, 0, 0, 0, 0}));
            EXPECT_EQ(run(inf_mode(true, false), x, e), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 0}));
            EXPECT_EQ(run(inf_mode(false, true), x, e), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0}));
            EXPECT_EQ(run(inf_mode(false, false), x, e), (std::vector<int64_t>(7, 0)));
        }
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// Random values with NaN, +inf and -inf among them.
HostTensor special_values(DataType t, const Shape& s, uint64_t seed) {
    HostTensor x = test::random_tensor(t, s, seed, -3.0, 3.0);
    const double specials[] = {kNan, kInf, -kInf};
    for (size_t i = 0; i < x.count(); ++i)
        if (i % 3 == seed % 3) x.set_from_double(i, specials[(i / 3 + seed) % 3]);
    return x;
}

std::vector<test::Run> runs_of(DataType t, const std::vector<Shape>& shapes) {
    std::vector<test::Run> runs;
    uint64_t seed = 1;
    for (const Shape& s : shapes) runs.push_back({special_values(t, s, seed++)});
    return runs;
}

std::vector<Shape> tail_shapes() {
    std::vector<Shape> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back(Shape{n, 3});
    shapes.push_back(Shape{0, 3});
    return shapes;
}

TEST(IsNanInfImpls, EveryImplMatchesTheReference) {
    for (DataType t : {DataType::f32, DataType::f16})
        for (const Attributes& a : {nan_mode(), inf_mode(), inf_mode(true, false), inf_mode(false, true)}) {
            SCOPED_TRACE(a.to_string() + " " + to_string(t));
            const test::OpSetup s{"is_nan_inf", a, {Layout({Dimension(), 3}, t)}, {}};
            // The cpu's loop takes f32 (f16 stays on the reference).
            const std::vector<std::string> skip =
                t == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls;
            test::expect_impls_match_reference(s, runs_of(t, {{1, 3}, {257, 3}, {2, 3}, {0, 3}, {6000, 3}}),
                                               std::nullopt, skip);
        }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(IsNanInfDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence(
            {"is_nan_inf", inf_mode(false, true), {Layout(PartialShape::dynamic_of_rank(2), DataType::f32)}, {}},
            runs_of(DataType::f32, tail_shapes()), o);
        test::expect_sequence({"is_nan_inf", nan_mode(), {Layout(PartialShape::dynamic_of_rank(2), DataType::f16)}, {}},
                              runs_of(DataType::f16, tail_shapes()), o);
    }
}

}   // namespace
}   // namespace dynrt
