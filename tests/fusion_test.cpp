// Fusion and unfusion: elementwise consumers (activation, eltwise) fused into
// their producer (convolution, fully_connected, eltwise ...) run inside its
// impl; when the shapes do not allow it (an eltwise input that would grow the
// result) the chain runs unfused, and fused again when they allow it. Every
// output is compared with the same program run with fusion off.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

Attributes act(const std::string& f) {
    Attributes a;
    a.set("func", f);
    return a;
}
Attributes elt(const std::string& m) {
    Attributes a;
    a.set("mode", m);
    return a;
}
Attributes pads1() {
    Attributes a;
    a.set("pads_begin", std::vector<int64_t>{1, 1});
    a.set("pads_end", std::vector<int64_t>{1, 1});
    return a;
}

const NodeStats& stats_of(const InferRequest& r, const std::string& node) {
    for (const NodeStats& s : r.last_run().nodes)
        if (s.node == node) return s;
    throw Error("no stats for " + node);
}

// conv(x) -> add(., y) -> relu ; y's shape decides whether the add can be fused.
std::shared_ptr<Program> conv_add_relu() {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 3, Dimension(), Dimension()}, DataType::f32));
    p->add_input("y", Layout(PartialShape::dynamic_of_rank(4), DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 3, 3, 3}, 1, -0.5, 0.5));
    p->add_node("conv", "convolution", {"x", "w"}, pads1());
    p->add_node("add", "eltwise", {"conv", "y"}, elt("add"));
    p->add_node("relu", "activation", {"add"}, act("relu"));
    p->add_output("relu");
    p->build();
    return p;
}

struct Pair {
    InferRequest fused, ref;
    Pair(const std::shared_ptr<Program>& p, const EnginePtr& eng, NetworkOptions opt = {})
        : fused(Network::create(p, eng, opt)), ref(Network::create(p, test::engine("cpu"), unfused(opt))) {}
    static NetworkOptions unfused(NetworkOptions o) {
        o.fusion = false;
        return o;
    }
    void run(const std::vector<std::pair<std::string, HostTensor>>& inputs) {
        for (const auto& [n, v] : inputs) {
            fused.set_input(n, v);
            ref.set_input(n, v);
        }
        fused.infer();
        ref.infer();
        const HostTensor a = fused.get_output(0), b = ref.get_output(0);
        ASSERT_EQ(a.shape(), b.shape());
        EXPECT_LE(test::max_abs_diff(a, b), 1e-5);
    }
};

TEST(FusionPlan, ConvAddRelu_IsOneChainRunRightBeforeItsLastNode) {
    auto p = conv_add_relu();
    auto net = Network::create(p, test::engine("cpu"));
    const size_t conv = p->node_index("conv"), add = p->node_index("add"), relu = p->node_index("relu");
    EXPECT_EQ(net->fused_chain(conv), (std::vector<size_t>{add, relu}));
    EXPECT_EQ(net->fused_into(add), conv);
    EXPECT_EQ(net->fused_into(relu), conv);
    EXPECT_EQ(net->fused_main_input(add), 0u);
    NetworkOptions off;
    off.fusion = false;
    EXPECT_TRUE(Network::create(p, test::engine("cpu"), off)->fused_chain(conv).empty());
}

// A chain takes at most Network::kMaxFusedOps nodes (oneDNN allows 32
// post-ops; a graph of 200k elementwise nodes made one chain of all of them,
// whose fused params were copied per node); the node after a full chain
// starts its own. The values match the unfused run.
TEST(FusionPlan, LongElementwiseChain_IsCutIntoChainsOfAtMostTheLimit) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 4}, DataType::f32));
    p->add_node("head", "eltwise", {"x", "x"}, elt("add"));
    std::string prev = "head";
    const size_t length = 2 * Network::kMaxFusedOps + 3;
    for (size_t i = 0; i < length; ++i) {
        const std::string name = "a" + std::to_string(i);
        p->add_node(name, "activation", {prev}, act(i % 2 ? "tanh" : "sigmoid"));
        prev = name;
    }
    p->add_output(prev);
    p->build();
    auto net = Network::create(p, test::engine("cpu"));
    EXPECT_EQ(net->fused_chain(p->node_index("head")).size(), Network::kMaxFusedOps);
    // activation takes no post-ops itself, so the rest of the chain runs unfused
    const std::string next = "a" + std::to_string(Network::kMaxFusedOps);
    EXPECT_EQ(net->fused_into(p->node_index(next)), Network::kNotFused);
    Pair pr(p, test::engine("cpu"));
    for (int64_t m : {3, 7}) pr.run({{"x", test::random_tensor(DataType::f32, Shape{m, 4}, static_cast<uint64_t>(m))}});
}

