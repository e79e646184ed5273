// Tests of the gemm op: shape inference with transposes and batch broadcasting,
// hand-computed products, a naive batched product on random inputs, and one
// network instance fed a sequence of changing shapes; on OpenCL (skipped
// without an ocl engine) the static and shape-agnostic impls against the cpu
// reference over shapes that hit the tiles' tails and the skinny path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/primitive_inst.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "single_node.hpp"

namespace dynrt {
namespace {

Attributes gemm_attrs(bool ta = false, bool tb = false, double alpha = 1.0, double beta = 1.0) {
    return test::attrs({{"transpose_a", ta}, {"transpose_b", tb}, {"alpha", alpha}, {"beta", beta}});
}

const test::ShapesOf infer{"gemm"};

using test::f32;

// ---- 1. shape inference ------------------------------------------------------

TEST(GemmShape, TransposesAndBatchBroadcasting) {
    const Dimension dyn;
    // Exactly one output (f32, the inputs' type) of the listed shape per row.
    test::expect_shapes("gemm", {
                                    {{f32({2, 3}), f32({3, 4})}, gemm_attrs(false, false), {f32({2, 4})}},
                                    {{f32({3, 2}), f32({3, 4})}, gemm_attrs(true, false), {f32({2, 4})}},
                                    {{f32({2, 3}), f32({4, 3})}, gemm_attrs(false, true), {f32({2, 4})}},
                                    {{f32({3, 2}), f32({4, 3})}, gemm_attrs(true, true), {f32({2, 4})}},
                                    {{f32({5, 1, 2, 3}), f32({4, 3, 6})}, gemm_attrs(), {f32({5, 4, 2, 6})}},
                                    {{f32({dyn, dyn, 3}), f32({3, 4})}, gemm_attrs(), {f32({dyn, dyn, 4})}},
                                    {{f32({dyn, 2, dyn}), f32({dyn, dyn, 4})}, gemm_attrs(), {f32({dyn, 2, 4})}},
                                    {{f32({2, 3}), f32({3, 4}), f32({4})}, gemm_attrs(), {f32({2, 4})}},
                                    {{f32({2, 3}), f32({3, 4}), f32({2, 1})}, gemm_attrs(), {f32({2, 4})}},
                                    {{f32({7, 2, 3}), f32({3, 4}), f32({})}, gemm_attrs(), {f32({7, 2, 4})}},
                                });
}

TEST(GemmShape, InvalidShapesAreNamed) {
    std::string msg = test::error_of([] { infer({f32({2, 3}), f32({4, 5})}, gemm_attrs()); });
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4,5]"), std::string::npos) << msg;
    msg = test::error_of([] { infer({f32({3}), f32({3, 4})}, gemm_attrs()); });
    EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
    msg = test::error_of([] { infer({f32({2, 2, 3}), f32({3, 3, 4})}, gemm_attrs()); });
    EXPECT_NE(msg.find("batch"), std::string::npos) << msg;
    msg = test::error_of([] { infer({f32({2, 3}), f32({3, 4}), f32({3, 4})}, gemm_attrs()); });
    EXPECT_NE(msg.find("does not broadcast"), std::string::npos) << msg;
    // c of higher rank than the output cannot broadcast to it either.
    msg = test::error_of([] { infer({f32({Dimension(), 3}), f32({3, 4}), f32({5, 1, 4})}, gemm_attrs()); });
    EXPECT_NE(msg.find("[5,1,4]"), std::string::npos) << msg;
    msg = test::error_of([] { infer({f32({2, 3}), Layout(PartialShape{3, 4}, DataType::f16)}, gemm_attrs()); });
    EXPECT_NE(msg.find("same data type"), std::string::npos) << msg;
}

TEST(GemmShape, IsCritical) { EXPECT_TRUE(test::registry()->op("gemm").def.traits.critical); }

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const std::vector<HostTensor>& in, const Attributes& attrs) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("gemm", layouts, attrs), in);
}

void expect_values(const HostTensor& y, const Shape& s, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(y.shape(), s) << what;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(y.get_as_double(i), want[i]) << what << " at " << i;
}

