// The async hand-over on OpenCL: a critical op (fully_connected, gemm) on a new
// shape runs its shape-agnostic impl at once while the static impl is built in
// the background; the next run on that shape picks the static impl up, with the
// same results as the cpu reference. Without async compilation the static impl
// is built synchronously. The program binary cache lets a second engine build
// every kernel without a source build. Skips without an ocl engine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/ocl_api.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

namespace fs = std::filesystem;

// The folders fresh_cache_dir made, removed when the test program exits.
struct CacheDirs {
    std::vector<fs::path> made;
    ~CacheDirs() {
        std::error_code ec;
        for (const fs::path& d : made) fs::remove_all(d, ec);
    }
};

// A fresh binary-cache folder per call, so builds counted here do not depend
// on earlier runs (or the user's cache).
std::string fresh_cache_dir(const std::string& tag) {
    static int counter = 0;
    static CacheDirs dirs;
    const fs::path dir = fs::temp_directory_path() /
                         ("dynrt_ocl_async_test_" + std::to_string(::getpid()) + "_" + tag + std::to_string(++counter));
    fs::create_directories(dir);
    dirs.made.push_back(dir);
    setenv("DYNRT_CACHE_DIR", dir.c_str(), 1);
    return dir.string();
}

const bool kCacheDirSet = [] {
    fresh_cache_dir("init");
    return true;
}();

EnginePtr ocl_engine() {
    if (!test::registry()->has_engine("ocl")) return nullptr;
    try {
        return test::engine("ocl");
    } catch (const Error&) {
        return nullptr;   // no OpenCL platform on this machine
    }
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Sums of K = 40 products of values in [-1, 1) in float vs the double reference.
constexpr double kTol = 1e-4;
constexpr int64_t kK = 40, kN = 24;

struct Case {
    std::string op;
    std::shared_ptr<Program> program;
    HostTensor x;   // the one runtime input, "in0"
};

// fully_connected x [?, K] * w[N, K]^T + bias; gemm a [?, ?, K] @ b [K, N]. The
// weights are constants, so the node's only dynamic input is in0.
Case make_case(const std::string& op, int64_t rows) {
    Case c;
    c.op = op;
    if (op == "fully_connected") {
        const HostTensor w = test::random_tensor(DataType::f32, Shape{kN, kK}, 1);
        const HostTensor b = test::random_tensor(DataType::f32, Shape{kN}, 2);
        c.program = test::single_node_program(
            op, {Layout(PartialShape{Dimension(), kK}, DataType::f32), w.layout(), b.layout()}, Attributes(),
            {{1, w}, {2, b}});
        c.x = test::random_tensor(DataType::f32, Shape{rows, kK}, 3);
    } else {
        const HostTensor b = test::random_tensor(DataType::f32, Shape{kK, kN}, 4);
        Attributes a;
        a.set("alpha", 0.5);
        c.program = test::single_node_program(
            op, {Layout(PartialShape{Dimension(), Dimension(), kK}, DataType::f32), b.layout()}, a, {{1, b}});
        c.x = test::random_tensor(DataType::f32, Shape{2, rows, kK}, 5);
    }
    return c;
}

HostTensor cpu_reference(const Case& c) { return test::run_once(c.program, {c.x}); }

const NodeStats& node_stats(const InferRequest& req) {
    for (const NodeStats& s : req.last_run().nodes)
        if (s.node == "node") return s;
    ADD_FAILURE() << "no stats for node";
    static const NodeStats none;
    return none;
}

// rows: 5 runs the skinny kernel, 40 the tiled one.
void expect_hand_over(const std::string& op, int64_t rows) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const Case c = make_case(op, rows);
    const HostTensor want = cpu_reference(c);
    NetworkOptions opts;
    opts.async_compile = true;
    opts.async_compile_after = 1;   // queue on the shape's first run
    auto net = Network::create(c.program, eng, opts);
    InferRequest req(net);

    req.set_input("in0", c.x);
    req.infer();
    const NodeStats first = node_stats(req);
    EXPECT_TRUE(ends_with(first.impl, "_ocl_dynamic")) << first.impl;
    EXPECT_EQ(first.counters.dynamic_impl_runs, 1u);
    EXPECT_EQ(first.counters.async_builds_queued, 1u);
    EXPECT_EQ(first.counters.static_builds, 0u);
    EXPECT_LE(test::max_abs_diff(req.get_output(0), want), kTol) << "dynamic impl";

    net->wait_for_background_builds();
    req.set_input("in0", c.x);
    req.infer();
    const NodeStats second = node_stats(req);
    EXPECT_TRUE(ends_with(second.impl, "_ocl_static")) << second.impl;
    EXPECT_EQ(second.counters.async_builds_picked, 1u);
    EXPECT_EQ(second.counters.dynamic_impl_runs, 0u);
    EXPECT_EQ(second.counters.static_builds, 0u);
    EXPECT_LE(test::max_abs_diff(req.get_output(0), want), kTol) << "static impl";

    // Later runs stay on the static impl; nothing more is queued.
    req.infer();
    EXPECT_TRUE(ends_with(node_stats(req).impl, "_ocl_static"));
    EXPECT_EQ(node_stats(req).counters.async_builds_queued, 0u);
    EXPECT_EQ(node_stats(req).counters.async_builds_picked, 0u);
}

