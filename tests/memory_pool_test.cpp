// The per-request memory pool: size classes, the 50 % rule, sharing between
// holders whose lifetimes do not overlap, trimming, the budget error (nothing
// leaked), and the network-level effects: primitives with disjoint lifetimes
// share a buffer, steady state allocates nothing, results stay right.
#include <gtest/gtest.h>

#include <thread>

#include "dynrt/error.hpp"
#include "dynrt/memory_pool.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

std::vector<MemoryPool::Lifetime> lifetimes(std::initializer_list<std::pair<size_t, size_t>> ranges) {
    std::vector<MemoryPool::Lifetime> v;
    for (const auto& r : ranges) v.push_back(MemoryPool::Lifetime{r.first, r.second, false});
    return v;
}

}   // namespace

TEST(MemoryPool, SizeClasses_RoundUpByAtMostAnEighth) {
    EXPECT_EQ(MemoryPool::size_class(1), 256u);
    EXPECT_EQ(MemoryPool::size_class(256), 256u);
    EXPECT_EQ(MemoryPool::size_class(257), 288u);     // 256 + 256/8
    EXPECT_EQ(MemoryPool::size_class(1000), 1024u);   // 512 + 8 * 64
    EXPECT_EQ(MemoryPool::size_class(1024), 1024u);
    for (size_t n : {300u, 5000u, 70000u, 1000001u}) {
        EXPECT_GE(MemoryPool::size_class(n), n);
        EXPECT_LE(MemoryPool::size_class(n) * 8, n * 9);
    }
}

TEST(MemoryPool, FreedBuffer_ReusedOnlyAboveHalfItsSize) {
    MemoryPool pool(test::engine(), {});
    pool.set_lifetimes(lifetimes({{0, 0}, {1, 1}}));
    {
        auto g = pool.acquire(1000, 0, true);   // class 1024
        EXPECT_FALSE(g.hit);
    }
    EXPECT_EQ(pool.free_bytes(), 1024u);
    // 400 -> class 416: 2 * 416 <= 1024, so a dynamic request does not take it.
    auto small = pool.acquire(400, 1, true);
    EXPECT_FALSE(small.hit);
    // 600 -> class 640 > 512: taken.
    auto big = pool.acquire(600, 1, true);
    EXPECT_TRUE(big.hit);
    EXPECT_EQ(big.buffer->size(), 1024u);
    EXPECT_EQ(pool.hits(), 1u);
    EXPECT_EQ(pool.misses(), 2u);
}

TEST(MemoryPool, DisjointLifetimes_ShareOverlappingDoNot) {
    MemoryPool pool(test::engine(), {});
    pool.set_lifetimes(lifetimes({{0, 1}, {2, 3}, {1, 2}}));
    auto a = pool.acquire(512, 0, false);
    auto b = pool.acquire(512, 1, false);   // [2,3] after [0,1]: shares a's buffer
    auto c = pool.acquire(512, 2, false);   // [1,2] overlaps both
    EXPECT_EQ(a.buffer.get(), b.buffer.get());
    EXPECT_NE(a.buffer.get(), c.buffer.get());
    EXPECT_TRUE(b.hit);
    EXPECT_EQ(pool.used_bytes(), 1024u);
}

TEST(MemoryPool, PinnedHolder_SharesWithNobody) {
    MemoryPool pool(test::engine(), {});
    std::vector<MemoryPool::Lifetime> lt = lifetimes({{0, 1}, {2, 3}});
    lt[1].pinned = true;
    pool.set_lifetimes(lt);
    auto a = pool.acquire(512, 0, false);
    auto b = pool.acquire(512, 1, false);
    EXPECT_NE(a.buffer.get(), b.buffer.get());
}

TEST(MemoryPool, EndRun_FreesBuffersUnusedForAWholeRun) {
    MemoryPool pool(test::engine(), {});
    { auto g = pool.acquire(4096, 0, true); }
    pool.end_run();   // freed during this run: kept for the next
    EXPECT_EQ(pool.used_bytes(), 4096u);
    pool.end_run();   // nobody took it during a whole run
    EXPECT_EQ(pool.used_bytes(), 0u);
}

TEST(MemoryPool, OverBudget_ClearErrorNothingAllocated) {
    EnginePtr e = test::engine();
    const size_t before = e->used_bytes();
    {
        MemoryPool pool(e, MemoryPool::Options{true, 4096});
        auto a = pool.acquire(3000, 0, false);
        try {
            pool.acquire(2000, 1, false);
            FAIL() << "expected an error";
        } catch (const Error& err) {
            EXPECT_NE(std::string(err.what()).find("memory budget exceeded"), std::string::npos) << err.what();
            EXPECT_NE(std::string(err.what()).find("4096"), std::string::npos) << err.what();
        }
        EXPECT_EQ(pool.used_bytes(), MemoryPool::size_class(3000));
        EXPECT_EQ(e->used_bytes(), before + MemoryPool::size_class(3000));
    }
    EXPECT_EQ(e->used_bytes(), before);
}

