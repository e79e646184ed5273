// The per-primitive flow: every skip rule and every cache / realloc path,
// asserted on the counters. Ops are registered in-process (test-only), the cpu
// engine comes from the real plugin module.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <thread>

#include "dynrt/impl_cache.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/primitive_inst.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

std::atomic<int> g_unary_runs{0};
std::atomic<int> g_view_kernel_runs{0};

std::vector<Layout> same_as_input(const ShapeInferContext& c) { return {c.inputs.at(0)}; }

void register_test_ops(ModuleRegistrar& reg) {
    // y = x + 1 (any shape)
    OpDefinition unary;
    unary.name = "t_unary";
    unary.infer = same_as_input;
    reg.add_op(unary);
    add_host_impls(reg, "t_unary", [](HostCall& c) {
        ++g_unary_runs;
        for (size_t i = 0; i < c.in_shape(0).count(); ++i) c.set(0, i, c.get(0, i) + 1.0);
    });

    // same, declared critical: a dynamic impl triggers a background static build
    OpDefinition crit = unary;
    crit.name = "t_critical";
    crit.traits.critical = true;
    reg.add_op(crit);
    add_host_impls(reg, "t_critical", [](HostCall& c) {
        for (size_t i = 0; i < c.in_shape(0).count(); ++i) c.set(0, i, c.get(0, i) * 2.0);
    });

    // static impl only
    OpDefinition stat = unary;
    stat.name = "t_static_only";
    reg.add_op(stat);
    HostImplOptions so;
    so.register_dynamic = false;
    add_host_impls(
        reg, "t_static_only",
        [](HostCall& c) {
            for (size_t i = 0; i < c.in_shape(0).count(); ++i) c.set(0, i, c.get(0, i) - 1.0);
        },
        so);

    // shape of the input as i64
    OpDefinition shp;
    shp.name = "t_shape_of";
    shp.traits.shape_of_like = true;
    shp.infer = [](const ShapeInferContext& c) {
        return std::vector<Layout>{Layout(PartialShape{Dimension(int64_t(c.inputs[0].shape.rank()))}, DataType::i64)};
    };
    reg.add_op(shp);
    add_host_impls(reg, "t_shape_of", [](HostCall& c) {
        for (size_t i = 0; i < c.in_shape(0).size(); ++i) c.out<int64_t>(0)[i] = c.in_shape(0)[i];
    });

    // reshape to the values of input 1
    OpDefinition rs;
    rs.name = "t_reshape";
    rs.min_inputs = rs.max_inputs = 2;
    rs.value_inputs = {1};
    rs.infer = [](const ShapeInferContext& c) {
        const HostTensor* t = c.value(1);
        if (!t)
            return std::vector<Layout>{Layout(
                PartialShape::dynamic_of_rank(c.inputs[1].shape[0].is_static() ? c.inputs[1].shape[0].get_length() : 1),
                c.inputs[0].dtype)};
        std::vector<Dimension> d;
        for (int64_t v : t->to_int64()) d.emplace_back(v);
        PartialShape ps(d);
        if (c.inputs[0].is_static() && ps.to_shape().count() != c.inputs[0].count())
            throw Error("cannot reshape " + c.inputs[0].shape.to_string() + " to " + ps.to_string());
        return std::vector<Layout>{Layout(ps, c.inputs[0].dtype)};
    };
    reg.add_op(rs);
    add_host_impls(reg, "t_reshape", [](HostCall& c) {
        std::memcpy(c.out_raw(0), c.in_raw(0), c.in_shape(0).count() * byte_size(c.in_type(0)));
    });

    // elementwise op on i64 (part of a shape_of subgraph when fed by t_shape_of)
    OpDefinition dbl;
    dbl.name = "t_scale_i64";
    dbl.infer = same_as_input;
    reg.add_op(dbl);
    add_host_impls(reg, "t_scale_i64", [](HostCall& c) {
        for (size_t i = 0; i < c.in_shape(0).count(); ++i) c.out<int64_t>(0)[i] = c.in<int64_t>(0)[i] * 1;
    });

    // keeps the positive elements: output size known only after execution
    OpDefinition pos;
    pos.name = "t_positive";
    pos.traits.data_dependent_output = true;
    pos.infer = same_as_input;   // upper bound
    reg.add_op(pos);
    // HostCall has no access to actual_outputs: a hand-written impl.
    ImplEntry e;
    e.name = "cpu_positive";
    e.impl_type = "cpu";
    e.shape_type = ShapeType::dynamic_shape;
    struct PositiveImpl : Impl {
        void execute(ExecContext& ctx) override {
            MappedMemory in(*ctx.inputs[0], ctx.stream), out(*ctx.outputs[0], ctx.stream);
            size_t n = ctx.params.inputs[0].count(), k = 0;
            for (size_t i = 0; i < n; ++i)
                if (in.as<float>()[i] > 0) out.as<float>()[k++] = in.as<float>()[i];
            (*ctx.actual_outputs)[0] = Layout(PartialShape{Dimension(int64_t(k))}, DataType::f32);
        }
        std::string name() const override { return "positive"; }
        bool is_dynamic() const override { return true; }
    };
    e.create = [](const KernelParams&) { return std::make_unique<PositiveImpl>(); };
    reg.add_impl("t_positive", e);

    OpDefinition none = unary;
    none.name = "t_noimpl";
    reg.add_op(none);
    // layout-only: flattens to [count]; its kernel copies (runs only where no view serves)
    OpDefinition flat = unary;
    flat.name = "t_view";
    flat.traits.view = true;
    flat.infer = [](const ShapeInferContext& c) {
        const Layout& in = c.inputs.at(0);
        const Dimension d = in.is_static() ? Dimension(static_cast<int64_t>(in.count())) : Dimension();
        return std::vector<Layout>{Layout(PartialShape{d}, in.dtype)};
    };
    reg.add_op(flat);
    add_host_impls(reg, "t_view", [](HostCall& c) {
        ++g_view_kernel_runs;
        std::memcpy(c.out_raw(0), c.in_raw(0), c.in_shape(0).count() * byte_size(c.in_type(0)));
    });
    // y = a + b (same shapes)
    OpDefinition add = unary;
    add.name = "t_add";
    add.min_inputs = add.max_inputs = 2;
    reg.add_op(add);
    add_host_impls(reg, "t_add", [](HostCall& c) {
        for (size_t i = 0; i < c.in_shape(0).count(); ++i) c.set(0, i, c.get(0, i) + c.get(1, i));
    });
    // an impl that runs out of host memory
    OpDefinition oom = unary;
    oom.name = "t_oom";
    reg.add_op(oom);
    add_host_impls(reg, "t_oom", [](HostCall&) { throw std::bad_alloc(); });
    // output twice as long as the input
    OpDefinition twice = unary;
    twice.name = "t_twice";
    twice.infer = [](const ShapeInferContext& c) {
        PartialShape s = c.inputs.at(0).shape;
        s[0] = s[0].is_static() ? Dimension(s[0].get_length() * 2) : Dimension();
        return std::vector<Layout>{Layout(s, c.inputs.at(0).dtype)};
    };
    reg.add_op(twice);
    add_host_impls(reg, "t_twice", [](HostCall& c) {
        for (size_t i = 0; i < c.out_shape(0).count(); ++i) c.set(0, i, 0.0);
    });
}

