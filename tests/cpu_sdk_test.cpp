// The cpu op SDK: the engine's thread budget, its parallel loop, and the
// optimised impls' place next to the references.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

EnginePtr cpu_engine(unsigned threads) {
    return test::registry()->create_engine("cpu", EngineConfig{"cpu", false, threads});
}

TEST(CpuEngine, ThreadsComeFromTheConfigElseThePhysicalCores) {
    ::unsetenv("DYNRT_CPU_THREADS");
    EXPECT_EQ(cpu_engine(3)->info().threads, 3u);
    EXPECT_NE(cpu_engine(3)->info().name.find("3 threads"), std::string::npos);
    const unsigned cores = cpu_engine(0)->info().threads;
    EXPECT_GE(cores, 1u);
    EXPECT_LE(cores, std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_FALSE(cpu_engine(1)->info().accelerator);
}

TEST(CpuEngine, DynrtCpuThreadsSetsTheDefaultAndABadValueIsAnError) {
    ::setenv("DYNRT_CPU_THREADS", "3", 1);
    EXPECT_EQ(cpu_engine(0)->info().threads, 3u);
    EXPECT_EQ(cpu_engine(2)->info().threads, 2u) << "the config wins";
    ::setenv("DYNRT_CPU_THREADS", "0", 1);
    EXPECT_THROW(cpu_engine(0), Error);
    ::setenv("DYNRT_CPU_THREADS", "2x", 1);
    EXPECT_THROW(cpu_engine(0), Error);
    ::unsetenv("DYNRT_CPU_THREADS");
}

TEST(CpuEngine, TheDefaultThreadsAreTheCoresOfTheAffinityMask) {
    ::unsetenv("DYNRT_CPU_THREADS");
    cpu_set_t saved;
    ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
    int first = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu)
        if (CPU_ISSET(cpu, &saved)) first = cpu;
    ASSERT_GE(first, 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);   // as `taskset -c N` would
    const unsigned threads = cpu_engine(0)->info().threads;
    ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
    EXPECT_EQ(threads, 1u) << "one allowed CPU: more threads would only take turns on it";
}

// The CLI loads the cpu engine before anything brings OpenMP in, so its
// choice of wait takes effect; the environment's policy wins.
TEST(CpuEngine, OpenMpWaitsPassivelyUnlessTheEnvironmentSetsAPolicy) {
    const std::string model = std::string(DYNRT_SOURCE_DIR) + "/tests/models/decoder_prefill/model.onnx";
    const std::string args = "run " + model + " --shapes 'input_ids=[1,4]' --threads 2";
    const test::CliResult plain = test::run_dynrt(args, "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ");
    ASSERT_EQ(plain.code, 0) << plain.out;
    EXPECT_NE(plain.out.find("host (2 threads, passive wait)"), std::string::npos) << plain.out;
    const test::CliResult active = test::run_dynrt(args, "env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=active ");
    ASSERT_EQ(active.code, 0) << active.out;
    EXPECT_NE(active.out.find("host (2 threads, OMP_WAIT_POLICY=active)"), std::string::npos) << active.out;
}

TEST(CpuThreads, OneCallTakesTheWholeBudgetAndNestedScopesKeepIt) {
    const EnginePtr e = cpu_engine(4);
    const CpuThreads outer(e.get());
    EXPECT_EQ(outer.count(), 4);
    const CpuThreads inner(e.get());
    EXPECT_EQ(inner.count(), 4);
}

TEST(CpuThreads, SmallWorkTakesOneThreadPerChunkOfBytes) {
    const EnginePtr e = cpu_engine(4);
    EXPECT_EQ(CpuThreads(e.get(), 1000).count(), 1);
    EXPECT_EQ(CpuThreads(e.get(), CpuThreads::kBytesPerThread).count(), 2);
    EXPECT_EQ(CpuThreads(e.get(), 100 * CpuThreads::kBytesPerThread).count(), 4);
}

TEST(CpuThreads, CallsRunningAtOnceShareTheBudget) {
    const EnginePtr e = cpu_engine(4);
    std::atomic<int> entered{0}, done{0}, sum{0};
    auto wait_for = [](const std::atomic<int>& n) {
        while (n.load() < 2) std::this_thread::yield();
    };
    auto call = [&] {
        const CpuThreads t(e.get());
        ++entered;
        wait_for(entered);   // both scopes alive at once
        sum += t.count();
        ++done;
        wait_for(done);
    };
    std::thread a(call), b(call);
    a.join();
    b.join();
    // The second call to start sees two running and takes half; the first
    // keeps what it took. Never more than budget + the first's share.
    EXPECT_LE(sum.load(), 4 + 2);
    EXPECT_GE(sum.load(), 2);
    const CpuThreads after(e.get());
    EXPECT_EQ(after.count(), 4) << "a finished call gives its share back";
}

// A scope that plans (oneDNN fixes a primitive's split at its creation) gets
// the whole budget while a request runs on another thread, and takes no
// share from calls running beside it; the thread's OpenMP setting is given
// back when the scope ends.
TEST(CpuThreads, APlanningScopeTakesTheWholeBudgetAndNoShare) {
    const EnginePtr e = cpu_engine(4);
    const int before = omp_get_max_threads();
    std::atomic<int> stage{0};
    std::thread running([&] {
        const CpuThreads t(e.get());
        EXPECT_EQ(t.count(), 4);
        stage = 1;
        while (stage.load() < 2) std::this_thread::yield();
    });
    while (stage.load() < 1) std::this_thread::yield();
    {
        const CpuThreads plan(e.get(), SIZE_MAX, CpuThreads::Share::alone);
        EXPECT_EQ(plan.count(), 4) << "a plan made while a request runs is split for the threads it runs alone";
        EXPECT_EQ(omp_get_max_threads(), 4);
        int beside = 0;
        std::thread([&] { beside = CpuThreads(e.get()).count(); }).join();
        EXPECT_EQ(beside, 2) << "two calls run (the planning scope is none)";
    }
    EXPECT_EQ(omp_get_max_threads(), before);
    stage = 2;
    running.join();
}

TEST(ParallelFor, CoversTheRangeOnceInContiguousChunks) {
    const EnginePtr e = cpu_engine(3);
    const CpuThreads t(e.get());
    for (size_t n : {0u, 1u, 2u, 7u, 1000u, 100001u}) {
        std::vector<std::atomic<int>> hits(n);
        parallel_for(t, n, 10, [&](size_t b, size_t end) {
            ASSERT_LE(b, end);
            for (size_t i = b; i < end; ++i) hits[i]++;
        });
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
}

// The optimised impls rank above the reference, which stays registered as the
// oracle (and the fallback for what they refuse).
TEST(CpuImpls, OptimisedImplsRankAboveTheReference) {
    for (const char* op : {"fully_connected", "gemm", "activation", "eltwise", "softmax"}) {
        const auto impls = test::registry()->impls(op, "cpu");
        ASSERT_GE(impls.size(), 3u) << op;
        EXPECT_FALSE(impls.front()->entry.reference) << op << ": first is " << impls.front()->entry.name;
        EXPECT_TRUE(impls.back()->entry.reference) << op << ": last is " << impls.back()->entry.name;
    }
}

}   // namespace
}   // namespace dynrt