TEST(GemmValues, SmallProductsMatchHandComputedValues) {
    // A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]]: AB = [[4,5],[10,11]].
    const HostTensor a = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor b = HostTensor::from_floats(Shape{3, 2}, {1, 0, 0, 1, 1, 1});
    const HostTensor at = HostTensor::from_floats(Shape{3, 2}, {1, 4, 2, 5, 3, 6});
    const HostTensor bt = HostTensor::from_floats(Shape{2, 3}, {1, 0, 1, 0, 1, 1});
    expect_values(run({a, b}, gemm_attrs()), Shape{2, 2}, {4, 5, 10, 11}, "plain");
    expect_values(run({at, b}, gemm_attrs(true, false)), Shape{2, 2}, {4, 5, 10, 11}, "transpose_a");
    expect_values(run({a, bt}, gemm_attrs(false, true)), Shape{2, 2}, {4, 5, 10, 11}, "transpose_b");
    expect_values(run({at, bt}, gemm_attrs(true, true)), Shape{2, 2}, {4, 5, 10, 11}, "both");
    // 2*AB + 0.5*[10, 20] (c broadcast over rows).
    const HostTensor c = HostTensor::from_floats(Shape{2}, {10, 20});
    expect_values(run({a, b, c}, gemm_attrs(false, false, 2.0, 0.5)), Shape{2, 2}, {13, 20, 25, 32}, "alpha beta");
    // Batch broadcast: rows [1,2] and [3,4] times the column [5,6].
    const HostTensor rows = HostTensor::from_floats(Shape{2, 1, 2}, {1, 2, 3, 4});
    const HostTensor col = HostTensor::from_floats(Shape{2, 1}, {5, 6});
    expect_values(run({rows, col}, gemm_attrs()), Shape{2, 1, 1}, {17, 39}, "batch");
}

// Naive batched product through explicit coordinates.
HostTensor naive_gemm(const HostTensor& a, const HostTensor& b, const HostTensor* c, bool ta, bool tb, double alpha,
                      double beta, const Shape& out) {
    HostTensor y(a.dtype(), out);
    const size_t ro = out.size();
    const Shape& as = a.shape();
    const Shape& bs = b.shape();
    const int64_t K = ta ? as[as.size() - 2] : as[as.size() - 1];
    // Flat offset of `t` at output coordinates `idx` (right-aligned, broadcast).
    auto offset = [](const Shape& s, const std::vector<int64_t>& idx) {
        size_t flat = 0;
        const size_t lead = idx.size() - s.size();
        for (size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + (s[d] == 1 ? 0 : idx[d + lead]);
        return flat;
    };
    std::vector<int64_t> idx(ro);
    for (size_t o = 0; o < y.count(); ++o) {
        size_t rem = o;
        for (size_t d = ro; d-- > 0;) {
            idx[d] = static_cast<int64_t>(rem % out[d]);
            rem /= out[d];
        }
        const int64_t m = idx[ro - 2], n = idx[ro - 1];
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) {
            std::vector<int64_t> ia(idx.begin(), idx.end()), ib(idx.begin(), idx.end());
            ia[ro - 2] = ta ? k : m;
            ia[ro - 1] = ta ? m : k;
            ib[ro - 2] = tb ? n : k;
            ib[ro - 1] = tb ? k : n;
            acc += a.get_as_double(offset(as, ia)) * b.get_as_double(offset(bs, ib));
        }
        double v = alpha * acc;
        if (c) v += beta * c->get_as_double(offset(c->shape(), idx));
        y.set_from_double(o, v);
    }
    return y;
}

TEST(GemmValues, RandomBatchedProductsMatchNaive) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (int flags = 0; flags < 4; ++flags) {
            const bool ta = flags & 1, tb = flags & 2;
            const HostTensor a = test::random_tensor(t, ta ? Shape{3, 1, 5, 4} : Shape{3, 1, 4, 5}, 1 + flags);
            const HostTensor b = test::random_tensor(t, tb ? Shape{2, 6, 5} : Shape{2, 5, 6}, 11 + flags);
            const HostTensor c = test::random_tensor(t, Shape{4, 1}, 21 + flags);
            const HostTensor y = run({a, b, c}, gemm_attrs(ta, tb, 0.75, -2.0));
            const HostTensor want = naive_gemm(a, b, &c, ta, tb, 0.75, -2.0, Shape{3, 2, 4, 6});
            EXPECT_LE(test::max_abs_diff(y, want), t == DataType::f16 ? 4e-3 : 1e-5)
                << to_string(t) << " ta=" << ta << " tb=" << tb;
        }
    }
}