struct Env {
    std::shared_ptr<Registry> registry = std::make_shared<Registry>();
    EnginePtr engine;
    Env() {
        for (const char* m : {"libdynrt_cpu.so"}) ModuleLoader::load_file(*registry, test::module_dir() + "/" + m);
        ModuleLoader::load_file(*registry, std::string(DYNRT_TEST_MODULES_DIR) + "/scratch/libtm_scratch.so");
        auto rec = std::make_shared<ModuleRecord>();
        rec->path = "<flow_test>";
        rec->name = "flow_test";
        ModuleRegistrar r(*registry, rec);
        register_test_ops(r);
        r.commit();
        engine = registry->create_engine("cpu", EngineConfig{"cpu", false});
    }
};

Env& env() {
    static Env e;
    return e;
}

HostTensor iota(const Shape& s, float start = 0.f) {
    HostTensor t(DataType::f32, s);
    for (size_t i = 0; i < t.count(); ++i) t.as<float>()[i] = start + float(i);
    return t;
}

std::shared_ptr<Network> chain(const std::string& op, NetworkOptions opt = {}, PartialShape in = {Dimension()}) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(in, DataType::f32));
    p->add_node("n", op, {"x"});
    p->add_output("n");
    p->build();
    return Network::create(p, env().engine, opt);
}

using test::node_counters;

}   // namespace

TEST(Flow, FirstRun_InfersShapeBuildsImplAndAllocates) {
    auto net = chain("t_unary");
    InferRequest r(net);
    r.set_input("x", iota({5}));
    r.infer();
    const Counters& c = node_counters(r, "n");
    EXPECT_EQ(c.shape_changes, 1u);
    EXPECT_EQ(c.update_shape_runs, 1u);
    EXPECT_EQ(c.impl_cache_misses, 1u);
    EXPECT_EQ(c.dynamic_impl_runs, 1u);
    EXPECT_EQ(c.allocations, 1u);
    EXPECT_EQ(c.executions, 1u);
    HostTensor out = r.get_output(0);
    ASSERT_EQ(out.shape(), Shape({5}));
    for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(out.as<float>()[i], float(i) + 1.f);
}

