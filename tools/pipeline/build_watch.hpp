// While `dynrt run` runs on OpenCL, one line on stderr says that kernels are
// being built (a cold first run on a GPU builds for tens of seconds, and the
// driver's own output is a few "N warnings generated." lines at most):
// "dynrt: building OpenCL programs: 37 built so far, 12 s". Nothing is printed
// while no program is built for more than a second. On a terminal the line
// is rewritten in place and cleared at the end; elsewhere one line every 10 s.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "dynrt/ocl_api.hpp"

namespace dynrt::pipeline {

class OclBuildWatch {
public:
    // `device` nullptr (not OpenCL) or `quiet`: does nothing.
    OclBuildWatch(OclDevice* device, bool quiet);
    ~OclBuildWatch();   // stops the watch and clears its line
    OclBuildWatch(const OclBuildWatch&) = delete;
    OclBuildWatch& operator=(const OclBuildWatch&) = delete;

private:
    void watch();

    OclDevice* device_;
    bool tty_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

}   // namespace dynrt::pipeline
