// Tests of the eltwise op: broadcasting shape inference (two and more
// inputs), hand-computed values for every mode (floats and integers), every
// impl against the reference, and one network instance fed a sequence of
// changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
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
    EXPECT_NE(msg.find("only pow's exponent"), std::string::npos) << msg;
    EXPECT_NE(msg.find("same data type"), std::string::npos) << msg;
    EXPECT_NE(msg.find("i32[3]"), std::string::npos) << msg;
}

TEST(EltwiseShape, BooleanAndUnknownModeAreRejected) {
    const Layout b(PartialShape{3}, DataType::boolean);
    EXPECT_NE(test::error_of([&] { infer({b, b}, mode("add")); }).find("boolean"), std::string::npos);
    EXPECT_NE(test::error_of([] { infer({f32({3}), f32({3})}, mode("modulo")); }).find("modulo"), std::string::npos);
    EXPECT_NE(test::error_of([] { infer({f32({3}), f32({3})}, Attributes()); }).find("mode"), std::string::npos);
}

TEST(EltwiseShape, VariadicModesBroadcastEveryInputAndOthersTakeTwo) {
    const Dimension dyn;
    const Layout i32(PartialShape{3}, DataType::i32), u8(PartialShape{3}, DataType::u8);
    const Layout f64(PartialShape{2, 1}, DataType::f64);
    test::expect_shapes(
        "eltwise",
        {{{f32({2, 1, 4}), f32({3, 1}), f32({4})}, mode("add"), {f32({2, 3, 4})}},
         {{f32({dyn, 4}), f32({1}), f32({5, 1}), f32({4})}, mode("mean"), {f32({5, 4})}},
         {{f64, Layout(PartialShape{3}, DataType::f64)}, mode("max"), {Layout(PartialShape{2, 3}, DataType::f64)}},
         {{f32({3}), f32({3}), f32({3})}, mode("sub"), {}, {"sub", "2 inputs", "3"}},
         {{f32({2, 3}), f32({3}), f32({4})}, mode("min"), {}, {"[2,3]", "[3]", "[4]"}},
         {{i32, i32, f32({3})}, mode("max"), {}, {"same data type", "f32[3]"}},
         {{i32, i32}, mode("mean"), {}, {"mean", "floating", "i32[3]"}},
         {{i32, i32}, mode("bitshift_left"), {}, {"unsigned", "i32[3]"}},
         {{u8, u8}, mode("bitshift_right"), {u8}},
         {{i32, i32}, mode("mod"), {i32}}});
}

TEST(EltwiseShape, PowExponentMayHaveItsOwnTypeAndTheOutputHasTheBases) {
    const Layout i64(PartialShape{3}, DataType::i64), i32(PartialShape{3}, DataType::i32);
    test::expect_shapes("eltwise", {{{f32({3}), i64}, mode("pow"), {f32({3})}},
                                    {{i32, f32({1})}, mode("pow"), {i32}},
                                    {{f32({3}), i64}, mode("add"), {}, {"same data type", "i64[3]"}}});
}

TEST(EltwiseShape, PreluSlopeMustBroadcastToX) {
    const Dimension dyn;
    test::expect_shapes("eltwise", {{{f32({3, 4, 5}), f32({5})}, mode("prelu"), {f32({3, 4, 5})}},
                                    {{f32({3, 4, 5}), f32({4, 1})}, mode("prelu"), {f32({3, 4, 5})}},
                                    {{f32({dyn, 5}), f32({5})}, mode("prelu"), {f32({dyn, 5})}},
                                    {{f32({3, 1}), f32({5})}, mode("prelu"), {}, {"slope [5]", "x [3,1]"}},
                                    {{f32({5}), f32({2, 5})}, mode("prelu"), {}, {"slope [2,5]", "x [5]"}}});
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
    for (const char* m : {"div", "mod", "fmod"}) {
        auto prog = std::make_shared<Program>(test::registry(), "div0");
        prog->add_input("a", Layout(PartialShape{3}, DataType::i32));
        prog->add_input("b", Layout(PartialShape{3}, DataType::i32));
        prog->add_node("ratio", "eltwise", {"a", "b"}, mode(m));
        prog->add_output("ratio");
        prog->build();
        InferRequest req(Network::create(prog, test::engine()));
        req.set_input("a", HostTensor::from_int64(DataType::i32, Shape{3}, {1, 2, 3}));
        req.set_input("b", HostTensor::from_int64(DataType::i32, Shape{3}, {1, 0, 1}));
        const std::string msg = test::error_of([&] { req.infer(); });
        EXPECT_NE(msg.find("ratio"), std::string::npos) << m << ": " << msg;
        EXPECT_NE(msg.find("division by zero"), std::string::npos) << m << ": " << msg;
    }
}

