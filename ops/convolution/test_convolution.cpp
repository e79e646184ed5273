// Tests of the convolution op: shape inference (static, bounded, dynamic and
// invalid cases), hand-computed small convolutions (padding, stride, dilation,
// groups), a naive convolution on random inputs, and one network instance fed
// a sequence of spatial sizes with constant weights; on OpenCL (skipped without
// an ocl engine) the static and shape-agnostic impls against the cpu reference
// over spatial sizes that hit the output blocks' tails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/cpu_dnnl.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "single_node.hpp"

namespace dynrt {
namespace {

struct Conv {
    std::vector<int64_t> strides{1, 1}, pads_begin{0, 0}, pads_end{0, 0}, dilations{1, 1};
    int64_t groups = 1;
    Attributes attrs() const { return test::conv_attrs(strides, pads_begin, pads_end, dilations, groups); }
};

const test::ShapesOf infer{"convolution"};

using test::f32;

// ---- 1. shape inference ------------------------------------------------------

TEST(ConvolutionShape, OutputSizeTable) {
    const Dimension dyn;
    Conv plain, g2p1, s2, d2, asym, s2p1;
    g2p1.groups = 2;
    g2p1.pads_begin = g2p1.pads_end = {1, 1};
    s2.strides = {2, 2};
    d2.dilations = {2, 2};
    asym.pads_begin = {1, 0};
    asym.pads_end = {0, 2};
    s2p1.strides = {2, 2};
    s2p1.pads_begin = s2p1.pads_end = {1, 1};
    struct Case {
        Conv conv;
        PartialShape x, w, out;
    };
    const std::vector<Case> cases = {
        {plain, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 2, 2}},
        {g2p1, {2, 4, 5, 5}, {6, 2, 3, 3}, {2, 6, 5, 5}},
        {s2, {1, 1, 7, 8}, {1, 1, 3, 3}, {1, 1, 3, 3}},     // (7-3)/2+1, (8-3)/2+1
        {d2, {1, 1, 7, 7}, {1, 1, 3, 3}, {1, 1, 3, 3}},     // effective kernel 5
        {asym, {1, 1, 5, 5}, {1, 1, 3, 3}, {1, 1, 4, 5}},   // 5+1-3+1, 5+2-3+1
        {s2p1, {1, 1, 1, 2}, {1, 1, 3, 3}, {1, 1, 1, 1}},   // (1+2-3)/2+1, (2+2-3)/2+1
        {plain, {dyn, 3, dyn, 8}, {4, 3, 3, 3}, {dyn, 4, Dimension(1, -1), 6}},
        {s2, {1, 3, Dimension(4, 10), 8}, {4, 3, 3, 3}, {1, 4, Dimension(1, 4), 3}},
        {plain, {1, 3, Dimension(1, 10), 8}, {4, 3, 3, 3}, {1, 4, Dimension(1, 8), 6}},
        {g2p1, {1, dyn, 5, 5}, {4, 2, 3, 3}, {1, 4, 5, 5}},
        {plain, {1, 3, 5, 5}, {dyn, 3, 3, 3}, {1, dyn, 3, 3}},
        {plain, {1, 3, 5, 5}, {4, 3, dyn, 3}, {1, 4, dyn, 3}},
        {plain, {0, 3, 5, 5}, {4, 3, 3, 3}, {0, 4, 3, 3}},
    };
    for (const Case& c : cases) {
        const std::vector<Layout> out = infer({f32(c.x), f32(c.w)}, c.conv.attrs());
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape, c.out) << c.x.to_string() << " * " << c.w.to_string() << " -> "
                                       << out[0].shape.to_string();
    }
    // Defaults: stride 1, no padding, no dilation, one group; bias accepted.
    EXPECT_EQ(infer({f32({1, 2, 4, 4}), f32({3, 2, 3, 3}), f32({3})}, Attributes())[0].shape,
              PartialShape({1, 3, 2, 2}));
}

TEST(ConvolutionShape, GroupMismatchesNameTheShapes) {
    Conv g2;
    g2.groups = 2;
    std::string msg = test::error_of([&] { infer({f32({1, 3, 5, 5}), f32({4, 1, 3, 3})}, g2.attrs()); });
    EXPECT_NE(msg.find("C=3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,3,5,5]"), std::string::npos) << msg;
    msg = test::error_of([&] { infer({f32({1, 4, 5, 5}), f32({3, 2, 3, 3})}, g2.attrs()); });
    EXPECT_NE(msg.find("O=3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3,2,3,3]"), std::string::npos) << msg;
    msg = test::error_of([] { infer({f32({1, 3, 5, 5}), f32({4, 2, 3, 3})}, Conv().attrs()); });
    EXPECT_NE(msg.find("[4,2,3,3]"), std::string::npos) << msg;
    // C/groups * groups would wrap to C = 0.
    Conv g4;
    g4.groups = 4;
    msg = test::error_of([&] { infer({f32({1, 0, 5, 5}), f32({4, int64_t{1} << 62, 3, 3})}, g4.attrs()); });
    EXPECT_NE(msg.find("C=0 but weights expect C/groups=4611686018427387904 with groups=4"), std::string::npos) << msg;
}

