// The cpu engine's oneDNN impls against oneDNN itself, on the shapes of the
// cpu benchmark's workloads (scripts/bench_cpu.py): the goal is
// matmul >= 80 % and convolution >= 70 % of what oneDNN reaches.
//
// Each shape runs
//   direct/...      one oneDNN primitive called straight, the way benchdnn
//                   times it: static dims, weights (for convolution the
//                   activations too) in the layouts oneDNN picks for them
//                   (format `any`), reordered before the timing starts;
//   <impl>/...      each oneDNN impl the cpu engine registers for the op
//                   (cpu_dnnl_static, cpu_dnnl_dynamic: the shape-agnostic
//                   one, with the weights' dims static as in a model), and
//                   for convolution the SDK's direct loop (cpu_direct_dynamic,
//                   few channels only: skipped on the others), created
//                   from the registry and executed as the flow executes it, on
//                   plain row-major tensors.
// "of_direct" on the impl rows = direct time / impl time (1.0: as fast as
// oneDNN itself). Times are the median per run over the iterations, on the
// engine's thread count (--threads, default 1) for both.
//
//   build/bin/cpu_bench [--threads=N] [benchmark flags]
//
// Modules come from DYNRT_MODULE_PATH, else <exe>/../lib/dynrt, else the
// build's module folder.
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

using namespace dynrt;

namespace {

unsigned g_threads = 1;

std::string modules() { return bench::module_dir("libdynrt_cpu.so", DYNRT_BENCH_MODULE_DIR); }

struct Host {
    std::shared_ptr<Registry> registry;
    EnginePtr engine;
    std::shared_ptr<Stream> stream;
};

Host& host() {
    static Host h = [] {
        Host x;
        x.registry = bench::load_registry(modules());
        EngineConfig cfg{"cpu", false};
        cfg.threads = g_threads;
        x.engine = x.registry->create_engine("cpu", cfg);
        x.stream = x.engine->create_stream();
        return x;
    }();
    return h;
}

// Values in [-1, 1) from `seed`.
std::vector<float> values(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    for (float& x : v) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>((seed >> 40) % 2000) / 1000.0f - 1.0f;
    }
    return v;
}

// The median seconds per run of `body` over the benchmark's iterations, each
// iteration a batch of runs of about 5 ms.
template <typename F>
double median_per_run(benchmark::State& state, F&& body) {
    using Clock = std::chrono::steady_clock;
    body();
    auto t0 = Clock::now();
    body();
    const double once = std::chrono::duration<double>(Clock::now() - t0).count();
    const int reps = static_cast<int>(std::clamp(0.005 / std::max(once, 1e-7), 1.0, 1000.0));
    std::vector<double> per_run;
    for (auto _ : state) {
        t0 = Clock::now();
        for (int r = 0; r < reps; ++r) body();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        state.SetIterationTime(s);
        per_run.push_back(s / reps);
    }
    if (per_run.empty()) return 0;
    std::nth_element(per_run.begin(), per_run.begin() + static_cast<std::ptrdiff_t>(per_run.size() / 2), per_run.end());
    return per_run[per_run.size() / 2];
}

// ---- the shapes -----------------------------------------------------------------

// fully_connected: x [M, K] times weights [N, K] (transposed).
struct MatmulShape {
    int64_t m, k, n;
    std::string name() const { return std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n); }
};
// decode64 / kv64 (64 wide, MLP 2x), decode1024 (MLP 4x), decode2048.
const std::vector<MatmulShape> kMatmuls = {
    {1, 64, 64},      {64, 64, 128},    {512, 128, 64},  {1, 1024, 1024},
    {16, 1024, 4096}, {64, 4096, 1024}, {1, 2048, 2048}, {64, 2048, 8192},
};

// convolution: x [N, C, S, S], weights [O, C, R, R], stride, pad R / 2 (or 0).
struct ConvShape {
    int64_t n, c, s, o, r, stride, pad;
    std::string name() const {
        return std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(s) + "_o" + std::to_string(o) + "_k" +
               std::to_string(r) + "s" + std::to_string(stride);
    }
};
// conv64 (64 channels, 56 and 112 px), conv_small (3 -> 8 channels 3x3,
// 8 -> 8 3x3 stride 2, the 1x1 stride-2 shortcut) and a 3 -> 16 stem at 112 and
// 224 px.
const std::vector<ConvShape> kConvs = {
    {1, 64, 56, 64, 3, 1, 1}, {1, 64, 112, 64, 3, 1, 1}, {2, 3, 64, 8, 3, 1, 1},
    {2, 8, 64, 8, 3, 2, 1},   {4, 3, 32, 8, 3, 1, 1},    {4, 8, 32, 8, 3, 2, 1},
    {4, 3, 32, 8, 1, 2, 0},   {1, 3, 112, 16, 3, 1, 1},  {1, 3, 224, 16, 3, 1, 1},
};

