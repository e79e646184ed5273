// OpenCL figures of the issue's "speed and memory" list, on the device the ocl
// engine picks (first GPU, else PoCL on the CPU), every op through the impl its
// module registers (the kernels the runtime runs), static and shape-agnostic:
//   (a) memory-bound ops (eltwise add, activation relu, concat, transpose,
//       expand, slice, where, cast, reduce over the last and a middle axis,
//       layer_norm, gather) on tensors of --mib MiB, in GB/s counting bytes
//       read and written, next to a plain float4 copy kernel measured in the
//       same run at the same size ("of_copy" = op / copy; the goal is >= 0.7);
//   (b) fully_connected and gemm f32 GFLOP/s for square sizes and decode shapes
//       (M = 1..16, K = N = 4096), static and shape-agnostic impl side by side
//       ("dyn_over_static" on the dynamic rows); with CLBlast (libclblast-dev
//       found at configure time) the same shapes through clblast::Gemm on the
//       same device, after a check against a host loop, with
//       "dynrt_static_over_clblast" / "dynrt_dynamic_over_clblast";
//   (c) host work per node on top of the kernel enqueue, shape unchanged: a
//       chain of small eltwise nodes, time per infer / nodes, minus the cost of
//       one plain enqueue measured in the same run;
//   (d) convolution: 1-D and depthwise 2-D next to a regular 2-D one, GFLOP/s
//       and device time per run ("dyn_over_static" on the dynamic rows).
// Device time is wall time around a batch of back-to-back executions and one
// Stream::finish() (clFinish for CLBlast), over many iterations: for (b) the
// mean per run with a fixed batch by FLOPs, for (a) and (d) the median over
// iterations with a batch of about 10 ms of device work.
//
//   build/bin/ocl_bench [--mib=256] [--max-dim=8192] [--decode-k=4096] [benchmark flags]
//
// --max-dim and --decode-k default to 32 and 16 times --mib (at most 8192 and
// 4096); the convolutions' batch is --mib / 32 (1 to 8). Small sizes for PoCL:
// --mib=4 (GEMM up to 128, decode K 64). Modules come from
// DYNRT_MODULE_PATH, else <exe>/../lib/dynrt, else the build's module folder.
// Skips (with a message) when no ocl engine can be created.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

#ifdef DYNRT_HAVE_CLBLAST
#include <clblast.h>
#endif

using namespace dynrt;
using Clock = std::chrono::steady_clock;

namespace {

size_t g_mib = 256;       // memory-bound tensor size (MiB of the main tensor)
int64_t g_max_dim = 0;    // largest square GEMM (0: from --mib)
int64_t g_decode_k = 0;   // K = N of the decode shapes (0: from --mib)

std::string module_dir() { return bench::module_dir("libdynrt_ocl.so", DYNRT_BENCH_MODULE_DIR); }

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
        x.registry = bench::load_registry(module_dir());
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

// Seconds per run of a timed loop: the mean over every run and the median
// over iterations (each iteration's time divided by its runs); `runs` in all.
struct Timing {
    double mean = 0;
    double median = 0;
    int64_t runs = 0;
};

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    return v[mid];
}

// Seconds for `reps` back-to-back runs of `body` and one wait.
template <typename F>
double timed_batch(int reps, F& body) {
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) body();
    env().stream->finish();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs `body` once to warm up (builds, first-use allocations, PoCL's
// work-group JIT) and returns `reps`, or for `reps` 0 the runs per batch that
// make about 10 ms of device work (from one timed run, at most 100): the
// wait's own cost then stays small, and a slow device runs one at a time.
template <typename F>
int warm_up(int reps, F& body) {
    timed_batch(1, body);
    if (reps > 0) return reps;
    const double once = timed_batch(1, body);
    return static_cast<int>(std::clamp(0.01 / std::max(once, 1e-7), 1.0, 100.0));
}

// Device-time loop: each benchmark iteration times one batch of `reps` runs
// (warm_up() picks them for 0).
template <typename F>
Timing timed_loop(benchmark::State& state, int reps, F&& body) {
    reps = warm_up(reps, body);
    double total = 0;
    std::vector<double> per_run;
    Timing t;
    for (auto _ : state) {
        const double s = timed_batch(reps, body);
        state.SetIterationTime(s);
        total += s;
        t.runs += reps;
        per_run.push_back(s / reps);
    }
    if (t.runs) t.mean = total / static_cast<double>(t.runs);
    t.median = median_of(std::move(per_run));
    return t;
}

MemoryPtr upload(const HostTensor& t) {
    auto buf = env().engine->allocate(t.bytes());
    buf->write(*env().stream, t.data(), 0, t.bytes());
    return std::make_shared<Memory>(buf, t.layout());
}

// A device tensor of `l`: values in [-1, 1] from `seed`, uninitialised for seed 0.
MemoryPtr device_tensor(const Layout& l, uint64_t seed) {
    if (!seed) return std::make_shared<Memory>(env().engine->allocate(l.bytes()), l);
    HostTensor t(l.dtype, l.get_shape());
    uint64_t s = seed;
    for (size_t i = 0; i < t.count(); ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        t.set_from_double(i, static_cast<double>((s >> 40) % 2001) / 1000.0 - 1.0);
    }
    return upload(t);
}

// One op's impl, created straight from the registry (no network: the network
// reads outputs back to the host after each infer). It executes as the flow
// runs it: with a state of its own and the scratch buffers it asks for.
struct OpRun {
    KernelParams params;
    Attributes attrs;
    std::shared_ptr<Impl> impl;
    std::unique_ptr<ImplState> state;
    std::vector<MemoryPtr> inputs, outputs, scratch;
    std::string error;

    // `node_inputs`: the node's inferred layouts (KernelParams::node_inputs),
    // empty for a node whose every dim is dynamic. `data`: the contents of
    // inputs whose values matter (a shape read by value, indices); the other
    // inputs get values in [-1, 1].
    OpRun(const std::string& op, const std::vector<Layout>& ins, const Attributes& raw, const std::string& impl_name,
          const std::vector<Layout>& node_inputs = {}, const std::map<size_t, HostTensor>& data = {}) {
        const RegisteredOp& def = env().registry->op(op);
        attrs = Attributes::validate(def.def.attrs, raw);
        params.node = "bench";
        params.op = &def.def;
        params.attrs = &attrs;
        params.inputs = ins;
        if (!node_inputs.empty()) params.node_inputs = std::make_shared<const std::vector<Layout>>(node_inputs);
        params.engine = env().engine.get();
        const std::string node = "bench";
        ShapeInferContext infer{node, ins, attrs, {}};
        for (const size_t i : def.def.value_inputs) {
            infer.values.resize(std::max(infer.values.size(), i + 1), nullptr);
            if (auto it = data.find(i); it != data.end()) infer.values[i] = &it->second;
        }
        params.outputs = def.def.infer(infer);
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
        state = impl->create_state();
        for (size_t i = 0; i < ins.size(); ++i) {
            auto it = data.find(i);
            inputs.push_back(it != data.end() ? upload(it->second) : device_tensor(ins[i], 11 + i));
        }
        for (const Layout& l : params.outputs) outputs.push_back(device_tensor(l, 0));
        for (const size_t bytes : impl->scratch_bytes(params))
            scratch.push_back(
                device_tensor(Layout(PartialShape{static_cast<int64_t>(std::max<size_t>(bytes, 1))}, DataType::u8), 0));
    }
    void execute() {
        ExecContext ctx{*env().stream, params, inputs, outputs};
        ctx.state = state.get();
        if (!scratch.empty()) ctx.scratch = &scratch;
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
    const double bytes = 2.0 * static_cast<double>(n * sizeof(float));
    double per_run = 0;
    if (state) {
        const Timing t = timed_loop(*state, 0, launch);
        per_run = t.median;
        state->SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(t.runs)));
    } else {
        // Measured here for the ratio when the copy benchmark itself did not
        // run: the median of five batches.
        const int reps = warm_up(0, launch);
        std::vector<double> batches;
        for (int b = 0; b < 5; ++b) batches.push_back(timed_batch(reps, launch) / reps);
        per_run = median_of(std::move(batches));
    }
    const double gbps = bytes / per_run / 1e9;
    g_copy_gbps[n] = gbps;
    return gbps;
}

