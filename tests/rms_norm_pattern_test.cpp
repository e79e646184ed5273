// pattern_rms_norm (tools/onnx/onnx_pattern_rms_norm.cpp): small ONNX graphs
// spelling RMSNorm the ways exporters do, imported with the pass on and off.
// A spelling it takes becomes one rms_norm node (fewer program nodes) and
// computes what the nodes compute, over changing shapes on one network; a
// spelling it cannot prove keeps every node and says why it declined.
#include <gtest/gtest.h>

#if defined(DYNRT_HAVE_ONNX)

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>

#include "cli_support.hpp"
#include "onnx_build.hpp"
#include "onnx_import.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace ox = ::onnx;
using namespace dynrt::test::onnx_build;
namespace di = dynrt::onnx;

namespace {

// How the graph spells x / sqrt(mean(x^2) + eps).
enum class Form {
    dynamo,        // Pow(x, 2), ReduceMean(axes input), Add, Sqrt, Reciprocal, Mul(x, r), Mul(w, .)  (opset 18)
    torchscript,   // Cast(x, f32), Pow, ReduceMean(axes attribute), Add, Sqrt, Div(1, .), Mul, Cast(f32), Mul(w, .)
    expansion,     // ONNX's RMSNormalization body: Cast, Mul(x, x), ReduceMean, Add, Sqrt, Div(x, .), Cast, Mul(., w)
};

struct Spelling {
    Form form = Form::dynamo;
    bool weight = true;             // the final Mul by a constant weight
    bool weight_identity = false;   // the weight through an Identity (torchscript's shared weights)
    bool weight_input = false;      // the weight a graph input: not a constant, the Mul stays
    bool f16 = false;               // x f16, Cast to f32 first and back to f16 before the Mul(w): the Casts stay
    // Declines.
    bool eps_input = false;   // epsilon a graph input
    std::vector<int64_t> axes = {-1};
    bool rms_read_twice = false;   // the Sqrt's output is a graph output too
};

constexpr int64_t kHidden = 8;
constexpr float kEps = 0.25f;   // large enough that an epsilon lost on the way shows

class Builder {
public:
    explicit Builder(const Spelling& s) : s_(s) {
        m_.set_ir_version(8);
        m_.add_opset_import()->set_version(s.form == Form::torchscript ? 17 : 18);
        m_.mutable_graph()->set_name("rms_norm");
    }

