// Core value types: errors, dimensions and shapes, layouts and data types, host
// tensors (with f16 conversion), counters and attribute validation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/layout.hpp"
#include "dynrt/shape.hpp"
#include "dynrt/stats.hpp"

using namespace dynrt;

namespace {

// The dynrt::Error thrown by `f`, or a failure when none is thrown.
template <typename F>
Error error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no dynrt::Error thrown";
    return Error("none");
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}   // namespace

// ---- Error ------------------------------------------------------------------

TEST(Error, FullContext_FormatsEveryPart) {
    Error e("axis out of range", ErrorContext{"configs/x.yaml", 12, 5, "fc1", "fully_connected", "axis"});
    EXPECT_STREQ(e.what(), "configs/x.yaml:12:5: node 'fc1' (fully_connected), field 'axis': axis out of range");
    EXPECT_EQ(e.message(), "axis out of range");
    EXPECT_EQ(e.context().line, 12);
}

TEST(Error, PartialContext_LeavesOutWhatIsUnknown) {
    EXPECT_STREQ(Error("m").what(), "m");
    EXPECT_STREQ(Error("m", ErrorContext{"a.npy", 0, 0, "", "", ""}).what(), "a.npy: m");
    EXPECT_STREQ(Error("m", ErrorContext{"a.yaml", 3, 0, "", "", ""}).what(), "a.yaml:3: m");
    EXPECT_STREQ(Error("m", ErrorContext{"", 0, 0, "n", "", ""}).what(), "node 'n': m");
    EXPECT_STREQ(Error("m", ErrorContext{"", 0, 0, "", "relu", ""}).what(), "op 'relu': m");
    EXPECT_STREQ(Error("m", ErrorContext{"", 0, 0, "", "", "axis"}).what(), "field 'axis': m");
}

TEST(Error, WithContext_FillsOnlyEmptyFields) {
    Error inner("bad", ErrorContext{"", 0, 0, "", "", "axis"});
    Error outer = inner.with_context(ErrorContext{"m.yaml", 4, 2, "n1", "concat", "other"});
    EXPECT_EQ(outer.context().field, "axis");
    EXPECT_EQ(outer.context().node, "n1");
    EXPECT_STREQ(outer.what(), "m.yaml:4:2: node 'n1' (concat), field 'axis': bad");
}

TEST(Error, IsARuntimeError) {
    try {
        throw Error("x");
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "x");
    }
}

// ---- Dimension ----------------------------------------------------------------

TEST(Dimension, ToString_CoversEveryKind) {
    EXPECT_EQ(Dimension(4).to_string(), "4");
    EXPECT_EQ(Dimension().to_string(), "?");
    EXPECT_EQ(Dimension(1, 8).to_string(), "1..8");
    EXPECT_EQ(Dimension(2, Dimension::kUnbounded).to_string(), "2..");
    EXPECT_EQ(Dimension(3, 3).to_string(), "3");
}

TEST(Dimension, StaticAndDynamic_AreTold) {
    EXPECT_TRUE(Dimension(0).is_static());
    EXPECT_EQ(Dimension(7).get_length(), 7);
    EXPECT_TRUE(Dimension::dynamic().is_dynamic());
    EXPECT_TRUE(Dimension(1, 8).is_dynamic());
    EXPECT_THROW(Dimension(1, 8).get_length(), Error);
    EXPECT_THROW(Dimension().get_length(), Error);
}

TEST(Dimension, InvalidValues_Throw) {
    EXPECT_THROW(Dimension(-2), Error);
    EXPECT_THROW(Dimension(-1, 4), Error);
    EXPECT_THROW(Dimension(5, 4), Error);
}

TEST(Dimension, ContainsAndCompatible_FollowTheRange) {
    Dimension d(2, 5);
    EXPECT_FALSE(d.contains(1));
    EXPECT_TRUE(d.contains(2));
    EXPECT_TRUE(d.contains(5));
    EXPECT_FALSE(d.contains(6));
    EXPECT_TRUE(Dimension().contains(1000000));
    EXPECT_TRUE(d.compatible(Dimension(5, 9)));
    EXPECT_FALSE(d.compatible(Dimension(6, 9)));
    EXPECT_FALSE(d.compatible(Dimension(1)));
    EXPECT_TRUE(d.compatible(Dimension(4, Dimension::kUnbounded)));
    EXPECT_FALSE(Dimension(6, Dimension::kUnbounded).compatible(d));
    EXPECT_TRUE(Dimension().compatible(Dimension(3)));
}

