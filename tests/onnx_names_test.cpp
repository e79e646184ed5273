// Names in ONNX models that users do not choose: anonymous dims ("?", "",
// "unk__N", -1, no value at all) are each their own unknown in the import, in
// GraphRunner's dim_param checks and in the schedule symbols of `dynrt run
// MODEL.onnx`; dim_params that differ only in characters a symbol cannot hold
// stay apart; graph output names that are paths ("../../x", "a/b:0") give
// files inside the --save-outputs folder, listed in its index.json.
#include <gtest/gtest.h>

#if defined(DYNRT_HAVE_ONNX)

#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "onnx_build.hpp"
#include "onnx_import.hpp"
#include "op_test.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace fs = std::filesystem;
namespace ox = ::onnx;
using namespace dynrt::test::onnx_build;
namespace di = dynrt::onnx;

namespace {

using TempDir = test::ScratchDir;

// One declared dim: a dim_value, a dim_param, or neither.
struct Dim {
    std::optional<int64_t> value;
    std::optional<std::string> param;
};
Dim value(int64_t v) { return {v, std::nullopt}; }
Dim param(const std::string& p) { return {std::nullopt, p}; }
Dim neither() { return {}; }

void add_float(ox::ValueInfoProto* v, const std::string& name, const std::optional<std::vector<Dim>>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(ox::TensorProto::FLOAT);
    if (!dims) return;
    auto* shape = tt->mutable_shape();
    for (const Dim& d : *dims) {
        auto* dim = shape->add_dim();
        if (d.value) dim->set_dim_value(*d.value);
        if (d.param) dim->set_dim_param(*d.param);
    }
}

// Each input `in[k]` -> Relu -> graph output `out[k]`.
ox::ModelProto relu_model(const std::vector<std::pair<std::string, std::vector<Dim>>>& in,
                          const std::vector<std::string>& out) {
    ox::ModelProto m = empty_model();
    for (size_t k = 0; k < in.size(); ++k) {
        add_node(m, "Relu", {in[k].first}, {out[k]}, "relu" + std::to_string(k));
        add_float(m.mutable_graph()->add_input(), in[k].first, in[k].second);
        add_float(m.mutable_graph()->add_output(), out[k], std::nullopt);
    }
    return m;
}

// A and B joined by Concat on `axis` into Y.
ox::ModelProto concat_model(const std::vector<Dim>& a, const std::vector<Dim>& b, int64_t axis) {
    ox::ModelProto m = empty_model();
    auto* attr = add_node(m, "Concat", {"A", "B"}, {"Y"}, "cat")->add_attribute();
    attr->set_name("axis");
    attr->set_type(ox::AttributeProto::INT);
    attr->set_i(axis);
    add_float(m.mutable_graph()->add_input(), "A", a);
    add_float(m.mutable_graph()->add_input(), "B", b);
    add_float(m.mutable_graph()->add_output(), "Y", std::nullopt);
    return m;
}

std::string save(const TempDir& dir, const ox::ModelProto& m, const std::string& name = "model.onnx") {
    const std::string path = dir / name;
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return path;
}

using test::error_of;

void expect_relu_of(const HostTensor& y, const HostTensor& x) {
    ASSERT_EQ(y.shape(), x.shape());
    for (size_t i = 0; i < x.count(); ++i) ASSERT_EQ(y.as<float>()[i], std::max(x.as<float>()[i], 0.0f)) << i;
}

// Runs a Relu model's inputs through GraphRunner with `shapes`, checking
// every output.
void run_relus(const std::string& path, const std::vector<std::pair<std::string, Shape>>& shapes) {
    const di::OnnxModel model = di::load_model(path);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, path);
    std::vector<HostTensor> xs;
    uint64_t seed = 3;
    for (const auto& [name, shape] : shapes) {
        xs.push_back(test::random_tensor(DataType::f32, shape, seed++));
        run.set_input(name, xs.back());
    }
    run.infer();
    for (size_t k = 0; k < xs.size(); ++k) expect_relu_of(run.output(k), xs[k]);
}

