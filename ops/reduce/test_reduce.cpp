// reduce: shape-inference table (axes from the attribute or input 1, known or
// not, keepdims, empty axes with and without noop, errors), every impl against
// the reference over a mode x dtype x shape matrix (empty reduced axes, size-1
// dims, negative axes, axes as a run-time input), one instance fed changing
// shapes and axes, and hand-computed values (identities of empty reductions,
// NaN through max/min, integer wrap-around, log_sum_exp of large numbers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

const std::vector<std::string> kCpuOpt = test::kOptimisedCpuImpls, kNone = {};

const std::vector<std::string> kModes = {"sum", "mean", "max",        "min",     "prod",
                                         "l1",  "l2",   "sum_square", "log_sum", "log_sum_exp"};

Attributes reduce_attrs(const std::string& mode, std::vector<int64_t> axes, bool keepdims = true, bool noop = false) {
    return test::attrs(
        {{"mode", mode}, {"axes", std::move(axes)}, {"keepdims", keepdims}, {"noop_with_empty_axes", noop}});
}

HostTensor axes_of(std::vector<int64_t> v, DataType t = DataType::i64) {
    const auto n = static_cast<int64_t>(v.size());
    return HostTensor::from_int64(t, Shape{n}, v);
}

Layout axes_layout(int64_t n, DataType t = DataType::i64) { return Layout({n}, t); }

void expect_values(const HostTensor& got, const std::vector<double>& want, double tol = 0) {
    ASSERT_EQ(got.count(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got.get_as_double(i))) << "element " << i;
        else if (std::isinf(want[i])) EXPECT_EQ(got.get_as_double(i), want[i]) << "element " << i;
        else EXPECT_NEAR(got.get_as_double(i), want[i], tol) << "element " << i;
    }
}