TEST(Flow, UnchangedInputs_SkipUpdateShapeImplAndRealloc) {
    auto net = chain("t_unary");
    InferRequest r(net);
    r.set_input("x", iota({5}));
    r.infer();
    r.set_input("x", iota({5}, 10.f));
    r.infer();
    const Counters& c = node_counters(r, "n");
    EXPECT_EQ(c.skip_shape_unchanged, 1u);
    EXPECT_EQ(c.shape_changes, 0u);
    EXPECT_EQ(c.update_shape_runs, 0u);
    EXPECT_EQ(c.impl_cache_misses + c.impl_cache_hits, 0u);
    EXPECT_EQ(c.allocations, 0u);
    EXPECT_EQ(c.executions, 1u);
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[4], 15.f);
}

TEST(Flow, RunStats_SubmitTimeIsTheIssuingPartOfHostTime) {
    auto net = chain("t_unary");
    InferRequest r(net);
    for (int64_t n : {5, 9}) {
        r.set_input("x", iota({n}));
        r.infer();
        EXPECT_GT(r.last_run().submit_ms, 0.0);
        EXPECT_LE(r.last_run().submit_ms, r.last_run().host_ms);
    }
}

TEST(Flow, SmallerShape_ReusesBufferLargerShape_Reallocates) {
    NetworkOptions opt;
    opt.prealloc = ShapePredictor::parse_settings("0 0 0 1.0");   // exact sizes
    auto net = chain("t_unary", opt);
    InferRequest r(net);
    r.set_input("x", iota({8}));
    r.infer();
    const size_t cap = r.inst("n").output_capacity();
    EXPECT_EQ(cap, 8 * sizeof(float));
    r.set_input("x", iota({3}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").reuses, 1u);
    EXPECT_EQ(node_counters(r, "n").allocations, 0u);
    EXPECT_EQ(r.inst("n").output_capacity(), cap);
    EXPECT_EQ(r.get_output(0).shape(), Shape({3}));
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[2], 3.f);
    r.set_input("x", iota({9}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").allocations, 1u);
    EXPECT_EQ(node_counters(r, "n").bytes_allocated, 9 * sizeof(float));
}

TEST(Flow, NeedFarBelowCapacity_ReleasesAndReallocates) {
    NetworkOptions opt;
    opt.prealloc = ShapePredictor::parse_settings("0 0 0 1.0");
    auto net = chain("t_unary", opt);
    InferRequest r(net);
    r.set_input("x", iota({1000}));
    r.infer();
    r.set_input("x", iota({99}));   // 99 * 10 < 1000: reclaim
    r.infer();
    EXPECT_EQ(node_counters(r, "n").reclaims, 1u);
    EXPECT_EQ(node_counters(r, "n").allocations, 1u);
    EXPECT_EQ(r.inst("n").output_capacity(), 99 * sizeof(float));
    r.set_input("x", iota({10}));   // 10 * 10 = 100 >= 99 -> reuse
    r.infer();
    EXPECT_EQ(node_counters(r, "n").reuses, 1u);
}

TEST(Flow, GrowingShape_PredictorCutsAllocations) {
    auto count_allocs = [](const std::string& prealloc) {
        NetworkOptions opt;
        opt.prealloc = ShapePredictor::parse_settings(prealloc);
        auto net = chain("t_unary", opt);
        InferRequest r(net);
        uint64_t allocs = 0;
        for (int64_t n = 1; n <= 40; ++n) {
            r.set_input("x", iota({n}));
            r.infer();
            allocs += node_counters(r, "n").allocations;
            EXPECT_EQ(r.get_output(0).shape(), Shape({n}));
            EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[n - 1], float(n));
        }
        return allocs;
    };
    const uint64_t with = count_allocs("10 16384 2 1.1");
    const uint64_t without = count_allocs("0 0 0 1.0");
    EXPECT_EQ(without, 40u);
    // history needs 3 shapes, then +10 steps: 1,2,3 -> 13, 14 -> 24, 25 -> 35, 36 -> 46
    EXPECT_EQ(with, 6u);
}

TEST(Flow, StaticImpls_CachedPerShapeAndHitOnRevisit) {
    NetworkOptions opt;
    opt.use_dynamic_impls = false;
    auto net = chain("t_unary", opt);
    InferRequest r(net);
    const int64_t sizes[] = {4, 8, 4, 8, 16};
    const uint64_t builds[] = {1, 1, 0, 0, 1};
    const uint64_t hits[] = {0, 0, 1, 1, 0};
    for (int k = 0; k < 5; ++k) {
        r.set_input("x", iota({sizes[k]}));
        r.infer();
        EXPECT_EQ(node_counters(r, "n").static_builds, builds[k]) << k;
        EXPECT_EQ(node_counters(r, "n").impl_cache_hits, hits[k]) << k;
        EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 0u);
        EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[sizes[k] - 1], float(sizes[k]));
    }
    EXPECT_EQ(net->impl_cache().size(), 3u);
}

