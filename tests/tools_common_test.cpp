// tools/common: range parsing, JSON escaping, writing and reading, tensor comparison,
// output files (destinations and names) and the one-node program builder that
// the harness, pipeline and ONNX tools share.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <utility>

#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "file_io.hpp"
#include "int_range.hpp"
#include "json_reader.hpp"
#include "json_writer.hpp"
#include "op_test.hpp"
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

// ---- JSON reader ----------------------------------------------------------------

// What parse_json throws for `text` ("" when it parses).
std::string json_error(const std::string& text) {
    try {
        parse_json(text);
    } catch (const JsonSyntaxError& e) {
        return e.what();
    }
    return "";
}

TEST(ToolsJsonReader, EveryTypeParses_MembersKeepFileOrder) {
    const JsonValue v = parse_json(
        " {\"z\": [1, -2.5e3, 0], \"a\": {\"t\": true, \"f\": false, \"n\": null},\n"
        "  \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"e\": [], \"o\": {}} ");
    ASSERT_TRUE(v.is(JsonValue::Type::object));
    ASSERT_EQ(v.object.size(), 5u);
    EXPECT_EQ(v.object[0].first, "z");
    EXPECT_EQ(v.object[1].first, "a");
    const JsonValue* z = v.find("z");
    ASSERT_TRUE(z && z->is(JsonValue::Type::array) && z->array.size() == 3u);
    EXPECT_EQ(z->array[1].number, -2500);
    EXPECT_TRUE(v.find("a")->find("t")->boolean);
    EXPECT_TRUE(v.find("a")->find("f")->is(JsonValue::Type::boolean));
    EXPECT_FALSE(v.find("a")->find("f")->boolean);
    EXPECT_TRUE(v.find("a")->find("n")->is(JsonValue::Type::null));
    EXPECT_EQ(v.find("s")->string, "x\"\\/\b\f\n\r\t");
    EXPECT_TRUE(v.find("e")->array.empty());
    EXPECT_TRUE(v.find("o")->is(JsonValue::Type::object));
    EXPECT_EQ(v.find("missing"), nullptr);
    EXPECT_EQ(z->find("z"), nullptr) << "find on an array";
}

TEST(ToolsJsonReader, UnicodeEscapes_AreDecodedToUtf8) {
    EXPECT_EQ(parse_json("\"caf\\u00e9 \\u20ac\"").string, "caf\xc3\xa9 \xe2\x82\xac");
    EXPECT_EQ(parse_json("\"\\ud83d\\ude00\"").string, "\xf0\x9f\x98\x80") << "a surrogate pair";
    EXPECT_EQ(parse_json("\"\\u0000\"").string, std::string(1, '\0'));
    // A lone surrogate has no UTF-8 form: the replacement character, as the
    // writer writes for a byte that is not UTF-8.
    EXPECT_EQ(parse_json("\"a\\ud800b\"").string,
              "a\xef\xbf\xbd"
              "b");
    EXPECT_EQ(parse_json("\"\\udc00\"").string, "\xef\xbf\xbd");
    EXPECT_EQ(parse_json("\"\\ud800\\u0041\"").string,
              "\xef\xbf\xbd"
              "A")
        << "the next escape stands alone";
    EXPECT_EQ(parse_json("\"\xf0\x9f\x98\x80\"").string, "\xf0\x9f\x98\x80") << "UTF-8 as is";
}

TEST(ToolsJsonReader, WhatTheWriterWrites_ReadsBackAsWritten) {
    JsonWriter j;
    const std::string name = "node \"1\"\n\t\x01 caf\xc3\xa9 \xf0\x9f\x98\x80";
    j.begin_object().field("name", name).field("ms", 0.125).field("n", static_cast<uint64_t>(1) << 52);
    j.key("list").begin_array().newline().value(true).null().end_array().end_object();
    const JsonValue v = parse_json(j.str());
    EXPECT_EQ(v.find("name")->string, name);
    EXPECT_EQ(v.find("ms")->number, 0.125);
    EXPECT_EQ(v.find("n")->number, 4503599627370496.0);
    EXPECT_EQ(v.find("list")->array.size(), 2u);
    // An invalid byte is written as U+FFFD and read back as it.
    JsonWriter bad;
    bad.begin_array().value(std::string("a\xff")).end_array();
    EXPECT_EQ(parse_json(bad.str()).array[0].string, "a\xef\xbf\xbd");
}