// One run of the reference (cpu) on `in`, axes as the attribute.
HostTensor run(const std::string& mode, const HostTensor& in, std::vector<int64_t> axes, bool keepdims = true,
               bool noop = false) {
    const auto prog =
        test::single_node_program("reduce", {in.layout()}, reduce_attrs(mode, std::move(axes), keepdims, noop));
    return test::run_once(prog, {in});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(ReduceShape, AxesFromTheAttributeKeepOrDropTheReducedDims) {
    const Dimension dyn;
    const Layout in = test::f32({2, 3, 4});
    test::expect_shapes(
        "reduce",
        {
            {{in}, reduce_attrs("sum", {1}), {test::f32({2, 1, 4})}},
            {{in}, reduce_attrs("sum", {1}, false), {test::f32({2, 4})}},
            {{in}, reduce_attrs("max", {-1, 0}, false), {test::f32({3})}},
            {{in}, reduce_attrs("mean", {}), {test::f32({1, 1, 1})}},
            {{in}, reduce_attrs("mean", {}, false), {test::f32({})}},
            {{in}, reduce_attrs("sum_square", {}, false, true), {in}},
            {{test::f32({})}, reduce_attrs("sum", {}), {test::f32({})}},
            {{test::f32({0, 3})}, reduce_attrs("prod", {0}), {test::f32({1, 3})}},
            {{test::f32({dyn, 3, Dimension(1, 8)})}, reduce_attrs("min", {1}), {test::f32({dyn, 1, Dimension(1, 8)})}},
            {{test::f32({dyn, 3})}, reduce_attrs("l2", {0}, false), {test::f32({3})}},
            {{Layout({5, 2}, DataType::i8)}, reduce_attrs("l1", {1}), {Layout({5, 1}, DataType::i8)}},
            {{Layout({5, 2}, DataType::f64)}, reduce_attrs("log_sum_exp", {0}), {Layout({1, 2}, DataType::f64)}},
        });
}

TEST(ReduceShape, AxesFromInputOneKnownOrNot) {
    const Dimension dyn;
    const Layout in = test::f32({2, 1, 4});
    const Attributes keep = reduce_attrs("sum", {}), drop = reduce_attrs("sum", {}, false);
    const Attributes noop = reduce_attrs("sum", {}, true, true);
    test::expect_shapes(
        "reduce",
        {
            {{in, axes_layout(1)}, keep, {test::f32({2, 1, 1})}, {}, {{1, axes_of({-1})}}},
            {{in, axes_layout(2, DataType::i32)}, drop, {test::f32({1})}, {}, {{1, axes_of({0, 2}, DataType::i32)}}},
            // Empty axes: every dim, or none with noop_with_empty_axes.
            {{in, axes_layout(0)}, keep, {test::f32({1, 1, 1})}},
            {{in, axes_layout(0)}, noop, {in}},
            // Values unknown until the producer runs: only the rank is known.
            {{in, axes_layout(1)}, keep, {test::f32({dyn, 1, dyn})}},
            {{in, axes_layout(2)}, drop, {test::f32({dyn})}},
        });
}

TEST(ReduceShape, BadAxesTypesAndModesAreErrorsNamingNodeAndField) {
    const Layout in = test::f32({2, 3});
    test::expect_shapes(
        "reduce",
        {
            {{in}, reduce_attrs("sum", {2}), {}, {"node 'node'", "axes", "out of range", "[2,3]"}},
            {{in}, reduce_attrs("sum", {-3}), {}, {"axes", "out of range"}},
            {{in}, reduce_attrs("sum", {1, -1}), {}, {"axes", "more than once"}},
            {{test::f32({})}, reduce_attrs("sum", {0}), {}, {"axes", "out of range"}},
            {{in, axes_layout(1)}, reduce_attrs("sum", {0}), {}, {"axes", "twice"}},
            {{in, Layout({1}, DataType::f32)}, reduce_attrs("sum", {}), {}, {"axes", "i32 or i64"}},
            {{in, axes_layout(3)}, reduce_attrs("sum", {}, false), {}, {"axes", "3 dims", "rank 2"}},
            {{in, axes_layout(1)}, reduce_attrs("sum", {}), {}, {"axes", "out of range"}, {{1, axes_of({5})}}},
            {{Layout({2}, DataType::i32)}, reduce_attrs("log_sum", {}), {}, {"mode", "floating", "i32[2]"}},
            {{Layout({2}, DataType::boolean)}, reduce_attrs("max", {}), {}, {"inputs", "does not take"}},
        });
}

// ---- 2. every impl against the reference -------------------------------------

// Input ranges per mode: log_sum needs a positive sum, prod stays away from
// overflow; integers draw wide enough to wrap i8 and u8 sums.
std::pair<double, double> value_range(const std::string& mode, DataType t) {
    if (mode == "log_sum") return {0.01, 1};
    if (t == DataType::u8) return {0, 200};
    if (t == DataType::i8) return {-100, 100};
    if (!is_floating(t)) return {-1000, 1000};
    return {-1, 1};
}

// f32 and f16 results of sums over up to 257 terms: device and host both
// accumulate in double where the device has fp64, otherwise the device sums
// in float.
test::Tolerance tolerance_of(DataType t) {
    if (t == DataType::f16) return {1e-2, 1e-2};
    if (is_floating(t)) return {1e-5, 1e-5};
    return {0, 0};
}

TEST(ReduceImpls, EveryImplMatchesTheReferenceInEveryModeAndDtype) {
    // Dims vary between runs: tails, a size-1 dim and an empty reduced dim.
    const std::vector<std::vector<Shape>> shapes = {{{2, 17, 3}}, {{4, 0, 3}}, {{1, 257, 2}}};
    const std::vector<std::pair<std::vector<int64_t>, bool>> axes_sets = {
        {{0, -1}, false}, {{1}, true}, {{}, true}, {{-2}, false}};
    // f32: every mode, each with another axes set.
    for (size_t m = 0; m < kModes.size(); ++m) {
        const auto& [axes, keepdims] = axes_sets[m % axes_sets.size()];
        const auto [low, high] = value_range(kModes[m], DataType::f32);
        SCOPED_TRACE(kModes[m]);
        const test::OpSetup s{"reduce",
                              reduce_attrs(kModes[m], axes, keepdims),
                              {Layout(PartialShape::dynamic_of_rank(3), DataType::f32)},
                              {}};
        // The optimised cpu impls decline axes that are not one run of adjacent dims.
        test::expect_impls_match_reference(s, test::random_runs(DataType::f32, shapes, 11, low, high),
                                           tolerance_of(DataType::f32), axes.size() == 2 ? kCpuOpt : kNone);
    }
    // The other dtypes: the modes whose math differs by type (integer wrap,
    // truncated mean, type bounds as the max identity), reducing the first
    // and last dims and dropping them; size-1 and tail extents.
    const std::vector<std::vector<Shape>> few = {{{3, 1, 5}}, {{2, 17, 3}}};
    for (DataType t : {DataType::f16, DataType::f64, DataType::i32, DataType::i64, DataType::u8, DataType::i8}) {
        const std::vector<std::string> modes = is_floating(t) ? std::vector<std::string>{"sum", "log_sum_exp"}
                                                              : std::vector<std::string>{"sum", "max", "mean"};
        for (const std::string& mode : modes) {
            const auto [low, high] = value_range(mode, t);
            SCOPED_TRACE(mode + " " + to_string(t));
            const test::OpSetup s{
                "reduce", reduce_attrs(mode, {0, -1}, false), {Layout(PartialShape::dynamic_of_rank(3), t)}, {}};
            test::expect_impls_match_reference(s, test::random_runs(t, few, 11, low, high), tolerance_of(t),
                                               kCpuOpt);   // f32 only
        }
    }
}

// Axes as input 1: a constant (known when the network is built) or a run-time
// input whose values change from run to run on one network.
TEST(ReduceImpls, AxesFromInputOneMatchTheReference) {
    const Layout in(PartialShape::dynamic_of_rank(3), DataType::f32);
    for (const char* mode : {"sum", "log_sum_exp"}) {
        SCOPED_TRACE(mode);
        const test::OpSetup constant{"reduce", reduce_attrs(mode, {}), {in, axes_layout(2)}, {{1, axes_of({0, -1})}}};
        // The optimised cpu impls decide by the axes attribute: input 1 is declined.
        test::expect_impls_match_reference(constant, test::random_runs(DataType::f32, {{{3, 5, 7}}, {{1, 17, 2}}}),
                                           tolerance_of(DataType::f32), kCpuOpt);
        std::vector<test::Run> runs;
        const std::vector<std::vector<int64_t>> axes = {{0, 2}, {1, -1}, {2, 0}, {-3, -2}};
        for (size_t k = 0; k < axes.size(); ++k)
            runs.push_back({test::random_tensor(DataType::f32, Shape{3, 4, 5}, 40 + k), axes_of(axes[k])});
        const test::OpSetup runtime{"reduce", reduce_attrs(mode, {}, false), {in, axes_layout(2)}, {}};
        test::expect_impls_match_reference(runtime, runs, tolerance_of(DataType::f32), kCpuOpt);
    }
    // Empty axes at run time: every dim, or none with noop_with_empty_axes.
    for (bool noop : {false, true}) {
        const test::OpSetup empty{"reduce", reduce_attrs("sum_square", {}, true, noop), {in, axes_layout(0)}, {}};
        std::vector<test::Run> runs = {{test::random_tensor(DataType::f32, Shape{2, 3, 4}, 7), axes_of({})}};
        test::expect_impls_match_reference(empty, runs, tolerance_of(DataType::f32), kCpuOpt);
    }
}

TEST(ReduceImpls, RanksOneToEightMatchTheReference) {
    for (size_t rank = 1; rank <= 8; ++rank) {
        std::vector<int64_t> dims(rank, 2), axes;
        dims.back() = 3;
        for (size_t d = 0; d < rank; d += 2) axes.push_back(static_cast<int64_t>(d));
        SCOPED_TRACE("rank " + std::to_string(rank));
        const test::OpSetup s{
            "reduce", reduce_attrs("mean", axes, false), {test::f32(PartialShape::dynamic_of_rank(rank))}, {}};
        test::expect_impls_match_reference(s, test::random_runs(DataType::f32, {{Shape(dims)}}),
                                           tolerance_of(DataType::f32), rank > 2 ? kCpuOpt : kNone);
    }
}

// The OpenCL rows kernel (trailing axes: a work-group's lanes share each
// row, vectors when the row length is a multiple of 4) and the optimised cpu
// impls (trailing axes as rows, a middle or leading block as columns), in
// every mode (one test each, so that ctest runs them side by side): long rows
// around a 256-lane group's multiples, short rows (many per group), empty
// rows, and size-1 dims that let only the static OpenCL impl take the rows
// kernel. Every impl must run.
class ReduceRowsAndBlocks : public ::testing::TestWithParam<std::string> {};

TEST_P(ReduceRowsAndBlocks, MatchTheReference) {
    struct Case {
        std::vector<int64_t> axes;
        bool keepdims;
        std::vector<std::vector<Shape>> shapes;
    };
    const std::vector<Case> cases = {
        {{-1}, true, {{{5, 1031}}, {{3, 1}}, {{67, 3}}, {{2, 4100}}, {{9, 4}}, {{4, 0}}, {{5, 1031}}}},
        {{1, 2}, false, {{{3, 17, 60}}, {{2, 1, 1}}, {{1, 33, 8}}}},
        {{1}, true, {{{4, 7, 1}}, {{2, 300, 1}}, {{3, 17, 5}}, {{2, 5, 257}}}},
        {{0}, false, {{{37, 3, 5}}, {{1, 2, 2}}}},
        {{}, false, {{{6, 70}}, {{1, 1}}}},
    };
    // Every shape for the modes whose combining differs (sum-like, max, prod,
    // log_sum_exp's two passes); two shapes of each case for the others
    // (each static impl is one OpenCL build per shape).
    const std::vector<std::string> every_shape = {"sum", "max", "prod", "log_sum_exp"};
    const std::string& mode = GetParam();
    const auto [low, high] = value_range(mode, DataType::f32);
    const bool all = std::find(every_shape.begin(), every_shape.end(), mode) != every_shape.end();
    for (size_t k = 0; k < cases.size(); ++k) {
        Case c = cases[k];
        if (!all && c.shapes.size() > 2) c.shapes.resize(2);
        SCOPED_TRACE(mode + " case " + std::to_string(k));
        const test::OpSetup s{"reduce",
                              reduce_attrs(mode, c.axes, c.keepdims),
                              {Layout(PartialShape::dynamic_of_rank(c.shapes[0][0].rank()), DataType::f32)},
                              {}};
        const std::vector<std::string> ran = test::expect_impls_match_reference(
            s, test::random_runs(DataType::f32, c.shapes, 23, low, high), tolerance_of(DataType::f32));
        for (const std::string& name : kCpuOpt)
            EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
    }
}

INSTANTIATE_TEST_SUITE_P(ReduceImpls, ReduceRowsAndBlocks, ::testing::ValuesIn(kModes),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The rows kernel for every dtype: the vector path (length a multiple of 4)
// and the element path, sums that wrap, the type bounds as max identities.
TEST(ReduceImpls, RowsKernelMatchesTheReferenceForEveryDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{3, 8}}, {{2, 17}}, {{4, 1024}}};
    for (DataType t : {DataType::f16, DataType::f64, DataType::i32, DataType::i64, DataType::u8, DataType::i8}) {
        for (const char* mode : {"sum", "max", "prod", "mean"}) {
            const auto [low, high] = value_range(mode, t);
            SCOPED_TRACE(mode + std::string(" ") + to_string(t));
            const test::OpSetup s{"reduce", reduce_attrs(mode, {-1}), {Layout({Dimension(), Dimension()}, t)}, {}};
            test::expect_impls_match_reference(s, test::random_runs(t, shapes, 31, low, high), tolerance_of(t),
                                               kCpuOpt);
        }
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(ReduceDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{3, n, 2}});
    for (int64_t n : {0, 5, 0, 1}) rows.push_back({Shape{n, 4, 2}});
    for (test::SequenceOptions o : test::every_engine_and_mode(tolerance_of(DataType::f32))) {
        SCOPED_TRACE(o.engine + std::string(" ") + test::mode_name(o.mode));
        test::expect_sequence({"reduce", reduce_attrs("sum", {1}), {test::f32({Dimension(), Dimension(), 2})}, {}},
                              test::random_runs(DataType::f32, rows, 100), o);
        test::expect_sequence(
            {"reduce", reduce_attrs("log_sum_exp", {-1, 0}, false), {test::f32({Dimension(), Dimension(), 2})}, {}},
            test::random_runs(DataType::f32, rows, 200), o);
        // Rows of changing length (the OpenCL rows kernel), then revisits.
        std::vector<std::vector<Shape>> lines;
        for (int64_t n : {1, 3, 1024, 17, 1031, 0, 3, 1024}) lines.push_back({Shape{5, n}});
        test::expect_sequence({"reduce", reduce_attrs("mean", {-1}), {test::f32({Dimension(), Dimension()})}, {}},
                              test::random_runs(DataType::f32, lines, 300), o);
    }
}