// ---- Shape / PartialShape -----------------------------------------------------------

TEST(Shape, CountAndToString) {
    EXPECT_EQ(Shape({1, 7, 64}).to_string(), "[1,7,64]");
    EXPECT_EQ(Shape({1, 7, 64}).count(), 448u);
    EXPECT_EQ(Shape().count(), 1u);
    EXPECT_EQ(Shape().to_string(), "[]");
    EXPECT_EQ(Shape({3, 0, 2}).count(), 0u);
}

TEST(PartialShape, ToStringAndStaticness) {
    PartialShape p{1, Dimension(), 64};
    EXPECT_EQ(p.to_string(), "[1,?,64]");
    EXPECT_TRUE(p.is_dynamic());
    EXPECT_THROW(p.to_shape(), Error);
    PartialShape s(Shape{2, 3});
    EXPECT_TRUE(s.is_static());
    EXPECT_EQ(s.to_shape(), Shape({2, 3}));
    EXPECT_TRUE(PartialShape().is_static());
    EXPECT_EQ(PartialShape::dynamic_of_rank(2).to_string(), "[?,?]");
}

TEST(PartialShape, Compatible_NeedsRankAndEveryDim) {
    PartialShape p{Dimension(1, 4), Dimension(), 8};
    EXPECT_TRUE(p.compatible(Shape{4, 100, 8}));
    EXPECT_FALSE(p.compatible(Shape{5, 100, 8}));
    EXPECT_FALSE(p.compatible(Shape{4, 100, 9}));
    EXPECT_FALSE(p.compatible(Shape{4, 100}));
}

// ---- data types / formats / layouts ---------------------------------------------------

TEST(DataType, BitwidthsAndByteSizes) {
    EXPECT_EQ(bitwidth(DataType::f32), 32u);
    EXPECT_EQ(bitwidth(DataType::f16), 16u);
    EXPECT_EQ(bitwidth(DataType::i32), 32u);
    EXPECT_EQ(bitwidth(DataType::i64), 64u);
    EXPECT_EQ(bitwidth(DataType::u8), 8u);
    EXPECT_EQ(bitwidth(DataType::i8), 8u);
    EXPECT_EQ(bitwidth(DataType::boolean), 8u);
    EXPECT_EQ(byte_size(DataType::f16), 2u);
    EXPECT_EQ(byte_size(DataType::i64), 8u);
    EXPECT_TRUE(is_floating(DataType::f16));
    EXPECT_FALSE(is_floating(DataType::i32));
}

TEST(DataType, Parse_AcceptsAliases) {
    const std::pair<const char*, DataType> cases[] = {
        {"f32", DataType::f32},         {"float32", DataType::f32}, {"float", DataType::f32},
        {"f16", DataType::f16},         {"float16", DataType::f16}, {"half", DataType::f16},
        {"i32", DataType::i32},         {"int32", DataType::i32},   {"i64", DataType::i64},
        {"int64", DataType::i64},       {"u8", DataType::u8},       {"uint8", DataType::u8},
        {"i8", DataType::i8},           {"int8", DataType::i8},     {"bool", DataType::boolean},
        {"boolean", DataType::boolean}, {"f64", DataType::f64},     {"double", DataType::f64}};
    for (const auto& [text, t] : cases) EXPECT_EQ(parse_data_type(text), t) << text;
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8, DataType::i8,
                       DataType::boolean, DataType::f64})
        EXPECT_EQ(parse_data_type(to_string(t)), t);
}

TEST(DataType, ParseUnknown_ThrowsNamingIt) {
    EXPECT_TRUE(contains(error_of([] { parse_data_type("f128"); }).what(), "'f128'"));
}

TEST(Format, PlainOnly) {
    EXPECT_STREQ(to_string(Format::plain), "plain");
    EXPECT_EQ(parse_format("plain"), Format::plain);
    EXPECT_THROW(parse_format("bfyx"), Error);
    EXPECT_FALSE(is_blocked(Format::plain));
}

TEST(Layout, ToString_ShowsTypeAndShape) {
    EXPECT_EQ(Layout(PartialShape{1, Dimension(), 64}, DataType::f32).to_string(), "f32[1,?,64]");
    EXPECT_EQ(Layout(PartialShape{2}, DataType::i64).to_string(), "i64[2]");
}

