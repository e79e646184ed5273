// pattern_attention (tools/onnx/onnx_pattern_attention.cpp): small ONNX graphs
// spelling attention the ways exporters do, imported with the pass on and
// off. A spelling it takes becomes one sdpa node (fewer program nodes) and
// computes what the nodes compute, over changing shapes on one network; a
// spelling it cannot prove keeps every node and says why it declined.
#include <gtest/gtest.h>

#if defined(DYNRT_HAVE_ONNX)

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "cli_support.hpp"
#include "onnx_build.hpp"
#include "onnx_import.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace ox = ::onnx;
using namespace dynrt::test::onnx_build;
namespace di = dynrt::onnx;

namespace {

// How the graph spells K^T.
enum class KT {
    swap_last_two,   // Transpose(K, [0, 1, 3, 2]): K [B, H, Sk, D] is what sdpa reads
    head_split,      // Transpose(X, [0, 2, 3, 1]) of X [B, Sk, H, D]: sdpa reads a new Transpose
    dynamo,          // Reshape(Transpose(Reshape(K, [-1, S, D]), [0, 2, 1]), [*lead, D, S])
    given,           // K^T is a graph input: no transpose to undo (declines)
};

// How the scores are masked before the Softmax.
enum class Mask {
    none,
    add,                  // Add(scores, M), M float [B, 1, Sq, Sk]
    add_mask_first,       // Add(M, scores)
    where_inf,            // Where(C, scores, -inf), C bool (true keeps)
    where_inf_inverted,   // Where(C, -inf, scores) (true drops)
    where_min,            // Where(C, scores, -3.4e38)
    where_min_inverted,   // Where(C, -3.4e38, scores)
};

// How the scores are scaled.
enum class Scale {
    none,
    div_scores,     // Div(MatMul(q, kT), sqrt(D))
    mul_scores,     // Mul(1/sqrt(D), MatMul(q, kT))
    split_qk,       // MatMul(Mul(q, D^-1/4), Mul(kT, D^-1/4)), PyTorch's SDPA decomposition
    input_scores,   // Mul(MatMul(q, kT), s) with s a graph input (declines)
};

struct Spelling {
    KT kt = KT::swap_last_two;
    Mask mask = Mask::add;
    Scale scale = Scale::split_qk;
    bool guard = false;            // Where(IsNaN(p), 0, p) after the Softmax
    bool constant_nodes = false;   // scalars from Constant nodes, else initializers
    int64_t opset = 17;
    int64_t softmax_axis = -1;        // kNoAxis: no attribute
    bool scores_read_twice = false;   // an Identity reads the MatMul's scores too (a graph output)
    bool rank3 = false;               // q, k, v [B*H, S, D] (the dynamo K^T works on any rank)
    bool f64 = false;                 // q, k, v and the output f64
};
constexpr int64_t kNoAxis = -100;

constexpr int64_t kHeads = 2, kD = 4, kDv = 3;

class Builder {
public:
    explicit Builder(const Spelling& s) : s_(s) {
        m_.set_ir_version(8);
        m_.add_opset_import()->set_version(s.opset);
        m_.mutable_graph()->set_name("attention");
    }

    void float_scalar(const std::string& name, float v, bool as_vector = false) {
        ox::TensorProto t;
        if (as_vector) t.add_dims(1);
        t.set_data_type(ox::TensorProto::FLOAT);
        t.add_float_data(v);
        constant(name, t);
    }
    void int_vector(const std::string& name, int64_t v) {
        ox::TensorProto t;
        t.add_dims(1);
        t.set_data_type(ox::TensorProto::INT64);
        t.add_int64_data(v);
        constant(name, t);
    }
    void constant(const std::string& name, ox::TensorProto t) {
        if (s_.constant_nodes) {
            auto* a = add_node(m_, "Constant", {}, {name}, name + "_node")->add_attribute();
            a->set_name("value");
            a->set_type(ox::AttributeProto::TENSOR);
            *a->mutable_t() = std::move(t);
        } else {
            t.set_name(name);
            *m_.mutable_graph()->add_initializer() = std::move(t);
        }
    }

