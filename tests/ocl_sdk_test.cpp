// The OpenCL op SDK (plugins/ocl/sdk): a multi-kernel impl with a scratch
// buffer (a two-pass row sum: partial sums of chunks into scratch, then a final
// pass) over changing shapes, through the flow and with no per-request state
// or scratch from the caller; two infer requests of one network on two threads
// giving the results of sequential runs (shared impls keep no per-run state);
// OpenCL impl entries that list their formats, so a blocked input to eltwise
// gets a clear error or a reorder, never garbage; data-dependent outputs
// reported by a kernel (the count of kept elements), within their bound; a
// check of data reported by a kernel (report_check) on an op with static
// output shapes.
// Skips without an ocl engine.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

// ---- a two-kernel op with scratch ---------------------------------------------

// y[r] = sum_c x[r, c]. Stage 1: work-item (j, r) sums chunk j of row r into
// scratch 0; stage 2: work-item r sums its row's chunk sums into y. Without
// the scratch binding or the second stage y is not the sum.
constexpr int kChunk = 16;
const char kRowSumSource[] = R"CL(
#define ROWS ((int)INPUT0_DIM6)
#define COLS ((int)INPUT0_DIM7)
#define CHUNKS ((COLS + CHUNK - 1) / CHUNK)
KERNEL(rowsum_partial)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global float* partial) {
    const int j = get_global_id(0), r = get_global_id(1);
    if (j >= CHUNKS || r >= ROWS) return;
    float s = 0.0f;
    for (int c = j * CHUNK; c < min(COLS, (j + 1) * CHUNK); ++c) s += input0[r * COLS + c];
    partial[r * CHUNKS + j] = s;
}
KERNEL(rowsum_final)(OPTIONAL_SHAPE_INFO_ARG __global const float* partial, __global float* output0) {
    const int r = get_global_id(0);
    if (r >= ROWS) return;
    float s = 0.0f;
    for (int j = 0; j < CHUNKS; ++j) s += partial[r * CHUNKS + j];
    output0[r] = s;
}
)CL";

size_t rows_of(const KernelParams& p) { return size_t(p.inputs[0].shape[0].get_length()); }
size_t chunks_of(const KernelParams& p) { return (size_t(p.inputs[0].shape[1].get_length()) + kChunk - 1) / kChunk; }

OclMultiKernelSpec rowsum_spec() {
    OclMultiKernelSpec s;
    s.source = kRowSumSource;
    s.defines = [](const KernelParams&, bool) { return JitDefines{{"CHUNK", std::to_string(kChunk)}}; };
    s.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{{"rowsum_partial", {OclArgRef::input(0), OclArgRef::scratch(0)}},
                                     {"rowsum_final", {OclArgRef::scratch(0), OclArgRef::output(0)}}};
    };
    s.update = [](const KernelParams& p, const OclDeviceLimits& lim, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = dispatch_nd({chunks_of(p), rows_of(p), 1}, 2, lim);
        runs[1].dispatch = dispatch_1d(rows_of(p), lim);
    };
    s.scratch_bytes = [](const KernelParams& p) {
        return std::vector<size_t>{rows_of(p) * chunks_of(p) * sizeof(float)};
    };
    return s;
}

void register_rowsum(ModuleRegistrar& reg) {
    OpDefinition def;
    def.name = "t_rowsum";
    def.infer = [](const ShapeInferContext& ctx) {
        const Layout& x = ctx.inputs.at(0);
        return std::vector<Layout>{Layout(PartialShape{x.shape[0]}, x.dtype)};
    };
    reg.add_op(def);
    add_host_impls(reg, "t_rowsum", [](HostCall& c) {
        const size_t rows = size_t(c.in_shape(0)[0]), cols = size_t(c.in_shape(0)[1]);
        for (size_t r = 0; r < rows; ++r) {
            double s = 0;
            for (size_t k = 0; k < cols; ++k) s += c.get(0, r * cols + k);
            c.set(0, r, s);
        }
    });
    OclImplOptions o;
    o.dtypes = {DataType::f32};
    add_ocl_multi_impls(reg, "t_rowsum", rowsum_spec(), o);
}