TEST(Layout, SizesIncludePadding) {
    Layout l(PartialShape{2, 3}, DataType::f16, Format::plain, Padding{{0, 1}, {1, 2}});
    EXPECT_EQ(l.padded_shape(), Shape({3, 6}));
    EXPECT_EQ(l.count(), 6u);
    EXPECT_EQ(l.bytes(), 3u * 6u * 2u);
    Layout plain = l.with_shape(Shape{4, 4});
    EXPECT_EQ(plain.dtype, DataType::f16);
    EXPECT_TRUE(plain.padding.empty());
    EXPECT_EQ(plain.bytes(), 32u);
}

TEST(Layout, DynamicSizes_Throw) {
    Layout l(PartialShape{1, Dimension()}, DataType::f32);
    EXPECT_THROW(l.count(), Error);
    EXPECT_THROW(l.bytes(), Error);
}

TEST(Layout, PaddingOfWrongRank_Throws) {
    Layout l(PartialShape{2, 3}, DataType::f32, Format::plain, Padding{{1}, {}});
    EXPECT_THROW(l.padded_shape(), Error);
}

TEST(Layout, EmptyAndZeroPadding_AreEqualAndHashAlike) {
    Layout a(PartialShape{2, 3}, DataType::f32);
    Layout b(PartialShape{2, 3}, DataType::f32, Format::plain, Padding{{0, 0}, {0, 0}});
    EXPECT_EQ(a, b);
    EXPECT_EQ(hash_layout(a), hash_layout(b));
    EXPECT_NE(a, Layout(PartialShape{2, 3}, DataType::f16));
    EXPECT_NE(a, Layout(PartialShape{2, 3}, DataType::f32, Format::plain, Padding{{0, 1}, {}}));
    EXPECT_NE(a, Layout(PartialShape{2, Dimension(3, 4)}, DataType::f32));
}

// ---- HostTensor / f16 ---------------------------------------------------------------

TEST(HostTensor, NewTensor_IsZeroFilled) {
    HostTensor t(DataType::i32, Shape{2, 3});
    EXPECT_EQ(t.count(), 6u);
    EXPECT_EQ(t.bytes(), 24u);
    for (int64_t v : t.to_int64()) EXPECT_EQ(v, 0);
    EXPECT_EQ(t.layout().to_string(), "i32[2,3]");
}

TEST(HostTensor, FromInt64_EveryIntegerType) {
    const std::vector<int64_t> v{-3, 0, 7, 100};
    for (DataType t : {DataType::i32, DataType::i64, DataType::i8}) {
        HostTensor h = HostTensor::from_int64(t, Shape{4}, v);
        EXPECT_EQ(h.to_int64(), v) << to_string(t);
    }
    EXPECT_EQ(HostTensor::from_int64(DataType::u8, Shape{3}, {0, 7, 255}).to_int64(),
              std::vector<int64_t>({0, 7, 255}));
    EXPECT_EQ(HostTensor::from_int64(DataType::boolean, Shape{3}, {0, 5, 1}).to_int64(),
              std::vector<int64_t>({0, 1, 1}));
}

TEST(HostTensor, FromInt64_FloatTypes) {
    HostTensor f = HostTensor::from_int64(DataType::f32, Shape{2}, {-4, 9});
    EXPECT_EQ(f.as<float>()[0], -4.0f);
    EXPECT_EQ(f.as<float>()[1], 9.0f);
    HostTensor h = HostTensor::from_int64(DataType::f16, Shape{2}, {1, -2});
    EXPECT_EQ(h.as<uint16_t>()[0], 0x3c00);
    EXPECT_EQ(h.as<uint16_t>()[1], 0xc000);
    EXPECT_THROW(f.to_int64(), Error);
}

TEST(HostTensor, WrongValueCount_Throws) {
    EXPECT_THROW(HostTensor::from_int64(DataType::i32, Shape{2, 2}, {1, 2, 3}), Error);
    EXPECT_THROW(HostTensor::from_floats(Shape{2}, {1.0f}), Error);
    EXPECT_THROW(HostTensor(DataType::f32, Shape{-1}), Error);
}