void BM_CopyKernel(benchmark::State& state) {
    if (skip_without_ocl(state)) return;
    const double gbps = copy_gbps(&state);
    state.counters["GB/s"] = gbps;
    state.counters["MiB"] = static_cast<double>(g_mib);
}

// One memory-bound case: an op on tensors of about --mib MiB, the contents of
// inputs whose values matter, and the bytes one run reads and writes.
struct MemoryCase {
    std::string op;
    std::vector<Layout> ins;
    Attributes attrs;
    std::map<size_t, HostTensor> data;
    double bytes = 0;   // 0: every input and output once
};

// Random integers in [0, bound) of type `t`: token ids, a 50/50 condition.
HostTensor random_ints(DataType t, const Shape& shape, int64_t bound) {
    std::vector<int64_t> v(shape.count());
    uint64_t s = 5;
    for (int64_t& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(bound));
    }
    return HostTensor::from_int64(t, shape, v);
}

// The cases by name. The main tensor is f32 [rows, 1024] of --mib MiB (rows
// at least 2); other shapes hold the same number of elements.
MemoryCase memory_case(const std::string& what) {
    const int64_t cols = 1024, n = std::max<int64_t>(static_cast<int64_t>(tensor_floats()), 2 * cols);
    const int64_t rows = n / cols;
    const Layout full(PartialShape{rows, cols}, DataType::f32);
    MemoryCase c;
    Attributes& a = c.attrs;
    if (what == "eltwise_add") {
        a.set("mode", std::string("add"));
        c.op = "eltwise";
        c.ins = {full, full};
    } else if (what == "activation_relu") {
        a.set("func", std::string("relu"));
        c.op = "activation";
        c.ins = {full};
    } else if (what == "concat_halves") {   // two [rows/2, 1024] halves along axis 0
        a.set("axis", int64_t(0));
        const Layout half(PartialShape{rows / 2, cols}, DataType::f32);
        c.op = "concat";
        c.ins = {half, half};
    } else if (what == "transpose_2d") {   // [rows, 1024] -> [1024, rows]
        a.set("perm", std::vector<int64_t>{1, 0});
        c.op = "transpose";
        c.ins = {full};
    } else if (what == "transpose_0213") {   // attention heads: [4, S, 16, 64] -> [4, 16, S, 64]
        a.set("perm", std::vector<int64_t>{0, 2, 1, 3});
        c.op = "transpose";
        c.ins = {Layout(PartialShape{4, n / 4096, 16, 64}, DataType::f32)};
    } else if (what == "expand_rows") {   // a [1, 1024] row broadcast to [rows, 1024]
        c.op = "expand";
        c.ins = {Layout(PartialShape{1, cols}, DataType::f32), Layout(PartialShape{2}, DataType::i64)};
        c.data.emplace(1, HostTensor::from_int64(DataType::i64, Shape{2}, {rows, cols}));
    } else if (what == "slice_mid_half") {   // columns [256, 768) of [rows, 1024]
        a.set("starts", std::vector<int64_t>{256});
        a.set("ends", std::vector<int64_t>{768});
        a.set("axes", std::vector<int64_t>{1});
        c.op = "slice";
        c.ins = {full};
        c.bytes = static_cast<double>(full.bytes());   // the half that is read, then written
    } else if (what == "where") {
        // A random condition: x and y are each read about half, yet every
        // 32-byte sector of both is fetched.
        c.op = "where";
        c.ins = {Layout(full.shape, DataType::boolean), full, full};
        c.data.emplace(0, random_ints(DataType::boolean, full.get_shape(), 2));
    } else if (what == "cast_f32_f16" || what == "cast_f16_f32") {
        const bool down = what == "cast_f32_f16";
        a.set("to", std::string(down ? "f16" : "f32"));
        c.op = "cast";
        c.ins = {Layout(full.shape, down ? DataType::f32 : DataType::f16)};
    } else if (what == "reduce_sum_last" || what == "reduce_mean_mid") {
        // sum: [rows, 1024] -> [rows, 1]; mean: [outer, 256, 1024] -> [outer, 1, 1024]
        const bool last = what == "reduce_sum_last";
        a.set("mode", std::string(last ? "sum" : "mean"));
        a.set("axes", std::vector<int64_t>{last ? -1 : 1});
        c.op = "reduce";
        c.ins = {last ? full : Layout(PartialShape{std::max<int64_t>(n / (256 * cols), 1), 256, cols}, DataType::f32)};
    } else if (what == "layer_norm") {   // over the last axis, scale and bias [1024]
        const Layout affine(PartialShape{cols}, DataType::f32);
        a.set("axis", int64_t(-1));
        c.op = "layer_norm";
        c.ins = {full, affine, affine};
    } else if (what == "gather_rows") {   // `rows` random rows of a [rows, 1024] table
        a.set("axis", int64_t(0));
        c.op = "gather";
        c.ins = {full, Layout(PartialShape{rows}, DataType::i64)};
        c.data.emplace(1, random_ints(DataType::i64, Shape{rows}, rows));
        // The table is read only where indexed: the indices, then a row read and written per index.
        c.bytes = static_cast<double>(rows) * 8 + 2.0 * static_cast<double>(full.bytes());
    } else {
        throw Error("ocl_bench: no memory-bound case '" + what + "'");
    }
    return c;
}

