// A model first (docs/onnx.md, "Running a model"): `dynrt info MODEL.onnx`
// (text and --json), `dynrt run MODEL.onnx` without --shapes (exit 2 with
// the inputs and an example that runs), --shapes by dim name and mixed with
// per-input shapes, unknown names (exit 2), --input one file per run or a
// folder, --inputs DIR/run_<k>/, .pb TensorProto files, and errors that name
// the model and the input instead of a generated file.
#include <gtest/gtest.h>

#if defined(DYNRT_HAVE_ONNX)

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "model_cli.hpp"
#include "onnx_import.hpp"
#include "pipeline.hpp"
#include "tensor_compare.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace fs = std::filesystem;
namespace ox = ::onnx;

namespace {

using TempDir = test::ScratchDir;

// A declared dim: a value (>= 0), a dim_param, or "?" (anonymous).
struct Dim {
    int64_t value = -1;
    std::string param;
};

void add_float(ox::ValueInfoProto* v, const std::string& name, const std::vector<Dim>& dims,
               int type = ox::TensorProto::FLOAT) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (const Dim& d : dims) {
        auto* dim = shape->add_dim();
        if (d.value >= 0) dim->set_dim_value(d.value);
        else dim->set_dim_param(d.param);
    }
}

// Each input -> Relu -> its output ("x" -> "relu_x"), from a producer the
// info must show.
std::string save_relus(const TempDir& dir, const std::vector<std::pair<std::string, std::vector<Dim>>>& inputs,
                       const std::string& file = "model.onnx") {
    ox::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("model_cli_test");
    m.set_producer_version("1.5");
    m.add_opset_import()->set_version(13);
    m.mutable_graph()->set_name("relus");
    for (const auto& [name, dims] : inputs) {
        auto* n = m.mutable_graph()->add_node();
        n->set_op_type("Relu");
        n->set_name("relu_" + name);
        n->add_input(name);
        n->add_output("relu_" + name);
        add_float(m.mutable_graph()->add_input(), name, dims);
        add_float(m.mutable_graph()->add_output(), "relu_" + name, dims);
    }
    const std::string path = dir / file;
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return path;
}

// x [batch, seq, 4] and w [batch, ?]: dims by name, a static dim and an
// anonymous one (symbol w_1).
std::string save_model(const TempDir& dir) {
    return save_relus(dir, {{"x", {{-1, "batch"}, {-1, "seq"}, {4, ""}}}, {"w", {{-1, "batch"}, {-1, "?"}}}});
}

void write_pb(const std::string& path, const HostTensor& t) {
    ox::TensorProto p;
    p.set_data_type(ox::TensorProto::FLOAT);
    for (int64_t d : t.shape()) p.add_dims(d);
    for (size_t i = 0; i < t.count(); ++i) p.add_float_data(t.as<float>()[i]);
    std::ofstream(path, std::ios::binary) << p.SerializeAsString();
}

using Proc = test::CliResult;

Proc dynrt_cli(const std::string& args) { return test::run_dynrt(args + " --modules-dir " + test::module_dir()); }

void expect_has(const std::string& text, const std::vector<std::string>& parts) {
    for (const std::string& part : parts)
        EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' in:\n" << text;
}

void expect_relu_of(const HostTensor& y, const HostTensor& x) {
    ASSERT_EQ(y.shape(), x.shape());
    for (size_t i = 0; i < x.count(); ++i) ASSERT_EQ(y.as<float>()[i], std::max(x.as<float>()[i], 0.0f)) << i;
}

// No "file:line:" location: the generated pipeline text used to be named
// ("model.onnx:3:5: ... schedule entry 0").
void expect_no_generated_location(const std::string& out, const std::string& model) {
    EXPECT_FALSE(std::regex_search(out, std::regex(model + ":[0-9]"))) << out;
    EXPECT_EQ(out.find("schedule entry"), std::string::npos) << out;
}

}   // namespace

// ---- dynrt info ----------------------------------------------------------------