TEST(FusionPlan, ProducerWithTwoUsersOrAnOutput_IsNotFused) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 4}, DataType::f32));
    p->add_node("a", "eltwise", {"x", "x"}, elt("add"));
    p->add_node("r1", "activation", {"a"}, act("relu"));
    p->add_node("r2", "activation", {"a"}, act("tanh"));
    p->add_node("b", "eltwise", {"r1", "r2"}, elt("mul"));
    p->add_node("s", "activation", {"b"}, act("sigmoid"));
    p->add_output("b");   // an output: its value must survive
    p->add_output("s");
    p->build();
    auto net = Network::create(p, test::engine("cpu"));
    EXPECT_TRUE(net->fused_chain(p->node_index("a")).empty());     // two users
    EXPECT_TRUE(net->fused_chain(p->node_index("b")).empty());     // a network output
    EXPECT_EQ(net->fused_chain(p->node_index("r1")).size(), 0u);   // activation takes no post-ops
}

TEST(FusionRun, ConvAddReluWithBroadcastInput_RunsFusedAndMatchesTheReference) {
    Pair pr(conv_add_relu(), test::engine("cpu"));
    uint64_t seed = 1;
    for (int64_t h : {5, 8, 5, 11}) {
        SCOPED_TRACE("h = " + std::to_string(h));
        pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 3, h, h}, seed++)},
                {"y", test::random_tensor(DataType::f32, Shape{1, 8, 1, 1}, seed++)}});
        EXPECT_EQ(stats_of(pr.fused, "conv").counters.fused_runs, 1u);
        EXPECT_EQ(stats_of(pr.fused, "add").impl, "fused");
        EXPECT_EQ(stats_of(pr.fused, "relu").impl, "fused");
        EXPECT_EQ(stats_of(pr.fused, "add").counters.executions, 0u);
        EXPECT_EQ(stats_of(pr.fused, "relu").counters.allocations, 0u);   // the conv's buffer holds the result
    }
    EXPECT_EQ(pr.fused.cumulative().fused_runs, 4u);
    EXPECT_EQ(pr.fused.cumulative().unfused_runs, 0u);
    EXPECT_EQ(pr.ref.cumulative().fused_runs, 0u);
}

TEST(FusionRun, InputThatWouldGrowTheResult_RunsUnfusedThenFusedAgain) {
    Pair pr(conv_add_relu(), test::engine("cpu"));
    struct Step {
        Shape y;
        bool fused;
    };
    // y [2,8,h,h] with a batch-1 conv: the add's output has batch 2, larger
    // than the conv's result, so the post-op cannot write in place.
    const int64_t h = 6;
    const std::vector<Step> steps = {{{1, 8, 1, 1}, true}, {{2, 8, h, h}, false}, {{2, 8, h, h}, false},
                                     {{1, 8, h, h}, true}, {{2, 8, 1, 1}, false}, {{1, 1, 1, h}, true}};
    uint64_t seed = 3;
    for (size_t k = 0; k < steps.size(); ++k) {
        SCOPED_TRACE("step " + std::to_string(k) + " y " + steps[k].y.to_string());
        pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 3, h, h}, seed++)},
                {"y", test::random_tensor(DataType::f32, steps[k].y, seed++)}});
        const NodeStats& conv = stats_of(pr.fused, "conv");
        EXPECT_EQ(conv.counters.fused_runs, steps[k].fused ? 1u : 0u);
        EXPECT_EQ(conv.counters.unfused_runs, steps[k].fused ? 0u : 1u);
        EXPECT_EQ(stats_of(pr.fused, "add").counters.executions, steps[k].fused ? 0u : 1u);
        EXPECT_EQ(stats_of(pr.fused, "relu").counters.executions, steps[k].fused ? 0u : 1u);
    }
    EXPECT_EQ(pr.fused.cumulative().fused_runs, 3u);
    EXPECT_EQ(pr.fused.cumulative().unfused_runs, 3u);
}