const char* const kMemoryCases[] = {"eltwise_add",    "activation_relu", "concat_halves",   "transpose_2d",
                                    "transpose_0213", "expand_rows",     "slice_mid_half",  "where",
                                    "cast_f32_f16",   "cast_f16_f32",    "reduce_sum_last", "reduce_mean_mid",
                                    "layer_norm",     "gather_rows"};

double io_bytes(const OpRun& run) {
    double bytes = 0;
    for (const auto* side : {&run.params.inputs, &run.params.outputs})
        for (const Layout& l : *side) bytes += static_cast<double>(l.bytes());
    return bytes;
}

void BM_MemoryBound(benchmark::State& state, const std::string& what, const std::string& impl) {
    if (skip_without_ocl(state)) return;
    try {
        const MemoryCase c = memory_case(what);
        OpRun run(c.op, c.ins, c.attrs, impl, {}, c.data);
        if (!run.error.empty()) {
            state.SkipWithError(run.error.c_str());
            return;
        }
        const double bytes = c.bytes > 0 ? c.bytes : io_bytes(run);
        const Timing t = timed_loop(state, 0, [&] { run.execute(); });
        const double gbps = bytes / t.median / 1e9;
        state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(t.runs)));
        state.counters["GB/s"] = gbps;
        state.counters["of_copy"] = gbps / copy_gbps(nullptr);
        state.counters["MiB"] = static_cast<double>(g_mib);
        state.SetLabel(run.params.inputs[0].to_string() + " -> " + run.params.outputs[0].to_string());
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

// ---- (b) fully_connected / gemm -------------------------------------------------

std::map<std::string, double> g_static_gflops;    // "<op> MxKxN" -> static GFLOP/s
std::map<std::string, double> g_dynamic_gflops;   // "<op> MxKxN" -> shape-agnostic GFLOP/s

std::string matmul_key(const std::string& op, int64_t M, int64_t K, int64_t N) {
    return op + " " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
}

// Same repetitions per timed iteration for the dynrt and the CLBlast rows.
int matmul_reps(double flops) { return flops > 1e11 ? 3 : (flops > 1e9 ? 10 : 50); }

// Square sizes 1024..max_dim doubling (max_dim itself when below 1024), then the
// decode shapes M = 1..16 with K = N = decode_k.
std::vector<std::array<int64_t, 3>> matmul_shapes(int64_t max_dim, int64_t decode_k) {
    std::vector<std::array<int64_t, 3>> shapes;
    for (int64_t d = 1024; d <= max_dim; d *= 2) shapes.push_back({d, d, d});
    if (max_dim < 1024) shapes.push_back({max_dim, max_dim, max_dim});
    for (int64_t m : {1, 2, 4, 8, 16}) shapes.push_back({m, decode_k, decode_k});
    return shapes;
}