    ox::ModelProto build() {
        const Spelling& s = s_;
        auto* g = m_.mutable_graph();
        const int f = s.f64 ? ox::TensorProto::DOUBLE : ox::TensorProto::FLOAT;
        const std::string h = std::to_string(kHeads), d = std::to_string(kD), dv = std::to_string(kDv);
        std::vector<std::string> lead = {"B", h};
        if (s.rank3) lead = {"BH"};
        auto dims = [&](std::vector<std::string> tail) {
            std::vector<std::string> v = lead;
            v.insert(v.end(), tail.begin(), tail.end());
            return v;
        };
        add_symbolic_value(g->add_input(), "Q", f, dims({"Sq", d}));
        add_symbolic_value(g->add_input(), "V", f, dims({"Sk", dv}));
        // K^T
        std::string kt = "kT";
        switch (s.kt) {
            case KT::swap_last_two:
                add_symbolic_value(g->add_input(), "K", f, dims({"Sk", d}));
                ints_attr(add_node(m_, "Transpose", {"K"}, {"kT"}, "k_transpose"), "perm", {0, 1, 3, 2});
                break;
            case KT::head_split:
                add_symbolic_value(g->add_input(), "K", f, {"B", "Sk", h, d});
                ints_attr(add_node(m_, "Transpose", {"K"}, {"kT"}, "k_transpose"), "perm", {0, 2, 3, 1});
                break;
            case KT::dynamo: {
                add_symbolic_value(g->add_input(), "K", f, dims({"Sk", d}));
                add_node(m_, "Shape", {"K"}, {"k_shape"}, "k_shape");
                int_vector("minus_one", -1);
                int_vector("minus_two", -2);
                int_vector("to_end", std::numeric_limits<int64_t>::max());
                int_vector("from_start", std::numeric_limits<int64_t>::min());
                add_node(m_, "Slice", {"k_shape", "minus_two", "minus_one"}, {"k_s"}, "slice_s");
                add_node(m_, "Slice", {"k_shape", "minus_one", "to_end"}, {"k_d"}, "slice_d");
                add_node(m_, "Slice", {"k_shape", "from_start", "minus_two"}, {"k_lead"}, "slice_lead");
                int_attr(add_node(m_, "Concat", {"minus_one", "k_s", "k_d"}, {"shape3"}, "concat3"), "axis", 0);
                int_attr(add_node(m_, "Concat", {"k_lead", "k_d", "k_s"}, {"shape_t"}, "concat_t"), "axis", 0);
                int_attr(add_node(m_, "Reshape", {"K", "shape3"}, {"k3"}, "k_flat"), "allowzero", 0);
                ints_attr(add_node(m_, "Transpose", {"k3"}, {"k3t"}, "k_swap"), "perm", {0, 2, 1});
                int_attr(add_node(m_, "Reshape", {"k3t", "shape_t"}, {"kT"}, "k_back"), "allowzero", 0);
                break;
            }
            case KT::given: add_symbolic_value(g->add_input(), "kT", f, dims({d, "Sk"})); break;
        }
        // scale
        std::string q = "Q";
        const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(kD));
        if (s.scale == Scale::split_qk) {
            float_scalar("quarter", std::sqrt(inv_sqrt_d));
            add_node(m_, "Mul", {"Q", "quarter"}, {"q_scaled"}, "q_scale");
            add_node(m_, "Mul", {kt, "quarter"}, {"kT_scaled"}, "k_scale");
            q = "q_scaled";
            kt = "kT_scaled";
        }
        add_node(m_, "MatMul", {q, kt}, {"scores"}, "scores");
        std::string scores = "scores";
        if (s.scale == Scale::div_scores) {
            float_scalar("sqrt_d", std::sqrt(static_cast<float>(kD)));
            add_node(m_, "Div", {"scores", "sqrt_d"}, {"scaled"}, "scale");
            scores = "scaled";
        } else if (s.scale == Scale::mul_scores) {
            float_scalar("inv_sqrt_d", inv_sqrt_d, true);
            add_node(m_, "Mul", {"inv_sqrt_d", "scores"}, {"scaled"}, "scale");
            scores = "scaled";
        } else if (s.scale == Scale::input_scores) {
            add_symbolic_value(g->add_input(), "S", f, {});
            add_node(m_, "Mul", {"scores", "S"}, {"scaled"}, "scale");
            scores = "scaled";
        }
        // mask
        const std::vector<std::string> mask_dims =
            s.rank3 ? std::vector<std::string>{"1", "Sq", "Sk"} : std::vector<std::string>{"B", "1", "Sq", "Sk"};
        switch (s.mask) {
            case Mask::none: break;
            case Mask::add:
            case Mask::add_mask_first:
                add_symbolic_value(g->add_input(), "M", f, mask_dims);
                add_node(
                    m_, "Add",
                    s.mask == Mask::add ? std::vector<std::string>{scores, "M"} : std::vector<std::string>{"M", scores},
                    {"masked"}, "mask");
                scores = "masked";
                break;
            default: {
                add_symbolic_value(g->add_input(), "C", ox::TensorProto::BOOL, mask_dims);
                const bool inf = s.mask == Mask::where_inf || s.mask == Mask::where_inf_inverted;
                const bool inverted = s.mask == Mask::where_inf_inverted || s.mask == Mask::where_min_inverted;
                float_scalar("masked_value",
                             inf ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::lowest());
                add_node(m_, "Where",
                         inverted ? std::vector<std::string>{"C", "masked_value", scores}
                                  : std::vector<std::string>{"C", scores, "masked_value"},
                         {"masked"}, "mask");
                scores = "masked";
            }
        }
        auto* sm = add_node(m_, "Softmax", {scores}, {"p"}, "softmax");
        if (s.softmax_axis != kNoAxis) int_attr(sm, "axis", s.softmax_axis);
        std::string p = "p";
        if (s.guard) {
            float_scalar("zero", 0.0f, true);
            add_node(m_, "IsNaN", {"p"}, {"p_nan"}, "isnan");
            add_node(m_, "Where", {"p_nan", "zero", "p"}, {"p_safe"}, "guard");
            p = "p_safe";
        }
        add_node(m_, "MatMul", {p, "V"}, {"Y"}, "attention");
        add_symbolic_value(g->add_output(), "Y", f, dims({"Sq", dv}));
        if (s.scores_read_twice) {
            add_node(m_, "Identity", {"scores"}, {"scores_copy"}, "copy");
            add_symbolic_value(g->add_output(), "scores_copy", f, dims({"Sq", "Sk"}));
        }
        return m_;
    }

private:
    Spelling s_;
    ox::ModelProto m_;
};

