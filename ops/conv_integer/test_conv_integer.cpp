// conv_integer: shape-inference table, every impl against the reference
// (u8/i8 mixes, zero points per tensor and per output channel, pads, strides,
// dilations, groups, auto_pad, requantized with and without bias), one
// instance fed changing shapes, and hand-computed values.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

const char* const kOp = "conv_integer";

Layout u8(PartialShape s) { return Layout(std::move(s), DataType::u8); }
Layout i8(PartialShape s) { return Layout(std::move(s), DataType::i8); }
Layout i32(PartialShape s) { return Layout(std::move(s), DataType::i32); }

Attributes zps(std::initializer_list<std::pair<const std::string, AttrValue>> more = {}) {
    Attributes a = attrs(more);
    a.set("x_zero_point", true);
    a.set("w_zero_point", true);
    return a;
}

// ---- 1. shape inference ------------------------------------------------------

TEST(ConvIntegerShape, OutputIsTheWindowedExtentInI32OrTheOutputZeroPointsType) {
    const Dimension dyn;
    const std::vector<int64_t> p1 = {1, 1};
    test::expect_shapes(
        kOp, {
                 {{u8({1, 1, 3, 3}), u8({1, 1, 2, 2})}, {}, {i32({1, 1, 2, 2})}},
                 {{u8({1, 1, 3, 3}), u8({1, 1, 2, 2}), u8({})},
                  attrs({{"x_zero_point", true}, {"pads_begin", p1}, {"pads_end", p1}}),
                  {i32({1, 1, 4, 4})}},
                 {{u8({2, 4, 9, 8}), i8({6, 2, 3, 3}), u8({}), i8({6})},
                  zps({{"groups", int64_t{2}}, {"strides", std::vector<int64_t>{2, 2}}}),
                  {i32({2, 6, 4, 3})}},
                 {{u8({dyn, 3, dyn, 5}), u8({4, 3, 3, 3})},
                  attrs({{"auto_pad", std::string("same_upper")}}),
                  {i32({dyn, 4, dyn, 5})}},
                 {{u8({1, 2, 5, 5}), f32({}), u8({}), i8({3, 2, 1, 1}), f32({3}), i8({3}), f32({}), i8({}), i32({3})},
                  attrs({{"requantize", true}}),
                  {i8({1, 3, 5, 5})}},
             });
}

TEST(ConvIntegerShape, BadInputsAreErrorsNamingTheField) {
    test::expect_shapes(
        kOp, {
                 {{u8({1, 4, 3, 3}), u8({2, 3, 1, 1})}, {}, {}, {"node 'node'", "groups", "channels"}},
                 {{u8({1, 1, 3}), u8({1, 1, 2})}, {}, {}, {"[N,C,H,W]"}},
                 {{f32({1, 1, 3, 3}), u8({1, 1, 2, 2})}, {}, {}, {"x must be u8 or i8"}},
                 {{u8({1, 1, 3, 3}), u8({2, 1, 2, 2}), u8({}), u8({3})}, zps(), {}, {"w_zero_point", "output channel"}},
                 {{u8({1, 1, 3, 3}), u8({1, 1, 2, 2}), u8({2})}, attrs({{"x_zero_point", true}}), {}, {"x_zero_point"}},
                 {{u8({1, 1, 2, 2}), u8({1, 1, 3, 3})}, {}, {}, {"output extent"}},
                 {{u8({1, 1, 3, 3}), f32({}), u8({}), u8({1, 1, 1, 1}), f32({}), u8({}), f32({}), u8({}), f32({1})},
                  attrs({{"requantize", true}}),
                  {},
                  {"B", "i32[M]"}},
             });
}

// ---- 2. every impl against the reference -----------------------------------------

HostTensor full(DataType t, const Shape& s, uint64_t seed) {
    return test::random_tensor(t, s, seed, t == DataType::u8 ? 0 : -128, t == DataType::u8 ? 256 : 128);
}