HostTensor tensor(DataType t, const Shape& s, const std::vector<double>& v) {
    HostTensor out(t, s);
    for (size_t i = 0; i < v.size(); ++i) out.set_from_double(i, v[i]);
    return out;
}

HostTensor run_n(const std::string& m, const std::vector<HostTensor>& in) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("eltwise", layouts, mode(m)), in);
}

// ONNX's Mod examples: mod takes the divisor's sign, fmod the dividend's.
TEST(EltwiseValues, ModTakesTheDivisorsSignAndFmodTheDividends) {
    const std::vector<double> x = {-4, 7, 5, 4, -7, 8}, y = {2, -3, 8, -2, 3, 5};
    for (DataType t : {DataType::i8, DataType::i32, DataType::i64}) {
        SCOPED_TRACE(to_string(t));
        const HostTensor a = tensor(t, Shape{6}, x), b = tensor(t, Shape{6}, y);
        EXPECT_EQ(run("mod", a, b).to_int64(), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
        EXPECT_EQ(run("fmod", a, b).to_int64(), (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
    }
    const HostTensor fa = tensor(DataType::f64, Shape{6}, {-4.3, 7.2, 5.0, 4.3, -7.2, 8.0});
    const HostTensor fb = tensor(DataType::f64, Shape{6}, {2.1, -3.4, 8.0, -2.1, 3.4, 5.0});
    expect_values(run("fmod", fa, fb), Shape{6}, {-0.1, 0.4, 5, 0.1, -0.4, 3}, "fmod f64");
    expect_values(run("mod", fa, fb), Shape{6}, {2.0, -3.0, 5, -2.0, 3.0, 3}, "mod f64");
    // INT_MIN % -1 is 0, not a trap.
    const HostTensor big = HostTensor::from_int64(DataType::i64, Shape{1}, {INT64_MIN});
    EXPECT_EQ(run("mod", big, HostTensor::from_int64(DataType::i64, Shape{1}, {-1})).to_int64(),
              (std::vector<int64_t>{0}));
}

TEST(EltwiseValues, ShiftsWrapInTheTypeAndGiveZeroFromItsWidthOn) {
    const HostTensor a = HostTensor::from_int64(DataType::u8, Shape{5}, {16, 4, 1, 200, 255});
    const HostTensor b = HostTensor::from_int64(DataType::u8, Shape{5}, {1, 2, 3, 1, 8});
    EXPECT_EQ(run("bitshift_left", a, b).to_int64(), (std::vector<int64_t>{32, 16, 8, 144, 0}));
    EXPECT_EQ(run("bitshift_right", a, b).to_int64(), (std::vector<int64_t>{8, 1, 0, 100, 0}));
}

TEST(EltwiseValues, PreluScalesNegativeValuesBySlopeBroadcastAlongX) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {-2, -1, 0, 3, -4, 5});
    expect_values(run("prelu", x, HostTensor::from_floats(Shape{3}, {0.5, 2, 3})), Shape{2, 3}, {-1, -2, 0, 3, -8, 5},
                  "prelu");
    const HostTensor xi = HostTensor::from_int64(DataType::i32, Shape{3}, {-2, 0, 7});
    EXPECT_EQ(run("prelu", xi, HostTensor::from_int64(DataType::i32, Shape{1}, {3})).to_int64(),
              (std::vector<int64_t>{-6, 0, 7}));
}

TEST(EltwiseValues, VariadicModesFoldEveryInputWithBroadcasting) {
    const HostTensor a = HostTensor::from_floats(Shape{2, 1}, {1, 10});
    const HostTensor b = HostTensor::from_floats(Shape{3}, {4, -5, 6});
    const HostTensor c = HostTensor::from_floats(Shape{}, {2});
    expect_values(run_n("add", {a, b, c}), Shape{2, 3}, {7, -2, 9, 16, 7, 18}, "sum");
    expect_values(run_n("mean", {a, b, c}), Shape{2, 3}, {7.0 / 3, -2.0 / 3, 3, 16.0 / 3, 7.0 / 3, 6}, "mean");
    expect_values(run_n("min", {a, b, c}), Shape{2, 3}, {1, -5, 1, 2, -5, 2}, "min");
    expect_values(run_n("max", {a, b, c}), Shape{2, 3}, {4, 2, 6, 10, 10, 10}, "max");
    expect_values(run_n("mul", {a, b, c, c}), Shape{2, 3}, {16, -20, 24, 160, -200, 240}, "product");
    const HostTensor i = HostTensor::from_int64(DataType::i64, Shape{2}, {INT64_MAX, 5});
    EXPECT_EQ(run_n("add", {i, i, HostTensor::from_int64(DataType::i64, Shape{1}, {2})}).to_int64(),
              (std::vector<int64_t>{0, 12}));
}

TEST(EltwiseValues, PowWithAnExponentOfAnotherTypeHasTheBasesType) {
    expect_values(run("pow", HostTensor::from_floats(Shape{3}, {2, 3, -4}),
                      HostTensor::from_int64(DataType::i64, Shape{3}, {3, 2, 1})),
                  Shape{3}, {8, 9, -4}, "f32 ^ i64");
    const HostTensor y = run("pow", HostTensor::from_int64(DataType::i32, Shape{3}, {4, 9, 2}),
                             HostTensor::from_floats(Shape{3}, {0.5, 0.5, 3}));
    ASSERT_EQ(y.dtype(), DataType::i32);
    EXPECT_EQ(y.to_int64(), (std::vector<int64_t>{2, 3, 8}));
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

// ---- every impl against the reference -------------------------------------------

const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                      DataType::i64, DataType::i8,  DataType::u8};

// Integer div, mod, fmod and pow run on the host impls only.
bool host_only(const std::string& m, DataType t) {
    return !is_floating(t) && (m == "div" || m == "mod" || m == "fmod" || m == "pow");
}

// Value ranges per input that keep each mode's results defined: divisors away
// from zero, positive pow bases, shifts around the type's width.
std::pair<double, double> range_of(const std::string& m, DataType t, size_t input) {
    const bool integer = !is_floating(t);
    if (m == "bitshift_left" || m == "bitshift_right")
        return input == 0 ? std::make_pair(0, 256) : std::make_pair(0, 10);
    if (m == "pow")
        return input == 0 ? std::make_pair(integer ? -5.0 : 0.1, 5.0) : std::make_pair(integer ? 0.0 : -2.0, 3.0);
    if (input == 1 && (m == "div" || m == "mod" || m == "fmod"))
        return integer ? std::make_pair(1.0, 50.0) : std::make_pair(0.5, 2.0);
    if (integer)
        return t == DataType::i8 || t == DataType::u8 ? std::make_pair(-128, 256) : std::make_pair(-1000, 1000);
    return {-2.0, 2.0};
}

std::vector<test::Run> runs_for(const std::string& m, DataType t, const std::vector<std::vector<Shape>>& shapes) {
    std::vector<test::Run> runs;
    uint64_t seed = 1;
    for (const auto& row : shapes) {
        test::Run run;
        for (size_t i = 0; i < row.size(); ++i) {
            const auto [low, high] = range_of(m, t, std::min<size_t>(i, 1));
            run.push_back(test::random_tensor(t, row[i], seed++, low, high));
        }
        runs.push_back(run);
    }
    return runs;
}

// Rank-3 pairs: same shapes (the vector path and its tails), either side
// broadcast, empty. PRelu's slope broadcasts to x only.
const std::vector<std::vector<Shape>> kPairs = {
    {{1, 1, 17}, {1, 1, 17}}, {{2, 3, 4}, {1, 3, 1}}, {{0, 3, 4}, {1, 1, 4}}};
const std::vector<std::vector<Shape>> kSlopePairs = {
    {{1, 1, 17}, {1, 1, 17}}, {{2, 3, 4}, {1, 3, 1}}, {{1, 3, 5}, {1, 1, 1}}};

// Every mode on a float and an integer type (u8 for shifts, f64 for mean);
// add and max (the integer and the float code) on every type.
std::vector<DataType> matrix_types(const std::string& m) {
    if (m == "add" || m == "max") return kTypes;
    if (m == "mean") return {DataType::f32, DataType::f64};
    if (m == "bitshift_left" || m == "bitshift_right") return {DataType::u8};
    return {DataType::f32, DataType::i32};
}

std::optional<test::Tolerance> tolerance_of(DataType t) {
    if (t == DataType::f64) return test::Tolerance{1e-12, 1e-12};   // device double math: ulps of pow, fmod
    return std::nullopt;
}

const std::vector<std::string> kOclImpls = {"ocl_dynamic", "ocl_static"};

// The impls that may decline a case: the OpenCL ones where the mode stays on
// the host, and the cpu's vectorised loops outside f32 and their modes.
std::vector<std::string> may_skip(const std::string& m, DataType t, size_t inputs) {
    std::vector<std::string> skip = host_only(m, t) ? kOclImpls : std::vector<std::string>{};
    const std::vector<std::string> fast = {"add", "sub", "mul", "div", "min", "max", "squared_diff", "prelu", "pow"};
    if (t != DataType::f32 || inputs != 2 || std::find(fast.begin(), fast.end(), m) == fast.end())
        skip.insert(skip.end(), test::kOptimisedCpuImpls.begin(), test::kOptimisedCpuImpls.end());
    return skip;
}

TEST(EltwiseImpls, EveryImplMatchesTheReferenceForEveryModeAndType) {
    const PartialShape dyn3 = PartialShape::dynamic_of_rank(3);
    for (const std::string& m : test::registry()->op("eltwise").def.attrs.at(0).allowed)
        for (DataType t : matrix_types(m)) {
            SCOPED_TRACE(m + " " + to_string(t));
            test::expect_impls_match_reference({"eltwise", mode(m), {Layout(dyn3, t), Layout(dyn3, t)}, {}},
                                               runs_for(m, t, m == "prelu" ? kSlopePairs : kPairs), tolerance_of(t),
                                               may_skip(m, t, 2));
        }
}

TEST(EltwiseImpls, VariadicModesMatchTheReferenceOverThreeAndFiveInputs) {
    const PartialShape dyn2 = PartialShape::dynamic_of_rank(2);
    const std::vector<std::vector<Shape>> three = {
        {{3, 17}, {3, 17}, {3, 17}}, {{4, 5}, {1, 5}, {4, 1}}, {{0, 2}, {1, 2}, {1, 1}}};
    const std::vector<std::vector<Shape>> five = {{{2, 3}, {1, 3}, {2, 1}, {1, 1}, {2, 3}}};
    const std::vector<std::pair<std::string, DataType>> cases = {
        {"add", DataType::f32},  {"mul", DataType::f32}, {"min", DataType::f32}, {"max", DataType::f32},
        {"mean", DataType::f32}, {"add", DataType::i64}, {"max", DataType::u8},  {"mean", DataType::f64}};
    for (const auto& [m, t] : cases) {
        SCOPED_TRACE(m + " " + to_string(t));
        const Layout l(dyn2, t);
        test::expect_impls_match_reference({"eltwise", mode(m), {l, l, l}, {}}, runs_for(m, t, three), tolerance_of(t),
                                           may_skip(m, t, 3));
        test::expect_impls_match_reference({"eltwise", mode(m), {l, l, l, l, l}, {}}, runs_for(m, t, five),
                                           tolerance_of(t), may_skip(m, t, 5));
    }
}

// A scalar exponent (GELU's x^3, squares) takes products on the vectorised
// loop: every impl matches the reference over negative bases, zeros,
// infinities and NaN, the shapes changing between runs.
TEST(EltwiseImpls, PowWithAScalarExponentMatchesTheReferenceOnSpecialValues) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> specials = {-3.5f, -1.f, -0.5f, -0.f, 0.f, 0.25f, 1.f, 7.f, 1e20f, -1e20f, inf, -inf, nan};
    for (const float e : {2.f, 3.f, 0.5f, -1.5f, 4.f}) {
        SCOPED_TRACE("exponent " + std::to_string(e));
        std::vector<test::Run> runs;
        for (const size_t n : {specials.size(), size_t{40}, size_t{5}}) {
            std::vector<float> a(n);
            for (size_t i = 0; i < n; ++i) a[i] = specials[i % specials.size()] * (1.f + 0.125f * float(i / 13));
            runs.push_back({HostTensor::from_floats(Shape{1, static_cast<int64_t>(n)}, a),
                            HostTensor::from_floats(Shape{1}, {e})});
        }
        const PartialShape dyn2 = PartialShape::dynamic_of_rank(2);
        test::expect_impls_match_reference(
            {"eltwise",
             mode("pow"),
             {Layout(dyn2, DataType::f32), Layout(PartialShape::dynamic_of_rank(1), DataType::f32)},
             {}},
            runs, std::nullopt, may_skip("pow", DataType::f32, 2));
    }
}

