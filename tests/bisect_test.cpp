// The import passes (constant_folding, pattern_*) each off, and the bisect
// tool (`dynrt onnx-test DIR --bisect`) on a model whose fused path is
// broken on purpose: tests/modules/bisect_module.cpp's tm_double drops the
// post-ops fused into it, so a Relu fused into it is wrong while the fusion
// pass is on. The bisect must name the Relu's tensor and node and the pass.
#include <gtest/gtest.h>

#if defined(DYNRT_HAVE_ONNX)

#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/passes.hpp"
#include "onnx_build.hpp"
#include "onnx_import.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace fs = std::filesystem;
namespace ox = ::onnx;
using namespace dynrt::test::onnx_build;
namespace di = dynrt::onnx;

namespace {

const std::string kBisectModules = std::string(DYNRT_TEST_MODULES_DIR) + "/bisect";

using TempDir = test::ScratchDir;

// X[N,3] -> TmDouble "double" -> d -> Relu "relu" -> r -> Add(r, r) "sum" -> Y.
// The Relu's output has one reader through two inputs, so the fused chain
// ends at the Relu: its output is the first tensor the broken fusion makes
// wrong. Two data sets of different N, outputs computed here.
fs::path write_double_relu(const fs::path& dir) {
    ox::ModelProto m = empty_model();
    add_node(m, "TmDouble", {"X"}, {"d"}, "double");
    add_node(m, "Relu", {"d"}, {"r"}, "relu");
    add_node(m, "Add", {"r", "r"}, {"Y"}, "sum");
    add_symbolic_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {"N", "3"});
    add_symbolic_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {"N", "3"});
    write_proto(dir / "model.onnx", m);
    int set = 0;
    for (const std::vector<float>& x :
         {std::vector<float>{1, -2, 3, -0.5f, 0.25f, -4}, std::vector<float>{-1, 2, -3, 4, -5, 6, 0.5f, -0.75f, 1}}) {
        std::vector<float> y;
        for (float v : x) y.push_back(2 * std::max(2 * v, 0.0f));
        const int64_t n = static_cast<int64_t>(x.size() / 3);
        const fs::path ds = dir / ("test_data_set_" + std::to_string(set++));
        write_proto(ds / "input_0.pb", float_tensor({n, 3}, x));
        write_proto(ds / "output_0.pb", float_tensor({n, 3}, y));
    }
    return dir;
}

// Every in-tree module and the test module with the broken impl.
std::shared_ptr<const Registry> bisect_registry() {
    static std::shared_ptr<const Registry> r = [] {
        auto reg = std::make_shared<Registry>();
        const LoadReport rep = ModuleLoader::load_dirs(*reg, {test::module_dir(), kBisectModules});
        EXPECT_TRUE(rep.failed.empty());
        return reg;
    }();
    return r;
}

using Proc = test::CliResult;

Proc onnx_test_cli(const std::string& args) {
    return test::run_dynrt(
        "onnx-test " + args + " --modules-dir " + test::module_dir() + " --modules-dir " + kBisectModules,
        "env -u DYNRT_PASSES ");
}

}   // namespace

// ---- the injected bug itself -------------------------------------------------------

// onnx-test (no bisect) sees the wrong outputs with fusion on and right ones
// with it off: the test module's bug is what the bisect tests look for.
TEST(BisectModule, BrokenFusedPath_FailsOnlyWithFusionOn) {
    TempDir dir;
    write_double_relu(dir.path());
    di::TestOptions opt;
    di::TestReport r = di::run_tests(bisect_registry(), {dir.path().string()}, opt);
    EXPECT_EQ(r.failed, 2u);
    opt.passes = PassSet::parse("-fusion");
    r = di::run_tests(bisect_registry(), {dir.path().string()}, opt);
    EXPECT_EQ(r.passed, 2u);
    EXPECT_EQ(r.failed, 0u);
}

// ---- bisect ------------------------------------------------------------------------