TEST(FusionRun, ExtraInputComputedAfterTheProducer_IsReadyWhenTheChainRuns) {
    // Declaration order puts `e` after the conv; the chain block moves the
    // conv next to the add, after `e`.
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{1, 2, Dimension(), Dimension()}, DataType::f32));
    p->add_input("y", Layout(PartialShape{1, 4, 1, 1}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{4, 2, 3, 3}, 2));
    p->add_node("conv", "convolution", {"x", "w"}, pads1());
    p->add_node("e", "activation", {"y"}, act("tanh"));
    p->add_node("mul", "eltwise", {"e", "conv"}, elt("mul"));   // main input is input 1
    p->add_output("mul");
    p->build();
    Pair pr(p, test::engine("cpu"));
    for (int64_t h : {4, 7}) {
        pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 2, h, h}, static_cast<uint64_t>(h))},
                {"y", test::random_tensor(DataType::f32, Shape{1, 4, 1, 1}, 9)}});
        EXPECT_EQ(stats_of(pr.fused, "conv").counters.fused_runs, 1u);
    }
    const auto& order = pr.fused.execution_order();
    auto pos = [&](const std::string& n) {
        return std::find(order.begin(), order.end(), p->node_index(n)) - order.begin();
    };
    EXPECT_LT(pos("e"), pos("conv"));
    EXPECT_EQ(pos("conv") + 1, pos("mul"));
}

TEST(FusionRun, FullyConnectedGeluAndEltwiseSigmoid_MatchTheReference) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 16}, DataType::f32));
    p->add_input("z", Layout(PartialShape{Dimension(), 8}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 16}, 4));
    p->add_node("fc", "fully_connected", {"x", "w"});
    p->add_node("g", "activation", {"fc"}, act("gelu"));
    p->add_node("s", "eltwise", {"g", "z"}, elt("sub"));
    p->add_node("sig", "activation", {"s"}, act("sigmoid"));
    p->add_output("sig");
    p->build();
    Pair pr(p, test::engine("cpu"));
    for (int64_t m : {1, 3, 13, 3}) {
        SCOPED_TRACE("m = " + std::to_string(m));
        pr.run({{"x", test::random_tensor(DataType::f32, Shape{m, 16}, static_cast<uint64_t>(m))},
                {"z", test::random_tensor(DataType::f32, Shape{m, 8}, static_cast<uint64_t>(m + 50))}});
        EXPECT_EQ(stats_of(pr.fused, "fc").counters.fused_runs, 1u);
        EXPECT_EQ(stats_of(pr.fused, "sig").impl, "fused");
    }
    // An eltwise producer takes post-ops too.
    auto q = std::make_shared<Program>(test::registry());
    q->add_input("a", Layout(PartialShape{Dimension(), 5}, DataType::f32));
    q->add_input("b", Layout(PartialShape{1, 5}, DataType::f32));
    q->add_node("add", "eltwise", {"a", "b"}, elt("add"));
    q->add_node("sig", "activation", {"add"}, act("sigmoid"));
    q->add_output("sig");
    q->build();
    Pair pq(q, test::engine("cpu"));
    for (int64_t m : {2, 9}) {
        pq.run({{"a", test::random_tensor(DataType::f32, Shape{m, 5}, 1)},
                {"b", test::random_tensor(DataType::f32, Shape{1, 5}, 2)}});
        EXPECT_EQ(stats_of(pq.fused, "add").counters.fused_runs, 1u);
    }
}

// ---- oneDNN post-ops on the cpu engine -------------------------------------------

// A fused op's host impl that counts its runs (the reference impl of its op):
// the oneDNN impls apply the fused ops inside their primitive where they can.
class CountedHostImpl final : public Impl {
public:
    CountedHostImpl(std::unique_ptr<Impl> impl, size_t* runs) : impl_(std::move(impl)), runs_(runs) {}
    void execute(ExecContext& ctx) override {
        ++*runs_;
        impl_->execute(ctx);
    }
    std::string name() const override { return impl_->name(); }
    bool is_dynamic() const override { return true; }

private:
    std::unique_ptr<Impl> impl_;
    size_t* runs_;
};