namespace {

// x -> a -> b -> c -> d (relu, relu(x)+..., static shapes): a and c, b and d
// have disjoint lifetimes.
// The chain's value computed on the host in the same float order.
float seven(float x) {
    const float a = x + x, b = a + x, c = b + b;
    return c + x;
}

std::shared_ptr<Network> chain(NetworkOptions opt, PartialShape shape = PartialShape{64}, EnginePtr eng = nullptr) {
    // Four primitives with their own buffers (fused, a+b and c+d would share one each).
    opt.fusion = false;
    auto p = std::make_shared<Program>(test::registry(), "chain");
    p->add_input("x", Layout(shape, DataType::f32));
    Attributes add;
    add.set("mode", std::string("add"));
    p->add_node("a", "eltwise", {"x", "x"}, add);   // 2x
    p->add_node("b", "eltwise", {"a", "x"}, add);   // 3x
    p->add_node("c", "eltwise", {"b", "b"}, add);   // 6x
    p->add_node("d", "eltwise", {"c", "x"}, add);   // 7x
    p->add_output("d");
    p->build();
    return Network::create(p, eng ? eng : test::engine(), opt);
}

// Sizes that come back: after the first round every buffer comes from the pool.
void revisited_shapes(const EnginePtr& eng) {
    NetworkOptions opt;
    opt.prealloc = ShapePredictor::parse_settings("0 0 0 1.0");   // exact sizes: the pool does the work
    auto net = chain(opt, PartialShape{Dimension()}, eng);
    InferRequest r(net);
    const int64_t sizes[] = {300, 200, 300, 250, 300, 200};
    uint64_t misses_late = 0;
    const uint64_t allocations_before = net->engine().allocation_count();
    uint64_t allocations_first_round = 0;
    for (int rep = 0; rep < 3; ++rep) {
        for (int64_t n : sizes) {
            const HostTensor x = test::random_tensor(DataType::f32, {n}, uint64_t(n));
            r.set_input("x", x);
            r.infer();
            for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(r.output(0).as<float>()[i], 7.f * x.as<float>()[i]);
            if (rep > 0) misses_late += r.last_run().totals.pool_misses;
        }
        if (rep == 0) allocations_first_round = net->engine().allocation_count();
    }
    EXPECT_EQ(misses_late, 0u);
    EXPECT_GT(r.cumulative().pool_hits, 0u);
    EXPECT_GT(allocations_first_round, allocations_before);
    // Nor does the device see an allocation after the first round.
    EXPECT_EQ(net->engine().allocation_count(), allocations_first_round);
}

}   // namespace

TEST(MemoryPool, Network_DisjointPrimitivesShareAndResultsStayRight) {
    for (bool pool : {true, false}) {
        NetworkOptions opt;
        opt.memory_pool = pool;
        auto net = chain(opt);
        InferRequest r(net);
        const HostTensor x = test::random_tensor(DataType::f32, {64}, 5);
        r.set_input("x", x);
        r.infer();
        for (size_t i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(r.output(0).as<float>()[i], 7.f * x.as<float>()[i]);
        const bool shared = r.inst("a").output_memory()->buffer() == r.inst("c").output_memory()->buffer();
        EXPECT_EQ(shared, pool);
        EXPECT_NE(r.inst("b").output_memory()->buffer(), r.inst("c").output_memory()->buffer());
        EXPECT_EQ(r.last_run().totals.pool_hits, pool ? 1u : 0u);
    }
}

TEST(MemoryPool, RevisitedShapes_NoDeviceAllocationInSteadyState) { revisited_shapes(test::engine()); }

TEST(MemoryPoolOcl, RevisitedShapes_NoDeviceAllocationInSteadyState) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    revisited_shapes(eng);
}

TEST(MemoryPool, NetworkOverBudget_ErrorNamesNodeAndNothingLeaks) {
    EnginePtr e = test::engine();
    NetworkOptions opt;
    opt.memory_budget_bytes = 2048;
    auto net = chain(opt, PartialShape{Dimension()});
    const size_t before = net->engine().used_bytes();
    {
        InferRequest r(net);
        r.set_input("x", test::random_tensor(DataType::f32, {100}, 1));
        r.infer();   // fits: x, a (shared with c), b, d: 4 x 416 bytes
        try {
            // The input's own buffer is the first that does not fit.
            r.set_input("x", test::random_tensor(DataType::f32, {1000}, 1));
            r.infer();
            FAIL() << "expected an error";
        } catch (const Error& err) {
            EXPECT_NE(std::string(err.what()).find("memory budget exceeded"), std::string::npos) << err.what();
            EXPECT_FALSE(err.context().node.empty());
        }
        EXPECT_LE(r.memory_pool().used_bytes(), 2048u);
    }
    EXPECT_EQ(net->engine().used_bytes(), before);
}

TEST(MemoryPool, TwoRequestsOnTwoThreads_MatchSequentialResults) {
    auto net = chain(NetworkOptions{}, PartialShape{Dimension()});
    auto work = [&](uint64_t seed, bool* ok) {
        InferRequest r(net);
        bool good = true;
        for (int64_t n = 1; n <= 200; n += 7) {
            const HostTensor x = test::random_tensor(DataType::f32, {n}, seed + uint64_t(n));
            r.set_input("x", x);
            r.infer();
            for (int64_t i = 0; i < n; ++i) good = good && r.output(0).as<float>()[i] == seven(x.as<float>()[i]);
        }
        *ok = good;
    };
    bool ok1 = false, ok2 = false;
    std::thread t1(work, 1, &ok1), t2(work, 1000, &ok2);
    t1.join();
    t2.join();
    EXPECT_TRUE(ok1);
    EXPECT_TRUE(ok2);
}