// The exponent keeps its own type (ONNX Pow): every impl converts it per element.
TEST(EltwiseImpls, PowWithAnExponentOfAnotherTypeMatchesTheReference) {
    const PartialShape dyn2 = PartialShape::dynamic_of_rank(2);
    const std::vector<std::pair<DataType, DataType>> pairs = {
        {DataType::f32, DataType::i64}, {DataType::f32, DataType::i32}, {DataType::f16, DataType::f32},
        {DataType::f64, DataType::i64}, {DataType::i32, DataType::f32}, {DataType::i64, DataType::f32}};
    for (const auto& [base, exp] : pairs) {
        SCOPED_TRACE(std::string(to_string(base)) + " ^ " + to_string(exp));
        std::vector<test::Run> runs;
        uint64_t seed = 7;
        for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{3, 17}, {3, 17}}, {{4, 5}, {1, 5}}})
            runs.push_back({test::random_tensor(base, sa, seed++, is_floating(base) ? 0.1 : -5, 5),
                            test::random_tensor(exp, sb, seed++, 0, 4)});
        // The vectorised loop takes f32 exponents only.
        std::vector<std::string> skip = may_skip("pow", base, 2);
        if (exp != DataType::f32)
            skip.insert(skip.end(), test::kOptimisedCpuImpls.begin(), test::kOptimisedCpuImpls.end());
        test::expect_impls_match_reference({"eltwise", mode("pow"), {Layout(dyn2, base), Layout(dyn2, exp)}, {}}, runs,
                                           tolerance_of(base), skip);
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