// ---- a data-dependent output ------------------------------------------------------

// y = the positive elements of x in order: y's length is known only after the
// kernel ran. One work-item compacts and writes the count into report[0];
// report_shapes makes it y's shape. An empty x skips the kernel, so y's length
// comes from the zeroed report.
const char kKeepPositiveSource[] = R"CL(
KERNEL(keep_positive)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global float* output0,
                      __global int* report) {
    int n = 0;
    for (int i = 0; i < (int)INPUT0_LENGTH; ++i)
        if (input0[i] > 0.0f) output0[n++] = input0[i];
    report[0] = n;
}
)CL";

// One work-item walks the whole input (none for an empty one) and reports `ints`.
OclKernelSpec one_item_spec(const char* source, const std::string& kernel, size_t ints) {
    OclKernelSpec s;
    s.source = source;
    s.kernel_name = kernel;
    s.dispatch = [](const KernelParams& p, const OclDeviceLimits& lim) {
        return dispatch_1d(p.inputs[0].count() ? 1 : 0, lim);
    };
    s.report_ints = ints;
    return s;
}

OclKernelSpec keep_positive_spec() {
    OclKernelSpec s = one_item_spec(kKeepPositiveSource, "keep_positive", 1);
    s.report_shapes = [](const KernelParams&, const std::vector<int32_t>& r) { return std::vector<Shape>{{r[0]}}; };
    return s;
}

void register_keep_positive(ModuleRegistrar& reg) {
    OpDefinition def;
    def.name = "t_keep_positive";
    def.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    def.traits.data_dependent_output = true;
    reg.add_op(def);
    add_host_impls(reg, "t_keep_positive", [](HostCall& c) {
        int64_t n = 0;
        for (size_t i = 0; i < c.in_shape(0).count(); ++i)
            if (c.get(0, i) > 0) c.set(0, size_t(n++), c.get(0, i));
        c.set_output_shape(0, Shape{n});
    });
    OclImplOptions o;
    o.dtypes = {DataType::f32};
    add_ocl_impls(reg, "t_keep_positive", keep_positive_spec(), o);
}

// ---- a check of data ---------------------------------------------------------------

// y = x, an op with static output shapes that refuses a negative element: the
// kernel copies and reports the first negative element (index + 1, value),
// report_check raises the error naming it. Without the check the copy would
// pass silently.
const char kNonNegativeSource[] = R"CL(
KERNEL(non_negative)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global float* output0,
                     __global int* report) {
    for (int i = 0; i < (int)INPUT0_LENGTH; ++i) {
        output0[i] = input0[i];
        if (input0[i] < 0.0f && report[0] == 0) {
            report[0] = i + 1;
            report[1] = (int)input0[i];
        }
    }
}
)CL";

OclKernelSpec non_negative_spec() {
    OclKernelSpec s = one_item_spec(kNonNegativeSource, "non_negative", 2);
    s.report_check = [](const KernelParams& p, const std::vector<int32_t>& r) {
        if (r[0] != 0)
            throw Error("x[" + std::to_string(r[0] - 1) + "] = " + std::to_string(r[1]) + " is negative",
                        node_context(p.node, "t_non_negative", "x"));
    };
    return s;
}

void register_non_negative(ModuleRegistrar& reg) {
    OpDefinition def;
    def.name = "t_non_negative";
    def.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    reg.add_op(def);
    OclImplOptions o;
    o.dtypes = {DataType::f32};
    add_ocl_impls(reg, "t_non_negative", non_negative_spec(), o);
}