size_t op_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.is_op() ? 1 : 0;
    return n;
}

size_t sdpa_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.op == "sdpa" ? 1 : 0;
    return n;
}

// One set of input values for the spelling at batch b, lengths sq and sk;
// `seed` varies them. Masks keep the first key and about 3 in 4 of the
// others; with `empty_row` the first query of the first batch keeps none.
std::map<std::string, HostTensor> inputs(const Spelling& s, int64_t b, int64_t sq, int64_t sk, uint64_t seed,
                                         bool empty_row) {
    std::map<std::string, HostTensor> in;
    auto shape = [&](std::vector<int64_t> tail) {
        std::vector<int64_t> v = s.rank3 ? std::vector<int64_t>{b * kHeads} : std::vector<int64_t>{b, kHeads};
        v.insert(v.end(), tail.begin(), tail.end());
        return Shape(v);
    };
    in["Q"] = test::random_tensor(DataType::f32, shape({sq, kD}), seed, -2, 2);
    in["V"] = test::random_tensor(DataType::f32, shape({sk, kDv}), seed + 1, -2, 2);
    if (s.kt == KT::head_split) in["K"] = test::random_tensor(DataType::f32, Shape{b, sk, kHeads, kD}, seed + 2, -2, 2);
    else if (s.kt == KT::given) in["kT"] = test::random_tensor(DataType::f32, shape({kD, sk}), seed + 2, -2, 2);
    else in["K"] = test::random_tensor(DataType::f32, shape({sk, kD}), seed + 2, -2, 2);
    if (s.scale == Scale::input_scores) in["S"] = HostTensor::from_floats(Shape{}, {0.5f});
    const Shape mask_shape = s.rank3 ? Shape{1, sq, sk} : Shape{b, 1, sq, sk};
    const HostTensor keep = test::random_tensor(DataType::f32, mask_shape, seed + 3, 0, 1);
    const bool drops_on_true = s.mask == Mask::where_inf_inverted || s.mask == Mask::where_min_inverted;
    if (s.mask == Mask::add || s.mask == Mask::add_mask_first) {
        HostTensor m(DataType::f32, mask_shape);
        for (size_t i = 0; i < m.count(); ++i) {
            const bool kept =
                (keep.as<float>()[i] < 0.75f || i % sk == 0) && !(empty_row && i < static_cast<size_t>(sk));
            m.as<float>()[i] = kept ? 0.0f : -std::numeric_limits<float>::infinity();
        }
        in["M"] = m;
    } else if (s.mask != Mask::none) {
        HostTensor c(DataType::boolean, mask_shape);
        for (size_t i = 0; i < c.count(); ++i) {
            const bool kept =
                (keep.as<float>()[i] < 0.75f || i % sk == 0) && !(empty_row && i < static_cast<size_t>(sk));
            c.as<uint8_t>()[i] = kept != drops_on_true ? 1 : 0;
        }
        in["C"] = c;
    }
    return in;
}