TEST(Flow, ImplCacheCapacity_EvictsLeastRecentlyUsed) {
    NetworkOptions opt;
    opt.use_dynamic_impls = false;
    opt.impl_cache_capacity = 2;
    auto net = chain("t_unary", opt);
    InferRequest r(net);
    for (int64_t n : {1, 2, 3}) {
        r.set_input("x", iota({n}));
        r.infer();
    }
    EXPECT_EQ(net->impl_cache().size(), 2u);
    EXPECT_EQ(net->impl_cache().evictions(), 1u);
    r.set_input("x", iota({1}));   // evicted: rebuilt
    r.infer();
    EXPECT_EQ(node_counters(r, "n").static_builds, 1u);
}

TEST(Flow, StaticOnlyOp_BuildsStaticImplOnDynamicNode) {
    auto net = chain("t_static_only");
    InferRequest r(net);
    r.set_input("x", iota({3}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").static_builds, 1u);
    r.set_input("x", iota({4}));
    r.infer();
    r.set_input("x", iota({3}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").impl_cache_hits, 1u);
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[2], 1.f);
}

TEST(Flow, StaticNode_UsesStaticImplEvenWhenDynamicExists) {
    auto net = chain("t_unary", {}, PartialShape{4});
    InferRequest r(net);
    r.set_input("x", iota({4}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").static_builds, 1u);
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 0u);
}

TEST(Flow, CriticalOp_DynamicFirstThenBackgroundStaticTakesOver) {
    NetworkOptions opt;
    opt.async_compile_after = 1;   // queue on a shape's first run
    auto net = chain("t_critical", opt);
    InferRequest r(net);
    r.set_input("x", iota({6}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 1u);
    EXPECT_EQ(node_counters(r, "n").async_builds_queued, 1u);
    const HostTensor first = r.get_output(0);
    net->wait_for_background_builds();
    r.infer();   // same shape: the finished static impl is picked up
    EXPECT_EQ(node_counters(r, "n").async_builds_picked, 1u);
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 0u);
    EXPECT_FALSE(r.inst("n").impl()->is_dynamic());
    EXPECT_EQ(test::max_abs_diff(first, r.get_output(0)), 0.0);
    // a second request with the same shape hits the cache at once
    InferRequest r2(net);
    r2.set_input("x", iota({6}));
    r2.infer();
    EXPECT_EQ(node_counters(r2, "n").impl_cache_hits, 1u);
    EXPECT_EQ(node_counters(r2, "n").async_builds_queued, 0u);
}

TEST(Flow, CriticalOp_ByDefaultQueuesTheStaticBuildOnAShapesSecondRun) {
    auto net = chain("t_critical");
    InferRequest r(net);
    r.set_input("x", iota({6}));
    r.infer();   // first run of [6]: dynamic impl, nothing queued yet
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 1u);
    EXPECT_EQ(node_counters(r, "n").async_builds_queued, 0u);
    net->wait_for_background_builds();
    EXPECT_TRUE(r.inst("n").impl()->is_dynamic());   // nothing was built
    r.infer();                                       // second run of [6]: queued now
    const Counters second = node_counters(r, "n");
    EXPECT_EQ(second.async_builds_queued, 1u);
    // The build may finish before this run's own check for it, which then
    // picks it up at once; otherwise the dynamic impl runs once more.
    EXPECT_EQ(second.dynamic_impl_runs + second.async_builds_picked, 1u);
    net->wait_for_background_builds();
    r.infer();   // third run: on the static impl
    EXPECT_EQ(second.async_builds_picked + node_counters(r, "n").async_builds_picked, 1u);
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 0u);
    EXPECT_FALSE(r.inst("n").impl()->is_dynamic());
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[5], 10.f);
}

TEST(Flow, CriticalOp_GrowingSequenceQueuesNothingUntilAShapeComesBack) {
    auto net = chain("t_critical");
    InferRequest r(net);
    size_t queued = 0;
    for (int64_t n = 1; n <= 20; ++n) {
        r.set_input("x", iota({n}));
        r.infer();
        EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 1u) << n;
        queued += node_counters(r, "n").async_builds_queued;
    }
    EXPECT_EQ(queued, 0u);
    r.set_input("x", iota({5}));   // a revisit is the shape's second run
    r.infer();
    EXPECT_EQ(node_counters(r, "n").async_builds_queued, 1u);
    const uint64_t picked = node_counters(r, "n").async_builds_picked;   // 1 if the build was that quick
    net->wait_for_background_builds();
    r.infer();
    EXPECT_EQ(picked + node_counters(r, "n").async_builds_picked, 1u);
    EXPECT_FALSE(r.inst("n").impl()->is_dynamic());
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[4], 8.f);
}

