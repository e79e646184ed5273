// deconvolution: shape inference, a hand-computed example, an independent
// gather-form reference over strides/pads/dilations/groups/output_padding, the
// static host impl reading reordered (osv16) weights across changing spatial
// sizes, and the OpenCL impls against the cpu reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::ocl_engine;

struct DA {
    std::vector<int64_t> strides{1, 1}, pb{0, 0}, pe{0, 0}, dil{1, 1}, op{0, 0};
    int64_t groups = 1;
    Attributes attrs() const { return test::conv_attrs(strides, pb, pe, dil, groups, op); }
};

std::vector<Layout> infer(const std::vector<Layout>& in, const DA& a) {
    return test::infer_shapes("deconvolution", in, a.attrs());
}

// Gather form straight from the definition: output (oh, ow) takes input (ih,
// iw) through tap (kh, kw) when ih*s - pb + kh*d == oh (and the same for w).
HostTensor reference(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const DA& a) {
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], OG = ws[1], KH = ws[2], KW = ws[3];
    const int64_t O = OG * a.groups, CG = C / a.groups;
    const int64_t OH = (H - 1) * a.strides[0] - a.pb[0] - a.pe[0] + a.dil[0] * (KH - 1) + 1 + a.op[0];
    const int64_t OW = (W - 1) * a.strides[1] - a.pb[1] - a.pe[1] + a.dil[1] * (KW - 1) + 1 + a.op[1];
    HostTensor y(x.dtype(), Shape{N, O, OH, OW});
    size_t idx = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oc = 0; oc < O; ++oc)
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    double acc = bias ? bias->get_as_double(static_cast<size_t>(oc)) : 0.0;
                    const int64_t g = oc / OG;
                    for (int64_t ci = 0; ci < CG; ++ci) {
                        const int64_t ic = g * CG + ci;
                        for (int64_t ih = 0; ih < H; ++ih)
                            for (int64_t kh = 0; kh < KH; ++kh) {
                                if (ih * a.strides[0] - a.pb[0] + kh * a.dil[0] != oh) continue;
                                for (int64_t iw = 0; iw < W; ++iw)
                                    for (int64_t kw = 0; kw < KW; ++kw) {
                                        if (iw * a.strides[1] - a.pb[1] + kw * a.dil[1] != ow) continue;
                                        acc += x.get_as_double(static_cast<size_t>(((n * C + ic) * H + ih) * W + iw)) *
                                               w.get_as_double(
                                                   static_cast<size_t>(((ic * OG + (oc % OG)) * KH + kh) * KW + kw));
                                    }
                            }
                    }
                    y.set_from_double(idx++, acc);
                }
    return y;
}

void expect_close(const HostTensor& got, const HostTensor& want, double tol) {
    ASSERT_EQ(got.shape(), want.shape());
    size_t bad = 0;
    for (size_t i = 0; i < want.count(); ++i) {
        const double g = got.get_as_double(i), e = want.get_as_double(i);
        if (!(std::fabs(g - e) <= tol * (1.0 + std::fabs(e))) && bad++ < 5)
            ADD_FAILURE() << "element " << i << ": got " << g << ", want " << e;
    }
    EXPECT_EQ(bad, 0u);
}