TEST(ConvolutionShape, EmptyOutputIsRejected) {
    std::string msg = test::error_of([] { infer({f32({1, 1, 2, 5}), f32({1, 1, 3, 3})}, Conv().attrs()); });
    EXPECT_NE(msg.find("output extent of spatial axis [0] would be 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("field 'pads_begin'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,1,2,5]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,1,3,3]"), std::string::npos) << msg;
    // A bounded extent that never fits the kernel is rejected at build time too.
    msg = test::error_of([] { infer({f32({1, 1, 5, Dimension(1, 2)}), f32({1, 1, 3, 3})}, Conv().attrs()); });
    EXPECT_NE(msg.find("spatial axis [1]"), std::string::npos) << msg;
    // A dilation that makes the kernel outgrow the input names the dilations.
    Conv d3;
    d3.dilations = {3, 1};
    msg = test::error_of([&] { infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, d3.attrs()); });
    EXPECT_NE(msg.find("field 'dilations'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("would be -1"), std::string::npos) << msg;
}

TEST(ConvolutionShape, ZeroKernelExtentOrStride_IsAnErrorNamingTheWeightsOrAttribute) {
    std::string msg = test::error_of([] { infer({f32({1, 3, 5, 5}), f32({4, 3, 0, 0})}, Conv().attrs()); });
    EXPECT_NE(msg.find("weights (input 1) [4,3,0,0] have kernel extent 0 on spatial axis [0]"), std::string::npos)
        << msg;
    msg = test::error_of([] { infer({f32({1, 3, Dimension(), 5}), f32({4, 3, 3, 0})}, Conv().attrs()); });
    EXPECT_NE(msg.find("weights (input 1) [4,3,3,0] have kernel extent 0 on spatial axis [1]"), std::string::npos)
        << msg;
    Conv s0;
    s0.strides = {0, 1};
    msg = test::error_of([&] { infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, s0.attrs()); });
    EXPECT_NE(msg.find("field 'strides'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("must be >= 1, got [0,1]"), std::string::npos) << msg;
}

// Pads and dilations that would wrap int64 (here to a small, valid-looking
// extent) are errors naming the attribute and the values.
TEST(ConvolutionShape, OverflowingPadsOrDilations_AreErrorsNotWrappedExtents) {
    const int64_t max = std::numeric_limits<int64_t>::max();
    Conv pads;
    pads.pads_begin = {max, 0};
    pads.pads_end = {max, 0};   // 5 + 2 * max wraps to 3
    std::string msg = test::error_of([&] { infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, pads.attrs()); });
    EXPECT_NE(msg.find("input extent + pads_begin[0] + pads_end[0] overflows: 5 + 9223372036854775807"),
              std::string::npos)
        << msg;
    Conv dil;
    dil.dilations = {1, int64_t{1} << 62};   // 2^62 * (5 - 1) wraps to 0
    msg = test::error_of([&] { infer({f32({1, 1, 5, 5}), f32({1, 1, 5, 5})}, dil.attrs()); });
    EXPECT_NE(msg.find("dilations[1] * (kernel extent - 1) + 1 overflows: 4611686018427387904 * 4"), std::string::npos)
        << msg;
    // The bound of a dynamic extent goes through the same checks.
    Conv p1;
    p1.pads_end = {1, 0};
    msg = test::error_of([&] { infer({f32({1, 1, Dimension(1, max), 5}), f32({1, 1, 3, 3})}, p1.attrs()); });
    EXPECT_NE(msg.find("overflows: 9223372036854775807 + 1"), std::string::npos) << msg;
}

TEST(ConvolutionShape, BadRanksAttributesAndBiasAreRejected) {
    EXPECT_NE(test::error_of([] {
                  infer({f32({1, 3, 5, 5, 5, 5}), f32({4, 3, 3, 3, 3, 3})}, Conv().attrs());
              }).find("1 to 3 spatial axes"),
              std::string::npos);
    EXPECT_NE(test::error_of([] {
                  infer({f32({1, 3, 5}), f32({4, 3, 3, 3})}, Conv().attrs());
              }).find("of the same rank, got input [1,3,5], weights [4,3,3,3]"),
              std::string::npos);
    Conv bad;
    bad.strides = {1};
    EXPECT_NE(test::error_of([&] {
                  infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, bad.attrs());
              }).find("strides"),
              std::string::npos);
    bad = Conv();
    bad.dilations = {1, 0};
    EXPECT_NE(test::error_of([&] {
                  infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, bad.attrs());
              }).find("dilations"),
              std::string::npos);
    bad = Conv();
    bad.pads_end = {-1, 0};
    EXPECT_NE(test::error_of([&] {
                  infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, bad.attrs());
              }).find("pads_end"),
              std::string::npos);
    bad = Conv();
    bad.groups = 0;
    EXPECT_NE(test::error_of([&] {
                  infer({f32({1, 1, 5, 5}), f32({1, 1, 3, 3})}, bad.attrs());
              }).find("groups"),
              std::string::npos);
    const std::string msg = test::error_of([] {
        infer({f32({1, 1, 5, 5}), f32({4, 1, 3, 3}), f32({5})}, Conv().attrs());
    });
    EXPECT_NE(msg.find("bias"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[5]"), std::string::npos) << msg;
}

// Attributes of an N-D convolution: attrs({{"strides", ints{2}}, ...}).
using ints = std::vector<int64_t>;
Attributes nd(std::initializer_list<std::pair<const std::string, AttrValue>> values) { return test::attrs(values); }
const std::string kUpper = "same_upper", kLower = "same_lower", kValid = "valid";

TEST(ConvolutionShape, OneToThreeSpatialAxesGroupsAndAutoPadTable) {
    const Dimension dyn;
    test::expect_shapes(
        "convolution",
        {
            // 1-D, groups 2, stride 2, pads 1/0: (10 + 1 - 3)/2 + 1.
            {{f32({2, 4, 10}), f32({6, 2, 3})},
             nd({{"groups", int64_t{2}}, {"strides", ints{2}}, {"pads_begin", ints{1}}}),
             {f32({2, 6, 5})}},
            // 3-D with a dilation on one axis: 5-3+1, 6-5+1, 7-3+1.
            {{f32({1, 2, 5, 6, 7}), f32({3, 2, 3, 3, 3})}, nd({{"dilations", ints{1, 2, 1}}}), {f32({1, 3, 3, 2, 5})}},
            // Depthwise.
            {{f32({1, 8, 5, 5}), f32({8, 1, 3, 3}), f32({8})}, nd({{"groups", int64_t{8}}}), {f32({1, 8, 3, 3})}},
            // auto_pad same_*: ceil(in / stride) from the runtime extent, bounds to bounds.
            {{f32({1, 1, 7}), f32({1, 1, 3})}, nd({{"auto_pad", kUpper}, {"strides", ints{2}}}), {f32({1, 1, 4})}},
            {{f32({1, 1, dyn}), f32({1, 1, 3})},
             nd({{"auto_pad", kLower}, {"strides", ints{2}}}),
             {f32({1, 1, Dimension(1, -1)})}},
            {{f32({1, 1, Dimension(1, 10), 4}), f32({1, 1, 3, 3})},
             nd({{"auto_pad", kUpper}, {"strides", ints{2, 1}}}),
             {f32({1, 1, Dimension(1, 5), 4})}},
            // valid ignores the pads.
            {{f32({1, 1, 4, 4, 4}), f32({1, 1, 2, 2, 2})},
             nd({{"auto_pad", kValid}, {"pads_begin", ints{5, 5, 5}}}),
             {f32({1, 1, 3, 3, 3})}},
            // Errors name the attribute, the values and the shapes.
            {{f32({1, 1, 7}), f32({1, 1, 3})},
             nd({{"strides", ints{2, 2}}}),
             {},
             {"field 'strides'", "needs 1 values"}},
            {{f32({1, 6, 7}), f32({4, 2, 3})},
             nd({{"groups", int64_t{4}}}),
             {},
             {"field 'groups'", "C=6 not divisible by groups=4", "[1,6,7]"}},
            {{f32({1, 1, 0}), f32({1, 1, 3})},
             nd({{"auto_pad", kUpper}}),
             {},
             {"field 'auto_pad'", "spatial axis [0] would be 0", "[1,1,0]"}},
            {{f32({1, 1, 4, 4, 2}), f32({1, 1, 2, 2, 3})},
             nd({{"auto_pad", kValid}}),
             {},
             {"field 'auto_pad'", "spatial axis [2] would be 0"}},
            {{f32({1, 1, 4}), f32({1, 1, 3})}, nd({{"auto_pad", std::string("same")}}), {}, {"auto_pad"}},
            {{f32({1, 1, 4}), f32({1, 1, 3})}, nd({{"pads_end", ints{-1}}}), {}, {"field 'pads_end'", ">= 0"}},
        });
}

TEST(ConvolutionShape, IsCriticalAndWeightable) {
    const OpTraits& t = test::registry()->op("convolution").def.traits;
    EXPECT_TRUE(t.critical);
    EXPECT_TRUE(t.weightable);
}

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const std::vector<HostTensor>& in, const Conv& conv) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("convolution", layouts, conv.attrs()), in);
}