TEST(Flow, CriticalOpWithoutAsync_BuildsStaticSynchronously) {
    NetworkOptions opt;
    opt.async_compile = false;
    auto net = chain("t_critical", opt);
    InferRequest r(net);
    r.set_input("x", iota({6}));
    r.infer();
    EXPECT_EQ(node_counters(r, "n").static_builds, 1u);
    EXPECT_EQ(node_counters(r, "n").dynamic_impl_runs, 0u);
    EXPECT_EQ(node_counters(r, "n").async_builds_queued, 0u);
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[5], 10.f);
}

TEST(Flow, EmptyOutput_SkipsExecution) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension(), 3}, DataType::f32));
    p->add_node("a", "t_unary", {"x"});
    p->add_node("b", "t_unary", {"a"});
    p->add_output("b");
    p->build();
    auto net = Network::create(p, env().engine);
    InferRequest r(net);
    const int before = g_unary_runs.load();
    r.set_input("x", HostTensor(DataType::f32, Shape{0, 3}));
    r.infer();
    EXPECT_EQ(g_unary_runs.load(), before);
    EXPECT_EQ(node_counters(r, "a").skip_empty_output, 1u);
    EXPECT_EQ(node_counters(r, "b").skip_empty_output, 1u);
    EXPECT_EQ(node_counters(r, "a").executions, 0u);
    EXPECT_EQ(r.get_output(0).shape(), Shape({0, 3}));
    r.set_input("x", iota({2, 3}));
    r.infer();
    EXPECT_EQ(node_counters(r, "b").executions, 1u);
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[5], 7.f);
}

TEST(Flow, ShapeOf_SkippedWhileInputShapeHolds_SubgraphReusesValues) {
    // x -> t_shape_of -> t_scale_i64 (subgraph) -> t_reshape(x, target)
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    p->add_node("s", "t_shape_of", {"x"});
    p->add_node("k", "t_scale_i64", {"s"});
    p->add_node("r", "t_reshape", {"x", "k"});
    p->add_output("r");
    p->build();
    EXPECT_TRUE(p->nodes()[p->node_index("k")].in_shape_of_subgraph);
    EXPECT_FALSE(p->nodes()[p->node_index("r")].in_shape_of_subgraph);
    auto net = Network::create(p, env().engine);
    InferRequest r(net);
    r.set_input("x", iota({2, 3}));
    r.infer();
    EXPECT_EQ(node_counters(r, "s").executions, 1u);
    EXPECT_EQ(node_counters(r, "k").executions, 1u);
    EXPECT_EQ(r.get_output(0).shape(), Shape({2, 3}));

    r.set_input("x", iota({2, 3}, 5.f));   // same shape, new data
    r.infer();
    EXPECT_EQ(node_counters(r, "s").skip_shape_of, 1u);
    EXPECT_EQ(node_counters(r, "s").executions, 0u);
    EXPECT_EQ(node_counters(r, "k").skip_shape_of_subgraph, 1u);
    EXPECT_EQ(node_counters(r, "k").executions, 0u);
    EXPECT_EQ(node_counters(r, "r").skip_shape_unchanged, 1u);
    EXPECT_FLOAT_EQ(r.get_output(0).as<float>()[0], 5.f);

    r.set_input("x", iota({4, 7}));   // new shape: the whole chain runs again
    r.infer();
    EXPECT_EQ(node_counters(r, "k").executions, 1u);
    EXPECT_EQ(node_counters(r, "r").shape_changes, 1u);
    EXPECT_EQ(r.get_output(0).shape(), Shape({4, 7}));
}

TEST(Flow, ValueInputFromGraphInput_NewValuesSameLayout_ReinfersShape) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{6}, DataType::f32));
    p->add_input("t", Layout(PartialShape{2}, DataType::i64));
    p->add_node("r", "t_reshape", {"x", "t"});
    p->add_output("r");
    p->build();
    auto net = Network::create(p, env().engine);
    InferRequest r(net);
    r.set_input("x", iota({6}));
    r.set_input("t", HostTensor::from_int64(DataType::i64, {2}, {2, 3}));
    r.infer();
    EXPECT_EQ(r.get_output(0).shape(), Shape({2, 3}));
    r.set_input("t", HostTensor::from_int64(DataType::i64, {2}, {3, 2}));
    r.infer();
    EXPECT_EQ(r.get_output(0).shape(), Shape({3, 2}));
    EXPECT_EQ(node_counters(r, "r").shape_changes, 1u);
    r.infer();   // nothing set: nothing changed
    EXPECT_EQ(node_counters(r, "r").skip_shape_unchanged, 1u);
}

TEST(Flow, UpdateShapeDoneByOther_Skipped) {
    auto net = chain("t_unary");
    InferRequest r(net);
    r.set_input("x", iota({3}));
    r.infer();
    r.set_input("x", iota({3}));
    r.inst("n").set_update_shape_done_by_other();
    r.infer();
    EXPECT_EQ(node_counters(r, "n").skip_done_by_other, 1u);
    EXPECT_EQ(node_counters(r, "n").update_shape_runs, 0u);
}