TEST(Bisect, BrokenFusion_NamesTheFusedConsumerAndTheFusionPass) {
    TempDir dir;
    write_double_relu(dir.path());
    const di::BisectReport r = di::bisect(bisect_registry(), dir.path().string(), di::BisectOptions{});
    EXPECT_TRUE(r.failed());
    EXPECT_TRUE(r.reference_note.empty()) << r.reference_note;
    ASSERT_EQ(r.sets.size(), 4u);   // two data sets, static and dynamic
    for (const di::BisectSet& s : r.sets) {
        SCOPED_TRACE(s.data_set + " " + s.mode);
        ASSERT_TRUE(s.error.empty()) << s.error;
        EXPECT_FALSE(s.outputs_match);
        EXPECT_TRUE(s.reference_matches) << s.reference_detail;
        ASSERT_TRUE(s.diff.has_value());
        EXPECT_EQ(s.diff->tensor, "r");
        EXPECT_EQ(s.diff->node, "relu");
        EXPECT_EQ(s.diff->op_type, "Relu");
        EXPECT_EQ(s.diff->program_node, "relu");
        EXPECT_EQ(s.diff->impl, "fused");
        EXPECT_GT(s.diff->max_abs, 0.5);
        ASSERT_EQ(s.diff->inputs.size(), 1u);
        EXPECT_EQ(s.diff->inputs[0].rfind("'d' (no value of its own: fusion: computed inside 'double'", 0), 0u)
            << s.diff->inputs[0];
        // X is not a node output; d has no value of its own (fused).
        EXPECT_EQ(s.compared, 1u);
        ASSERT_EQ(s.unobserved.size(), 1u);
        EXPECT_NE(s.unobserved[0].find("d: fusion: computed inside 'double'"), std::string::npos) << s.unobserved[0];
        EXPECT_EQ(s.blamed, (std::vector<std::string>{"fusion"}));
        // every pass that was on was tried alone
        EXPECT_EQ(s.trials.size(), passes().size());
        for (const di::PassTrial& t : s.trials) EXPECT_EQ(t.fixes, t.pass == "fusion") << t.pass << ": " << t.outcome;
    }
    const std::string text = di::bisect_text(r);
    EXPECT_NE(text.find("first difference: tensor 'r' of node 'relu' (Relu)"), std::string::npos) << text;
    EXPECT_NE(text.find("changed by pass fusion"), std::string::npos) << text;
}

TEST(Bisect, WithoutTheBrokenPass_FindsNoDifference) {
    TempDir dir;
    write_double_relu(dir.path());
    di::BisectOptions opt;
    opt.passes = PassSet::parse("-fusion");
    const di::BisectReport r = di::bisect(bisect_registry(), dir.path().string(), opt);
    EXPECT_FALSE(r.failed()) << di::bisect_text(r);
    for (const di::BisectSet& s : r.sets) {
        SCOPED_TRACE(s.data_set + " " + s.mode);
        EXPECT_TRUE(s.outputs_match) << s.outputs_detail;
        EXPECT_FALSE(s.diff.has_value());
        EXPECT_EQ(s.compared, 3u);   // d, r, Y
        EXPECT_TRUE(s.unobserved.empty());
        EXPECT_TRUE(s.trials.empty());
    }
}

