// pooling: shape-inference table (auto_pad, ceil_mode, global, indices,
// dynamic and bounded dims, refused geometries), every impl against the
// reference over modes x dtypes x ranks, one instance fed changing shapes,
// and the reference against hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>

#include "op_test.hpp"

namespace dynrt {
namespace {

using Ints = std::vector<int64_t>;

// Attributes of a windowed pooling: mode and kernel, then any others.
Attributes pool(const std::string& mode, const Ints& kernel,
                std::initializer_list<std::pair<const std::string, AttrValue>> more = {}) {
    Attributes a = test::attrs(more);
    a.set("mode", mode);
    if (!kernel.empty()) a.set("kernel", kernel);
    return a;
}
Attributes global(const std::string& mode) { return pool(mode, {}, {{"global", true}}); }

Layout f32(std::vector<Dimension> d) { return Layout(PartialShape(std::move(d)), DataType::f32); }

// ---- 1. shape inference -------------------------------------------------------

TEST(PoolingShape, OutputExtentsFollowPadsStridesCeilModeAndAutoPad) {
    const Layout i64({1, 3, 31, 31}, DataType::i64);
    test::expect_shapes(
        "pooling",
        {
            {{f32({1, 3, 32, 32})}, pool("max", {2, 2}), {f32({1, 3, 31, 31})}},
            {{f32({1, 3, 32})}, pool("avg", {2}), {f32({1, 3, 31})}},
            {{f32({1, 3, 8, 8, 8})}, pool("lp", {2, 2, 2}, {{"strides", Ints{2, 2, 2}}}), {f32({1, 3, 4, 4, 4})}},
            {{f32({1, 3, 28, 28})},
             pool("avg", {3, 3}, {{"pads_begin", Ints{2, 2}}, {"pads_end", Ints{2, 2}}}),
             {f32({1, 3, 30, 30})}},
            {{f32({1, 1, 4, 4})}, pool("max", {3, 3}, {{"strides", Ints{2, 2}}}), {f32({1, 1, 1, 1})}},
            {{f32({1, 1, 4, 4})},
             pool("max", {3, 3}, {{"strides", Ints{2, 2}}, {"ceil_mode", true}}),
             {f32({1, 1, 2, 2})}},
            // ceil: (5 + 2 - 2) / 2 rounds up to 3 windows + 1, the last starting in the end padding is dropped.
            {{f32({1, 1, 5})},
             pool("max", {2},
                  {{"strides", Ints{2}}, {"pads_begin", Ints{1}}, {"pads_end", Ints{1}}, {"ceil_mode", true}}),
             {f32({1, 1, 3})}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"dilations", Ints{2, 2}}}), {f32({1, 1, 2, 2})}},
            {{f32({1, 1, 5, 5})},
             pool("max", {3, 3}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("same_upper")}}),
             {f32({1, 1, 3, 3})}},
            {{f32({1, 3, 32, 32})},
             pool("avg", {2, 2}, {{"auto_pad", std::string("same_lower")}}),
             {f32({1, 3, 32, 32})}},
            {{f32({1, 3, 32, 32})},
             pool("avg", {5, 5}, {{"auto_pad", std::string("valid")}, {"strides", Ints{3, 3}}}),
             {f32({1, 3, 10, 10})}},
            {{f32({1, 3, 32, 32})}, pool("max", {2, 2}, {{"indices", true}}), {f32({1, 3, 31, 31}), i64}},
            {{Layout({2, 4, 3, 3}, DataType::u8)}, pool("max", {3, 3}), {Layout({2, 4, 1, 1}, DataType::u8)}},
            {{Layout({0, 4, 3, 3}, DataType::f16)}, pool("max", {3, 3}), {Layout({0, 4, 1, 1}, DataType::f16)}},
        });
}