struct Imported {
    di::ImportedGraph on, off;
};

Imported import_both(const test::ScratchDir& dir, const Spelling& s) {
    std::ofstream(dir / "model.onnx", std::ios::binary) << Builder(s).build().SerializeAsString();
    const di::OnnxModel model = di::load_model(dir / "model.onnx");
    Imported out;
    di::ImportOptions io;
    out.on = di::import_graph(test::registry(), model, io);
    io.passes.set("pattern_attention", false);
    out.off = di::import_graph(test::registry(), model, io);
    EXPECT_TRUE(out.on.unsupported.empty()) << out.on.unsupported;
    EXPECT_TRUE(out.off.unsupported.empty()) << out.off.unsupported;
    return out;
}

// Both imports run on their own network over changing shapes; the outputs
// agree within 1e-5 (NaN where the other has NaN).
void expect_same_outputs(const Imported& g, const Spelling& s, bool empty_row) {
    di::GraphRunner on(g.on, test::engine(), NetworkOptions{}, "on");
    di::GraphRunner off(g.off, test::engine(), NetworkOptions{}, "off");
    uint64_t seed = 11;
    for (const auto& [b, sq, sk] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{2, 3, 5}, {1, 4, 4}, {2, 1, 7}}) {
        SCOPED_TRACE("B " + std::to_string(b) + ", Sq " + std::to_string(sq) + ", Sk " + std::to_string(sk));
        for (const auto& [name, value] : inputs(s, b, sq, sk, seed, empty_row)) {
            on.set_input(name, value);
            off.set_input(name, value);
        }
        seed += 10;
        on.infer();
        off.infer();
        const HostTensor y = on.output(0), want = off.output(0);
        ASSERT_EQ(y.shape(), want.shape());
        size_t nan = 0;
        for (size_t i = 0; i < y.count(); ++i) {
            const float a = y.as<float>()[i], w = want.as<float>()[i];
            if (std::isnan(w)) {
                EXPECT_TRUE(std::isnan(a)) << "element " << i;
                ++nan;
                continue;
            }
            EXPECT_NEAR(a, w, 1e-5) << "element " << i;
        }
        if (!empty_row) {
            EXPECT_EQ(nan, 0u);
        }
    }
}