using Proc = test::CliResult;

Proc dynrt_cli(const std::string& args) { return test::run_dynrt(args + " --modules-dir " + test::module_dir()); }

std::string slurp(const std::string& path) { return test::read_text(path); }

}   // namespace

// ---- anonymous dims -------------------------------------------------------------

TEST(OnnxAnonymousDims, WhatExportersWriteForUnknown_NamesNothing) {
    for (const char* p : {"", "?", "unk__0", "unk__1", "unk__12345"}) EXPECT_TRUE(di::is_anonymous_dim_param(p)) << p;
    for (const char* p : {"N", "batch", "unk__", "unk__1a", "unk_1", "unk__-1", "??", "UNK__1", " "})
        EXPECT_FALSE(di::is_anonymous_dim_param(p)) << p;
}

TEST(OnnxAnonymousDims, ImageClassifierInput_MinusOneThreeQuestionQuestion_RunsWithUnequalDims) {
    TempDir dir;
    const std::string path = save(dir, relu_model({{"image", {value(-1), value(3), param("?"), param("?")}}}, {"y"}));
    const di::OnnxModel model = di::load_model(path);
    ASSERT_EQ(model.inputs.size(), 1u);
    EXPECT_EQ(model.inputs[0].shape.to_string(), "[?,3,?,?]");
    EXPECT_EQ(model.inputs[0].dim_params, (std::vector<std::string>(4, "")));
    run_relus(path, {{"image", Shape{1, 3, 48, 192}}});
    run_relus(path, {{"image", Shape{2, 3, 7, 5}}});
}

TEST(OnnxAnonymousDims, EmptyUnkAndMissingDims_AreEachTheirOwnUnknown) {
    TempDir dir;
    const std::string path = save(dir, relu_model({{"A", {param(""), param("")}},
                                                   {"B", {param("unk__1"), param("unk__2")}},
                                                   {"C", {param("unk__7"), param("unk__7")}},
                                                   {"D", {neither(), neither()}}},
                                                  {"ya", "yb", "yc", "yd"}));
    run_relus(path, {{"A", Shape{2, 5}}, {"B", Shape{3, 7}}, {"C", Shape{4, 1}}, {"D", Shape{6, 2}}});
}

TEST(OnnxAnonymousDims, QuestionMarksOfTwoInputs_AreNotTiedToEachOther) {
    TempDir dir;
    const std::string path = save(dir, concat_model({param("?"), value(3)}, {param("?"), value(3)}, 0));
    const di::OnnxModel model = di::load_model(path);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, path);
    const HostTensor a = test::random_tensor(DataType::f32, Shape{2, 3}, 1);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{5, 3}, 2);
    run.set_input("A", a);
    run.set_input("B", b);
    run.infer();
    const HostTensor y = run.output(0);
    ASSERT_EQ(y.shape(), (Shape{7, 3}));
    for (size_t i = 0; i < a.count(); ++i) EXPECT_EQ(y.as<float>()[i], a.as<float>()[i]);
    for (size_t i = 0; i < b.count(); ++i) EXPECT_EQ(y.as<float>()[a.count() + i], b.as<float>()[i]);
}