TEST(HostTensor, DoubleAccess_ConvertsPerType) {
    HostTensor f = HostTensor::from_floats(Shape{2}, {1.5f, -2.25f});
    EXPECT_EQ(f.get_as_double(1), -2.25);
    HostTensor h(DataType::f16, Shape{1});
    h.set_from_double(0, 0.5);
    EXPECT_EQ(h.as<uint16_t>()[0], 0x3800);
    EXPECT_EQ(h.get_as_double(0), 0.5);
    HostTensor i8(DataType::i8, Shape{3});
    i8.set_from_double(0, -2.7);    // truncates
    i8.set_from_double(1, 300.0);   // saturates
    i8.set_from_double(2, -1e30);
    EXPECT_EQ(i8.to_int64(), std::vector<int64_t>({-2, 127, -128}));
    HostTensor b(DataType::boolean, Shape{2});
    b.set_from_double(0, 0.25);
    EXPECT_EQ(b.to_int64(), std::vector<int64_t>({1, 0}));
    EXPECT_THROW(b.get_as_double(2), Error);
    EXPECT_THROW(b.set_from_double(2, 1.0), Error);
}

TEST(Half, KnownValues_Encode) {
    EXPECT_EQ(float_to_half(0.0f), 0x0000);
    EXPECT_EQ(float_to_half(-0.0f), 0x8000);
    EXPECT_EQ(float_to_half(1.0f), 0x3c00);
    EXPECT_EQ(float_to_half(-2.0f), 0xc000);
    EXPECT_EQ(float_to_half(65504.0f), 0x7bff);                // largest finite
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);   // smallest normal
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);   // smallest subnormal
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -30)), 0x0000);
    EXPECT_EQ(float_to_half(1e10f), 0x7c00);
}

TEST(Half, Ties_RoundToEven) {
    // 1 + 2^-11 is halfway between 0x3c00 and 0x3c01: even is 0x3c00.
    EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    // 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02: even is 0x3c02.
    EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    // Just above a tie rounds up.
    EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
    // 65520 is halfway between 65504 and 65536 (= inf): even is inf.
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
    EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
}

TEST(Half, Subnormals_RoundToEven) {
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);   // tie 0 / 1
    EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);   // above the tie
    EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);   // tie 1 / 2
    EXPECT_EQ(float_to_half(std::ldexp(5.0f, -25)), 0x0002);   // tie 2 / 3
    // Halfway between the largest subnormal 0x03ff and 0x0400: even is 0x0400.
    EXPECT_EQ(float_to_half(std::ldexp(2047.0f, -25)), 0x0400);
    EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -24)), 0x8001);
}

TEST(Half, InfAndNan) {
    EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
    EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
    const uint16_t n = float_to_half(std::numeric_limits<float>::quiet_NaN());
    EXPECT_EQ(n & 0x7c00, 0x7c00);
    EXPECT_NE(n & 0x03ff, 0);
    EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
    EXPECT_TRUE(std::isinf(half_to_float(0xfc00)));
    EXPECT_LT(half_to_float(0xfc00), 0.0f);
}

TEST(Half, Decode_KnownValues) {
    EXPECT_EQ(half_to_float(0x3c00), 1.0f);
    EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
    EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
    EXPECT_EQ(half_to_float(0x3555), 1365.0f / 4096.0f);   // 0.333251953125
    EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(Half, EveryNonNanHalf_RoundTrips) {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
        if (nan) continue;
        ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
    }
}

// ---- Counters ------------------------------------------------------------------

TEST(Counters, PlusEquals_AddsEveryField) {
    Counters a, b;
    a.executions = 2;
    a.set_arguments = 5;
    b.executions = 3;
    b.reclaims = 1;
    b.bytes_allocated = 4096;
    a += b;
    EXPECT_EQ(a.executions, 5u);
    EXPECT_EQ(a.set_arguments, 5u);
    EXPECT_EQ(a.reclaims, 1u);
    EXPECT_EQ(a.bytes_allocated, 4096u);
}

TEST(Counters, Items_ListEveryFieldInOrder) {
    Counters c;
    c.executions = 1;
    c.impl_cache_hits = 9;
    c.set_arguments = 7;
    c.views = 4;
    const auto items = c.items();
    ASSERT_EQ(items.size(), sizeof(Counters) / sizeof(uint64_t));
    EXPECT_STREQ(items.front().first, "executions");
    EXPECT_EQ(items.front().second, 1u);
    EXPECT_STREQ(items[9].first, "impl_cache_hits");
    EXPECT_EQ(items[9].second, 9u);
    EXPECT_STREQ(items[items.size() - 2].first, "set_arguments");
    EXPECT_EQ(items[items.size() - 2].second, 7u);
    EXPECT_STREQ(items.back().first, "views");
    EXPECT_EQ(items.back().second, 4u);
    std::set<std::string> names;
    for (const auto& it : items) names.insert(it.first);
    EXPECT_EQ(names.size(), items.size());
}

