// The embedding API (api/include/dynrt/dynrt.hpp): models of tests/models
// against their reference outputs, shapes changing on one request, two threads
// on one model, a YAML pipeline, and every bad input a dynrt::Error naming the
// model file and what is wrong with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "dynrt/dynrt.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::error_of;

std::string model_path(const std::string& model) {
    return std::string(DYNRT_SOURCE_DIR) + "/tests/models/" + model + "/model.onnx";
}

struct DataSet {
    std::vector<HostTensor> inputs, outputs;
};

DataSet data_set(const std::string& model, int k) {
    const std::string dir =
        std::string(DYNRT_SOURCE_DIR) + "/tests/models/" + model + "/test_data_set_" + std::to_string(k) + "/";
    DataSet d;
    for (int i = 0; std::ifstream(dir + "input_" + std::to_string(i) + ".pb").good(); ++i)
        d.inputs.push_back(load_tensor(dir + "input_" + std::to_string(i) + ".pb"));
    for (int i = 0; std::ifstream(dir + "output_" + std::to_string(i) + ".pb").good(); ++i)
        d.outputs.push_back(load_tensor(dir + "output_" + std::to_string(i) + ".pb"));
    return d;
}

ModelOptions on_cpu() {
    ModelOptions o;
    o.device = "cpu";
    return o;
}

// Sets the data set's inputs (through the raw-pointer form, or as
// HostTensors), runs, and returns the first mismatch with its outputs (""
// when all match).
std::string run_and_compare(const Model& model, Request& request, const DataSet& d, bool as_tensors = false) {
    for (size_t i = 0; i < d.inputs.size(); ++i) {
        if (as_tensors) request.set_input(model.inputs()[i].name, d.inputs[i]);
        else request.set_input(model.inputs()[i].name, d.inputs[i].dtype(), d.inputs[i].shape(), d.inputs[i].data());
    }
    request.run();
    if (d.outputs.size() != model.outputs().size()) return "output count";
    for (size_t k = 0; k < d.outputs.size(); ++k) {
        const HostTensor& got = request.output(model.outputs()[k].name);
        const HostTensor& want = d.outputs[k];
        if (got.dtype() != want.dtype() || got.shape() != want.shape())
            return model.outputs()[k].name + ": " + got.shape().to_string() + " vs " + want.shape().to_string();
        for (size_t e = 0; e < want.count(); ++e) {
            const double g = got.get_as_double(e), w = want.get_as_double(e);
            if (!(std::fabs(g - w) <= 1e-4 + 1e-3 * std::fabs(w)))
                return model.outputs()[k].name + "[" + std::to_string(e) + "] = " + std::to_string(g) + ", want " +
                       std::to_string(w);
        }
    }
    return "";
}

std::string dims_of(const TensorInfo& t) { return t.name + " " + to_string(t.dtype) + " " + t.shape_text(); }

TEST(Api, InputsAndOutputs_NameTheirDynamicDims) {
    const Model cnn(model_path("cnn"), on_cpu());
    ASSERT_EQ(cnn.inputs().size(), 1u);
    EXPECT_EQ(dims_of(cnn.inputs()[0]), "image f32 [batch,3,height,width]");
    ASSERT_EQ(cnn.outputs().size(), 1u);
    EXPECT_EQ(dims_of(cnn.outputs()[0]), "logits f32 [batch,10]");
    EXPECT_EQ(cnn.device(), "cpu");
    const Model encoder(model_path("encoder"), on_cpu());
    ASSERT_EQ(encoder.inputs().size(), 2u);
    EXPECT_EQ(dims_of(encoder.inputs()[1]), "attention_mask i64 [batch,sequence]");
    EXPECT_EQ(dims_of(encoder.outputs()[0]), "last_hidden_state f32 [batch,sequence,32]");
}