TEST(DeconvolutionShape, StridePadsOutputPadding_GiveTheTransposedExtent) {
    // strides, pads_begin, pads_end, dilations, output_padding
    const DA a{{2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
    // (3-1)*2 - 2 + 2 + 1 + 1 = 6 ; (4-1)*2 - 2 + 2 + 1 + 1 = 8
    const auto out =
        infer({Layout(PartialShape{1, 2, 3, 4}, DataType::f32), Layout(PartialShape{2, 3, 3, 3}, DataType::f32)}, a);
    EXPECT_EQ(out.at(0).shape, (PartialShape{1, 3, 6, 8}));
}

TEST(DeconvolutionShape, DynamicSpatialDims_StayDynamicWithBounds) {
    DA a;
    a.strides = {2, 2};
    const auto out = infer({Layout(PartialShape{Dimension(), 4, Dimension(1, 8), Dimension()}, DataType::f32),
                            Layout(PartialShape{4, 2, 3, 3}, DataType::f32)},
                           a);
    EXPECT_EQ(out.at(0).shape[1], Dimension(2));
    EXPECT_EQ(out.at(0).shape[2], Dimension(3, 17));   // (1-1)*2+3 .. (8-1)*2+3
    EXPECT_TRUE(out.at(0).shape[3].is_dynamic());
}

TEST(DeconvolutionShape, MismatchedChannels_IsAnErrorNamingTheShapes) {
    try {
        infer({Layout(PartialShape{1, 3, 4, 4}, DataType::f32), Layout(PartialShape{2, 2, 3, 3}, DataType::f32)}, DA{});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("[2,2,3,3]"), std::string::npos) << e.what();
    }
}

TEST(DeconvolutionShape, ZeroKernelExtentOrStride_IsAnErrorNamingTheWeightsOrAttribute) {
    std::string msg = test::error_of([] {
        infer({Layout(PartialShape{1, 2, 3, 4}, DataType::f32), Layout(PartialShape{2, 3, 0, 0}, DataType::f32)}, DA{});
    });
    EXPECT_NE(msg.find("weights (input 1) [2,3,0,0] have kernel extent 0 on spatial axis [0]"), std::string::npos)
        << msg;
    DA s0;
    s0.strides = {1, 0};
    msg = test::error_of([&] {
        infer({Layout(PartialShape{1, 2, 3, 4}, DataType::f32), Layout(PartialShape{2, 3, 3, 3}, DataType::f32)}, s0);
    });
    EXPECT_NE(msg.find("field 'strides'"), std::string::npos) << msg;
}

// Strides, pads and groups that would wrap int64 (here to small,
// valid-looking dims) are errors naming the attribute and the values.
TEST(DeconvolutionShape, OverflowingStridesPadsOrGroups_AreErrorsNotWrappedDims) {
    const Layout x = Layout(PartialShape{1, 2, 5, 5}, DataType::f32);
    const Layout w = Layout(PartialShape{2, 3, 3, 3}, DataType::f32);
    DA strides;
    strides.strides = {int64_t{1} << 62, 1};   // (5 - 1) * 2^62 wraps to 0
    std::string msg = test::error_of([&] { infer({x, w}, strides); });
    EXPECT_NE(msg.find("(input extent - 1) * strides[0]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("overflows: 4 * 4611686018427387904"), std::string::npos) << msg;
    DA pads;
    const int64_t max = std::numeric_limits<int64_t>::max();
    pads.pb = {0, max};
    pads.pe = {0, max};   // 7 - 2 * max wraps to 9
    msg = test::error_of([&] { infer({x, w}, pads); });
    EXPECT_NE(msg.find("pads_begin[1] + pads_end[1] overflows: 9223372036854775807 + 9223372036854775807"),
              std::string::npos)
        << msg;
    DA groups;
    groups.groups = int64_t{1} << 62;   // O = 4 * 2^62 wraps to 0
    msg = test::error_of([&] {
        infer({Layout(PartialShape{1, int64_t{1} << 62, 1, 1}, DataType::f32),
               Layout(PartialShape{int64_t{1} << 62, 4, 1, 1}, DataType::f32)},
              groups);
    });
    EXPECT_NE(msg.find("output channels (weights dim 1 * groups) overflows: 4 * 4611686018427387904"),
              std::string::npos)
        << msg;
}

TEST(DeconvolutionShape, OutputPaddingNotBelowStride_IsAnAttributeError) {
    DA a;
    a.op = {1, 0};
    EXPECT_THROW(
        infer({Layout(PartialShape{1, 1, 2, 2}, DataType::f32), Layout(PartialShape{1, 1, 2, 2}, DataType::f32)}, a),
        Error);
}

TEST(DeconvolutionRef, TwoByTwo_ScattersTheKernelAtEveryInput) {
    // y = sum over inputs of x[i,j] * w placed at (i, j): hand-computed.
    auto program = test::single_node_program(
        "deconvolution",
        {Layout(PartialShape{1, 1, 2, 2}, DataType::f32), Layout(PartialShape{1, 1, 2, 2}, DataType::f32)},
        DA{}.attrs(), {{1, HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 10, 100, 1000})}});
    const HostTensor y = test::run_once(program, {HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 2, 3, 4})});
    const std::vector<double> want = {1, 12, 20, 103, 1234, 2040, 300, 3400, 4000};
    ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.get_as_double(i), want[i]) << i;
}