void expect_values(const HostTensor& y, const Shape& s, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(y.shape(), s) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(y.get_as_double(i), want[i]) << what << " at " << i;
}

// x = [[1,2,3],[4,5,6],[7,8,9]], w = [[1,2],[3,4]].
const HostTensor kX = HostTensor::from_floats(Shape{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
const HostTensor kW = HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 2, 3, 4});

TEST(ConvolutionValues, ThreeByThreeWithTwoByTwoKernel) {
    // y00 = 1+4+12+20, y01 = 2+6+15+24, y10 = 4+10+21+32, y11 = 5+12+24+36.
    expect_values(run({kX, kW}, Conv()), Shape{1, 1, 2, 2}, {37, 47, 67, 77}, "valid");
    expect_values(run({kX, kW, HostTensor::from_floats(Shape{1}, {0.5f})}, Conv()), Shape{1, 1, 2, 2},
                  {37.5, 47.5, 67.5, 77.5}, "bias");
}

TEST(ConvolutionValues, PaddingStrideAndDilationByHand) {
    Conv p1s2;
    p1s2.pads_begin = p1s2.pads_end = {1, 1};
    p1s2.strides = {2, 2};
    // Windows start at -1 and 1: y00 = 1*4, y01 = 2*3+3*4, y10 = 4*2+7*4,
    // y11 = 5*1+6*2+8*3+9*4.
    expect_values(run({kX, kW}, p1s2), Shape{1, 1, 2, 2}, {4, 18, 36, 77}, "pad 1 stride 2");
    Conv d2;
    d2.dilations = {2, 2};
    // The four corners: 1*1 + 3*2 + 7*3 + 9*4.
    expect_values(run({kX, kW}, d2), Shape{1, 1, 1, 1}, {64}, "dilation 2");
    Conv asym;
    asym.pads_end = {0, 1};
    // Extra zero column on the right: y02 = 3*1 + 6*3, y12 = 6*1 + 9*3.
    expect_values(run({kX, kW}, asym), Shape{1, 1, 2, 3}, {37, 47, 21, 67, 77, 33}, "pad end");
}