TEST(Api, EveryTestModel_MatchesItsReference) {
    for (const char* name : {"cnn", "encoder", "decoder_prefill", "audio"}) {
        const Model model(model_path(name), on_cpu());
        Request request = model.create_request();
        EXPECT_EQ(run_and_compare(model, request, data_set(name, 0)), "") << name;
    }
}

TEST(Api, ShapesChangeOnOneRequest_EachRunMatches) {
    const Model model(model_path("encoder"), on_cpu());
    Request request = model.create_request();
    std::vector<Shape> shapes;
    int n = 0;
    for (int k : {0, 1, 2, 0, 2}) {
        const DataSet d = data_set("encoder", k);
        shapes.push_back(d.inputs[0].shape());
        EXPECT_EQ(run_and_compare(model, request, d, ++n % 2 == 0), "") << "data set " << k;
    }
    std::sort(shapes.begin(), shapes.end());
    EXPECT_EQ(std::unique(shapes.begin(), shapes.end()) - shapes.begin(), 3);   // the sets do differ
}

TEST(Api, TwoThreadsOnOneModel_BothMatch) {
    const Model model(model_path("encoder"), on_cpu());
    const DataSet sets[] = {data_set("encoder", 0), data_set("encoder", 1), data_set("encoder", 2)};
    std::string failures[2];
    auto work = [&](int t) {
        try {
            Request request = model.create_request();
            for (int i = 0; i < 12 && failures[t].empty(); ++i)
                failures[t] = run_and_compare(model, request, sets[(i + t) % 3]);
        } catch (const std::exception& e) {
            failures[t] = e.what();
        }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    EXPECT_EQ(failures[0], "");
    EXPECT_EQ(failures[1], "");
}

TEST(Api, SetInput_CopiesTheData) {
    const Model model(model_path("cnn"), on_cpu());
    Request request = model.create_request();
    const DataSet d = data_set("cnn", 0);
    std::vector<uint8_t> buffer(d.inputs[0].bytes());
    std::memcpy(buffer.data(), d.inputs[0].data(), buffer.size());
    request.set_input("image", DataType::f32, d.inputs[0].shape(), buffer.data());
    std::fill(buffer.begin(), buffer.end(), 0);   // after set_input: the request has its own copy
    request.run();
    const HostTensor& y = request.output("logits");
    ASSERT_EQ(y.shape(), d.outputs[0].shape());
    for (size_t e = 0; e < y.count(); ++e) EXPECT_NEAR(y.as<float>()[e], d.outputs[0].as<float>()[e], 1e-4);
    // output(index) and output(name) are the same request-owned tensor.
    EXPECT_EQ(&request.output(0), &y);
}

TEST(Api, Request_OutlivesItsModel) {
    std::optional<Request> request;
    {
        const Model model(model_path("cnn"), on_cpu());
        request.emplace(model.create_request());
    }
    const DataSet d = data_set("cnn", 1);
    request->set_input("image", d.inputs[0]);
    request->run();
    const HostTensor& y = request->output("logits");
    ASSERT_EQ(y.shape(), d.outputs[0].shape());
    for (size_t e = 0; e < y.count(); ++e) EXPECT_NEAR(y.as<float>()[e], d.outputs[0].as<float>()[e], 1e-4);
}

TEST(Api, ProfiledRuns_TimeEveryOpNode) {
    const Model model(model_path("encoder"), on_cpu());
    Request request = model.create_request();
    EXPECT_EQ(run_and_compare(model, request, data_set("encoder", 0)), "");
    EXPECT_TRUE(request.last_run().nodes.empty());
    EXPECT_GT(request.last_run().ms, 0.0);
    request.set_profiling(true);
    request.run();
    const RunTiming t = request.last_run();
    double sum = 0;
    size_t ran = 0;
    for (const NodeTiming& n : t.nodes) {
        EXPECT_NE(n.op.front(), '<') << n.node;   // op nodes only
        sum += n.ms;
        if (n.impl.empty() || n.impl == "fused" || n.impl == "view") continue;
        ++ran;
        EXPECT_GT(n.ms, 0.0) << n.node;
        EXPECT_EQ(n.device_ms, 0.0) << n.node;   // the cpu has no device clock
    }
    EXPECT_GT(ran, 0u);
    EXPECT_LE(sum, t.ms);
    request.set_profiling(false);
    request.run();
    EXPECT_TRUE(request.last_run().nodes.empty());
}

TEST(Api, YamlPipeline_RunsWithChangingShapes) {
    test::ScratchDir dir("dynrt_api_test");
    std::ofstream(dir / "relu.yaml") << "name: relu\n"
                                        "inputs:\n  x: {dtype: f32, shape: [n, 4]}\n"
                                        "nodes:\n  - {name: y, op: activation, inputs: [x], attrs: {func: relu}}\n"
                                        "outputs: [y]\n"
                                        "schedule:\n  - {n: 1}\n";
    const Model model(dir / "relu.yaml", on_cpu());
    EXPECT_EQ(dims_of(model.inputs()[0]), "x f32 [n,4]");
    Request request = model.create_request();
    for (int64_t n : {3, 1, 7}) {
        std::vector<float> x(static_cast<size_t>(n * 4));
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
        request.set_input("x", DataType::f32, Shape{n, 4}, x.data());
        request.run();
        const HostTensor& y = request.output("y");
        ASSERT_EQ(y.shape(), (Shape{n, 4}));
        for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y.as<float>()[i], std::max(x[i], 0.0f));
    }
}

