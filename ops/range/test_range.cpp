// range: shape-inference table (lengths from known values, a dynamic length
// while they are unknown, errors: delta 0, lengths past 2^60, NaN, types and
// ranks), hand-computed values, every impl against the reference for every
// dtype, and one instance fed changing values (and so changing lengths).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor scalar(DataType t, double v) {
    HostTensor s(t, Shape{});
    s.set_from_double(0, v);
    return s;
}
HostTensor scalar_i64(int64_t v) { return HostTensor::from_int64(DataType::i64, Shape{}, {v}); }
Layout scalar_layout(DataType t) { return Layout(PartialShape{}, t); }

// A shape row with all three values known.
test::ShapeRow known(DataType t, double start, double limit, double delta, std::vector<Layout> out,
                     std::vector<std::string> error = {}) {
    const Layout s = scalar_layout(t);
    return {{s, s, s},
            {},
            std::move(out),
            std::move(error),
            {{0, scalar(t, start)}, {1, scalar(t, limit)}, {2, scalar(t, delta)}}};
}

// ---- 1. shape inference ----------------------------------------------------

TEST(RangeShape, LengthIsCeilOfSpanOverDeltaAndDynamicWhileUnknown) {
    const auto vec = [](int64_t n, DataType t) { return std::vector<Layout>{Layout({n}, t)}; };
    const Layout f = scalar_layout(DataType::f32);
    test::expect_shapes(
        "range", {
                     known(DataType::f32, 1, 5, 2, vec(2, DataType::f32)),
                     known(DataType::i32, 10, 6, -3, vec(2, DataType::i32)),
                     known(DataType::i64, 0, 10, 3, vec(4, DataType::i64)),
                     known(DataType::i64, 0, 9, 3, vec(3, DataType::i64)),
                     known(DataType::i64, 5, 5, 1, vec(0, DataType::i64)),     // empty
                     known(DataType::i64, 5, 1, 1, vec(0, DataType::i64)),     // the wrong way: empty
                     known(DataType::i64, -3, 1, -1, vec(0, DataType::i64)),   // the wrong way: empty
                     known(DataType::f64, 0, 1, 0.1, vec(10, DataType::f64)),
                     known(DataType::f16, 0, 3, 0.5, vec(6, DataType::f16)),
                     known(DataType::i8, -8, 8, 5, vec(4, DataType::i8)),
                     {{f, f, f}, {}, {Layout({Dimension()}, DataType::f32)}},   // values unknown
                     {{f, f, f}, {}, {Layout({Dimension()}, DataType::f32)}, {}, {{0, scalar(DataType::f32, 1)}}},
                 });
    // Spans that overflow int64 are counted exactly: min, -1, max - 1.
    const Layout i = scalar_layout(DataType::i64);
    const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
    test::expect_shapes("range", {{{i, i, i},
                                   {},
                                   {Layout({3}, DataType::i64)},
                                   {},
                                   {{0, scalar_i64(small)}, {1, scalar_i64(big)}, {2, scalar_i64(big)}}}});
}