TEST(PoolingShape, DynamicAndBoundedDimsGiveBoundsAndGlobalGivesOnes) {
    const Dimension any;
    test::expect_shapes("pooling",
                        {
                            {{f32({any, 3, Dimension(5, 9), 7})},
                             pool("max", {3, 3}, {{"strides", Ints{2, 2}}}),
                             {f32({any, 3, Dimension(2, 4), 3})}},
                            // same_*: ceil(in / stride) for any input extent, pads follow it.
                            {{f32({1, 2, Dimension(1, 8)})},
                             pool("avg", {3}, {{"strides", Ints{2}}, {"auto_pad", std::string("same_upper")}}),
                             {f32({1, 2, Dimension(1, 4)})}},
                            // An extent too small for the window: lower bound 1 (refused when it arrives).
                            {{f32({1, 2, any})}, pool("max", {3}), {f32({1, 2, Dimension(1, -1)})}},
                            {{f32({2, 3, any, 7})}, global("avg"), {f32({2, 3, 1, 1})}},
                            {{f32({2, 3, 4, 5, 6})}, global("max"), {f32({2, 3, 1, 1, 1})}},
                        });
}

TEST(PoolingShape, EmptyOutputsBadAttributesAndOverflowsAreRefusedNamingTheAttribute) {
    test::expect_shapes(
        "pooling",
        {
            {{f32({1, 1, 2, 2})}, pool("max", {3, 3}), {}, {"kernel", "empty"}},
            {{f32({1, 1, 2, 2})}, pool("max", {3}), {}, {"kernel", "2 values"}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"strides", Ints{0, 1}}}), {}, {"strides", ">= 1"}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"dilations", Ints{1, -1}}}), {}, {"dilations", ">= 1"}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"pads_begin", Ints{2, 0}}}), {}, {"pads", "window extent"}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"pads_end", Ints{-1, 0}}}), {}, {"pads_end", ">= 0"}},
            // Taps 3 apart over an extent of 2 padded by 1: the window (-1, 2) holds padding only.
            {{f32({1, 1, 2})},
             pool("max", {2}, {{"dilations", Ints{3}}, {"pads_begin", Ints{1}}, {"pads_end", Ints{1}}}),
             {},
             {"dilations", "padding only"}},
            {{f32({1, 1, 4})}, pool("max", {3}, {{"dilations", Ints{int64_t{1} << 62}}}), {}, {"overflows"}},
            {{f32({1, 1, 4})},
             pool("max", {2}, {{"pads_begin", Ints{1}}, {"pads_end", Ints{INT64_MAX - 1}}}),
             {},
             {"pads"}},
            {{f32({1, 1, 4})},
             pool("max", {2},
                  {{"dilations", Ints{int64_t{1} << 62}},
                   {"pads_begin", Ints{int64_t{1} << 62}},
                   {"pads_end", Ints{int64_t{1} << 62}}}),
             {},
             {"overflows"}},
            {{f32({1, 1, 0})}, pool("max", {1}, {{"auto_pad", std::string("same_upper")}}), {}, {"auto_pad", "empty"}},
            {{f32({1, 1, 0, 3})}, global("avg"), {}, {"global", "extent 0"}},
            {{f32({1, 1, 4, 4})}, pool("max", {}), {}, {"kernel", "required"}},
            {{f32({1, 1, 4, 4})}, pool("max", {2, 2}, {{"global", true}}), {}, {"kernel", "global"}},
            {{f32({1, 1, 4, 4})}, pool("avg", {2, 2}, {{"indices", true}}), {}, {"indices", "max"}},
            {{f32({1, 1, 4, 4})}, pool("lp", {2, 2}, {{"p", int64_t{0}}}), {}, {"p", ">= 1"}},
            {{f32({4, 4})}, pool("max", {2}), {}, {"1 to 3 spatial"}},
            {{f32({1, 1, 2, 2, 2, 2})}, pool("max", {1, 1, 1, 1}), {}, {"1 to 3 spatial"}},
            {{Layout({1, 1, 4}, DataType::u8)}, pool("avg", {2}), {}, {"avg", "u8"}},
            {{Layout({1, 1, 4}, DataType::i32)}, pool("max", {2}), {}, {"max", "i32"}},
        });
}