// ---- oneDNN, called directly ------------------------------------------------------

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Direct {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::string impl;

    // A memory of `want` filled from a plain tensor of `plain` (reordered once).
    dnnl::memory filled(const dnnl::memory::desc& plain, const dnnl::memory::desc& want, uint64_t seed) {
        dnnl::memory src(plain, eng);
        const std::vector<float> v = values(plain.get_size() / sizeof(float), seed);
        std::memcpy(src.get_data_handle(), v.data(), v.size() * sizeof(float));
        if (want == plain) return src;
        dnnl::memory dst(want, eng);
        dnnl::reorder(src, dst).execute(strm, src, dst);
        strm.wait();
        return dst;
    }
    void run() {
        prim.execute(strm, args);
        strm.wait();
    }
};

Direct direct_matmul(const MatmulShape& s) {
    Direct d;
    const dnnl::memory::desc src({s.m, s.k}, dt::f32, tag::ab), dst({s.m, s.n}, dt::f32, tag::ab);
    const dnnl::memory::desc wplain({s.k, s.n}, dt::f32, tag::ba), wany({s.k, s.n}, dt::f32, tag::any);
    const dnnl::memory::desc bias({1, s.n}, dt::f32, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wany, bias, dst), d.eng);
    d.impl = pd.impl_info_str();
    d.prim = dnnl::matmul(pd);
    d.args = {{DNNL_ARG_SRC, d.filled(src, src, 11)},
              {DNNL_ARG_WEIGHTS, d.filled(wplain, pd.weights_desc(), 12)},
              {DNNL_ARG_BIAS, d.filled(bias, bias, 13)},
              {DNNL_ARG_DST, dnnl::memory(dst, d.eng)}};
    return d;
}

int64_t conv_out(const ConvShape& s) { return (s.s + 2 * s.pad - s.r) / s.stride + 1; }

Direct direct_conv(const ConvShape& s) {
    Direct d;
    const int64_t out = conv_out(s);
    const dnnl::memory::desc xplain({s.n, s.c, s.s, s.s}, dt::f32, tag::nchw),
        wplain({s.o, s.c, s.r, s.r}, dt::f32, tag::oihw), bias({s.o}, dt::f32, tag::a);
    const dnnl::memory::desc xany({s.n, s.c, s.s, s.s}, dt::f32, tag::any),
        wany({s.o, s.c, s.r, s.r}, dt::f32, tag::any), yany({s.n, s.o, out, out}, dt::f32, tag::any);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, xany,
                                        wany, bias, yany, {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad}),
        d.eng);
    d.impl = pd.impl_info_str();
    d.prim = dnnl::convolution_forward(pd);
    d.args = {{DNNL_ARG_SRC, d.filled(xplain, pd.src_desc(), 11)},
              {DNNL_ARG_WEIGHTS, d.filled(wplain, pd.weights_desc(), 12)},
              {DNNL_ARG_BIAS, d.filled(bias, bias, 13)},
              {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), d.eng)}};
    return d;
}

// ---- the cpu engine's impl ----------------------------------------------------------

// One impl of `op`, created from the registry for `ins` (the node's layouts
// `node_ins`: the dims static in a model) and run as the flow runs it.
struct ImplRun {
    KernelParams params;
    Attributes attrs;
    std::shared_ptr<Impl> impl;
    std::unique_ptr<ImplState> state;
    std::vector<MemoryPtr> inputs, outputs, scratch;
    std::string error;

    ImplRun(const std::string& op, const std::vector<Layout>& ins, const std::vector<Layout>& node_ins,
            const Attributes& raw, const std::string& impl_name) {
        Host& h = host();
        const RegisteredOp& def = h.registry->op(op);
        attrs = Attributes::validate(def.def.attrs, raw);
        params.node = "bench";
        params.op = &def.def;
        params.attrs = &attrs;
        params.inputs = ins;
        params.node_inputs = std::make_shared<const std::vector<Layout>>(node_ins);
        params.engine = h.engine.get();
        // The weights of a model's fully_connected and convolution are
        // constants: the flow says so, and the impls reorder them once.
        params.constant_weights = def.def.traits.weightable && def.def.weights_input < ins.size();
        params.outputs = def.def.infer(ShapeInferContext{params.node, ins, attrs, {}});
        for (const RegisteredImpl* r : h.registry->impls(op, "cpu")) {
            if (r->entry.name != impl_name) continue;
            error = r->entry.check(params);
            if (error.empty()) impl = r->entry.create(params);
        }
        if (!impl) {
            if (error.empty()) error = op + ": no cpu impl '" + impl_name + "'";
            return;
        }
        state = impl->create_state();
        uint64_t seed = 11;
        for (const Layout& l : ins) inputs.push_back(tensor(l, seed++));
        for (const Layout& l : params.outputs) outputs.push_back(tensor(l, 0));
        for (const size_t bytes : impl->scratch_bytes(params))
            scratch.push_back(
                tensor(Layout(PartialShape{static_cast<int64_t>(std::max<size_t>(bytes, 4) / 4)}, DataType::f32), 0));
    }
    static MemoryPtr tensor(const Layout& l, uint64_t seed) {
        Host& h = host();
        auto buf = h.engine->allocate(l.bytes());
        if (seed) {
            const std::vector<float> v = values(l.count(), seed);
            buf->write(*h.stream, v.data(), 0, l.bytes());
        }
        return std::make_shared<Memory>(buf, l);
    }
    void run() {
        ExecContext ctx{*host().stream, params, inputs, outputs};
        ctx.state = state.get();
        if (!scratch.empty()) ctx.scratch = &scratch;
        impl->execute(ctx);
        host().stream->finish();
    }
};

