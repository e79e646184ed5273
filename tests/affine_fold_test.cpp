// Affine folding at program build (ProgramOptions::fold_channel_affine): an
// inference batch_norm after a convolution becomes part of the convolution's
// constant weights and bias, and the batch_norm node goes. The folded program
// is compared with the same graph built without folding and with the host
// reference impls, on cpu and ocl, for static and changing input shapes on one
// network instance; and the fold is refused where it would change what the
// graph computes (a second user of the convolution, parameters or weights that
// are not constants, the convolution's output a network output).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

// What the test graph is made of.
struct Graph {
    int64_t rank = 4;       // of x: 1 to 3 spatial axes
    int64_t groups = 1;     // of the convolution
    bool bias = false;      // the convolution has a bias input
    bool relu = false;      // a relu after the batch_norm (fused into the convolution's kernel)
    bool dynamic = false;   // x's batch and spatial dims dynamic
};

constexpr int64_t kIn = 4, kOut = 8;

Layout x_layout(const Graph& g) {
    std::vector<Dimension> d{g.dynamic ? Dimension() : Dimension(2), Dimension(kIn)};
    for (int64_t i = 2; i < g.rank; ++i) d.push_back(g.dynamic ? Dimension() : Dimension(7));
    return Layout(PartialShape(d), DataType::f32);
}

Shape x_shape(const Graph& g, int64_t batch, int64_t extent) {
    std::vector<int64_t> d{batch, kIn};
    for (int64_t i = 2; i < g.rank; ++i) d.push_back(extent + i);
    return Shape(d);
}

Attributes conv_attrs(const Graph& g) {
    Attributes a;
    a.set("groups", g.groups);
    a.set("pads_begin", std::vector<int64_t>(size_t(g.rank - 2), 1));
    a.set("pads_end", std::vector<int64_t>(size_t(g.rank - 2), 1));
    return a;
}

HostTensor channel_values(uint64_t seed, double low, double high) {
    return test::random_tensor(DataType::f32, Shape{kOut}, seed, low, high);
}

// x -> conv (constant w [8, 4/groups, 3...], optional bias) -> bn -> [relu];
// the output is the last node. The batch_norm's parameters are constants, a
// variance in [0.2, 2) so the scale is far from 1.
void add_conv_bn(Program& p, const Graph& g, const std::string& prefix = "") {
    std::vector<int64_t> w{kOut, kIn / g.groups};
    for (int64_t i = 2; i < g.rank; ++i) w.push_back(3);
    p.add_constant(prefix + "w", test::random_tensor(DataType::f32, Shape(w), 1, -0.5, 0.5));
    std::vector<std::string> conv_in{"x", prefix + "w"};
    if (g.bias) {
        p.add_constant(prefix + "b", channel_values(2, -1, 1));
        conv_in.push_back(prefix + "b");
    }
    p.add_node(prefix + "conv", "convolution", conv_in, conv_attrs(g));
    p.add_constant(prefix + "gamma", channel_values(3, 0.5, 2));
    p.add_constant(prefix + "beta", channel_values(4, -1, 1));
    p.add_constant(prefix + "mean", channel_values(5, -0.5, 0.5));
    p.add_constant(prefix + "var", channel_values(6, 0.2, 2));
    Attributes bn;
    bn.set("epsilon", 1e-3);
    p.add_node(prefix + "bn", "batch_norm",
               {prefix + "conv", prefix + "gamma", prefix + "beta", prefix + "mean", prefix + "var"}, bn);
    if (g.relu) {
        Attributes relu;
        relu.set("func", std::string("relu"));
        p.add_node(prefix + "relu", "activation", {prefix + "bn"}, relu);
    }
}

std::shared_ptr<Program> conv_bn(const Graph& g, bool fold) {
    ProgramOptions o;
    o.fold_channel_affine = fold;
    auto p = std::make_shared<Program>(test::registry(), "conv_bn", o);
    p->add_input("x", x_layout(g));
    add_conv_bn(*p, g);
    p->add_output(g.relu ? "relu" : "bn");
    p->build();
    return p;
}

size_t op_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.is_op();
    return n;
}

NetworkOptions reference_only() {
    NetworkOptions o;
    o.host_reference_only = true;
    return o;
}