TEST(OclAsync, FullyConnectedRunsDynamicFirstThenPicksUpTheStaticImpl) {
    expect_hand_over("fully_connected", 5);
    expect_hand_over("fully_connected", 40);
}

TEST(OclAsync, GemmRunsDynamicFirstThenPicksUpTheStaticImpl) {
    expect_hand_over("gemm", 5);
    expect_hand_over("gemm", 40);
}

TEST(OclAsync, ByDefaultAShapeSeenOnceBuildsNothingAndOneThatStaysIsHandedOver) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const Case c = make_case("gemm", 13);
    const HostTensor want = cpu_reference(c);
    auto net = Network::create(c.program, eng, NetworkOptions());
    InferRequest req(net);
    req.set_input("in0", c.x);
    uint64_t picked = 0;
    for (int run = 1; run <= 2; ++run) {
        req.infer();
        net->wait_for_background_builds();
        const NodeStats& s = node_stats(req);
        // Run 2 queues the build; it runs the dynamic impl unless the build
        // finished before the run's own check for it.
        if (run == 1 || s.counters.async_builds_picked == 0) {
            EXPECT_TRUE(ends_with(s.impl, "_ocl_dynamic")) << "run " << run << ": " << s.impl;
        }
        EXPECT_EQ(s.counters.async_builds_queued, run == 2 ? 1u : 0u) << "run " << run;
        if (run == 1) {
            EXPECT_EQ(s.counters.async_builds_picked, 0u);
        }
        EXPECT_LE(test::max_abs_diff(req.get_output(0), want), kTol) << "run " << run;
        picked += s.counters.async_builds_picked;
    }
    req.infer();
    EXPECT_TRUE(ends_with(node_stats(req).impl, "_ocl_static")) << node_stats(req).impl;
    EXPECT_EQ(picked + node_stats(req).counters.async_builds_picked, 1u);
    EXPECT_LE(test::max_abs_diff(req.get_output(0), want), kTol);
}

TEST(OclAsync, WithoutAsyncCompileTheStaticImplIsBuiltSynchronously) {
    EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (const std::string op : {"fully_connected", "gemm"}) {
        const Case c = make_case(op, 7);
        NetworkOptions opts;
        opts.async_compile = false;
        auto net = Network::create(c.program, eng, opts);
        InferRequest req(net);
        req.set_input("in0", c.x);
        req.infer();
        const NodeStats& s = node_stats(req);
        EXPECT_TRUE(ends_with(s.impl, "_ocl_static")) << op << ": " << s.impl;
        EXPECT_EQ(s.counters.static_builds, 1u) << op;
        EXPECT_EQ(s.counters.dynamic_impl_runs, 0u) << op;
        EXPECT_EQ(s.counters.async_builds_queued, 0u) << op;
        EXPECT_LE(test::max_abs_diff(req.get_output(0), cpu_reference(c)), kTol) << op;
    }
}

// Runs `c` on `eng` through the hand-over (dynamic, background static, static).
void run_hand_over(const Case& c, const EnginePtr& eng) {
    NetworkOptions opts;
    opts.async_compile_after = 1;
    auto net = Network::create(c.program, eng, opts);
    InferRequest req(net);
    req.set_input("in0", c.x);
    req.infer();
    net->wait_for_background_builds();
    req.infer();
    EXPECT_TRUE(ends_with(node_stats(req).impl, "_ocl_static")) << node_stats(req).impl;
    EXPECT_LE(test::max_abs_diff(req.get_output(0), cpu_reference(c)), kTol);
}

TEST(OclAsync, SecondEngineWithTheSameCacheBuildsNothingFromSource) {
    fresh_cache_dir("bincache");
    const test::EnvGuard mode("DYNRT_OCL_BINARY_CACHE");
    setenv("DYNRT_OCL_BINARY_CACHE", "on", 1);   // on every driver (auto leaves it off on PoCL)
    EnginePtr first = ocl_engine();
    if (!first) GTEST_SKIP() << "no ocl engine";
    OclDevice* dev1 = OclDevice::from(*first);
    ASSERT_NE(dev1, nullptr);
    ASSERT_FALSE(dev1->cache_dir().empty());
    const std::vector<Case> cases = {make_case("fully_connected", 5), make_case("fully_connected", 40),
                                     make_case("gemm", 5), make_case("gemm", 40)};
    for (const Case& c : cases) run_hand_over(c, first);
    const OclBuildStats s1 = dev1->build_stats();
    EXPECT_GT(s1.source_builds, 0u);
    EXPECT_EQ(s1.disk_cache_writes, s1.source_builds);

    dev1->clear_program_cache();
    EnginePtr second = ocl_engine();
    ASSERT_NE(second, nullptr);
    OclDevice* dev2 = OclDevice::from(*second);
    EXPECT_EQ(dev2->cache_dir(), dev1->cache_dir());
    for (const Case& c : cases) run_hand_over(c, second);
    const OclBuildStats s2 = dev2->build_stats();
    EXPECT_EQ(s2.source_builds, 0u);
    EXPECT_GT(s2.disk_cache_hits, 0u);
    EXPECT_EQ(s2.disk_cache_rejects, 0u);
    EXPECT_EQ(dev1->build_stats().source_builds, s1.source_builds);
}

}   // namespace
}   // namespace dynrt
