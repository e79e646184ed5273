// resize: shape-inference table (scales, sizes, axes, aspect-ratio policies,
// unknown values, dynamic dims, every refused input), hand-computed values of
// each rounding and filter, every impl against the reference over the modes,
// and one instance fed changing shapes and changing sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor sizes(std::vector<int64_t> v) { return HostTensor::from_int64(DataType::i64, Shape{int64_t(v.size())}, v); }
HostTensor floats(std::vector<float> v) { return HostTensor::from_floats(Shape{int64_t(v.size())}, v); }
Layout sizes_layout(int64_t n) { return Layout({n}, DataType::i64); }
Layout floats_layout(int64_t n) { return Layout({n}, DataType::f32); }
Layout f(PartialShape s) { return test::f32(std::move(s)); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ResizeShape, ScalesFloorAndSizesAreTheExtents) {
    const Dimension dyn;
    const Attributes none;
    test::expect_shapes(
        "resize",
        {
            {{f({1, 3, 4, 6}), floats_layout(4)}, none, {f({1, 3, 8, 3})}, {}, {{1, floats({1, 1, 2, 0.5})}}},
            {{f({1, 1, 5, 5}), floats_layout(4)}, none, {f({1, 1, 3, 3})}, {}, {{1, floats({1, 1, 0.6f, 0.6f})}}},
            {{f({2, 3, 4}), sizes_layout(3)}, none, {f({2, 3, 9})}, {}, {{1, sizes({2, 3, 9})}}},
            {{f({0, 3}), floats_layout(2)}, none, {f({0, 6})}, {}, {{1, floats({3, 2})}}},
            // Dynamic dims: sizes are known anyway, scales give a dynamic dim.
            {{f({dyn, 4}), sizes_layout(2)}, none, {f({5, 7})}, {}, {{1, sizes({5, 7})}}},
            {{f({dyn, 4}), floats_layout(2)}, none, {f({dyn, 8})}, {}, {{1, floats({1, 2})}}},
            // Unknown values: the resized dims are dynamic, the others kept.
            {{f({2, 3, 4}), sizes_layout(2)}, test::attrs({{"axes", std::vector<int64_t>{1, 2}}}), {f({2, dyn, dyn})}},
            // Upsample-7: the scales attribute.
            {{f({2, 3})}, test::attrs({{"scales", std::vector<double>{1, 2.5}}}), {f({2, 7})}},
        });
}

TEST(ResizeShape, AxesAndAspectRatioPoliciesPlaceTheSizes) {
    const auto axes = [](std::vector<int64_t> a, const char* policy = "stretch") {
        return test::attrs({{"axes", std::move(a)}, {"keep_aspect_ratio_policy", std::string(policy)}});
    };
    test::expect_shapes(
        "resize", {
                      {{f({1, 2, 3, 4}), sizes_layout(2)}, axes({-1, 2}), {f({1, 2, 7, 5})}, {}, {{1, sizes({5, 7})}}},
                      // not_larger: scale min(7/2, 8/4) = 2; not_smaller: 3.5, extents rounded half up.
                      {{f({1, 1, 2, 4}), sizes_layout(2)},
                       axes({2, 3}, "not_larger"),
                       {f({1, 1, 4, 8})},
                       {},
                       {{1, sizes({7, 8})}}},
                      {{f({1, 1, 2, 4}), sizes_layout(2)},
                       axes({2, 3}, "not_smaller"),
                       {f({1, 1, 7, 14})},
                       {},
                       {{1, sizes({7, 8})}}},
                      {{f({3, 3}), sizes_layout(2)}, axes({}, "not_larger"), {f({2, 2})}, {}, {{1, sizes({2, 5})}}},
                      {{f({Dimension(), 3}), sizes_layout(2)},
                       axes({}, "not_larger"),
                       {f({Dimension(), Dimension()})},
                       {},
                       {{1, sizes({2, 5})}}},
                  });
}