TEST(RangeShape, BadInputsAreErrorsNamingNodeFieldAndValues) {
    const Layout f = scalar_layout(DataType::f32), i = scalar_layout(DataType::i64);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    test::expect_shapes(
        "range",
        {
            known(DataType::i64, 0, 5, 0, {}, {"node 'node'", "delta", "is 0"}),
            known(DataType::f32, 0, 5, 0, {}, {"node 'node'", "delta", "is 0"}),
            known(DataType::f32, 0, 1e30F, 1, {}, {"node 'node'", "limit", "2^60"}),
            known(DataType::f32, 0, inf, 1, {}, {"2^60"}),
            known(DataType::f32, nan, 1, 1, {}, {"not a number"}),
            {{i, i, i},
             {},
             {},
             {"2^60"},
             {{0, scalar_i64(0)}, {1, scalar_i64(std::numeric_limits<int64_t>::max())}, {2, scalar_i64(1)}}},
            {{f, Layout({1}, DataType::f32), f}, {}, {}, {"node 'node'", "limit", "scalar", "f32[1]"}},
            {{f, i, f}, {}, {}, {"one data type", "f32[]", "i64[]"}},
            {{scalar_layout(DataType::boolean), scalar_layout(DataType::boolean), scalar_layout(DataType::boolean)},
             {},
             {},
             {"boolean"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run_range(const HostTensor& start, const HostTensor& limit, const HostTensor& delta,
                     const std::string& engine) {
    const Layout s = start.layout();
    return test::run_once(test::single_node_program("range", {s, s, s}, {}), {start, limit, delta}, {}, engine);
}

TEST(RangeValues, SequencesOfTheOnnxExamplesOnEveryEngine) {
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        const HostTensor a =
            run_range(scalar(DataType::f32, 1), scalar(DataType::f32, 5), scalar(DataType::f32, 2), engine);
        EXPECT_EQ(a.shape(), (Shape{2}));
        EXPECT_EQ(a.get_as_double(0), 1.0);
        EXPECT_EQ(a.get_as_double(1), 3.0);
        const HostTensor b =
            run_range(scalar(DataType::i32, 10), scalar(DataType::i32, 6), scalar(DataType::i32, -3), engine);
        EXPECT_EQ(b.to_int64(), (std::vector<int64_t>{10, 7}));
        const int64_t big = (int64_t{1} << 62) + 1;   // not exact as a double
        const HostTensor c = run_range(scalar_i64(big), scalar_i64(big + 7), scalar_i64(3), engine);
        EXPECT_EQ(c.to_int64(), (std::vector<int64_t>{big, big + 3, big + 6}));
        const HostTensor e = run_range(scalar_i64(4), scalar_i64(4), scalar_i64(1), engine);
        EXPECT_EQ(e.shape(), (Shape{0}));
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// Runs of (start, limit, delta) in type t: tails, negative deltas, empty.
std::vector<test::Run> runs_of(DataType t) {
    const bool narrow = t == DataType::i8 || t == DataType::u8;
    std::vector<std::vector<double>> v = {{0, 1, 1}, {2, 15, 1}, {7, 7, 1}, {1, 100, 6}};
    if (t != DataType::u8) v.push_back({3, 0, -1});
    if (!narrow) v.push_back({0, 257, 1}), v.push_back({-1000, 1000, 7});
    if (is_floating(t)) v.push_back({1, -1, -0.125});
    std::vector<test::Run> runs;
    for (const auto& r : v) runs.push_back({scalar(t, r[0]), scalar(t, r[1]), scalar(t, r[2])});
    return runs;
}

TEST(RangeImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    for (DataType t :
         {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64, DataType::i8, DataType::u8}) {
        SCOPED_TRACE(to_string(t));
        const Layout s = scalar_layout(t);
        test::expect_impls_match_reference({"range", {}, {s, s, s}, {}}, runs_of(t));
    }
}

TEST(RangeImpls, ConstantStartAndDeltaWithALimitPerRunMatchTheReference) {
    const Layout s = scalar_layout(DataType::i64);
    std::vector<test::Run> runs;
    for (int64_t n : test::tail_sizes()) runs.push_back({scalar_i64(n)});
    test::expect_impls_match_reference({"range", {}, {s, s, s}, {{0, scalar_i64(-2)}, {2, scalar_i64(2)}}}, runs);
}

// ---- 3. one instance, changing values --------------------------------------------

TEST(RangeDynamic, OneInstanceFollowsChangingLengthsOnEveryEngine) {
    std::vector<test::Run> runs;
    for (int64_t n : test::tail_sizes())
        runs.push_back({scalar(DataType::f32, 0.5), scalar(DataType::f32, 0.5 + 0.25 * static_cast<double>(n)),
                        scalar(DataType::f32, 0.25)});
    runs.push_back({scalar(DataType::f32, 3), scalar(DataType::f32, 3), scalar(DataType::f32, 1)});   // empty
    runs.push_back({scalar(DataType::f32, 3), scalar(DataType::f32, -3), scalar(DataType::f32, -1)});
    const Layout s = scalar_layout(DataType::f32);
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        o.check_counters = false;   // the values change, the (scalar) input shapes never do
        test::expect_sequence({"range", {}, {s, s, s}, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