// Constant weights on the cpu engine's oneDNN static impl. With AVX-512 a
// 1-row product reads them in oneDNN's blocked layout, reordered once per
// weights buffer into a copy the impl shares with every request (plain, the
// brgemm kernel read [1, 2048] x [2048, 8192] at 10 GB/s, blocked 25). One
// impl serves two weights buffers (two nodes of one shape) from two request
// states: each run must read its own weights, before and after the other.
TEST(GemmImpls, OneDnnStaticImplReadsConstantWeightsReorderedOncePerBuffer) {
    const int64_t K = 256, N = 512;
    const Layout a(Shape{1, K}, DataType::f32), b(Shape{K, N}, DataType::f32), y(Shape{1, N}, DataType::f32);
    const auto program = test::single_node_program("gemm", {a, b}, gemm_attrs());
    const EnginePtr cpu = test::engine("cpu");
    KernelParams p = tools::single_node_params(*program, cpu.get());
    p.constant_weights = true;
    p.node_inputs = std::make_shared<const std::vector<Layout>>(p.inputs);   // a node of static layouts
    std::unique_ptr<Impl> impl;
    for (const RegisteredImpl* r : test::registry()->impls("gemm", "cpu"))
        if (r->entry.name == "cpu_dnnl_static") impl = r->entry.create(p);
    ASSERT_TRUE(impl) << "no cpu_dnnl_static impl of gemm";
    const std::string info = dnnl_impl_info(*impl);
    if (dnnl::get_effective_cpu_isa() < dnnl::cpu_isa::avx512_core)
        GTEST_SKIP() << "no AVX-512: oneDNN reads plain weights (" << info << ")";
    EXPECT_NE(info.find("staged weights(once)"), std::string::npos) << info;

    const std::shared_ptr<Stream> stream = cpu->create_stream();
    auto upload = [&](const HostTensor& t) {
        auto m = std::make_shared<Memory>(cpu->allocate(t.bytes()), t.layout());
        m->buffer()->write(*stream, t.data(), 0, t.bytes());
        return m;
    };
    const HostTensor w[2] = {test::random_tensor(DataType::f32, b.get_shape(), 1),
                             test::random_tensor(DataType::f32, b.get_shape(), 2)};
    const MemoryPtr wm[2] = {upload(w[0]), upload(w[1])};
    const MemoryPtr out = std::make_shared<Memory>(cpu->allocate(y.bytes()), y);
    const std::unique_ptr<ImplState> states[2] = {impl->create_state(), impl->create_state()};
    // (state, weights) of each run: each state sees both buffers, in turn.
    const std::vector<std::pair<int, int>> runs = {{0, 0}, {0, 1}, {1, 1}, {0, 0}, {1, 0}, {1, 1}, {0, 1}};
    uint64_t seed = 10;
    for (const auto& [st, wi] : runs) {
        SCOPED_TRACE("state " + std::to_string(st) + ", weights " + std::to_string(wi));
        const HostTensor x = test::random_tensor(DataType::f32, a.get_shape(), seed++);
        std::vector<MemoryPtr> ins{upload(x), wm[wi]}, outs{out};
        ExecContext ctx{*stream, p, ins, outs};
        ctx.state = states[st].get();
        impl->execute(ctx);
        HostTensor got(DataType::f32, y.get_shape());
        out->buffer()->read(*stream, got.data(), 0, got.bytes());
        EXPECT_LE(test::max_abs_diff(got, naive_gemm(x, w[wi], nullptr, false, false, 1.0, 1.0, y.get_shape())), 1e-4);
    }
}

// ---- 3. changing shapes on one instance ----------------------------------------

using test::Mode;

void sweep(Mode mode) {
    const int64_t K = 16, N = 8;
    const test::OpSetup setup{"gemm",
                              gemm_attrs(false, false, 0.5),
                              {f32(PartialShape{Dimension(), Dimension(), K}), f32(PartialShape{K, N})},
                              {}};
    const HostTensor b = test::random_tensor(DataType::f32, Shape{K, N}, 3);
    const std::vector<Shape> shapes = {{1, 1, K},   {1, 3, K},   {2, 13, K}, {2, 13, K}, {1, 16, K}, {3, 17, K},
                                       {1, 255, K}, {1, 257, K}, {2, 13, K}, {1, 1, K},  {1, 1, K}};
    std::vector<test::Run> runs;
    for (size_t step = 0; step < shapes.size(); ++step)
        runs.push_back({test::random_tensor(DataType::f32, shapes[step], 30 + step), b});
    test::SequenceOptions o;
    o.mode = mode;
    o.on_step = [&](const InferRequest& req, size_t step) {
        const HostTensor& a = runs[step][0];
        const Shape& s = shapes[step];
        const Shape out{s[0], s[1], N};
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), out) << "step " << step;
        EXPECT_LE(test::max_abs_diff(y, naive_gemm(a, b, nullptr, false, false, 0.5, 1.0, out)), 1e-5)
            << "step " << step;
    };
    test::expect_sequence(setup, runs, o);
}