std::string declines(const di::ImportedGraph& g) {
    std::string s;
    for (const std::string& d : g.declined) s += d + "\n";
    return s;
}

// The spelling imports as one sdpa node and the `helpers` nodes the import
// adds for it (a Transpose of K, a mask's Not or Where), nothing else: every
// node of the pattern and of the K^T shape arithmetic leaves. It computes
// what the nodes compute.
void expect_matched(const Spelling& s, size_t helpers, bool empty_row = false) {
    test::ScratchDir dir("dynrt_attention_pattern");
    const Imported g = import_both(dir, s);
    ASSERT_TRUE(g.on.program && g.off.program);
    EXPECT_EQ(g.on.matched.count("pattern_attention") ? g.on.matched.at("pattern_attention") : 0, 1u) << declines(g.on);
    EXPECT_TRUE(g.on.declined.empty()) << declines(g.on);
    EXPECT_EQ(sdpa_nodes(*g.on.program), 1u);
    EXPECT_EQ(sdpa_nodes(*g.off.program), 0u);
    EXPECT_EQ(op_nodes(*g.on.program), 1 + helpers);
    EXPECT_LT(op_nodes(*g.on.program), op_nodes(*g.off.program));
    expect_same_outputs(g, s, empty_row);
}

// The spelling keeps every node; the import says why, naming `why`.
void expect_declined(const Spelling& s, const std::string& why) {
    test::ScratchDir dir("dynrt_attention_pattern");
    const Imported g = import_both(dir, s);
    ASSERT_TRUE(g.on.program && g.off.program);
    EXPECT_EQ(g.on.matched.count("pattern_attention"), 0u);
    EXPECT_EQ(g.on.fused, 0u);
    EXPECT_EQ(sdpa_nodes(*g.on.program), 0u);
    EXPECT_EQ(op_nodes(*g.on.program), op_nodes(*g.off.program));
    ASSERT_EQ(g.on.declined.size(), 1u) << declines(g.on);
    EXPECT_NE(g.on.declined[0].find("pattern_attention: "), std::string::npos) << g.on.declined[0];
    EXPECT_NE(g.on.declined[0].find(why), std::string::npos) << g.on.declined[0];
    EXPECT_TRUE(g.off.declined.empty()) << declines(g.off);
    expect_same_outputs(g, s, false);
}

}   // namespace

TEST(AttentionPattern, KTransposedOnItsLastTwoAxes_ImportsAsOneSdpa) {
    Spelling s;   // Mul(q, c), Mul(Transpose(K), c), MatMul, Add(mask), Softmax, MatMul
    expect_matched(s, 0);
    s.constant_nodes = true;   // the scalar from a Constant node
    expect_matched(s, 0);
}

TEST(AttentionPattern, HeadSplitPermOfK_ImportsAsSdpaOfAnUntransposedK) {
    Spelling s;
    s.kt = KT::head_split;   // K = Transpose(X, [0, 2, 1, 3]), a new node
    expect_matched(s, 1);
}

TEST(AttentionPattern, DynamoReshapeTransposeReshape_ImportsAsOneSdpa) {
    Spelling s;
    s.kt = KT::dynamo;   // Shape, 3 Slice, 2 Concat, Reshape, Transpose, Reshape leave with the core
    s.guard = true;
    s.constant_nodes = true;
    expect_matched(s, 0);
}