TEST(Flow, DataDependentOutput_ShapeComesFromExecution) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension()}, DataType::f32));
    p->add_node("pos", "t_positive", {"x"});
    p->add_node("inc", "t_unary", {"pos"});
    p->add_output("inc");
    p->build();
    auto net = Network::create(p, env().engine);
    InferRequest r(net);
    HostTensor x = HostTensor::from_floats({5}, {1.f, -2.f, 3.f, -4.f, 5.f});
    r.set_input("x", x);
    r.infer();
    EXPECT_EQ(node_counters(r, "pos").skip_data_dependent, 1u);
    HostTensor out = r.get_output(0);
    ASSERT_EQ(out.shape(), Shape({3}));
    EXPECT_FLOAT_EQ(out.as<float>()[0], 2.f);
    EXPECT_FLOAT_EQ(out.as<float>()[2], 6.f);
    r.set_input("x", HostTensor::from_floats({5}, {1.f, 2.f, 3.f, -4.f, 5.f}));
    r.infer();
    EXPECT_EQ(r.get_output(0).shape(), Shape({4}));
}

TEST(Flow, TwoRequestsOnTwoThreads_MatchSequentialResults) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    p->add_node("a", "t_unary", {"x"});
    p->add_node("b", "t_critical", {"a"});
    p->add_node("s", "t_shape_of", {"b"});
    p->add_node("r", "t_reshape", {"b", "s"});
    p->add_output("r");
    p->build();
    auto net = Network::create(p, env().engine);
    auto run_seq = [&](InferRequest& r, int seed, std::vector<HostTensor>& outs) {
        for (int k = 0; k < 30; ++k) {
            const int64_t rows = 1 + (k * 7 + seed) % 13, cols = 1 + (k * 3 + seed) % 17;
            r.set_input("x", test::random_tensor(DataType::f32, {rows, cols}, uint64_t(seed * 100 + k)));
            r.infer();
            outs.push_back(r.get_output(0));
        }
    };
    std::vector<HostTensor> seq1, seq2, par1, par2;
    {
        InferRequest a(net), b(net);
        run_seq(a, 1, seq1);
        run_seq(b, 2, seq2);
    }
    {
        InferRequest a(net), b(net);
        std::thread t1([&] { run_seq(a, 1, par1); });
        std::thread t2([&] { run_seq(b, 2, par2); });
        t1.join();
        t2.join();
    }
    ASSERT_EQ(seq1.size(), par1.size());
    for (size_t i = 0; i < seq1.size(); ++i) {
        EXPECT_EQ(test::max_abs_diff(seq1[i], par1[i]), 0.0) << i;
        EXPECT_EQ(test::max_abs_diff(seq2[i], par2[i]), 0.0) << i;
    }
}

// tm_scratch_op (tests/modules/scratch_module.cpp): scratch of n floats and
// 64 + n bytes; out = 2 * in + executions of this request's impl state.
TEST(Flow, ImplScratch_FollowsTheShapesAndStateIsPerRequest) {
    auto net = chain("tm_scratch_op");
    InferRequest a(net), b(net);
    const std::vector<int64_t> sizes{4, 16, 16, 7, 40};
    for (size_t k = 0; k < sizes.size(); ++k) {
        SCOPED_TRACE("run " + std::to_string(k));
        const int64_t n = sizes[k];
        a.set_input("x", iota({n}));
        a.infer();
        const PrimitiveInst& inst = a.inst("n");
        ASSERT_EQ(inst.scratch().size(), 2u);
        EXPECT_EQ(inst.scratch()[0]->layout().bytes(), size_t(n) * sizeof(float));
        EXPECT_EQ(inst.scratch()[1]->layout().bytes(), 64 + size_t(n));
        EXPECT_GE(inst.scratch()[0]->capacity(), size_t(n) * sizeof(float));
        // The state counts every execution of this request: 1, 2, 3 ...
        const HostTensor out = a.get_output(0);
        for (int64_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(out.as<float>()[i], 2.f * float(i) + float(k + 1));
        // Scratch grows with the shape (and is counted as an allocation),
        // a smaller or equal shape reuses it.
        const bool grows = k == 0 || n > *std::max_element(sizes.begin(), sizes.begin() + k);
        EXPECT_EQ(node_counters(a, "n").allocations, grows ? 3u : 0u);
    }
    b.set_input("x", iota({3}));
    b.infer();
    // Another request starts its own state: one execution so far.
    EXPECT_FLOAT_EQ(b.get_output(0).as<float>()[2], 2.f * 2.f + 1.f);
    ASSERT_NE(a.inst("n").impl_state(), nullptr);
    ASSERT_NE(b.inst("n").impl_state(), nullptr);
    EXPECT_NE(a.inst("n").impl_state(), b.inst("n").impl_state());
    EXPECT_NE(a.inst("n").scratch()[0]->buffer(), b.inst("n").scratch()[0]->buffer());
}

TEST(Flow, ImplWithoutScratchOrState_GetsNull) {
    auto net = chain("t_unary");
    InferRequest r(net);
    r.set_input("x", iota({5}));
    r.infer();
    EXPECT_TRUE(r.inst("n").scratch().empty());
    EXPECT_EQ(r.inst("n").impl_state(), nullptr);
}

// Graph inputs and constants are node kinds of Program: no op definition, no
// impl, no module.
TEST(Program, InputsAndConstants_AreBuiltInNodeKinds) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout({Dimension(), 4}, DataType::f32));
    HostTensor c(DataType::i64, Shape{3});
    for (int64_t i = 0; i < 3; ++i) c.as<int64_t>()[i] = 60 + i;
    p->add_constant("c", c);
    p->add_output("x");
    p->add_output("c");
    p->build();
    const Node& x = p->nodes()[p->node_index("x")];
    const Node& k = p->nodes()[p->node_index("c")];
    EXPECT_TRUE(x.is_input());
    EXPECT_TRUE(k.is_constant());
    EXPECT_EQ(x.def, nullptr);
    EXPECT_EQ(k.def, nullptr);
    EXPECT_EQ(p->inputs(), std::vector<size_t>{p->node_index("x")});
    EXPECT_TRUE(x.is_dynamic);
    EXPECT_FALSE(k.is_dynamic);
    EXPECT_EQ(k.out_layouts.at(0).shape, PartialShape({3}));
    EXPECT_EQ(env().registry->find_op("parameter"), nullptr);
    EXPECT_EQ(env().registry->find_op("constant"), nullptr);

    // An input feeding only an output comes back unchanged whatever its shape;
    // a constant comes back on every run.
    InferRequest req(Network::create(p, env().engine));
    for (int64_t n : {2, 5, 5, 1, 17}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const HostTensor in = iota({n, 4}, float(n));
        req.set_input("x", in);
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), Shape({n, 4}));
        EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
        EXPECT_EQ(req.get_output(1).to_int64(), std::vector<int64_t>({60, 61, 62}));
    }
}