std::map<std::string, double> g_direct;   // shape name -> seconds per run

void report(benchmark::State& state, const std::string& key, double seconds, double flops) {
    state.counters["GFLOP/s"] = flops / seconds / 1e9;
    state.counters["us"] = seconds * 1e6;
    if (const auto it = g_direct.find(key); it != g_direct.end()) state.counters["of_direct"] = it->second / seconds;
}

void BM_DirectMatmul(benchmark::State& state, MatmulShape s) {
    // oneDNN fixes a primitive's thread split when it is created: made
    // outside the scope it ran on every core whatever --threads said.
    CpuThreads threads(host().engine.get());
    Direct d = direct_matmul(s);
    const double sec = median_per_run(state, [&] { d.run(); });
    g_direct["matmul " + s.name()] = sec;
    state.SetLabel(d.impl);
    report(state, "", sec, 2.0 * s.m * s.n * s.k);
}

void BM_ImplMatmul(benchmark::State& state, MatmulShape s, std::string impl) {
    const std::vector<Layout> ins = {Layout(PartialShape{s.m, s.k}, DataType::f32),
                                     Layout(PartialShape{s.n, s.k}, DataType::f32),
                                     Layout(PartialShape{s.n}, DataType::f32)};
    std::vector<Layout> node_ins = ins;
    node_ins[0].shape[0] = Dimension::dynamic();   // rows vary in a model; K, N come with the weights
    ImplRun run("fully_connected", ins, node_ins, Attributes(), impl);
    if (!run.error.empty()) {
        state.SkipWithError(run.error.c_str());
        return;
    }
    report(state, "matmul " + s.name(), median_per_run(state, [&] { run.run(); }), 2.0 * s.m * s.n * s.k);
}

Attributes conv_attrs(const ConvShape& s) {
    Attributes a;
    a.set("strides", std::vector<int64_t>{s.stride, s.stride});
    a.set("pads_begin", std::vector<int64_t>{s.pad, s.pad});
    a.set("pads_end", std::vector<int64_t>{s.pad, s.pad});
    return a;
}

double conv_flops(const ConvShape& s) {
    const double out = static_cast<double>(conv_out(s));
    return 2.0 * static_cast<double>(s.n * s.o) * out * out * static_cast<double>(s.c * s.r * s.r);
}

void BM_DirectConv(benchmark::State& state, ConvShape s) {
    // oneDNN fixes a primitive's thread split when it is created: made
    // outside the scope it ran on every core whatever --threads said.
    CpuThreads threads(host().engine.get());
    Direct d = direct_conv(s);
    const double sec = median_per_run(state, [&] { d.run(); });
    g_direct["conv " + s.name()] = sec;
    state.SetLabel(d.impl);
    report(state, "", sec, conv_flops(s));
}

void BM_ImplConv(benchmark::State& state, ConvShape s, std::string impl) {
    const std::vector<Layout> ins = {Layout(PartialShape{s.n, s.c, s.s, s.s}, DataType::f32),
                                     Layout(PartialShape{s.o, s.c, s.r, s.r}, DataType::f32),
                                     Layout(PartialShape{s.o}, DataType::f32)};
    std::vector<Layout> node_ins = ins;
    for (const size_t d : {size_t{0}, size_t{2}, size_t{3}}) node_ins[0].shape[d] = Dimension::dynamic();
    ImplRun run("convolution", ins, node_ins, conv_attrs(s), impl);
    if (!run.error.empty()) {
        state.SkipWithError(run.error.c_str());
        return;
    }
    report(state, "conv " + s.name(), median_per_run(state, [&] { run.run(); }), conv_flops(s));
}

}   // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--threads=", 10) == 0) {
            g_threads = static_cast<unsigned>(std::max(1, std::atoi(argv[i] + 10)));
            for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
            --argc;
            --i;
        }
    }
    const std::vector<std::string> impls = {"cpu_dnnl_static", "cpu_dnnl_dynamic"};
    for (const MatmulShape& s : kMatmuls) {
        benchmark::RegisterBenchmark(("matmul/direct/" + s.name()).c_str(), BM_DirectMatmul, s)->UseManualTime();
        for (const std::string& impl : impls)
            benchmark::RegisterBenchmark(("matmul/" + impl + "/" + s.name()).c_str(), BM_ImplMatmul, s, impl)
                ->UseManualTime();
    }
    std::vector<std::string> conv_impls = impls;
    conv_impls.emplace_back("cpu_direct_dynamic");
    for (const ConvShape& s : kConvs) {
        benchmark::RegisterBenchmark(("conv/direct/" + s.name()).c_str(), BM_DirectConv, s)->UseManualTime();
        for (const std::string& impl : conv_impls)
            benchmark::RegisterBenchmark(("conv/" + impl + "/" + s.name()).c_str(), BM_ImplConv, s, impl)
                ->UseManualTime();
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