void BM_Matmul(benchmark::State& state, const std::string& op, const std::string& impl, int64_t M, int64_t K,
               int64_t N) {
    if (skip_without_ocl(state)) return;
    try {
        std::vector<Layout> ins;
        if (op == "fully_connected")
            ins = {Layout(PartialShape{M, K}, DataType::f32), Layout(PartialShape{N, K}, DataType::f32)};
        else ins = {Layout(PartialShape{M, K}, DataType::f32), Layout(PartialShape{K, N}, DataType::f32)};
        // "ocl_dynamic_const_w": the shape-agnostic impl of a node whose rows
        // are dynamic and whose weights are a constant (K and N static in the
        // program), as in a decode loop; "ocl_dynamic": every dim dynamic.
        const bool const_w = impl == "ocl_dynamic_const_w";
        std::vector<Layout> node_ins;
        if (const_w) {
            node_ins = ins;
            node_ins[0].shape[0] = Dimension::dynamic();
        }
        OpRun run(op, ins, Attributes(), const_w ? "ocl_dynamic" : impl, node_ins);
        if (!run.error.empty()) {
            state.SkipWithError(run.error.c_str());
            return;
        }
        const double flops = 2.0 * M * N * K;
        const int reps = matmul_reps(flops);
        const double per_run = timed_loop(state, reps, [&] { run.execute(); }).mean;
        const double gflops = flops / per_run / 1e9;
        state.counters["GFLOP/s"] = gflops;
        // Weights (and activations) streamed per run: what bounds decode shapes.
        state.counters["GB/s"] = 4.0 * (double(M) * K + double(K) * N + double(M) * N) / per_run / 1e9;
        const std::string key = matmul_key(op, M, K, N);
        if (impl == "ocl_static") {
            g_static_gflops[key] = gflops;
        } else {
            if (!const_w) g_dynamic_gflops[key] = gflops;
            auto it = g_static_gflops.find(key);
            if (it != g_static_gflops.end()) state.counters["dyn_over_static"] = gflops / it->second;
        }
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

#ifdef DYNRT_HAVE_CLBLAST
// ---- (b') CLBlast sgemm on the engine's device -----------------------------------
// The reference the matmul rows are compared against. The ocl engine does not
// hand out its CL handles, so CLBlast gets its own context and in-order queue
// on the device whose platform and name match the engine's.

std::string cl_platform_str(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, &s[0], nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

std::string cl_device_str(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, &s[0], nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

struct ClblastEnv {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::string why_not;                          // set when there is no queue
    std::map<std::string, std::string> checked;   // op -> "" (agrees with the host) or why not

    ClblastEnv() = default;
    ClblastEnv(const ClblastEnv&) = delete;
    ClblastEnv& operator=(const ClblastEnv&) = delete;
    ~ClblastEnv() {
        // CLBlast's program cache holds references to the context: drop it first.
        if (context) clblast::ClearCache();
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
    }
};

void open_clblast_env(ClblastEnv& e) {
    const OclDeviceLimits& want = env().device->limits();
    cl_uint np = 0;
    if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) {
        e.why_not = "CLBlast: no OpenCL platform";
        return;
    }
    std::vector<cl_platform_id> platforms(np);
    clGetPlatformIDs(np, platforms.data(), nullptr);
    // Preference: same platform and device name, same device name, first GPU, first device.
    cl_device_id same = nullptr, same_name = nullptr, first_gpu = nullptr, first = nullptr;
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
        std::vector<cl_device_id> devices(nd);
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr) != CL_SUCCESS) continue;
        const bool same_platform = cl_platform_str(p, CL_PLATFORM_NAME) == want.platform_name;
        for (cl_device_id d : devices) {
            cl_device_type type = 0;
            clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
            if (!first) first = d;
            if (!first_gpu && (type & CL_DEVICE_TYPE_GPU)) first_gpu = d;
            if (cl_device_str(d, CL_DEVICE_NAME) == want.device_name) {
                if (!same_name) same_name = d;
                if (!same && same_platform) same = d;
            }
        }
    }
    cl_device_id device = same ? same : same_name ? same_name : first_gpu ? first_gpu : first;
    if (!device) {
        e.why_not = "CLBlast: no OpenCL device";
        return;
    }
    cl_platform_id platform = nullptr;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    e.context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
        e.context = nullptr;
        e.why_not = "CLBlast: clCreateContext failed (" + std::to_string(err) + ")";
        return;
    }
    e.queue = clCreateCommandQueue(e.context, device, 0, &err);
    if (err != CL_SUCCESS) {
        e.queue = nullptr;
        e.why_not = "CLBlast: clCreateCommandQueue failed (" + std::to_string(err) + ")";
        return;
    }
    const char* how = same ? "the engine's device"
                      : same_name
                          ? "a device named like the engine's, on another platform"
                          : "NOT the engine's device (no device of that name): the first GPU, else the first device";
    std::fprintf(stderr, "ocl_bench: CLBlast on %s / %s (%s)\n", cl_platform_str(platform, CL_PLATFORM_NAME).c_str(),
                 cl_device_str(device, CL_DEVICE_NAME).c_str(), how);
}

ClblastEnv& clblast_env() {
    static ClblastEnv e;
    static const bool opened = [] {
        open_clblast_env(e);
        return true;
    }();
    (void)opened;
    return e;
}

// A buffer of CLBlast's context, released with its scope.
struct ClBuffer {
    cl_mem mem = nullptr;
    ClBuffer(cl_context context, size_t bytes) {
        cl_int err = CL_SUCCESS;
        mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        if (err != CL_SUCCESS)
            throw Error("CLBlast: clCreateBuffer of " + std::to_string(bytes) + " bytes failed (" +
                        std::to_string(err) + ")");
    }
    ClBuffer(const ClBuffer&) = delete;
    ClBuffer& operator=(const ClBuffer&) = delete;
    ~ClBuffer() {
        if (mem) clReleaseMemObject(mem);
    }
};

void cl_check(cl_int err, const char* what) {
    if (err != CL_SUCCESS) throw Error(std::string("CLBlast: ") + what + " failed (" + std::to_string(err) + ")");
}

// One row-major sgemm as the dynrt op computes it:
//   fully_connected: c[M,N] = a[M,K] * b[N,K]^T;  gemm: c[M,N] = a[M,K] * b[K,N].
clblast::StatusCode clblast_matmul(ClblastEnv& e, bool fc, size_t M, size_t K, size_t N, cl_mem a, cl_mem b, cl_mem c) {
    cl_command_queue queue = e.queue;
    return clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                fc ? clblast::Transpose::kYes : clblast::Transpose::kNo, M, N, K, 1.0f, a, 0, K, b, 0,
                                fc ? K : N, 0.0f, c, 0, N, &queue);
}

std::string clblast_status(clblast::StatusCode s) {
    return "CLBlast sgemm returned status " + std::to_string(static_cast<int>(s));
}

