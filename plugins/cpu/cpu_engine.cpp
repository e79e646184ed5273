// The cpu device module: an Engine over host memory.
//
// Buffers are 64-byte aligned heap blocks (a cache line, and wide enough for any
// SIMD load a host impl may use); map() hands out the storage itself, so host
// impls run on buffers without copies. Work runs synchronously on the calling
// thread, so Stream::finish() has nothing to wait for; the optimised impls
// spread one call over DeviceInfo::threads threads (the cpu op SDK,
// dynrt/cpu_parallel.hpp): `--threads`, else the physical cores this process
// may run on. Their OpenMP threads wait passively (see openmp_wait()).
#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/registry.hpp"

namespace {

using namespace dynrt;

constexpr size_t kAlignment = 64;

class CpuStream : public Stream {
public:
    void finish() override {}
};

class CpuBuffer : public Buffer {
public:
    CpuBuffer(size_t size, std::shared_ptr<MemoryTracker> tracker) : Buffer(size, std::move(tracker)) {
        // aligned_alloc wants a multiple of the alignment.
        const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
        data_ = std::aligned_alloc(kAlignment, rounded);
        if (!data_) throw std::bad_alloc();
    }
    ~CpuBuffer() override { std::free(data_); }

    void* map(Stream&) override { return data_; }
    void unmap(Stream&) override {}
    void write(Stream&, const void* src, size_t offset, size_t bytes) override {
        check(offset, bytes, "write");
        if (bytes) std::memcpy(static_cast<char*>(data_) + offset, src, bytes);
    }
    void read(Stream&, void* dst, size_t offset, size_t bytes) override {
        check(offset, bytes, "read");
        if (bytes) std::memcpy(dst, static_cast<const char*>(data_) + offset, bytes);
    }

private:
    void check(size_t offset, size_t bytes, const char* what) const {
        if (offset > size() || bytes > size() - offset)
            throw Error(std::string("cpu buffer ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(offset) + " is outside the buffer of " + std::to_string(size()) + " bytes");
    }
    void* data_ = nullptr;
};

size_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 0;   // unknown
    return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

// The CPUs this process may run on: its affinity mask (taskset, a
// container's cpuset), all online CPUs when the mask cannot be read.
std::vector<unsigned> allowed_cpus() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    std::vector<unsigned> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
    if (cpus.empty())
        for (unsigned cpu = 0; cpu < hw; ++cpu) cpus.push_back(cpu);
    return cpus;
}

// A cgroup v2 CPU quota ("200000 100000" in cpu.max: two CPUs' worth),
// rounded up; 0 when there is none.
unsigned cgroup_cpu_quota() {
    std::ifstream f("/sys/fs/cgroup/cpu.max");
    std::string quota;
    double period = 0;
    if (!(f >> quota >> period) || quota == "max" || period <= 0) return 0;
    char* end = nullptr;
    const double q = std::strtod(quota.c_str(), &end);
    if (end == quota.c_str() || q <= 0) return 0;
    return static_cast<unsigned>(std::ceil(q / period));
}

// Physical cores among the allowed CPUs: distinct (package, core) pairs, so
// a hyper-threaded machine counts each core once (two threads on one core
// share its vector units, which is what the compute loops use), capped by a
// cgroup quota. Threads past these would only take turns on the same cores.
// The allowed CPU count when sysfs does not say.
unsigned physical_cores() {
    const std::vector<unsigned> cpus = allowed_cpus();
    std::set<std::pair<int, int>> cores;
    bool topology = true;
    for (unsigned cpu : cpus) {
        const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream pkg(dir + "physical_package_id"), core(dir + "core_id");
        int p = -1, c = -1;
        if (!(pkg >> p) || !(core >> c)) {
            topology = false;
            break;
        }
        cores.insert({p, c});
    }
    unsigned n = topology && !cores.empty() ? static_cast<unsigned>(cores.size()) : static_cast<unsigned>(cpus.size());
    if (const unsigned quota = cgroup_cpu_quota()) n = std::min(n, quota);
    return std::max(1u, n);
}

// How the OpenMP threads of the optimised impls wait between parallel
// regions. OpenMP's default spins for a while (libgomp: 300,000 rounds) before
// it sleeps; when other processes keep the cores busy, a spinning thread
// takes the time slice that the thread holding the rest of the work needs,
// and a 0.25 ms run takes 30 ms at the 90th percentile (docs/performance.md,
// "Threads under load"). So unless the environment sets a policy
// (OMP_WAIT_POLICY, GOMP_SPINCOUNT), the engine asks for a passive wait.
// OpenMP reads it once, when its library loads: after this module, since the
// op modules that bring it in load after it (a folder's modules load in name
// order). Where OpenMP is in the process already (an application linked
// with it), its own setting stays, and the engine's name says so.
std::string openmp_wait() {
    for (const char* var : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"})
        if (const char* v = std::getenv(var)) return std::string(var) + "=" + v;
    for (const char* lib : {"libgomp.so.1", "libomp.so.5", "libomp.so"}) {
        if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) {
            dlclose(h);
            return "OpenMP's own wait";
        }
    }
    setenv("OMP_WAIT_POLICY", "passive", 0);
    return "passive wait";
}

// Decided when the module loads, before any op module brings OpenMP in.
const std::string kOpenmpWait = openmp_wait();

// The default when the config names none: DYNRT_CPU_THREADS (1..1024), else
// the physical cores.
unsigned default_threads() {
    if (const char* env = std::getenv("DYNRT_CPU_THREADS")) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(env, &end, 10);
        if (end != env && *end == '\0' && n >= 1 && n <= 1024) return static_cast<unsigned>(n);
        throw Error(std::string("DYNRT_CPU_THREADS must be an integer in 1..1024, got '") + env + "'");
    }
    return physical_cores();
}

class CpuEngine : public Engine {
public:
    explicit CpuEngine(const EngineConfig& cfg) {
        info_.type = "cpu";
        const unsigned threads = cfg.threads ? cfg.threads : default_threads();
        info_.threads = threads;
        info_.name = "host (" + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
                     (threads > 1 ? ", " + kOpenmpWait : std::string()) + ")";
        info_.global_mem_bytes = physical_memory();
        info_.max_alloc_bytes = info_.global_mem_bytes;
    }
    const DeviceInfo& info() const override { return info_; }
    std::shared_ptr<Stream> create_stream() override { return std::make_shared<CpuStream>(); }

protected:
    std::shared_ptr<Buffer> do_allocate(size_t bytes) override { return std::make_shared<CpuBuffer>(bytes, tracker()); }

private:
    DeviceInfo info_;
};

void register_cpu(ModuleRegistrar& registrar) {
    registrar.add_engine("cpu", [](const EngineConfig& cfg) -> EnginePtr { return std::make_shared<CpuEngine>(cfg); });
}

}   // namespace

DYNRT_MODULE("cpu", register_cpu)