// ---- Attributes -----------------------------------------------------------------

namespace {
std::vector<AttrSpec> schema() {
    return {attr_int("axis", 0),
            attr_float("alpha", 1.0),
            attr_bool("exclusive", false),
            attr_string("mode", "nearest", {"nearest", "linear"}),
            attr_ints("pads", std::nullopt),
            attr_floats("scales", std::vector<double>{})};
}
Attributes raw(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
    Attributes a;
    for (const auto& [k, v] : kv) a.set(k, v);
    return a;
}
}   // namespace

TEST(Attributes, Validate_FillsDefaultsAndKeepsGivenValues) {
    Attributes a = Attributes::validate(schema(), raw({{"pads", std::vector<int64_t>{1, 2}}, {"axis", int64_t{-1}}}));
    EXPECT_EQ(a.get_int("axis"), -1);
    EXPECT_EQ(a.get_float("alpha"), 1.0);
    EXPECT_FALSE(a.get_bool("exclusive"));
    EXPECT_EQ(a.get_string("mode"), "nearest");
    EXPECT_EQ(a.get_ints("pads"), std::vector<int64_t>({1, 2}));
    EXPECT_TRUE(a.get_floats("scales").empty());
    EXPECT_EQ(a.values().size(), 6u);
}

TEST(Attributes, Validate_ConvertsCompatibleValues) {
    Attributes a = Attributes::validate(
        schema(), raw({{"alpha", int64_t{2}}, {"pads", int64_t{3}}, {"scales", std::vector<int64_t>{2, 4}}}));
    EXPECT_TRUE(std::holds_alternative<double>(a.values().at("alpha")));
    EXPECT_EQ(a.get_float("alpha"), 2.0);
    EXPECT_EQ(a.get_ints("pads"), std::vector<int64_t>({3}));
    EXPECT_TRUE(std::holds_alternative<std::vector<double>>(a.values().at("scales")));
    EXPECT_EQ(a.get_floats("scales"), std::vector<double>({2.0, 4.0}));
    Attributes b = Attributes::validate(schema(), raw({{"pads", std::vector<int64_t>{}}, {"scales", 0.5}}));
    EXPECT_EQ(b.get_floats("scales"), std::vector<double>({0.5}));
    Attributes c =
        Attributes::validate({{"names", AttrType::Strings, std::nullopt, {}, ""}}, raw({{"names", std::string("a")}}));
    EXPECT_EQ(std::get<std::vector<std::string>>(c.values().at("names")), std::vector<std::string>({"a"}));
}

TEST(Attributes, Validate_RejectsUnknownListingKnown) {
    Error e = error_of([] { Attributes::validate({attr_int("a", 0), attr_int("b", 0)}, raw({{"foo", int64_t{1}}})); });
    EXPECT_EQ(e.message(), "unknown attribute 'foo'; known: a, b");
    EXPECT_EQ(e.context().field, "foo");
}

TEST(Attributes, Validate_RejectsMissingRequired) {
    Error e = error_of([] { Attributes::validate(schema(), Attributes{}); });
    EXPECT_TRUE(contains(e.message(), "missing required attribute 'pads'")) << e.what();
    EXPECT_EQ(e.context().field, "pads");
}

TEST(Attributes, Validate_RejectsIllTypedValues) {
    Error e = error_of([] { Attributes::validate(schema(), raw({{"pads", std::string("x")}})); });
    EXPECT_EQ(e.message(), "expected ints, got string");
    EXPECT_EQ(e.context().field, "pads");
    // Float never narrows to Int, and Bool is not an Int.
    Error f = error_of([] { Attributes::validate(schema(), raw({{"pads", int64_t{1}}, {"axis", 1.5}})); });
    EXPECT_EQ(f.message(), "expected int, got float");
    EXPECT_EQ(f.context().field, "axis");
    Error g = error_of([] { Attributes::validate(schema(), raw({{"pads", int64_t{1}}, {"exclusive", int64_t{1}}})); });
    EXPECT_EQ(g.message(), "expected bool, got int");
    Error h = error_of([] { Attributes::validate(schema(), raw({{"pads", std::vector<double>{1.0}}})); });
    EXPECT_EQ(h.message(), "expected ints, got floats");
}

