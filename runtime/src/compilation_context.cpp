#include "dynrt/compilation_context.hpp"

namespace dynrt {

CompilationContext::CompilationContext(size_t threads, size_t max_queued) : max_queued_(max_queued ? max_queued : 1) {
    if (threads == 0) threads = 1;
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { worker(); });
}

CompilationContext::~CompilationContext() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        queue_.clear();
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

bool CompilationContext::push(const std::string& key, std::function<void()> task) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_ || !pending_.insert(key).second) return false;
        if (queue_.size() >= max_queued_) {
            pending_.erase(queue_.front().first);
            queue_.pop_front();
            ++dropped_;
        }
        queue_.emplace_back(key, std::move(task));
    }
    cv_.notify_one();
    return true;
}

void CompilationContext::wait_all() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_cv_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

void CompilationContext::cancel_pending() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& item : queue_) pending_.erase(item.first);
        dropped_ += queue_.size();
        queue_.clear();
    }
    idle_cv_.notify_all();
}

size_t CompilationContext::dropped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
}

size_t CompilationContext::completed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_;
}

size_t CompilationContext::failed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed_;
}

void CompilationContext::worker() {
    for (;;) {
        std::pair<std::string, std::function<void()>> item;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (stop_ && queue_.empty()) return;
            // Newest first: see the header.
            item = std::move(queue_.back());
            queue_.pop_back();
            ++running_;
        }
        bool ok = true;
        try {
            item.second();
        } catch (...) {
            // A background build that fails leaves the dynamic impl in charge; the
            // synchronous path reports the error if it is ever taken.
            ok = false;
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --running_;
            ++completed_;
            if (!ok) ++failed_;
            pending_.erase(item.first);
        }
        idle_cv_.notify_all();
    }
}

}   // namespace dynrt
