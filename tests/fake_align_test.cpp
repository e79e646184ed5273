// Fake alignment of fully_connected: the rows (leading dims collapsed into M)
// are rounded up to the impl's tile, so nearby M share one static impl and one
// buffer size; the producer's buffer is sized for the aligned rows; one row
// is left alone. Outputs are compared with fake alignment off.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

const NodeStats& stats_of(const InferRequest& r, const std::string& node) {
    for (const NodeStats& s : r.last_run().nodes)
        if (s.node == node) return s;
    throw Error("no stats for " + node);
}

// x -> tanh -> fc(w): the fc's input comes from a primitive, not an input.
std::shared_ptr<Program> tanh_fc(const PartialShape& x, int64_t k, int64_t n) {
    auto p = std::make_shared<Program>(test::registry());
    p->add_input("x", Layout(x, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, Shape{n, k}, 1));
    Attributes a;
    a.set("func", std::string("tanh"));
    p->add_node("t", "activation", {"x"}, a);
    p->add_node("fc", "fully_connected", {"t", "w"});
    p->add_output("fc");
    p->build();
    return p;
}

bool fc_has_hook() { return static_cast<bool>(test::registry()->op("fully_connected").def.fake_align); }

struct Pair {
    InferRequest aligned, ref;
    // `eng`: the device of the aligned request (cpu when null); the reference
    // runs unaligned on cpu.
    Pair(const std::shared_ptr<Program>& p, NetworkOptions opt, EnginePtr eng = nullptr)
        : aligned(Network::create(p, eng ? eng : test::engine("cpu"), opt)),
          ref(Network::create(p, test::engine("cpu"), off(opt))) {}
    static NetworkOptions off(NetworkOptions o) {
        o.fake_alignment = false;
        return o;
    }
    void run(const HostTensor& x) {
        aligned.set_input("x", x);
        ref.set_input("x", x);
        aligned.infer();
        ref.infer();
        const HostTensor a = aligned.get_output(0), b = ref.get_output(0);
        ASSERT_EQ(a.shape(), b.shape());
        EXPECT_LE(test::max_abs_diff(a, b), 1e-5);
    }
};

// `eng` null: cpu with the OpenCL kernels' tile forced; else that device with
// the tile its fully_connected impl declares (8 for the OpenCL kernels).
void rows_rounded_up(const EnginePtr& eng) {
    NetworkOptions opt;
    opt.use_dynamic_impls = false;
    if (!eng) opt.fake_align_rows = 8;   // the OpenCL kernels' tile, forced on the host
    Pair pr(tanh_fc(PartialShape{Dimension(), 32}, 32, 12), opt, eng);
    uint64_t builds = 0, hits = 0;
    for (int64_t m : {13, 15, 9, 16, 14}) {
        SCOPED_TRACE("m = " + std::to_string(m));
        pr.run(test::random_tensor(DataType::f32, Shape{m, 32}, static_cast<uint64_t>(m)));
        const Counters& fc = stats_of(pr.aligned, "fc").counters;
        EXPECT_EQ(fc.fake_aligned, m == 16 ? 0u : 1u);   // 16 rows are aligned already
        if (eng) {
            const std::string& impl = stats_of(pr.aligned, "fc").impl;
            EXPECT_NE(impl.find("_ocl_static"), std::string::npos) << impl;
        }
        builds += fc.static_builds;
        hits += fc.impl_cache_hits;
        // The producer's buffer and the fc's hold the 16 aligned rows.
        EXPECT_GE(pr.aligned.inst("t").output_capacity(), 16u * 32u * 4u);
        EXPECT_GE(pr.aligned.inst("fc").output_capacity(), 16u * 12u * 4u);
    }
    // 9..16 rows all run the impl built for [16, 32]: one build, hits afterwards.
    EXPECT_EQ(builds, 1u);
    EXPECT_EQ(hits, 4u);
    // Without alignment each of the 5 M builds its own fc impl (and tanh's).
    EXPECT_EQ(pr.ref.cumulative().static_builds, 10u);
}

TEST(FakeAlign, RowsRoundedUpToTheTile_ShareOneStaticImpl) {
    if (!fc_has_hook()) GTEST_SKIP() << "fully_connected has no fake_align hook";
    rows_rounded_up(nullptr);
}

TEST(FakeAlignOcl, RowsRoundedUpToTheKernelTile_ShareOneStaticImpl) {
    if (!fc_has_hook()) GTEST_SKIP() << "fully_connected has no fake_align hook";
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    rows_rounded_up(eng);
}

TEST(FakeAlign, LeadingDimsCollapse_AndOneStaticImplServesTheirProducts) {
    if (!fc_has_hook()) GTEST_SKIP() << "fully_connected has no fake_align hook";
    NetworkOptions opt;
    opt.use_dynamic_impls = false;
    opt.fake_align_rows = 8;
    auto p = tanh_fc(PartialShape{Dimension(), Dimension(), 8}, 8, 5);
    Pair pr(p, opt);
    uint64_t builds = 0, hits = 0;
    for (const Shape& s : {Shape{2, 7, 8}, Shape{3, 5, 8}, Shape{1, 13, 8}, Shape{2, 7, 8}}) {
        SCOPED_TRACE(s.to_string());
        pr.run(test::random_tensor(DataType::f32, s, s.count()));
        builds += stats_of(pr.aligned, "fc").counters.static_builds;
        hits += stats_of(pr.aligned, "fc").counters.impl_cache_hits;
        EXPECT_EQ(stats_of(pr.aligned, "fc").counters.fake_aligned, 1u);
        EXPECT_EQ(pr.aligned.node_layout("fc").get_shape()[2], 5);   // consumers see the logical layout
    }
    EXPECT_EQ(builds, 1u);   // 14, 15 and 13 rows all run as [16, 8]
    EXPECT_EQ(hits, 3u);
}

TEST(FakeAlign, OneRow_IsNotAlignedWhateverK) {
    if (!fc_has_hook()) GTEST_SKIP() << "fully_connected has no fake_align hook";
    NetworkOptions opt;
    opt.fake_align_rows = 8;
    for (int64_t k : {16, 1024}) {
        SCOPED_TRACE("k = " + std::to_string(k));
        Pair pr(tanh_fc(PartialShape{Dimension(), k}, k, 4), opt);
        pr.run(test::random_tensor(DataType::f32, Shape{1, k}, 1));
        EXPECT_EQ(stats_of(pr.aligned, "fc").counters.fake_aligned, 0u);
        pr.run(test::random_tensor(DataType::f32, Shape{3, k}, 2));
        EXPECT_EQ(stats_of(pr.aligned, "fc").counters.fake_aligned, 1u);
    }
}

TEST(FakeAlign, HostTileOfOne_LeavesEveryShapeAlone) {
    if (!fc_has_hook()) GTEST_SKIP() << "fully_connected has no fake_align hook";
    InferRequest req(Network::create(tanh_fc(PartialShape{Dimension(), 16}, 16, 4), test::engine("cpu")));
    for (int64_t m : {3, 13}) {
        req.set_input("x", test::random_tensor(DataType::f32, Shape{m, 16}, 1));
        req.infer();
        EXPECT_EQ(stats_of(req, "fc").counters.fake_aligned, 0u);
    }
}

}   // namespace
}   // namespace dynrt