TEST(ConvIntegerImpls, EveryImplMatchesTheReferenceWithZeroPointsAndWindows) {
    struct Case {
        Attributes a;
        int64_t c, m, cg, k;
    };
    const std::vector<int64_t> p = {1, 0}, q = {0, 2};
    const std::vector<Case> cases = {
        {zps(), 3, 4, 3, 3},
        {zps({{"pads_begin", p}, {"pads_end", q}, {"strides", std::vector<int64_t>{2, 1}}}), 2, 3, 2, 2},
        {zps({{"dilations", std::vector<int64_t>{2, 2}}, {"groups", int64_t{2}}}), 4, 2, 2, 3},
        {zps({{"auto_pad", std::string("same_lower")}, {"strides", std::vector<int64_t>{2, 2}}}), 1, 2, 1, 3},
    };
    uint64_t seed = 1;
    for (DataType tx : {DataType::u8, DataType::i8})
        for (DataType tw : {DataType::u8, DataType::i8})
            for (const Case& c : cases) {
                // Every window on u8 x u8; the other type mixes on one padded, strided case.
                if ((tx != DataType::u8 || tw != DataType::u8) && &c != &cases[1]) continue;
                SCOPED_TRACE(std::string(to_string(tx)) + " x " + to_string(tw) + " " + std::to_string(c.c));
                const HostTensor w = full(tw, Shape{c.m, c.cg, c.k, c.k}, seed++);
                const HostTensor wz = full(tw, Shape{c.m}, seed++);
                std::vector<test::Run> runs = {{full(tx, Shape{1, c.c, 7, 6}, seed++), full(tx, Shape{}, seed++)}};
                if (tx == DataType::u8 && tw == DataType::u8)
                    runs.push_back({full(tx, Shape{2, c.c, 5, 9}, seed++), full(tx, Shape{}, seed++)});
                test::expect_impls_match_reference({kOp,
                                                    c.a,
                                                    {Layout({Dimension(), c.c, Dimension(), Dimension()}, tx),
                                                     w.layout(), Layout({}, tx), wz.layout()},
                                                    {{1, w}, {3, wz}}},
                                                   runs);
            }
}