struct SdkEnv {
    std::shared_ptr<Registry> registry = std::make_shared<Registry>();
    EnginePtr engine;
    SdkEnv() {
        test::ocl_engine();   // points the binary cache at the test's temp folder
        for (const char* m : {"libdynrt_ocl.so"}) ModuleLoader::load_file(*registry, test::module_dir() + "/" + m);
        auto rec = std::make_shared<ModuleRecord>();
        rec->path = "<ocl_sdk_test>";
        rec->name = "ocl_sdk_test";
        ModuleRegistrar r(*registry, rec);
        register_rowsum(r);
        register_keep_positive(r);
        register_non_negative(r);
        r.commit();
        try {
            EngineConfig cfg;
            cfg.device = "ocl";
            engine = registry->create_engine("ocl", cfg);
        } catch (const Error&) {
            engine = nullptr;   // no OpenCL platform
        }
    }
};

SdkEnv& sdk_env() {
    static SdkEnv e;
    return e;
}

// The params of an impl made directly (create_ocl_impl) for node "node".
KernelParams direct_params(Engine& eng, const char* op, const Layout& in, const Layout& out) {
    KernelParams p;
    p.node = "node";
    p.op = &sdk_env().registry->op(op).def;
    p.inputs = {in};
    p.outputs = {out};
    p.engine = &eng;
    return p;
}

// Small integers: every partial and total sum is exact in float.
HostTensor int_valued(const Shape& s, uint64_t seed) {
    HostTensor t = test::random_tensor(DataType::f32, s, seed, -8.0, 8.0);
    for (size_t i = 0; i < t.count(); ++i) t.as<float>()[i] = float(int(t.as<float>()[i]));
    return t;
}

std::vector<float> row_sums(const HostTensor& x) {
    const size_t rows = size_t(x.shape()[0]), cols = size_t(x.shape()[1]);
    std::vector<float> y(rows, 0.0f);
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) y[r] += x.as<float>()[r * cols + c];
    return y;
}

const std::vector<Shape> kRowSumShapes = {{3, 40}, {1, 1}, {17, 257}, {3, 40}, {64, 16}, {5, 17}, {2, 1000}};

TEST(OclSdk, TwoKernelsWithScratch_RowSumMatchesHostOverChangingShapes) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "shape-agnostic" : "static");
        auto program = std::make_shared<Program>(sdk_env().registry, "rowsum");
        program->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
        program->add_node("node", "t_rowsum", {"x"});
        program->add_output("node");
        program->build();
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        InferRequest req(Network::create(program, sdk_env().engine, opts));
        uint64_t seed = 1;
        for (const Shape& s : kRowSumShapes) {
            SCOPED_TRACE(s.to_string());
            const HostTensor x = int_valued(s, seed++);
            req.set_input("x", x);
            req.infer();
            EXPECT_EQ(req.inst("node").impl()->name(), dynamic ? "t_rowsum_ocl_dynamic" : "t_rowsum_ocl_static");
            const HostTensor y = req.get_output(0);
            const std::vector<float> want = row_sums(x);
            ASSERT_EQ(y.count(), want.size());
            for (size_t r = 0; r < want.size(); ++r) ASSERT_EQ(y.as<float>()[r], want[r]) << "row " << r;
        }
    }
}