TEST(ModelInfo, Text_ListsInputsWithTheirDimNamesOpsAndAnExample) {
    TempDir dir;
    const std::string model = save_model(dir);
    const Proc p = dynrt_cli("info " + model);
    ASSERT_EQ(p.code, 0) << p.out;
    const std::string relu = dynrt::onnx::target_op(*test::registry(), "Relu");
    ASSERT_FALSE(relu.empty());
    expect_has(p.out, {"ir_version 8", "producer model_cli_test 1.5", "graph 'relus'", "opsets: ai.onnx 13",
                       "x  f32  [batch, seq, 4]", "w  f32  [batch, w_1]", "batch  x dim 0, w dim 0", "seq    x dim 1",
                       "w_1    w dim 1 (anonymous in the model)", "relu_x  f32  [batch, seq, 4]",
                       "relu_w  f32  [batch, ?]", "nodes: 2", "Relu  2     -> " + relu + " (cpu",
                       "initializers: 0 (0 bytes)", "unsupported on this build: nothing",
                       "example: dynrt run " + model + " --shapes \"batch=1;seq=16;w_1=16\""});
}

TEST(ModelInfo, Json_HasTheFieldsOfEveryPart) {
    TempDir dir;
    const std::string model = save_model(dir);
    const Proc p = dynrt_cli("info " + model + " --json");
    ASSERT_EQ(p.code, 0) << p.out;
    expect_has(p.out, {"\"ir_version\": 8", "\"producer\": {\"name\": \"model_cli_test\", \"version\": \"1.5\"}",
                       "\"opsets\": {\"ai.onnx\": 13}",
                       "{\"name\": \"x\", \"onnx_name\": \"x\", \"kind\": \"tensor\", \"dtype\": \"f32\", \"dims\": "
                       "[{\"symbol\": \"batch\", \"dim_param\": \"batch\", \"anonymous\": false}, {\"symbol\": "
                       "\"seq\", \"dim_param\": \"seq\", \"anonymous\": false}, {\"value\": 4}]}",
                       "{\"symbol\": \"w_1\", \"dim_param\": \"\", \"anonymous\": true}",
                       "{\"name\": \"batch\", \"dim_param\": \"\", \"anonymous\": false, \"example\": 1, \"dims\": "
                       "[\"x dim 0\", \"w dim 0\"]}",
                       "\"example_shapes\": \"batch=1;seq=16;w_1=16\"", "\"nodes\": 2",
                       "{\"op_type\": \"Relu\", \"domain\": \"ai.onnx\", \"nodes\": 2, \"import_rule\": true",
                       "\"initializers\": {\"count\": 0, \"bytes\": 0}", "\"imports\": true",
                       "\"cpu\": {\"every_node_has_an_impl\": true", "\"unsupported\": []"});
    EXPECT_EQ(std::count(p.out.begin(), p.out.end(), '{'), std::count(p.out.begin(), p.out.end(), '}'));
}

TEST(ModelInfo, ExampleValues_FollowTheDimNames_AndAMaskGetsARange) {
    TempDir dir;
    ox::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    const std::vector<std::pair<std::string, std::vector<Dim>>> inputs = {
        {"attention_mask", {{-1, "batch_size"}, {-1, "total_sequence"}}},
        {"past_key", {{-1, "batch_size"}, {-1, "past_sequence"}}},
        {"audio", {{-1, "batch_size"}, {-1, "num_samples"}}},
        {"image", {{-1, "?"}, {3, ""}, {-1, "?"}}}};
    for (const auto& [name, dims] : inputs) {
        auto* n = m.mutable_graph()->add_node();
        n->set_op_type("Identity");
        n->add_input(name);
        n->add_output("out_" + name);
        add_float(m.mutable_graph()->add_input(), name, dims,
                  name == "attention_mask" ? ox::TensorProto::INT64 : ox::TensorProto::FLOAT);
        add_float(m.mutable_graph()->add_output(), "out_" + name, dims,
                  name == "attention_mask" ? ox::TensorProto::INT64 : ox::TensorProto::FLOAT);
    }
    const std::string model = dir / "names.onnx";
    std::ofstream(model, std::ios::binary) << m.SerializeAsString();
    const Proc p = dynrt_cli("info " + model);
    ASSERT_EQ(p.code, 0) << p.out;
    // Batch 1 (by name, or an anonymous first dim), past 0, samples 1600,
    // others 16; an integer mask input gets 0..2.
    expect_has(p.out, {"example: dynrt run " + model +
                       " --shapes \"batch_size=1;total_sequence=16;past_sequence=0;num_samples=1600;image_0=1;"
                       "image_2=16\" --input-range attention_mask=0..2"});
}

