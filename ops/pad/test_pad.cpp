// pad: shape-inference table, hand-computed values of every mode (crops,
// pads larger than the input, the constant from an input and the attribute),
// every impl against the reference, and one network instance fed changing
// shapes and amounts.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes pad_attrs(const std::string& mode, const std::vector<int64_t>& pads, double value = 0,
                     const std::vector<int64_t>& axes = {}) {
    return test::attrs({{"mode", mode}, {"pads", pads}, {"value", value}, {"axes", axes}});
}

HostTensor ints(const std::vector<int64_t>& v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}

Layout f32(PartialShape s) { return Layout(std::move(s), DataType::f32); }

// ---- 1. shape inference ----------------------------------------------------

TEST(PadShapeInfer, AmountsGrowOrCropAndBadAmountsAreRejected) {
    const Layout x = f32({1, 3, 4, 5});
    const Layout pads8({8}, DataType::i64);
    const std::vector<test::ShapeRow> rows = {
        {{x, pads8}, {}, {f32({1, 3, 7, 12})}, {}, {{1, ints({0, 0, 1, 3, 0, 0, 2, 4})}}},
        {{x, pads8}, {}, {f32(PartialShape::dynamic_of_rank(4))}},
        {{x}, pad_attrs("reflect", {1, -2, 1, 0}, 0, {-1, 2}), {f32({1, 3, 2, 7})}},
        {{f32({Dimension(), 4})}, pad_attrs("edge", {0, 1, 0, 1}), {f32({Dimension(), 6})}},
        {{f32({Dimension(), 4})}, pad_attrs("edge", {1, 0, 0, 0}), {f32({Dimension(), 4})}},
        {{f32(PartialShape{})}, pad_attrs("constant", {}), {f32(PartialShape{})}},
        {{f32({0, 2})}, pad_attrs("constant", {1, 0, 1, 0}), {f32({2, 2})}},
        {{f32({0, 2})}, pad_attrs("wrap", {1, 0, 1, 0}), {}, {"mode", "wrap", "no input element"}},
        {{f32({2, 2})}, pad_attrs("constant", {-3, 0, 0, 0}), {}, {"pads", "negative extent"}},
        {{x}, pad_attrs("constant", {1, 2}), {}, {"pads", "2 entries", "8 expected"}},
        {{x}, pad_attrs("constant", {1, 2, 3, 4}, 0, {1, -3}), {}, {"axes", "twice"}},
        {{x}, pad_attrs("constant", {1, 2}, 0, {4}), {}, {"axes", "out of range"}},
        {{x, Layout({8}, DataType::f32)}, {}, {}, {"pads", "i32/i64"}},
        {{x, pads8, Layout({2}, DataType::f32)}, {}, {}, {"value", "one element"}},
        {{x, pads8, Layout(PartialShape{}, DataType::f16)}, {}, {}, {"value", "f32"}},
        {{x, pads8}, pad_attrs("constant", {0, 0, 0, 0, 0, 0, 0, 0}), {}, {"pads", "both"}},
    };
    test::expect_shapes("pad", rows);
}

// ---- 2. hand-computed values ---------------------------------------------------

struct Hand {
    std::string mode;
    int64_t begin, end;
    std::vector<double> want;
};

// [1, 2, 3] padded along its one axis (numpy.pad's results).
TEST(PadReference, EveryModeByHandIncludingPadsLargerThanTheInputAndCrops) {
    const std::vector<Hand> cases = {
        {"constant", 2, 1, {9, 9, 1, 2, 3, 9}},
        {"edge", 2, 1, {1, 1, 1, 2, 3, 3}},
        {"reflect", 2, 1, {3, 2, 1, 2, 3, 2}},
        {"reflect", 5, 4, {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}},
        {"wrap", 5, 4, {2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1}},
        {"edge", -1, 2, {2, 3, 3, 3}},
        {"reflect", -1, 2, {2, 3, 2, 3}},   // crop first: [2, 3] reflected
        {"wrap", 1, -1, {2, 1, 2}},
        {"constant", -2, -1, {}},
    };
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8}) {
        for (const Hand& h : cases) {
            SCOPED_TRACE(std::string(to_string(t)) + " " + h.mode + " " + std::to_string(h.begin) + "," +
                         std::to_string(h.end));
            HostTensor in(t, Shape{3});
            for (size_t i = 0; i < 3; ++i) in.set_from_double(i, static_cast<double>(i + 1));
            const auto prog =
                test::single_node_program("pad", {Layout({3}, t)}, pad_attrs(h.mode, {h.begin, h.end}, 9));
            const HostTensor out = test::run_once(prog, {in});
            ASSERT_EQ(out.shape(), Shape({static_cast<int64_t>(h.want.size())}));
            for (size_t i = 0; i < h.want.size(); ++i) EXPECT_EQ(out.get_as_double(i), h.want[i]) << i;
        }
    }
}

