// State across runs: read_value / assign on request variables. A KV-cache-like
// concat(past, new) grows run after run; with in-place concat the past is never
// copied except when the buffer grows; reset_state() starts again from the
// initial value; reading before assignment without an initial value is an error
// naming the variable. Outputs are checked against rows kept on the host.
// On the cpu engine the optimised producers (oneDNN's matmul, the host loops)
// write the new rows into the cache in place, batch 2 included, on every step
// after the first; and the shipped KV decode config allocates >= 10x less
// with the ShapePredictor than without.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

// past = read_value(kv, init [1, 0, 4]); all = concat(past, relu(x)); assign(all);
// out = all + all (so the concat is not itself an output).
// `eng`: the device (cpu when null).
std::shared_ptr<Network> kv_net(bool inplace, bool with_init = true, bool pool = true, int64_t batch = 1,
                                EnginePtr eng = nullptr, bool reference_only = false) {
    auto p = std::make_shared<Program>(test::registry(), "kv");
    p->add_input("x", Layout(PartialShape{batch, 1, 4}, DataType::f32));
    Attributes rv;
    rv.set("variable", std::string("kv"));
    rv.set("shape", std::vector<int64_t>{batch, -1, 4});
    if (with_init) rv.set("init_shape", std::vector<int64_t>{batch, 0, 4});
    Attributes relu;
    relu.set("func", std::string("relu"));
    Attributes axis;
    axis.set("axis", int64_t(1));
    Attributes as;
    as.set("variable", std::string("kv"));
    Attributes add;
    add.set("mode", std::string("add"));
    p->add_node("past", "read_value", {}, rv);
    p->add_node("new", "activation", {"x"}, relu);
    p->add_node("all", "concat", {"past", "new"}, axis);
    p->add_node("save", "assign", {"all"}, as);
    p->add_node("out", "eltwise", {"all", "all"}, add);
    p->add_output("out");
    p->build();
    NetworkOptions opt;
    opt.inplace_concat = inplace;
    opt.memory_pool = pool;
    opt.host_reference_only = reference_only;
    return Network::create(p, eng ? eng : test::engine(), opt);
}

using test::node_counters;

// Feeds `steps` tokens and checks every output against the rows seen so far.
void run_steps(InferRequest& r, int steps, uint64_t seed, std::vector<float>& rows) {
    for (int s = 0; s < steps; ++s) {
        const HostTensor x = test::random_tensor(DataType::f32, {1, 1, 4}, seed + uint64_t(s));
        for (int k = 0; k < 4; ++k) rows.push_back(std::max(0.f, x.as<float>()[k]));
        r.set_input("x", x);
        r.infer();
        const HostTensor& out = r.output(0);
        const int64_t n = static_cast<int64_t>(rows.size() / 4);
        ASSERT_EQ(out.shape(), Shape({1, n, 4}));
        for (size_t i = 0; i < rows.size(); ++i) ASSERT_FLOAT_EQ(out.as<float>()[i], 2.f * rows[i]) << "i=" << i;
    }
}

}   // namespace

TEST(State, KvCache_GrowsAcrossRunsAndMatchesHostRows) {
    for (bool inplace : {true, false}) {
        auto net = kv_net(inplace);
        InferRequest r(net);
        std::vector<float> rows;
        run_steps(r, 40, 1, rows);
        const HostTensor kv = r.get_state("kv");
        ASSERT_EQ(kv.shape(), Shape({1, 40, 4}));
        for (size_t i = 0; i < rows.size(); ++i) EXPECT_FLOAT_EQ(kv.as<float>()[i], rows[i]);
        EXPECT_EQ(r.state_names(), std::vector<std::string>{"kv"});
    }
}

TEST(State, Batch2_ReferenceImpls_ConcatCopies_StillMatchesHostRows) {
    // Rows of two batches interleave in the concat buffer: no in-place with the
    // reference impls (they take dense blocks only); the concat's kernel reads
    // the variable, which aliases the buffer it wrote last run, so it must
    // write a fresh one.
    for (bool pool : {true, false}) {
        auto net = kv_net(true, true, pool, 2, nullptr, /*reference_only=*/true);
        InferRequest r(net);
        std::vector<float> rows[2];
        for (int s = 0; s < 12; ++s) {
            const HostTensor x = test::random_tensor(DataType::f32, {2, 1, 4}, uint64_t(50 + s));
            for (int b = 0; b < 2; ++b)
                for (int k = 0; k < 4; ++k) rows[b].push_back(std::max(0.f, x.as<float>()[b * 4 + k]));
            r.set_input("x", x);
            r.infer();
            EXPECT_EQ(node_counters(r, "all").concat_inplace, 0u);
            const HostTensor& out = r.output(0);
            ASSERT_EQ(out.shape(), Shape({2, s + 1, 4}));
            for (int b = 0; b < 2; ++b)
                for (size_t i = 0; i < rows[b].size(); ++i)
                    ASSERT_FLOAT_EQ(out.as<float>()[b * rows[b].size() + i], 2.f * rows[b][i]) << "s=" << s;
        }
    }
}

