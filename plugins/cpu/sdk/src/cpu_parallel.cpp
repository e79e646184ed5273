#include "dynrt/cpu_parallel.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>

#include "dynrt/memory.hpp"

namespace dynrt {

namespace {

// Calls running on any cpu engine of the process: the shares are taken from
// one budget, since every engine of the process computes on the same cores.
std::atomic<int> g_running{0};
thread_local int t_share = 0;   // the outer scope's share on this thread (0: none)

}   // namespace

CpuThreads::CpuThreads(const Engine* engine, size_t work_bytes, Share share) {
    if (t_share > 0) {
        count_ = t_share;
        return;
    }
    outer_ = true;
    const int budget = engine && engine->info().threads ? static_cast<int>(engine->info().threads) : 1;
    int running = 1;
    if (share == Share::running) {
        counted_ = true;
        running = g_running.fetch_add(1) + 1;
    }
    const size_t by_work = work_bytes / kBytesPerThread + 1;
    count_ = std::max(1, budget / running);
    if (by_work < static_cast<size_t>(count_)) count_ = static_cast<int>(by_work);
    t_share = count_;
    // oneDNN's OpenMP runtime sizes its parallel regions (and a primitive
    // its split, at creation) from this thread's max-threads setting; the
    // scope gives the thread's setting back when it ends.
    previous_max_ = omp_get_max_threads();
    omp_set_num_threads(count_);
}

CpuThreads::~CpuThreads() {
    if (!outer_) return;
    t_share = 0;
    omp_set_num_threads(previous_max_);
    if (counted_) g_running.fetch_sub(1);
}

void parallel_for(const CpuThreads& threads, size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
    if (n == 0) return;
    grain = std::max<size_t>(1, grain);
    const size_t chunks = std::min<size_t>(static_cast<size_t>(threads.count()), (n + grain - 1) / grain);
    if (chunks < 2) {
        body(0, n);
        return;
    }
    const size_t step = (n + chunks - 1) / chunks;
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static, 1)
    for (size_t c = 0; c < chunks; ++c) {
        const size_t begin = c * step;
        const size_t end = std::min(n, begin + step);
        if (begin < end) body(begin, end);
    }
}

}   // namespace dynrt