// Axes values change on one network (keepdims, so the rank stays).
TEST(ReduceDynamic, AxesInputValuesChangeOnOneInstance) {
    const std::vector<std::vector<int64_t>> axes = {{0}, {1}, {-1}, {1}, {0}};
    std::vector<test::Run> runs;
    for (size_t k = 0; k < axes.size(); ++k)
        runs.push_back({test::random_tensor(DataType::f32, Shape{3, 17}, 60 + k), axes_of(axes[k])});
    for (test::SequenceOptions o : test::every_engine_and_mode(tolerance_of(DataType::f32))) {
        SCOPED_TRACE(o.engine + std::string(" ") + test::mode_name(o.mode));
        o.check_counters = false;   // the shape changes with the axes' values, not with the inputs' shapes
        test::expect_sequence({"reduce", reduce_attrs("prod", {}), {test::f32({3, 17}), axes_layout(1)}, {}}, runs, o);
    }
}

// ---- the reference's values ----------------------------------------------------

TEST(ReduceReference, EveryModeOnATwoByThreeByHand) {
    // [[1, 2, 3], [4, 5, 6]] along axis 1.
    const HostTensor in = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    const double lse1 = std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0));
    const std::vector<std::pair<std::string, std::vector<double>>> cases = {
        {"sum", {6, 15}},
        {"mean", {2, 5}},
        {"max", {3, 6}},
        {"min", {1, 4}},
        {"prod", {6, 120}},
        {"l1", {6, 15}},
        {"l2", {std::sqrt(14.0), std::sqrt(77.0)}},
        {"sum_square", {14, 77}},
        {"log_sum", {std::log(6.0), std::log(15.0)}},
        {"log_sum_exp", {lse0, lse1}}};
    for (const auto& [mode, want] : cases) {
        SCOPED_TRACE(mode);
        expect_values(run(mode, in, {1}, false), want, 1e-5);
    }
}