TEST(Attributes, Validate_RejectsDisallowedStringListingAllowed) {
    Error e = error_of([] {
        Attributes::validate(schema(), raw({{"pads", int64_t{0}}, {"mode", std::string("cubic")}}));
    });
    EXPECT_TRUE(contains(e.message(), "'cubic'")) << e.what();
    EXPECT_TRUE(contains(e.message(), "nearest, linear")) << e.what();
    EXPECT_EQ(e.context().field, "mode");
}

TEST(Attributes, Getters_CheckPresenceAndType) {
    Attributes a = raw({{"axis", int64_t{1}}, {"k", std::vector<int64_t>{1, 2}}});
    EXPECT_EQ(a.get_float("axis"), 1.0);   // Int widens
    EXPECT_EQ(a.get_floats("k"), std::vector<double>({1.0, 2.0}));
    EXPECT_EQ(error_of([&] { a.get_int("nope"); }).context().field, "nope");
    EXPECT_THROW(a.get_string("axis"), Error);
    EXPECT_THROW(a.get_bool("axis"), Error);
    EXPECT_THROW(a.get_ints("axis"), Error);
}

TEST(Attributes, Hash_DependsOnValuesNotOnConstruction) {
    Attributes a = raw({{"axis", int64_t{1}}, {"mode", std::string("linear")}});
    Attributes b = raw({{"mode", std::string("linear")}, {"axis", int64_t{1}}});
    EXPECT_EQ(a.hash(), b.hash());
    EXPECT_NE(a.hash(), raw({{"axis", int64_t{2}}, {"mode", std::string("linear")}}).hash());
    EXPECT_NE(a.hash(), raw({{"axis", 1.0}, {"mode", std::string("linear")}}).hash());
    EXPECT_EQ(raw({{"x", 0.0}}).hash(), raw({{"x", -0.0}}).hash());
}

TEST(Attributes, ToString_IsSortedByName) {
    Attributes a = raw({{"exclusive", false}, {"axis", int64_t{1}}});
    EXPECT_EQ(a.to_string(), "{axis: 1, exclusive: false}");
    Attributes b =
        raw({{"s", std::vector<double>{0.5, 0.1}}, {"m", std::string("nearest")}, {"p", std::vector<int64_t>{1, -2}}});
    EXPECT_EQ(b.to_string(), "{m: nearest, p: [1, -2], s: [0.5, 0.1]}");
    EXPECT_STREQ(to_string(AttrType::Strings), "strings");
}

// ---- checked sizes ------------------------------------------------------------

TEST(CheckedSizes, ElementCountThatWrapsIsAnError) {
    // 2^32 * 2^32 wraps to 0 in 64 bits: it must not pass as an empty tensor.
    const Shape s{int64_t{1} << 32, int64_t{1} << 32, 1};
    try {
        (void)s.count();
        FAIL() << "no error for " << s.to_string();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("[4294967296,4294967296,1]"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)Layout(PartialShape(Shape{int64_t{1} << 62, 8}), DataType::f32).bytes(), Error);
}

// A rank built from a length (reshape's target with unknown values) is
// capped: 2^61 dims would otherwise be a length_error or a huge allocation.
TEST(CheckedSizes, RankAboveTheLimitIsAnError) {
    EXPECT_EQ(PartialShape::dynamic_of_rank(kMaxRank).rank(), kMaxRank);
    try {
        (void)PartialShape::dynamic_of_rank(size_t(1) << 61);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("rank 2305843009213693952 is above the limit of 64"), std::string::npos)
            << e.what();
    }
}

TEST(CheckedSizes, ZeroDimIsEmptyWhateverTheOthers) {
    EXPECT_EQ((Shape{int64_t{1} << 40, 0, int64_t{1} << 40}.count()), 0u);
    EXPECT_EQ((Shape{}.count()), 1u);
    EXPECT_EQ((Shape{int64_t{1} << 30, 1 << 30}.count()), size_t{1} << 60);
}

TEST(CheckedSizes, PaddingAndBlockingOverflowAreErrors) {
    Layout padded(PartialShape(Shape{2, 3}), DataType::f32);
    padded.padding.upper = {0, std::numeric_limits<int64_t>::max()};
    EXPECT_THROW((void)padded.bytes(), Error);
    EXPECT_THROW(checked_mul(int64_t{1} << 62, int64_t{4}, "reshape target"), Error);
    EXPECT_THROW(checked_add(std::numeric_limits<size_t>::max(), size_t{1}, "offset"), Error);
    EXPECT_EQ(checked_mul(int64_t{-3}, int64_t{4}, "x"), -12);
}