TEST(AttentionPattern, EachScaleSpelling_GivesTheSameOutputs) {
    for (const Scale scale : {Scale::none, Scale::div_scores, Scale::mul_scores, Scale::split_qk}) {
        Spelling s;
        s.scale = scale;
        SCOPED_TRACE(static_cast<int>(scale));
        expect_matched(s, 0);
    }
}

TEST(AttentionPattern, EachMaskSpelling_GivesTheSameOutputsWithFullyMaskedRows) {
    for (const bool guard : {false, true})
        for (const Mask mask : {Mask::none, Mask::add, Mask::add_mask_first, Mask::where_inf, Mask::where_inf_inverted,
                                Mask::where_min, Mask::where_min_inverted}) {
            Spelling s;
            s.mask = mask;
            s.guard = guard;
            SCOPED_TRACE("mask " + std::to_string(static_cast<int>(mask)) + (guard ? ", guard" : ""));
            // A finite Where mask becomes the float mask Where(C, 0, c), an
            // inverted -inf one the bool mask Not(C).
            const bool helper =
                mask == Mask::where_min || mask == Mask::where_min_inverted || mask == Mask::where_inf_inverted;
            expect_matched(s, helper ? 1 : 0, mask != Mask::none);
        }
}

TEST(AttentionPattern, SoftmaxOnTheLastAxisBelowOpset13_IsMatchedOnlyWithAxisMinusOneOr3) {
    Spelling s;
    s.opset = 12;
    s.softmax_axis = 3;
    expect_matched(s, 0);
    s.softmax_axis = kNoAxis;   // axis 1: the softmax of everything past the batch
    expect_declined(s, "below opset 13");
}

TEST(AttentionPattern, SoftmaxOnAnotherAxis_Declines) {
    Spelling s;
    s.mask = Mask::none;   // a key masked for every query is a NaN column on axis 2
    s.softmax_axis = 2;
    expect_declined(s, "on axis 2, not the last one");
}

TEST(AttentionPattern, ScaleThatIsNotAConstant_Declines) {
    Spelling s;
    s.scale = Scale::input_scores;
    expect_declined(s, "not a constant scalar");
}

TEST(AttentionPattern, ScoresReadOutsideThePattern_Decline) {
    Spelling s;
    s.scale = Scale::none;
    s.scores_read_twice = true;
    expect_declined(s, "the scores 'scores' is read 2 times, not only inside the pattern");
}

TEST(AttentionPattern, KTransposedNoWayThePassKnows_Declines) {
    Spelling s;
    s.kt = KT::given;
    s.scale = Scale::div_scores;
    expect_declined(s, "not a Transpose of K's last two axes");
}

TEST(AttentionPattern, QkvOfRank3_DeclineWhenMappedAndKeepTheirNodes) {
    // The dynamo K^T is a transpose of the last two axes at any rank: the
    // matcher takes it and the mapping, which knows q is rank 3, undoes it.
    Spelling s;
    s.kt = KT::dynamo;
    s.rank3 = true;
    expect_declined(s, "q 'Q' is rank 3 (sdpa takes rank 4)");
}

// `dynrt info` counts the program's nodes and the matches, lists each
// decline with why and takes --passes; `dynrt run -v` prints the same.
TEST(AttentionPattern, InfoAndRunVerbose_SayWhatThePatternsTookAndDeclined) {
    test::ScratchDir dir("dynrt_attention_pattern");
    const auto save = [&](const Spelling& s, const std::string& name) {
        std::ofstream(dir / name, std::ios::binary) << Builder(s).build().SerializeAsString();
        return dir / name;
    };
    Spelling s;
    const std::string matched = save(s, "matched.onnx");
    s.softmax_axis = 2;
    const std::string declined = save(s, "declined.onnx");
    const auto cli = [](const std::string& args) {
        return test::run_dynrt(args + " --modules-dir " + test::module_dir(), "env -u DYNRT_PASSES ");
    };
    test::CliResult r = cli("info " + matched);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("imported: 1 program nodes; patterns matched: pattern_attention 1\n"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("declined by"), std::string::npos) << r.out;
    r = cli("info " + matched + " --passes -pattern_attention");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("imported: 7 program nodes; patterns matched: none\n"), std::string::npos) << r.out;
    r = cli("info " + declined);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("patterns matched: none\n  declined by pattern_attention: Softmax 'softmax' (Softmax): the "
                         "Softmax is on axis 2, not the last one\n"),
              std::string::npos)
        << r.out;
    r = cli("info " + declined + " --json");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\"program_nodes\": 7"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"pattern_matches\": {}"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"pattern_declines\": ["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"pattern_attention: Softmax 'softmax' (Softmax): the Softmax is on axis 2"),
              std::string::npos)
        << r.out;
    r = cli("run " + matched + " --shapes \"B=1;Sq=2;Sk=3\" -v");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("dynrt: imported: 1 program nodes; patterns matched: pattern_attention 1\n"),
              std::string::npos)
        << r.out;
}