TEST(ConvolutionValues, GroupedConvolutionKeepsChannelsApart) {
    // ch0 = [[1,2],[3,4]], ch1 = [[5,6],[7,8]].
    const HostTensor x = HostTensor::from_floats(Shape{1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    Conv g2;
    g2.groups = 2;
    expect_values(run({x, HostTensor::from_floats(Shape{2, 1, 1, 1}, {2, -1})}, g2), Shape{1, 2, 2, 2},
                  {2, 4, 6, 8, -5, -6, -7, -8}, "depthwise");
    // Two outputs per group: outputs 0,1 read ch0, outputs 2,3 read ch1.
    expect_values(run({x, HostTensor::from_floats(Shape{4, 1, 1, 1}, {1, 2, 3, 4})}, g2), Shape{1, 4, 2, 2},
                  {1, 2, 3, 4, 2, 4, 6, 8, 15, 18, 21, 24, 20, 24, 28, 32}, "two per group");
    // One group sums the channels.
    expect_values(run({x, HostTensor::from_floats(Shape{1, 2, 1, 1}, {1, 1})}, Conv()), Shape{1, 1, 2, 2},
                  {6, 8, 10, 12}, "one group");
}

// Naive convolution: build the zero-padded input explicitly, then correlate
// with the dilated kernel.
HostTensor naive_conv(const HostTensor& x, const HostTensor& w, const HostTensor* b, const Conv& c) {
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    const int64_t N = xs[0], C = xs[1], O = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
    const int64_t PH = xs[2] + c.pads_begin[0] + c.pads_end[0];
    const int64_t PW = xs[3] + c.pads_begin[1] + c.pads_end[1];
    std::vector<double> padded(static_cast<size_t>(N * C * PH * PW), 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
            for (int64_t h = 0; h < xs[2]; ++h)
                for (int64_t v = 0; v < xs[3]; ++v)
                    padded[((n * C + ch) * PH + h + c.pads_begin[0]) * PW + v + c.pads_begin[1]] =
                        x.get_as_double(((n * C + ch) * xs[2] + h) * xs[3] + v);
    const int64_t OH = (PH - c.dilations[0] * (KH - 1) - 1) / c.strides[0] + 1;
    const int64_t OW = (PW - c.dilations[1] * (KW - 1) - 1) / c.strides[1] + 1;
    HostTensor y(x.dtype(), Shape{N, O, OH, OW});
    const int64_t per_group = O / c.groups;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    double acc = b ? b->get_as_double(o) : 0.0;
                    for (int64_t cg = 0; cg < CG; ++cg)
                        for (int64_t p = 0; p < KH; ++p)
                            for (int64_t q = 0; q < KW; ++q)
                                acc += padded[((n * C + (o / per_group) * CG + cg) * PH + i * c.strides[0] +
                                               p * c.dilations[0]) *
                                                  PW +
                                              j * c.strides[1] + q * c.dilations[1]] *
                                       w.get_as_double(((o * CG + cg) * KH + p) * KW + q);
                    y.set_from_double(((n * O + o) * OH + i) * OW + j, acc);
                }
    return y;
}

TEST(ConvolutionValues, RandomConfigurationsMatchNaive) {
    struct Config {
        Shape x, w;
        Conv conv;
    };
    std::vector<Config> configs(4);
    configs[0] = {Shape{2, 3, 9, 7}, Shape{4, 3, 3, 2}, Conv()};
    configs[0].conv.strides = {2, 1};
    configs[0].conv.pads_begin = {1, 0};
    configs[0].conv.pads_end = {2, 1};
    configs[0].conv.dilations = {1, 2};
    configs[1] = {Shape{1, 6, 8, 8}, Shape{9, 2, 3, 3}, Conv()};
    configs[1].conv.groups = 3;
    configs[1].conv.pads_begin = configs[1].conv.pads_end = {1, 1};
    configs[2] = {Shape{1, 4, 13, 11}, Shape{4, 1, 5, 3}, Conv()};
    configs[2].conv.groups = 4;
    configs[2].conv.strides = {3, 2};
    configs[2].conv.dilations = {2, 3};
    configs[2].conv.pads_end = {2, 0};
    configs[3] = {Shape{3, 2, 5, 6}, Shape{5, 2, 1, 1}, Conv()};
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (size_t i = 0; i < configs.size(); ++i) {
            const Config& cfg = configs[i];
            const HostTensor x = test::random_tensor(t, cfg.x, 1 + i);
            const HostTensor w = test::random_tensor(t, cfg.w, 11 + i);
            const HostTensor b = test::random_tensor(t, Shape{cfg.w[0]}, 21 + i);
            const HostTensor y = run({x, w, b}, cfg.conv);
            EXPECT_LE(test::max_abs_diff(y, naive_conv(x, w, &b, cfg.conv)), t == DataType::f16 ? 8e-3 : 1e-5)
                << "config " << i << " " << to_string(t);
        }
    }
}

TEST(ConvolutionValues, OneAndThreeSpatialAxesAndAutoPadByHand) {
    auto run_nd = [](const std::vector<HostTensor>& in, const Attributes& a) {
        std::vector<Layout> layouts;
        for (const HostTensor& t : in) layouts.push_back(t.layout());
        return test::run_once(test::single_node_program("convolution", layouts, a), in);
    };
    const HostTensor x1 = HostTensor::from_floats(Shape{1, 1, 5}, {1, 2, 3, 4, 5});
    // w = [1, 0, -1] with pads 1/1 (same_upper, odd total split evenly): y[i] = x[i-1] - x[i+1].
    expect_values(run_nd({x1, HostTensor::from_floats(Shape{1, 1, 3}, {1, 0, -1})}, nd({{"auto_pad", kUpper}})),
                  Shape{1, 1, 5}, {-2, -2, -2, -2, 4}, "1-D same_upper, k 3");
    // k 2: total pad 1, at the end (upper) or the begin (lower).
    const HostTensor w2 = HostTensor::from_floats(Shape{1, 1, 2}, {1, 10});
    expect_values(run_nd({x1, w2}, nd({{"auto_pad", kUpper}})), Shape{1, 1, 5}, {21, 32, 43, 54, 5}, "upper");
    expect_values(run_nd({x1, w2}, nd({{"auto_pad", kLower}})), Shape{1, 1, 5}, {10, 21, 32, 43, 54}, "lower");
    // Stride 2, same_upper: out ceil(5/2) = 3, total (3-1)*2 + 2 - 5 = 1 at the end.
    expect_values(run_nd({x1, w2}, nd({{"auto_pad", kUpper}, {"strides", ints{2}}})), Shape{1, 1, 3}, {21, 43, 5},
                  "upper stride 2");
    // 3-D: one output, the sum of i * i for i = 1..8.
    std::vector<float> v(8);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
    const HostTensor x3 = HostTensor::from_floats(Shape{1, 1, 2, 2, 2}, v);
    const HostTensor w3 = HostTensor::from_floats(Shape{1, 1, 2, 2, 2}, v);
    expect_values(run_nd({x3, w3}, Attributes()), Shape{1, 1, 1, 1, 1}, {204}, "3-D");
    // 3-D pads 1 on depth only: depth taps 0 and 1 alone give 1*5+2*6+3*7+4*8 = 70
    // and 5*1+6*2+7*3+8*4 = 70 (padding reads zero).
    expect_values(run_nd({x3, w3}, nd({{"pads_begin", ints{1, 0, 0}}, {"pads_end", ints{1, 0, 0}}})),
                  Shape{1, 1, 3, 1, 1}, {70, 204, 70}, "3-D depth pads");
}

// ---- 3. changing shapes on one instance ----------------------------------------

// Every impl (host, OpenCL static and shape-agnostic) against the reference
// over 1-D, 2-D (depthwise, same_lower) and 3-D configurations and dtypes.
struct NdCase {
    Attributes attrs;
    Shape w;
    std::vector<Shape> xs;
};

std::vector<NdCase> nd_cases() {
    return {
        {nd({{"auto_pad", kUpper}, {"strides", ints{2}}, {"dilations", ints{2}}}),
         Shape{4, 3, 3},
         {{1, 3, 1}, {2, 3, 13}, {1, 3, 17}, {1, 3, 257}}},
        {nd({{"groups", int64_t{6}}, {"auto_pad", kLower}, {"strides", ints{2, 1}}}),
         Shape{12, 1, 3, 2},
         {{1, 6, 1, 1}, {1, 6, 13, 16}, {2, 6, 3, 17}}},
        {nd({{"groups", int64_t{2}},
             {"strides", ints{1, 2, 1}},
             {"pads_begin", ints{1, 0, 2}},
             {"pads_end", ints{0, 1, 1}},
             {"dilations", ints{1, 1, 2}}}),
         Shape{4, 2, 2, 3, 2},
         {{1, 4, 1, 2, 1}, {2, 4, 3, 5, 7}, {1, 4, 4, 3, 17}}},
    };
}

// The cpu's direct loop (groups 1, 1-2 spatial axes, few channels) has its
// own matrix below; these cases are grouped or 3-D.
const std::string kDirect = "cpu_direct_dynamic";

TEST(ConvolutionImpls, EveryImplMatchesTheReferenceOverOneToThreeSpatialAxes) {
    // The OpenCL kernel and the cpu's oneDNN and direct impls take f32 only.
    const std::vector<std::string> f32_only = {"ocl_static", "ocl_dynamic", "cpu_dnnl_static", "cpu_dnnl_dynamic",
                                               kDirect};
    for (const NdCase& c : nd_cases())
        for (DataType t : {DataType::f32, DataType::f16, DataType::f64}) {
            std::vector<std::vector<Shape>> shapes;
            for (const Shape& x : c.xs) shapes.push_back({x});
            const HostTensor w = test::random_tensor(t, c.w, 3);
            const HostTensor b = test::random_tensor(t, Shape{c.w[0]}, 4);
            const Layout x(PartialShape::dynamic_of_rank(c.w.rank()), t);
            test::expect_impls_match_reference({"convolution", c.attrs, {x, w.layout(), b.layout()}, {{1, w}, {2, b}}},
                                               test::random_runs(t, shapes), {},
                                               t == DataType::f32 ? std::vector<std::string>{kDirect} : f32_only);
        }
}

// One direct-loop case: weights [O, C, k...] and the x shapes one network
// instance runs in turn (its batch and spatial extents change).
struct DirectCase {
    std::string what;
    Attributes attrs;
    Shape w;
    std::vector<Shape> xs;
};

std::vector<DirectCase> direct_cases() {
    const auto conv2d = [](ints strides, ints pb, ints pe, ints dilations) {
        return test::conv_attrs(std::move(strides), std::move(pb), std::move(pe), std::move(dilations), 1);
    };
    // Output widths around the loop's 8-column blocks (1, 7, 8, 9, 17, 33) and
    // output channels that fill 8-channel blocks partly (1, 5, 8, 13, 16).
    return {
        {"3x3 pad 1, 3 -> 8 (a stem)",
         conv2d({1, 1}, {1, 1}, {1, 1}, {1, 1}),
         Shape{8, 3, 3, 3},
         {{1, 3, 8, 8}, {2, 3, 13, 9}, {4, 3, 1, 1}, {1, 3, 5, 33}, {2, 3, 13, 9}}},
        {"3x3 stride 2, 8 -> 13",
         conv2d({2, 2}, {1, 1}, {1, 1}, {1, 1}),
         Shape{13, 8, 3, 3},
         {{1, 8, 16, 16}, {2, 8, 17, 17}, {1, 8, 2, 3}, {3, 8, 9, 33}}},
        {"1x1 stride 2, 3 -> 5, no pads",
         conv2d({2, 2}, {0, 0}, {0, 0}, {1, 1}),
         Shape{5, 3, 1, 1},
         {{1, 3, 8, 8}, {2, 3, 13, 17}, {1, 3, 1, 1}}},
        {"3x5 strides 3/4, dilations 2/1, asymmetric pads, 8 -> 16",
         conv2d({3, 4}, {2, 0}, {0, 3}, {2, 1}),
         Shape{16, 8, 3, 5},
         {{1, 8, 9, 17}, {2, 8, 13, 40}, {1, 8, 5, 2}}},
        {"5x5 dilation 2 pads 4, 2 -> 1",
         conv2d({1, 1}, {4, 4}, {4, 4}, {2, 2}),
         Shape{1, 2, 5, 5},
         {{1, 2, 1, 1}, {2, 2, 7, 12}, {1, 2, 16, 9}}},
        {"1-D kernel 4 same_upper stride 3, 4 -> 8",
         nd({{"auto_pad", kUpper}, {"strides", ints{3}}}),
         Shape{8, 4, 4},
         {{1, 4, 1}, {2, 4, 17}, {1, 4, 64}, {3, 4, 8}}},
        {"2-D same_lower stride 2, 6 -> 9",
         nd({{"auto_pad", kLower}, {"strides", ints{2, 2}}}),
         Shape{9, 6, 3, 2},
         {{1, 6, 7, 7}, {2, 6, 10, 3}, {1, 6, 1, 16}}},
        {"1-D kernel 10 stride 5, 1 -> 16 (a waveform stem)",
         nd({{"strides", ints{5}}}),
         Shape{16, 1, 10},
         {{1, 1, 400}, {2, 1, 250}, {1, 1, 10}, {3, 1, 37}, {1, 1, 800}}},
        {"3x3 strides 8/6, dilations 5/7, asymmetric pads, 2 -> 4",
         conv2d({8, 6}, {1, 0}, {0, 2}, {5, 7}),
         Shape{4, 2, 3, 3},
         {{1, 2, 40, 50}, {2, 2, 17, 43}, {1, 2, 11, 15}}},
    };
}

// The direct loop against the reference, the batch and the spatial extents
// changing on one network instance; it must take every run of every case.
TEST(ConvolutionImpls, DirectLoopMatchesTheReferenceOverStridesDilationsPadsAndTails) {
    for (const DirectCase& c : direct_cases()) {
        SCOPED_TRACE(c.what);
        const HostTensor w = test::random_tensor(DataType::f32, c.w, 3);
        const HostTensor b = test::random_tensor(DataType::f32, Shape{c.w[0]}, 4);
        std::vector<std::vector<Shape>> shapes;
        for (const Shape& x : c.xs) shapes.push_back({x});
        const std::vector<test::Run> runs = test::random_runs(DataType::f32, shapes);
        const Layout x = f32(PartialShape::dynamic_of_rank(c.w.rank()));
        const std::vector<std::string> ran = test::expect_impls_match_reference(
            {"convolution", c.attrs, {x, w.layout(), b.layout()}, {{1, w}, {2, b}}}, runs, {}, {}, {"cpu"});
        EXPECT_NE(std::find(ran.begin(), ran.end(), kDirect), ran.end());
        // Without a bias too.
        test::expect_impls_match_reference({"convolution", c.attrs, {x, w.layout()}, {{1, w}}}, runs, {}, {}, {"cpu"});
    }
}

// The direct loop takes few channels and runs of up to 2^17 output elements;
// past either, oneDNN's impls serve the run, and -v / dynrt ops give the
// reason. On one dynamic node a shape past the limit goes to oneDNN and the
// next small one comes back to the loop.
TEST(ConvolutionImpls, DirectLoopLeavesManyChannelsAndLargeOutputsToOneDnn) {
    Conv c;
    c.pads_begin = c.pads_end = {1, 1};
    const EnginePtr cpu = test::engine("cpu");
    const auto check = [&](const Shape& x, const Shape& w) {
        const auto program = test::single_node_program("convolution", {f32(x), f32(w)}, c.attrs());
        const KernelParams p = tools::single_node_params(*program, cpu.get());
        for (const RegisteredImpl* r : test::registry()->impls("convolution", "cpu"))
            if (r->entry.name == kDirect) return r->entry.check(p);
        return std::string("no impl ") + kDirect;
    };
    EXPECT_EQ(check({4, 3, 32, 32}, {16, 3, 3, 3}), "");
    EXPECT_NE(check({1, 3, 128, 128}, {16, 3, 3, 3}).find("elements: oneDNN"), std::string::npos);
    EXPECT_NE(check({1, 17, 8, 8}, {8, 17, 3, 3}).find("C * kernel = 153"), std::string::npos);
    EXPECT_NE(check({1, 3, 8, 8}, {17, 3, 3, 3}).find("17 outputs"), std::string::npos);

    const HostTensor w = test::random_tensor(DataType::f32, Shape{8, 3, 3, 3}, 5);
    const std::vector<std::vector<Shape>> sizes = {{{1, 3, 16, 16}}, {{1, 3, 200, 100}}, {{2, 3, 9, 17}}};
    const test::OpSetup setup{"convolution", c.attrs(), {f32(PartialShape::dynamic_of_rank(4)), w.layout()}, {{1, w}}};
    test::SequenceOptions o;
    o.engine = "cpu";
    o.on_step = [&](const InferRequest& req, size_t step) {
        const std::string impl = req.last_run().nodes.back().impl;
        if (step == 1) EXPECT_NE(impl.find("cpu_dnnl"), std::string::npos) << impl;
        else EXPECT_EQ(impl, "convolution_" + kDirect) << "step " << step;
    };
    test::expect_sequence(setup, test::random_runs(DataType::f32, sizes), o);
}

// dnnl_impl_info without the "(transposed)" marks of staged arguments that
// move by the SDK's transposes (oneDNN's channels-last layouts).
std::string without_transposed(std::string info) {
    const std::string mark = "(transposed)";
    for (size_t at; (at = info.find(mark)) != std::string::npos;) info.erase(at, mark.size());
    return info;
}

// oneDNN's direct (brgemm / jit) convolutions run on blocked or channels-last
// layouts: the cpu engine's oneDNN impls take the layouts oneDNN picks and
// move the plain tensors into and out of them (channels-last by the SDK's
// own transposes, AVX-512's brgemm convolutions; blocked by oneDNN's
// reorders, AVX2's jit ones). With 20 input and 36 output channels (neither a
// multiple of 8: the transposes' edges) oneDNN picks a direct impl on a CPU
// with AVX2 or AVX-512 (without AVX2 it convolves through gemm on the plain
// tensors and this test is skipped): the static impl's plan stages x, the
// weights and y, and both oneDNN impls match the reference over sizes and
// batches that change between runs.
TEST(ConvolutionImpls, OneDnnImplsReorderIntoTheLayoutsOfADirectConvolution) {
    Conv c;
    c.pads_begin = c.pads_end = {1, 1};
    const HostTensor w = test::random_tensor(DataType::f32, Shape{36, 20, 3, 3}, 5);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{36}, 6);
    const auto program =
        test::single_node_program("convolution", {f32({1, 20, 20, 20}), w.layout(), b.layout()}, c.attrs());
    const EnginePtr cpu = test::engine("cpu");
    KernelParams p = tools::single_node_params(*program, cpu.get());
    std::string info, constant_info;
    for (const RegisteredImpl* r : test::registry()->impls("convolution", "cpu"))
        if (r->entry.name == "cpu_dnnl_static") {
            info = dnnl_impl_info(*r->entry.create(p));
            p.constant_weights = true;   // then reordered once per weights buffer
            constant_info = dnnl_impl_info(*r->entry.create(p));
        }
    ASSERT_FALSE(info.empty()) << "no cpu_dnnl_static impl of convolution";
    if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx2) GTEST_SKIP() << "no AVX2: oneDNN convolves through gemm";
    EXPECT_EQ(info.find("gemm"), std::string::npos) << info;
    EXPECT_NE(without_transposed(info).find("staged src weights dst"), std::string::npos) << info;
    EXPECT_NE(without_transposed(constant_info).find("staged src weights(once) dst"), std::string::npos)
        << constant_info;
    // The weights move once, by oneDNN's reorder, never by the transposes.
    EXPECT_EQ(constant_info.find("weights(once)(transposed)"), std::string::npos) << constant_info;

    const std::vector<std::vector<Shape>> sizes = {{{1, 20, 20, 20}}, {{2, 20, 7, 9}},  {{1, 20, 33, 17}},
                                                   {{3, 20, 1, 1}},   {{1, 20, 70, 3}}, {{1, 20, 20, 20}}};
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"convolution", c.attrs(), {f32(PartialShape::dynamic_of_rank(4)), w.layout(), b.layout()}, {{1, w}, {2, b}}},
        test::random_runs(DataType::f32, sizes, 7), {}, {kDirect}, {"cpu"});
    for (const char* name : {"cpu_dnnl_static", "cpu_dnnl_dynamic"})
        EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
}

