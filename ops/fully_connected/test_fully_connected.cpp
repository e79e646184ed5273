// Tests of the fully_connected op: shape inference, hand-computed values, a
// naive matrix product on random inputs, and one network instance fed a
// sequence of batch sizes with constant weights; on OpenCL (skipped without an
// ocl engine) the static and shape-agnostic impls against the cpu reference over
// shapes that hit the tiles' tails and the skinny (decode) kernel.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dynrt/cpu_dnnl.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "single_node.hpp"

namespace dynrt {
namespace {

const test::ShapesOf infer{"fully_connected"};

using test::f32;

// ---- 1. shape inference ------------------------------------------------------

TEST(FullyConnectedShape, OutputReplacesLastDimByN) {
    const Dimension dyn;
    // Exactly one f32 output of the listed shape per row.
    test::expect_shapes("fully_connected",
                        {
                            {{f32({2, 3}), f32({4, 3})}, {}, {f32({2, 4})}},
                            {{f32({3}), f32({4, 3})}, {}, {f32({4})}},
                            {{f32({dyn, 5, 3}), f32({4, 3}), f32({4})}, {}, {f32({dyn, 5, 4})}},
                            {{f32({dyn, dyn}), f32({4, 3})}, {}, {f32({dyn, 4})}},
                            {{f32({Dimension(1, 64), 3}), f32({dyn, 3})}, {}, {f32({Dimension(1, 64), dyn})}},
                            {{f32({0, 3}), f32({4, 3})}, {}, {f32({0, 4})}},
                        });
    EXPECT_EQ(infer({Layout(PartialShape{2, 3}, DataType::f16), Layout(PartialShape{4, 3}, DataType::f16)})[0].dtype,
              DataType::f16);
}

TEST(FullyConnectedShape, KMismatchNamesBothShapes) {
    const std::string msg = test::error_of([] { infer({f32({2, 3}), f32({4, 5})}); });
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4,5]"), std::string::npos) << msg;
}

TEST(FullyConnectedShape, BadWeightsBiasOrTypeAreRejected) {
    EXPECT_NE(test::error_of([] { infer({f32({2, 3}), f32({3})}); }).find("[N, K]"), std::string::npos);
    const std::string bias = test::error_of([] { infer({f32({2, 3}), f32({4, 3}), f32({5})}); });
    EXPECT_NE(bias.find("bias"), std::string::npos) << bias;
    EXPECT_NE(bias.find("[5]"), std::string::npos) << bias;
    EXPECT_NE(test::error_of([] { infer({f32({}), f32({4, 3})}); }).find("rank"), std::string::npos);
    EXPECT_NE(test::error_of([] {
                  infer({Layout(PartialShape{2, 3}, DataType::i32), Layout(PartialShape{4, 3}, DataType::i32)});
              }).find("floating"),
              std::string::npos);
}

TEST(FullyConnectedShape, IsCriticalAndWeightable) {
    const OpTraits& t = test::registry()->op("fully_connected").def.traits;
    EXPECT_TRUE(t.critical);
    EXPECT_TRUE(t.weightable);
}

// ---- 2. values ----------------------------------------------------------------

HostTensor run(const std::vector<HostTensor>& in) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("fully_connected", layouts, Attributes()), in);
}

TEST(FullyConnectedValues, SmallCaseMatchesHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const HostTensor w = HostTensor::from_floats(Shape{2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
    const HostTensor b = HostTensor::from_floats(Shape{2}, {10, 20});
    // Row 0: 1-3 = -2, (1+2+3)/2 = 3; row 1: 4-6 = -2, (4+5+6)/2 = 7.5.
    const HostTensor y = run({x, w});
    ASSERT_EQ(y.shape(), (Shape{2, 2}));
    const double want[] = {-2, 3, -2, 7.5};
    for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(y.get_as_double(i), want[i]) << i;
    const HostTensor yb = run({x, w, b});
    const double want_b[] = {8, 23, 8, 27.5};
    for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(yb.get_as_double(i), want_b[i]) << i;
    // Rank 3 and rank 1 inputs: the same rows, other leading dims.
    EXPECT_EQ(run({HostTensor::from_floats(Shape{2, 1, 3}, {1, 2, 3, 4, 5, 6}), w, b}).shape(), (Shape{2, 1, 2}));
    const HostTensor y1 = run({HostTensor::from_floats(Shape{3}, {4, 5, 6}), w, b});
    ASSERT_EQ(y1.shape(), Shape{2});
    EXPECT_DOUBLE_EQ(y1.get_as_double(0), 8);
    EXPECT_DOUBLE_EQ(y1.get_as_double(1), 27.5);
}

HostTensor naive_fc(const HostTensor& x, const HostTensor& w, const HostTensor* b) {
    const int64_t K = w.shape()[1], N = w.shape()[0];
    std::vector<int64_t> out_dims = x.shape().dims();
    out_dims.back() = N;
    HostTensor y(x.dtype(), Shape(out_dims));
    const int64_t rows = static_cast<int64_t>(x.count()) / K;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; ++k) acc += x.get_as_double(r * K + k) * w.get_as_double(n * K + k);
            if (b) acc += b->get_as_double(n);
            y.set_from_double(r * N + n, acc);
        }
    return y;
}