TEST(ConvIntegerImpls, RequantizedConvolutionsMatchTheReference) {
    for (DataType t : {DataType::u8, DataType::i8}) {
        SCOPED_TRACE(to_string(t));
        const std::map<size_t, HostTensor> c = {{1, test::random_tensor(DataType::f32, Shape{}, 1, 0.01, 0.05)},
                                                {2, full(t, Shape{}, 2)},
                                                {3, full(t, Shape{5, 3, 3, 3}, 3)},
                                                {4, test::random_tensor(DataType::f32, Shape{5}, 4, 0.01, 0.05)},
                                                {5, test::random_tensor(t, Shape{5}, 5, -3, 3)},
                                                {6, test::random_tensor(DataType::f32, Shape{}, 6, 0.5, 2)},
                                                {7, test::random_tensor(t, Shape{}, 7, -5, 5)},
                                                {8, test::random_tensor(DataType::i32, Shape{5}, 8, -5000, 5000)}};
        const Layout x({Dimension(), 3, Dimension(), Dimension()}, t);
        std::vector<Layout> in = {x};
        for (size_t k = 1; k < 9; ++k) in.push_back(c.at(k).layout());
        const Attributes a = attrs({{"requantize", true},
                                    {"pads_begin", std::vector<int64_t>{1, 1}},
                                    {"pads_end", std::vector<int64_t>{1, 1}}});
        const std::vector<test::Run> runs = {{full(t, Shape{1, 3, 6, 5}, 20)}, {full(t, Shape{2, 3, 3, 8}, 21)}};
        test::expect_impls_match_reference({kOp, a, in, c}, runs);
        // Without bias.
        std::map<size_t, HostTensor> nb = c;
        nb.erase(8);
        in.pop_back();
        test::expect_impls_match_reference({kOp, a, in, nb}, {runs[0]});
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(ConvIntegerDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    const HostTensor w = full(DataType::u8, Shape{2, 2, 3, 3}, 1);
    std::vector<test::Run> runs;
    uint64_t seed = 10;
    for (int64_t n : {3, 5, 17, 3, 16, 5}) runs.push_back({full(DataType::u8, Shape{1, 2, n, n + 1}, seed++)});
    const Attributes a = attrs({{"auto_pad", std::string("same_upper")}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({kOp, a, {u8({1, 2, Dimension(), Dimension()}), w.layout()}, {{1, w}}}, runs, o);
    }
}

// ---- the reference's values -------------------------------------------------------

// ONNX's ConvInteger example: x 2..10 (3x3) with zero point 1, w ones (2x2).
TEST(ConvIntegerValues, SumsMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_int64(DataType::u8, Shape{1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
    const HostTensor w = HostTensor::from_int64(DataType::u8, Shape{1, 1, 2, 2}, {1, 1, 1, 1});
    const HostTensor z = HostTensor::from_int64(DataType::u8, Shape{}, {1});
    const std::vector<HostTensor> y = test::reference_outputs(
        {kOp, attrs({{"x_zero_point", true}}), {x.layout(), w.layout(), z.layout()}, {}}, {x, w, z});
    const int64_t want[] = {12, 16, 24, 28};   // (1+2+4+5), (2+3+5+6), ...
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int64_t>(y[0].get_as_double(i)), want[i]) << i;
}

TEST(ConvIntegerValues, AScaleThatIsNotPositiveIsAnErrorNamingTheNodeAndField) {
    const HostTensor x = HostTensor::from_int64(DataType::u8, Shape{1, 1, 2, 2}, {1, 2, 3, 4});
    const HostTensor w = HostTensor::from_int64(DataType::u8, Shape{1, 1, 1, 1}, {2});
    const HostTensor z = HostTensor::from_int64(DataType::u8, Shape{}, {0});
    const HostTensor one = HostTensor::from_floats(Shape{}, {1.0f}), bad = HostTensor::from_floats(Shape{}, {0.0f});
    const std::string e = test::error_of([&] {
        test::reference_outputs(
            {kOp,
             attrs({{"requantize", true}}),
             {x.layout(), one.layout(), z.layout(), w.layout(), bad.layout(), z.layout(), one.layout(), z.layout()},
             {}},
            {x, one, z, w, bad, z, one, z});
    });
    for (const char* word : {"node 'node'", "w_scale", "positive"}) EXPECT_NE(e.find(word), std::string::npos) << e;
}

// The OpenCL kernel reports a bad scale; the host raises an error naming it.
TEST(ConvIntegerValues, OpenClRaisesTheErrorOfANonPositiveScale) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL engine";
    const HostTensor x = HostTensor::from_int64(DataType::u8, Shape{1, 1, 2, 2}, {1, 2, 3, 4});
    const HostTensor w = HostTensor::from_int64(DataType::u8, Shape{1, 1, 1, 1}, {2});
    const HostTensor z = HostTensor::from_int64(DataType::u8, Shape{}, {0});
    const HostTensor one = HostTensor::from_floats(Shape{}, {1.0f}), bad = HostTensor::from_floats(Shape{}, {0.0f});
    const auto program = test::single_node_program(
        kOp, {x.layout(), one.layout(), z.layout(), w.layout(), one.layout(), z.layout(), bad.layout(), z.layout()},
        attrs({{"requantize", true}}));
    const std::string e = test::error_of([&] { test::run_once(program, {x, one, z, w, one, z, bad, z}, {}, "ocl"); });
    for (const char* word : {"node 'node'", "y_scale", "not positive"}) EXPECT_NE(e.find(word), std::string::npos) << e;
}

}   // namespace
}   // namespace dynrt