// Runs `op` through CLBlast on a few shapes (square, decode-like, odd sizes so a
// mixed-up leading dimension or transpose shows) and compares with a host loop in
// double: "" when every element agrees, else the first difference. A comparison
// against a wrong result would be worse than none.
std::string check_clblast(ClblastEnv& e, const std::string& op) {
    const bool fc = op == "fully_connected";
    const std::array<std::array<size_t, 3>, 3> shapes = {{{64, 64, 64}, {3, 80, 48}, {257, 300, 520}}};
    try {
        for (const auto& s : shapes) {
            const size_t M = s[0], K = s[1], N = s[2];
            std::vector<float> a(M * K), b(K * N), c(M * N, 0.0f);
            uint64_t seed = 7;
            auto next = [&] {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                return static_cast<float>(static_cast<double>((seed >> 40) % 2001) / 1000.0 - 1.0);
            };
            for (float& v : a) v = next();
            for (float& v : b) v = next();
            ClBuffer da(e.context, a.size() * 4), db(e.context, b.size() * 4), dc(e.context, c.size() * 4);
            cl_check(clEnqueueWriteBuffer(e.queue, da.mem, CL_TRUE, 0, a.size() * 4, a.data(), 0, nullptr, nullptr),
                     "write");
            cl_check(clEnqueueWriteBuffer(e.queue, db.mem, CL_TRUE, 0, b.size() * 4, b.data(), 0, nullptr, nullptr),
                     "write");
            const clblast::StatusCode st = clblast_matmul(e, fc, M, K, N, da.mem, db.mem, dc.mem);
            if (st != clblast::StatusCode::kSuccess) return clblast_status(st) + " on the check";
            cl_check(clEnqueueReadBuffer(e.queue, dc.mem, CL_TRUE, 0, c.size() * 4, c.data(), 0, nullptr, nullptr),
                     "read");
            for (size_t i = 0; i < M; ++i)
                for (size_t j = 0; j < N; ++j) {
                    double ref = 0, mag = 0;
                    for (size_t k = 0; k < K; ++k) {
                        const double p = double(a[i * K + k]) * (fc ? b[j * K + k] : b[k * N + j]);
                        ref += p;
                        mag += std::fabs(p);
                    }
                    // f32 accumulation error stays far below 1e-4 of the magnitude
                    // sum; a wrong layout is off by about sqrt(K) / 3.
                    const double got = c[i * N + j];
                    if (std::fabs(got - ref) > 1e-4 * mag + 1e-6)
                        return "CLBlast " + op + " M" + std::to_string(M) + "_K" + std::to_string(K) + "_N" +
                               std::to_string(N) + " differs from the host loop at [" + std::to_string(i) + "," +
                               std::to_string(j) + "]: " + std::to_string(got) + " vs " + std::to_string(ref);
                }
        }
    } catch (const Error& err) {
        return err.what();
    }
    return {};
}

void BM_Clblast(benchmark::State& state, const std::string& op, int64_t M, int64_t K, int64_t N) {
    if (skip_without_ocl(state)) return;
    ClblastEnv& e = clblast_env();
    if (!e.why_not.empty()) {
        state.SkipWithError(e.why_not.c_str());
        return;
    }
    auto checked = e.checked.find(op);
    if (checked == e.checked.end()) checked = e.checked.emplace(op, check_clblast(e, op)).first;
    if (!checked->second.empty()) {
        state.SkipWithError(checked->second.c_str());
        return;
    }
    try {
        const bool fc = op == "fully_connected";
        const size_t m = static_cast<size_t>(M), k = static_cast<size_t>(K), n = static_cast<size_t>(N);
        ClBuffer a(e.context, m * k * 4), b(e.context, k * n * 4), c(e.context, m * n * 4);
        const float fa = 0.5f, fb = 0.25f;
        cl_check(clEnqueueFillBuffer(e.queue, a.mem, &fa, sizeof fa, 0, m * k * 4, 0, nullptr, nullptr), "fill");
        cl_check(clEnqueueFillBuffer(e.queue, b.mem, &fb, sizeof fb, 0, k * n * 4, 0, nullptr, nullptr), "fill");
        // Warm-up: CLBlast compiles its kernels for this device on first use.
        clblast::StatusCode st = clblast_matmul(e, fc, m, k, n, a.mem, b.mem, c.mem);
        cl_check(clFinish(e.queue), "clFinish");
        if (st != clblast::StatusCode::kSuccess) {
            state.SkipWithError(clblast_status(st).c_str());
            return;
        }
        const double flops = 2.0 * M * N * K;
        const int reps = matmul_reps(flops);
        double total = 0;
        int64_t runs = 0;
        for (auto _ : state) {
            const auto t0 = Clock::now();
            for (int r = 0; r < reps && st == clblast::StatusCode::kSuccess; ++r)
                st = clblast_matmul(e, fc, m, k, n, a.mem, b.mem, c.mem);
            clFinish(e.queue);
            const double s = std::chrono::duration<double>(Clock::now() - t0).count();
            if (st != clblast::StatusCode::kSuccess) {
                state.SkipWithError(clblast_status(st).c_str());
                break;
            }
            state.SetIterationTime(s);
            total += s;
            runs += reps;
        }
        if (st != clblast::StatusCode::kSuccess || runs == 0) return;
        const double per_run = total / static_cast<double>(runs);
        const double gflops = flops / per_run / 1e9;
        state.counters["GFLOP/s"] = gflops;
        state.counters["GB/s"] = 4.0 * (double(M) * K + double(K) * N + double(M) * N) / per_run / 1e9;
        const std::string key = matmul_key(op, M, K, N);
        if (auto it = g_static_gflops.find(key); it != g_static_gflops.end())
            state.counters["dynrt_static_over_clblast"] = it->second / gflops;
        if (auto it = g_dynamic_gflops.find(key); it != g_dynamic_gflops.end())
            state.counters["dynrt_dynamic_over_clblast"] = it->second / gflops;
    } catch (const Error& err) {
        state.SkipWithError(err.what());
    }
}

// Rows ocl/clblast/<op>/M.._K.._N.. for the shapes of the dynrt matmul rows;
// registered after them so their GFLOP/s are known for the ratios.
void register_clblast(int64_t max_dim, int64_t decode_k) {
    for (const char* op : {"fully_connected", "gemm"})
        for (const auto& s : matmul_shapes(max_dim, decode_k)) {
            const std::string name = std::string("ocl/clblast/") + op + "/M" + std::to_string(s[0]) + "_K" +
                                     std::to_string(s[1]) + "_N" + std::to_string(s[2]);
            benchmark::RegisterBenchmark(name.c_str(),
                                         [op, s](benchmark::State& st) { BM_Clblast(st, op, s[0], s[1], s[2]); })
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
        }
}
#endif   // DYNRT_HAVE_CLBLAST