TEST(FullyConnectedValues, RandomInputsMatchNaiveProduct) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        const HostTensor x = test::random_tensor(t, Shape{2, 3, 7}, 1);
        const HostTensor w = test::random_tensor(t, Shape{5, 7}, 2);
        const HostTensor b = test::random_tensor(t, Shape{5}, 3);
        const double tol = t == DataType::f16 ? 4e-3 : 1e-5;
        EXPECT_LE(test::max_abs_diff(run({x, w, b}), naive_fc(x, w, &b)), tol) << to_string(t);
        EXPECT_LE(test::max_abs_diff(run({x, w}), naive_fc(x, w, nullptr)), tol) << to_string(t);
    }
}

// The shape-agnostic plan of a node whose rows vary (oneDNN runtime dims)
// takes constant weights in oneDNN's own layout, reordered once per weights
// buffer: with runtime rows oneDNN 2.6 multiplies through its jit gemm,
// which read fully_connected's [N, K] weights transposed at a third of the
// speed of its own copy. Weights that are inputs of the run stay plain.
// (Every value is checked by the sweeps below and by the matrices.)
TEST(FullyConnectedImpls, ShapeAgnosticPlanReadsConstantWeightsInOneDnnsLayout) {
    const int64_t K = 64, N = 96;
    const Layout x(Shape{5, K}, DataType::f32), w(Shape{N, K}, DataType::f32);
    const auto program = test::single_node_program("fully_connected", {x, w}, Attributes());
    const EnginePtr cpu = test::engine("cpu");
    KernelParams p = tools::single_node_params(*program, cpu.get());
    p.node_inputs = std::make_shared<const std::vector<Layout>>(
        std::vector<Layout>{f32(PartialShape{Dimension(), K}), w});   // rows vary in the model
    std::string constant_info, input_info;
    for (const RegisteredImpl* r : test::registry()->impls("fully_connected", "cpu")) {
        if (r->entry.name != "cpu_dnnl_dynamic") continue;
        p.constant_weights = false;
        input_info = dnnl_impl_info(*r->entry.create(p));
        p.constant_weights = true;
        constant_info = dnnl_impl_info(*r->entry.create(p));
    }
    ASSERT_FALSE(input_info.empty()) << "no shape-agnostic cpu_dnnl_dynamic impl of fully_connected";
    EXPECT_EQ(input_info.find("staged"), std::string::npos) << input_info;
    EXPECT_NE(constant_info.find("staged weights(once)"), std::string::npos) << constant_info;
}

// ---- 3. changing shapes on one instance ----------------------------------------

using test::Mode;

void sweep(Mode mode) {
    const int64_t K = 16, N = 8;
    const HostTensor w = test::random_tensor(DataType::f32, Shape{N, K}, 5);
    const HostTensor b = test::random_tensor(DataType::f32, Shape{N}, 6);
    const test::OpSetup setup{
        "fully_connected", Attributes(), {f32(PartialShape{Dimension(), K}), w.layout(), b.layout()}, {{1, w}, {2, b}}};
    const std::vector<int64_t> rows = {1, 3, 13, 13, 16, 17, 255, 257, 13, 1, 1};
    std::vector<test::Run> runs;
    for (size_t step = 0; step < rows.size(); ++step)
        runs.push_back({test::random_tensor(DataType::f32, Shape{rows[step], K}, 70 + step)});
    test::SequenceOptions o;
    o.mode = mode;
    o.on_step = [&](const InferRequest& req, size_t step) {
        const HostTensor y = req.get_output(0);
        ASSERT_EQ(y.shape(), (Shape{rows[step], N})) << "step " << step;
        EXPECT_LE(test::max_abs_diff(y, naive_fc(runs[step][0], w, &b)), 1e-5) << "step " << step;
    };
    test::expect_sequence(setup, runs, o);
}

TEST(FullyConnectedDynamic, DynamicImplServesNewBatchSizesWhileStaticBuildsInBackground) { sweep(Mode::dynamic_async); }
TEST(FullyConnectedDynamic, WithoutBackgroundCompileEachNewBatchSizeBuildsStatic) { sweep(Mode::sync_compile); }
TEST(FullyConnectedDynamic, OneInstanceFollowsBatchSizesOnStaticImpls) { sweep(Mode::static_only); }

