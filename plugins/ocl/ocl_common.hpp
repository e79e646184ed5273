// Internal types of the ocl device module, shared by its source files: the CL
// context holder, streams, buffers, kernels, the program cache and CL error
// names. Nothing here is visible outside the module.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "dynrt/memory.hpp"
#include "dynrt/ocl_api.hpp"

namespace dynrt::ocl {

// "CL_OUT_OF_RESOURCES (-5)"; unknown codes as "CL error -N".
std::string cl_error_name(cl_int err);
// Throws dynrt::Error("<what>: <name>") unless err == CL_SUCCESS.
void check(cl_int err, const std::string& what);

// The CL objects every buffer, stream and kernel of one engine depends on; held
// by shared_ptr so that they stay valid whatever is released first.
struct Context {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    // Used for buffer operations handed a stream that is not an ocl stream
    // (then the operation waits for completion).
    cl_command_queue default_queue = nullptr;
    OclDeviceLimits limits;
    std::string name;   // "<platform>: <device>"
    bool verbose = false;
    std::string extra_build_options;   // DYNRT_OCL_BUILD_OPTIONS

    Context() = default;
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context();
};
using ContextPtr = std::shared_ptr<Context>;

// The shape_info regions of one stream's kernels (OclDevice::
// shape_info_region): 128-byte aligned regions cut from a few buffers, the
// first of 4 KiB and each next one twice the last (up to 1 MiB), and reused
// through free lists by size. Only the stream's in-order queue writes them, so
// a region released while a kernel still reads it is rewritten after that
// kernel. Held by shared_ptr: a region keeps its buffer, not the arena.
class ShapeInfoArena : public std::enable_shared_from_this<ShapeInfoArena> {
public:
    static constexpr size_t kAlign = 128, kFirstBuffer = 4096, kLargestBuffer = size_t(1) << 20;
    using Allocate = std::function<std::shared_ptr<Buffer>(size_t bytes)>;
    std::shared_ptr<ShapeInfoRegion> take(size_t bytes, const Stream* stream, const Allocate& allocate);

private:
    struct Block {
        std::shared_ptr<Buffer> buffer;
        size_t offset = 0;
    };
    void give_back(size_t size, Block block);
    mutable std::mutex mutex_;
    std::map<size_t, std::vector<Block>> free_;   // by rounded size
    std::shared_ptr<Buffer> current_;             // the buffer regions are cut from
    size_t used_ = 0;
    size_t next_size_ = kFirstBuffer;
};

class OclStream final : public Stream {
public:
    OclStream(ContextPtr ctx, bool profiling);
    ~OclStream() override;
    void finish() override;

    cl_command_queue queue() const { return queue_; }
    bool profiling() const { return profiling_; }
    // Called by launch(): counts the launch, adds the host time it spent in the
    // driver and keeps `ev` (profiling streams only; takes ownership) until
    // finish() reads its times.
    void on_launch(cl_event ev, uint64_t driver_ns);
    OclStreamProfile profile() const;
    ShapeInfoArena& shape_info_arena() { return *arena_; }

private:
    ContextPtr ctx_;
    std::shared_ptr<ShapeInfoArena> arena_ = std::make_shared<ShapeInfoArena>();
    cl_command_queue queue_ = nullptr;
    bool profiling_;
    mutable std::mutex mutex_;
    std::vector<cl_event> pending_;
    OclStreamProfile profile_;
};

// The queue to use for `stream`, and whether the caller must wait because it is
// the engine's default queue (stream is not an ocl stream).
cl_command_queue queue_for(Stream& stream, const Context& ctx, bool& must_wait);

class OclBuffer final : public Buffer {
public:
    OclBuffer(ContextPtr ctx, size_t size, cl_mem_flags flags, std::shared_ptr<MemoryTracker> tracker);
    ~OclBuffer() override;

    void* map(Stream& stream) override;
    void unmap(Stream& stream) override;
    void write(Stream& stream, const void* src, size_t offset, size_t bytes) override;
    void read(Stream& stream, void* dst, size_t offset, size_t bytes) override;

    cl_mem mem() const { return mem_; }
    // The buffer as seen from `offset`: itself for 0, else a cached sub-buffer.
    cl_mem view_at(size_t offset) const;
    // Unique over the process's lifetime (never reused, unlike addresses and
    // cl_mem handles): what the launch's argument cache compares.
    uint64_t serial() const { return serial_; }

private:
    void check_range(size_t offset, size_t bytes, const char* what) const;
    ContextPtr ctx_;
    cl_mem mem_ = nullptr;
    uint64_t serial_ = 0;
    mutable std::mutex mutex_;
    void* mapped_ = nullptr;
    int map_count_ = 0;
    mutable std::map<size_t, cl_mem> views_;
};

// One built program, shared by the kernels created from it.
struct Program {
    cl_program program = nullptr;
    bool from_binary_cache = false;
    ~Program();
};

class KernelImpl final : public OclKernel {
public:
    KernelImpl(ContextPtr ctx, std::shared_ptr<Program> program, const std::string& name);
    ~KernelImpl() override;
    const std::string& name() const override { return name_; }
    size_t work_group_size() const override { return work_group_size_; }
    bool from_binary_cache() const override { return program_->from_binary_cache; }