TEST(ReduceReference, EmptyReductionsGiveTheIdentity) {
    const HostTensor in(DataType::f32, Shape{2, 0});
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    const std::vector<std::pair<std::string, double>> cases = {
        {"sum", 0}, {"mean", nan}, {"max", -inf},     {"min", inf},      {"prod", 1},
        {"l1", 0},  {"l2", 0},     {"sum_square", 0}, {"log_sum", -inf}, {"log_sum_exp", -inf}};
    for (const auto& [mode, want] : cases) {
        SCOPED_TRACE(mode);
        expect_values(run(mode, in, {1}), {want, want});
    }
    // Integers: the type's lowest and highest.
    const HostTensor i8(DataType::i8, Shape{0});
    expect_values(run("max", i8, {0}), {-128});
    expect_values(run("min", i8, {0}), {127});
}

TEST(ReduceReference, NoopWithEmptyAxesAppliesTheElementMath) {
    const HostTensor in = HostTensor::from_floats(Shape{3}, {-2, 3, 0.5});
    expect_values(run("sum_square", in, {}, true, true), {4, 9, 0.25}, 1e-6);
    expect_values(run("l1", in, {}, true, true), {2, 3, 0.5}, 1e-6);
    expect_values(run("sum", in, {}, true, false), {1.5}, 1e-6);
    // A scalar reduces to itself.
    expect_values(run("sum", HostTensor::from_floats(Shape{}, {7}), {}, false), {7});
}