// Zero-size products: K = 0 is a sum of no terms, so y is the bias, or zeros
// (oneDNN's matmul left its output unwritten, or failed to execute with
// runtime dims); no rows (M = 0) or no weights rows (N = 0) give empty
// outputs. One instance runs them between ordinary products (the K = 0
// output lands in the buffer the [3,5] product just filled) on every engine
// and mode, with a bias and x [M, K], without one and x [2, M, K]; and every
// impl is forced on each run it accepts.
TEST(FullyConnectedDynamic, ZeroSizeProductsGiveBiasOrZerosAndEmptyOutputsOnEveryEngine) {
    for (const bool bias : {true, false}) {
        SCOPED_TRACE(bias ? "x [M, K] with bias" : "x [2, M, K] without bias");
        auto x = [&](int64_t m, int64_t k) { return bias ? Shape{m, k} : Shape{2, m, k}; };
        std::vector<std::vector<Shape>> shapes = {{x(3, 4), {5, 4}}, {x(3, 0), {5, 0}}, {x(0, 4), {5, 4}},
                                                  {x(3, 4), {0, 4}}, {x(3, 0), {5, 0}}, {x(1, 0), {5, 0}},
                                                  {x(0, 0), {5, 0}}, {x(3, 4), {5, 4}}};
        std::vector<Layout> inputs = {f32(PartialShape::dynamic_of_rank(bias ? 2 : 3)),
                                      f32(PartialShape::dynamic_of_rank(2))};
        if (bias) {
            for (auto& row : shapes) row.push_back(Shape{row[1][0]});
            inputs.push_back(f32(PartialShape::dynamic_of_rank(1)));
        }
        const test::OpSetup setup{"fully_connected", {}, inputs, {}};
        const std::vector<test::Run> runs = test::random_runs(DataType::f32, shapes, 60);
        for (test::SequenceOptions o : test::every_engine_and_mode()) {
            SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
            // The shapes come back: a revisit on ocl may run the static impl
            // built meanwhile, so any OpenCL impl will do. And fake alignment
            // gives [2, 3, 0] and [2, 1, 0] one impl ([8, 0]), which the
            // generic per-step counters do not expect.
            const bool ocl = o.engine == "ocl";
            o.impl_suffix.clear();
            o.check_counters = !ocl;
            o.on_step = [&, ocl](const InferRequest& req, size_t step) {
                const HostTensor y = req.get_output(0);
                Shape want = shapes[step][0];
                const int64_t k = want[want.size() - 1];
                want[want.size() - 1] = shapes[step][1][0];
                ASSERT_EQ(y.shape(), want) << "step " << step;
                const NodeStats& ns = req.last_run().nodes.back();
                if (ocl && y.count() != 0) {
                    EXPECT_NE(ns.impl.find("_ocl_"), std::string::npos) << ns.impl << " at step " << step;
                }
                if (k != 0) return;
                const int64_t n = want[want.size() - 1];
                for (size_t i = 0; i < y.count(); ++i) {
                    const double b = bias ? runs[step][2].get_as_double(i % static_cast<size_t>(n)) : 0.0;
                    EXPECT_EQ(y.get_as_double(i), b) << "step " << step << " element " << i;
                }
            };
            test::expect_sequence(setup, runs, o);
        }
        const std::vector<std::string> ran = test::expect_impls_match_reference(setup, runs);
        EXPECT_NE(std::find(ran.begin(), ran.end(), "cpu_dnnl_static"), ran.end());
        EXPECT_NE(std::find(ran.begin(), ran.end(), "cpu_ref_static"), ran.end());
    }
}

// ---- 4. OpenCL impls against the cpu reference -----------------------------------

// Programs built here are cached in a folder of this test binary, not the user's.
// Sums of up to 257 products of values in [-1, 1): float accumulation in another
// order than the double reference stays well inside this.
constexpr double kOclTol = 2e-4;

// x [d0, d1, K], w [N, K], bias [N]; every dim dynamic in the program.
struct FcCase {
    int64_t d0, d1, k, n;
};