using test::Mode;

// auto_pad same_upper on a 1-D input whose length changes on every run: the
// pads follow the runtime extent on every engine and mode.
TEST(ConvolutionDynamic, AutoPadFollowsTheRuntimeLengthOnOneInstance) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{4, 2, 4}, 7);
    const test::OpSetup setup{"convolution",
                              nd({{"auto_pad", kUpper}, {"strides", ints{3}}}),
                              {f32(PartialShape{1, 2, Dimension()}), w.layout()},
                              {{1, w}}};
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{1, 2, n}});
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        // A critical op serves revisits from the static impls built in the background.
        if (o.mode == Mode::dynamic_async) o.impl_suffix.clear();
        test::expect_sequence(setup, test::random_runs(DataType::f32, shapes), o);
    }
}

void sweep(Mode mode) {
    Conv conv;
    conv.strides = {2, 2};
    conv.pads_begin = conv.pads_end = {1, 1};
    const HostTensor w = test::random_tensor(DataType::f32, Shape{4, 3, 3, 3}, 5);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{4}, 6);
    const test::OpSetup setup{"convolution",
                              conv.attrs(),
                              {f32(PartialShape{1, 3, Dimension(), Dimension()}), w.layout(), b.layout()},
                              {{1, w}, {2, b}}};
    const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},   {3, 3},   {13, 13}, {13, 13}, {16, 3}, {17, 17},
                                                            {255, 3}, {3, 257}, {13, 13}, {1, 1},   {1, 1}};
    std::vector<test::Run> runs;
    for (size_t step = 0; step < sizes.size(); ++step)
        runs.push_back(
            {test::random_tensor(DataType::f32, Shape{1, 3, sizes[step].first, sizes[step].second}, 50 + step)});
    test::SequenceOptions o;
    o.mode = mode;
    o.on_step = [&](const InferRequest& req, size_t step) {
        const HostTensor want = naive_conv(runs[step][0], w, &b, conv);
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), want.shape()) << "step " << step;
        EXPECT_LE(test::max_abs_diff(y, want), 1e-5) << "step " << step;
    };
    test::expect_sequence(setup, runs, o);
}