// Three inputs of one node through the tail sizes and revisits, on every
// engine with dynamic and with static impls: x [n, 3], a row [1, 3] and a
// column [n, 1], each broadcast along another dim; then an empty x.
TEST(EltwiseDynamic, VariadicMeanFollowsChangingShapesOnEveryEngine) {
    const Layout x({Dimension(), 3}, DataType::f32), row({1, 3}, DataType::f32), col({Dimension(), 1}, DataType::f32);
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 3}, Shape{1, 3}, Shape{n, 1}});
    shapes.push_back({Shape{0, 3}, Shape{1, 3}, Shape{0, 1}});   // empty
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence({"eltwise", mode("mean"), {x, row, col}, {}}, test::random_runs(DataType::f32, shapes),
                              o);
}

// u8 shifts (the 4-element vector path of integers and its tails) through the same sizes.
TEST(EltwiseDynamic, ShiftFollowsChangingShapesOnEveryEngine) {
    const Layout l({Dimension()}, DataType::u8);
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n}, Shape{n}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence({"eltwise", mode("bitshift_left"), {l, l}, {}},
                              test::random_runs(DataType::u8, shapes, 3, 0, 12), o);
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
        // Shifts take integers; prelu's slope must not grow x (EveryImplMatchesTheReference covers both).
        if (mode == "bitshift_left" || mode == "bitshift_right" || mode == "prelu") continue;
        SCOPED_TRACE(mode);
        // pow takes positive bases; div keeps away from zero divisors.
        const double a_low = mode == "pow" ? 0.1 : -2.0;
        const double b_low = mode == "div" || mode == "mod" || mode == "fmod" ? 0.5 : -2.0;
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