TEST(Api, PipelineState_KeptAcrossRunsUntilReset) {
    const Model model(std::string(DYNRT_SOURCE_DIR) + "/configs/llm_decode_kv.yaml", on_cpu());
    Request request = model.create_request();
    auto step = [&](int64_t id) {
        request.set_input("ids", DataType::i64, Shape{1, 1}, &id);
        request.run();
        const HostTensor& y = request.output("out");
        return std::vector<float>(y.as<float>(), y.as<float>() + y.count());
    };
    const std::vector<float> first = step(3);
    step(5);
    EXPECT_NE(step(3), first);   // the cache holds two tokens now
    request.reset_state();
    EXPECT_EQ(step(3), first);
}

// ModelOptions::cache_dir is where the model's OpenCL programs go,
// ModelOptions::profiling gives the kernels' time, and the environment is as
// it was afterwards. (ApiOcl: on PoCL's device it builds
// kernels, which the sanitizer run leaves out, as it does the other *Ocl tests.)
TEST(ApiOcl, CacheDirAndProfiling_HoldTheProgramsAndKernelTimes) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL device";
    test::ScratchDir dir("dynrt_api_test");
    const char* before = std::getenv("DYNRT_CACHE_DIR");
    const std::string before_value = before ? before : "";
    // PoCL keeps its own cache unless told to use dynrt's too.
    const char* binary = std::getenv("DYNRT_OCL_BINARY_CACHE");
    const std::string binary_value = binary ? binary : "";
    ::setenv("DYNRT_OCL_BINARY_CACHE", "on", 1);
    ModelOptions o;
    o.device = "ocl";
    o.cache_dir = (dir.path() / "cache").string();
    o.profiling = true;
    const bool profile_env = std::getenv("DYNRT_OCL_PROFILE") != nullptr;
    {
        const Model model(model_path("cnn"), o);
        EXPECT_EQ(model.device(), "ocl");
        Request request = model.create_request();
        request.set_profiling(true);
        EXPECT_EQ(run_and_compare(model, request, data_set("cnn", 0)), "");
        // ModelOptions::profiling: the kernels' device time per node.
        double device_ms = 0;
        for (const NodeTiming& n : request.last_run().nodes) device_ms += n.device_ms;
        EXPECT_GT(device_ms, 0.0);
    }
    EXPECT_EQ(std::getenv("DYNRT_OCL_PROFILE") != nullptr, profile_env);
    if (binary) ::setenv("DYNRT_OCL_BINARY_CACHE", binary_value.c_str(), 1);
    else ::unsetenv("DYNRT_OCL_BINARY_CACHE");
    size_t programs = 0;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(dir.path() / "cache" / "ocl", ec))
        programs += f.path().extension() == ".clbin";
    EXPECT_GT(programs, 0u);
    const char* after = std::getenv("DYNRT_CACHE_DIR");
    EXPECT_EQ(after != nullptr, before != nullptr);
    if (after && before) {
        EXPECT_EQ(std::string(after), before_value);
    }
}