// ---- 2. every impl against the reference ---------------------------------------------

struct Case {
    std::string what;
    Attributes attrs;
    std::vector<std::vector<Shape>> shapes;
    bool dnnl = true;   // the oneDNN impls take it in f32 (else they decline every run)
};

const std::vector<std::string> kDnnlImpls = {"cpu_dnnl_static", "cpu_dnnl_dynamic"};

std::vector<Case> all_cases() {
    const std::vector<std::vector<Shape>> two_d = {{{1, 1, 1, 1}}, {{2, 3, 13, 17}}, {{1, 2, 16, 3}}, {{0, 3, 5, 5}}};
    const std::vector<std::vector<Shape>> one_d = {{{1, 3, 257}}, {{2, 1, 7}}};
    const std::vector<std::vector<Shape>> three_d = {{{1, 2, 5, 6, 7}}, {{1, 1, 3, 3, 3}}};
    const Attributes same = pool("max", {3, 2}, {{"strides", Ints{2, 1}}, {"auto_pad", std::string("same_lower")}});
    return {
        {"max same_lower", same, two_d},
        {"avg pads count_include_pad",
         pool("avg", {3, 3}, {{"pads_begin", Ints{1, 2}}, {"pads_end", Ints{2, 1}}, {"count_include_pad", true}}),
         two_d},
        {"max pads ceil indices row-major",
         pool("max", {3, 3},
              {{"strides", Ints{2, 2}},
               {"pads_begin", Ints{1, 0}},
               {"pads_end", Ints{1, 2}},
               {"ceil_mode", true},
               {"indices", true}}),
         {{{1, 1, 1, 2}}, {{2, 3, 13, 17}}},
         false},
        {"max dilations indices column-major",
         pool("max", {2, 2},
              {{"dilations", Ints{2, 3}}, {"indices", true}, {"storage_order", std::string("column_major")}}),
         {{{1, 2, 7, 9}}, {{1, 1, 4, 4}}},
         false},
        {"avg same_upper exclude pad", pool("avg", {4, 3}, {{"auto_pad", std::string("same_upper")}}), two_d},
        {"lp p=2", pool("lp", {2, 2}, {{"strides", Ints{2, 2}}}), {{{1, 3, 4, 4}}, {{2, 3, 13, 17}}}, false},
        {"lp p=3 1-D", pool("lp", {3}, {{"p", int64_t{3}}, {"pads_begin", Ints{1}}}), one_d, false},
        {"avg 1-D valid", pool("avg", {4}, {{"auto_pad", std::string("valid")}, {"strides", Ints{3}}}), one_d},
        {"max 3-D", pool("max", {2, 2, 3}, {{"strides", Ints{1, 2, 2}}}), three_d},
        {"avg 3-D pads", pool("avg", {3, 2, 2}, {{"pads_begin", Ints{1, 1, 0}}, {"pads_end", Ints{1, 0, 1}}}), three_d},
        {"global max", global("max"), two_d},
        {"global avg 3-D", global("avg"), three_d},
        {"global lp 1-D", pool("lp", {}, {{"global", true}, {"p", int64_t{1}}}), one_d, false},
        // The oneDNN impls' window: ceil_mode as a larger end pad, dilations,
        // strides past the kernel, 1-tap kernels, both average counts.
        {"max ceil pads strides dilations",
         pool("max", {3, 2},
              {{"strides", Ints{2, 3}},
               {"dilations", Ints{2, 1}},
               {"pads_begin", Ints{2, 0}},
               {"pads_end", Ints{1, 1}},
               {"ceil_mode", true}}),
         {{{1, 2, 9, 10}}, {{2, 1, 6, 5}}, {{1, 1, 2, 1}}}},
        {"avg ceil exclude pad",
         pool("avg", {3, 3}, {{"strides", Ints{2, 2}}, {"ceil_mode", true}}),
         {{{1, 2, 8, 9}}, {{1, 1, 3, 3}}, {{2, 3, 16, 17}}}},
        {"avg ceil count_include_pad inside the pads",
         pool("avg", {3},
              {{"strides", Ints{2}},
               {"pads_begin", Ints{1}},
               {"pads_end", Ints{1}},
               {"ceil_mode", true},
               {"count_include_pad", true}}),
         {{{1, 2, 7}}, {{2, 1, 9}}}},
        {"avg dilations exclude pad",
         pool("avg", {2, 2}, {{"dilations", Ints{2, 2}}, {"pads_begin", Ints{1, 1}}}),
         {{{1, 2, 7, 8}}, {{1, 1, 3, 4}}}},
        {"max 1-D stride past kernel", pool("max", {1}, {{"strides", Ints{3}}}), {{{1, 2, 10}}, {{3, 1, 1}}}},
        {"avg 3-D dilations count_include_pad",
         pool("avg", {2, 2, 2},
              {{"dilations", Ints{1, 2, 1}},
               {"pads_begin", Ints{1, 1, 1}},
               {"pads_end", Ints{1, 1, 1}},
               {"count_include_pad", true}}),
         {{{1, 2, 4, 5, 6}}, {{1, 1, 2, 3, 2}}}},
        // count_include_pad with a ceil_mode window past pads_end: oneDNN
        // would count the taps past the padding, the reference does not.
        {"avg ceil count_include_pad past the pads",
         pool("avg", {3}, {{"strides", Ints{2}}, {"ceil_mode", true}, {"count_include_pad", true}}),
         {{{1, 2, 8}}, {{2, 1, 6}}},
         false},
    };
}