// The in-place KV cache on `eng`: the concat runs no kernel and copies nothing,
// the past moves only when the buffer grows, and every output matches the rows
// kept on the host.
void inplace_kv_cache(const EnginePtr& eng) {
    auto net = kv_net(true, true, true, 1, eng);
    InferRequest r(net);
    std::vector<float> rows;
    uint64_t grow_copies = 0, concat_copies = 0, steady_copies = 0, grows = 0;
    for (int s = 0; s < 60; ++s) {
        run_steps(r, 1, uint64_t(s), rows);
        const Counters& all = node_counters(r, "all");
        const Counters& past = node_counters(r, "past");
        concat_copies += r.last_run().totals.concat_bytes_copied;
        EXPECT_EQ(all.executions, 0u);
        if (s > 0) {
            EXPECT_EQ(all.concat_inplace, 1u);
        }
        if (all.allocations) {
            ++grows;
            grow_copies += past.state_bytes_copied;
            // The past moves into the new buffer once: its rows, nothing more.
            EXPECT_EQ(past.state_bytes_copied, uint64_t(s) * 4 * sizeof(float));
        } else {
            steady_copies += past.state_bytes_copied;
        }
    }
    EXPECT_EQ(concat_copies, 0u);
    EXPECT_EQ(steady_copies, 0u);
    EXPECT_GT(grow_copies, 0u);
    EXPECT_LE(grows, 8u);   // predictor: 10 rows ahead once the growth is regular
}

TEST(State, InplaceConcat_PastNeverCopiedExceptOnGrowth) { inplace_kv_cache(test::engine()); }

TEST(StateOcl, InplaceConcat_PastNeverCopiedExceptOnGrowth) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    inplace_kv_cache(eng);
}

// With batch 2 the new rows interleave with the past in the concat buffer
// (padding on the middle axis): the reference impls keep the concat copying
// (see Batch2_ReferenceImpls_ConcatCopies_StillMatchesHostRows); the OpenCL
// activation kernel writes its padded view, and so does the cpu engine's
// optimised loop (through the output's strides): the concat stays in place.
void batch2_interleaved_in_place(const EnginePtr& eng) {
    InferRequest r(kv_net(true, true, true, 2, eng));
    std::vector<float> rows[2];
    for (int s = 0; s < 24; ++s) {
        const HostTensor x = test::random_tensor(DataType::f32, {2, 1, 4}, uint64_t(90 + s));
        for (int b = 0; b < 2; ++b)
            for (int k = 0; k < 4; ++k) rows[b].push_back(std::max(0.f, x.as<float>()[b * 4 + k]));
        r.set_input("x", x);
        r.infer();
        if (s > 0) {   // the first run has no past to write after
            EXPECT_EQ(node_counters(r, "all").concat_inplace, 1u) << "s=" << s;
            EXPECT_EQ(r.last_run().totals.concat_bytes_copied, 0u) << "s=" << s;
        }
        const HostTensor& out = r.output(0);
        ASSERT_EQ(out.shape(), Shape({2, s + 1, 4}));
        for (int b = 0; b < 2; ++b)
            for (size_t i = 0; i < rows[b].size(); ++i)
                ASSERT_FLOAT_EQ(out.as<float>()[b * rows[b].size() + i], 2.f * rows[b][i]) << "s=" << s;
    }
}

TEST(State, Batch2_InterleavedRowsStayInPlace) { batch2_interleaved_in_place(test::engine("cpu")); }

TEST(StateOcl, Batch2_InterleavedRowsStayInPlace) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    batch2_interleaved_in_place(eng);
}

TEST(State, ResetState_StartsAgainFromTheInitialValue) {
    for (bool inplace : {true, false}) {
        auto net = kv_net(inplace);
        InferRequest r(net);
        std::vector<float> rows;
        run_steps(r, 5, 10, rows);
        r.reset_state();
        EXPECT_TRUE(r.state_names().empty());
        rows.clear();
        run_steps(r, 3, 20, rows);
    }
}