// Every error names the model file and says what is wrong.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
    const std::string msg = error_of(f);
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
}

TEST(Api, BadInputs_AreErrorsNamingTheModelAndTheInput) {
    const std::string path = model_path("encoder");
    const Model model(path, on_cpu());
    Request request = model.create_request();
    const std::vector<int64_t> ids(6, 5);
    expect_error(
        [&] {
            request.set_input("input_idz", DataType::i64, Shape{1, 6}, ids.data());
        },
        {path + ": ", "the model has no input 'input_idz'", "did you mean 'input_ids'",
         "its inputs: input_ids, attention_mask"});
    expect_error(
        [&] {
            request.set_input("input_ids", DataType::f32, Shape{1, 6}, ids.data());
        },
        {path + ": ", "input 'input_ids': holds f32, the model declares i64"});
    expect_error([&] { request.set_input("input_ids", DataType::i64, Shape{6}, ids.data()); },
                 {"input 'input_ids': shape [6] does not fit the declared [batch,sequence] (rank 1 vs 2)"});
    expect_error([&] { request.set_input("input_ids", DataType::i64, Shape{1, -6}, ids.data()); }, {"negative"});
    expect_error([&] { request.set_input("input_ids", DataType::i64, Shape{1, 6}, nullptr); }, {"null pointer"});
    expect_error([&] { request.output("last_hidden_state"); }, {"has not run"});
    // Inputs that share a dim must agree on it; one never set is named.
    request.set_input("input_ids", DataType::i64, Shape{1, 6}, ids.data());
    expect_error([&] { request.run(); }, {"input 'attention_mask' was not set"});
    request.set_input("attention_mask", DataType::i64, Shape{1, 3}, ids.data());
    expect_error([&] { request.run(); }, {path + ": ", "sets 'sequence' to", "but input"});
    request.set_input("attention_mask", DataType::i64, Shape{1, 6}, ids.data());
    request.run();
    expect_error([&] { request.output("pooledd"); }, {"no output 'pooledd'", "did you mean 'pooled'"});
    expect_error([&] { request.output(7); }, {"output 7 of 2 outputs"});
}

TEST(Api, BadModels_AreErrors) {
    test::ScratchDir dir("dynrt_api_test");
    const std::string missing = dir / "missing.onnx";
    expect_error([&] { Model m(missing); }, {missing + ": ", "cannot open"});
    ModelOptions o = on_cpu();
    o.device = "tpu";
    expect_error([&] { Model m(model_path("cnn"), o); }, {"field 'device'", "unknown device 'tpu'", "available:"});
    o = on_cpu();
    o.passes = "-nosuchpass";
    expect_error([&] { Model m(model_path("cnn"), o); }, {"nosuchpass"});
    o = on_cpu();
    o.module_dirs = {dir.path().string()};
    expect_error([&] { Model m(model_path("cnn"), o); }, {"no module loaded from " + dir.path().string()});
    std::ofstream(dir / "bad.yaml") << "name: bad\ninputs:\n  x: {dtype: f32, shape: [2]}\nnodes:\n"
                                       "  - {name: y, op: activation, inputs: [x], attrs: {func: nosuchfunc}}\n"
                                       "outputs: [y]\n";
    expect_error([&] { Model m(dir / "bad.yaml", on_cpu()); }, {dir / "bad.yaml", "node 'y'", "nosuchfunc"});
}

}   // namespace
}   // namespace dynrt