TEST(ConvolutionDynamic, DynamicImplServesNewSpatialSizesWhileStaticBuildsInBackground) { sweep(Mode::dynamic_async); }
TEST(ConvolutionDynamic, WithoutBackgroundCompileEachNewSpatialSizeBuildsStatic) { sweep(Mode::sync_compile); }
TEST(ConvolutionDynamic, OneInstanceFollowsSpatialSizesOnStaticImpls) { sweep(Mode::static_only); }

// ---- 4. OpenCL impls against the cpu reference -----------------------------------

// Programs built here are cached in a folder of this test binary, not the user's.
// Sums of at most C/groups * kH * kW = 27 products of values in [-1, 1).
constexpr double kOclTol = 1e-5;

// x [N, C, H, W] (every dim dynamic in the program), weights and bias constant.
void ocl_sweep(bool dynamic, const Conv& conv, const Shape& w_shape, const std::vector<Shape>& xs) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const HostTensor w = test::random_tensor(DataType::f32, w_shape, 5);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{w_shape[0]}, 6);
    auto prog = test::single_node_program(
        "convolution", {Layout(PartialShape::dynamic_of_rank(4), DataType::f32), w.layout(), b.layout()}, conv.attrs(),
        {{1, w}, {2, b}});
    test::OclAndCpuRequests requests(eng, prog, dynamic);
    InferRequest& req = requests.req;
    InferRequest& ref = requests.ref;
    std::set<Shape> seen;
    for (size_t step = 0; step < xs.size(); ++step) {
        const bool revisit = seen.count(xs[step]) > 0;
        seen.insert(xs[step]);
        const std::string what = "step " + std::to_string(step) + " x " + xs[step].to_string();
        const HostTensor x = test::random_tensor(DataType::f32, xs[step], 40 + step);
        req.set_input("in0", x);
        ref.set_input("in0", x);
        req.infer();
        ref.infer();
        const HostTensor y = req.get_output(0);
        const HostTensor want = ref.get_output(0);
        ASSERT_EQ(y.shape(), want.shape()) << what;
        EXPECT_LE(test::max_abs_diff(y, want), kOclTol) << what;
        const NodeStats& ns = req.last_run().nodes.back();
        ASSERT_EQ(ns.node, "node");
        test::expect_ocl_impl(ns, dynamic, revisit, what);
    }
}