TEST(State, ReadBeforeAssignWithoutInit_ErrorNamesTheVariable) {
    auto net = kv_net(true, /*with_init=*/false);
    InferRequest r(net);
    r.set_input("x", test::random_tensor(DataType::f32, {1, 1, 4}, 1));
    try {
        r.infer();
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.context().node, "past");
        EXPECT_NE(std::string(e.what()).find("variable 'kv' is read before any assign"), std::string::npos) << e.what();
    }
    EXPECT_THROW(r.get_state("kv"), Error);
}

TEST(State, InitInput_IsTheFirstValue) {
    auto p = std::make_shared<Program>(test::registry(), "acc");
    p->add_input("x", Layout(PartialShape{3}, DataType::f32));
    p->add_constant("zero", HostTensor::from_floats({3}, {10.f, 20.f, 30.f}));
    Attributes rv;
    rv.set("variable", std::string("acc"));
    Attributes as = rv;
    Attributes add;
    add.set("mode", std::string("add"));
    p->add_node("prev", "read_value", {"zero"}, rv);
    p->add_node("sum", "eltwise", {"prev", "x"}, add);
    p->add_node("save", "assign", {"sum"}, as);
    p->add_output("sum");
    p->build();
    auto net = Network::create(p, test::engine());
    InferRequest r(net);
    float acc[3] = {10.f, 20.f, 30.f};
    for (int s = 0; s < 4; ++s) {
        const HostTensor x = HostTensor::from_floats({3}, {1.f * s, 2.f, -1.f});
        for (int k = 0; k < 3; ++k) acc[k] += x.as<float>()[k];
        r.set_input("x", x);
        r.infer();
        for (int k = 0; k < 3; ++k) EXPECT_FLOAT_EQ(r.output(0).as<float>()[k], acc[k]);
    }
}

TEST(State, TwoAssignsOfOneVariable_ErrorAndNothingAssigned) {
    auto p = std::make_shared<Program>(test::registry(), "twice");
    p->add_input("x", Layout(PartialShape{2}, DataType::f32));
    Attributes as;
    as.set("variable", std::string("v"));
    p->add_node("a1", "assign", {"x"}, as);
    p->add_node("a2", "assign", {"x"}, as);
    p->add_output("a2");
    p->build();
    auto net = Network::create(p, test::engine());
    InferRequest r(net);
    r.set_input("x", HostTensor::from_floats({2}, {1.f, 2.f}));
    EXPECT_THROW(r.infer(), Error);
    EXPECT_TRUE(r.state_names().empty());
}

TEST(State, TwoRequestsOnTwoThreads_KeepTheirOwnState) {
    auto net = kv_net(true);
    auto work = [&](uint64_t seed, bool* ok) {
        InferRequest r(net);
        std::vector<float> rows;
        run_steps(r, 30, seed, rows);
        *ok = !::testing::Test::HasFailure() && r.get_state("kv").shape() == Shape({1, 30, 4});
    };
    bool ok1 = false, ok2 = false;
    std::thread t1(work, 100, &ok1), t2(work, 200, &ok2);
    t1.join();
    t2.join();
    EXPECT_TRUE(ok1);
    EXPECT_TRUE(ok2);
}

