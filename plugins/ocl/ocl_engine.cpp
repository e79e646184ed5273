// The ocl device module: engine type "ocl" on the OpenCL ICD loader.
//
// Device choice: "ocl" takes the first GPU of any platform, else the first
// device; "ocl:N" (or DYNRT_OCL_DEVICE=N when the device string has no index)
// takes the N-th device over all platforms in enumeration order. One context
// per engine; each stream is one in-order queue, so the order of enqueues is the
// order of execution and host writes to a buffer (shape_info) never overtake a
// kernel of an earlier run. Buffers map through the caller's queue, blocking.
// The engine also implements OclDevice (dynrt/ocl_api.hpp), the interface op
// modules use to build and launch kernels without linking OpenCL.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/registry.hpp"
#include "ocl_common.hpp"

namespace dynrt::ocl {

Context::~Context() {
    if (default_queue) clReleaseCommandQueue(default_queue);
    if (context) clReleaseContext(context);
}

// ---- streams ------------------------------------------------------------------

OclStream::OclStream(ContextPtr ctx, bool profiling) : ctx_(std::move(ctx)), profiling_(profiling) {
    cl_int err = CL_SUCCESS;
    queue_ = clCreateCommandQueue(ctx_->context, ctx_->device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    check(err, "cannot create an OpenCL queue on " + ctx_->name);
}

OclStream::~OclStream() {
    // Staging blocks of write_async() are freed by event callbacks; let them run.
    clFinish(queue_);
    for (cl_event e : pending_) clReleaseEvent(e);
    clReleaseCommandQueue(queue_);
}

void OclStream::finish() {
    check(clFinish(queue_), "waiting for the OpenCL queue on " + ctx_->name);
    std::vector<cl_event> done;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        done.swap(pending_);
    }
    uint64_t ns = 0;
    for (cl_event e : done) {
        cl_ulong start = 0, end = 0;
        if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) == CL_SUCCESS &&
            clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS &&
            end >= start)
            ns += end - start;
        clReleaseEvent(e);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    profile_.kernel_ns += ns;
}

void OclStream::on_launch(cl_event ev, uint64_t driver_ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++profile_.kernels;
    profile_.driver_ns += driver_ns;
    if (ev) pending_.push_back(ev);
}

OclStreamProfile OclStream::profile() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return profile_;
}

// ---- shape_info arena --------------------------------------------------------------

std::shared_ptr<ShapeInfoRegion> ShapeInfoArena::take(size_t bytes, const Stream* stream, const Allocate& allocate) {
    const size_t size = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    Block block;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = free_.find(size);
        if (it != free_.end() && !it->second.empty()) {
            block = std::move(it->second.back());
            it->second.pop_back();
        } else if (size > kLargestBuffer) {
            block.buffer = allocate(size);   // larger than any shared buffer: its own
        } else {
            if (!current_ || current_->size() - used_ < size) {
                while (next_size_ < size) next_size_ *= 2;
                current_ = allocate(next_size_);
                used_ = 0;
                next_size_ = std::min(next_size_ * 2, kLargestBuffer);
            }
            block.buffer = current_;
            block.offset = used_;
            used_ += size;
        }
    }
    std::weak_ptr<ShapeInfoArena> self = weak_from_this();
    return std::make_shared<ShapeInfoRegion>(block.buffer, block.offset, stream, [self, size, block] {
        if (auto arena = self.lock()) arena->give_back(size, block);
    });
}

void ShapeInfoArena::give_back(size_t size, Block block) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[size].push_back(std::move(block));
}

cl_command_queue queue_for(Stream& stream, const Context& ctx, bool& must_wait) {
    if (auto* os = dynamic_cast<OclStream*>(&stream)) {
        must_wait = false;
        return os->queue();
    }
    must_wait = true;
    return ctx.default_queue;
}

// ---- buffers ------------------------------------------------------------------

namespace {

bool is_allocation_failure(cl_int err) {
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
           err == CL_INVALID_BUFFER_SIZE;
}

[[noreturn]] void throw_alloc_failure(const Context& ctx, size_t bytes, cl_int err) {
    throw Error("cannot allocate " + std::to_string(bytes) + " bytes on " + ctx.name + ": " + cl_error_name(err) +
                " (largest single buffer " + std::to_string(ctx.limits.max_alloc_bytes) + " bytes, device memory " +
                std::to_string(ctx.limits.global_mem_bytes) + " bytes)");
}

}   // namespace

