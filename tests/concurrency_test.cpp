// Many infer requests of ONE network on several threads at once, over changing
// shapes, on cpu and on ocl, for a few small multi-op graphs:
//   fully_connected -> activation -> eltwise (fused chain, constant weights);
//   gemm of two dynamic inputs;
//   concat -> softmax;
//   shape_of -> gather -> concat -> reshape -> softmax (a shape_of subgraph);
//   convolution -> relu -> convolution + x -> relu (a residual block; on cpu
//   both convolutions reorder into oneDNN's layouts, in one block per thread).
// Background compilation is on and queued on a shape's first run, so static
// impls are built and handed over while other threads run. Every output of
// every run must equal, bit for bit, the output of the same inputs run
// sequentially (a fresh network, one request after the other).
//
// A run may use the shape-agnostic or the static impl of a node (which one
// depends on when the background build finishes); the two must agree bit for
// bit on these graphs, which the sequential references check (one with dynamic
// impls only, one with static impls only).
//
// Also the suite scripts/tsan.sh runs under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

// ThreadSanitizer builds (the tsan preset) link its shared runtime (the
// modules need its symbols; see DYNRT_SANITIZE in CMakeLists.txt). That
// runtime depends on libstdc++, whose initialiser calls the runtime's
// __cxa_atexit interceptor before the runtime has initialised itself: a crash
// before main. An entry in the executable's .preinit_array, which the loader
// runs before any library initialiser, initialises it first (as the static
// runtime does for itself).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DYNRT_TSAN_PREINIT 1
#endif
#endif
#if defined(DYNRT_TSAN_PREINIT) && defined(__clang__)
extern "C" void __tsan_init();
__attribute__((section(".preinit_array"), used)) static void (*const dynrt_tsan_preinit)() = __tsan_init;
#endif