std::shared_ptr<Impl> counted_host_impl(const std::string& op, const Attributes& attrs, const Layout& out,
                                        size_t* runs) {
    for (const RegisteredImpl* ri : test::registry()->impls(op, "cpu")) {
        if (!ri->entry.reference || ri->entry.shape_type != ShapeType::dynamic_shape) continue;
        KernelParams p;
        p.node = op;
        p.op = &test::registry()->op(op).def;
        p.attrs = &attrs;
        p.inputs = {out};
        p.outputs = {out};
        p.engine = test::engine("cpu").get();
        return std::make_shared<CountedHostImpl>(ri->entry.create(p), runs);
    }
    throw Error("no dynamic reference impl of " + op);
}

MemoryPtr device_copy(const EnginePtr& eng, Stream& stream, const HostTensor& t) {
    auto m = std::make_shared<Memory>(eng->allocate(t.bytes()), t.layout());
    m->buffer()->write(stream, t.data(), 0, t.bytes());
    return m;
}

// fully_connected x [m, 16] * w^T -> + bias [8] -> * r (its left operand;
// [1, 8] broadcast over the rows, or [m, 8]) -> tanh, on every oneDNN impl,
// for a node whose rows are static (an impl per shape) and one whose rows
// vary (one dynamic impl over changing rows and broadcasts). With static
// rows on AVX-512 the plans are oneDNN's brgemm kernels and every fused op is
// a post-op: none runs on the host. Without AVX-512, and with varying rows,
// oneDNN runs its gemm-based matmul, whose binary post-ops cost more than the
// host pass: the host impls run them there (dnnl_plan_with_post_ops). Each
// output is compared with the same math in double.
TEST(FusionRun, OneDnnImpls_ApplyBiasResidualAndActivationInsideThePrimitive) {
    const auto reg = test::registry();
    const EnginePtr eng = test::engine("cpu");
    const auto stream = eng->create_stream();
    const Attributes none, add = elt("add"), mul = elt("mul");
    Attributes tanh_attrs = act("tanh");   // as the flow gives them: with the defaults
    tanh_attrs.set("alpha", 0.0);
    tanh_attrs.set("beta", 0.0);
    const OpDefinition& eltwise = reg->op("eltwise").def;
    const OpDefinition& activation = reg->op("activation").def;
    size_t host_runs = 0;
    const HostTensor w = test::random_tensor(DataType::f32, Shape{8, 16}, 1);
    const HostTensor bias = test::random_tensor(DataType::f32, Shape{8}, 2);
    const auto varying_rows = std::make_shared<const std::vector<Layout>>(
        std::vector<Layout>{Layout(PartialShape{Dimension(), 16}, DataType::f32), w.layout()});
    struct Step {
        int64_t m;
        int64_t r_rows;
    };
    const std::vector<Step> steps = {{1, 1}, {5, 5}, {5, 1}, {3, 3}, {1, 1}, {7, 1}, {5, 5}};
    size_t dnnl_impls = 0;
    for (const RegisteredImpl* ri : reg->impls("fully_connected", "cpu")) {
        for (const bool static_rows : {true, false}) {
            if (ri->entry.name.find("dnnl") == std::string::npos) continue;
            dnnl_impls += static_rows ? 1 : 0;
            const bool dynamic = ri->entry.shape_type == ShapeType::dynamic_shape;
            std::unique_ptr<Impl> impl;
            std::unique_ptr<ImplState> state;
            uint64_t seed = 10;
            for (const Step& st : steps) {
                SCOPED_TRACE(ri->entry.name + (static_rows ? " static" : " varying") + " rows, m " +
                             std::to_string(st.m) + ", r rows " + std::to_string(st.r_rows));
                const HostTensor x = test::random_tensor(DataType::f32, Shape{st.m, 16}, ++seed);
                const HostTensor r = test::random_tensor(DataType::f32, Shape{st.r_rows, 8}, ++seed);
                const Layout out(PartialShape{st.m, 8}, DataType::f32);
                KernelParams p;
                p.node = "fc";
                p.op = &reg->op("fully_connected").def;
                p.attrs = &none;
                p.inputs = {x.layout(), w.layout()};
                p.outputs = {out};
                p.engine = eng.get();
                p.node_inputs = static_rows ? std::make_shared<const std::vector<Layout>>(p.inputs) : varying_rows;
                p.fused_ops = {{"bias",
                                &eltwise,
                                &add,
                                {out, bias.layout()},
                                0,
                                out,
                                counted_host_impl("eltwise", add, out, &host_runs)},
                               {"res",
                                &eltwise,
                                &mul,
                                {r.layout(), out},
                                1,
                                out,
                                counted_host_impl("eltwise", mul, out, &host_runs)},
                               {"act",
                                &activation,
                                &tanh_attrs,
                                {out},
                                0,
                                out,
                                counted_host_impl("activation", tanh_attrs, out, &host_runs)}};
                ASSERT_EQ(ri->entry.validate(p), "");
                if (!impl || !dynamic || static_rows) {
                    impl = ri->entry.create(p);
                    state = impl->create_state();
                }
                const std::vector<MemoryPtr> ins = {device_copy(eng, *stream, x), device_copy(eng, *stream, w)};
                const std::vector<MemoryPtr> fused = {device_copy(eng, *stream, bias), device_copy(eng, *stream, r)};
                const std::vector<MemoryPtr> outs = {std::make_shared<Memory>(eng->allocate(out.bytes()), out)};
                ExecContext ctx{*stream, p, ins, outs};
                ctx.fused_inputs = &fused;
                ctx.state = state.get();
                host_runs = 0;
                impl->execute(ctx);
                if (static_rows) {
                    // oneDNN's gemm-based matmul (its only one without
                    // AVX-512 in the Debian build) leaves every fused op to
                    // the host; its brgemm kernels take all of them. "gemm"
                    // anywhere in oneDNN's impl string, as the plan's rule
                    // (slow_binary_post_ops) reads it.
                    const std::string info = dnnl_impl_info(*impl);
                    if (info.find("gemm") != std::string::npos)
                        EXPECT_EQ(host_runs, 3u) << info << ": a gemm-based plan took binary post-ops";
                    else EXPECT_EQ(host_runs, 0u) << info << ": fused ops ran on the host";
                }
                HostTensor got(DataType::f32, Shape{st.m, 8});
                outs[0]->buffer()->read(*stream, got.data(), 0, got.bytes());
                const float* xv = x.as<float>();
                const float* wv = w.as<float>();
                double worst = 0;
                for (int64_t i = 0; i < st.m; ++i)
                    for (int64_t n = 0; n < 8; ++n) {
                        double acc = bias.as<float>()[n];
                        for (int64_t k = 0; k < 16; ++k) acc += double(xv[i * 16 + k]) * wv[n * 16 + k];
                        acc *= r.as<float>()[(st.r_rows == 1 ? 0 : i) * 8 + n];
                        worst = std::max(worst, std::abs(std::tanh(acc) - got.as<float>()[i * 8 + n]));
                    }
                EXPECT_LE(worst, 1e-5);
            }
        }
    }
    EXPECT_EQ(dnnl_impls, 2u);
}