    ox::ModelProto build() {
        const Spelling& s = s_;
        auto* g = m_.mutable_graph();
        const int f32 = ox::TensorProto::FLOAT;
        const int io = s.f16 ? ox::TensorProto::FLOAT16 : f32;
        const std::string h = std::to_string(kHidden);
        add_symbolic_value(g->add_input(), "X", io, {"B", "S", h});
        const bool torchscript = s.form == Form::torchscript;
        // x: the tensor the norm reads, f32 (a Cast to f32 first but in the dynamo form).
        std::string x = "X";
        if (s.form != Form::dynamo || s.f16) {
            int_attr(add_node(m_, "Cast", {"X"}, {"xf"}, "to_f32"), "to", f32);
            x = "xf";
        }
        // the square
        if (s.form == Form::expansion) {
            add_node(m_, "Mul", {x, x}, {"sq"}, "square");
        } else {
            scalar(torchscript, "two", 2.0f);
            add_node(m_, "Pow", {x, "two"}, {"sq"}, "square");
        }
        // the mean
        if (torchscript) {
            auto* rm = add_node(m_, "ReduceMean", {"sq"}, {"mean"}, "mean");
            ints_attr(rm, "axes", s.axes);
            int_attr(rm, "keepdims", 1);
        } else {
            ox::TensorProto t;
            t.add_dims(static_cast<int64_t>(s.axes.size()));
            t.set_data_type(ox::TensorProto::INT64);
            for (int64_t a : s.axes) t.add_int64_data(a);
            t.set_name("axes");
            *g->add_initializer() = std::move(t);
            int_attr(add_node(m_, "ReduceMean", {"sq", "axes"}, {"mean"}, "mean"), "keepdims", 1);
        }
        if (s.eps_input) add_symbolic_value(g->add_input(), "E", f32, {});
        else scalar(torchscript, "eps", kEps);
        add_node(m_, "Add", {"mean", s.eps_input ? "E" : "eps"}, {"ms"}, "add_eps");
        add_node(m_, "Sqrt", {"ms"}, {"rms"}, "sqrt");
        if (s.rms_read_twice) {
            add_node(m_, "Identity", {"rms"}, {"rms_copy"}, "copy");
            add_symbolic_value(g->add_output(), "rms_copy", f32, {"B", "S", "1"});
        }
        // x / rms
        switch (s.form) {
            case Form::dynamo:
                add_node(m_, "Reciprocal", {"rms"}, {"inv"}, "reciprocal");
                add_node(m_, "Mul", {x, "inv"}, {"normed"}, "normalise");
                break;
            case Form::torchscript:
                scalar(true, "one", 1.0f);
                add_node(m_, "Div", {"one", "rms"}, {"inv"}, "reciprocal");
                add_node(m_, "Mul", {x, "inv"}, {"normed"}, "normalise");
                break;
            case Form::expansion: add_node(m_, "Div", {x, "rms"}, {"normed"}, "normalise"); break;
        }
        std::string y = "normed";
        if (s.form != Form::dynamo || s.f16) {
            int_attr(add_node(m_, "Cast", {y}, {"normed_t"}, "to_type"), "to", io);
            y = "normed_t";
        }
        std::string out = y;
        if (s.weight) {
            std::string w = "W";
            if (s.weight_input) {
                add_symbolic_value(g->add_input(), "W", io, {h});
            } else {
                ox::TensorProto t;
                t.add_dims(kHidden);
                t.set_data_type(ox::TensorProto::FLOAT);
                for (int64_t i = 0; i < kHidden; ++i) t.add_float_data(0.5f + 0.25f * static_cast<float>(i));
                if (s.f16) {
                    // The same values as f16 (they are exact in it), through a Cast of the f32 constant.
                    t.set_name("W32");
                    *g->add_initializer() = std::move(t);
                    int_attr(add_node(m_, "Cast", {"W32"}, {"W"}, "weight_f16"), "to", io);
                } else {
                    t.set_name("W");
                    *g->add_initializer() = std::move(t);
                }
            }
            if (s.weight_identity) {
                add_node(m_, "Identity", {"W"}, {"W_shared"}, "shared_weight");
                w = "W_shared";
            }
            add_node(m_, "Mul",
                     s.form == Form::expansion ? std::vector<std::string>{y, w} : std::vector<std::string>{w, y}, {"Y"},
                     "weight");
            out = "Y";
        }
        if (torchscript) {
            // The residual reads x too: x is read outside the pattern.
            add_node(m_, "Add", {x, out}, {"Z"}, "residual");
            out = "Z";
        }
        if (out != "Y" && out != "Z") {
            add_node(m_, "Identity", {out}, {"Y"}, "output");
            out = "Y";
        }
        add_symbolic_value(g->add_output(), out, out == "Z" ? f32 : io, {"B", "S", h});
        return m_;
    }

private:
    // A float scalar: a Constant node (torchscript) or an initializer.
    void scalar(bool node, const std::string& name, float v) {
        ox::TensorProto t;
        t.set_data_type(ox::TensorProto::FLOAT);
        t.add_float_data(v);
        if (node) {
            auto* a = add_node(m_, "Constant", {}, {name}, name + "_node")->add_attribute();
            a->set_name("value");
            a->set_type(ox::AttributeProto::TENSOR);
            *a->mutable_t() = std::move(t);
        } else {
            t.set_name(name);
            *m_.mutable_graph()->add_initializer() = std::move(t);
        }
    }

    Spelling s_;
    ox::ModelProto m_;
};

size_t op_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.is_op() ? 1 : 0;
    return n;
}

size_t rms_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.op == "rms_norm" ? 1 : 0;
    return n;
}

struct Imported {
    di::ImportedGraph on, off;
};

Imported import_both(const test::ScratchDir& dir, const Spelling& s, const std::string& device = {}) {
    std::ofstream(dir / "model.onnx", std::ios::binary) << Builder(s).build().SerializeAsString();
    const di::OnnxModel model = di::load_model(dir / "model.onnx");
    Imported out;
    di::ImportOptions io;
    io.device = device;
    out.on = di::import_graph(test::registry(), model, io);
    io.passes.set("pattern_rms_norm", false);
    out.off = di::import_graph(test::registry(), model, io);
    EXPECT_TRUE(out.on.unsupported.empty()) << out.on.unsupported;
    EXPECT_TRUE(out.off.unsupported.empty()) << out.off.unsupported;
    return out;
}

std::string declines(const di::ImportedGraph& g) {
    std::string s;
    for (const std::string& d : g.declined) s += d + "\n";
    return s;
}