// The constant from input 2 and the amounts from input 1, [2, 2] -> [3, 4].
TEST(PadReference, ConstantAndAmountsFromInputs) {
    const auto prog = test::single_node_program(
        "pad", {Layout({2, 2}, DataType::i64), Layout({4}, DataType::i32), Layout(PartialShape{}, DataType::i64)}, {});
    const HostTensor out =
        test::run_once(prog, {HostTensor::from_int64(DataType::i64, Shape{2, 2}, {1, 2, 3, 4}),
                              ints({1, 0, 0, 2}, DataType::i32), HostTensor::from_int64(DataType::i64, Shape{}, {-7})});
    ASSERT_EQ(out.shape(), Shape({3, 4}));
    EXPECT_EQ(out.to_int64(), std::vector<int64_t>({-7, -7, -7, -7, 1, 2, -7, -7, 3, 4, -7, -7}));
}

// ---- 3. every impl against the reference -------------------------------------

TEST(PadImpls, EveryImplMatchesTheReferenceInEveryMode) {
    // Every mode on f32; the other element widths (the kernels move bits) on
    // constant, whose value is converted into each type.
    const std::vector<std::vector<Shape>> shapes = {{{1, 3, 5}}, {{17, 4, 2}}, {{2, 3, 1}}};
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
        for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8}) {
            if (t != DataType::f32 && std::string(mode) != "constant") continue;
            SCOPED_TRACE(std::string(mode) + " " + to_string(t));
            const Layout in = Layout(PartialShape::dynamic_of_rank(3), t);
            test::expect_impls_match_reference({"pad", pad_attrs(mode, {2, -1, 3, 0, 4, 1}, 0.5), {in}, {}},
                                               test::random_runs(t, shapes, 3));
        }
    }
    // Amounts, constant and axes as inputs.
    const test::OpSetup s{
        "pad",
        {},
        {f32(PartialShape::dynamic_of_rank(3)), Layout({4}, DataType::i64), f32({1}), Layout({2}, DataType::i32)},
        {{1, ints({1, 3, 2, 0})}, {3, ints({-1, 0}, DataType::i32)}}};
    std::vector<test::Run> runs;
    for (const Shape& sh : {Shape{1, 3, 5}, Shape{17, 4, 2}, Shape{0, 2, 2}})
        runs.push_back({test::random_tensor(DataType::f32, sh, 11), test::random_tensor(DataType::f32, Shape{1}, 12)});
    test::expect_impls_match_reference(s, runs);
}

// ---- 4. one instance, changing shapes and amounts --------------------------------

TEST(PadDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{n, 3}});
    rows.push_back({Shape{1, 3}});
    std::vector<test::Run> with_amounts;
    uint64_t seed = 60;
    int64_t k = 0;
    for (int64_t n : test::tail_sizes()) {
        with_amounts.push_back(
            {test::random_tensor(DataType::f32, Shape{n, 3}, seed++), ints({k % 3, (k % 2) - 1, 2 - (k % 3), 1})});
        ++k;
    }
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        for (const char* mode : {"constant", "reflect"})
            test::expect_sequence({"pad", pad_attrs(mode, {3, 1, 2, 4}, -2), {f32({Dimension(), 3})}, {}},
                                  test::random_runs(DataType::f32, rows, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;   // the amounts change with the data shape unchanged
        test::expect_sequence({"pad", pad_attrs("edge", {}), {f32({Dimension(), 3}), Layout({4}, DataType::i64)}, {}},
                              with_amounts, values);
    }
}

}   // namespace
}   // namespace dynrt