// The impl made directly and run with neither a state nor scratch from the
// caller: it falls back to a local state that allocates its own scratch.
TEST(OclSdk, TwoKernelsWithScratch_RunWithoutStateOrScratchFromTheCaller) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    Engine& eng = *sdk_env().engine;
    auto stream = eng.create_stream();
    KernelParams p = direct_params(eng, "t_rowsum", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32),
                                   Layout(PartialShape{Dimension()}, DataType::f32));
    auto impl = create_ocl_impl(p, rowsum_spec(), true);
    uint64_t seed = 100;
    for (const Shape& s : kRowSumShapes) {
        SCOPED_TRACE(s.to_string());
        const HostTensor x = int_valued(s, seed++);
        p.inputs = {x.layout()};
        p.outputs = {Layout(PartialShape{s[0]}, DataType::f32)};
        EXPECT_EQ(impl->scratch_bytes(p), std::vector<size_t>{size_t(s[0]) * chunks_of(p) * 4});
        auto in = std::make_shared<Memory>(eng.allocate(x.bytes()), x.layout());
        in->buffer()->write(*stream, x.data(), 0, x.bytes());
        auto out = std::make_shared<Memory>(eng.allocate(p.outputs[0].bytes()), p.outputs[0]);
        std::vector<MemoryPtr> ins{in}, outs{out};
        ExecContext ctx{*stream, p, ins, outs};
        impl->execute(ctx);
        std::vector<float> y(static_cast<size_t>(s[0]));
        out->buffer()->read(*stream, y.data(), 0, y.size() * 4);
        EXPECT_EQ(y, row_sums(x));
    }
}

// A state belongs to the impl that made it; scratch from the caller must be
// as large as scratch_bytes() says.
TEST(OclSdk, ForeignStateOrShortScratch_IsAnErrorNotGarbage) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    Engine& eng = *sdk_env().engine;
    auto stream = eng.create_stream();
    KernelParams p = direct_params(eng, "t_rowsum", Layout(PartialShape{4, 64}, DataType::f32),
                                   Layout(PartialShape{4}, DataType::f32));
    auto a = create_ocl_impl(p, rowsum_spec(), false);
    auto b = create_ocl_impl(p, rowsum_spec(), false);
    auto in = std::make_shared<Memory>(eng.allocate(p.inputs[0].bytes()), p.inputs[0]);
    auto out = std::make_shared<Memory>(eng.allocate(p.outputs[0].bytes()), p.outputs[0]);
    std::vector<MemoryPtr> ins{in}, outs{out};
    std::unique_ptr<ImplState> state_of_b = b->create_state();
    ASSERT_NE(state_of_b, nullptr);
    ExecContext ctx{*stream, p, ins, outs};
    ctx.state = state_of_b.get();
    EXPECT_THROW(a->execute(ctx), Error);
    std::vector<MemoryPtr> small{std::make_shared<Memory>(eng.allocate(8), Layout(PartialShape{8}, DataType::u8))};
    std::unique_ptr<ImplState> state_of_a = a->create_state();
    ctx.state = state_of_a.get();
    ctx.scratch = &small;   // 4 rows x 4 chunks x 4 bytes wanted
    try {
        a->execute(ctx);
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("needs 64 bytes"), std::string::npos) << e.what();
    }
}

std::vector<float> positives(const HostTensor& x) {
    std::vector<float> y;
    for (size_t i = 0; i < x.count(); ++i)
        if (x.as<float>()[i] > 0.0f) y.push_back(x.as<float>()[i]);
    return y;
}

// x [?] -> node of `op` -> output, on the ocl engine.
std::shared_ptr<Network> one_node_network(const std::string& op, bool dynamic_impls) {
    auto program = std::make_shared<Program>(sdk_env().registry, op);
    program->add_input("x", Layout(PartialShape{Dimension()}, DataType::f32));
    program->add_node("node", op, {"x"});
    program->add_output("node");
    program->build();
    NetworkOptions opts;
    opts.use_dynamic_impls = dynamic_impls;
    return Network::create(program, sdk_env().engine, opts);
}

TEST(OclSdk, DataDependentOutput_KernelReportsTheLengthOverChangingShapesAndData) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "shape-agnostic" : "static");
        InferRequest req(one_node_network("t_keep_positive", dynamic));
        // Same shape with other data (another count), an empty input, revisits.
        const std::vector<int64_t> lengths = {17, 17, 1, 0, 300, 17, 0, 5};
        uint64_t seed = 40;
        for (int64_t n : lengths) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const HostTensor x = test::random_tensor(DataType::f32, Shape{n}, seed++, -1.0, 1.0);
            req.set_input("x", x);
            req.infer();
            EXPECT_EQ(req.inst("node").impl()->name(),
                      dynamic ? "t_keep_positive_ocl_dynamic" : "t_keep_positive_ocl_static");
            const HostTensor y = req.get_output(0);
            const std::vector<float> want = positives(x);
            ASSERT_EQ(y.shape(), Shape{int64_t(want.size())});
            for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(y.as<float>()[i], want[i]) << "element " << i;
        }
    }
}