TEST(DeconvolutionRef, GroupsStridesDilationsPads_MatchTheGatherForm) {
    // strides, pads_begin, pads_end, dilations, output_padding, groups
    const DA a{{2, 3}, {1, 0}, {0, 2}, {2, 1}, {1, 2}, 2};
    const HostTensor x = test::random_tensor(DataType::f32, Shape{2, 4, 3, 5}, 1);
    const HostTensor w = test::random_tensor(DataType::f32, Shape{4, 3, 3, 2}, 2);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{6}, 3);
    auto program = test::single_node_program(
        "deconvolution",
        {Layout(PartialShape{2, 4, 3, 5}, DataType::f32), Layout(PartialShape{4, 3, 3, 2}, DataType::f32),
         Layout(PartialShape{6}, DataType::f32)},
        a.attrs(), {{1, w}, {2, b}});
    expect_close(test::run_once(program, {x}), reference(x, w, &b, a), 1e-5);
}

// Static host impls read osv16 weights: with static impls on every new shape,
// the weights are reordered once and found in the weights cache afterwards.
TEST(DeconvolutionWeights, StaticImplsOverChangingSizes_ReorderOnceThenHitTheCache) {
    DA a;
    a.strides = {2, 2};
    a.pb = {1, 1};
    const HostTensor w = test::random_tensor(DataType::f32, Shape{20, 3, 3, 3}, 7);   // 20: a partial block
    auto program = test::single_node_program("deconvolution",
                                             {Layout(PartialShape{1, 20, Dimension(), Dimension()}, DataType::f32),
                                              Layout(PartialShape{20, 3, 3, 3}, DataType::f32)},
                                             a.attrs(), {{1, w}});
    NetworkOptions opt;
    opt.use_dynamic_impls = false;
    opt.host_reference_only = true;   // the oneDNN impls read plain weights
    InferRequest req(Network::create(program, test::engine("cpu"), opt));
    const std::vector<int64_t> sizes = {3, 5, 3, 6, 5};
    uint64_t seed = 10;
    for (int64_t h : sizes) {
        SCOPED_TRACE("h = " + std::to_string(h));
        const HostTensor x = test::random_tensor(DataType::f32, Shape{1, 20, h, h + 1}, seed++);
        req.set_input("in0", x);
        req.infer();
        expect_close(req.get_output(0), reference(x, w, nullptr, a), 1e-5);
        EXPECT_EQ(req.inst("node").impl()->weights_format(), Format::osv16);
        EXPECT_EQ(req.inst("node").weights_memory()->layout().format, Format::osv16);
    }
    EXPECT_EQ(req.cumulative().weights_reorders, 1u);
    EXPECT_EQ(req.cumulative().weights_cache_hits, sizes.size() - 1);
}

// ---- N-D, auto_pad and output_shape ------------------------------------------------

using ints = std::vector<int64_t>;
using test::f32;
const std::string kUpper = "same_upper", kLower = "same_lower";

TEST(DeconvolutionShape, OneToThreeSpatialAxesAutoPadAndOutputShapeTable) {
    const Dimension dyn;
    test::expect_shapes(
        "deconvolution",
        {
            // 1-D, groups 2: (5-1)*2 + 3 = 11 ; O = 3 * 2.
            {{f32({2, 4, 5}), f32({4, 3, 3})},
             test::attrs({{"strides", ints{2}}, {"groups", int64_t{2}}}),
             {f32({2, 6, 11})}},
            // 3-D with pads and output_padding: (2-1)*1+2 = 3, (3-1)*2+3-1-1+1 = 6, (4-1)*1+2*(2-1)+1 = 6.
            {{f32({1, 2, 2, 3, 4}), f32({2, 1, 2, 3, 2})},
             test::attrs({{"strides", ints{1, 2, 1}},
                          {"pads_begin", ints{0, 1, 0}},
                          {"pads_end", ints{0, 1, 0}},
                          {"output_padding", ints{0, 1, 0}},
                          {"dilations", ints{1, 1, 2}}}),
             {f32({1, 1, 3, 6, 6})}},
            // same_*: in * stride, from the runtime extent (bounds to bounds).
            {{f32({1, 1, 3, 3}), f32({1, 2, 3, 3})},
             test::attrs({{"auto_pad", kUpper}, {"strides", ints{2, 2}}}),
             {f32({1, 2, 6, 6})}},
            {{f32({1, 1, Dimension(2, 5)}), f32({1, 2, 3})},
             test::attrs({{"auto_pad", kLower}, {"strides", ints{3}}}),
             {f32({1, 2, Dimension(6, 15)})}},
            // output_shape fixes the extents whatever the input's.
            {{f32({1, 1, dyn, dyn}), f32({1, 2, 3, 3})},
             test::attrs({{"output_shape", ints{10, 8}}, {"strides", ints{3, 2}}}),
             {f32({1, 2, 10, 8})}},
            // valid ignores the pads.
            {{f32({1, 1, 3}), f32({1, 1, 3})},
             test::attrs({{"auto_pad", std::string("valid")}, {"pads_begin", ints{4}}}),
             {f32({1, 1, 5})}},
            // Errors name the attribute and the shapes.
            {{f32({1, 1, 3}), f32({1, 1, 3})},
             test::attrs({{"strides", ints{1, 1}}}),
             {},
             {"field 'strides'", "needs 1"}},
            {{f32({1, 1, 3}), f32({1, 1, 3})},
             test::attrs({{"output_shape", ints{4, 4}}}),
             {},
             {"field 'output_shape'", "needs 1"}},
            {{f32({1, 3, 3}), f32({3, 1, 3})},
             test::attrs({{"groups", int64_t{2}}}),
             {},
             {"field 'groups'", "C=3 not divisible by groups=2", "[1,3,3]"}},
            {{f32({1, 1, 2}), f32({1, 1, 2})},
             test::attrs({{"pads_begin", ints{2}}, {"pads_end", ints{1}}}),
             {},
             {"field 'pads_begin'", "spatial axis [0] would be 0", "[1,1,2]"}},
            {{f32({1, 1, 0}), f32({1, 1, 2})}, test::attrs({{"auto_pad", kUpper}}), {}, {"would be 0", "[1,1,0]"}},
            {{f32({1, 1, 3}), f32({1, 1, 2})},
             test::attrs({{"strides", ints{2}}, {"output_padding", ints{2}}}),
             {},
             {"field 'output_padding'", "below max(stride, dilation)"}},
        });
}

