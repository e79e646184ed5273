// The cpu engine's compute threads, shared by every optimised cpu impl.
//
// The engine has a thread budget (DeviceInfo::threads: `--threads`, else the
// physical cores). One call of an optimised impl spreads its work over the
// budget; when several requests run at once, each call takes an equal share
// (budget / calls running, at least one), so two requests on two cores run
// one thread each instead of four threads fighting over two cores. oneDNN's
// primitives and parallel_for() run on the same OpenMP threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace dynrt {

class Engine;

// The threads one call may use, for as long as it lives. Nested scopes on one
// thread (an impl calling another) keep the outer share. `work_bytes` (the
// bytes the call reads and writes) caps the count at one thread per
// kBytesPerThread: waking a second thread for a small tensor costs more than
// it saves, and far more when another process holds that core.
//
// A scope that makes a plan for later runs (a oneDNN primitive fixes its
// parallel split when it is created) takes Share::alone: the count a call
// gets when it runs by itself, without counting as a running call. A plan
// made on a build thread while a request runs on another would otherwise be
// split for one thread and run on one thread from then on.
class CpuThreads {
public:
    static constexpr size_t kBytesPerThread = size_t{256} << 10;
    enum class Share { running, alone };
    explicit CpuThreads(const Engine* engine, size_t work_bytes = SIZE_MAX, Share share = Share::running);
    ~CpuThreads();
    CpuThreads(const CpuThreads&) = delete;
    CpuThreads& operator=(const CpuThreads&) = delete;
    int count() const { return count_; }

private:
    int count_ = 1;
    bool outer_ = false;
    bool counted_ = false;   // holds a place in the running calls
    int previous_max_ = 0;   // this thread's OpenMP max-threads before the scope
};

// body(begin, end) over [0, n) in chunks of at least `grain` items, on the
// calling scope's threads (one chunk per thread, contiguous; a call with
// fewer than two chunks runs inline).
void parallel_for(const CpuThreads& threads, size_t n, size_t grain,
                  const std::function<void(size_t begin, size_t end)>& body);

}   // namespace dynrt