// A report beyond the output's bound, and a report from an op that does not
// declare data_dependent_output (no actual_outputs), are errors.
TEST(OclSdk, DataDependentOutput_ReportBeyondTheBoundOrWithoutTheTrait_IsAnError) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    Engine& eng = *sdk_env().engine;
    auto stream = eng.create_stream();
    KernelParams p = direct_params(eng, "t_keep_positive", Layout(PartialShape{8}, DataType::f32),
                                   Layout(PartialShape{8}, DataType::f32));
    OclMultiKernelSpec lying = to_multi_kernel_spec(keep_positive_spec());
    lying.report_shapes = [](const KernelParams&, const std::vector<int32_t>& r) {
        return std::vector<Shape>{{r[0] + 9}};
    };
    const std::vector<float> ones(8, 1.0f);
    auto in = std::make_shared<Memory>(eng.allocate(32), p.inputs[0]);
    in->buffer()->write(*stream, ones.data(), 0, 32);
    auto out = std::make_shared<Memory>(eng.allocate(32), p.outputs[0]);
    std::vector<MemoryPtr> ins{in}, outs{out};
    std::vector<Layout> actual = p.outputs;
    ExecContext ctx{*stream, p, ins, outs};
    ctx.actual_outputs = &actual;
    try {
        create_ocl_impl(p, lying, false)->execute(ctx);
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("shape [17], beyond its bound f32[8]"), std::string::npos) << e.what();
    }
    EXPECT_EQ(actual, p.outputs);
    auto honest = create_ocl_impl(p, to_multi_kernel_spec(keep_positive_spec()), false);
    honest->execute(ctx);
    EXPECT_EQ(actual.at(0).shape, PartialShape{8});
    ctx.actual_outputs = nullptr;
    try {
        honest->execute(ctx);
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("does not declare data_dependent_output"), std::string::npos) << e.what();
    }
}

// The check raises on the run whose data is bad, static and shape-agnostic,
// and the next runs (other shapes, an empty input) start from a zeroed report.
TEST(OclSdk, ReportCheck_RaisesOnBadDataWithStaticOutputShapes) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "shape-agnostic" : "static");
        InferRequest req(one_node_network("t_non_negative", dynamic));
        const auto run = [&](const std::vector<float>& v) {
            const HostTensor x = HostTensor::from_floats(Shape{int64_t(v.size())}, v);
            req.set_input("x", x);
            req.infer();
            const HostTensor y = req.get_output(0);
            EXPECT_EQ(y.shape(), x.shape());
            for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(y.as<float>()[i], v[i]);
        };
        run({1, 2, 3});
        const std::string msg = test::error_of([&] { run({4, 0, -7, -2}); });
        EXPECT_NE(msg.find("x[2] = -7 is negative"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
        run({4, 0, 7, 2});
        run({});
        run({5});
    }
}

// report_ints comes with report_shapes or report_check; either alone is no report.
TEST(OclSdk, ReportIntsWithoutShapesOrCheck_IsRefused) {
    if (!sdk_env().engine) GTEST_SKIP() << "no ocl engine";
    Engine& eng = *sdk_env().engine;
    const Layout l(PartialShape{4}, DataType::f32);
    const KernelParams p = direct_params(eng, "t_non_negative", l, l);
    OclMultiKernelSpec none = to_multi_kernel_spec(non_negative_spec());
    none.report_check = nullptr;
    EXPECT_NE(test::error_of([&] { create_ocl_impl(p, none, false); }).find("report_ints goes with"),
              std::string::npos);
    OclMultiKernelSpec unbound = to_multi_kernel_spec(non_negative_spec());
    unbound.report_ints = 0;
    EXPECT_NE(test::error_of([&] { create_ocl_impl(p, unbound, false); }).find("report_ints goes with"),
              std::string::npos);
}