// An import for a device whose sdpa has no impl leaves attention as nodes
// that run there, and says why.
TEST(AttentionPattern, ImportForADeviceWithoutSdpa_KeepsTheNodesAndSaysWhy) {
    test::ScratchDir dir("dynrt_attention_pattern");
    std::ofstream(dir / "model.onnx", std::ios::binary) << Builder(Spelling{}).build().SerializeAsString();
    const di::OnnxModel model = di::load_model(dir / "model.onnx");
    di::ImportOptions io;
    io.device = "cpu";
    ASSERT_FALSE(test::registry()->impls("sdpa", "cpu").empty());
    EXPECT_EQ(sdpa_nodes(*di::import_graph(test::registry(), model, io).program), 1u);
    io.device = "ocl";
    const di::ImportedGraph g = di::import_graph(test::registry(), model, io);
    if (!test::registry()->impls("sdpa", "ocl").empty()) {
        EXPECT_EQ(sdpa_nodes(*g.program), 1u);   // the gate opens once sdpa has an OpenCL impl
        return;
    }
    EXPECT_EQ(sdpa_nodes(*g.program), 0u);
    EXPECT_EQ(g.fused, 0u);
    ASSERT_EQ(g.declined.size(), 1u) << declines(g);
    EXPECT_EQ(g.declined[0], "pattern_attention: 1 matches left as they are: dynrt op 'sdpa' has no ocl impl");
    EXPECT_TRUE(di::graph_no_impl(*test::registry(), "ocl", *g.program).empty());
}

TEST(AttentionPattern, QkvOfADtypeSdpaLacks_DeclineWhenMapped) {
    Spelling s;
    s.f64 = true;
    s.scale = Scale::none;
    s.mask = Mask::none;
    test::ScratchDir dir("dynrt_attention_pattern");
    const Imported g = import_both(dir, s);
    ASSERT_TRUE(g.on.program && g.off.program);
    EXPECT_EQ(sdpa_nodes(*g.on.program), 0u);
    EXPECT_EQ(op_nodes(*g.on.program), op_nodes(*g.off.program));
    ASSERT_EQ(g.on.declined.size(), 1u) << declines(g.on);
    EXPECT_NE(g.on.declined[0].find("q 'Q' is f64 (sdpa takes f32 and f16)"), std::string::npos) << g.on.declined[0];
}

TEST(AttentionPattern, PassOff_KeepsEveryNodeAndSaysNothing) {
    test::ScratchDir dir("dynrt_attention_pattern");
    Spelling s;
    const Imported g = import_both(dir, s);
    EXPECT_EQ(g.off.fused, 0u);
    EXPECT_TRUE(g.off.matched.empty());
    EXPECT_TRUE(g.off.declined.empty());
    EXPECT_EQ(sdpa_nodes(*g.off.program), 0u);
}

#else
TEST(AttentionPattern, NeedsOnnx) { GTEST_SKIP() << "built without ONNX support"; }
#endif