const NodeStats& stats_of(const InferRequest& r, const std::string& node) {
    for (const NodeStats& s : r.last_run().nodes)
        if (s.node == node) return s;
    throw Error("no stats for " + node);
}

// mean(a, b, c) -> prelu(., slope) -> mod(., 16) -> max(e, ., f) on the
// device: the mean kernel applies the three post-ops (each the mode folded
// over its inputs as one f32 expression; max reads the chain through its
// second input), on the dynamic and the static impls, against an unfused run
// on the host.
TEST(EltwiseOcl, NewModesFuseIntoAnEltwiseProducer) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    auto p = std::make_shared<Program>(test::registry(), "fused_chain");
    const Layout rows({Dimension(), 8}, DataType::f32), row({1, 8}, DataType::f32);
    for (const char* n : {"a", "b", "e"}) p->add_input(n, rows);
    p->add_input("c", row);
    p->add_input("slope", row);
    p->add_input("f", Layout({Dimension(), 1}, DataType::f32));
    p->add_constant("d", HostTensor::from_floats(Shape{1}, {16}));
    p->add_node("mean", "eltwise", {"a", "b", "c"}, mode("mean"));
    p->add_node("prelu", "eltwise", {"mean", "slope"}, mode("prelu"));
    p->add_node("mod", "eltwise", {"prelu", "d"}, mode("mod"));
    p->add_node("max", "eltwise", {"e", "mod", "f"}, mode("max"));
    p->add_output("max");
    p->build();
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic impls" : "static impls");
        NetworkOptions opt;
        opt.use_dynamic_impls = dynamic;
        NetworkOptions unfused = opt;
        unfused.fusion = false;
        InferRequest fused(Network::create(p, eng, opt)), ref(Network::create(p, test::engine(), unfused));
        uint64_t seed = 1;
        for (int64_t n : {1, 3, 17, 3}) {
            for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
                     {"a", {n, 8}}, {"b", {n, 8}}, {"e", {n, 8}}, {"c", {1, 8}}, {"slope", {1, 8}}, {"f", {n, 1}}}) {
                const HostTensor v = test::random_tensor(DataType::f32, shape, seed++, -1, 1);
                fused.set_input(name, v);
                ref.set_input(name, v);
            }
            fused.infer();
            ref.infer();
            expect_close(fused.get_output(0), ref.get_output(0), kF32Rtol, kF32Atol);
            EXPECT_EQ(stats_of(fused, "mean").counters.fused_runs, 1u) << n;
            EXPECT_NE(stats_of(fused, "mean").impl.find("_ocl_"), std::string::npos) << stats_of(fused, "mean").impl;
            for (const char* tail : {"prelu", "mod", "max"}) EXPECT_EQ(stats_of(fused, tail).impl, "fused") << tail;
        }
    }
}

}   // namespace
}   // namespace dynrt