// ---- two requests, two threads ------------------------------------------------

// x [?, 32] -> fully_connected (constant w [24, 32]) -> eltwise add with
// z [?, 24] -> "sum"; and gemm(x, constant b [32, 16]) -> "prod".
std::shared_ptr<Program> fc_gemm_program() {
    auto p = std::make_shared<Program>(test::registry(), "two_threads");
    p->add_input("x", Layout(PartialShape{Dimension(), 32}, DataType::f32));
    p->add_input("z", Layout(PartialShape{Dimension(), 24}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{24, 32}, 7));
    p->add_constant("b", test::random_tensor(DataType::f32, Shape{32, 16}, 8));
    p->add_node("fc", "fully_connected", {"x", "w"});
    Attributes add;
    add.set("mode", std::string("add"));
    p->add_node("sum", "eltwise", {"fc", "z"}, add);
    p->add_node("prod", "gemm", {"x", "b"});
    p->add_output("sum");
    p->add_output("prod");
    p->build();
    return p;
}

using Outputs = std::vector<std::vector<char>>;   // raw bytes of every output of every run

Outputs run_sequence(InferRequest& req, const std::vector<int64_t>& rows, uint64_t seed) {
    Outputs out;
    for (int64_t m : rows) {
        req.set_input("x", test::random_tensor(DataType::f32, Shape{m, 32}, seed + uint64_t(m)));
        req.set_input("z", test::random_tensor(DataType::f32, Shape{m, 24}, seed + 1000 + uint64_t(m)));
        req.infer();
        for (size_t k = 0; k < 2; ++k) {
            const HostTensor t = req.get_output(k);
            const char* d = static_cast<const char*>(t.data());
            out.emplace_back(d, d + t.bytes());
        }
    }
    return out;
}

TEST(OclSdk, TwoRequestsOnTwoThreads_MatchSequentialRunsBitForBit) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    // Different shape sequences, so the shared impls see both threads' shapes
    // interleaved: decode rows (skinny kernels), tiled rows, tails.
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "shape-agnostic impls" : "static impls");
        // Static impls compile per shape: fewer shapes, still shared by both.
        const std::vector<int64_t> rows_a = dynamic ? std::vector<int64_t>{1, 5, 17, 3, 40, 1, 9, 33, 2, 17, 64, 7}
                                                    : std::vector<int64_t>{1, 17, 3, 17, 1};
        const std::vector<int64_t> rows_b = dynamic ? std::vector<int64_t>{33, 2, 8, 1, 16, 70, 3, 5, 1, 24, 9, 40}
                                                    : std::vector<int64_t>{3, 1, 17, 3, 1};
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile_after = 1000;   // the shared dynamic impls serve every run
        const auto program = fc_gemm_program();
        Outputs want_a, want_b;
        {
            auto net = Network::create(program, eng, opts);
            InferRequest ra(net), rb(net);
            want_a = run_sequence(ra, rows_a, 1);
            want_b = run_sequence(rb, rows_b, 2);
        }
        for (int round = 0; round < 2; ++round) {
            auto net = Network::create(program, eng, opts);
            InferRequest ra(net), rb(net);
            Outputs got_a, got_b;
            std::thread ta([&] { got_a = run_sequence(ra, rows_a, 1); });
            std::thread tb([&] { got_b = run_sequence(rb, rows_b, 2); });
            ta.join();
            tb.join();
            ASSERT_EQ(got_a.size(), want_a.size());
            ASSERT_EQ(got_b.size(), want_b.size());
            for (size_t i = 0; i < want_a.size(); ++i) EXPECT_TRUE(got_a[i] == want_a[i]) << "request a, output " << i;
            for (size_t i = 0; i < want_b.size(); ++i) EXPECT_TRUE(got_b[i] == want_b[i]) << "request b, output " << i;
            EXPECT_EQ(ra.inst("fc").impl()->name(),
                      dynamic ? "fully_connected_ocl_dynamic" : "fully_connected_ocl_static");
            EXPECT_EQ(rb.inst("prod").impl()->name(), dynamic ? "gemm_ocl_dynamic" : "gemm_ocl_static");
        }
    }
}