TEST(ModelInfo, UnmappedOp_IsListedAsUnsupportedWithWhy_AndAnUnreadableFileExits1) {
    TempDir dir;
    ox::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* other = m.add_opset_import();
    other->set_domain("com.example");
    other->set_version(1);
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type("Frob");
    n->set_domain("com.example");
    n->add_input("x");
    n->add_output("y");
    add_float(m.mutable_graph()->add_input(), "x", {{2, ""}});
    add_float(m.mutable_graph()->add_output(), "y", {{2, ""}});
    const std::string model = dir / "frob.onnx";
    std::ofstream(model, std::ios::binary) << m.SerializeAsString();
    Proc p = dynrt_cli("info " + model);
    EXPECT_EQ(p.code, 0) << p.out;
    expect_has(p.out, {"com.example.Frob  1     no import rule", "unsupported on this build:",
                       "com.example.Frob (1 node): no loaded module maps this ONNX op (domain 'com.example')",
                       "the import: ", "unknown ONNX op 'com.example.Frob'", "opsets: ai.onnx 13 com.example 1"});
    p = dynrt_cli("info " + model + " --json");
    EXPECT_EQ(p.code, 0) << p.out;
    expect_has(p.out, {"\"import_rule\": false", "\"imports\": false", "\"devices\": {}"});
    std::ofstream(dir / "junk.onnx") << "not a model";
    p = dynrt_cli("info " + (dir / "junk.onnx"));
    EXPECT_EQ(p.code, 1) << p.out;
    expect_has(p.out, {dir / "junk.onnx", "not a serialized onnx.ModelProto"});
    EXPECT_EQ(dynrt_cli("info").code, 2);
}

// ---- dynrt run without --shapes ------------------------------------------------

TEST(ModelRun, DynamicDimsWithoutShapes_Exit2WithTheInputsAndAnExampleThatRuns) {
    TempDir dir;
    const std::string model = save_model(dir);
    const Proc p = dynrt_cli("run " + model + " --device cpu");
    EXPECT_EQ(p.code, 2) << p.out;
    const std::string example = "--shapes \"batch=1;seq=16;w_1=16\"";
    expect_has(p.out, {model + ": the model has dynamic dims", "x  f32  [batch, seq, 4]", "w  f32  [batch, w_1]",
                       "example: dynrt run " + model + " " + example});
    // The example is a command that runs.
    const Proc ok = dynrt_cli("run " + model + " --device cpu " + example + " --save-outputs " + (dir / "out"));
    ASSERT_EQ(ok.code, 0) << ok.out;
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_0/relu_x.npy").shape(), (Shape{1, 16, 4}));
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_0/relu_w.npy").shape(), (Shape{1, 16}));
    // Every dim static: one run, no --shapes needed.
    const std::string fixed = save_relus(dir, {{"s", {{2, ""}, {3, ""}}}}, "static.onnx");
    const Proc st = dynrt_cli("run " + fixed + " --device cpu --save-outputs " + (dir / "st"));
    ASSERT_EQ(st.code, 0) << st.out;
    EXPECT_EQ(pipeline::read_npy(dir / "st/run_0/relu_s.npy").shape(), (Shape{2, 3}));
}

// ---- --shapes by dim name ------------------------------------------------------