    cl_kernel kernel() const { return kernel_; }
    std::mutex& mutex() const { return mutex_; }

    // The value each argument was last set to on this cl_kernel (guarded by
    // mutex()): launch() skips clSetKernelArg for arguments that did not
    // change, which is most of them when a node runs again on the same shapes.
    struct ArgValue {
        OclArg::Kind kind = OclArg::Kind::i32;
        bool set = false;
        uint64_t buffer_serial = 0;   // memory/buffer: OclBuffer::serial() and byte offset
        size_t offset = 0;
        int64_t int_value = 0;   // i32/i64; f32 as its bits; local: bytes
    };
    std::vector<ArgValue>& arg_values() const { return arg_values_; }

private:
    ContextPtr ctx_;
    std::shared_ptr<Program> program_;
    std::string name_;
    cl_kernel kernel_ = nullptr;
    size_t work_group_size_ = 0;
    mutable std::mutex mutex_;
    mutable std::vector<ArgValue> arg_values_;
};

// `p` as the final type T when it is one, else nullptr: a typeid comparison,
// cheaper than dynamic_cast's hierarchy walk on the launch path (the three
// types are final, so the exact type is the only match).
template <typename T, typename Base>
const T* exact_cast(const Base* p) {
    return p && typeid(*p) == typeid(T) ? static_cast<const T*>(p) : nullptr;
}
template <typename T, typename Base>
T* exact_cast(Base* p) {
    return p && typeid(*p) == typeid(T) ? static_cast<T*>(p) : nullptr;
}

// ---- disk binary cache (ocl_program_cache.cpp) ------------------------------

// 128-bit hash of `data` as 32 hex digits (two independent 64-bit hashes).
std::string hash_hex(const std::string& data);

// The largest cache entry read (a kernel binary is a few MiB at most): a
// larger file is rejected without being read.
constexpr uint64_t kMaxCacheEntryBytes = uint64_t(64) << 20;

// Reads `path` (a regular file only, never a link, FIFO or device, and at most
// kMaxCacheEntryBytes); returns true and fills `binary` when the file is a complete,
// uncorrupted entry for `identity`, else false with `why` ("missing" when the
// file does not exist).
bool read_cache_entry(const std::string& path, const std::string& identity, std::vector<unsigned char>& binary,
                      std::string& why);
// Writes atomically (temp file + rename). Returns false with `why` on failure.
bool write_cache_entry(const std::string& path, const std::string& identity, const std::vector<unsigned char>& binary,
                       std::string& why);

// Programs of one engine: memory cache, then disk cache, then a source build.
// Both caches are bounded. The memory cache keeps at most `max_programs`
// programs, least recently used leaving first (a program still used by a
// kernel lives on with it); the disk cache at most `max_disk_bytes` of entries,
// the least recently used (by file time, touched on every hit) deleted when a
// write goes over, down to 3/4 of the cap. 0: no cap.
struct ProgramCacheLimits {
    size_t max_programs = 256;
    uint64_t max_disk_bytes = uint64_t(1) << 30;
};
// DYNRT_OCL_PROGRAMS (programs kept per engine) and DYNRT_OCL_DISK_CACHE_MB;
// a value that is no integer >= 0 is an error naming the variable.
ProgramCacheLimits program_cache_limits_from_env();

class ProgramCache {
public:
    ProgramCache(ContextPtr ctx, std::string dir, ProgramCacheLimits limits = {});
    // Returns the built program of `source` (defines already prepended). The
    // caches are keyed by `key_source`: the same text without the `#line`
    // naming the first kernel asked for, so that every kernel of one program
    // (same source and defines, another entry point) shares one build.
    std::shared_ptr<Program> get(const std::string& key_source, const std::string& source, const std::string& options,
                                 const std::string& kernel_name);
    OclBuildStats stats() const;
    void clear();
    const std::string& dir() const { return dir_; }

private:
    struct Entry {
        std::mutex mutex;
        std::shared_ptr<Program> program;
        std::list<std::string>::iterator lru;   // its place in lru_
    };
    void evict_programs();   // under mutex_
    void bound_disk(uint64_t written);
    std::shared_ptr<Program> load_binary(const std::string& path, const std::string& identity,
                                         const std::string& options);
    std::shared_ptr<Program> build_source(const std::string& source, const std::string& options,
                                          const std::string& kernel_name);
    void store_binary(const Program& p, const std::string& path, const std::string& identity);

    ContextPtr ctx_;
    std::string dir_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Entry>> entries_;
    std::list<std::string> lru_;   // keys of entries_, most recently used first
    ProgramCacheLimits limits_;
    std::mutex disk_mutex_;
    uint64_t disk_bytes_ = 0;   // the folder's entries, as last counted
    bool disk_counted_ = false;
    std::atomic<size_t> source_builds_{0}, disk_hits_{0}, disk_rejects_{0}, disk_writes_{0}, memory_hits_{0},
        memory_evictions_{0}, disk_evictions_{0};
};

// Enqueues `kernel` (ocl_kernels.cpp); see OclDevice::launch.
void launch_kernel(const Context& ctx, Stream& stream, const OclKernel& kernel, const std::vector<OclArg>& args,
                   const size_t gws[3], const size_t lws[3], size_t dims);

}   // namespace dynrt::ocl