// Runs the folded program on `engine`, and the unfolded one there and on the
// host reference impls, over the shapes (one request each), comparing outputs.
void expect_folded_matches(const Graph& g, const std::string& engine, const std::vector<Shape>& shapes) {
    const EnginePtr eng = engine == "ocl" ? test::ocl_engine() : test::engine("cpu");
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto folded = conv_bn(g, true), unfolded = conv_bn(g, false);
    ASSERT_EQ(folded->folded().size(), 1u);
    EXPECT_EQ(folded->folded()[0].node, "bn");
    EXPECT_EQ(folded->folded()[0].into, "conv");
    EXPECT_EQ(op_nodes(*folded) + 1, op_nodes(*unfolded));
    InferRequest f(Network::create(folded, eng)), u(Network::create(unfolded, eng)),
        r(Network::create(unfolded, test::engine("cpu"), reference_only()));
    uint64_t seed = 10;
    for (const Shape& s : shapes) {
        SCOPED_TRACE(engine + " x " + s.to_string());
        const HostTensor x = test::random_tensor(DataType::f32, s, seed++, -2, 2);
        for (InferRequest* req : {&f, &u, &r}) {
            req->set_input("x", x);
            req->infer();
        }
        const HostTensor want = r.get_output(0);
        EXPECT_EQ(f.last_run().folded_nodes, 1u);
        EXPECT_EQ(u.last_run().folded_nodes, 0u);
        for (const NodeStats& n : f.last_run().nodes) EXPECT_NE(n.node, "bn");
        test::expect_close(f.get_output(g.relu ? "relu" : "bn"), want, 1e-4, 1e-4);
        test::expect_close(u.get_output(0), want, 1e-4, 1e-4);
    }
}

// ---- folded, unfolded and the reference agree ----------------------------------

TEST(AffineFold, StaticConvBn_MatchesUnfoldedAndReference) {
    for (const std::string engine : {"cpu", "ocl"}) {
        expect_folded_matches({}, engine, {{2, kIn, 7, 7}});
        Graph with_bias;
        with_bias.bias = true;
        expect_folded_matches(with_bias, engine, {{2, kIn, 7, 7}});
    }
}

TEST(AffineFold, ChangingShapesOnOneInstance_MatchUnfoldedAndReference) {
    for (const std::string engine : {"cpu", "ocl"})
        for (int64_t rank : {3, 4, 5}) {
            Graph g;
            g.rank = rank;
            g.dynamic = true;
            g.bias = rank == 4;
            g.groups = rank == 3 ? 2 : 1;
            g.relu = rank == 4;
            SCOPED_TRACE("rank " + std::to_string(rank));
            expect_folded_matches(
                g, engine, {x_shape(g, 1, 5), x_shape(g, 3, 2), x_shape(g, 1, 5), x_shape(g, 2, 9), x_shape(g, 1, 1)});
        }
}

TEST(AffineFold, DepthwiseConv_FoldsEveryOutputChannel) {
    Graph g;
    g.groups = kIn;   // w [8, 1, 3, 3]: two output channels per input channel
    g.bias = true;
    g.dynamic = true;
    for (const std::string engine : {"cpu", "ocl"}) expect_folded_matches(g, engine, {{1, kIn, 6, 5}});
}

// ---- the folded program --------------------------------------------------------

TEST(AffineFold, FoldedNodeNameStillResolvesAndUnusedConstantsLeave) {
    Graph g;
    const auto p = conv_bn(g, true);
    EXPECT_EQ(p->output_names(), std::vector<std::string>{"bn"});
    EXPECT_EQ(p->outputs().at(0).node, p->node_index("conv"));
    EXPECT_THROW(p->node_index("bn"), Error);
    for (const char* gone : {"gamma", "beta", "mean", "var", "w"}) EXPECT_THROW(p->node_index(gone), Error) << gone;
    const Node& conv = p->nodes()[p->node_index("conv")];
    ASSERT_EQ(conv.inputs.size(), 3u);   // a bias was added
    for (size_t i = 1; i < 3; ++i) EXPECT_TRUE(p->nodes()[conv.inputs[i].node].is_constant());
}