TEST(Bisect, Cli_ExitsWith1NamingTheNodeAndThePass) {
    TempDir dir;
    const fs::path model = write_double_relu(dir.path() / "double_relu");
    Proc p = onnx_test_cli(model.string() + " --bisect --no-dynamic");
    EXPECT_EQ(p.code, 1) << p.out;
    EXPECT_NE(p.out.find("first difference: tensor 'r' of node 'relu' (Relu)"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("changed by pass fusion"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("d: fusion: computed inside 'double'"), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("(dynamic)"), std::string::npos) << p.out;
    // A folder of model folders is walked too.
    p = onnx_test_cli(dir.path().string() + " --bisect --passes -fusion");
    EXPECT_EQ(p.code, 0) << p.out;
    EXPECT_NE(p.out.find("bisect " + model.string()), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("bisect: no difference"), std::string::npos) << p.out;
    p = onnx_test_cli(model.string() + " --bisect --passes=-fusion,-nope");
    EXPECT_EQ(p.code, 2) << p.out;
}

// --each-pass-off runs the model as configured and once with each pass off
// alone, names the pass of every failing run and bisects it: with the broken
// fused path, every run but the one without fusion fails, and the bisect of a
// failing run names the Relu. With fusion off from the start, nothing fails.
TEST(EachPassOff, Cli_RunsEveryPassOffAloneAndBisectsTheFailures) {
    TempDir dir;
    const fs::path model = write_double_relu(dir.path() / "double_relu");
    Proc p = onnx_test_cli(model.string() + " --each-pass-off --no-dynamic");
    EXPECT_EQ(p.code, 1) << p.out;
    EXPECT_NE(p.out.find("passes as configured (all): 0 passed, 2 failed"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("passes fusion off: 2 passed, 0 failed"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("passes views off: 0 passed, 2 failed"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("with passes views off"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("first difference: tensor 'r' of node 'relu' (Relu)"), std::string::npos) << p.out;
    for (const PassInfo& pass : passes())
        EXPECT_NE(p.out.find("passes " + std::string(pass.name) + " off:"), std::string::npos) << pass.name;
    p = onnx_test_cli(model.string() + " --each-pass-off --no-dynamic --passes -fusion");
    EXPECT_EQ(p.code, 0) << p.out;
    EXPECT_EQ(p.out.find("passes fusion off:"), std::string::npos) << p.out;   // already off: not run again
    EXPECT_NE(p.out.find("with failures"), std::string::npos) << p.out;
}

namespace {

void add_attr_ints(ox::ModelProto& m, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = m.mutable_graph()->mutable_node(m.graph().node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
}

void add_initializer(ox::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& v) {
    *m.mutable_graph()->add_initializer() = float_tensor(dims, v);
    m.mutable_graph()->mutable_initializer(m.graph().initializer_size() - 1)->set_name(name);
}

}   // namespace

// Program::build folds a Transpose into its MatMul and a BatchNormalization
// into its Conv: the transposed tensor has no value of its own, the Conv's
// output neither (the Conv now computes the batch norm's), and the batch
// norm's output is read at the Conv. Nothing differs from the reference,
// which keeps every node.
TEST(Bisect, ProgramFolds_MapTheirTensorsAndFindNoDifference) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Transpose", {"B"}, {"bt"}, "transpose");
    add_attr_ints(m, "perm", {1, 0});
    add_node(m, "MatMul", {"A", "bt"}, {"P"}, "mm");
    add_node(m, "Conv", {"X", "W"}, {"c"}, "conv");
    add_attr_ints(m, "kernel_shape", {1, 1});
    add_node(m, "BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"Q"}, "bn");
    const std::vector<float> w = {1, -2, 0.5f, 3}, scale = {2, -1}, shift = {0.5f, 1}, mean = {1, -1}, var = {4, 0.25f};
    add_initializer(m, "W", {2, 2, 1, 1}, w);
    add_initializer(m, "scale", {2}, scale);
    add_initializer(m, "shift", {2}, shift);
    add_initializer(m, "mean", {2}, mean);
    add_initializer(m, "var", {2}, var);
    add_symbolic_value(m.mutable_graph()->add_input(), "A", ox::TensorProto::FLOAT, {"2", "3"});
    add_symbolic_value(m.mutable_graph()->add_input(), "B", ox::TensorProto::FLOAT, {"4", "3"});
    add_symbolic_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {"1", "2", "2", "2"});
    add_symbolic_value(m.mutable_graph()->add_output(), "P", ox::TensorProto::FLOAT, {"2", "4"});
    add_symbolic_value(m.mutable_graph()->add_output(), "Q", ox::TensorProto::FLOAT, {"1", "2", "2", "2"});
    write_proto(dir.path() / "model.onnx", m);
    const std::vector<float> a = {1, 2, 3, -1, 0.5f, 2}, b = {1, 0, -1, 2, 1, 0, 0.5f, 0.5f, 0.5f, -3, 1, 2},
                             x = {1, -1, 2, 0.5f, -2, 3, 0.25f, 1};
    std::vector<float> p, q;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) {
            double acc = 0;
            for (int k = 0; k < 3; ++k) acc += double(a[i * 3 + k]) * b[j * 3 + k];
            p.push_back(static_cast<float>(acc));
        }
    for (int o = 0; o < 2; ++o)
        for (int px = 0; px < 4; ++px) {
            const double c = double(w[o * 2]) * x[px] + double(w[o * 2 + 1]) * x[4 + px];
            q.push_back(static_cast<float>((c - mean[o]) / std::sqrt(var[o] + 1e-5) * scale[o] + shift[o]));
        }
    const fs::path ds = dir.path() / "test_data_set_0";
    write_proto(ds / "input_0.pb", float_tensor({2, 3}, a));
    write_proto(ds / "input_1.pb", float_tensor({4, 3}, b));
    write_proto(ds / "input_2.pb", float_tensor({1, 2, 2, 2}, x));
    write_proto(ds / "output_0.pb", float_tensor({2, 4}, p));
    write_proto(ds / "output_1.pb", float_tensor({1, 2, 2, 2}, q));

    di::BisectOptions opt;
    opt.atol = 1e-5;
    const di::BisectReport r = di::bisect(bisect_registry(), dir.path().string(), opt);
    EXPECT_FALSE(r.failed()) << di::bisect_text(r);
    ASSERT_EQ(r.sets.size(), 2u);
    for (const di::BisectSet& s : r.sets) {
        SCOPED_TRACE(s.mode);
        EXPECT_TRUE(s.outputs_match) << s.outputs_detail;
        EXPECT_FALSE(s.diff.has_value());
        EXPECT_EQ(s.compared, 2u);   // P, and Q read at the conv
        ASSERT_EQ(s.unobserved.size(), 2u);
        EXPECT_EQ(s.unobserved[0], "bt: fold_permutations: 'transpose' (transpose) was folded into 'mm'");
        EXPECT_EQ(s.unobserved[1],
                  "c: fold_channel_affine: 'bn' (batch_norm) was folded into 'conv', whose output is now its value");
    }
    // With the folds off every tensor is compared.
    opt.passes = PassSet::parse("-fold_permutations,-fold_channel_affine");
    const di::BisectReport all = di::bisect(bisect_registry(), dir.path().string(), opt);
    EXPECT_FALSE(all.failed()) << di::bisect_text(all);
    for (const di::BisectSet& s : all.sets) {
        EXPECT_EQ(s.compared, 4u);
        EXPECT_TRUE(s.unobserved.empty());
    }
}

// ---- import passes, each off -------------------------------------------------------

namespace {

size_t op_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.is_op() ? 1 : 0;
    return n;
}

di::OnnxModel load(const TempDir& dir, const ox::ModelProto& m) {
    write_proto(dir.path() / "model.onnx", m);
    return di::load_model((dir.path() / "model.onnx").string());
}

di::ImportedGraph import_with(const di::OnnxModel& model, const std::string& spec) {
    di::ImportOptions io;
    io.passes = PassSet::parse(spec);
    di::ImportedGraph g = di::import_graph(test::registry(), model, io);
    EXPECT_TRUE(g.unsupported.empty()) << g.unsupported;
    return g;
}

}   // namespace

// Neg(Neg(C)) of an initializer folds at import, Mul(X, Sigmoid(X)) becomes
// one Swish: each pass off leaves its nodes, and the tensors say what took
// them.
TEST(ImportPasses, ConstantFoldingAndPatternsOff_LeaveTheirNodes) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    *m.mutable_graph()->add_initializer() = float_tensor({3}, {1, -2, 3});
    m.mutable_graph()->mutable_initializer(0)->set_name("C");
    add_node(m, "Neg", {"C"}, {"c1"}, "neg1");
    add_node(m, "Neg", {"c1"}, {"c2"}, "neg2");
    add_node(m, "Sigmoid", {"X"}, {"s"}, "gate");
    add_node(m, "Mul", {"X", "s"}, {"w"}, "silu");
    add_node(m, "Add", {"w", "c2"}, {"Y"}, "add");
    add_symbolic_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {"2", "3"});
    add_symbolic_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {"2", "3"});
    const di::OnnxModel model = load(dir, m);

    const di::ImportedGraph all = import_with(model, "all");
    EXPECT_EQ(all.folded, 2u);
    EXPECT_EQ(all.fused, 1u);
    EXPECT_EQ(op_nodes(*all.program), 2u);   // swish, add
    ASSERT_TRUE(all.tensors.at("c1").value);
    EXPECT_EQ(all.tensors.at("c1").value->as<float>()[1], 2.0f);
    EXPECT_TRUE(all.tensors.at("c1").ref.empty());
    EXPECT_EQ(all.tensors.at("s").absorbed, "pattern_swish: inside Swish node 'silu'");
    EXPECT_EQ(all.tensors.at("w").ref, "silu");

    const di::ImportedGraph no_fold = import_with(model, "-constant_folding");
    EXPECT_EQ(no_fold.folded, 0u);
    EXPECT_EQ(op_nodes(*no_fold.program), 4u);
    EXPECT_EQ(no_fold.tensors.at("c1").ref, "neg1");
    EXPECT_FALSE(no_fold.tensors.at("c1").value);

    const di::ImportedGraph no_swish = import_with(model, "-pattern_swish");
    EXPECT_EQ(no_swish.fused, 0u);
    EXPECT_EQ(op_nodes(*no_swish.program), 3u);
    EXPECT_TRUE(no_swish.tensors.at("s").absorbed.empty());
    EXPECT_EQ(no_swish.tensors.at("s").ref, "gate");

    const di::ImportedGraph none = import_with(model, "none");
    EXPECT_EQ(none.folded + none.fused, 0u);
    EXPECT_EQ(op_nodes(*none.program), 5u);
    for (const auto& [name, t] : none.tensors) EXPECT_FALSE(t.ref.empty()) << name;

    // Every way gives the same numbers.
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {-1, 0.5f, 2, 3, -4, 0});
    std::vector<HostTensor> ys;
    for (const di::ImportedGraph* g : {&all, &no_fold, &no_swish, &none}) {
        di::GraphRunner run(*g, test::engine(), NetworkOptions{}, model.file);
        run.set_input("X", x);
        run.infer();
        ys.push_back(run.output(0));
    }
    for (size_t k = 1; k < ys.size(); ++k) EXPECT_LT(test::max_abs_diff(ys[0], ys[k]), 1e-5) << k;
}

#else

TEST(Bisect, BuiltWithoutOnnx_Skipped) { GTEST_SKIP() << "dynrt was built without the ONNX protobuf headers"; }

#endif