// Dynamic impl with background static builds, synchronous static builds, and
// static impls only: one instance follows the shapes in each mode.
TEST(GemmDynamic, OneInstanceFollowsShapesInEveryImplMode) {
    for (Mode mode : {Mode::dynamic_async, Mode::sync_compile, Mode::static_only}) {
        SCOPED_TRACE(test::mode_name(mode));
        sweep(mode);
    }
}

// Batch dims that vary in both operands: the cpu engine's shape-agnostic
// oneDNN plan takes them as runtime dims (one plan, no static builds), and a
// run where one operand's batch broadcasts gets a plan of its shapes. Every
// run on one instance against the reference, in every impl mode of the cpu
// engine.
TEST(GemmDynamic, VaryingBatchDimsThatSometimesBroadcastFollowTheReference) {
    const Layout a(PartialShape{Dimension(), Dimension(), 16}, DataType::f32);
    const Layout b(PartialShape{Dimension(), 16, 8}, DataType::f32);
    const test::OpSetup setup{"gemm", {}, {a, b}, {}};
    const std::vector<std::vector<Shape>> shapes = {
        {Shape{1, 3, 16}, Shape{1, 16, 8}}, {Shape{2, 3, 16}, Shape{2, 16, 8}}, {Shape{2, 5, 16}, Shape{1, 16, 8}},
        {Shape{3, 2, 16}, Shape{3, 16, 8}}, {Shape{1, 4, 16}, Shape{3, 16, 8}}, {Shape{2, 3, 16}, Shape{2, 16, 8}}};
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        if (o.engine != "cpu") continue;   // the OpenCL impls' broadcasts: GemmOcl below
        SCOPED_TRACE(test::mode_name(o.mode));
        if (o.engine == "cpu" && o.mode == Mode::dynamic_async)
            o.on_step = [](const InferRequest& req, size_t step) {
                const Impl& impl = *req.inst("node").impl();
                EXPECT_TRUE(impl.static_builds_redundant()) << impl.name() << " at step " << step;
            };
        test::expect_sequence(setup, test::random_runs(DataType::f32, shapes, 7), o);
    }
}

// Zero-size products: K = 0 is a sum of no terms, so y is beta * c, or
// zeros (oneDNN's matmul left its output unwritten, or failed to execute
// with runtime dims); M = 0 or N = 0 give empty outputs. One instance runs
// them between ordinary products (the K = 0 output lands in the buffer the
// [3,5] product just filled) on every engine and mode, plain and with a
// transposed a (K is then a's second-to-last dim), with and without c; and
// every impl is forced on each run it accepts.
TEST(GemmDynamic, ZeroSizeProductsGiveZerosOrBiasAndEmptyOutputsOnEveryEngine) {
    for (const bool ta : {false, true}) {
        for (const bool with_c : {false, true}) {
            SCOPED_TRACE(std::string("ta=") + (ta ? "1" : "0") + (with_c ? " with c" : ""));
            auto a = [&](int64_t m, int64_t k) { return ta ? Shape{k, m} : Shape{m, k}; };
            std::vector<std::vector<Shape>> shapes = {{a(3, 4), {4, 5}}, {a(3, 0), {0, 5}}, {a(0, 4), {4, 5}},
                                                      {a(3, 4), {4, 0}}, {a(3, 0), {0, 5}}, {a(0, 0), {0, 5}},
                                                      {a(3, 0), {0, 0}}, {a(3, 4), {4, 5}}};
            std::vector<Layout> inputs = {f32(PartialShape::dynamic_of_rank(2)), f32(PartialShape::dynamic_of_rank(2))};
            if (with_c) {
                for (auto& row : shapes) row.push_back(Shape{1});
                inputs.push_back(f32(PartialShape{1}));
            }
            const test::OpSetup setup{"gemm", gemm_attrs(ta, false), inputs, {}};
            const std::vector<test::Run> runs = test::random_runs(DataType::f32, shapes, 40);
            for (test::SequenceOptions o : test::every_engine_and_mode()) {
                SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
                // The shapes come back: a revisit on ocl may run the static
                // impl built meanwhile, so any OpenCL impl will do.
                const bool ocl = o.engine == "ocl";
                o.impl_suffix.clear();
                o.on_step = [&, ocl](const InferRequest& req, size_t step) {
                    const HostTensor y = req.get_output(0);
                    const Shape& as = shapes[step][0];
                    const int64_t m = ta ? as[1] : as[0], k = ta ? as[0] : as[1], n = shapes[step][1][1];
                    ASSERT_EQ(y.shape(), (Shape{m, n})) << "step " << step;
                    const NodeStats& ns = req.last_run().nodes.back();
                    if (ocl && y.count() != 0) {
                        EXPECT_NE(ns.impl.find("_ocl_"), std::string::npos) << ns.impl << " at step " << step;
                    }
                    if (k != 0) return;
                    const double c = with_c ? runs[step][2].get_as_double(0) : 0.0;
                    for (size_t i = 0; i < y.count(); ++i)
                        EXPECT_EQ(y.get_as_double(i), c) << "step " << step << " element " << i;
                };
                test::expect_sequence(setup, runs, o);
            }
            const std::vector<std::string> ran = test::expect_impls_match_reference(setup, runs);
            EXPECT_NE(std::find(ran.begin(), ran.end(), "cpu_dnnl_static"), ran.end());
            EXPECT_NE(std::find(ran.begin(), ran.end(), "cpu_ref_static"), ran.end());
        }
    }
}