TEST(ReduceReference, NanPropagatesThroughMaxAndMin) {
    const double nan = std::nan("");
    const HostTensor in = HostTensor::from_floats(Shape{2, 3}, {1, static_cast<float>(nan), 3, 4, 5, 6});
    expect_values(run("max", in, {1}, false), {nan, 6});
    expect_values(run("min", in, {1}, false), {nan, 4});
}

TEST(ReduceReference, IntegersAreExactAndWrapLikeTheirType) {
    const int64_t big = int64_t{1} << 53;
    EXPECT_EQ(run("sum", HostTensor::from_int64(DataType::i64, Shape{3}, {big, 1, 1}), {}).to_int64(),
              std::vector<int64_t>{big + 2});
    // u8: 200 + 100 wraps to 44; i8 mean truncates toward zero: -7 / 2 = -3.
    expect_values(run("sum", HostTensor::from_int64(DataType::u8, Shape{2}, {200, 100}), {}), {44});
    expect_values(run("mean", HostTensor::from_int64(DataType::i8, Shape{2}, {-3, -4}), {}), {-3});
    expect_values(run("l2", HostTensor::from_int64(DataType::i32, Shape{2}, {3, 4}), {}), {5});
}

TEST(ReduceReference, LogSumExpOfLargeNumbersStaysFinite) {
    const HostTensor in = HostTensor::from_floats(Shape{2}, {1000, 1000});
    expect_values(run("log_sum_exp", in, {}), {1000 + std::log(2.0)}, 1e-3);
    const HostTensor ninf = HostTensor::from_floats(Shape{2}, {-INFINITY, -INFINITY});
    expect_values(run("log_sum_exp", ninf, {}), {-std::numeric_limits<double>::infinity()});
}

}   // namespace
}   // namespace dynrt