HostTensor run_once(const std::vector<HostTensor>& in, const Attributes& a) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("deconvolution", layouts, a), in);
}

void expect_values(const HostTensor& y, const Shape& s, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(y.shape(), s) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(y.get_as_double(i), want[i]) << what << " at " << i;
}

TEST(DeconvolutionRef, OneDimensionalAutoPadAndOutputShapeByHand) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 3}, {1, 2, 3});
    const HostTensor w = HostTensor::from_floats(Shape{1, 1, 3}, {1, 10, 100});
    // Stride 2, natural extent 7: [1, 10, 100+2, 20, 200+3, 30, 300].
    expect_values(run_once({x, w}, test::attrs({{"strides", ints{2}}})), Shape{1, 1, 7}, {1, 10, 102, 20, 203, 30, 300},
                  "natural");
    // same_*: 3 * 2 = 6 outputs, the odd pad row cropped at the end (upper) or the begin (lower).
    expect_values(run_once({x, w}, test::attrs({{"strides", ints{2}}, {"auto_pad", kUpper}})), Shape{1, 1, 6},
                  {1, 10, 102, 20, 203, 30}, "same_upper");
    expect_values(run_once({x, w}, test::attrs({{"strides", ints{2}}, {"auto_pad", kLower}})), Shape{1, 1, 6},
                  {10, 102, 20, 203, 30, 300}, "same_lower");
    // output_shape: shorter crops the odd row at the begin (ONNX), longer adds zeros at the end.
    expect_values(run_once({x, w}, test::attrs({{"strides", ints{2}}, {"output_shape", ints{5}}})), Shape{1, 1, 5},
                  {10, 102, 20, 203, 30}, "output_shape 5");
    expect_values(run_once({x, w}, test::attrs({{"strides", ints{2}}, {"output_shape", ints{8}}})), Shape{1, 1, 8},
                  {1, 10, 102, 20, 203, 30, 300, 0}, "output_shape 8");
    // 3-D, one input element: the kernel scaled, per output channel.
    std::vector<float> wv(16);
    std::vector<double> want(16);
    for (size_t i = 0; i < wv.size(); ++i)
        wv[i] = static_cast<float>(i + 1), want[i] = 2.0 * static_cast<double>(i + 1);
    expect_values(run_once({HostTensor::from_floats(Shape{1, 1, 1, 1, 1}, {2}),
                            HostTensor::from_floats(Shape{1, 2, 2, 2, 2}, wv)},
                           Attributes()),
                  Shape{1, 2, 2, 2, 2}, want, "3-D");
}

// Every impl (host and OpenCL, static and shape-agnostic) against the
// reference over 1-D, 2-D and 3-D configurations and dtypes.
struct NdCase {
    Attributes attrs;
    Shape w;
    std::vector<Shape> xs;
};