// ---- (c) host work per node ------------------------------------------------------
//
// "Per node" is the marginal cost: every iteration runs a short and a long chain
// (kChain and kLongChain nodes or launches, in alternating order), and the cost
// per node is the slope (T_long - T_short) / (kLongChain - kChain), median over
// iterations. The intercept T_short - kChain * slope is what each infer (or
// chain of launches) pays once whatever its length: input upload, output
// download, the final wait. Both in wall time (us_*) and in the calling
// thread's CPU time (cpu_us_*: on a CPU device the kernels run on the driver's
// worker threads, so this is the host side alone), and in issue time
// (submit_us_*: wall time until the last kernel is enqueued, before the wait).
// A GPU driver that spins while waiting puts the device's time into both wall
// and CPU time, and a chain whose kernels take longer on the device than the
// host takes to issue them has a device-bound slope; the issue time is the
// host's own work either way.

constexpr int kChain = 64;        // short chain
constexpr int kLongChain = 256;   // long chain

// Marginal cost of one plain launch (BM_PlainEnqueue), us, wall and CPU time.
double g_enqueue_us = 0;
double g_enqueue_cpu_us = 0;
double g_enqueue_submit_us = 0;   // issue time only (before the wait)

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Seconds per iteration of the short and the long chain, wall and thread CPU.
struct ChainSamples {
    // [0] short, [1] long. `submit`: the part of the wall time until every
    // kernel was issued, before waiting for the device (what `run` returns):
    // host work alone, also where the driver spins on the CPU while it waits.
    // `driver`: the host time the launches spent in the driver's calls
    // (OclStreamProfile::driver_ns); submit - driver is the runtime's own work.
    // `device`: the kernels' execution time (profiling streams only:
    // DYNRT_OCL_PROFILE=1; zero otherwise).
    std::vector<double> wall[2], cpu[2], submit[2], driver[2], device[2];
    enum class What { wall, cpu, submit, driver, device };

    // Median over iterations of the per-node slope, us.
    double slope_us(bool use_cpu) const { return slope_of(use_cpu ? What::cpu : What::wall); }
    double slope_of(What what) const {
        const std::vector<double>* s = what == What::cpu      ? cpu
                                       : what == What::wall   ? wall
                                       : what == What::submit ? submit
                                       : what == What::driver ? driver
                                                              : device;
        std::vector<double> d(s[0].size());
        for (size_t i = 0; i < d.size(); ++i) d[i] = (s[1][i] - s[0][i]) / (kLongChain - kChain) * 1e6;
        return median_of(std::move(d));
    }
    // The short chain's median minus its nodes at the slope: the fixed part, us.
    double intercept_us(bool use_cpu) const {
        return median_of((use_cpu ? cpu : wall)[0]) * 1e6 - kChain * slope_us(use_cpu);
    }
};

// What one chain run reports besides its wall time, in seconds.
struct Issued {
    double submit = 0;   // until every kernel was enqueued
    double driver = 0;   // of which in the driver's calls
    double device = 0;   // kernel execution (profiling streams)
};

// A chain run's figures: `submit_s` of issue time, the driver and device time
// the stream's profile gained between `before` and `after`.
Issued issued_from(double submit_s, const OclStreamProfile& before, const OclStreamProfile& after) {
    Issued issued;
    issued.submit = submit_s;
    issued.driver = double(after.driver_ns - before.driver_ns) * 1e-9;
    issued.device = double(after.kernel_ns - before.kernel_ns) * 1e-9;
    return issued;
}

// Runs `run(false)` (short chain) and `run(true)` (long chain) once per
// iteration; the one that goes first alternates, so neither always finds the
// caches warmed by the other. The iteration's manual time is the sum.
template <typename F>
ChainSamples time_chains(benchmark::State& state, F&& run) {
    ChainSamples s;
    run(false);   // warm-up
    run(true);
    int64_t iter = 0;
    for (auto _ : state) {
        double wall[2] = {0, 0}, cpu[2] = {0, 0};
        Issued issued[2];
        for (int k = 0; k < 2; ++k) {
            const bool longer = (k + iter) % 2 == 1;
            const double c0 = thread_cpu_seconds();
            const auto t0 = Clock::now();
            issued[longer] = run(longer);
            wall[longer] = std::chrono::duration<double>(Clock::now() - t0).count();
            cpu[longer] = thread_cpu_seconds() - c0;
        }
        state.SetIterationTime(wall[0] + wall[1]);
        for (int j = 0; j < 2; ++j) {
            s.wall[j].push_back(wall[j]);
            s.cpu[j].push_back(cpu[j]);
            s.submit[j].push_back(issued[j].submit);
            s.driver[j].push_back(issued[j].driver);
            s.device[j].push_back(issued[j].device);
        }
        ++iter;
    }
    return s;
}

// The argument list of a shape-agnostic eltwise node (shape_info, two inputs,
// one output) and its dispatch for [1, 256]; shape_info[0] holds the number of
// float4 vectors.
const char* kAddKernel = R"CL(
__kernel void add4(__global const int* shape_info, __global const float4* a, __global const float4* b,
                   __global float4* out) {
    const int n = shape_info[0];
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) out[i] = a[i] + b[i];
}
)CL";

