// CompilationContext: a small thread pool that builds static impls in the
// background while a shape-agnostic impl serves.
//
// push() queues a task under a key; a key already queued or running is merged
// (not queued twice). Tasks are plain callables; the caller checks the impl cache
// again inside the task. The destructor drops queued tasks and joins running ones.
//
// The queue is bounded and served newest first. A shape that keeps changing (a
// growing sequence) asks for a build on every run, far faster than builds
// finish; the newest shape is the likeliest to come again, so workers take the
// newest request and, when `max_queued` requests wait, the oldest one is dropped
// (counted in dropped()). Background work then stays bounded by what the pool
// can do, and nothing waits on builds that would never be used.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dynrt {

class CompilationContext {
public:
    explicit CompilationContext(size_t threads, size_t max_queued = 16);
    ~CompilationContext();
    CompilationContext(const CompilationContext&) = delete;
    CompilationContext& operator=(const CompilationContext&) = delete;

    // False when the key was already queued or running (merged).
    bool push(const std::string& key, std::function<void()> task);
    void wait_all();            // until nothing is queued or running
    void cancel_pending();      // drops queued tasks (running ones finish)
    size_t completed() const;   // tasks finished (including failed ones)
    size_t failed() const;      // tasks that threw
    size_t dropped() const;     // tasks dropped unrun (queue full, or cancelled)

private:
    void worker();

    mutable std::mutex mutex_;
    std::condition_variable cv_, idle_cv_;
    std::deque<std::pair<std::string, std::function<void()>>> queue_;
    std::set<std::string> pending_;   // queued or running
    size_t max_queued_;
    size_t running_ = 0, completed_ = 0, failed_ = 0, dropped_ = 0;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

}   // namespace dynrt