const std::vector<std::string> kDnnlImpls = {"cpu_dnnl_static", "cpu_dnnl_dynamic"};

// Every impl against the reference on `c`, weights and (with `bias`) a bias as
// constants; the impls that ran.
std::vector<std::string> expect_case(const NdCase& c, DataType t, bool bias, const std::vector<std::string>& may_skip) {
    std::vector<std::vector<Shape>> shapes;
    for (const Shape& x : c.xs) shapes.push_back({x});
    const HostTensor w = test::random_tensor(t, c.w, 3);
    const HostTensor b =
        test::random_tensor(t, Shape{c.w[1] * (c.attrs.has("groups") ? c.attrs.get_int("groups") : 1)}, 4);
    const Layout x(PartialShape::dynamic_of_rank(c.w.rank()), t);
    test::OpSetup s{"deconvolution", c.attrs, {x, w.layout()}, {{1, w}}};
    if (bias) {
        s.inputs.push_back(b.layout());
        s.constants.emplace(2, b);
    }
    return test::expect_impls_match_reference(s, test::random_runs(t, shapes), {}, may_skip);
}

TEST(DeconvolutionImpls, EveryImplMatchesTheReferenceOverOneToThreeSpatialAxes) {
    const std::vector<NdCase> cases = {
        {test::attrs({{"auto_pad", kUpper}, {"strides", ints{3}}, {"dilations", ints{2}}}),
         Shape{3, 2, 4},
         {{1, 3, 1}, {2, 3, 13}, {1, 3, 17}, {1, 3, 257}}},
        // output_shape 9 x 7: some inputs need rows past the natural extent.
        {test::attrs({{"groups", int64_t{2}}, {"output_shape", ints{9, 7}}, {"strides", ints{2, 3}}}),
         Shape{4, 3, 3, 2},
         {{1, 4, 3, 2}, {2, 4, 4, 3}, {1, 4, 5, 1}}},
        // output_padding past pads_end on the last axis.
        {test::attrs({{"strides", ints{1, 2, 2}},
                      {"pads_begin", ints{1, 0, 1}},
                      {"pads_end", ints{0, 1, 0}},
                      {"output_padding", ints{0, 1, 1}}}),
         Shape{20, 2, 2, 3, 2},
         {{1, 20, 2, 1, 3}, {1, 20, 3, 4, 5}}},
    };
    for (const NdCase& c : cases)
        for (DataType t : {DataType::f32, DataType::f16, DataType::f64}) {
            std::vector<std::string> may_skip;
            if (t != DataType::f32) may_skip = {"ocl_static", "ocl_dynamic"};
            if (t != DataType::f32) may_skip.insert(may_skip.end(), kDnnlImpls.begin(), kDnnlImpls.end());
            expect_case(c, t, true, may_skip);
        }
}

// The oneDNN impls' geometry: groups (depthwise too), dilations, strides,
// pads, output_padding within pads_end, derived pads, with and without bias,
// 1 to 3 spatial axes, size-1 extents, an empty batch and rows past the
// natural extent; they must take every case.
TEST(DeconvolutionImpls, OneDnnImplsTakeGroupsDilationsPadsAndOutputPadding) {
    const std::vector<NdCase> cases = {
        {test::attrs(
             {{"strides", ints{2}}, {"pads_begin", ints{1}}, {"pads_end", ints{2}}, {"output_padding", ints{1}}}),
         Shape{3, 4, 3},
         {{1, 3, 1}, {2, 3, 17}, {0, 3, 5}}},
        {test::attrs({{"groups", int64_t{3}},
                      {"strides", ints{2, 2}},
                      {"dilations", ints{2, 1}},
                      {"pads_begin", ints{1, 0}},
                      {"pads_end", ints{0, 1}}}),
         Shape{6, 2, 3, 3},
         {{1, 6, 4, 5}, {2, 6, 1, 1}, {1, 6, 13, 16}}},
        {test::attrs({{"groups", int64_t{4}}, {"strides", ints{2, 2}}}),
         Shape{4, 1, 2, 2},
         {{1, 4, 3, 3}, {1, 4, 8, 1}}},
        // Rows past the natural extent (output_padding beyond pads_end): a
        // negative end pad, which oneDNN fills with the bias alone.
        {test::attrs({{"output_padding", ints{1}}, {"strides", ints{2}}}), Shape{2, 2, 3}, {{1, 2, 5}, {2, 2, 1}}},
        {test::attrs({{"auto_pad", kLower}, {"strides", ints{2, 1, 2}}}),
         Shape{2, 3, 2, 2, 3},
         {{1, 2, 2, 3, 4}, {1, 2, 1, 1, 1}}},
    };
    for (const NdCase& c : cases)
        for (bool bias : {true, false}) {
            SCOPED_TRACE(std::string(bias ? "bias" : "no bias") + " weights " + c.w.to_string());
            const std::vector<std::string> ran = expect_case(c, DataType::f32, bias, {});
            for (const std::string& name : kDnnlImpls)
                EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
        }
}