// Both imports run on their own network over changing batch and sequence
// lengths; the outputs agree within `tol` (1e-5 in f32; an f16 output may
// round the other way: 1e-3).
void expect_same_outputs(const Imported& g, const Spelling& s) {
    di::GraphRunner on(g.on, test::engine(), NetworkOptions{}, "on");
    di::GraphRunner off(g.off, test::engine(), NetworkOptions{}, "off");
    const DataType io = s.f16 ? DataType::f16 : DataType::f32;
    const double tol = s.f16 ? 1e-3 : 1e-5;
    uint64_t seed = 3;
    for (const auto& [b, len] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {1, 5}, {3, 1}, {2, 3}}) {
        SCOPED_TRACE("B " + std::to_string(b) + ", S " + std::to_string(len));
        const HostTensor x = test::random_tensor(io, Shape{b, len, kHidden}, seed++, -3, 3);
        on.set_input("X", x);
        off.set_input("X", x);
        if (s.weight_input) {
            const HostTensor w = test::random_tensor(io, Shape{kHidden}, seed++, -2, 2);
            on.set_input("W", w);
            off.set_input("W", w);
        }
        if (s.eps_input) {
            const HostTensor e = HostTensor::from_floats(Shape{}, {1e-3f});
            on.set_input("E", e);
            off.set_input("E", e);
        }
        on.infer();
        off.infer();
        for (size_t k = 0; k < g.on.outputs.size(); ++k) {
            const HostTensor y = on.output(k), want = off.output(k);
            ASSERT_EQ(y.shape(), want.shape());
            for (size_t i = 0; i < y.count(); ++i)
                EXPECT_NEAR(y.get_as_double(i), want.get_as_double(i),
                            tol * std::max(1.0, std::fabs(want.get_as_double(i))))
                    << g.on.outputs[k] << " element " << i;
        }
    }
}

// The spelling imports as one rms_norm node and `others` op nodes (Casts
// and Muls the pass may not take, a residual Add); it computes what the
// nodes compute.
void expect_matched(const Spelling& s, size_t others) {
    test::ScratchDir dir("dynrt_rms_norm_pattern");
    const Imported g = import_both(dir, s);
    ASSERT_TRUE(g.on.program && g.off.program);
    EXPECT_EQ(g.on.matched.count("pattern_rms_norm") ? g.on.matched.at("pattern_rms_norm") : 0, 1u) << declines(g.on);
    EXPECT_TRUE(g.on.declined.empty()) << declines(g.on);
    EXPECT_EQ(rms_nodes(*g.on.program), 1u);
    EXPECT_EQ(rms_nodes(*g.off.program), 0u);
    EXPECT_EQ(op_nodes(*g.on.program), 1 + others);
    EXPECT_LT(op_nodes(*g.on.program), op_nodes(*g.off.program));
    expect_same_outputs(g, s);
}

// The spelling keeps every node; the import says why, naming `why`.
void expect_declined(const Spelling& s, const std::string& why) {
    test::ScratchDir dir("dynrt_rms_norm_pattern");
    const Imported g = import_both(dir, s);
    ASSERT_TRUE(g.on.program && g.off.program);
    EXPECT_EQ(g.on.matched.count("pattern_rms_norm"), 0u);
    EXPECT_EQ(g.on.fused, 0u);
    EXPECT_EQ(rms_nodes(*g.on.program), 0u);
    EXPECT_EQ(op_nodes(*g.on.program), op_nodes(*g.off.program));
    ASSERT_EQ(g.on.declined.size(), 1u) << declines(g.on);
    EXPECT_EQ(g.on.declined[0].find("pattern_rms_norm: ReduceMean 'mean' (ReduceMean): "), 0u) << g.on.declined[0];
    EXPECT_NE(g.on.declined[0].find(why), std::string::npos) << g.on.declined[0];
    EXPECT_TRUE(g.off.declined.empty()) << declines(g.off);
    expect_same_outputs(g, s);
}

}   // namespace

TEST(RmsNormPattern, DynamoSpelling_ImportsAsOneRmsNormWithTheWeight) {
    Spelling s;   // Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul(w): 7 nodes
    expect_matched(s, 0);
    s.weight = false;   // the norm alone: the Mul(x, r) is the last node
    expect_matched(s, 0);
}

TEST(RmsNormPattern, TorchscriptSpelling_TakesTheCastThatChangesNothingAndTheSharedWeight) {
    Spelling s;
    s.form = Form::torchscript;   // Cast(x, f32) stays: x is read by the residual too
    s.weight_identity = true;
    expect_matched(s, 2);   // Cast, rms_norm, residual Add
    s.weight_identity = false;
    expect_matched(s, 2);
}

