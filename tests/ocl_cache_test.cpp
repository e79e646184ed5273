// The OpenCL binary cache against hostile or broken entries: a FIFO, a link to
// /dev/zero, a file over the size cap, and an entry whose header and checksum
// are right but whose binary is garbage. Each is rejected (counted in
// OclBuildStats::disk_cache_rejects, logged when verbose), the program is built
// from source, the kernel gives correct results and the entry is rewritten as
// a good regular file. Nothing blocks or reads without bound. Skips without an
// OpenCL platform.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/registry.hpp"

namespace fs = std::filesystem;
using namespace dynrt;

namespace {

// The size cap of a cache entry (kMaxCacheEntryBytes in the ocl module).
constexpr uint64_t kCapBytes = uint64_t(64) << 20;

std::string module_path() {
    const char* env = std::getenv("DYNRT_MODULE_PATH");
    std::string dir = env && *env ? std::string(env).substr(0, std::string(env).find(':')) : DYNRT_TEST_MODULE_DIR;
    return dir + "/libdynrt_ocl.so";
}

Registry* ocl_registry() {
    static std::unique_ptr<Registry> reg = [] {
        auto r = std::make_unique<Registry>();
        if (fs::exists(module_path())) ModuleLoader::load_file(*r, module_path());
        return r;
    }();
    return reg->has_engine("ocl") ? reg.get() : nullptr;
}

EnginePtr make_engine(bool verbose = false) {
    EngineConfig cfg;
    cfg.device = "ocl";
    cfg.verbose = verbose;
    return ocl_registry()->create_engine("ocl", cfg);
}

const char* kScale = R"CL(
__kernel void scale(__global const float* a, __global float* out) {
    const size_t i = get_global_id(0);
    if (i < N) out[i] = 3.0f * a[i] + 1.0f;
}
)CL";

// The on-disk entry format (ocl_program_cache.cpp): magic, u32 version, u32
// identity length, identity, u64 binary length, u64 FNV-1a of the binary, binary.
uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

class OclCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!ocl_registry()) GTEST_SKIP() << "the ocl module is not built (no OpenCL SDK)";
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("dynrt-ocl-cache-test-" + std::to_string(getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        setenv("DYNRT_CACHE_DIR", dir_.c_str(), 1);
        setenv("DYNRT_OCL_BINARY_CACHE", "on", 1);   // on every driver (auto leaves it off on PoCL)
        try {
            engine_ = make_engine();
        } catch (const Error& e) {
            if (std::string(e.what()).find("no OpenCL platform") != std::string::npos) GTEST_SKIP() << e.what();
            throw;
        }
        // A first build writes the one entry the tests then replace.
        run_scale(*engine_);
        const OclBuildStats s = OclDevice::from(*engine_)->build_stats();
        ASSERT_EQ(s.source_builds, 1u);
        ASSERT_EQ(s.disk_cache_writes, 1u);
        entry_ = only_entry();
        ASSERT_FALSE(entry_.empty());
    }
    void TearDown() override {
        engine_.reset();
        unsetenv("DYNRT_OCL_BINARY_CACHE");
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    fs::path only_entry() const {
        std::vector<fs::path> files;
        for (const auto& f : fs::directory_iterator(OclDevice::from(*engine_)->cache_dir()))
            if (f.path().extension() == ".clbin") files.push_back(f.path());
        EXPECT_EQ(files.size(), 1u);
        return files.empty() ? fs::path() : files[0];
    }

    // Builds and runs `scale` on 37 elements and checks every one.
    static void run_scale(Engine& e) {
        constexpr size_t n = 37;
        OclDevice* dev = OclDevice::from(e);
        auto stream = e.create_stream();
        auto kernel = dev->build_kernel(kScale, "scale", JitDefines{{"N", std::to_string(n)}});
        std::vector<float> a(n);
        for (size_t i = 0; i < n; ++i) a[i] = float(i) - 11.0f;
        const Layout l(Shape{int64_t(n)}, DataType::f32);
        auto ba = e.allocate(n * 4), bo = e.allocate(n * 4);
        ba->write(*stream, a.data(), 0, n * 4);
        Memory ma(ba, l), mo(bo, l);
        const size_t work[3] = {n, 1, 1};
        dev->launch(*stream, *kernel, {OclArg::mem(ma), OclArg::mem(mo)}, dispatch_for(work, 1, dev->limits()));
        stream->finish();
        std::vector<float> out(n);
        bo->read(*stream, out.data(), 0, n * 4);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 3.0f * a[i] + 1.0f) << "element " << i;
    }

    // A fresh engine (a new process, as far as the cache can tell) builds the
    // program again; returns its stats and what it logged.
    OclBuildStats rebuild(std::string* log = nullptr) {
        ::testing::internal::CaptureStderr();
        auto e = make_engine(true);
        run_scale(*e);
        const std::string err = ::testing::internal::GetCapturedStderr();
        if (log) *log = err;
        return OclDevice::from(*e)->build_stats();
    }

    // After a rejection: rebuilt from source, the entry rewritten as a regular
    // file, and a next engine loads it from disk.
    void expect_rebuilt_and_rewritten(const OclBuildStats& s) {
        EXPECT_EQ(s.disk_cache_rejects, 1u);
        EXPECT_EQ(s.disk_cache_hits, 0u);
        EXPECT_EQ(s.source_builds, 1u);
        EXPECT_EQ(s.disk_cache_writes, 1u);
        struct stat st {};
        ASSERT_EQ(::lstat(entry_.c_str(), &st), 0);
        EXPECT_TRUE(S_ISREG(st.st_mode));
        const OclBuildStats again = rebuild();
        EXPECT_EQ(again.disk_cache_hits, 1u);
        EXPECT_EQ(again.source_builds, 0u);
        EXPECT_EQ(again.disk_cache_rejects, 0u);
    }

    fs::path dir_, entry_;
    EnginePtr engine_;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Opening a FIFO for reading waits for a writer: the cache must not open it.
TEST_F(OclCacheTest, FifoEntry_IsRejectedWithoutBlockingAndRebuilt) {
    fs::remove(entry_);
    ASSERT_EQ(::mkfifo(entry_.c_str(), 0600), 0) << std::strerror(errno);
    std::string log;
    const OclBuildStats s = rebuild(&log);
    EXPECT_TRUE(contains(log, "not a regular file")) << log;
    expect_rebuilt_and_rewritten(s);
}

// A link to /dev/zero reads forever: links are never followed.
TEST_F(OclCacheTest, SymlinkToDevZero_IsRejectedWithoutReadingAndRebuilt) {
    fs::remove(entry_);
    fs::create_symlink("/dev/zero", entry_);
    std::string log;
    const OclBuildStats s = rebuild(&log);
    EXPECT_TRUE(contains(log, "symbolic link")) << log;
    expect_rebuilt_and_rewritten(s);
}

// A link to a good entry is refused as well: the cache reads only files that
// are its own entries, not whatever a link points at.
TEST_F(OclCacheTest, SymlinkToAGoodEntry_IsRejected) {
    const fs::path real = dir_ / "elsewhere.bin";
    fs::rename(entry_, real);
    fs::create_symlink(real, entry_);
    expect_rebuilt_and_rewritten(rebuild());
}

// Over the cap: refused from its size alone (a sparse file, so the test takes
// no disk space), never read.
TEST_F(OclCacheTest, OversizedEntry_IsRejectedBySizeAndRebuilt) {
    fs::resize_file(entry_, kCapBytes + 1);
    std::string log;
    const OclBuildStats s = rebuild(&log);
    EXPECT_TRUE(contains(log, "larger than")) << log;
    expect_rebuilt_and_rewritten(s);
}

// Header, identity, length and checksum all valid, the binary garbage: the
// driver refuses it (clCreateProgramWithBinary or clBuildProgram) and the
// program is built from source instead of failing the build.
TEST_F(OclCacheTest, ValidChecksumGarbageBinary_FallsBackToSourceBuild) {
    std::string file;
    {
        std::ifstream f(entry_, std::ios::binary);
        file.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    ASSERT_GT(file.size(), 16u + 16u);
    uint32_t id_len = 0;
    std::memcpy(&id_len, file.data() + 12, 4);
    const size_t header = 16 + size_t(id_len);
    ASSERT_LE(header + 16, file.size());
    std::string garbage(4096, '\0');
    uint32_t x = 12345;
    for (char& c : garbage) {
        x = x * 1664525u + 1013904223u;
        c = char(x >> 24);
    }
    const uint64_t len = garbage.size(), sum = fnv1a(garbage);
    std::string forged = file.substr(0, header);
    forged.append(reinterpret_cast<const char*>(&len), 8);
    forged.append(reinterpret_cast<const char*>(&sum), 8);
    forged += garbage;
    {
        std::ofstream f(entry_, std::ios::binary | std::ios::trunc);
        f.write(forged.data(), std::streamsize(forged.size()));
    }
    std::string log;
    const OclBuildStats s = rebuild(&log);
    EXPECT_TRUE(contains(log, "driver refused it")) << log;
    expect_rebuilt_and_rewritten(s);
}

// A dangling link, a directory: rejected and counted, never an error.
TEST_F(OclCacheTest, DanglingLinkOrDirectory_IsRejected) {
    fs::remove(entry_);
    fs::create_symlink(dir_ / "does-not-exist", entry_);
    expect_rebuilt_and_rewritten(rebuild());
    fs::remove(entry_);
    fs::create_directory(entry_);
    std::string log;
    const OclBuildStats s = rebuild(&log);
    EXPECT_EQ(s.disk_cache_rejects, 1u);
    EXPECT_EQ(s.source_builds, 1u);
    EXPECT_TRUE(contains(log, "not a regular file")) << log;
}

// ---- bounds (DYNRT_OCL_PROGRAMS, DYNRT_OCL_DISK_CACHE_MB) -------------------

// Builds `scale` with N = n (one program per n) on `e` and checks it.
void run_scale_n(Engine& e, size_t n) {
    OclDevice* dev = OclDevice::from(e);
    auto stream = e.create_stream();
    auto kernel = dev->build_kernel(kScale, "scale", JitDefines{{"N", std::to_string(n)}});
    std::vector<float> a(n, 2.0f);
    const Layout l(Shape{int64_t(n)}, DataType::f32);
    auto ba = e.allocate(n * 4), bo = e.allocate(n * 4);
    ba->write(*stream, a.data(), 0, n * 4);
    Memory ma(ba, l), mo(bo, l);
    const size_t work[3] = {n, 1, 1};
    dev->launch(*stream, *kernel, {OclArg::mem(ma), OclArg::mem(mo)}, dispatch_for(work, 1, dev->limits()));
    stream->finish();
    std::vector<float> out(n);
    bo->read(*stream, out.data(), 0, n * 4);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 7.0f) << "element " << i;
}

// Scoped environment variable.
struct Env {
    Env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
    ~Env() { unsetenv(name_); }
    const char* name_;
};

// An engine keeps at most DYNRT_OCL_PROGRAMS programs: one program per shape
// (static impls) grew without bound. The least recently used leave, counted;
// a kernel asked for again comes back from the disk cache, and a kernel still
// held keeps its program working.
TEST_F(OclCacheTest, ProgramsOverTheCap_LeaveLeastRecentlyUsedFirst) {
    Env cap("DYNRT_OCL_PROGRAMS", "2");
    auto e = make_engine();
    OclDevice* dev = OclDevice::from(*e);
    auto held = dev->build_kernel(kScale, "scale", JitDefines{{"N", "3"}});
    for (size_t n : {5, 6, 7, 8}) run_scale_n(*e, n);
    OclBuildStats s = dev->build_stats();
    EXPECT_EQ(s.memory_cache_evictions, 3u);   // 5 programs, 2 kept
    run_scale_n(*e, 8);                        // the most recent: still built
    EXPECT_EQ(dev->build_stats().memory_cache_hits, s.memory_cache_hits + 1);
    const size_t disk_hits = dev->build_stats().disk_cache_hits;
    run_scale_n(*e, 5);   // evicted: from the disk cache, not from source
    EXPECT_EQ(dev->build_stats().disk_cache_hits, disk_hits + 1);
    EXPECT_EQ(dev->build_stats().source_builds, s.source_builds);
    run_scale_n(*e, 3);   // its program left the cache while `held` kept it alive
    EXPECT_NE(held, nullptr);
}

// Over DYNRT_OCL_DISK_CACHE_MB the least recently used entries are deleted,
// down to 3/4 of the cap, and counted; the entry just written stays.
TEST_F(OclCacheTest, DiskCacheOverTheCap_DeletesTheOldestEntries) {
    Env cap("DYNRT_OCL_DISK_CACHE_MB", "1");
    const fs::path dir = OclDevice::from(*engine_)->cache_dir();
    std::vector<fs::path> old;
    for (int i = 0; i < 3; ++i) {
        old.push_back(dir / ("old" + std::to_string(i) + ".clbin"));
        std::ofstream(old.back(), std::ios::binary) << std::string(400 << 10, 'x');
        fs::last_write_time(old.back(), fs::file_time_type::clock::now() - std::chrono::hours(24 * (i + 1)));
    }
    auto e = make_engine();
    run_scale_n(*e, 11);
    const OclBuildStats s = OclDevice::from(*e)->build_stats();
    EXPECT_EQ(s.disk_cache_writes, 1u);
    EXPECT_EQ(s.disk_cache_evictions, 2u);   // 1.2 MiB + the entries -> under 768 KiB
    EXPECT_FALSE(fs::exists(old[2]));        // the oldest first
    EXPECT_FALSE(fs::exists(old[1]));
    EXPECT_TRUE(fs::exists(old[0]));
    EXPECT_TRUE(fs::exists(entry_));   // used more recently than the old ones
    size_t entries = 0;
    for (const auto& f : fs::directory_iterator(dir)) entries += f.path().extension() == ".clbin";
    EXPECT_EQ(entries, 3u);   // old0, the first test entry and the new one
}

TEST_F(OclCacheTest, BadCapValue_IsAnErrorNamingTheVariable) {
    for (const char* bad : {"-1", "many", "1.5"}) {
        Env cap("DYNRT_OCL_PROGRAMS", bad);
        try {
            make_engine();
            ADD_FAILURE() << bad << " was accepted";
        } catch (const Error& e) {
            EXPECT_TRUE(contains(e.what(), "DYNRT_OCL_PROGRAMS")) << e.what();
        }
    }
}

}   // namespace
