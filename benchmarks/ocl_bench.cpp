// OpenCL figures of the issue's "speed and memory" list, on the device the ocl
// engine picks (first GPU, else PoCL on the CPU):
//   (a) memory-bound ops (eltwise add, activation relu, concat of two halves)
//       in GB/s counting bytes read and written, next to a plain float4 copy
//       kernel measured in the same run ("of_copy" = op / copy);
//   (b) fully_connected and gemm f32 GFLOP/s for square sizes and decode shapes
//       (M = 1..16, K = N = 4096), static and shape-agnostic impl side by side
//       ("dyn_over_static" on the dynamic rows);
//   (c) host work per node on top of the kernel enqueue, shape unchanged: a
//       chain of small eltwise nodes, time per infer / nodes, minus the cost of
//       one plain enqueue measured in the same run.
// Device time is wall time around `reps` back-to-back executions and one
// Stream::finish(), over many iterations.
//
//   build/bin/ocl_bench [--mib=256] [--max-dim=8192] [--decode-k=4096] [benchmark flags]
//
// Small sizes for PoCL: --mib=16 --max-dim=512 --decode-k=512. Modules come from
// DYNRT_MODULE_PATH, else <exe>/../lib/dynrt, else the build's module folder.
// Skips (with a message) when no ocl engine can be created.
#include <benchmark/benchmark.h>
#include <unistd.h>

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

#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"


using namespace dynrt;
using Clock = std::chrono::steady_clock;

namespace {

size_t g_mib = 256;          // memory-bound tensor size (MiB of output)
int64_t g_max_dim = 8192;    // largest square GEMM
int64_t g_decode_k = 4096;   // K = N of the decode shapes

std::string module_dir() {
    if (const char* env = std::getenv("DYNRT_MODULE_PATH"); env && *env) {
        const std::string s(env);
        return s.substr(0, s.find(':'));
    }
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto dir = exe.parent_path().parent_path() / "lib" / "dynrt";
        if (std::filesystem::exists(dir / "libdynrt_ocl.so")) return dir.string();
    }
    return DYNRT_BENCH_MODULE_DIR;
}

struct Env {
    std::shared_ptr<Registry> registry;
    EnginePtr engine;
    OclDevice* device = nullptr;
    std::shared_ptr<Stream> stream;
    std::string why_not;   // set when there is no ocl engine
};

Env& env() {
    static Env e = [] {
        Env x;
        x.registry = std::make_shared<Registry>();
        const LoadReport r = ModuleLoader::load_dirs(*x.registry, {module_dir()});
        for (const LoadFailure& f : r.failed) std::fprintf(stderr, "module %s: %s\n", f.path.c_str(), f.message.c_str());
        try {
            if (!x.registry->has_engine("ocl")) throw Error("the ocl device module is not built or not loaded");
            const char* dev = std::getenv("DYNRT_OCL_BENCH_DEVICE");
            x.engine = x.registry->create_engine("ocl", EngineConfig{dev && *dev ? dev : "ocl", false});
            x.device = OclDevice::from(*x.engine);
            x.stream = x.engine->create_stream();
            std::fprintf(stderr, "ocl_bench: device %s (%s)\n", x.engine->info().name.c_str(),
                         x.device->limits().driver_version.c_str());
        } catch (const Error& err) {
            x.why_not = std::string("no ocl engine: ") + err.what();
        }
        return x;
    }();
    return e;
}

bool skip_without_ocl(benchmark::State& state) {
    if (!env().engine) {
        state.SkipWithError(env().why_not.c_str());
        return true;
    }
    return false;
}

// Device-time loop: each benchmark iteration enqueues `reps` runs of `body`
// and waits once; returns the summed seconds per run over all iterations.
template <typename F>
double timed_loop(benchmark::State& state, int reps, F&& body) {
    body();   // warm-up: builds, first-use allocations, PoCL work-group JIT
    env().stream->finish();
    double total = 0;
    int64_t runs = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) body();
        env().stream->finish();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        state.SetIterationTime(s);
        total += s;
        runs += reps;
    }
    return runs ? total / static_cast<double>(runs) : 0.0;
}