void ocl_sweep(bool dynamic, bool with_bias, const std::vector<FcCase>& cases, bool fake_alignment = true) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    auto prog = std::make_shared<Program>(test::registry(), "fc_ocl");
    prog->add_input("x", Layout(PartialShape::dynamic_of_rank(3), DataType::f32));
    prog->add_input("w", Layout(PartialShape::dynamic_of_rank(2), DataType::f32));
    std::vector<std::string> ins = {"x", "w"};
    if (with_bias) {
        prog->add_input("b", Layout(PartialShape::dynamic_of_rank(1), DataType::f32));
        ins.push_back("b");
    }
    prog->add_node("fc", "fully_connected", ins);
    prog->add_output("fc");
    prog->build();
    NetworkOptions opts;
    opts.fake_alignment = fake_alignment;
    test::OclAndCpuRequests requests(eng, prog, dynamic, opts);
    InferRequest& req = requests.req;
    InferRequest& ref = requests.ref;
    std::set<std::vector<int64_t>> seen;
    for (size_t step = 0; step < cases.size(); ++step) {
        const FcCase& c = cases[step];
        const std::vector<int64_t> key = {c.d0, c.d1, c.k, c.n};
        const bool revisit = seen.count(key) > 0;
        seen.insert(key);
        const std::string what = "step " + std::to_string(step) + " x [" + std::to_string(c.d0) + "," +
                                 std::to_string(c.d1) + "," + std::to_string(c.k) + "] N=" + std::to_string(c.n);
        std::vector<std::pair<std::string, HostTensor>> inputs = {
            {"x", test::random_tensor(DataType::f32, Shape{c.d0, c.d1, c.k}, 100 + step)},
            {"w", test::random_tensor(DataType::f32, Shape{c.n, c.k}, 200 + step)}};
        if (with_bias) inputs.emplace_back("b", test::random_tensor(DataType::f32, Shape{c.n}, 300 + step));
        requests.infer(inputs);
        const HostTensor y = req.get_output(0);
        const HostTensor want = ref.get_output(0);
        ASSERT_EQ(y.shape(), (Shape{c.d0, c.d1, c.n})) << what;
        EXPECT_LE(test::max_abs_diff(y, want), kOclTol) << what;
        const NodeStats& ns = req.last_run().nodes.back();
        ASSERT_EQ(ns.node, "fc");
        test::expect_ocl_impl(ns, dynamic, revisit, what);
    }
}

// Rows (d0 * d1) on the skinny kernel (<= 16: every row bucket 1, 2, 4, 8, 16)
// and the tiled one, K and N over the tails (1, 3, 13, 16, 17, 255, 257), with
// revisits; K a multiple of 4 and not (the skinny kernel's float4 and scalar
// loops).
std::vector<FcCase> tail_cases() {
    return {{1, 1, 1, 1},
            {1, 3, 13, 17},
            {2, 8, 16, 3},
            {1, 16, 257, 255},
            {1, 17, 255, 13},
            {3, 85, 3, 16},
            {1, 257, 17, 1},
            {1, 1, 257, 257},
            {1, 3, 13, 17},
            {1, 1, 1, 1},
            {1, 17, 255, 13},
            {1, 2, 5, 8},
            {2, 4, 17, 9},
            {1, 5, 3, 4},
            // K a multiple of 4 on the skinny kernel (its float4 path), every bucket
            {1, 1, 256, 5},
            {1, 2, 20, 8},
            {1, 3, 4, 7},
            {2, 3, 260, 17},
            {4, 4, 12, 33}};
}

TEST(FullyConnectedOcl, ShapeAgnosticImplMatchesCpuOverTailShapes) { ocl_sweep(true, true, tail_cases()); }
TEST(FullyConnectedOcl, StaticImplsMatchCpuOverTailShapesAndAreCached) { ocl_sweep(false, true, tail_cases()); }
// Fake alignment rounds the rows up to the skinny kernel's bucket; without it
// the shape-agnostic impl runs buckets that are partly used (rows past M read
// row M - 1), with K a multiple of 4 and not.
TEST(FullyConnectedOcl, ShapeAgnosticImplServesPartlyUsedRowBucketsWithoutFakeAlignment) {
    ocl_sweep(true, true, {{1, 3, 4, 7}, {2, 3, 260, 17}, {1, 5, 12, 9}, {3, 5, 8, 4}, {1, 3, 13, 17}, {1, 2, 20, 8}},
              false);
}
TEST(FullyConnectedOcl, WithoutBiasBothImplsMatchCpu) {
    const std::vector<FcCase> cases = {{1, 4, 19, 9}, {2, 20, 33, 40}};
    ocl_sweep(true, false, cases);
    ocl_sweep(false, false, cases);
}

TEST(FullyConnectedOcl, F16FallsBackToTheHostImpl) {
    const auto r = test::f16_host_fallback("fully_connected", Shape{3, 4}, Shape{2, 4}, Attributes());
    if (r.empty()) GTEST_SKIP() << "no ocl engine";
    EXPECT_LE(test::max_abs_diff(r[2], naive_fc(r[0], r[1], nullptr)), 4e-3);
}

}   // namespace
}   // namespace dynrt