TEST(FusionRun, FusedOpThatCannotRunAtAll_IsAnErrorNamingTheNode) {
    Pair pr(conv_add_relu(), test::engine("cpu"));
    pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 3, 4, 4}, 1)},
            {"y", test::random_tensor(DataType::f32, Shape{1, 8, 1, 1}, 2)}});
    // y with 5 channels broadcasts neither into the conv's 8 nor out of it.
    pr.fused.set_input("x", test::random_tensor(DataType::f32, Shape{1, 3, 4, 4}, 3));
    pr.fused.set_input("y", test::random_tensor(DataType::f32, Shape{1, 5, 1, 1}, 4));
    try {
        pr.fused.infer();
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.context().node, "add") << e.what();
    }
    // The request recovers with good inputs.
    pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 3, 4, 4}, 5)},
            {"y", test::random_tensor(DataType::f32, Shape{1, 8, 1, 1}, 6)}});
    EXPECT_EQ(stats_of(pr.fused, "conv").counters.fused_runs, 1u);
}

// ---- OpenCL ------------------------------------------------------------------

class OclCacheDir {
public:
    OclCacheDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "dynrt_test_XXXXXX").string();
        if (mkdtemp(tmpl.data()) != nullptr) {
            dir_ = tmpl;
            setenv("DYNRT_CACHE_DIR", dir_.c_str(), 1);
        }
    }
    ~OclCacheDir() {
        std::error_code ec;
        if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    }