TEST(ResizeShape, BadInputsAreErrorsNamingTheField) {
    const Attributes none;
    const auto crop = test::attrs({{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}});
    test::expect_shapes(
        "resize",
        {
            {{f({2, 3}), floats_layout(2)}, none, {}, {"scales", "> 0", "0.0"}, {{1, floats({1, 0})}}},
            {{f({2, 3}), floats_layout(2)}, none, {}, {"scales", "> 0", "-2"}, {{1, floats({1, -2})}}},
            {{f({2, 3}), floats_layout(2)}, none, {}, {"scales", "finite"}, {{1, floats({1, NAN})}}},
            {{f({2, 3}), sizes_layout(2)}, none, {}, {"sizes", "negative", "-1"}, {{1, sizes({2, -1})}}},
            {{f({2, 3, 4}), floats_layout(2)}, none, {}, {"scales", "one entry per resized axis", "f32[2]"}},
            {{f({2, 3}), Layout({Dimension()}, DataType::i64)},
             none,
             {},
             {"sizes", "holds 3", "expected 2"},
             {{1, sizes({1, 2, 3})}}},
            {{f({2, 3}), Layout({2, 1}, DataType::i64)}, none, {}, {"1-D"}},
            {{Layout({2, 3}, DataType::i32), sizes_layout(2)}, none, {}, {"floating", "i32[2,3]"}},
            {{f({2, 3}), floats_layout(2)},
             test::attrs({{"keep_aspect_ratio_policy", std::string("not_larger")}}),
             {},
             {"keep_aspect_ratio_policy", "sizes only"}},
            {{f({2, 3}), sizes_layout(2)}, crop, {}, {"roi", "tf_crop_and_resize"}},
            {{f({2, 3}), sizes_layout(2), floats_layout(2)}, crop, {}, {"roi", "[4]", "f32[2]"}},
            {{f({2, 3}), floats_layout(2)},
             test::attrs({{"scales", std::vector<double>{1, 2}}}),
             {},
             {"scales", "both", "attribute"}},
            {{f({2, 3})}, none, {}, {"scales", "attribute", "(2)"}},
            {{f({0, 3}), sizes_layout(2)}, none, {}, {"sizes", "axis 0", "empty", "4"}, {{1, sizes({4, 3})}}},
            {{f({2, 3}), sizes_layout(1)}, test::attrs({{"axes", std::vector<int64_t>{2}}}), {}, {"axes", "2"}},
            {{f({1 << 20, 1 << 20}), floats_layout(2)}, none, {}, {"2^60"}, {{1, floats({1 << 20, 1 << 20})}}},
            {{f({2, 3}), sizes_layout(2)}, test::attrs({{"mode", std::string("bicubic")}}), {}, {"mode", "bicubic"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

std::vector<double> resize_values(const HostTensor& x, const Attributes& a, const HostTensor& target) {
    const HostTensor out =
        test::run_once(test::single_node_program("resize", {x.layout(), target.layout()}, a, {{1, target}}), {x});
    std::vector<double> v;
    for (size_t i = 0; i < out.count(); ++i) v.push_back(out.get_as_double(i));
    return v;
}

TEST(ResizeValues, NearestModesRoundAsymmetricCoordinates) {
    // Scale 7/4: sources 0, 0.57, 1.14, 1.71, 2.29, 2.86, 3.43.
    const HostTensor x = floats({10, 20, 30, 40});
    const auto with = [](const char* rounding) {
        return test::attrs(
            {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string(rounding)}});
    };
    EXPECT_EQ(resize_values(x, with("round_prefer_floor"), sizes({7})),
              (std::vector<double>{10, 20, 20, 30, 30, 40, 40}));
    EXPECT_EQ(resize_values(x, with("floor"), sizes({7})), (std::vector<double>{10, 10, 20, 20, 30, 30, 40}));
    EXPECT_EQ(resize_values(x, with("ceil"), sizes({7})), (std::vector<double>{10, 20, 30, 30, 40, 40, 40}));
    // Scale 2: sources 0, 0.5, 1, 1.5 ...: the ties split the two round modes.
    EXPECT_EQ(resize_values(floats({10, 20}), with("round_prefer_floor"), sizes({4})),
              (std::vector<double>{10, 10, 20, 20}));
    EXPECT_EQ(resize_values(floats({10, 20}), with("round_prefer_ceil"), sizes({4})),
              (std::vector<double>{10, 20, 20, 20}));
}

TEST(ResizeValues, LinearHalfPixelMatchesTheOnnxExample) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_EQ(resize_values(x, test::attrs({{"mode", std::string("linear")}}), floats({1, 1, 2, 2})),
              (std::vector<double>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
}

TEST(ResizeValues, CropAndResizeExtrapolatesOutsideTheInput) {
    // roi [0.5, 1.5] over 4 elements, 3 outputs: sources 1.5, 3, 4.5.
    const HostTensor x = floats({1, 2, 3, 4}), roi = floats({0.5f, 1.5f});
    const Attributes a = test::attrs({{"mode", std::string("linear")},
                                      {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                      {"extrapolation_value", 10.0}});
    const HostTensor out =
        test::run_once(test::single_node_program("resize", {x.layout(), sizes_layout(1), roi.layout()}, a,
                                                 {{1, sizes({3})}, {2, roi}}),
                       {x});
    EXPECT_EQ(out.get_as_double(0), 2.5);
    EXPECT_EQ(out.get_as_double(1), 4);
    EXPECT_EQ(out.get_as_double(2), 10);
}

TEST(ResizeValues, AntialiasWidensTheLinearFilterWhenDownsampling) {
    // Scale 0.5: four taps at distances 0.75, 0.25, 0.25, 0.75 (halved), weights 1:3:3:1.
    const Attributes a = test::attrs({{"mode", std::string("linear")}, {"antialias", true}});
    EXPECT_EQ(resize_values(floats({1, 2, 3, 4}), a, floats({0.5})), (std::vector<double>{1.625, 3.375}));
    // Without antialias: the two middle taps only.
    EXPECT_EQ(resize_values(floats({1, 2, 3, 4}), test::attrs({{"mode", std::string("linear")}}), floats({0.5})),
              (std::vector<double>{1.5, 3.5}));
}

TEST(ResizeValues, CubicAtAnIntegerSourceReadsThatElement) {
    // align_corners with 7 -> 4: sources 0, 2, 4, 6.
    const Attributes a =
        test::attrs({{"mode", std::string("cubic")}, {"coordinate_transformation_mode", std::string("align_corners")}});
    EXPECT_EQ(resize_values(floats({5, -1, 7, 2, 9, 4, 8}), a, sizes({4})), (std::vector<double>{5, 7, 9, 8}));
}

// ---- 2. every impl against the reference ---------------------------------------

struct Config {
    const char* mode;
    const char* coord;
    std::vector<std::pair<const std::string, AttrValue>> extra;
};

Attributes config_attrs(const Config& c) {
    Attributes a =
        test::attrs({{"mode", std::string(c.mode)}, {"coordinate_transformation_mode", std::string(c.coord)}});
    for (const auto& [k, v] : c.extra) a.set(k, v);
    return a;
}

TEST(ResizeImpls, EveryModeAndCoordinateModeMatchesTheReference) {
    const std::vector<Config> configs = {
        {"nearest", "half_pixel", {}},
        {"nearest", "asymmetric", {{"nearest_mode", std::string("ceil")}}},
        {"nearest", "tf_half_pixel_for_nn", {{"nearest_mode", std::string("round_prefer_ceil")}}},
        {"linear", "align_corners", {}},
        {"linear", "pytorch_half_pixel", {}},
        {"linear", "half_pixel_symmetric", {{"antialias", true}}},
        {"cubic", "half_pixel", {{"exclude_outside", true}, {"cubic_coeff_a", -0.5}}},
        {"cubic", "asymmetric", {{"antialias", true}}},
    };
    const std::vector<Shape> shapes = {{1, 2, 5, 7}, {2, 3, 1, 13}};
    for (const Config& c : configs)
        for (DataType t : {DataType::f32, DataType::f16}) {
            SCOPED_TRACE(std::string(c.mode) + " " + c.coord + " " + to_string(t));
            std::vector<test::Run> runs;
            for (const Shape& s : shapes) runs.push_back({test::random_tensor(t, s, runs.size() + 3, -2, 2)});
            const Layout in(PartialShape::dynamic_of_rank(4), t);
            test::expect_impls_match_reference(
                {"resize", config_attrs(c), {in, floats_layout(4)}, {{1, floats({1, 1.5f, 0.6f, 2.3f})}}}, runs);
        }
}

TEST(ResizeImpls, SizesAxesPoliciesAndRoiAsRunInputsMatchTheReference) {
    const Layout in(PartialShape::dynamic_of_rank(3), DataType::f32);
    const auto run = [](Shape s, std::vector<int64_t> v, uint64_t seed) {
        return test::Run{test::random_tensor(DataType::f32, s, seed), sizes(std::move(v))};
    };
    for (const char* policy : {"stretch", "not_larger", "not_smaller"}) {
        SCOPED_TRACE(policy);
        const Attributes a = test::attrs({{"mode", std::string("linear")},
                                          {"axes", std::vector<int64_t>{-1, 1}},
                                          {"keep_aspect_ratio_policy", std::string(policy)}});
        test::expect_impls_match_reference(
            {"resize", a, {in, sizes_layout(2)}, {}},
            {run({2, 5, 4}, {9, 3}, 1), run({1, 16, 17}, {3, 8}, 2), run({3, 1, 2}, {2, 2}, 3)});
    }
    const Attributes crop = test::attrs({{"mode", std::string("cubic")},
                                         {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                         {"extrapolation_value", -3.0},
                                         {"axes", std::vector<int64_t>{1, 2}}});
    for (const std::vector<float>& roi : {std::vector<float>{0.2f, -0.1f, 0.9f, 1.3f}, {0.5f, 0, 0.5f, 1}}) {
        std::vector<test::Run> runs = {run({2, 5, 4}, {7, 3}, 4), run({1, 3, 9}, {1, 13}, 5)};
        for (test::Run& r : runs) r.push_back(floats(roi));
        test::expect_impls_match_reference({"resize", crop, {in, sizes_layout(2), floats_layout(4)}, {}}, runs);
    }
}

TEST(ResizeImpls, ScalesAttributeAndEmptyOutputsMatchTheReference) {
    const Layout in(PartialShape::dynamic_of_rank(2), DataType::f32);
    const Attributes a = test::attrs({{"mode", std::string("linear")}, {"scales", std::vector<double>{0.4, 3}}});
    test::expect_impls_match_reference({"resize", a, {in}, {}},
                                       test::random_runs(DataType::f32, {{{5, 3}}, {{2, 17}}, {{0, 4}}, {{1, 1}}}));
}

TEST(ResizeImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout in(PartialShape::dynamic_of_rank(9), DataType::f32);
    const Attributes a = test::attrs({{"mode", std::string("linear")}, {"axes", std::vector<int64_t>{-1, 0}}});
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"resize", a, {in, sizes_layout(2)}, {{1, sizes({3, 2})}}},
        {{test::random_tensor(DataType::f32, Shape{2, 1, 2, 1, 1, 1, 1, 1, 3}, 5)}}, {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ResizeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{1, n, 6}});
    // The sizes change with the data shape unchanged: counters are not checked there.
    std::vector<test::Run> with_sizes;
    uint64_t seed = 70;
    for (int64_t n : test::tail_sizes())
        with_sizes.push_back({test::random_tensor(DataType::f32, Shape{1, 4, 6}, seed++), sizes({1, 1 + n % 7, 5})});
    const Attributes linear = test::attrs({{"mode", std::string("linear")}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"resize", linear, {f({1, Dimension(), 6}), floats_layout(3)}, {{1, floats({1, 1.5f, 0.5f})}}},
            test::random_runs(DataType::f32, shapes, 100), o);
        test::SequenceOptions values = o;
        values.check_counters = false;
        test::expect_sequence({"resize", linear, {f({1, 4, 6}), sizes_layout(3)}, {}}, with_sizes, values);
    }
}

}   // namespace
}   // namespace dynrt