OclBuffer::OclBuffer(ContextPtr ctx, size_t size, cl_mem_flags flags, std::shared_ptr<MemoryTracker> tracker)
    : Buffer(size, std::move(tracker)), ctx_(std::move(ctx)) {
    static std::atomic<uint64_t> next_serial{1};
    serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
    cl_int err = CL_SUCCESS;
    mem_ = clCreateBuffer(ctx_->context, flags, size, nullptr, &err);
    if (is_allocation_failure(err)) throw_alloc_failure(*ctx_, size, err);
    check(err, "cannot allocate " + std::to_string(size) + " bytes on " + ctx_->name);
}

OclBuffer::~OclBuffer() {
    for (auto& kv : views_) clReleaseMemObject(kv.second);
    if (mem_) clReleaseMemObject(mem_);
}

void OclBuffer::check_range(size_t offset, size_t bytes, const char* what) const {
    if (offset > size() || bytes > size() - offset)
        throw Error(std::string("ocl buffer ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " is outside the buffer of " + std::to_string(size()) + " bytes");
}

void* OclBuffer::map(Stream& stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Nested maps (two views of one buffer mapped at once) share one mapping.
    if (map_count_ > 0) {
        ++map_count_;
        return mapped_;
    }
    bool must_wait = false;
    cl_command_queue q = queue_for(stream, *ctx_, must_wait);
    cl_int err = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(q, mem_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size(), 0, nullptr, nullptr, &err);
    if (is_allocation_failure(err)) throw_alloc_failure(*ctx_, size(), err);
    check(err, "cannot map an OpenCL buffer of " + std::to_string(size()) + " bytes on " + ctx_->name);
    mapped_ = p;
    map_count_ = 1;
    return p;
}

void OclBuffer::unmap(Stream& stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (map_count_ == 0) return;
    if (--map_count_ > 0) return;
    bool must_wait = false;
    cl_command_queue q = queue_for(stream, *ctx_, must_wait);
    void* p = mapped_;
    mapped_ = nullptr;
    check(clEnqueueUnmapMemObject(q, mem_, p, 0, nullptr, nullptr), "cannot unmap an OpenCL buffer on " + ctx_->name);
    // Later kernels on the same in-order queue run after the unmap; another queue
    // would not be ordered, so make the unmap visible to everybody.
    if (must_wait) check(clFinish(q), "waiting for an unmap on " + ctx_->name);
}

void OclBuffer::write(Stream& stream, const void* src, size_t offset, size_t bytes) {
    check_range(offset, bytes, "write");
    if (bytes == 0) return;
    bool must_wait = false;
    cl_command_queue q = queue_for(stream, *ctx_, must_wait);
    check(clEnqueueWriteBuffer(q, mem_, CL_TRUE, offset, bytes, src, 0, nullptr, nullptr),
          "cannot write " + std::to_string(bytes) + " bytes to an OpenCL buffer on " + ctx_->name);
}

void OclBuffer::read(Stream& stream, void* dst, size_t offset, size_t bytes) {
    check_range(offset, bytes, "read");
    if (bytes == 0) return;
    bool must_wait = false;
    cl_command_queue q = queue_for(stream, *ctx_, must_wait);
    check(clEnqueueReadBuffer(q, mem_, CL_TRUE, offset, bytes, dst, 0, nullptr, nullptr),
          "cannot read " + std::to_string(bytes) + " bytes from an OpenCL buffer on " + ctx_->name);
}

cl_mem OclBuffer::view_at(size_t offset) const {
    if (offset == 0) return mem_;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = views_.find(offset);
    if (it != views_.end()) return it->second;
    const size_t align = ctx_->limits.base_addr_align_bytes;
    if (offset >= size() || (align && offset % align != 0))
        throw Error("a Memory at byte offset " + std::to_string(offset) + " of a " + std::to_string(size()) +
                    "-byte buffer cannot be a kernel argument on " + ctx_->name +
                    (offset >= size() ? std::string(": the offset is at the end of the buffer")
                                      : ": sub-buffers must start at multiples of " + std::to_string(align) +
                                            " bytes; pass the whole buffer and the offset as a scalar"));
    cl_buffer_region region{offset, size() - offset};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(mem_, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    check(err, "cannot create a sub-buffer at offset " + std::to_string(offset) + " on " + ctx_->name);
    views_.emplace(offset, sub);
    return sub;
}

// ---- device choice -------------------------------------------------------------

namespace {

std::string platform_str(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, &s[0], nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

std::string device_str(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, &s[0], nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

template <typename T>
T device_val(cl_device_id d, cl_device_info what) {
    T v{};
    clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
    return v;
}

struct DeviceEntry {
    cl_platform_id platform;
    cl_device_id device;
    std::string name;   // "<platform>: <device>"
    bool gpu;
};

std::vector<DeviceEntry> enumerate_devices() {
    cl_uint np = 0;
    const cl_int err = clGetPlatformIDs(0, nullptr, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0))
        throw Error("no OpenCL platform found (install an ICD such as pocl-opencl-icd)");
    check(err, "cannot list OpenCL platforms");
    std::vector<cl_platform_id> platforms(np);
    check(clGetPlatformIDs(np, platforms.data(), nullptr), "cannot list OpenCL platforms");
    std::vector<DeviceEntry> out;
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
        std::vector<cl_device_id> devs(nd);
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr) != CL_SUCCESS) continue;
        const std::string pname = platform_str(p, CL_PLATFORM_NAME);
        for (cl_device_id d : devs) {
            const auto type = device_val<cl_device_type>(d, CL_DEVICE_TYPE);
            out.push_back({p, d, pname + ": " + device_str(d, CL_DEVICE_NAME), (type & CL_DEVICE_TYPE_GPU) != 0});
        }
    }
    if (out.empty())
        throw Error("no OpenCL device found on " + std::to_string(np) + " platform(s) (check the ICD's driver)");
    return out;
}

size_t parse_index(const std::string& text, const std::string& where) {
    ErrorContext ctx;
    ctx.field = "device";
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
        throw Error("bad OpenCL device index '" + text + "' in " + where + ": expected ocl or ocl:N, N >= 0", ctx);
    return static_cast<size_t>(std::stoul(text));
}

// Index requested by the device string or DYNRT_OCL_DEVICE; -1 = default rule.
long requested_index(const std::string& device, std::string& where) {
    const auto colon = device.find(':');
    if (colon != std::string::npos) {
        where = "device '" + device + "'";
        return static_cast<long>(parse_index(device.substr(colon + 1), where));
    }
    const char* env = std::getenv("DYNRT_OCL_DEVICE");
    if (env && *env) {
        where = std::string("DYNRT_OCL_DEVICE=") + env;
        return static_cast<long>(parse_index(env, where));
    }
    return -1;
}

const DeviceEntry& choose(const std::vector<DeviceEntry>& devs, const std::string& device, size_t& index) {
    std::string where;
    const long want = requested_index(device, where);
    if (want < 0) {
        index = 0;
        for (size_t i = 0; i < devs.size(); ++i)
            if (devs[i].gpu) {
                index = i;
                break;
            }
        return devs[index];
    }
    if (static_cast<size_t>(want) >= devs.size()) {
        std::string list;
        for (size_t i = 0; i < devs.size(); ++i) list += "\n  ocl:" + std::to_string(i) + "  " + devs[i].name;
        ErrorContext ctx;
        ctx.field = "device";
        throw Error("OpenCL device " + std::to_string(want) + " (from " + where + ") does not exist; " +
                        std::to_string(devs.size()) + " device(s):" + list,
                    ctx);
    }
    index = static_cast<size_t>(want);
    return devs[index];
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

ContextPtr make_context(const EngineConfig& cfg) {
    const std::vector<DeviceEntry> devs = enumerate_devices();
    size_t index = 0;
    const DeviceEntry& de = choose(devs, cfg.device, index);

    auto ctx = std::make_shared<Context>();
    ctx->platform = de.platform;
    ctx->device = de.device;
    ctx->name = de.name;
    ctx->verbose = cfg.verbose;
    // DYNRT_OCL_BUILD_OPTIONS: appended to every program's build options (and
    // so to its cache key), e.g. -cl-opt-disable or -Werror.
    ctx->extra_build_options = env_or_empty("DYNRT_OCL_BUILD_OPTIONS");
    OclDeviceLimits& l = ctx->limits;
    l.platform_name = platform_str(de.platform, CL_PLATFORM_NAME);
    l.platform_version = platform_str(de.platform, CL_PLATFORM_VERSION);
    l.device_name = device_str(de.device, CL_DEVICE_NAME);
    l.device_version = device_str(de.device, CL_DEVICE_VERSION);
    l.driver_version = device_str(de.device, CL_DRIVER_VERSION);
    l.is_gpu = de.gpu;
    l.compute_units = device_val<cl_uint>(de.device, CL_DEVICE_MAX_COMPUTE_UNITS);
    l.max_work_group_size = device_val<size_t>(de.device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    size_t items[3] = {0, 0, 0};
    const auto item_dims = device_val<cl_uint>(de.device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    if (item_dims >= 3) {
        std::vector<size_t> all(item_dims);
        clGetDeviceInfo(de.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * item_dims, all.data(), nullptr);
        for (size_t i = 0; i < 3; ++i) items[i] = all[i];
    }
    for (size_t i = 0; i < 3; ++i) l.max_work_item_sizes[i] = items[i];
    l.local_mem_bytes = device_val<cl_ulong>(de.device, CL_DEVICE_LOCAL_MEM_SIZE);
    l.max_alloc_bytes = device_val<cl_ulong>(de.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    l.global_mem_bytes = device_val<cl_ulong>(de.device, CL_DEVICE_GLOBAL_MEM_SIZE);
    l.base_addr_align_bytes = device_val<cl_uint>(de.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
    l.preferred_local_size = de.gpu ? 256 : 64;

    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(de.platform),
                                           0};
    cl_int err = CL_SUCCESS;
    ctx->context = clCreateContext(props, 1, &de.device, nullptr, nullptr, &err);
    check(err, "cannot create an OpenCL context on " + de.name);
    ctx->default_queue = clCreateCommandQueue(ctx->context, de.device, 0, &err);
    check(err, "cannot create an OpenCL queue on " + de.name);
    if (cfg.verbose)
        std::cerr << "ocl: device ocl:" << index << " of " << devs.size() << ": " << de.name << " (" << l.device_version
                  << ", driver " << l.driver_version << ")\n";
    return ctx;
}

// Why dynrt's disk cache stays off on this context, or "" when it is used.
// DYNRT_OCL_BINARY_CACHE: auto (the default), on or off. auto leaves it off
// where the driver keeps compiled kernels on disk itself: PoCL's kernel cache
// (on unless POCL_KERNEL_CACHE=0) already gives a later process its builds,
// and asking PoCL for a program's binary compiles every kernel a second time
// (a generic work-group function besides the one for the launch's local size),
// which makes a cold build about a third slower.
std::string binary_cache_off_reason(const OclDeviceLimits& l) {
    const std::string mode = env_or_empty("DYNRT_OCL_BINARY_CACHE");
    if (mode == "on") return {};
    if (mode == "off") return "DYNRT_OCL_BINARY_CACHE=off";
    if (!mode.empty() && mode != "auto")
        throw Error("bad DYNRT_OCL_BINARY_CACHE='" + mode + "': expected auto, on or off");
    if (l.platform_name.find("Portable Computing Language") != std::string::npos &&
        env_or_empty("POCL_KERNEL_CACHE") != "0")
        return "PoCL keeps compiled kernels in its own cache (POCL_CACHE_DIR; DYNRT_OCL_BINARY_CACHE=on uses "
               "dynrt's as well)";
    return {};
}

std::string resolve_cache_dir(const Context& ctx) {
    const std::string off = binary_cache_off_reason(ctx.limits);
    if (!off.empty()) {
        if (ctx.verbose) std::cerr << "ocl: binary cache off: " << off << "\n";
        return {};
    }
    std::string base = env_or_empty("DYNRT_CACHE_DIR");
    if (base == "off") return {};
    if (base.empty()) {
        const std::string xdg = env_or_empty("XDG_CACHE_HOME");
        const std::string home = env_or_empty("HOME");
        if (!xdg.empty()) base = xdg + "/dynrt";
        else if (!home.empty()) base = home + "/.cache/dynrt";
        else return {};
    }
    return base + "/ocl";
}

bool is_identifier(const std::string& s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    for (char c : s)
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
    return true;
}

// A JIT constant's name: an identifier, or a function-like macro
// `NAME(a, b)` whose parameters are identifiers.
bool is_define_name(const std::string& s) {
    const size_t open = s.find('(');
    if (open == std::string::npos) return is_identifier(s);
    if (s.back() != ')' || !is_identifier(s.substr(0, open))) return false;
    const std::string params = s.substr(open + 1, s.size() - open - 2);
    size_t from = 0;
    while (true) {
        const size_t comma = params.find(',', from);
        std::string p = params.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        p.erase(0, p.find_first_not_of(' '));
        p.erase(p.find_last_not_of(' ') + 1);
        if (!is_identifier(p)) return false;
        if (comma == std::string::npos) return true;
        from = comma + 1;
    }
}

// The `#define` lines of `defines` (without the source).
std::string define_lines(const JitDefines& defines, const std::string& kernel_name) {
    if (!is_identifier(kernel_name)) throw Error("OpenCL kernel name '" + kernel_name + "' is not an identifier");
    std::string out;
    for (const auto& d : defines) {
        if (!is_define_name(d.first))
            throw Error("kernel '" + kernel_name + "': JIT constant name '" + d.first +
                        "' is not an identifier or NAME(params)");
        out += "#define " + d.first + " ";
        for (char c : d.second) {
            if (c == '\n') out += " \\\n";   // continue multi-line values
            else out += c;
        }
        out += '\n';
    }
    return out;
}

void CL_CALLBACK free_staging(cl_event, cl_int, void* block) { delete[] static_cast<unsigned char*>(block); }

class OclEngine : public Engine, public OclDevice {
public:
    explicit OclEngine(const EngineConfig& cfg)
        : ctx_(make_context(cfg)), programs_(ctx_, resolve_cache_dir(*ctx_), program_cache_limits_from_env()),
          profile_streams_(profile_env()) {
        info_.type = "ocl";
        info_.name = ctx_->name;
        info_.max_alloc_bytes = ctx_->limits.max_alloc_bytes;
        info_.global_mem_bytes = ctx_->limits.global_mem_bytes;
        info_.accelerator = ctx_->limits.is_gpu;
    }

    // Engine
    const DeviceInfo& info() const override { return info_; }
    std::shared_ptr<Stream> create_stream() override { return std::make_shared<OclStream>(ctx_, profile_streams_); }
    void* query_interface(const std::string& name) override {
        return name == kOclDeviceInterface ? static_cast<OclDevice*>(this) : nullptr;
    }

    // OclDevice
    const OclDeviceLimits& limits() const override { return ctx_->limits; }

    std::shared_ptr<OclKernel> build_kernel(const std::string& source, const std::string& kernel_name,
                                            const JitDefines& jit_defines, const std::string& extra_options) override {
        const std::string defines = define_lines(jit_defines, kernel_name);
        // Build-log positions name the kernel and count lines of `source`. The
        // cache key leaves this line out, so other entry points of the same
        // source and defines reuse the program built for the first one.
        const std::string full = defines + "#line 1 \"" + kernel_name + ".cl\"\n" + source;
        std::string options = extra_options.empty() ? "-cl-std=CL1.2" : "-cl-std=CL1.2 " + extra_options;
        if (!ctx_->extra_build_options.empty()) options += " " + ctx_->extra_build_options;
        return std::make_shared<KernelImpl>(ctx_, programs_.get(defines + source, full, options, kernel_name),
                                            kernel_name);
    }

    void launch(Stream& stream, const OclKernel& kernel, const std::vector<OclArg>& args, const size_t gws[3],
                const size_t lws[3], size_t dims) override {
        launch_kernel(*ctx_, stream, kernel, args, gws, lws, dims);
    }

    std::shared_ptr<Buffer> allocate_host_visible(size_t bytes) override {
        const size_t n = bytes == 0 ? 1 : bytes;
        if (n > info_.max_alloc_bytes) return allocate(n);   // Engine::allocate words the error
        return std::make_shared<OclBuffer>(ctx_, n, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, tracker());
    }

    void write_async(Stream& stream, Buffer& dst, size_t offset, const void* src, size_t bytes) override {
        auto* ob = dynamic_cast<OclBuffer*>(&dst);
        if (!ob) throw Error("write_async: the buffer was not allocated by an ocl engine");
        if (offset > dst.size() || bytes > dst.size() - offset)
            throw Error("write_async of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                        " is outside the buffer of " + std::to_string(dst.size()) + " bytes");
        if (bytes == 0) return;
        bool must_wait = false;
        cl_command_queue q = queue_for(stream, *ctx_, must_wait);
        // The staging copy lives until the write completes: freed by the event
        // callback, so the host never blocks and `src` is free at once.
        auto* block = new unsigned char[bytes];
        std::memcpy(block, src, bytes);
        cl_event ev = nullptr;
        cl_int err = clEnqueueWriteBuffer(q, ob->mem(), CL_FALSE, offset, bytes, block, 0, nullptr, &ev);
        if (err != CL_SUCCESS) {
            delete[] block;
            check(err, "cannot write " + std::to_string(bytes) + " bytes to an OpenCL buffer on " + ctx_->name);
        }
        err = clSetEventCallback(ev, CL_COMPLETE, &free_staging, block);
        if (err != CL_SUCCESS) {
            clWaitForEvents(1, &ev);
            delete[] block;
        }
        clReleaseEvent(ev);
        if (must_wait) check(clFinish(q), "waiting for a write on " + ctx_->name);
    }

    std::shared_ptr<ShapeInfoRegion> shape_info_region(Stream& stream, size_t bytes) override {
        auto* os = exact_cast<OclStream>(&stream);
        if (!os) return std::make_shared<ShapeInfoRegion>(allocate(bytes), 0, &stream, nullptr);
        return os->shape_info_arena().take(bytes, &stream, [this](size_t n) { return allocate(n); });
    }

    std::shared_ptr<Stream> create_stream(bool profiling) override {
        return std::make_shared<OclStream>(ctx_, profiling);
    }
    OclStreamProfile stream_profile(Stream& stream) const override {
        auto* os = dynamic_cast<OclStream*>(&stream);
        return os ? os->profile() : OclStreamProfile{};
    }
    OclBuildStats build_stats() const override { return programs_.stats(); }
    void clear_program_cache() override { programs_.clear(); }
    std::string cache_dir() const override { return programs_.dir(); }

protected:
    std::shared_ptr<Buffer> do_allocate(size_t bytes) override {
        return std::make_shared<OclBuffer>(ctx_, bytes, CL_MEM_READ_WRITE, tracker());
    }

private:
    static bool profile_env() {
        const char* v = std::getenv("DYNRT_OCL_PROFILE");
        return v && *v && std::strcmp(v, "0") != 0;
    }

    ContextPtr ctx_;
    ProgramCache programs_;
    bool profile_streams_;
    DeviceInfo info_;
};

// OpenCL vendor libraries keep process-wide state (platform lists, compiler
// instances) that they free only at exit, and some start threads. Unloading the
// ICD loader under them (when this module is released) is unsafe, so the loader
// library is pinned for the life of the process (P19: never-unload modules).
void pin_opencl_loader() {
    static const bool kPinned = [] {
        for (const char* name : {"libOpenCL.so.1", "libOpenCL.so"})
            if (dlopen(name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) return true;
        return false;
    }();
    (void)kPinned;
}

void register_ocl(ModuleRegistrar& registrar) {
    pin_opencl_loader();
    registrar.add_engine("ocl", [](const EngineConfig& cfg) -> EnginePtr { return std::make_shared<OclEngine>(cfg); });
}

}   // namespace

}   // namespace dynrt::ocl

DYNRT_MODULE("ocl", dynrt::ocl::register_ocl)