TEST(RmsNormPattern, OnnxExpansionOfRMSNormalization_ImportsAsOneRmsNorm) {
    Spelling s;
    s.form = Form::expansion;   // Mul(x, x) and Div(x, r); Mul(y, w) with w second
    expect_matched(s, 1);       // the Cast to f32 of X
}

TEST(RmsNormPattern, CastsToAndFromF32InAnF16Model_StayAroundTheNorm) {
    Spelling s;
    s.f16 = true;           // Cast(X, f32), norm, Cast(f16), Mul(w f16): the Cast back changes the type
    expect_matched(s, 3);   // both Casts and the Mul stay (the weight's Cast is folded at import)
}

TEST(RmsNormPattern, WeightThatIsNoConstant_StaysAMul) {
    Spelling s;
    s.weight_input = true;
    expect_matched(s, 1);   // rms_norm without scale, then Mul(W, .)
}

TEST(RmsNormPattern, EpsilonThatIsNoConstant_Declines) {
    Spelling s;
    s.eps_input = true;
    expect_declined(s, "the epsilon 'E' added to the mean of squares is not a floating constant of one element");
}

TEST(RmsNormPattern, MeanOverAnotherAxis_Declines) {
    Spelling s;
    s.axes = {1};   // the mean over the sequence: x / rms broadcasts over it and runs, but is no rms_norm
    expect_declined(s, "the ReduceMean is over axes [1], not the last axis alone (-1)");
    s.form = Form::torchscript;
    s.axes = {2};   // the last axis of this rank-3 x, but said as 2: the pass does not know the rank
    expect_declined(s, "over axes [2]");
    s.axes = {-2, -1};
    expect_declined(s, "over axes [-2,-1]");
}

TEST(RmsNormPattern, IntermediateReadTwice_Declines) {
    Spelling s;
    s.rms_read_twice = true;
    expect_declined(s, "the root mean square 'rms' is read 2 times, not only inside the pattern");
}

// An import for the ocl device takes the pattern too: rms_norm has OpenCL impls.
TEST(RmsNormPattern, ImportForOcl_MatchesWhereRmsNormHasAnImpl) {
    if (test::registry()->impls("rms_norm", "ocl").empty()) GTEST_SKIP() << "no ocl impls loaded";
    test::ScratchDir dir("dynrt_rms_norm_pattern");
    const Imported g = import_both(dir, Spelling{}, "ocl");
    EXPECT_EQ(rms_nodes(*g.on.program), 1u);
    EXPECT_TRUE(di::graph_no_impl(*test::registry(), "ocl", *g.on.program).empty());
}

TEST(RmsNormPattern, PassOff_KeepsEveryNodeAndSaysNothing) {
    test::ScratchDir dir("dynrt_rms_norm_pattern");
    Spelling s;
    s.eps_input = true;   // a decline when the pass is on
    const Imported g = import_both(dir, s);
    EXPECT_EQ(g.off.fused, 0u);
    EXPECT_TRUE(g.off.matched.empty());
    EXPECT_TRUE(g.off.declined.empty());
    EXPECT_FALSE(g.on.declined.empty());
}

// `dynrt info` counts the matches and lists each decline with why.
TEST(RmsNormPattern, Info_SaysWhatThePatternTookAndDeclined) {
    test::ScratchDir dir("dynrt_rms_norm_pattern");
    const auto save = [&](const Spelling& s, const std::string& name) {
        std::ofstream(dir / name, std::ios::binary) << Builder(s).build().SerializeAsString();
        return dir / name;
    };
    Spelling s;
    const std::string matched = save(s, "matched.onnx");
    s.axes = {1};
    const std::string declined = save(s, "declined.onnx");
    const auto cli = [](const std::string& args) {
        return test::run_dynrt(args + " --modules-dir " + test::module_dir(), "env -u DYNRT_PASSES ");
    };
    test::CliResult r = cli("info " + matched);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("imported: 1 program nodes; patterns matched: pattern_rms_norm 1\n"), std::string::npos)
        << r.out;
    r = cli("info " + matched + " --passes -pattern_rms_norm");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("imported: 7 program nodes; patterns matched: none\n"), std::string::npos) << r.out;
    r = cli("info " + declined);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("patterns matched: none\n  declined by pattern_rms_norm: ReduceMean 'mean' (ReduceMean): the "
                         "ReduceMean is over axes [1], not the last axis alone (-1)\n"),
              std::string::npos)
        << r.out;
}

#else
TEST(RmsNormPattern, NeedsOnnx) { GTEST_SKIP() << "built without ONNX support"; }
#endif