TEST(ToolsJsonReader, WhatIsNotStrictJson_IsRefused) {
    for (const char* text :
         {"",         " ",          "[1,]",    "{\"a\": 1,}", "[1 2]",        "{\"a\" 1}",   "{a: 1}",    "{'a': 1}",
          "NaN",      "[Infinity]", "-",       "01",          "1.",           ".5",          "1e",        "+1",
          "[1e999]",  "tru",        "nul",     "\"abc",       "\"a\\x\"",     "\"\\u12g4\"", "\"\\u12\"", "\"a\nb\"",
          "\"\xff\"", "\"\xc3\"",   "// c\n1", "1 2",         "{\"a\": 1} x", "[",           "{",         "{\"a\":}"})
        EXPECT_NE(json_error(text), "") << "parsed: " << text;
    EXPECT_EQ(json_error("[-0, 0.5e-3, 1E+2, -12]"), "");
    std::string deep(kMaxJsonDepth + 1, '[');
    deep += std::string(kMaxJsonDepth + 1, ']');
    EXPECT_NE(json_error(deep).find("nested deeper"), std::string::npos) << json_error(deep);
    std::string ok(kMaxJsonDepth, '[');
    ok += std::string(kMaxJsonDepth, ']');
    EXPECT_EQ(json_error(ok), "");
}