namespace {

// One attention step over a KV cache held in state, as in
// configs/llm_decode_kv.yaml: q, k_new, v_new = fc(x); k_all = concat(
// read_value(k), k_new) (and v); assign both; out = softmax(q k_all^T) v_all.
std::shared_ptr<Network> kv_attention_net(bool inplace, int64_t batch) {
    constexpr int64_t kD = 16, kH = 8;
    auto p = std::make_shared<Program>(test::registry(), "kv_attention");
    p->add_input("x", Layout(PartialShape{batch, 1, kD}, DataType::f32));
    for (const char* w : {"wq", "wk", "wv"}) {
        p->add_constant(w, test::random_tensor(DataType::f32, {kH, kD}, uint64_t(w[1])));
        p->add_constant(std::string("b") + w[1], test::random_tensor(DataType::f32, {kH}, uint64_t(w[1]) + 7));
    }
    p->add_node("q", "fully_connected", {"x", "wq", "bq"});
    for (const char* t : {"k", "v"}) {
        const std::string n(t);
        Attributes rv;
        rv.set("variable", n + "_cache");
        rv.set("shape", std::vector<int64_t>{batch, -1, kH});
        rv.set("init_shape", std::vector<int64_t>{batch, 0, kH});
        p->add_node(n + "_new", "fully_connected", {"x", "w" + n, "b" + n});
        p->add_node(n + "_past", "read_value", {}, rv);
        p->add_node(n + "_all", "concat", {n + "_past", n + "_new"}, test::attr("axis", int64_t(1)));
        p->add_node(n + "_save", "assign", {n + "_all"}, test::attr("variable", n + "_cache"));
    }
    Attributes scores;
    scores.set("transpose_b", true);
    scores.set("alpha", 0.25);
    p->add_node("scores", "gemm", {"q", "k_all"}, scores);
    p->add_node("probs", "softmax", {"scores"}, test::attr("axis", int64_t(-1)));
    p->add_node("out", "gemm", {"probs", "v_all"});
    p->add_output("out");
    p->build();
    NetworkOptions opt;
    opt.inplace_concat = inplace;
    return Network::create(p, test::engine("cpu"), opt);
}

void kv_attention_in_place(int64_t batch) {
    InferRequest on(kv_attention_net(true, batch)), off(kv_attention_net(false, batch));
    for (int s = 0; s < 40; ++s) {
        SCOPED_TRACE("batch " + std::to_string(batch) + " step " + std::to_string(s));
        const HostTensor x = test::random_tensor(DataType::f32, {batch, 1, 16}, uint64_t(300 + s));
        on.set_input("x", x);
        off.set_input("x", x);
        on.infer();
        off.infer();
        test::expect_close(on.output(0), off.output(0), 1e-5, 1e-6);
        EXPECT_GT(off.last_run().totals.concat_bytes_copied, 0u);
        // The first step has no past to write after (with batch 2 the empty
        // past's reader, a reference impl, takes no interleaved padding).
        if (s == 0) continue;
        EXPECT_EQ(on.last_run().totals.concat_bytes_copied, 0u);
        for (const char* t : {"k", "v"}) {
            const std::string n(t);
            EXPECT_EQ(node_counters(on, n + "_all").concat_inplace, 1u) << n;
            EXPECT_EQ(node_counters(on, n + "_all").executions, 0u) << n;
            EXPECT_EQ(on.inst(n + "_new").output_memory()->buffer(), on.inst(n + "_all").output_memory()->buffer());
        }
        for (const auto& node : on.last_run().nodes) {
            if (node.node == "k_new" || node.node == "v_new") {
                EXPECT_EQ(node.impl, "fully_connected_cpu_dnnl_dynamic") << node.node;
            }
        }
    }
    for (const char* v : {"k_cache", "v_cache"}) {
        EXPECT_EQ(on.get_state(v).shape(), Shape({batch, 40, 8}));
        test::expect_close(on.get_state(v), off.get_state(v), 1e-6, 1e-6);
    }
}

}   // namespace

TEST(State, KvAttention_CpuProducersWriteInPlaceEveryStepAfterTheFirst) { kv_attention_in_place(1); }

TEST(State, KvAttentionBatch2_CpuProducersWriteStridedRowsInPlace) { kv_attention_in_place(2); }

// configs/llm_decode_kv.yaml, all 1024 steps on the cpu engine: every concat
// in place (the first step's too: the past is empty, nothing to pad), nothing
// copied, and the ShapePredictor saves >= 10x the allocations (without it
// the concat's buffer, and with it the attention's, grows on every step).
TEST(State, KvDecodeConfig_CpuInPlaceAndPredictorSavesTenfoldAllocations) {
    using namespace dynrt::pipeline;
    const Pipeline p = load_pipeline(std::string(DYNRT_SOURCE_DIR) + "/configs/llm_decode_kv.yaml", test::registry());
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    o.prealloc = "10 16384 2 1.1";   // the defaults (docs/yaml.md)
    const RunResult on = run_pipeline(p, o);
    o.prealloc = "0 0 0 1.0";   // prediction off
    const RunResult off = run_pipeline(p, o);
    for (const RunResult* r : {&on, &off}) {
        ASSERT_EQ(r->runs.size(), 1024u);
        EXPECT_EQ(r->totals.concat_inplace, 2048u);
        EXPECT_EQ(r->totals.concat_bytes_copied, 0u);
    }
    EXPECT_GE(off.totals.allocations, 10 * on.totals.allocations)
        << "allocations: " << on.totals.allocations << " with prediction, " << off.totals.allocations << " without";
    std::printf(
        "llm_decode_kv on cpu: allocations %llu with prediction, %llu without; state bytes copied %llu / %llu\n",
        static_cast<unsigned long long>(on.totals.allocations), static_cast<unsigned long long>(off.totals.allocations),
        static_cast<unsigned long long>(on.totals.state_bytes_copied),
        static_cast<unsigned long long>(off.totals.state_bytes_copied));
}