MemoryPtr device_tensor(const Layout& l, uint64_t seed) {
    auto buf = env().engine->allocate(l.bytes());
    auto mem = std::make_shared<Memory>(buf, l);
    if (seed) {
        HostTensor t(l.dtype, l.get_shape());
        uint64_t s = seed;
        for (size_t i = 0; i < t.count(); ++i) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            t.set_from_double(i, static_cast<double>((s >> 40) % 2001) / 1000.0 - 1.0);
        }
        buf->write(*env().stream, t.data(), 0, t.bytes());
    }
    return mem;
}

// One op's impl, created straight from the registry (no network: the network
// reads outputs back to the host after each infer).
struct OpRun {
    KernelParams params;
    Attributes attrs;
    std::shared_ptr<Impl> impl;
    std::vector<MemoryPtr> inputs, outputs;
    std::string error;

    OpRun(const std::string& op, const std::vector<Layout>& ins, const Attributes& raw, const std::string& impl_name) {
        const RegisteredOp& def = env().registry->op(op);
        attrs = Attributes::validate(def.def.attrs, raw);
        params.node = "bench";
        params.op = &def.def;
        params.attrs = &attrs;
        params.inputs = ins;
        params.engine = env().engine.get();
        const std::string node = "bench";
        params.outputs = def.def.infer(ShapeInferContext{node, ins, attrs, {}});
        for (const RegisteredImpl* r : env().registry->impls(op, "ocl")) {
            if (r->entry.name != impl_name) continue;
            const std::string why = r->entry.check(params);
            if (!why.empty()) {
                error = op + " " + impl_name + ": " + why;
                return;
            }
            impl = r->entry.create(params);
        }
        if (!impl) {
            error = op + ": no impl '" + impl_name + "' on ocl";
            return;
        }
        for (size_t i = 0; i < ins.size(); ++i) inputs.push_back(device_tensor(ins[i], 11 + i));
        for (const Layout& l : params.outputs) outputs.push_back(device_tensor(l, 0));
    }
    void execute() {
        ExecContext ctx{*env().stream, params, inputs, outputs};
        impl->execute(ctx);
    }
};

// ---- (a) memory-bound ops -------------------------------------------------------

const char* kCopyKernel = R"CL(
__kernel void copy4(__global const float4* in, __global float4* out, int n) {
    const int i = get_global_id(0);
    if (i < n) out[i] = in[i];
}
)CL";

size_t tensor_floats() { return g_mib * 1024 * 1024 / sizeof(float); }
int reps_for_bytes(size_t bytes) { return bytes >= (size_t(64) << 20) ? 5 : 50; }

std::map<size_t, double> g_copy_gbps;   // by tensor size

double copy_gbps(benchmark::State* state) {
    const size_t n = tensor_floats();
    auto it = g_copy_gbps.find(n);
    if (it != g_copy_gbps.end() && !state) return it->second;
    OclDevice& dev = *env().device;
    auto kernel = dev.build_kernel(kCopyKernel, "copy4", {});
    const Layout l(PartialShape{static_cast<int64_t>(n)}, DataType::f32);
    MemoryPtr in = device_tensor(l, 1), out = device_tensor(l, 0);
    const size_t n4 = n / 4;
    const OclDispatch d = dispatch_1d(n4, dev.limits());
    const std::vector<OclArg> args = {OclArg::mem(*in), OclArg::mem(*out), OclArg::i32(static_cast<int32_t>(n4))};
    auto launch = [&] { dev.launch(*env().stream, *kernel, args, d); };
    double per_run = 0;
    if (state) {
        per_run = timed_loop(*state, reps_for_bytes(n * 4), launch);
    } else {
        // Measured once for the ratio when the copy benchmark itself did not run.
        launch();
        env().stream->finish();
        const int reps = reps_for_bytes(n * 4) * 4;
        const auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) launch();
        env().stream->finish();
        per_run = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    }
    const double gbps = 2.0 * n * sizeof(float) / per_run / 1e9;
    g_copy_gbps[n] = gbps;
    return gbps;
}

void BM_CopyKernel(benchmark::State& state) {
    if (skip_without_ocl(state)) return;
    const double gbps = copy_gbps(&state);
    state.counters["GB/s"] = gbps;
    state.counters["MiB"] = static_cast<double>(g_mib);
}

void report_memory_bound(benchmark::State& state, OpRun& run, double bytes_per_run) {
    const double per_run = timed_loop(state, reps_for_bytes(static_cast<size_t>(bytes_per_run)), [&] { run.execute(); });
    const double gbps = bytes_per_run / per_run / 1e9;
    state.counters["GB/s"] = gbps;
    state.counters["of_copy"] = gbps / copy_gbps(nullptr);
    state.counters["MiB"] = static_cast<double>(g_mib);
}

