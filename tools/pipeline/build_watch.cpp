#include "build_watch.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace dynrt::pipeline {

OclBuildWatch::OclBuildWatch(OclDevice* device, bool quiet)
    : device_(quiet ? nullptr : device), tty_(::isatty(STDERR_FILENO) != 0) {
    if (device_) thread_ = std::thread([this] { watch(); });
}

OclBuildWatch::~OclBuildWatch() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void OclBuildWatch::watch() {
    using Clock = std::chrono::steady_clock;
    const size_t at_start = device_->build_stats().source_builds;
    size_t last = at_start;
    Clock::time_point last_build = Clock::now(), building_since{}, printed{};
    bool building = false, shown = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
        const auto now = Clock::now();
        const size_t built = device_->build_stats().source_builds;
        if (built != last) {
            if (!building) building_since = last_build;
            building = true;
            last = built;
            last_build = now;
        } else if (building && now - last_build > std::chrono::seconds(1)) {
            building = false;   // a pause: the runs go on from cached programs
        }
        if (!building || now - building_since < std::chrono::seconds(1)) continue;
        const double s = std::chrono::duration<double>(now - building_since).count();
        if (tty_) {
            std::fprintf(stderr, "\r\033[Kdynrt: building OpenCL programs: %zu built so far, %.0f s", built - at_start,
                         s);
            shown = true;
        } else if (printed == Clock::time_point{} || now - printed >= std::chrono::seconds(10)) {
            std::fprintf(stderr, "dynrt: building OpenCL programs: %zu built so far, %.0f s\n", built - at_start, s);
            printed = now;
        }
        std::fflush(stderr);
    }
    if (shown) std::fprintf(stderr, "\r\033[K");
}

}   // namespace dynrt::pipeline