namespace dynrt {
namespace {

constexpr size_t kThreads = 3;
constexpr size_t kRequestsPerThread = 2;
constexpr size_t kSteps = 8;
// Row counts the requests cycle through: decode-like rows, tiles and tails.
// Few distinct values, so static builds are few and each is picked up by
// later runs of its shape. On ocl each static build is a kernel compile
// (hundreds of ms to seconds on PoCL), so fewer shapes there.
const std::vector<int64_t> kCpuRows = {1, 3, 8, 17, 5};
const std::vector<int64_t> kOclRows = {3, 17};

using Inputs = std::vector<std::pair<std::string, HostTensor>>;

struct Graph {
    std::string name;
    std::function<std::shared_ptr<Program>()> build;
    // The inputs of one run: `m` picks the shapes, `seed` the values.
    std::function<Inputs(int64_t m, uint64_t seed)> inputs;
    // A critical op (background static builds): static once every build is in.
    std::string critical;
};

using test::attr;

// x [?, 32] -> fully_connected (w [24, 32]) -> relu -> + z [?, 24]
Graph fc_act_eltwise() {
    Graph g;
    g.name = "fc_act_eltwise";
    g.build = [] {
        auto p = std::make_shared<Program>(test::registry(), "fc_act_eltwise");
        p->add_input("x", Layout(PartialShape{Dimension(), 32}, DataType::f32));
        p->add_input("z", Layout(PartialShape{Dimension(), 24}, DataType::f32));
        p->add_constant("w", test::random_tensor(DataType::f32, Shape{24, 32}, 7));
        p->add_node("fc", "fully_connected", {"x", "w"});
        p->add_node("act", "activation", {"fc"}, attr("func", std::string("relu")));
        p->add_node("sum", "eltwise", {"act", "z"}, attr("mode", std::string("add")));
        p->add_output("sum");
        p->build();
        return p;
    };
    g.critical = "fc";
    g.inputs = [](int64_t m, uint64_t seed) {
        return Inputs{{"x", test::random_tensor(DataType::f32, Shape{m, 32}, seed)},
                      {"z", test::random_tensor(DataType::f32, Shape{m, 24}, seed + 1)}};
    };
    return g;
}

// a [?, 16] x b [16, ?]: both dims of the product change.
Graph gemm() {
    Graph g;
    g.name = "gemm";
    g.build = [] {
        auto p = std::make_shared<Program>(test::registry(), "gemm");
        p->add_input("a", Layout(PartialShape{Dimension(), 16}, DataType::f32));
        p->add_input("b", Layout(PartialShape{16, Dimension()}, DataType::f32));
        p->add_node("prod", "gemm", {"a", "b"});
        p->add_output("prod");
        p->build();
        return p;
    };
    g.critical = "prod";
    g.inputs = [](int64_t m, uint64_t seed) {
        const int64_t n = (m * 7) % 13 + 1;
        return Inputs{{"a", test::random_tensor(DataType::f32, Shape{m, 16}, seed)},
                      {"b", test::random_tensor(DataType::f32, Shape{16, n}, seed + 1)}};
    };
    return g;
}

// concat(x [?, 8], y [?, 5], axis 1) -> softmax over the last axis -> gemm
// with a constant [13, 6] (a critical op: background builds).
Graph concat_softmax() {
    Graph g;
    g.name = "concat_softmax";
    g.build = [] {
        auto p = std::make_shared<Program>(test::registry(), "concat_softmax");
        p->add_input("x", Layout(PartialShape{Dimension(), 8}, DataType::f32));
        p->add_input("y", Layout(PartialShape{Dimension(), 5}, DataType::f32));
        p->add_node("cat", "concat", {"x", "y"}, attr("axis", int64_t{1}));
        p->add_node("soft", "softmax", {"cat"}, attr("axis", int64_t{-1}));
        p->add_constant("w", test::random_tensor(DataType::f32, Shape{13, 6}, 9));
        p->add_node("prod", "gemm", {"soft", "w"});
        p->add_output("prod");
        p->add_output("soft");
        p->build();
        return p;
    };
    g.critical = "prod";
    g.inputs = [](int64_t m, uint64_t seed) {
        return Inputs{{"x", test::random_tensor(DataType::f32, Shape{m, 8}, seed, -4.0, 4.0)},
                      {"y", test::random_tensor(DataType::f32, Shape{m, 5}, seed + 1, -4.0, 4.0)}};
    };
    return g;
}

// x [B, S, 16] -> target = concat(gather(shape_of(x), [0]), [-1], [4]) ->
// reshape to [B, S*4, 4] -> softmax -> batched gemm with a constant [4, 3];
// also shape_of(x) as an output.
Graph shape_of_subgraph() {
    Graph g;
    g.name = "shape_of_subgraph";
    g.build = [] {
        auto p = std::make_shared<Program>(test::registry(), "shape_of_subgraph");
        p->add_input("x", Layout(PartialShape{Dimension(), Dimension(), 16}, DataType::f32));
        test::add_batch_target(*p, "x", 4);
        p->add_node("reshaped", "reshape", {"x", "target"});
        p->add_node("soft", "softmax", {"reshaped"}, attr("axis", int64_t{-1}));
        p->add_constant("w", test::random_tensor(DataType::f32, Shape{4, 3}, 11));
        p->add_node("prod", "gemm", {"soft", "w"});
        p->add_output("prod");
        p->add_output("shape");
        p->build();
        return p;
    };
    g.critical = "prod";
    g.inputs = [](int64_t m, uint64_t seed) {
        const int64_t b = m % 3 + 1;
        return Inputs{{"x", test::random_tensor(DataType::f32, Shape{b, m, 16}, seed, -4.0, 4.0)}};
    };
    return g;
}

// x [1, 32, ?, ?] -> convolution 3x3 pad 1 (constant w [32, 32, 3, 3]) ->
// relu -> convolution 3x3 pad 1 -> + x -> relu: a residual block. On cpu
// both convolutions go to oneDNN (too many channels for the direct loop),
// whose direct convolutions take x, the weights and y in their own layouts:
// the copies of x and y live in one block per thread that every staged run
// on it shares, so requests on several threads must keep apart.
Graph conv_residual() {
    Graph g;
    g.name = "conv_residual";
    g.build = [] {
        auto p = std::make_shared<Program>(test::registry(), "conv_residual");
        p->add_input("x", Layout(PartialShape{1, 32, Dimension(), Dimension()}, DataType::f32));
        const Attributes conv = test::conv_attrs({1, 1}, {1, 1}, {1, 1}, {1, 1}, 1);
        p->add_constant("w1", test::random_tensor(DataType::f32, Shape{32, 32, 3, 3}, 13, -0.2, 0.2));
        p->add_constant("w2", test::random_tensor(DataType::f32, Shape{32, 32, 3, 3}, 14, -0.2, 0.2));
        p->add_node("conv1", "convolution", {"x", "w1"}, conv);
        p->add_node("act1", "activation", {"conv1"}, attr("func", std::string("relu")));
        p->add_node("conv2", "convolution", {"act1", "w2"}, conv);
        p->add_node("sum", "eltwise", {"conv2", "x"}, attr("mode", std::string("add")));
        p->add_node("act2", "activation", {"sum"}, attr("func", std::string("relu")));
        p->add_output("act2");
        p->build();
        return p;
    };
    g.critical = "conv2";
    g.inputs = [](int64_t m, uint64_t seed) {
        return Inputs{{"x", test::random_tensor(DataType::f32, Shape{1, 32, m, m + 2}, seed, -1.0, 1.0)}};
    };
    return g;
}

// The raw bytes and shape of every output of one run.
struct RunResult {
    std::vector<Shape> shapes;
    std::vector<std::vector<char>> bytes;
    bool operator==(const RunResult& o) const { return shapes == o.shapes && bytes == o.bytes; }
};
using Sequence = std::vector<RunResult>;

// Request `r`'s row counts: every request walks `pool` from its own start and
// with its own stride, so shapes repeat (static builds get picked up) and the
// requests interleave different shapes on the shared impls.
std::vector<int64_t> rows_of(const std::vector<int64_t>& pool, size_t r) {
    std::vector<int64_t> rows;
    for (size_t i = 0; i < kSteps; ++i) rows.push_back(pool[(r * 3 + i * (1 + r % 2)) % pool.size()]);
    return rows;
}

uint64_t seed_of(size_t r, size_t step) { return 1000 * (r + 1) + 10 * step; }

// Step `i` of request `r`: its inputs, one run, a copy of every output.
RunResult run_step(const Graph& g, const std::vector<int64_t>& pool, InferRequest& req, size_t r, size_t i) {
    for (const auto& [name, value] : g.inputs(rows_of(pool, r)[i], seed_of(r, i))) req.set_input(name, value);
    req.infer();
    RunResult res;
    for (size_t k = 0; k < req.network().program().outputs().size(); ++k) {
        const HostTensor t = req.get_output(k);
        res.shapes.push_back(t.shape());
        const char* d = static_cast<const char*>(t.data());
        res.bytes.emplace_back(d, d + t.bytes());
    }
    return res;
}

Sequence run_request(const Graph& g, const std::vector<int64_t>& pool, InferRequest& req, size_t r) {
    Sequence out;
    for (size_t i = 0; i < kSteps; ++i) out.push_back(run_step(g, pool, req, r, i));
    return out;
}

// Every request's sequence, run one after the other on a fresh network.
std::vector<Sequence> sequential(const Graph& g, const std::vector<int64_t>& pool, const std::shared_ptr<Program>& p,
                                 const EnginePtr& eng, NetworkOptions opts) {
    auto net = Network::create(p, eng, opts);
    std::vector<Sequence> all;
    for (size_t r = 0; r < kThreads * kRequestsPerThread; ++r) {
        InferRequest req(net);
        all.push_back(run_request(g, pool, req, r));
    }
    return all;
}

// Releases every thread at once, so the requests really overlap.
class StartGate {
public:
    explicit StartGate(size_t n) : waiting_(n) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (--waiting_ == 0) cv_.notify_all();
        cv_.wait(lock, [&] { return waiting_ == 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    size_t waiting_;
};

// Runs `fn(t)` on kThreads threads released together; returns what each threw.
std::vector<std::string> on_threads(const std::function<void(size_t)>& fn) {
    std::vector<std::string> errors(kThreads);
    StartGate gate(kThreads);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            gate.arrive_and_wait();
            try {
                fn(t);
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    for (auto& th : threads) th.join();
    return errors;
}

// kThreads threads with kRequestsPerThread requests each on ONE network,
// every thread alternating between its requests step by step; each run must
// equal `want` bit for bit. Then (`second_pass`) every request runs its
// sequence again, once all background builds are in.
void run_concurrently(const Graph& g, const std::vector<int64_t>& pool, const std::shared_ptr<Program>& program,
                      const EnginePtr& eng, const NetworkOptions& opts, const std::vector<Sequence>& want,
                      const std::string& what) {
    SCOPED_TRACE(what);
    const size_t n = kThreads * kRequestsPerThread;
    auto net = Network::create(program, eng, opts);
    std::vector<std::unique_ptr<InferRequest>> reqs;
    for (size_t r = 0; r < n; ++r) reqs.push_back(std::make_unique<InferRequest>(net));
    std::vector<Sequence> got(n);
    std::vector<std::string> errors = on_threads([&](size_t t) {
        for (size_t i = 0; i < kSteps; ++i)
            for (size_t k = 0; k < kRequestsPerThread; ++k) {
                const size_t r = t * kRequestsPerThread + k;
                got[r].push_back(run_step(g, pool, *reqs[r], r, i));
            }
    });
    net->wait_for_background_builds();
    for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
    for (size_t r = 0; r < n; ++r) {
        ASSERT_EQ(got[r].size(), want[r].size()) << "request " << r;
        for (size_t i = 0; i < kSteps; ++i)
            EXPECT_TRUE(got[r][i] == want[r][i]) << "request " << r << ", step " << i << " (rows "
                                                 << rows_of(pool, r)[i] << ") differs from the sequential run";
    }

    // Every static build is in: all threads now pick static impls of the
    // critical node from the shared impl cache, with the same bits.
    std::vector<Sequence> again(n);
    errors = on_threads([&](size_t t) {
        for (size_t k = 0; k < kRequestsPerThread; ++k) {
            const size_t r = t * kRequestsPerThread + k;
            again[r] = run_request(g, pool, *reqs[r], r);
        }
    });
    for (size_t t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
    for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < kSteps; ++i)
            EXPECT_TRUE(again[r][i] == want[r][i]) << "second pass: request " << r << ", step " << i;
        // (A shape-agnostic impl as fast as a static build keeps every shape.)
        const Impl& impl = *reqs[r]->inst(g.critical).impl();
        EXPECT_TRUE(!impl.is_dynamic() || impl.static_builds_redundant())
            << "request " << r << ": " << g.critical << " still runs " << impl.name();
    }
}

void run_case(const Graph& g, const std::string& device) {
    const EnginePtr eng = device == "ocl" ? test::ocl_engine() : test::engine(device);
    if (!eng) GTEST_SKIP() << "no " << device << " engine";
    const auto program = g.build();
    const std::vector<int64_t>& pool = device == "ocl" ? kOclRows : kCpuRows;
    const size_t n = kThreads * kRequestsPerThread;

    // References, each request after the other on a fresh network: dynamic
    // impls only (background builds never picked up), and static impls only.
    // They must agree, so which impl a concurrent run gets cannot change its bits.
    NetworkOptions dynamic_only;
    dynamic_only.async_compile_after = 1000;
    const std::vector<Sequence> want = sequential(g, pool, program, eng, dynamic_only);
    NetworkOptions static_only;
    static_only.use_dynamic_impls = false;
    const std::vector<Sequence> want_static = sequential(g, pool, program, eng, static_only);
    ASSERT_EQ(want.size(), want_static.size());
    for (size_t r = 0; r < n; ++r)
        for (size_t i = 0; i < kSteps; ++i)
            ASSERT_TRUE(want[r][i] == want_static[r][i])
                << "dynamic and static impls differ: request " << r << ", step " << i;

    // Background compilation queued on a shape's first run, two compile
    // threads: static builds are handed over while the other threads run.
    NetworkOptions background;
    background.async_compile = true;
    background.async_compile_after = 1;
    background.compile_threads = 2;
    run_concurrently(g, pool, program, eng, background, want, "background builds");
    // Static impls only: every thread builds or finds its shapes' impls in the
    // shared impl cache synchronously.
    run_concurrently(g, pool, program, eng, static_only, want, "static impls");
}

TEST(Concurrency, FcActivationEltwise_Cpu) { run_case(fc_act_eltwise(), "cpu"); }
TEST(Concurrency, FcActivationEltwise_Ocl) { run_case(fc_act_eltwise(), "ocl"); }
TEST(Concurrency, Gemm_Cpu) { run_case(gemm(), "cpu"); }
TEST(Concurrency, Gemm_Ocl) { run_case(gemm(), "ocl"); }
TEST(Concurrency, ConcatSoftmax_Cpu) { run_case(concat_softmax(), "cpu"); }
TEST(Concurrency, ConcatSoftmax_Ocl) { run_case(concat_softmax(), "ocl"); }
TEST(Concurrency, ShapeOfSubgraph_Cpu) { run_case(shape_of_subgraph(), "cpu"); }
TEST(Concurrency, ShapeOfSubgraph_Ocl) { run_case(shape_of_subgraph(), "ocl"); }
TEST(Concurrency, ConvResidual_Cpu) { run_case(conv_residual(), "cpu"); }

}   // namespace
}   // namespace dynrt