void BM_MemoryBound(benchmark::State& state, const std::string& what, const std::string& impl) {
    if (skip_without_ocl(state)) return;
    const int64_t n = static_cast<int64_t>(tensor_floats());
    const int64_t cols = 1024;   // [rows, 1024] so concat joins two [rows/2, 1024] halves
    const int64_t rows = n / cols;
    const Layout full(PartialShape{rows, cols}, DataType::f32);
    const Layout half(PartialShape{rows / 2, cols}, DataType::f32);
    try {
        Attributes a;
        std::unique_ptr<OpRun> run;
        double bytes = 0;
        if (what == "eltwise_add") {
            a.set("mode", std::string("add"));
            run = std::make_unique<OpRun>("eltwise", std::vector<Layout>{full, full}, a, impl);
            bytes = 3.0 * full.bytes();
        } else if (what == "activation_relu") {
            a.set("func", std::string("relu"));
            run = std::make_unique<OpRun>("activation", std::vector<Layout>{full}, a, impl);
            bytes = 2.0 * full.bytes();
        } else {
            a.set("axis", int64_t(0));
            run = std::make_unique<OpRun>("concat", std::vector<Layout>{half, half}, a, impl);
            bytes = 4.0 * half.bytes();
        }
        if (!run->error.empty()) {
            state.SkipWithError(run->error.c_str());
            return;
        }
        report_memory_bound(state, *run, bytes);
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

// ---- (b) fully_connected / gemm -------------------------------------------------

std::map<std::string, double> g_static_gflops;   // "<op> MxKxN" -> static GFLOP/s

void BM_Matmul(benchmark::State& state, const std::string& op, const std::string& impl, int64_t M, int64_t K,
               int64_t N) {
    if (skip_without_ocl(state)) return;
    try {
        std::vector<Layout> ins;
        if (op == "fully_connected")
            ins = {Layout(PartialShape{M, K}, DataType::f32), Layout(PartialShape{N, K}, DataType::f32)};
        else
            ins = {Layout(PartialShape{M, K}, DataType::f32), Layout(PartialShape{K, N}, DataType::f32)};
        OpRun run(op, ins, Attributes(), impl);
        if (!run.error.empty()) {
            state.SkipWithError(run.error.c_str());
            return;
        }
        const double flops = 2.0 * M * N * K;
        const int reps = flops > 1e11 ? 3 : (flops > 1e9 ? 10 : 50);
        const double per_run = timed_loop(state, reps, [&] { run.execute(); });
        const double gflops = flops / per_run / 1e9;
        state.counters["GFLOP/s"] = gflops;
        // Weights (and activations) streamed per run: what bounds decode shapes.
        state.counters["GB/s"] = 4.0 * (double(M) * K + double(K) * N + double(M) * N) / per_run / 1e9;
        const std::string key = op + " " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
        if (impl == "ocl_static") {
            g_static_gflops[key] = gflops;
        } else {
            auto it = g_static_gflops.find(key);
            if (it != g_static_gflops.end()) state.counters["dyn_over_static"] = gflops / it->second;
        }
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

// ---- (c) host work per node ------------------------------------------------------

constexpr int kChain = 64;

// Plain enqueue cost: one kernel launched kChain times, one finish.
double g_enqueue_us = 0;

void BM_PlainEnqueue(benchmark::State& state) {
    if (skip_without_ocl(state)) return;
    OclDevice& dev = *env().device;
    auto kernel = dev.build_kernel(kCopyKernel, "copy4", {});
    const Layout l(PartialShape{256}, DataType::f32);
    MemoryPtr in = device_tensor(l, 1), out = device_tensor(l, 0);
    const OclDispatch d = dispatch_1d(64, dev.limits());
    const std::vector<OclArg> args = {OclArg::mem(*in), OclArg::mem(*out), OclArg::i32(64)};
    auto launch = [&] { dev.launch(*env().stream, *kernel, args, d); };
    const double per_chain = timed_loop(state, 1, [&] {
        for (int i = 0; i < kChain; ++i) launch();
    });
    g_enqueue_us = per_chain / kChain * 1e6;
    state.counters["us_per_kernel"] = g_enqueue_us;
}

void BM_HostWorkPerNode(benchmark::State& state) {
    if (skip_without_ocl(state)) return;
    try {
        auto p = std::make_shared<Program>(env().registry, "chain");
        p->add_input("x", Layout(PartialShape{1, Dimension()}, DataType::f32));
        std::string prev = "x";
        Attributes add;
        add.set("mode", std::string("add"));
        for (int i = 0; i < kChain; ++i) {
            const std::string name = "n" + std::to_string(i);
            p->add_node(name, "eltwise", {prev, "x"}, add);
            prev = name;
        }
        p->add_output(prev);
        p->build();
        auto net = Network::create(p, env().engine, NetworkOptions());
        InferRequest req(net);
        req.set_input("x", HostTensor(DataType::f32, Shape{1, 256}));
        req.infer();
        net->wait_for_background_builds();
        req.infer();
        const std::string impl = req.last_run().nodes.back().impl;
        double total = 0;
        int64_t runs = 0;
        for (auto _ : state) {
            const auto t0 = Clock::now();
            req.infer();
            const double s = std::chrono::duration<double>(Clock::now() - t0).count();
            state.SetIterationTime(s);
            total += s;
            ++runs;
        }
        const double per_node_us = total / runs / kChain * 1e6;
        state.counters["us_per_node"] = per_node_us;
        if (g_enqueue_us > 0) state.counters["host_us_over_enqueue"] = per_node_us - g_enqueue_us;
        state.SetLabel(impl);
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

void register_all() {
    benchmark::RegisterBenchmark("ocl/copy_kernel", BM_CopyKernel)->UseManualTime()->Unit(benchmark::kMillisecond);
    for (const char* what : {"eltwise_add", "activation_relu", "concat_halves"})
        for (const char* impl : {"ocl_static", "ocl_dynamic"})
            benchmark::RegisterBenchmark((std::string("ocl/") + what + "/" + impl).c_str(),
                                         [what, impl](benchmark::State& s) { BM_MemoryBound(s, what, impl); })
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
    for (const char* op : {"fully_connected", "gemm"}) {
        std::vector<std::array<int64_t, 3>> shapes;
        for (int64_t d = 1024; d <= g_max_dim; d *= 2) shapes.push_back({d, d, d});
        if (g_max_dim < 1024) shapes.push_back({g_max_dim, g_max_dim, g_max_dim});
        for (int64_t m : {1, 2, 4, 8, 16}) shapes.push_back({m, g_decode_k, g_decode_k});
        for (const auto& s : shapes)
            for (const char* impl : {"ocl_static", "ocl_dynamic"}) {
                const std::string name = std::string("ocl/") + op + "/" + impl + "/M" + std::to_string(s[0]) + "_K" +
                                         std::to_string(s[1]) + "_N" + std::to_string(s[2]);
                benchmark::RegisterBenchmark(name.c_str(),
                                             [op, impl, s](benchmark::State& st) { BM_Matmul(st, op, impl, s[0], s[1], s[2]); })
                    ->UseManualTime()
                    ->Unit(benchmark::kMicrosecond);
            }
    }
#ifdef DYNRT_HAVE_CLBLAST
    register_clblast(g_max_dim, g_decode_k);
#else
    benchmark::RegisterBenchmark("ocl/clblast_sgemm", [](benchmark::State& s) {
        s.SkipWithError("CLBlast not found");
    });
#endif
    benchmark::RegisterBenchmark("ocl/plain_enqueue", BM_PlainEnqueue)->UseManualTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("ocl/host_work_per_node", BM_HostWorkPerNode)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
}

// Consumes this program's own flags; the rest go to Google Benchmark.
void parse_flags(int& argc, char** argv) {
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strncmp(a, "--mib=", 6) == 0) g_mib = std::strtoull(a + 6, nullptr, 10);
        else if (std::strncmp(a, "--max-dim=", 10) == 0) g_max_dim = std::strtoll(a + 10, nullptr, 10);
        else if (std::strncmp(a, "--decode-k=", 11) == 0) g_decode_k = std::strtoll(a + 11, nullptr, 10);
        else argv[out++] = argv[i];
    }
    argc = out;
    if (g_mib == 0) g_mib = 1;
    if (g_max_dim < 16) g_max_dim = 16;
    if (g_decode_k < 16) g_decode_k = 16;
}

}  // namespace

int main(int argc, char** argv) {
    parse_flags(argc, argv);
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