// auto_pad same_lower on a 1-D input whose length changes on every run: the
// derived pads follow the runtime extent on every engine and mode.
TEST(DeconvolutionDynamic, AutoPadFollowsTheRuntimeLengthOnOneInstance) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{2, 3, 4}, 7);
    const test::OpSetup setup{"deconvolution",
                              test::attrs({{"auto_pad", kLower}, {"strides", ints{3}}}),
                              {f32(PartialShape{1, 2, Dimension()}), w.layout()},
                              {{1, w}}};
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{1, 2, n}});
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        // A critical op serves revisits from the static impls built in the background.
        if (o.mode == test::Mode::dynamic_async) o.impl_suffix.clear();
        test::expect_sequence(setup, test::random_runs(DataType::f32, shapes), o);
    }
}

// ---- OpenCL ------------------------------------------------------------------

// One ocl request over changing spatial sizes (and revisits), each output
// against the cpu reference; tolerance 1e-5 relative (sums of <= 27 products).
void ocl_sweep(bool dynamic) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    DA a;
    a.strides = {2, 2};
    a.pb = {1, 0};
    a.op = {1, 0};
    const HostTensor w = test::random_tensor(DataType::f32, Shape{4, 3, 3, 3}, 5);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{3}, 6);
    auto program = test::single_node_program(
        "deconvolution",
        {Layout(PartialShape{Dimension(), 4, Dimension(), Dimension()}, DataType::f32),
         Layout(PartialShape{4, 3, 3, 3}, DataType::f32), Layout(PartialShape{3}, DataType::f32)},
        a.attrs(), {{1, w}, {2, b}});
    NetworkOptions opt;
    opt.use_dynamic_impls = dynamic;
    InferRequest dev(Network::create(program, eng, opt));
    InferRequest ref(Network::create(program, test::engine("cpu"), NetworkOptions{}));
    const std::string suffix = dynamic ? "_ocl_dynamic" : "_ocl_static";
    std::set<int64_t> seen;
    uint64_t seed = 20;
    for (int64_t h : {1, 3, 13, 16, 17, 3, 16}) {
        SCOPED_TRACE("h = " + std::to_string(h));
        const HostTensor x = test::random_tensor(DataType::f32, Shape{2, 4, h, 5}, seed++);
        dev.set_input("in0", x);
        ref.set_input("in0", x);
        dev.infer();
        ref.infer();
        expect_close(dev.get_output(0), ref.get_output(0), 1e-5);
        const NodeStats* node = nullptr;
        for (const NodeStats& s : dev.last_run().nodes)
            if (s.node == "node") node = &s;
        ASSERT_NE(node, nullptr);
        ASSERT_GE(node->impl.size(), suffix.size());
        // A critical op's background static build may serve a revisited size.
        if (!dynamic || !seen.count(h)) {
            EXPECT_EQ(node->impl.substr(node->impl.size() - suffix.size()), suffix);
        } else {
            EXPECT_NE(node->impl.find("_ocl_"), std::string::npos) << node->impl;
        }
        if (!dynamic && seen.count(h)) {
            EXPECT_GE(node->counters.impl_cache_hits, 1u);
        }
        seen.insert(h);
    }
    // Weights in the format the impl reads: reordered at most once on the device.
    EXPECT_EQ(dev.inst("node").weights_memory()->layout().format, dev.inst("node").impl()->weights_format());
    EXPECT_LE(dev.cumulative().weights_reorders, 1u);
}

TEST(DeconvolutionOcl, DynamicImpl_MatchesCpuOverChangingSizes) { ocl_sweep(true); }
TEST(DeconvolutionOcl, StaticImpls_MatchCpuAndHitTheImplCache) { ocl_sweep(false); }

}   // namespace
}   // namespace dynrt