// Plain enqueue cost: the launches of the node chain without the flow. As in
// the chain, every position has its own kernel object and reads the previous
// position's output, and each launch passes its whole argument list to
// launch(), whose argument cache then sets nothing (the arguments do not
// change between runs, as for a node whose shape did not change).
// `own_shape_info`: every position has its own shape_info buffer, as every
// node of the flow has (otherwise one buffer serves the whole chain).
void BM_PlainEnqueue(benchmark::State& state, bool own_shape_info) {
    if (skip_without_ocl(state)) return;
    try {
        OclDevice& dev = *env().device;
        const Layout l(PartialShape{1, 256}, DataType::f32);
        MemoryPtr x = device_tensor(l, 1), ping = device_tensor(l, 0), pong = device_tensor(l, 0);
        const int32_t vectors = 256 / 4;
        std::vector<std::shared_ptr<Buffer>> shape_infos;
        for (int i = 0; i < (own_shape_info ? kLongChain : 1); ++i) {
            shape_infos.push_back(env().engine->allocate(sizeof vectors));
            shape_infos.back()->write(*env().stream, &vectors, 0, sizeof vectors);
        }
        const OclDispatch d = dispatch_grid_stride(vectors, dev.limits());
        std::vector<std::shared_ptr<OclKernel>> kernels;
        std::vector<std::vector<OclArg>> args;
        for (int i = 0; i < kLongChain; ++i) {
            kernels.push_back(dev.build_kernel(kAddKernel, "add4", {}));
            const Memory& in = i == 0 ? *x : (i % 2 ? *ping : *pong);
            const Memory& out = i % 2 ? *pong : *ping;
            const Buffer& si = *shape_infos[own_shape_info ? size_t(i) : 0];
            args.push_back({OclArg::buf(si), OclArg::mem(in), OclArg::mem(*x), OclArg::mem(out)});
        }
        const ChainSamples s = time_chains(state, [&](bool longer) {
            const int n = longer ? kLongChain : kChain;
            const OclStreamProfile before = dev.stream_profile(*env().stream);
            const auto t0 = Clock::now();
            for (int i = 0; i < n; ++i) dev.launch(*env().stream, *kernels[i], args[i], d);
            const double submit = std::chrono::duration<double>(Clock::now() - t0).count();
            env().stream->finish();
            return issued_from(submit, before, dev.stream_profile(*env().stream));
        });
        if (!own_shape_info) {   // the baseline of host_work_per_node
            g_enqueue_us = s.slope_us(false);
            g_enqueue_cpu_us = s.slope_us(true);
            g_enqueue_submit_us = s.slope_of(ChainSamples::What::submit);
        }
        state.counters["us_per_kernel"] = s.slope_us(false);
        state.counters["cpu_us_per_kernel"] = s.slope_us(true);
        state.counters["submit_us_per_kernel"] = s.slope_of(ChainSamples::What::submit);
        state.counters["driver_us_per_kernel"] = s.slope_of(ChainSamples::What::driver);
        state.counters["host_us_outside_driver"] =
            s.slope_of(ChainSamples::What::submit) - s.slope_of(ChainSamples::What::driver);
        if (dev.stream_profile(*env().stream).kernel_ns > 0)
            state.counters["device_us_per_kernel"] = s.slope_of(ChainSamples::What::device);
        state.counters["fixed_us"] = s.intercept_us(false);
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

// Host work per node: chains of kChain and kLongChain eltwise add nodes (fusion
// off) on a [1, 256] input (shape unchanged between infers) through Network and
// InferRequest. us_per_node is the slope, fixed_us_per_infer the intercept,
// host_us_over_enqueue the slope minus the plain launch's (same for CPU time).
// `dynamic`: the shape-agnostic eltwise impl (the node's input has a dynamic
// dim); otherwise a static network and the static impl.
void BM_HostWorkPerNode(benchmark::State& state, bool dynamic) {
    if (skip_without_ocl(state)) return;
    try {
        auto make_request = [dynamic](int nodes) {
            auto p = std::make_shared<Program>(env().registry, "chain");
            p->add_input("x", Layout(dynamic ? PartialShape{1, Dimension()} : PartialShape{1, 256}, DataType::f32));
            std::string prev = "x";
            Attributes add;
            add.set("mode", std::string("add"));
            for (int i = 0; i < nodes; ++i) {
                const std::string name = "n" + std::to_string(i);
                p->add_node(name, "eltwise", {prev, "x"}, add);
                prev = name;
            }
            p->add_output(prev);
            p->build();
            // Fusion off: a chain of eltwise adds would otherwise run as one
            // kernel (the eltwise kernel takes the others as post-ops), and
            // this measures the flow of one node per launch.
            NetworkOptions opt;
            opt.fusion = false;
            auto net = Network::create(p, env().engine, opt);
            auto req = std::make_unique<InferRequest>(net);
            req->set_input("x", HostTensor(DataType::f32, Shape{1, 256}));
            req->infer();
            net->wait_for_background_builds();
            req->infer();
            return req;
        };
        std::unique_ptr<InferRequest> chains[2] = {make_request(kChain), make_request(kLongChain)};
        const std::string impl = chains[0]->last_run().nodes.back().impl;
        OclDevice& dev = *env().device;
        const ChainSamples s = time_chains(state, [&](bool longer) {
            InferRequest& req = *chains[longer];
            const OclStreamProfile before = dev.stream_profile(req.stream());
            req.infer();
            return issued_from(req.last_run().submit_ms / 1e3, before, dev.stream_profile(req.stream()));
        });
        const double per_node = s.slope_us(false), cpu_per_node = s.slope_us(true);
        const double submit_per_node = s.slope_of(ChainSamples::What::submit);
        state.counters["us_per_node"] = per_node;
        state.counters["cpu_us_per_node"] = cpu_per_node;
        state.counters["submit_us_per_node"] = submit_per_node;
        // The runtime's own host work per node (flow, impl, launch wrapper):
        // the issue time less the driver's calls. Unlike the differences to
        // plain_enqueue below, it does not move with what the driver does
        // differently for this chain's kernels, nor with a driver call that
        // blocks because the device is behind.
        const double driver_per_node = s.slope_of(ChainSamples::What::driver);
        state.counters["driver_us_per_node"] = driver_per_node;
        state.counters["host_us_outside_driver"] = submit_per_node - driver_per_node;
        if (dev.stream_profile(chains[0]->stream()).kernel_ns > 0)
            state.counters["device_us_per_node"] = s.slope_of(ChainSamples::What::device);
        state.counters["fixed_us_per_infer"] = s.intercept_us(false);
        state.counters["cpu_fixed_us_per_infer"] = s.intercept_us(true);
        if (g_enqueue_us > 0) {
            state.counters["host_us_over_enqueue"] = per_node - g_enqueue_us;
            state.counters["cpu_us_over_enqueue"] = cpu_per_node - g_enqueue_cpu_us;
            // Host work alone (issue time, no device wait in it): the figure
            // to hold against the <= 1 us goal where the driver's wait spins.
            state.counters["submit_us_over_enqueue"] = submit_per_node - g_enqueue_submit_us;
        }
        state.SetLabel(impl);
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

// ---- (d) convolution ----------------------------------------------------------------
//
// 1-D convolution and depthwise 2-D convolution next to a regular 2-D one, f32
// with bias, stride 1, pads 1 (output extents as the input's), batch --mib / 32
// clamped to 1..8. GFLOP/s and bytes come from the op's cost (OpDefinition::
// cost: a multiply-add per output element and weight of its group; every
// tensor once); device time is the median over iterations of the time per run.

struct ConvCase {
    const char* name;
    std::vector<int64_t> x, w;   // without / with the batch: x [C, S...], w [O, C/groups, k...]
    int64_t groups;
};

const ConvCase kConvCases[] = {{"conv1d", {256, 4096}, {256, 256, 3}, 1},
                               {"conv2d", {128, 56, 56}, {128, 128, 3, 3}, 1},
                               {"conv2d_depthwise", {512, 56, 56}, {512, 1, 3, 3}, 512}};

int64_t conv_batch() { return std::clamp<int64_t>(static_cast<int64_t>(g_mib / 32), 1, 8); }

std::map<std::string, double> g_conv_static_gflops;   // case name -> static GFLOP/s

void BM_Convolution(benchmark::State& state, const ConvCase& cc, const std::string& impl) {
    if (skip_without_ocl(state)) return;
    try {
        std::vector<int64_t> x = {conv_batch()};
        x.insert(x.end(), cc.x.begin(), cc.x.end());
        const size_t spatial = cc.x.size() - 1;
        const std::vector<Layout> ins = {Layout(Shape(x), DataType::f32), Layout(Shape(cc.w), DataType::f32),
                                         Layout(PartialShape{cc.w[0]}, DataType::f32)};
        Attributes a;
        a.set("groups", cc.groups);
        a.set("pads_begin", std::vector<int64_t>(spatial, 1));
        a.set("pads_end", std::vector<int64_t>(spatial, 1));
        OpRun run("convolution", ins, a, impl);
        if (!run.error.empty()) {
            state.SkipWithError(run.error.c_str());
            return;
        }
        const OpDefinition& def = *run.params.op;
        if (!def.cost) throw Error("convolution declares no cost");
        const OpCost cost = def.cost(run.params.inputs, run.params.outputs, run.attrs);
        const double per_run = timed_loop(state, 0, [&] { run.execute(); }).median;
        const double gflops = cost.flops / per_run / 1e9;
        state.counters["GFLOP/s"] = gflops;
        state.counters["GB/s"] = cost.bytes / per_run / 1e9;
        state.counters["ms_per_run"] = per_run * 1e3;
        if (impl == "ocl_static") {
            g_conv_static_gflops[cc.name] = gflops;
        } else if (auto it = g_conv_static_gflops.find(cc.name); it != g_conv_static_gflops.end()) {
            state.counters["dyn_over_static"] = gflops / it->second;
        }
        state.SetLabel(run.params.inputs[0].to_string() + " * " + run.params.inputs[1].to_string() +
                       " groups=" + std::to_string(cc.groups));
    } catch (const Error& e) {
        state.SkipWithError(e.what());
    }
}

void register_all() {
    benchmark::RegisterBenchmark("ocl/copy_kernel", BM_CopyKernel)->UseManualTime()->Unit(benchmark::kMillisecond);
    for (const char* what : kMemoryCases)
        for (const char* impl : {"ocl_static", "ocl_dynamic"})
            benchmark::RegisterBenchmark((std::string("ocl/") + what + "/" + impl).c_str(),
                                         [what, impl](benchmark::State& s) { BM_MemoryBound(s, what, impl); })
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
    for (const char* op : {"fully_connected", "gemm"}) {
        for (const auto& s : matmul_shapes(g_max_dim, g_decode_k))
            for (const char* impl : {"ocl_static", "ocl_dynamic", "ocl_dynamic_const_w"}) {
                const std::string name = std::string("ocl/") + op + "/" + impl + "/M" + std::to_string(s[0]) + "_K" +
                                         std::to_string(s[1]) + "_N" + std::to_string(s[2]);
                benchmark::RegisterBenchmark(
                    name.c_str(), [op, impl, s](benchmark::State& st) { BM_Matmul(st, op, impl, s[0], s[1], s[2]); })
                    ->UseManualTime()
                    ->Unit(benchmark::kMicrosecond);
            }
    }
    for (const ConvCase& cc : kConvCases)
        for (const char* impl : {"ocl_static", "ocl_dynamic"})
            benchmark::RegisterBenchmark((std::string("ocl/") + cc.name + "/" + impl).c_str(),
                                         [&cc, impl](benchmark::State& s) { BM_Convolution(s, cc, impl); })
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
#ifdef DYNRT_HAVE_CLBLAST
    register_clblast(g_max_dim, g_decode_k);
#else
    benchmark::RegisterBenchmark("ocl/clblast_sgemm",
                                 [](benchmark::State& s) { s.SkipWithError("CLBlast not found"); });
#endif
    // The chains of section (c); plain_enqueue runs first: it sets the
    // baseline of host_work_per_node.
    struct Chain {
        const char* name;
        void (*run)(benchmark::State&, bool);
        bool flag;
    };
    static const Chain chains[] = {{"ocl/plain_enqueue", BM_PlainEnqueue, false},
                                   {"ocl/plain_enqueue/own_shape_info", BM_PlainEnqueue, true},
                                   {"ocl/host_work_per_node", BM_HostWorkPerNode, true},
                                   {"ocl/host_work_per_node/static", BM_HostWorkPerNode, false}};
    for (const Chain& c : chains)
        benchmark::RegisterBenchmark(c.name, [&c](benchmark::State& s) { c.run(s, c.flag); })
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
    // Not given: 32 and 16 times --mib (8192 and 4096 at the default 256), so
    // that --mib alone makes a small run.
    const auto mib = static_cast<int64_t>(std::min<size_t>(g_mib, 256));
    if (g_max_dim == 0) g_max_dim = 32 * mib;
    if (g_decode_k == 0) g_decode_k = 16 * mib;
    if (g_max_dim < 16) g_max_dim = 16;
    if (g_decode_k < 16) g_decode_k = 16;
}

}   // namespace

int main(int argc, char** argv) {
    parse_flags(argc, argv);
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