// ---- 4. OpenCL impls against the cpu reference -----------------------------------

// f32 products over K <= 257 terms of values in [-1, 1): float accumulation in
// another order than the double reference differs by well under this.
constexpr double kOclTol = 2e-4;

struct OclCase {
    Shape a, b, c;   // c empty: no c
};

// One InferRequest on the ocl engine and one on cpu, fed the same inputs per
// step; every output is compared, and the impl that ran is checked.
void ocl_sweep(bool dynamic, bool ta, bool tb, bool with_c, const std::vector<OclCase>& cases) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    auto prog = std::make_shared<Program>(test::registry(), "gemm_ocl");
    prog->add_input("a", Layout(PartialShape::dynamic_of_rank(cases[0].a.size()), DataType::f32));
    prog->add_input("b", Layout(PartialShape::dynamic_of_rank(cases[0].b.size()), DataType::f32));
    std::vector<std::string> ins = {"a", "b"};
    if (with_c) {
        prog->add_input("c", Layout(PartialShape::dynamic_of_rank(cases[0].c.size()), DataType::f32));
        ins.push_back("c");
    }
    prog->add_node("mm", "gemm", ins, gemm_attrs(ta, tb, 0.75, -1.5));
    prog->add_output("mm");
    prog->build();
    test::OclAndCpuRequests requests(eng, prog, dynamic);
    InferRequest& req = requests.req;
    InferRequest& ref = requests.ref;
    std::set<std::string> seen;
    for (size_t step = 0; step < cases.size(); ++step) {
        const OclCase& oc = cases[step];
        const std::string key = oc.a.to_string() + oc.b.to_string() + oc.c.to_string();
        const bool revisit = seen.count(key) > 0;
        seen.insert(key);
        std::vector<std::pair<std::string, HostTensor>> inputs = {
            {"a", test::random_tensor(DataType::f32, oc.a, 100 + step)},
            {"b", test::random_tensor(DataType::f32, oc.b, 200 + step)}};
        if (with_c) inputs.emplace_back("c", test::random_tensor(DataType::f32, oc.c, 300 + step));
        requests.infer(inputs);
        const HostTensor y = req.get_output(0);
        const HostTensor want = ref.get_output(0);
        ASSERT_EQ(y.shape(), want.shape()) << "step " << step << " " << key;
        EXPECT_LE(test::max_abs_diff(y, want), kOclTol) << "step " << step << " " << key;
        const NodeStats& ns = req.last_run().nodes.at(req.last_run().nodes.size() - 1);
        ASSERT_EQ(ns.node, "mm");
        test::expect_ocl_impl(ns, dynamic, revisit, "step " + std::to_string(step));
    }
}