private:
    std::string dir_;
};
const OclCacheDir kOclCacheDir;

EnginePtr ocl_engine() {
    if (!test::registry()->has_engine("ocl")) return nullptr;
    try {
        return test::engine("ocl");
    } catch (const Error&) {
        return nullptr;
    }
}

// Whether the first ocl impl of `op` declares it applies fused post-ops.
bool ocl_fuses(const std::string& op) {
    const auto impls = test::registry()->impls(op, "ocl");
    return !impls.empty() && impls.front()->entry.fused_ops;
}

void ocl_fusion_sweep(bool dynamic) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    NetworkOptions opt;
    opt.use_dynamic_impls = dynamic;
    Pair pr(conv_add_relu(), eng, opt);
    const bool fuses = ocl_fuses("convolution");
    std::set<int64_t> seen;
    uint64_t seed = 1;
    // Broadcast y (fusable where the ocl impl takes post-ops), then a y that
    // grows the result (never fusable); outputs always match the cpu reference.
    // Full-size y changing with h checks the shape-agnostic kernel reads the
    // fused input's dims at run time.
    const std::vector<std::pair<int64_t, Shape>> steps = {
        {5, {1, 8, 1, 1}}, {9, {1, 8, 9, 9}}, {6, {2, 8, 6, 6}}, {7, {1, 8, 7, 7}}, {5, {1, 8, 1, 1}}};
    for (const auto& [h, ys] : steps) {
        SCOPED_TRACE("h = " + std::to_string(h) + " y " + ys.to_string());
        pr.run({{"x", test::random_tensor(DataType::f32, Shape{1, 3, h, h}, seed++)},
                {"y", test::random_tensor(DataType::f32, ys, seed++)}});
        const bool grows = ys[0] == 2;
        const NodeStats& conv = stats_of(pr.fused, "conv");
        EXPECT_EQ(conv.counters.fused_runs, fuses && !grows ? 1u : 0u);
        EXPECT_EQ(conv.counters.unfused_runs, fuses && !grows ? 0u : 1u);
        // A critical op's background static build may serve a revisited size.
        const bool revisit = !seen.insert(h).second;
        EXPECT_NE(conv.impl.find(dynamic && !revisit ? "_ocl_dynamic"
                                 : dynamic           ? "_ocl_"
                                                     : "_ocl_static"),
                  std::string::npos)
            << conv.impl;
    }
}