TEST(ModelRun, ShapesByDimName_BindEveryInputDimOfThatName_AndMixWithInputShapes) {
    TempDir dir;
    const std::string model = save_model(dir);
    const pipeline::Pipeline p = pipeline::load_model_run(
        {model, {"batch=2;seq=5;w_1=3", "batch=3;seq=1;w=[3,7]", "x=[1,2,4];w_1=9"}, {}, "", {}}, test::registry());
    ASSERT_EQ(p.runs.size(), 3u);
    EXPECT_EQ(p.runs[0].shapes.at("x"), (Shape{2, 5, 4}));
    EXPECT_EQ(p.runs[0].shapes.at("w"), (Shape{2, 3}));
    EXPECT_EQ(p.runs[1].shapes.at("x"), (Shape{3, 1, 4}));
    EXPECT_EQ(p.runs[1].shapes.at("w"), (Shape{3, 7}));
    EXPECT_EQ(p.runs[2].shapes.at("w"), (Shape{1, 9}));   // batch from x's shape
    EXPECT_EQ(p.runs[2].symbols.at("batch"), 1);
    // Through the CLI, the outputs have those shapes.
    const Proc ok =
        dynrt_cli("run " + model + " --device cpu --shapes \"batch=2;seq=5;w_1=3\" --save-outputs " + (dir / "out"));
    ASSERT_EQ(ok.code, 0) << ok.out;
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_0/relu_x.npy").shape(), (Shape{2, 5, 4}));
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_0/relu_w.npy").shape(), (Shape{2, 3}));
    // A dim given by name and through an input's shape must agree.
    const Proc clash = dynrt_cli("run " + model + " --device cpu --shapes \"batch=3;seq=2;w=[2,7]\"");
    EXPECT_EQ(clash.code, 1) << clash.out;
    expect_has(clash.out, {model + ": input 'w': run 0: --shapes gives [2,7]: it sets symbol 'batch' to 2, but "
                                   "--shapes \"batch=3;seq=2;w=[2,7]\" sets it to 3"});
}

TEST(ModelRun, NameThatIsBothAnInputAndADim_IsTheInput) {
    TempDir dir;
    // Input "n" whose first dim is dim_param "n".
    const std::string model = save_relus(dir, {{"n", {{-1, "n"}, {2, ""}}}, {"v", {{-1, "n"}}}});
    Proc p = dynrt_cli("run " + model + " --device cpu --shapes \"n=3\"");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"'n' is an input: give its shape, n=[d0,d1,...]", "an input name wins"});
    p = dynrt_cli("run " + model + " --device cpu --shapes \"n=[3,2]\" --save-outputs " + (dir / "out"));
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_0/relu_v.npy").shape(), (Shape{3}));
}

TEST(ModelRun, InputNamedAsInTheModelOrAsTheProgramNamesIt_BothWork) {
    TempDir dir;
    // tf2onnx names inputs "input_1:0"; the program calls it "input_1_0".
    const std::string model = save_relus(dir, {{"input_1:0", {{-1, "batch"}, {3, ""}}}});
    Proc p = dynrt_cli("info " + model);
    ASSERT_EQ(p.code, 0) << p.out;
    expect_has(p.out, {"input_1_0  f32  [batch, 3]  (ONNX name 'input_1:0')"});
    for (const std::string name : {"input_1:0", "input_1_0"}) {
        p = dynrt_cli("run " + model + " --device cpu --shapes \"" + name + "=[2,3]\" --save-outputs " + (dir / name));
        ASSERT_EQ(p.code, 0) << name << ": " << p.out;
        EXPECT_EQ(pipeline::read_npy(dir / (name + "/run_0/relu_input_1_0.npy")).shape(), (Shape{2, 3}));
    }
}

TEST(ModelRun, UnknownDimOrInputName_Exit2NamingItAndTheKnownOnes) {
    TempDir dir;
    const std::string model = save_model(dir);
    Proc p = dynrt_cli("run " + model + " --device cpu --shapes \"btch=1;seq=2;w_1=2\"");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"'btch' is neither an input nor a dynamic dim of the model", "did you mean 'batch'?",
                       "its inputs: x, w", "its dynamic dims: batch, seq, w_1"});
    p = dynrt_cli("run " + model + " --device cpu --shapes \"batch=1;seq=2;w_1=2\" --input y=a.npy");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"--input: the model has no input 'y'", "its inputs: x, w"});
    // A run that leaves a dim without a value names it.
    p = dynrt_cli("run " + model + " --device cpu --shapes \"batch=1;seq=2\"");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"run 0 gives no value for dim 'w_1' (input 'w' dim 1)", "example: dynrt run"});
    EXPECT_EQ(dynrt_cli("run " + model + " --shapes \"batch\"").code, 2);
    EXPECT_EQ(dynrt_cli("run " + model + " --shapes \"batch=-1;seq=1;w_1=1\"").code, 2);
}

// ---- inputs per run --------------------------------------------------------------