TEST(PoolingImpls, EveryImplMatchesTheReferenceForEveryModeRankAndDtype) {
    const std::vector<Case> cases = all_cases();
    for (const Case& c : cases) {
        const size_t rank = c.shapes.front().front().rank();
        // Every case in f32; the first two (max, avg) in every other dtype too.
        std::vector<DataType> types = {DataType::f32};
        if (&c - cases.data() < 2) types = {DataType::f32, DataType::f16, DataType::f64};
        if (&c == cases.data()) types.insert(types.end(), {DataType::u8, DataType::i8});
        for (DataType t : types) {
            SCOPED_TRACE(c.what + " " + to_string(t));
            const bool ints = !is_floating(t);
            const double low = t == DataType::u8 ? 0
                               : ints            ? -128
                                                 : -1,
                         high = t == DataType::u8 ? 256
                                : ints            ? 128
                                                  : 1;
            const test::OpSetup s{"pooling", c.attrs, {Layout(PartialShape::dynamic_of_rank(rank), t)}, {}};
            const bool dnnl = c.dnnl && t == DataType::f32;
            std::vector<std::string> may_skip = {"ocl_static", "ocl_dynamic"};
            if (!dnnl) may_skip.insert(may_skip.end(), kDnnlImpls.begin(), kDnnlImpls.end());
            const auto ran =
                test::expect_impls_match_reference(s, test::random_runs(t, c.shapes, 11, low, high), {}, may_skip);
            if (test::ocl_engine() && t != DataType::f64) {
                EXPECT_NE(std::find(ran.begin(), ran.end(), "ocl_dynamic"), ran.end());
            }
            for (const std::string& name : kDnnlImpls)
                EXPECT_EQ(std::find(ran.begin(), ran.end(), name) != ran.end(), dnnl) << name;
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------------

// [1, 2, n, n] with tails, revisits and an empty batch through max same_upper
// with indices, [n, 3, ?] through a global average, both on every engine.
TEST(PoolingDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> square, line;
    for (int64_t n : test::tail_sizes()) {
        square.push_back({Shape{1, 2, n, n}});
        line.push_back({Shape{n, 3, 1 + n % 5}});
    }
    square.push_back({Shape{0, 2, 5, 5}});
    square.push_back({Shape{1, 2, 1, 1}});
    const Attributes same =
        pool("max", {3, 3}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("same_upper")}, {"indices", true}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + " " + test::mode_name(o.mode));
        test::expect_sequence({"pooling", same, {f32({Dimension(), 2, Dimension(), Dimension()})}, {}},
                              test::random_runs(DataType::f32, square, 5), o);
        test::expect_sequence({"pooling", global("avg"), {f32({Dimension(), 3, Dimension()})}, {}},
                              test::random_runs(DataType::f32, line, 6), o);
    }
}

// ---- the reference's values ---------------------------------------------------------------

std::vector<HostTensor> reference(const Attributes& a, const HostTensor& x) {
    const Layout l(PartialShape(x.shape()), x.dtype());
    return test::reference_outputs({"pooling", a, {l}, {}}, {x});
}

std::vector<float> floats(const HostTensor& t) {
    std::vector<float> v(t.count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.get_as_double(i));
    return v;
}

HostTensor iota(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(s.count()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
    return HostTensor::from_floats(s, v);
}

TEST(PoolingReference, MaxWithIndicesInBothStorageOrdersByHand) {
    // x = 1..25 as 5x5; 2x2 windows with stride 2: maxima 7 9 17 19 at (1,1)
    // (1,3) (3,1) (3,3): row-major 6 8 16 18, column-major (h + 5 w) 6 16 8 18.
    const HostTensor x = iota(Shape{1, 1, 5, 5});
    const Attributes rows = pool("max", {2, 2}, {{"strides", Ints{2, 2}}, {"indices", true}});
    Attributes cols = rows;
    cols.set("storage_order", std::string("column_major"));
    const auto r = reference(rows, x);
    EXPECT_EQ(floats(r.at(0)), std::vector<float>({7, 9, 17, 19}));
    EXPECT_EQ(r.at(1).to_int64(), std::vector<int64_t>({6, 8, 16, 18}));
    EXPECT_EQ(reference(cols, x).at(1).to_int64(), std::vector<int64_t>({6, 16, 8, 18}));
    // The second (n, c) plane's indices continue after the first plane's 25 elements.
    EXPECT_EQ(reference(rows, iota(Shape{1, 2, 5, 5})).at(1).to_int64(),
              std::vector<int64_t>({6, 8, 16, 18, 31, 33, 41, 43}));
}

TEST(PoolingReference, AverageCountsPaddingOnlyWhenAskedByHand) {
    // [[1, 2], [3, 4]], 2x2 windows, one pad on every side: 3x3 windows.
    const HostTensor x = iota(Shape{1, 1, 2, 2});
    const Attributes excl = pool("avg", {2, 2}, {{"pads_begin", Ints{1, 1}}, {"pads_end", Ints{1, 1}}});
    Attributes incl = excl;
    incl.set("count_include_pad", true);
    EXPECT_EQ(floats(reference(excl, x).at(0)), std::vector<float>({1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
    EXPECT_EQ(floats(reference(incl, x).at(0)), std::vector<float>({0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}));
}

TEST(PoolingReference, SameLowerPutsTheOddPadFirstAndLpTakesTheNormByHand) {
    // [1, 2, 3, 4], 2 taps, same_lower: pad 1 before -> windows (pad,1) (1,2) (2,3) (3,4).
    const HostTensor x = iota(Shape{1, 1, 4});
    EXPECT_EQ(floats(reference(pool("max", {2}, {{"auto_pad", std::string("same_lower")}}), x).at(0)),
              std::vector<float>({1, 2, 3, 4}));
    EXPECT_EQ(floats(reference(pool("max", {2}, {{"auto_pad", std::string("same_upper")}}), x).at(0)),
              std::vector<float>({2, 3, 4, 4}));
    // |3, -4| -> 5 (p = 2); global L1 of [1..4] -> 10.
    const HostTensor y = HostTensor::from_floats(Shape{1, 1, 2}, {3, -4});
    EXPECT_EQ(floats(reference(pool("lp", {2}), y).at(0)), std::vector<float>({5}));
    EXPECT_EQ(floats(reference(pool("lp", {}, {{"global", true}, {"p", int64_t{1}}}), x).at(0)),
              std::vector<float>({10}));
}

}   // namespace
}   // namespace dynrt