// fully_connected -> gelu -> sub(z) -> sigmoid, gemm -> add(bias row) -> relu
// and eltwise -> sigmoid on the device: the matrix and eltwise kernels apply
// the post-ops (the producer's impl is a device impl and every run is fused),
// across row counts that take the skinny (M <= 16) and the tiled kernels.
void ocl_matmul_fusion_sweep(bool dynamic) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    ASSERT_TRUE(ocl_fuses("fully_connected"));
    ASSERT_TRUE(ocl_fuses("gemm"));
    ASSERT_TRUE(ocl_fuses("eltwise"));
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 16}, DataType::f32));
    p->add_input("z", Layout(PartialShape{Dimension(), 8}, DataType::f32));
    p->add_input("a", Layout(PartialShape{2, Dimension(), 12}, DataType::f32));
    p->add_input("bias", Layout(PartialShape{1, 1, 8}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 16}, 4));
    p->add_constant("m", test::random_tensor(DataType::f32, Shape{12, 8}, 5));
    p->add_node("fc", "fully_connected", {"x", "w"});
    p->add_node("g", "activation", {"fc"}, act("gelu"));
    p->add_node("s", "eltwise", {"g", "z"}, elt("sub"));
    p->add_node("sig", "activation", {"s"}, act("sigmoid"));
    p->add_node("mm", "gemm", {"a", "m"});
    p->add_node("addb", "eltwise", {"mm", "bias"}, elt("add"));
    p->add_node("r", "activation", {"addb"}, act("relu"));
    p->add_node("e", "eltwise", {"a", "a"}, elt("mul"));
    p->add_node("es", "activation", {"e"}, act("sigmoid"));
    p->add_output("sig");
    p->add_output("r");
    p->add_output("es");
    p->build();
    NetworkOptions opt;
    opt.use_dynamic_impls = dynamic;
    InferRequest fused(Network::create(p, eng, opt));
    InferRequest ref(Network::create(p, test::engine("cpu"), Pair::unfused(opt)));
    uint64_t seed = 1;
    for (int64_t rows : {1, 3, 17, 13, 40, 3}) {
        SCOPED_TRACE("rows = " + std::to_string(rows));
        const std::vector<std::pair<std::string, HostTensor>> in = {
            {"x", test::random_tensor(DataType::f32, Shape{rows, 16}, seed++)},
            {"z", test::random_tensor(DataType::f32, Shape{rows, 8}, seed++)},
            {"a", test::random_tensor(DataType::f32, Shape{2, rows, 12}, seed++)},
            {"bias", test::random_tensor(DataType::f32, Shape{1, 1, 8}, seed++)}};
        for (const auto& [n, v] : in) {
            fused.set_input(n, v);
            ref.set_input(n, v);
        }
        fused.infer();
        ref.infer();
        for (size_t o = 0; o < 3; ++o) {
            const HostTensor x = fused.get_output(o), y = ref.get_output(o);
            ASSERT_EQ(x.shape(), y.shape()) << o;
            EXPECT_LE(test::max_abs_diff(x, y), 1e-5) << o;
        }
        for (const char* producer : {"fc", "mm", "e"}) {
            const NodeStats& st = stats_of(fused, producer);
            EXPECT_EQ(st.counters.fused_runs, 1u) << producer;
            EXPECT_NE(st.impl.find("_ocl_"), std::string::npos) << producer << ": " << st.impl;
        }
        for (const char* tail : {"sig", "r", "es"}) EXPECT_EQ(stats_of(fused, tail).impl, "fused") << tail;
    }
}

TEST(FusionOcl, MatmulAndEltwiseProducers_DynamicImplsApplyPostOps) { ocl_matmul_fusion_sweep(true); }
TEST(FusionOcl, MatmulAndEltwiseProducers_StaticImplsApplyPostOps) { ocl_matmul_fusion_sweep(false); }

TEST(FusionOcl, DynamicImpl_FusesWhereItCanAndMatchesCpu) { ocl_fusion_sweep(true); }
TEST(FusionOcl, StaticImpls_FuseWhereTheyCanAndMatchCpu) { ocl_fusion_sweep(false); }

