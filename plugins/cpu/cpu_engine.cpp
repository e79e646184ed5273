// The cpu device module: an Engine over host memory.
//
// Buffers are 64-byte aligned heap blocks (a cache line, and wide enough for any
// SIMD load a host impl may use); map() hands out the storage itself, so host
// impls run on buffers without copies. Work runs synchronously on the calling
// thread, so Stream::finish() has nothing to wait for; the optimised impls
// spread one call over DeviceInfo::threads threads (the cpu op SDK,
// dynrt/cpu_parallel.hpp): `--threads`, else the physical cores.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>

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

// Physical cores: distinct (package, core) pairs of the online CPUs, so a
// hyper-threaded machine counts each core once (two threads on one core share
// its vector units, which is what the compute loops use). The hardware thread
// count when sysfs does not say.
unsigned physical_cores() {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    std::set<std::pair<int, int>> cores;
    for (unsigned cpu = 0; cpu < hw; ++cpu) {
        const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream pkg(dir + "physical_package_id"), core(dir + "core_id");
        int p = -1, c = -1;
        if (!(pkg >> p) || !(core >> c)) return hw;
        cores.insert({p, c});
    }
    return cores.empty() ? hw : static_cast<unsigned>(cores.size());
}

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
        info_.name = "host (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
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