TEST(ToolsJsonReader, Errors_NameLineColumnAndByte) {
    try {
        parse_json("{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}");
        FAIL() << "parsed";
    } catch (const JsonSyntaxError& e) {
        EXPECT_EQ(e.line(), 3u);
        EXPECT_EQ(e.column(), 14u) << "the ']' where a value is due";
        EXPECT_EQ(e.offset(), 25u);
        EXPECT_NE(std::string(e.what()).find("not JSON at line 3, column 14 (byte 25): expected a value"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_NE(json_error("{\"a\": 1} x").find("text after the value"), std::string::npos);
    EXPECT_NE(json_error("[1e999]").find("out of the range of a double"), std::string::npos);
    EXPECT_NE(json_error("\"\\q\"").find("unknown escape '\\q'"), std::string::npos) << json_error("\"\\q\"");
}

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

// ---- output files -----------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

using TempDir = test::ScratchDir;

std::string slurp(const std::string& path) { return test::read_text(path); }

void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool is_fifo(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

}   // namespace

TEST(ToolsOutputFiles, DestinationsThatAreNoRegularFile_AreRefusedWithTheOptionAndKind) {
    TempDir dir;
    put(dir / "file", "x");
    fs::create_directory(dir / "folder");
    fs::create_symlink(dir / "file", dir / "link");
    fs::create_symlink(dir / "folder", dir / "folder_link");
    fs::create_symlink(dir / "nowhere", dir / "dangling");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    // Nothing there, or a regular file: fine.
    EXPECT_NO_THROW(check_output_file(dir / "missing", "--report"));
    EXPECT_NO_THROW(check_output_file(dir / "file", "--report"));
    EXPECT_NO_THROW(check_output_folder(dir / "missing", "--save-outputs"));
    EXPECT_NO_THROW(check_output_folder(dir / "folder", "--save-outputs"));
    EXPECT_NO_THROW(check_output_folder(dir / "folder/", "--save-outputs"));
    const std::pair<std::string, std::string> files[] = {{"link", "a symbolic link"},
                                                         {"dangling", "a symbolic link"},
                                                         {"fifo", "a FIFO"},
                                                         {"folder", "a directory"},
                                                         {"folder_link", "a symbolic link"}};
    for (const auto& [name, kind] : files) {
        const std::string m = test::error_of([&, n = name] { check_output_file(dir / n, "--report"); });
        EXPECT_NE(m.find("--report: the path is " + kind + ", not a regular file"), std::string::npos) << m;
        EXPECT_NE(m.find(dir / name), std::string::npos) << m;
    }
    // A folder may not be a link to one either, with or without a trailing '/'.
    const std::pair<std::string, std::string> folders[] = {{"folder_link", "a symbolic link"},
                                                           {"folder_link/", "a symbolic link"},
                                                           {"fifo", "a FIFO"},
                                                           {"file", "a regular file"}};
    for (const auto& [name, kind] : folders) {
        const std::string m = test::error_of([&, n = name] { check_output_folder(dir / n, "--save-outputs"); });
        EXPECT_NE(m.find("--save-outputs: the path exists and is " + kind + ", not a directory"), std::string::npos)
            << m;
    }
}

TEST(ToolsOutputFiles, WriteFileReplacing_ReplacesRegularFilesAndLeavesLinksAndFifosAlone) {
    TempDir dir;
    put(dir / "victim", "precious");
    fs::create_symlink(dir / "victim", dir / "link");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    for (const std::string name : {"link", "fifo"}) {
        const std::string m = test::error_of([&] { write_file_replacing(dir / name, "new", "--report"); });
        EXPECT_NE(m.find("not a regular file"), std::string::npos) << name << ": " << m;
    }
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
    EXPECT_TRUE(is_fifo(dir / "fifo"));
    EXPECT_EQ(slurp(dir / "victim"), "precious");
    // A link planted under the temporary name is not written through: the
    // file is written under another temporary name and renamed.
    put(dir / "report.json", "old");
    fs::create_symlink(dir / "victim", dir / ("report.json.tmp-" + std::to_string(::getpid())));
    write_file_replacing(dir / "report.json", "new", "--report");
    EXPECT_EQ(slurp(dir / "report.json"), "new");
    EXPECT_FALSE(fs::is_symlink(dir / "report.json"));
    EXPECT_EQ(slurp(dir / "victim"), "precious");
    write_file_replacing(dir / "fresh.json", "", "--report");
    EXPECT_TRUE(fs::is_regular_file(dir / "fresh.json"));
    EXPECT_EQ(fs::file_size(dir / "fresh.json"), 0u);
    // No temporary file of ours is left (the planted link stays).
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path())) {
        ++entries;
        const std::string n = e.path().filename().string();
        if (n.find(".tmp-") != std::string::npos) {
            EXPECT_TRUE(fs::is_symlink(e.path())) << n;
        }
    }
    EXPECT_EQ(entries, 6u);   // victim, link, fifo, report.json, the planted link, fresh.json
}

TEST(ToolsOutputFiles, FileNamesFromTensorNames_StayInTheFolderAreDistinctAndStable) {
    const std::string long_name(300, 'n');
    const std::vector<std::string> names = {
        "a:b", "a_b",          "../../x", "/abs/dir/x",    "model/dense/BiasAdd:0", ".",    "..", ".hidden",
        "",    "sp ace\n\xff", "y",       long_name + "1", long_name + "2",         "a_b_2"};
    const std::vector<std::string> files = output_file_names(names, ".npy");
    ASSERT_EQ(files.size(), names.size());
    EXPECT_EQ(output_file_names(names, ".npy"), files);   // the same names, the same files
    std::set<std::string> distinct;
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string& f = files[i];
        SCOPED_TRACE(names[i] + " -> " + f);
        EXPECT_TRUE(distinct.insert(f).second);
        ASSERT_GT(f.size(), 4u);
        EXPECT_EQ(f.substr(f.size() - 4), ".npy");
        EXPECT_NE(f[0], '.');
        EXPECT_LE(f.size(), kMaxFileStemBytes + 4 + 3);   // stem, ".npy", a "_N" suffix
        for (const char c : f)
            EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') << c;
        // Nothing leads out of the folder.
        EXPECT_EQ(fs::path(f).filename().string(), f);
        EXPECT_EQ((fs::path("dir") / f).lexically_normal().parent_path(), fs::path("dir"));
    }
    // Names that are file names keep them, wherever they come; the rest are
    // readable and take a suffix on a clash, in order.
    EXPECT_EQ(files[1], "a_b.npy");
    EXPECT_EQ(files[13], "a_b_2.npy");
    EXPECT_EQ(files[0], "a_b_3.npy");
    EXPECT_EQ(files[4], "model_dense_BiasAdd_0.npy");
    EXPECT_EQ(files[10], "y.npy");
    // Long names are cut and told apart by a hash of the whole name.
    EXPECT_NE(files[11], files[12]);
    EXPECT_EQ(files[11].substr(0, 100), files[12].substr(0, 100));
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