TEST(ModelRun, InputFilePerRun_EachRunGetsItsOwnData_NpyAndPb) {
    TempDir dir;
    const std::string model = save_model(dir);
    const HostTensor a = test::random_tensor(DataType::f32, Shape{1, 2, 4}, 1);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{2, 3, 4}, 2);
    pipeline::write_npy(dir / "a.npy", a);
    write_pb(dir / "b.pb", b);
    Proc p = dynrt_cli("run " + model + " --device cpu --input x=" + (dir / "a.npy") + "," + (dir / "b.pb") +
                       " --shapes \"w_1=2\" --save-outputs " + (dir / "out"));
    ASSERT_EQ(p.code, 0) << p.out;
    expect_relu_of(pipeline::read_npy(dir / "out/run_0/relu_x.npy"), a);
    expect_relu_of(pipeline::read_npy(dir / "out/run_1/relu_x.npy"), b);
    EXPECT_EQ(pipeline::read_npy(dir / "out/run_1/relu_w.npy").shape(), (Shape{2, 2}));   // batch from b
    // name=DIR: its files in name order, one per run.
    fs::create_directories(dir.path() / "xs");
    fs::copy_file(dir / "b.pb", dir / "xs/0.pb");
    fs::copy_file(dir / "a.npy", dir / "xs/1.npy");
    p = dynrt_cli("run " + model + " --device cpu --input x=" + (dir / "xs") + " --shapes \"w_1=2\" --save-outputs " +
                  (dir / "dir"));
    ASSERT_EQ(p.code, 0) << p.out;
    expect_relu_of(pipeline::read_npy(dir / "dir/run_0/relu_x.npy"), b);
    expect_relu_of(pipeline::read_npy(dir / "dir/run_1/relu_x.npy"), a);
    // Counts that do not fit the runs.
    p = dynrt_cli("run " + model + " --device cpu --input x=" + (dir / "a.npy") + "," + (dir / "b.pb") +
                  " --shapes \"w_1=1\" --shapes \"w_1=2\" --shapes \"w_1=3\"");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"--input x (2 files) gives 2 runs, but there are 3 runs (--shapes given 3 times)"});
}

TEST(ModelRun, InputsFolder_OneFolderPerRunAsSaveOutputsWritesThem_AndTheTestDataLayout) {
    TempDir dir;
    const std::string model = save_model(dir);
    const HostTensor x0 = test::random_tensor(DataType::f32, Shape{1, 2, 4}, 3);
    const HostTensor w0 = test::random_tensor(DataType::f32, Shape{1, 5}, 4);
    const HostTensor x1 = test::random_tensor(DataType::f32, Shape{3, 1, 4}, 5);
    const HostTensor w1 = test::random_tensor(DataType::f32, Shape{3, 2}, 6);
    fs::create_directories(dir.path() / "runs/run_0");
    fs::create_directories(dir.path() / "runs/run_1");
    pipeline::write_npy(dir / "runs/run_0/x.npy", x0);
    write_pb(dir / "runs/run_0/w.pb", w0);
    pipeline::write_npy(dir / "runs/run_1/x.npy", x1);
    pipeline::write_npy(dir / "runs/run_1/w.npy", w1);
    Proc p =
        dynrt_cli("run " + model + " --device cpu --inputs " + (dir / "runs") + " --save-outputs " + (dir / "out"));
    ASSERT_EQ(p.code, 0) << p.out;
    expect_relu_of(pipeline::read_npy(dir / "out/run_0/relu_x.npy"), x0);
    expect_relu_of(pipeline::read_npy(dir / "out/run_0/relu_w.npy"), w0);
    expect_relu_of(pipeline::read_npy(dir / "out/run_1/relu_x.npy"), x1);
    expect_relu_of(pipeline::read_npy(dir / "out/run_1/relu_w.npy"), w1);
    // The ONNX test layout: test_data_set_<k>/input_<K>.pb, outputs left alone.
    fs::create_directories(dir.path() / "sets/test_data_set_0");
    write_pb(dir / "sets/test_data_set_0/input_0.pb", x1);
    write_pb(dir / "sets/test_data_set_0/input_1.pb", w1);
    write_pb(dir / "sets/test_data_set_0/output_0.pb", x1);
    p = dynrt_cli("run " + model + " --device cpu --inputs " + (dir / "sets") + " --save-outputs " +
                  (dir / "sets_out"));
    ASSERT_EQ(p.code, 0) << p.out;
    expect_relu_of(pipeline::read_npy(dir / "sets_out/run_0/relu_w.npy"), w1);
    // A file that is no input's.
    pipeline::write_npy(dir / "runs/run_1/q.npy", w1);
    p = dynrt_cli("run " + model + " --device cpu --inputs " + (dir / "runs"));
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {"q.npy is no input's file", "the inputs: x, w"});
}