TEST(AffineFold, WeightsSharedByTwoConvolutions_EachGetsItsOwnFoldedCopy) {
    auto p = std::make_shared<Program>(test::registry(), "shared");
    auto q = std::make_shared<Program>(test::registry(), "shared", ProgramOptions{false});
    for (const auto& prog : {p, q}) {
        prog->add_input("x", x_layout({}));
        add_conv_bn(*prog, {});
        Attributes bn;
        bn.set("epsilon", 0.5);
        prog->add_node("conv2", "convolution", {"x", "w"}, conv_attrs({}));
        prog->add_node("bn2", "batch_norm", {"conv2", "beta", "gamma", "var", "mean"}, bn);
        prog->add_output("bn");
        prog->add_output("bn2");
        prog->build();
    }
    EXPECT_EQ(p->folded().size(), 2u);
    const HostTensor x = test::random_tensor(DataType::f32, Shape{2, kIn, 7, 7}, 3);
    InferRequest f(Network::create(p, test::engine("cpu"))), u(Network::create(q, test::engine("cpu")));
    for (InferRequest* req : {&f, &u}) {
        req->set_input("x", x);
        req->infer();
    }
    for (size_t k = 0; k < 2; ++k) test::expect_close(f.get_output(k), u.get_output(k), 1e-4, 1e-4);
}

// ---- where the fold must not happen ----------------------------------------------

std::shared_ptr<Program> build_unchecked(const std::function<void(Program&)>& add) {
    auto p = std::make_shared<Program>(test::registry(), "no_fold");
    add(*p);
    p->build();
    return p;
}

TEST(AffineFold, ConvWithASecondUser_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", x_layout({}));
        add_conv_bn(q, {});
        Attributes relu;
        relu.set("func", std::string("relu"));
        q.add_node("other", "activation", {"conv"}, relu);
        q.add_output("bn");
        q.add_output("other");
    });
    EXPECT_TRUE(p->folded().empty());
    EXPECT_NO_THROW(p->node_index("bn"));
}

TEST(AffineFold, ConvOutputAsANetworkOutput_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", x_layout({}));
        add_conv_bn(q, {});
        q.add_output("bn");
        q.add_output("conv");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(AffineFold, BnParametersThatAreNotConstants_AreNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", x_layout({}));
        q.add_input("m", Layout(PartialShape{kOut}, DataType::f32));
        add_conv_bn(q, {}, "a");
        // The same graph with the mean from a graph input.
        q.add_constant("w2", test::random_tensor(DataType::f32, Shape{kOut, kIn, 3, 3}, 1));
        q.add_node("conv2", "convolution", {"x", "w2"}, conv_attrs({}));
        q.add_node("bn2", "batch_norm", {"conv2", "agamma", "abeta", "m", "avar"});
        q.add_output("abn");
        q.add_output("bn2");
    });
    ASSERT_EQ(p->folded().size(), 1u);   // the first pair only
    EXPECT_EQ(p->folded()[0].node, "abn");
    EXPECT_NO_THROW(p->node_index("bn2"));
}

TEST(AffineFold, ConvWeightsThatAreNotConstants_AreNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", x_layout({}));
        q.add_input("w", Layout(PartialShape{kOut, kIn, 3, 3}, DataType::f32));
        q.add_node("conv", "convolution", {"x", "w"}, conv_attrs({}));
        for (const char* c : {"gamma", "beta", "mean", "var"}) q.add_constant(c, channel_values(7, 0.5, 1));
        q.add_node("bn", "batch_norm", {"conv", "gamma", "beta", "mean", "var"});
        q.add_output("bn");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(AffineFold, TrainingModeBatchNorm_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", x_layout({}));
        add_conv_bn(q, {});
        Attributes train;
        train.set("training_mode", true);
        q.add_node("conv2", "convolution", {"x", "w"}, conv_attrs({}));
        q.add_node("bn2", "batch_norm", {"conv2", "gamma", "beta", "mean", "var"}, train);
        q.add_output("bn");
        q.add_output("bn2");
    });
    ASSERT_EQ(p->folded().size(), 1u);
    EXPECT_EQ(p->folded()[0].node, "bn");
}

TEST(AffineFold, OptionOff_KeepsEveryNode) {
    const auto p = conv_bn({}, false);
    EXPECT_TRUE(p->folded().empty());
    EXPECT_NO_THROW(p->node_index("bn"));
    EXPECT_FALSE(p->options().fold_channel_affine);
}

}   // namespace
}   // namespace dynrt