TEST(FlowErrors, BadInputs_ClearErrors) {
    auto net = chain("t_unary", {}, PartialShape{Dimension(1, 8)});
    InferRequest r(net);
    EXPECT_THROW(
        {
            try {
                r.infer();
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("input 'x' was not set"), std::string::npos) << e.what();
                throw;
            }
        },
        Error);
    try {
        r.set_input("y", iota({3}));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown input 'y'"), std::string::npos) << e.what();
    }
    try {
        r.set_input("x", HostTensor(DataType::i32, Shape{3}));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("data type i32"), std::string::npos) << e.what();
    }
    try {
        r.set_input("x", iota({9}));   // declared 1..8
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("[9]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
}

TEST(FlowErrors, RuntimeShapeMismatch_NamesNodeAndShapes) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension()}, DataType::f32));
    p->add_input("t", Layout(PartialShape{2}, DataType::i64));
    p->add_node("rs", "t_reshape", {"x", "t"});
    p->add_output("rs");
    p->build();
    auto net = Network::create(p, env().engine);
    InferRequest r(net);
    r.set_input("x", iota({5}));
    r.set_input("t", HostTensor::from_int64(DataType::i64, {2}, {2, 3}));
    try {
        r.infer();
        FAIL();
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("'rs'"), std::string::npos) << m;
        EXPECT_NE(m.find("[5]"), std::string::npos) << m;
        EXPECT_NE(m.find("[2,3]"), std::string::npos) << m;
    }
}

TEST(FlowErrors, HugeAllocation_FailsWithClearError) {
    auto net = chain("t_unary");
    InferRequest r(net);
    // reshape-free way to ask for a huge output: a huge input is itself refused
    try {
        r.set_input("x", HostTensor(DataType::f32, Shape{1}));
        r.infer();
        const size_t max_alloc = env().engine->info().max_alloc_bytes;
        ASSERT_GT(max_alloc, 0u);
        auto buf = env().engine->allocate(max_alloc + 1);
        FAIL() << "allocation beyond the device limit succeeded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot allocate"), std::string::npos) << e.what();
    }
}

TEST(FlowErrors, NoImpl_ErrorNamesOpDeviceAndNode) {
    auto net = chain("t_noimpl");
    InferRequest r(net);
    r.set_input("x", iota({2}));
    try {
        r.infer();
        FAIL();
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("no implementation of op 't_noimpl' on device 'cpu'"), std::string::npos) << m;
        EXPECT_NE(m.find("'n'"), std::string::npos) << m;
    }
}