TEST(OnnxAnonymousDims, ARealDimParam_StillTiesTheInputsThatShareIt) {
    TempDir dir;
    // A [N, ?] and B [N, ?] joined on axis 1: N must agree, the '?' need not.
    const std::string path = save(dir, concat_model({param("N"), param("?")}, {param("N"), param("?")}, 1));
    const di::OnnxModel model = di::load_model(path);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, path);
    run.set_input("A", test::random_tensor(DataType::f32, Shape{2, 3}, 1));
    run.set_input("B", test::random_tensor(DataType::f32, Shape{2, 5}, 2));
    run.infer();
    EXPECT_EQ(run.output(0).shape(), (Shape{2, 8}));
    run.set_input("A", test::random_tensor(DataType::f32, Shape{2, 3}, 3));
    const std::string e = error_of([&] { run.set_input("B", test::random_tensor(DataType::f32, Shape{4, 3}, 4)); });
    for (const char* part : {"'A'", "'B'", "dim_param 'N'", "model.onnx"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // `dynrt run`: the schedule names both inputs and the symbol too.
    const Proc p = dynrt_cli("run " + path + " --device cpu --shapes \"A=[2,3];B=[4,3]\"");
    EXPECT_EQ(p.code, 1) << p.out;
    for (const char* part : {"input 'B'", "input 'A'", "symbol 'N'"})
        EXPECT_NE(p.out.find(part), std::string::npos) << part << ": " << p.out;
}

// ---- schedule symbols of `dynrt run MODEL.onnx` ------------------------------------

TEST(OnnxModelSymbols, AnonymousDimsGetSymbolsOfTheirOwn_AndRunWithUnequalDims) {
    TempDir dir;
    const std::string path = save(dir, relu_model({{"image", {value(-1), value(3), param("?"), param("?")}},
                                                   {"tokens", {param("unk__3"), neither()}}},
                                                  {"y", "z"}));
    const pipeline::ModelGraph mg = pipeline::load_model_graph(path, test::registry());
    ASSERT_EQ(mg.inputs.size(), 2u);
    std::set<std::string> symbols;
    for (const auto& in : mg.inputs)
        for (const auto& d : in.dims)
            if (d.kind == pipeline::DimSpec::Kind::symbol) {
                EXPECT_TRUE(symbols.insert(d.symbol).second) << d.symbol;
            }
    EXPECT_EQ(symbols, (std::set<std::string>{"image_0", "image_2", "image_3", "tokens_0", "tokens_1"}));

    const pipeline::Pipeline p = pipeline::load_pipeline_text(
        "model: " + path + "\nschedule:\n  - {shapes: {image: [1, 3, 48, 192], tokens: [2, 9]}}\n", "pipe.yaml",
        dir.path().string(), test::registry());
    pipeline::RunOptions opt;
    opt.device = "cpu";
    opt.keep_outputs = true;
    const pipeline::RunResult r = pipeline::run_pipeline(p, opt);
    ASSERT_EQ(r.runs.size(), 1u);
    const auto inputs = pipeline::make_inputs(p, p.runs[0], 0);
    expect_relu_of(r.runs[0].outputs.at("y"), inputs.at("image"));
    expect_relu_of(r.runs[0].outputs.at("z"), inputs.at("tokens"));

    const Proc cli = dynrt_cli("run " + path + " --device cpu --shapes \"image=[1,3,48,192];tokens=[2,9]\"");
    EXPECT_EQ(cli.code, 0) << cli.out;
}

TEST(OnnxModelSymbols, DimParamsDifferingInCharactersASymbolCannotHold_StayDistinct) {
    TempDir dir;
    // "a-b" and "a_b" are two dims; so are "x.1", "x 1" and "x_1", and a
    // dim_param named like an anonymous dim's symbol ("P_1").
    const std::string path =
        save(dir, relu_model({{"P", {param("a-b"), param("x.1"), param("?")}},
                              {"Q", {param("a_b"), param("x 1"), param("x_1"), param("P_2"), param("a-b")}}},
                             {"yp", "yq"}));
    const pipeline::ModelGraph mg = pipeline::load_model_graph(path, test::registry());
    ASSERT_EQ(mg.inputs.size(), 2u);
    const auto symbol = [&](size_t in, size_t k) { return mg.inputs[in].dims.at(k).symbol; };
    // Symbols as they are keep their names; the others take a free one.
    EXPECT_EQ(symbol(1, 0), "a_b");
    EXPECT_EQ(symbol(1, 2), "x_1");
    EXPECT_EQ(symbol(1, 3), "P_2");
    EXPECT_EQ(symbol(0, 0), symbol(1, 4));   // the same dim_param "a-b"
    std::set<std::string> distinct = {symbol(0, 0), symbol(0, 1), symbol(0, 2), symbol(1, 0),
                                      symbol(1, 1), symbol(1, 2), symbol(1, 3)};
    EXPECT_EQ(distinct.size(), 7u);
    const Proc p = dynrt_cli("run " + path + " --device cpu --shapes \"P=[2,3,4];Q=[5,6,7,8,2]\"");
    EXPECT_EQ(p.code, 0) << p.out;
    // "a-b" still ties P dim 0 with Q dim 4.
    const Proc q = dynrt_cli("run " + path + " --device cpu --shapes \"P=[2,3,4];Q=[5,6,7,8,3]\"");
    EXPECT_EQ(q.code, 1) << q.out;
    EXPECT_NE(q.out.find("symbol '" + symbol(0, 0) + "'"), std::string::npos) << q.out;
}

// ---- output names as files ---------------------------------------------------------

TEST(OnnxOutputFiles, OutputNamesThatArePaths_LandInsideTheFolderWithAnIndex) {
    TempDir dir;
    fs::create_directories(dir.path() / "a" / "b");
    const std::string absolute = dir / "abs/x";   // an output named by an absolute path
    const std::vector<std::string> names = {"../../x", absolute, "a:b", "a_b", "model/dense/BiasAdd:0", ".."};
    std::vector<std::pair<std::string, std::vector<Dim>>> inputs;
    std::string shapes;
    for (size_t k = 0; k < names.size(); ++k) {
        const std::string in = "X" + std::to_string(k);
        inputs.push_back({in, {param("?")}});
        shapes += (k ? ";" : "") + in + "=[" + std::to_string(k + 1) + "]";   // output k holds k + 1 values
    }
    const std::string path = save(dir, relu_model(inputs, names), "a/b/model.onnx");
    const std::string out = dir / "a/b/out";
    for (int round = 0; round < 2; ++round) {   // the second replaces run_0 in place
        const Proc p = dynrt_cli("run " + path + " --device cpu --shapes \"" + shapes + "\" --save-outputs " + out);
        ASSERT_EQ(p.code, 0) << p.out;
    }
    // Every file written lies inside the folder.
    for (const auto& e : fs::recursive_directory_iterator(dir.path())) {
        if (!e.is_regular_file()) continue;
        const std::string f = e.path().string();
        if (f == path) continue;
        EXPECT_EQ(f.rfind(out + "/run_0/", 0), 0u) << f;
    }
    // index.json names each output's file; the files are distinct and hold
    // that output.
    const std::string index = slurp(out + "/run_0/index.json");
    std::set<std::string> files;
    for (size_t k = 0; k < names.size(); ++k) {
        const std::string key = "{\"name\": " + pipeline::json_quote(names[k]) + ", \"file\": \"";
        const size_t at = index.find(key);
        ASSERT_NE(at, std::string::npos) << key << "\n" << index;
        const size_t from = at + key.size();
        const std::string file = index.substr(from, index.find('"', from) - from);
        EXPECT_TRUE(files.insert(file).second) << file;
        EXPECT_EQ(fs::path(file).filename().string(), file);
        const HostTensor t = pipeline::read_npy(out + "/run_0/" + file);
        EXPECT_EQ(t.shape(), (Shape{static_cast<int64_t>(k + 1)})) << names[k] << " -> " << file;
    }
    EXPECT_EQ(std::distance(fs::directory_iterator(out + "/run_0"), fs::directory_iterator()),
              static_cast<std::ptrdiff_t>(names.size() + 1));
    // A name that is a file name already keeps it; the clash takes a suffix.
    EXPECT_TRUE(files.count("a_b.npy"));
    EXPECT_TRUE(files.count("a_b_2.npy"));
    EXPECT_TRUE(files.count("model_dense_BiasAdd_0.npy"));
}

#else

TEST(OnnxAnonymousDims, SkippedWithoutOnnx) { GTEST_SKIP() << "built without ONNX support"; }

#endif