// ---- formats ------------------------------------------------------------------

TEST(OclSdk, EveryOclImplEntry_ListsTheFormatsItTakes) {
    const auto reg = test::registry();
    size_t entries = 0;
    for (const std::string& op : reg->op_names())
        for (const RegisteredImpl* c : reg->impls(op, "ocl")) {
            if (c->entry.impl_type != "ocl") continue;
            ++entries;
            EXPECT_FALSE(c->entry.formats.empty()) << op << " " << c->entry.name;
        }
    if (reg->has_engine("ocl")) {
        EXPECT_GT(entries, 10u);
    }
}

TEST(OclSdk, BlockedInputToEltwise_IsRefusedByTheOclImplWithAReason) {
    const auto reg = test::registry();
    const OpDefinition& def = reg->op("eltwise").def;
    Attributes raw;
    raw.set("mode", std::string("add"));
    const Attributes attrs = Attributes::validate(def.attrs, raw);
    KernelParams p;
    p.node = "e";
    p.op = &def;
    p.attrs = &attrs;
    p.inputs = {Layout(PartialShape{20, 3}, DataType::f32, Format::osv16), Layout(PartialShape{20, 3}, DataType::f32)};
    p.outputs = {Layout(PartialShape{20, 3}, DataType::f32)};
    size_t checked = 0;
    for (const RegisteredImpl* c : reg->impls("eltwise", "ocl")) {
        if (c->entry.impl_type != "ocl") continue;
        ++checked;
        const std::string why = c->entry.check(p);
        EXPECT_NE(why.find("format osv16"), std::string::npos) << c->entry.name << ": '" << why << "'";
    }
    if (reg->has_engine("ocl")) {
        EXPECT_GT(checked, 0u);
    }
}

// x -> reorder to osv16 -> eltwise add with y: the blocked input gets the
// reorder (correct sums) or a clear error that names the format; before the
// OpenCL entries listed their formats, the kernel read osv16 as plain.
TEST(OclSdk, BlockedInputToEltwiseOnOcl_GetsAReorderOrAClearError) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    auto p = std::make_shared<Program>(test::registry(), "blocked");
    p->add_input("x", Layout(PartialShape{20, 3}, DataType::f32));
    p->add_input("y", Layout(PartialShape{20, 3}, DataType::f32));
    Attributes to_blocked;
    to_blocked.set("format", std::string("osv16"));
    p->add_node("blocked", "reorder", {"x"}, to_blocked);
    Attributes add;
    add.set("mode", std::string("add"));
    p->add_node("sum", "eltwise", {"blocked", "y"}, add);
    p->add_output("sum");
    const HostTensor x = test::random_tensor(DataType::f32, Shape{20, 3}, 1);
    const HostTensor y = test::random_tensor(DataType::f32, Shape{20, 3}, 2);
    try {
        p->build();
        InferRequest req(Network::create(p, eng, NetworkOptions{}));
        req.set_input("x", x);
        req.set_input("y", y);
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.count(), 60u);
        for (size_t i = 0; i < 60; ++i)
            ASSERT_EQ(out.as<float>()[i], x.as<float>()[i] + y.as<float>()[i]) << "element " << i;
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("osv16"), std::string::npos) << e.what();
    }
}

}   // namespace
}   // namespace dynrt
