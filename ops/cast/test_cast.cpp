// cast: shape-inference table, every impl against the reference for every
// pair of data types, one instance fed changing shapes, and hand-computed
// values (truncation, saturation, NaN, wrap, i64 past 2^53, f64 -> f16 with
// one rounding) on every engine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                      DataType::i64, DataType::u8,  DataType::i8,  DataType::boolean};

Attributes to(DataType t) { return test::attrs({{"to", std::string(to_string(t))}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(CastShape, OutputHasTheInputShapeAndTheTargetType) {
    std::vector<test::ShapeRow> rows;
    const Dimension dyn;
    for (const PartialShape& s : {PartialShape{2, 3}, PartialShape{}, PartialShape{0, 4}, PartialShape{dyn, 5},
                                  PartialShape{Dimension(1, 8), dyn}})
        for (DataType from : kTypes)
            for (DataType t : {DataType::f16, DataType::i64, DataType::boolean, from})
                rows.push_back({{Layout(s, from)}, to(t), {Layout(s, t)}});
    rows.push_back({{test::f32({3})}, test::attrs({{"to", std::string("bf16")}}), {}, {"to", "bf16"}});
    rows.push_back({{test::f32({3})}, {}, {}, {"to"}});
    test::expect_shapes("cast", rows);
}

// ---- 2. every impl against the reference -----------------------------------------

// Values in [-300, 300): past the range of u8 and i8 (saturation from
// floating types, wrap from integer ones), fractions truncated. One shape per
// pair (64 pairs, a static OpenCL build each); empty, size-1 and changing
// shapes are the sequence's.
TEST(CastImpls, EveryImplMatchesTheReferenceForEveryPairOfTypes) {
    for (DataType from : kTypes) {
        for (DataType t : kTypes) {
            SCOPED_TRACE(std::string(to_string(from)) + " -> " + to_string(t));
            const test::OpSetup s{"cast", to(t), {Layout({Dimension()}, from)}, {}};
            test::expect_impls_match_reference(s, test::random_runs(from, {{{257}}}, 3, -300, 300));
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(CastDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 3}});
    shapes.push_back({Shape{0, 3}});
    shapes.push_back({Shape{1, 3}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout in({Dimension(), 3}, DataType::f32);
        test::expect_sequence({"cast", to(DataType::i32), {in}, {}},
                              test::random_runs(DataType::f32, shapes, 5, -100, 100), o);
        test::expect_sequence({"cast", to(DataType::f16), {Layout({Dimension(), 3}, DataType::i64)}, {}},
                              test::random_runs(DataType::i64, shapes, 9, -5000, 5000), o);
    }
}

// ---- hand-computed values on every engine ------------------------------------------

std::vector<std::string> engines() {
    std::vector<std::string> e = {"cpu"};
    if (test::ocl_engine()) e.push_back("ocl");
    return e;
}

HostTensor run(const HostTensor& x, DataType t, const std::string& engine) {
    return test::run_once(test::single_node_program("cast", {x.layout()}, to(t)), {x}, {}, engine);
}

void expect_ints(const HostTensor& y, const std::vector<int64_t>& want, const std::string& what) {
    ASSERT_EQ(y.count(), want.size()) << what;
    const std::vector<int64_t> got = y.to_int64();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << what << " element " << i;
}

TEST(CastValues, FloatToIntegerTruncatesSaturatesAndMapsNanToZero) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const HostTensor x = HostTensor::from_floats(Shape{8}, {-2.7f, -0.5f, 0.5f, 2.7f, nan, 1e10f, -1e10f, 300.f});
    for (const std::string& e : engines()) {
        expect_ints(run(x, DataType::i32, e), {-2, 0, 0, 2, 0, 2147483647, -2147483648LL, 300}, e + " i32");
        expect_ints(run(x, DataType::u8, e), {0, 0, 0, 2, 0, 255, 0, 255}, e + " u8");
        expect_ints(run(x, DataType::i8, e), {-2, 0, 0, 2, 0, 127, -128, 127}, e + " i8");
        expect_ints(run(x, DataType::boolean, e), {1, 1, 1, 1, 1, 1, 1, 1}, e + " boolean");
        expect_ints(run(HostTensor::from_floats(Shape{2}, {0.f, -0.f}), DataType::boolean, e), {0, 0}, e);
    }
}

TEST(CastValues, IntegersWrapAndKeepEveryBitOfI64) {
    const int64_t big = (int64_t{1} << 53) + 1;   // not a double
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{4}, {big, (int64_t{1} << 32) + 5, -1, 0});
    for (const std::string& e : engines()) {
        expect_ints(run(x, DataType::i64, e), {big, (int64_t{1} << 32) + 5, -1, 0}, e + " i64");
        expect_ints(run(x, DataType::i32, e), {1, 5, -1, 0}, e + " i32");
        expect_ints(run(x, DataType::u8, e), {1, 5, 255, 0}, e + " u8");
        expect_ints(run(x, DataType::boolean, e), {1, 1, 1, 0}, e + " boolean");
        const HostTensor b = run(HostTensor::from_int64(DataType::boolean, Shape{2}, {1, 0}), DataType::f32, e);
        EXPECT_EQ(b.get_as_double(0), 1.0) << e;
        EXPECT_EQ(b.get_as_double(1), 0.0) << e;
    }
}

// 1 + 2^-11 + 2^-40 lies just above the midpoint of the f16 neighbours 1 and
// 1 + 2^-10: it rounds up. Through f32 (1 + 2^-11, a tie) it would round to 1.
TEST(CastValues, F64ToF16RoundsOnce) {
    HostTensor x(DataType::f64, Shape{3});
    x.as<double>()[0] = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
    x.as<double>()[1] = 1.0 + std::ldexp(1.0, -11);   // a tie: to even, 1
    x.as<double>()[2] = 1e6;                          // past f16's range: inf
    for (const std::string& e : engines()) {
        const HostTensor y = run(x, DataType::f16, e);
        EXPECT_EQ(y.get_as_double(0), 1.0 + std::ldexp(1.0, -10)) << e;
        EXPECT_EQ(y.get_as_double(1), 1.0) << e;
        EXPECT_EQ(y.get_as_double(2), INFINITY) << e;
        const HostTensor back = run(y, DataType::f64, e);
        EXPECT_EQ(back.get_as_double(0), 1.0 + std::ldexp(1.0, -10)) << e;
    }
}

}   // namespace
}   // namespace dynrt