TEST(FlowErrors, OutOfMemoryInAnImpl_NamesNodeBytesDeviceAndLimits) {
    NetworkOptions opt;
    opt.memory_budget_bytes = 1 << 20;
    auto net = chain("t_oom", opt);
    InferRequest r(net);
    r.set_input("x", iota({6}));
    const std::string m = test::error_of([&] { r.infer(); });
    EXPECT_NE(m.find("out of memory in impl t_oom_cpu_ref"), std::string::npos) << m;
    EXPECT_NE(m.find("node 'n'"), std::string::npos) << m;
    EXPECT_NE(m.find("its outputs need 24 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("request budget 1048576 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("per-tensor cap none"), std::string::npos) << m;
}

TEST(FlowErrors, TensorOverTheByteCap_IsAnErrorBeforeAllocating) {
    NetworkOptions opt;
    opt.max_tensor_bytes = 64;   // 16 f32
    auto net = chain("t_twice", opt);
    InferRequest r(net);
    r.set_input("x", iota({8}));   // 32 bytes in, 64 out: at the cap
    r.infer();
    EXPECT_EQ(r.get_output(0).shape(), Shape({16}));
    // An output over the cap: named with its layout, before any allocation.
    r.set_input("x", iota({9}));
    std::string m = test::error_of([&] { r.infer(); });
    EXPECT_NE(m.find("output 0 would be"), std::string::npos) << m;
    EXPECT_NE(m.find("72 bytes, over the per-tensor cap of 64 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("node 'n'"), std::string::npos) << m;
    // An input over the cap is refused when it is set.
    m = test::error_of([&] { r.set_input("x", iota({17})); });
    EXPECT_NE(m.find("input 0 would be"), std::string::npos) << m;
    EXPECT_NE(m.find("68 bytes, over the per-tensor cap of 64 bytes"), std::string::npos) << m;
    // The request still runs shapes within the cap.
    r.set_input("x", iota({4}));
    r.infer();
    EXPECT_EQ(r.get_output(0).shape(), Shape({8}));
}

TEST(FlowErrors, OutputIndexOfTwentyDigits_IsAnErrorNotAnException) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension()}, DataType::f32));
    p->add_node("n", "t_unary", {"x"});
    p->add_output("n:12345678901234567890");
    const std::string m = test::error_of([&] { p->build(); });
    EXPECT_NE(m.find("output index 12345678901234567890 is out of range"), std::string::npos) << m;
}

// x -> a = x + 1 -> v = flatten(a) (a view); then, in program order,
// d = x - 1 (a buffer from the pool) and out = v + d = 2x: the pool must not
// hand a's buffer to d while v still views it.
std::shared_ptr<Network> view_net(NetworkOptions opt = {}) {
    auto p = std::make_shared<Program>(env().registry, "t");
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    p->add_node("a", "t_unary", {"x"});
    p->add_node("v", "t_view", {"a"});
    p->add_node("d", "t_static_only", {"x"});
    p->add_node("out", "t_add", {"v", "d"});
    p->add_output("out");
    p->build();
    return Network::create(p, env().engine, opt);
}

TEST(FlowViews, LayoutOnlyOpViewsItsInputAndRunsNoKernel) {
    InferRequest r(view_net());
    const int kernels_before = g_view_kernel_runs;
    for (const Shape& s : {Shape{2, 3}, Shape{4, 5}, Shape{4, 5}, Shape{2, 3}, Shape{1, 7}}) {
        SCOPED_TRACE(s.to_string());
        const HostTensor x = iota(s, 0.5f);
        r.set_input("x", x);
        r.infer();
        const HostTensor out = r.get_output(0);
        ASSERT_EQ(out.shape(), Shape({static_cast<int64_t>(x.count())}));
        for (size_t i = 0; i < x.count(); ++i) EXPECT_EQ(out.as<float>()[i], 2 * x.as<float>()[i]) << i;
        EXPECT_EQ(node_counters(r, "v").views, 1u);
        EXPECT_EQ(node_counters(r, "v").executions, 0u);
        for (const NodeStats& ns : r.last_run().nodes) {
            if (ns.node == "v") {
                EXPECT_EQ(ns.impl, "view");
            }
        }
    }
    EXPECT_EQ(g_view_kernel_runs, kernels_before);
}

TEST(FlowViews, WithoutViewsTheKernelRunsWithTheSameResults) {
    NetworkOptions opt;
    opt.views = false;
    InferRequest r(view_net(opt));
    const int kernels_before = g_view_kernel_runs;
    for (const Shape& s : {Shape{2, 3}, Shape{4, 5}}) {
        const HostTensor x = iota(s);
        r.set_input("x", x);
        r.infer();
        const HostTensor out = r.get_output(0);
        for (size_t i = 0; i < x.count(); ++i) EXPECT_EQ(out.as<float>()[i], 2 * x.as<float>()[i]) << i;
        EXPECT_EQ(node_counters(r, "v").views, 0u);
        EXPECT_EQ(node_counters(r, "v").executions, 1u);
    }
    EXPECT_EQ(g_view_kernel_runs, kernels_before + 2);
}
