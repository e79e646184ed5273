// State across runs: read_value / assign on request variables. A KV-cache-like
// concat(past, new) grows run after run; with in-place concat the past is never
// copied except when the buffer grows; reset_state() starts again from the
// initial value; reading before assignment without an initial value is an error
// naming the variable. Outputs are checked against rows kept on the host.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

// past = read_value(kv, init [1, 0, 4]); all = concat(past, relu(x)); assign(all);
// out = all + all (so the concat is not itself an output).
// `eng`: the device (cpu when null).
std::shared_ptr<Network> kv_net(bool inplace, bool with_init = true, bool pool = true, int64_t batch = 1,
                                EnginePtr eng = nullptr) {
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

TEST(State, Batch2_ConcatCopies_StillMatchesHostRows) {
    // Rows of two batches interleave in the concat buffer: no in-place (the
    // host impls take dense blocks only); the concat's kernel reads the variable,
    // which aliases the buffer it wrote last run, so it must write a fresh one.
    for (bool pool : {true, false}) {
        auto net = kv_net(true, true, pool, 2);
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
// (padding on the middle axis): the host impls keep the concat copying (see
// Batch2_ConcatCopies_StillMatchesHostRows), the OpenCL activation kernel
// writes its padded view, so on ocl the concat stays in place.
TEST(StateOcl, Batch2_InterleavedRowsStayInPlace) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
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