// The model corpus's data sets through --inputs: the .pb inputs of each
// test_data_set_<k> give run k, whose outputs match that set's output_<K>.pb
// (onnxruntime's) as `dynrt onnx-test` compares them (atol 1e-4).
TEST(ModelRun, InputsFolderOfTestDataSets_RunsEachSetAndMatchesItsOutputs) {
    const fs::path folder = fs::path(DYNRT_SOURCE_DIR) / "tests/models/encoder";
    if (!fs::exists(folder / "test_data_set_1/input_0.pb")) GTEST_SKIP() << "no " << folder.string();
    TempDir dir;
    const Proc p = dynrt_cli("run " + (folder / "model.onnx").string() + " --device cpu --inputs " + folder.string() +
                             " --save-outputs " + (dir / "out"));
    ASSERT_EQ(p.code, 0) << p.out;
    const dynrt::onnx::OnnxModel model = dynrt::onnx::load_model((folder / "model.onnx").string());
    size_t sets = 0;
    for (; fs::exists(folder / ("test_data_set_" + std::to_string(sets))); ++sets) {
        const fs::path set = folder / ("test_data_set_" + std::to_string(sets));
        for (size_t k = 0; k < model.outputs.size(); ++k) {
            const HostTensor want = dynrt::onnx::read_tensor((set / ("output_" + std::to_string(k) + ".pb")).string());
            const HostTensor got =
                pipeline::read_npy(dir / ("out/run_" + std::to_string(sets) + "/" + model.outputs[k].name + ".npy"));
            const tools::Comparison c = tools::compare(got, want, tools::Tolerance{1e-3, 1e-4});
            EXPECT_TRUE(c.ok) << set.string() << " output " << k << ": " << c.mismatch;
        }
    }
    EXPECT_GE(sets, 2u);
    EXPECT_FALSE(fs::exists(dir / ("out/run_" + std::to_string(sets))));
}

// ---- errors name the model and the input -------------------------------------------

TEST(ModelRun, DataThatDoesNotFit_ErrorNamesTheModelAndTheInput) {
    TempDir dir;
    const std::string model = save_model(dir);
    Proc p = dynrt_cli("run " + model + " --device cpu --shapes \"x=[2,5,3];w_1=1\"");
    EXPECT_EQ(p.code, 1) << p.out;
    expect_has(p.out, {model + ": input 'x': run 0: --shapes gives [2,5,3], which does not fit the declared [?,?,4] "
                               "at dim 2"});
    expect_no_generated_location(p.out, model);
    pipeline::write_npy(dir / "ids.npy",
                        HostTensor::from_int64(DataType::i64, Shape{1, 2, 4}, std::vector<int64_t>(8, 1)));
    p = dynrt_cli("run " + model + " --device cpu --input x=" + (dir / "ids.npy") + " --shapes \"w_1=1\"");
    EXPECT_EQ(p.code, 1) << p.out;
    expect_has(p.out, {model + ": input 'x': run 0: " + (dir / "ids.npy") + " holds i64, the model declares f32"});
    expect_no_generated_location(p.out, model);
    std::ofstream(dir / "bad.pb") << "not a tensor";
    p = dynrt_cli("run " + model + " --device cpu --input x=" + (dir / "bad.pb") + " --shapes \"w_1=1\"");
    EXPECT_EQ(p.code, 1) << p.out;
    expect_has(p.out, {model + ": input 'x': --input: " + (dir / "bad.pb") + ": not a serialized onnx.TensorProto"});
    p = dynrt_cli("run " + model + " --device cpu --shapes \"batch=1;seq=1;w_1=1\" --input-range x=5..1");
    EXPECT_EQ(p.code, 2) << p.out;
    expect_has(p.out, {model + ": --input-range: input 'x': random.high 1 must be greater than random.low 5"});
}

#else
TEST(ModelInfo, SkippedWithoutOnnx) { GTEST_SKIP() << "built without ONNX support"; }
#endif
