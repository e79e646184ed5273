// tools/common: range parsing, JSON escaping and writing, tensor comparison and
// the one-node program builder that the harness, pipeline and ONNX tools share.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "dynrt/error.hpp"
#include "int_range.hpp"
#include "json_writer.hpp"
#include "single_node.hpp"
#include "tensor_compare.hpp"
#include "test_support.hpp"

using namespace dynrt;
using namespace dynrt::tools;

namespace {

std::string error_of(const std::string& range) {
    try {
        parse_int_range(range);
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

}   // namespace

// ---- ranges ---------------------------------------------------------------------

TEST(ToolsRange, ParseRange_IsInclusiveWithOptionalStep) {
    EXPECT_EQ(parse_int_range("7"), (std::vector<int64_t>{7}));
    EXPECT_EQ(parse_int_range("1..4"), (std::vector<int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(parse_int_range("1..10:4"), (std::vector<int64_t>{1, 5, 9}));
    EXPECT_EQ(parse_int_range("3..3"), (std::vector<int64_t>{3}));
    EXPECT_EQ(parse_int_range("2..8:3"), (std::vector<int64_t>{2, 5, 8}));
    EXPECT_EQ(parse_int_range("1..64:7").back(), 64);
    EXPECT_EQ(parse_int_range("-3..-1"), (std::vector<int64_t>{-3, -2, -1}));
}

TEST(ToolsRange, ParseRange_RejectsMalformedText) {
    for (const char* bad : {"", "5..1", "1..x", "1..4:0", "1..4:-2", "a", "1...4", "..4", " 1..4", "1..4 ", "1..4:"}) {
        EXPECT_THROW(parse_int_range(bad), Error) << bad;
    }
}

TEST(ToolsRange, Errors_SayWhatIsWrong) {
    const std::pair<const char*, const char*> cases[] = {{"5..1", "bad range '5..1'"},
                                                         {"5..1", "empty range"},
                                                         {"1..x", "'x' is not an integer"},
                                                         {"1..4:0", "step"},
                                                         {"0..99999999", "more than a million"}};
    for (const auto& [text, part] : cases) EXPECT_NE(error_of(text).find(part), std::string::npos) << text;
}

TEST(ToolsRange, LimitsOfInt64_DoNotOverflow) {
    EXPECT_EQ(parse_int_range("9223372036854775806..9223372036854775807").size(), 2u);
    EXPECT_EQ(parse_int_range("9223372036854775800..9223372036854775807:5").size(), 2u);
    EXPECT_THROW(parse_int_range("-9223372036854775807..9223372036854775807"), Error);
    EXPECT_THROW(parse_int_range("99999999999999999999"), Error);
}

// ---- JSON -----------------------------------------------------------------------

TEST(ToolsJson, Quote_EscapesQuotesBackslashAndControlCharacters) {
    EXPECT_EQ(json_quote("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(json_quote("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(json_quote("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
    EXPECT_EQ(json_quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
    EXPECT_EQ(json_quote(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(ToolsJson, Quote_PassesValidUtf8Through) {
    const std::string text = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";   // é € 😀
    EXPECT_EQ(json_quote(text), "\"" + text + "\"");
}

TEST(ToolsJson, Quote_ReplacesEachInvalidByte) {
    EXPECT_EQ(json_quote("a\xff"
                         "b"),
              "\"a\\ufffdb\"");                                                      // never valid
    EXPECT_EQ(json_quote("\x80"), "\"\\ufffd\"");                                    // stray continuation
    EXPECT_EQ(json_quote("\xc3"), "\"\\ufffd\"");                                    // truncated
    EXPECT_EQ(json_quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");                         // overlong '/'
    EXPECT_EQ(json_quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");              // surrogate
    EXPECT_EQ(json_quote("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");   // > U+10FFFF
    EXPECT_EQ(json_quote("\xe2\x82"
                         "x"),
              "\"\\ufffd\\ufffdx\"");   // cut short
}

TEST(ToolsJson, Numbers_NonFiniteBecomeNull) {
    EXPECT_EQ(json_number(1.5), "1.5");
    EXPECT_EQ(json_number(INFINITY), "null");
    EXPECT_EQ(json_number(NAN), "null");
}

TEST(ToolsJson, Writer_PlacesCommasAndNesting) {
    JsonWriter j;
    j.begin_object().field("a", 1).field("s", "x\"y").key("list").begin_array();
    j.value(int64_t{-2}).value(uint64_t{3}).value(size_t{4}).value(true).null();
    j.begin_object().end_object().end_array().field("inf", INFINITY).end_object();
    EXPECT_EQ(j.str(), R"({"a": 1, "s": "x\"y", "list": [-2, 3, 4, true, null, {}], "inf": null})");
}

TEST(ToolsJson, Writer_NewlinesKeepTheDocumentValid) {
    JsonWriter j;
    j.begin_object().key("rows").begin_array();
    j.newline(2).value(1).newline(2).value(2).newline(1).end_array().newline().field("n", 2).end_object();
    EXPECT_EQ(j.str(), "{\"rows\": [\n  1,\n  2\n ],\n \"n\": 2}");
}

// ---- comparison -----------------------------------------------------------------

TEST(ToolsCompare, WithinTolerance_PassesAndReportsTheDifference) {
    const HostTensor ref = HostTensor::from_floats({3}, {1.f, 2.f, 0.f});
    const Comparison c = compare(HostTensor::from_floats({3}, {1.f, 2.0001f, 0.f}), ref, {1e-4, 1e-5});
    EXPECT_TRUE(c.ok);
    EXPECT_NEAR(c.max_abs, 1e-4, 1e-6);
    EXPECT_NEAR(c.max_rel, 5e-5, 1e-6);
}

TEST(ToolsCompare, OutsideTolerance_NamesTheWorstElement) {
    const HostTensor ref = HostTensor::from_floats({3}, {1.f, 2.f, 3.f});
    const Comparison c = compare(HostTensor::from_floats({3}, {1.1f, 2.f, 4.f}), ref, {1e-4, 1e-5});
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.worst, 2u);
    EXPECT_NE(c.mismatch.find("element 2"), std::string::npos) << c.mismatch;
}

TEST(ToolsCompare, ShapeOrDtypeMismatch_FailsWithInfiniteDifference) {
    const HostTensor ref = HostTensor::from_floats({2}, {1.f, 2.f});
    const Comparison s = compare(HostTensor::from_floats({1, 2}, {1.f, 2.f}), ref, {1, 1});
    EXPECT_FALSE(s.ok);
    EXPECT_TRUE(std::isinf(s.max_abs));
    EXPECT_NE(s.mismatch.find("shape"), std::string::npos);
    const Comparison d = compare(HostTensor::from_int64(DataType::i64, {2}, {1, 2}), ref, {1, 1});
    EXPECT_FALSE(d.ok);
    EXPECT_NE(d.mismatch.find("dtype"), std::string::npos);
}

TEST(ToolsCompare, NanMatchesOnlyNanAndInfinityOnlyItself) {
    const HostTensor ref = HostTensor::from_floats({2}, {NAN, INFINITY});
    EXPECT_TRUE(compare(HostTensor::from_floats({2}, {NAN, INFINITY}), ref, {1e-4, 1e-5}).ok);
    EXPECT_FALSE(compare(HostTensor::from_floats({2}, {0.f, INFINITY}), ref, {1, 1}).ok);
    EXPECT_FALSE(compare(HostTensor::from_floats({2}, {NAN, -INFINITY}), ref, {1, 1}).ok);
}

// ---- one-node programs -------------------------------------------------------------

TEST(ToolsSingleNode, StaticRun_ShapeValuesAreConstants) {
    const HostTensor x = HostTensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor target = HostTensor::from_int64(DataType::i64, {1}, {6});
    SingleNode n;
    n.op = "reshape";
    n.inputs = {node_input(x, InputRole::data, false), node_input(target, InputRole::shape_values, false)};
    auto p = build_single_node(test::registry(), n);
    ASSERT_EQ(p->inputs().size(), 1u);
    EXPECT_EQ(p->nodes()[p->inputs()[0]].name, "in0");
    EXPECT_NE(p->nodes()[p->node_index("in1")].constant, nullptr);
    EXPECT_FALSE(p->nodes()[p->node_index(kSingleNodeName)].is_dynamic);
}

TEST(ToolsSingleNode, DynamicRun_DataGetsDynamicDimsAndShapeValuesKeepTheirLength) {
    const HostTensor x = HostTensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor target = HostTensor::from_int64(DataType::i64, {2}, {3, 2});
    SingleNode n;
    n.op = "reshape";
    n.inputs = {node_input(x, InputRole::data, true), node_input(target, InputRole::shape_values, true)};
    auto p = build_single_node(test::registry(), n);
    ASSERT_EQ(p->inputs().size(), 2u);
    EXPECT_EQ(p->nodes()[p->node_index("in0")].declared.shape.to_string(), "[?,?]");
    EXPECT_EQ(p->nodes()[p->node_index("in1")].declared.shape.to_string(), "[2]");
    EXPECT_TRUE(p->nodes()[p->node_index(kSingleNodeName)].is_dynamic);

    auto net = Network::create(p, test::engine(), NetworkOptions{});
    InferRequest req(net);
    feed(req, n);
    req.infer();
    EXPECT_EQ(req.get_output(0).shape(), (Shape{3, 2}));
}

TEST(ToolsSingleNode, EveryOutputOfTheOpIsAProgramOutput) {
    const HostTensor x = HostTensor::from_floats({4}, {3, 1, 4, 1});
    const HostTensor k = HostTensor::from_int64(DataType::i64, {}, {2});
    SingleNode n;
    n.op = "topk";
    n.inputs = {node_input(x, InputRole::data, false), node_input(k, InputRole::constant, false)};
    auto p = build_single_node(test::registry(), n);
    EXPECT_EQ(p->output_names(), (std::vector<std::string>{"node", "node:1"}));
}

TEST(ToolsSingleNode, ErrorsNameTheNodeAndOp) {
    const HostTensor x = HostTensor::from_floats({2}, {1, 2});
    SingleNode n;
    n.op = "reshape";   // needs a target input
    n.inputs = {node_input(x, InputRole::data, false)};
    try {
        build_single_node(test::registry(), n);
        FAIL() << "built a reshape without its target";
    } catch (const Error& e) {
        EXPECT_EQ(e.context().node, "node");
        EXPECT_EQ(e.context().op, "reshape");
    }
}