// Spatial sizes over the tails of the 4-wide output blocks (1, 3, 13, 16, 17,
// 255, 257) and a changing batch, with revisits.
std::vector<Shape> spatial_cases(int64_t c) {
    return {{1, c, 1, 1},   {2, c, 3, 3},   {1, c, 13, 16}, {1, c, 17, 17},
            {1, c, 255, 3}, {1, c, 3, 257}, {2, c, 3, 3},   {1, c, 1, 1}};
}

Conv strided() {
    Conv c;
    c.strides = {2, 2};
    c.pads_begin = c.pads_end = {1, 1};
    return c;
}

Conv grouped_dilated() {
    Conv c;
    c.dilations = {2, 2};
    c.pads_begin = {2, 1};
    c.pads_end = {2, 3};
    c.groups = 3;
    return c;
}

TEST(ConvolutionOcl, ShapeAgnosticImplMatchesCpuOverTailSizes) {
    ocl_sweep(true, strided(), Shape{4, 3, 3, 3}, spatial_cases(3));
}
TEST(ConvolutionOcl, StaticImplsMatchCpuOverTailSizesAndAreCached) {
    ocl_sweep(false, strided(), Shape{4, 3, 3, 3}, spatial_cases(3));
}
TEST(ConvolutionOcl, GroupsDilationsAndAsymmetricPadsMatchCpu) {
    const std::vector<Shape> xs = {{1, 6, 5, 7}, {2, 6, 17, 13}, {1, 6, 1, 1}};
    ocl_sweep(true, grouped_dilated(), Shape{9, 2, 3, 3}, xs);
    ocl_sweep(false, grouped_dilated(), Shape{9, 2, 3, 3}, xs);
}

}   // namespace
}   // namespace dynrt
