// CompilationContext: merged keys, a bounded queue served newest first, and
// cancellation of queued builds. One worker is held busy by a blocking task so
// that what is queued behind it is deterministic.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "dynrt/compilation_context.hpp"

using namespace dynrt;

namespace {

// A task that runs until release() is called, and says when it has started.
class Blocker {
public:
    std::function<void()> task() {
        return [this] {
            std::unique_lock<std::mutex> lock(m_);
            started_ = true;
            cv_.notify_all();
            cv_.wait(lock, [this] { return released_; });
        };
    }
    void wait_started() {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return started_; });
    }
    void release() {
        std::lock_guard<std::mutex> lock(m_);
        released_ = true;
        cv_.notify_all();
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool started_ = false, released_ = false;
};

}   // namespace

TEST(CompilationContext, FullQueue_DropsTheOldestAndRunsTheNewestFirst) {
    CompilationContext cc(1, 4);
    Blocker blocker;
    ASSERT_TRUE(cc.push("blocker", blocker.task()));
    blocker.wait_started();
    std::mutex m;
    std::vector<std::string> order;
    for (int i = 0; i < 10; ++i) {
        const std::string key = "k" + std::to_string(i);
        EXPECT_TRUE(cc.push(key, [&, key] {
            std::lock_guard<std::mutex> lock(m);
            order.push_back(key);
        }));
    }
    EXPECT_EQ(cc.dropped(), 6u);   // k0..k5 made room for k6..k9
    blocker.release();
    cc.wait_all();
    EXPECT_EQ(order, (std::vector<std::string>{"k9", "k8", "k7", "k6"}));
    EXPECT_EQ(cc.completed(), 5u);
    // A dropped key may be queued again.
    EXPECT_TRUE(cc.push("k0", [] {}));
    cc.wait_all();
    EXPECT_EQ(cc.completed(), 6u);
}

TEST(CompilationContext, SameKeyQueuedOrRunning_IsMerged) {
    CompilationContext cc(1, 4);
    Blocker blocker;
    ASSERT_TRUE(cc.push("a", blocker.task()));
    blocker.wait_started();
    EXPECT_FALSE(cc.push("a", [] {}));   // running
    std::atomic<int> runs{0};
    EXPECT_TRUE(cc.push("b", [&] { ++runs; }));
    EXPECT_FALSE(cc.push("b", [&] { ++runs; }));   // queued
    blocker.release();
    cc.wait_all();
    EXPECT_EQ(runs.load(), 1);
    EXPECT_EQ(cc.dropped(), 0u);
}

TEST(CompilationContext, CancelPending_DropsQueuedTasksOnly) {
    CompilationContext cc(1, 16);
    Blocker blocker;
    ASSERT_TRUE(cc.push("running", blocker.task()));
    blocker.wait_started();
    std::atomic<int> runs{0};
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(cc.push("q" + std::to_string(i), [&] { ++runs; }));
    cc.cancel_pending();
    EXPECT_EQ(cc.dropped(), 3u);
    blocker.release();
    cc.wait_all();
    EXPECT_EQ(runs.load(), 0);
    EXPECT_EQ(cc.completed(), 1u);   // the running task finished
}