// A view of a fused node's output reads the producer's buffer: as BERT's
// attention heads are exported, x -> MatMul -> Add(bias) (fused into the
// MatMul) -> Reshape (a view) -> Transpose. The producer's buffer must live
// until the view's last user: when it was freed at the view, the transpose's
// output took the same buffer from the pool and the transpose read what it
// had just written (the first head right, the others wrong).
// The transpose is no network output, whose buffer would be pinned.
TEST(FusionRun, ViewOfAFusedOutput_KeepsTheProducersBufferUntilTheViewsUsersRan) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension(), 8}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 8}, 3));
    p->add_constant("bias", test::random_tensor(DataType::f32, Shape{8}, 4));
    p->add_constant("heads", HostTensor::from_int64(DataType::i64, Shape{4}, {0, 0, 2, 4}));
    p->add_node("mm", "gemm", {"x", "w"});
    p->add_node("linear", "eltwise", {"mm", "bias"}, elt("add"));
    p->add_node("view", "reshape", {"linear", "heads"});
    Attributes perm;
    perm.set("perm", std::vector<int64_t>{0, 2, 1, 3});
    p->add_node("t", "transpose", {"view"}, perm);
    p->add_node("out", "activation", {"t"}, act("sigmoid"));   // t is no output: its buffer is pooled
    p->add_output("out");
    p->build();
    std::vector<std::pair<std::string, EnginePtr>> engines{{"cpu", test::engine("cpu")}};
    if (EnginePtr ocl = ocl_engine()) engines.emplace_back("ocl", ocl);
    for (const auto& [device, eng] : engines) {
        SCOPED_TRACE(device);
        NetworkOptions off;
        off.views = false;
        Pair pr(p, eng);
        InferRequest plain(Network::create(p, test::engine("cpu"), Pair::unfused(off)));
        uint64_t seed = 10;
        for (int64_t s : {5, 7, 3, 7}) {
            SCOPED_TRACE("seq = " + std::to_string(s));
            const HostTensor x = test::random_tensor(DataType::f32, Shape{2, s, 8}, seed++);
            pr.run({{"x", x}});
            plain.set_input("x", x);
            plain.infer();
            EXPECT_LE(test::max_abs_diff(pr.fused.get_output(0), plain.get_output(0)), 1e-5);
            EXPECT_EQ(stats_of(pr.fused, "mm").counters.fused_runs, 1u);
            EXPECT_EQ(stats_of(pr.fused, "view").counters.views, 1u);
        }
    }
}

// The same through a convolution with a fused silu, as converted OCR models
// spell it: conv -> Mul(x, Sigmoid(x)) -> Reshape to a target computed at
// run time, Concat(Shape(x)[0:2], [-1]) -> Transpose -> Softmax. The reshape
// views the convolution's buffer, which must outlive the transpose.
TEST(FusionRun, RuntimeTargetReshapeOfAFusedConv_MatchesTheUnfusedRunWithoutViews) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(PartialShape{Dimension(), 3, Dimension(), Dimension()}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{8, 3, 3, 3}, 5, -0.5, 0.5));
    p->add_constant("minus_one", HostTensor::from_int64(DataType::i64, Shape{1}, {-1}));
    p->add_node("conv", "convolution", {"x", "w"}, pads1());
    p->add_node("silu", "activation", {"conv"}, act("silu"));
    Attributes first_two;
    first_two.set("end", int64_t{2});
    p->add_node("dims", "shape_of", {"silu"}, first_two);
    Attributes axis0;
    axis0.set("axis", int64_t{0});
    p->add_node("target", "concat", {"dims", "minus_one"}, axis0);
    p->add_node("flat", "reshape", {"silu", "target"});
    Attributes perm;
    perm.set("perm", std::vector<int64_t>{0, 2, 1});
    p->add_node("t", "transpose", {"flat"}, perm);
    Attributes last;
    last.set("axis", int64_t{-1});
    p->add_node("out", "softmax", {"t"}, last);
    p->add_output("out");
    p->build();
    std::vector<std::pair<std::string, EnginePtr>> engines{{"cpu", test::engine("cpu")}};
    if (EnginePtr ocl = ocl_engine()) engines.emplace_back("ocl", ocl);
    for (const auto& [device, eng] : engines) {
        SCOPED_TRACE(device);
        NetworkOptions off;
        off.views = false;
        off.fusion = false;
        InferRequest passes(Network::create(p, eng)), plain(Network::create(p, test::engine("cpu"), off));
        uint64_t seed = 20;
        for (const auto& [b, h, w] : std::vector<std::array<int64_t, 3>>{{1, 8, 16}, {2, 8, 24}, {1, 6, 10}}) {
            SCOPED_TRACE("x = [" + std::to_string(b) + ", 3, " + std::to_string(h) + ", " + std::to_string(w) + "]");
            const HostTensor x = test::random_tensor(DataType::f32, Shape{b, 3, h, w}, seed++);
            for (InferRequest* r : {&passes, &plain}) {
                r->set_input("x", x);
                r->infer();
            }
            EXPECT_LE(test::max_abs_diff(passes.get_output(0), plain.get_output(0)), 1e-5);
            EXPECT_EQ(stats_of(passes, "conv").counters.fused_runs, 1u);
            EXPECT_EQ(stats_of(passes, "flat").counters.views, 1u);
        }
    }
}

}   // namespace
}   // namespace dynrt