// (batch, M, K, N) over the tails of the tiles (1, 3, 13, 16, 17, 255, 257), the
// skinny path (M <= 16: every row bucket 1, 2, 4, 8, 16, full and partly used,
// with N a multiple of 4 (float4 rows of b) and not) and the tiled one, with
// revisits.
std::vector<OclCase> tail_cases() {
    auto mk = [](int64_t bt, int64_t m, int64_t k, int64_t n) { return OclCase{Shape{bt, m, k}, Shape{k, n}, {}}; };
    return {mk(1, 1, 1, 1),     mk(2, 3, 13, 17),  mk(1, 13, 16, 3),   mk(1, 16, 17, 257),
            mk(1, 17, 255, 13), mk(2, 255, 3, 16), mk(1, 257, 17, 1),  mk(1, 33, 257, 65),
            mk(2, 3, 13, 17),   mk(1, 1, 1, 1),    mk(1, 17, 255, 13), mk(1, 2, 13, 20),
            mk(2, 8, 33, 16),   mk(1, 5, 17, 68),  mk(1, 4, 3, 255),   mk(1, 1, 257, 16)};
}

TEST(GemmOcl, ShapeAgnosticImplMatchesCpuOverTailShapes) { ocl_sweep(true, false, false, false, tail_cases()); }
TEST(GemmOcl, StaticImplsMatchCpuOverTailShapesAndAreCached) { ocl_sweep(false, false, false, false, tail_cases()); }

// Transposes, alpha/beta and c broadcast, batch dims broadcast on both sides;
// two skinny shapes (K a multiple of 4 and not) and one tiled shape each.
// Static impls for every combination; the shape-agnostic one (the same kernel
// body, dims from shape_info) for both transposes only, to keep PoCL's compile
// time down.
std::vector<OclCase> transpose_cases(bool ta, bool tb) {
    auto mk = [&](int64_t m, int64_t k, int64_t n) {
        return OclCase{ta ? Shape{3, 1, k, m} : Shape{3, 1, m, k}, tb ? Shape{2, n, k} : Shape{2, k, n},
                       Shape{1, m, 1}};
    };
    return {mk(5, 19, 7), mk(37, 21, 35), mk(6, 24, 9)};   // K = 24: the skinny float4 loop of b [N, K]
}

TEST(GemmOcl, TransposesAlphaBetaAndBroadcastMatchCpu) {
    for (int flags = 0; flags < 4; ++flags) {
        const bool ta = flags & 1, tb = flags & 2;
        SCOPED_TRACE("ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
        if (ta && tb) ocl_sweep(true, ta, tb, true, transpose_cases(ta, tb));
        ocl_sweep(false, ta, tb, true, transpose_cases(ta, tb));
    }
}

// Each tile of the tiled product forced on static builds (the GPU picks
// 128, 64 or 32 by the size; PoCL always 32): tails of the tile in M, N and K,
// a batch, both layouts of a and b. A value that is no tile is refused.
TEST(GemmOcl, EveryTileOfTheTiledProductMatchesCpu) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    const test::EnvGuard guard("DYNRT_OCL_MATMUL_TILE");
    for (const char* tile : {"64", "128"}) {
        SCOPED_TRACE(std::string("tile ") + tile);
        setenv("DYNRT_OCL_MATMUL_TILE", tile, 1);
        ocl_sweep(false, false, false, false, {OclCase{Shape{2, 131, 37}, Shape{37, 129}, {}}});
        ocl_sweep(false, true, true, true, {OclCase{Shape{3, 1, 21, 37}, Shape{2, 35, 21}, Shape{1, 37, 1}}});
    }
    setenv("DYNRT_OCL_MATMUL_TILE", "48", 1);
    try {
        ocl_sweep(false, false, false, false, {OclCase{Shape{1, 33, 8}, Shape{8, 5}, {}}});
        ADD_FAILURE() << "a tile of 48 was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("DYNRT_OCL_MATMUL_TILE is '48'"), std::string::npos) << e.what();
    }
}

TEST(GemmOcl, F16FallsBackToTheHostImpl) {
    const auto r = test::f16_host_fallback("gemm", Shape{3, 4}, Shape{4, 2}, gemm_attrs());
    if (r.empty()) GTEST_SKIP() << "no ocl engine";
    EXPECT_LE(test::max_abs_diff(r[2], naive_gemm(r[0], r[1], nullptr, false, false, 1.0, 1.0, Shape{3, 2})), 4e-3);
}

}   // namespace
}   // namespace dynrt
