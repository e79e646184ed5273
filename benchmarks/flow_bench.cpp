// Host work per primitive per run through the dynamic flow, with trivial
// kernels (an impl whose execute() does nothing), so the figure is the flow's
// own cost: update_shape checks, impl lookup, realloc decisions, counters.
//
//   build/bin/flow_bench --benchmark_counters_tabular=true
//
// Each benchmark runs a chain of kNodes dynamic primitives; "per_node_ns" is
// the time of one infer() divided by the chain length.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

using namespace dynrt;

namespace {

constexpr int kNodes = 64;

struct NoopImpl : Impl {
    explicit NoopImpl(bool dyn) : dyn_(dyn) {}
    void execute(ExecContext&) override {}
    std::string name() const override { return dyn_ ? "noop_dynamic" : "noop_static"; }
    bool is_dynamic() const override { return dyn_; }
    bool dyn_;
};

std::shared_ptr<Registry> make_registry() {
    auto reg = std::make_shared<Registry>();
    for (const char* m : {"libdynrt_cpu.so"})
        ModuleLoader::load_file(*reg, std::string(DYNRT_BENCH_MODULE_DIR) + "/" + m);
    auto rec = std::make_shared<ModuleRecord>();
    rec->path = "<flow_bench>";
    rec->name = "flow_bench";
    ModuleRegistrar r(*reg, rec);
    OpDefinition def;
    def.name = "noop";
    def.infer = [](const ShapeInferContext& c) { return std::vector<Layout>{c.inputs[0]}; };
    r.add_op(def);
    for (bool dyn : {true, false}) {
        ImplEntry e;
        e.name = dyn ? "noop_dynamic" : "noop_static";
        e.impl_type = "cpu";
        e.shape_type = dyn ? ShapeType::dynamic_shape : ShapeType::static_shape;
        e.create = [dyn](const KernelParams&) { return std::make_unique<NoopImpl>(dyn); };
        r.add_impl("noop", e);
    }
    r.commit();
    return reg;
}

struct Fixture {
    std::shared_ptr<Registry> registry = make_registry();
    EnginePtr engine = registry->create_engine("cpu", EngineConfig{"cpu", false});
    std::shared_ptr<Network> make(bool dynamic_impls) {
        auto p = std::make_shared<Program>(registry, "chain");
        p->add_input("x", Layout(PartialShape{1, Dimension(), 64}, DataType::f32));
        std::string prev = "x";
        for (int i = 0; i < kNodes; ++i) {
            std::string name = "n" + std::to_string(i);
            p->add_node(name, "noop", {prev});
            prev = name;
        }
        p->add_output(prev);
        p->build();
        NetworkOptions opt;
        opt.use_dynamic_impls = dynamic_impls;
        return Network::create(p, engine, opt);
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

void report(benchmark::State& state) {
    state.counters["per_node_ns"] = benchmark::Counter(double(state.iterations()) * kNodes,
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Shape unchanged between runs: every primitive skips update_shape, impl and
// realloc, and runs its (empty) kernel.
void BM_Flow_ShapeUnchanged(benchmark::State& state) {
    auto net = fixture().make(true);
    InferRequest req(net);
    req.set_input("x", HostTensor(DataType::f32, Shape{1, 16, 64}));
    req.infer();
    for (auto _ : state) req.infer();
    report(state);
}
BENCHMARK(BM_Flow_ShapeUnchanged);

// Shape alternates between [1,16,64] and [1,17,64]: each run re-infers shapes
// and reuses the buffer (reinterpret); the impl comes from the impl cache
// (static impls) or is the shape-agnostic one (`dynamic_impls`).
void alternate_shapes(benchmark::State& state, bool dynamic_impls) {
    auto net = fixture().make(dynamic_impls);
    InferRequest req(net);
    HostTensor a(DataType::f32, Shape{1, 16, 64}), b(DataType::f32, Shape{1, 17, 64});
    req.set_input("x", b);
    req.infer();
    req.set_input("x", a);
    req.infer();
    bool flip = false;
    for (auto _ : state) {
        req.set_input("x", flip ? a : b);
        req.infer();
        flip = !flip;
    }
    report(state);
}

void BM_Flow_ShapeChangedCacheHit(benchmark::State& state) { alternate_shapes(state, false); }
BENCHMARK(BM_Flow_ShapeChangedCacheHit);

void BM_Flow_ShapeChangedDynamicImpl(benchmark::State& state) { alternate_shapes(state, true); }
BENCHMARK(BM_Flow_ShapeChangedDynamicImpl);

// A graph of state.range(0) nodes: how adding, building, making the network
// and request, the first run and a run at a new shape grow with the node
// count (each should grow linearly; 200k nodes load in seconds). Seconds per
// phase are counters; one iteration each.
//
//   build/bin/flow_bench --benchmark_filter=LargeGraph --benchmark_counters_tabular=true
void BM_Flow_LargeGraph(benchmark::State& state) {
    using Clock = std::chrono::steady_clock;
    const auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    const int64_t n = state.range(0);
    for (auto _ : state) {
        const auto t0 = Clock::now();
        auto p = std::make_shared<Program>(fixture().registry, "large");
        p->add_input("x", Layout(PartialShape{1, Dimension(), 64}, DataType::f32));
        std::string prev = "x";
        for (int64_t i = 0; i < n; ++i) {
            std::string name = "node_" + std::to_string(i);
            p->add_node(name, "noop", {prev});
            prev = std::move(name);
        }
        p->add_output(prev);
        const auto t1 = Clock::now();
        p->build();
        const auto t2 = Clock::now();
        InferRequest req(Network::create(p, fixture().engine));
        const auto t3 = Clock::now();
        req.set_input("x", HostTensor(DataType::f32, Shape{1, 16, 64}));
        req.infer();
        const auto t4 = Clock::now();
        req.set_input("x", HostTensor(DataType::f32, Shape{1, 17, 64}));
        req.infer();
        const auto t5 = Clock::now();
        state.counters["add_s"] = seconds(t0, t1);
        state.counters["build_s"] = seconds(t1, t2);
        state.counters["network_s"] = seconds(t2, t3);
        state.counters["first_run_s"] = seconds(t3, t4);
        state.counters["new_shape_run_s"] = seconds(t4, t5);
    }
}
BENCHMARK(BM_Flow_LargeGraph)->Arg(10000)->Arg(40000)->Arg(200000)->Iterations(1)->Unit(benchmark::kSecond);

}   // namespace

BENCHMARK_MAIN();
