// The OpenCL device as op modules see it: kernel builds, launches, device limits
// and the shape_info / JIT helpers of shape-agnostic kernels.
//
// The ocl device module (plugins/ocl) implements OclDevice on its engine; an op
// module gets it with OclDevice::from(engine) (nullptr for any other device) and
// never links libOpenCL or includes CL headers: nothing here names a CL type.
// Impls call build_kernel() when they are created (static impls once per layout
// set, shape-agnostic impls once), and launch() on every execution. The free
// functions below are host-only (they live in libdynrt_core): JIT defines for a
// static or a shape-agnostic build, the shape_info layout and its packing, and
// the small fixed set of local work sizes. Details: docs/opencl.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/layout.hpp"
#include "dynrt/memory.hpp"

namespace dynrt {

// Name under which the ocl engine answers Engine::query_interface.
inline constexpr const char* kOclDeviceInterface = "dynrt.ocl_device.v1";

// (name, value) pairs turned into `#define name value` lines ahead of a source.
using JitDefines = std::vector<std::pair<std::string, std::string>>;

// What the selected device offers; filled once when the engine is created.
struct OclDeviceLimits {
    std::string platform_name;
    std::string platform_version;
    std::string device_name;
    std::string device_version;
    std::string driver_version;
    bool is_gpu = false;
    size_t compute_units = 0;
    size_t max_work_group_size = 0;
    std::array<size_t, 3> max_work_item_sizes{};
    size_t local_mem_bytes = 0;   // per work-group
    size_t max_alloc_bytes = 0;   // largest single buffer
    size_t global_mem_bytes = 0;
    size_t base_addr_align_bytes = 0;   // Memory offsets passed as kernel args must be multiples of this
    size_t preferred_local_size = 0;    // work-group size pick_local_size() aims for
};

// Program-build counters of one engine (tests and the run report read them).
struct OclBuildStats {
    size_t source_builds = 0;        // clBuildProgram from source
    size_t disk_cache_hits = 0;      // programs loaded from the binary cache
    size_t disk_cache_rejects = 0;   // corrupt or stale cache entries (rebuilt from source)
    size_t disk_cache_writes = 0;    // binaries written to the cache
    size_t memory_cache_hits = 0;    // programs found already built in this engine
    // Programs this engine let go of to stay within its cap
    // (DYNRT_OCL_PROGRAMS; kernels already handed out keep theirs alive).
    size_t memory_cache_evictions = 0;
    // Entries deleted from the disk cache to stay within its cap
    // (DYNRT_OCL_DISK_CACHE_MB), least recently used first.
    size_t disk_cache_evictions = 0;
};

// Profiling totals of one stream; kernel times are only measured on streams
// created with profiling and are collected by Stream::finish().
struct OclStreamProfile {
    size_t kernels = 0;       // launches enqueued
    uint64_t kernel_ns = 0;   // sum of device execution times (profiling streams)
    // Host time spent in the driver by launches: clSetKernelArg calls and
    // clEnqueueNDRangeKernel (every stream). What a launch costs the host
    // beyond it is the runtime's own work.
    uint64_t driver_ns = 0;
};

// One compiled kernel. Cheap to launch from several threads (launch() serialises
// the argument setting of one kernel object).
class OclKernel {
public:
    virtual ~OclKernel() = default;
    virtual const std::string& name() const = 0;
    virtual size_t work_group_size() const = 0;   // CL_KERNEL_WORK_GROUP_SIZE on this device
    virtual bool from_binary_cache() const = 0;   // its program came from the disk cache
};

// One kernel argument.
//   memory: a Memory's buffer. A non-zero Memory::offset() is passed as a
//           sub-buffer starting there (the kernel sees element 0 at the offset);
//           the offset must be a multiple of limits().base_addr_align_bytes, else
//           launch() throws: then pass buffer(m.buffer()) plus the offset as a
//           scalar and index with it in the kernel.
//   buffer: a whole Buffer (e.g. shape_info).
//   i32/i64/f32: scalars (int, long, float in OpenCL C).
//   local:  `bytes` of __local memory.
struct OclArg {
    enum class Kind : uint8_t { memory, buffer, i32, i64, f32, local };
    Kind kind = Kind::i32;
    const Memory* memory = nullptr;
    const Buffer* buffer = nullptr;
    int64_t int_value = 0;
    float float_value = 0.0f;
    size_t local_bytes = 0;

    static OclArg mem(const Memory& m) {
        OclArg a;
        a.kind = Kind::memory;
        a.memory = &m;
        return a;
    }
    static OclArg buf(const Buffer& b) {
        OclArg a;
        a.kind = Kind::buffer;
        a.buffer = &b;
        return a;
    }
    static OclArg i32(int32_t v) {
        OclArg a;
        a.kind = Kind::i32;
        a.int_value = v;
        return a;
    }
    static OclArg i64(int64_t v) {
        OclArg a;
        a.kind = Kind::i64;
        a.int_value = v;
        return a;
    }
    static OclArg f32(float v) {
        OclArg a;
        a.kind = Kind::f32;
        a.float_value = v;
        return a;
    }
    static OclArg local(size_t bytes) {
        OclArg a;
        a.kind = Kind::local;
        a.local_bytes = bytes;
        return a;
    }
};

// Global and local work sizes of one launch (see dispatch_for()).
struct OclDispatch {
    std::array<size_t, 3> gws{1, 1, 1};
    std::array<size_t, 3> lws{0, 0, 0};   // zeros: the driver chooses
    size_t dims = 1;
};

// A region of a shared shape_info buffer (OclDevice::shape_info_region): the
// buffer, the region's offset in bytes (a multiple of 128) and the stream whose
// in-order queue writes it. The region goes back to its arena when the last
// reference goes.
class ShapeInfoRegion {
public:
    ShapeInfoRegion(std::shared_ptr<Buffer> buffer, size_t offset, const Stream* stream,
                    std::function<void()> on_release)
        : buffer_(std::move(buffer)), offset_(offset), stream_(stream), on_release_(std::move(on_release)) {}
    ~ShapeInfoRegion() {
        if (on_release_) on_release_();
    }
    ShapeInfoRegion(const ShapeInfoRegion&) = delete;
    ShapeInfoRegion& operator=(const ShapeInfoRegion&) = delete;

    Buffer& buffer() const { return *buffer_; }
    size_t offset() const { return offset_; }
    const Stream* stream() const { return stream_; }

private:
    std::shared_ptr<Buffer> buffer_;
    size_t offset_;
    const Stream* stream_;
    std::function<void()> on_release_;
};

class OclDevice {
public:
    // The OpenCL interface of `engine`, or nullptr if it is not an ocl engine.
    // The pointer lives as long as the engine.
    static OclDevice* from(Engine& engine) {
        return static_cast<OclDevice*>(engine.query_interface(kOclDeviceInterface));
    }

    virtual const OclDeviceLimits& limits() const = 0;

    // Compiles `kernel_name` from OpenCL C 1.2 `source`. `jit_defines` become
    // `#define` lines ahead of the source (names are identifiers or
    // function-like `NAME(a, b)`; values may be long; a value's newlines are
    // continued), followed by `#line 1 "<kernel_name>.cl"` so the
    // build log's positions are the source's. `extra_options` are appended to
    // "-cl-std=CL1.2". The program comes from this engine's memory cache, else
    // the disk binary cache, else a source build (then written to the cache).
    // The caches are keyed without the `#line` (so without the kernel name):
    // other entry points of the same source and defines share one program.
    // Throws dynrt::Error naming the kernel and carrying the build log; callers
    // add the op/node with Error::with_context. Thread-safe.
    virtual std::shared_ptr<OclKernel> build_kernel(const std::string& source, const std::string& kernel_name,
                                                    const JitDefines& jit_defines,
                                                    const std::string& extra_options = {}) = 0;

    // Enqueues `kernel` on `stream` (an ocl stream) with `args` in order.
    // `lws` all zeros lets the driver choose; otherwise every gws[d] must be a
    // multiple of lws[d] (dispatch_for() arranges that). A launch with any
    // gws[d] == 0 enqueues nothing. Does not wait. Arguments whose value equals
    // the one this kernel object was last given are not set again.
    virtual void launch(Stream& stream, const OclKernel& kernel, const std::vector<OclArg>& args, const size_t gws[3],
                        const size_t lws[3], size_t dims) = 0;
    void launch(Stream& stream, const OclKernel& kernel, const std::vector<OclArg>& args, const OclDispatch& d) {
        launch(stream, kernel, args, d.gws.data(), d.lws.data(), d.dims);
    }

    // A buffer the host can map cheaply (CL_MEM_ALLOC_HOST_PTR); counted like
    // Engine::allocate.
    virtual std::shared_ptr<Buffer> allocate_host_visible(size_t bytes) = 0;

    // Non-blocking write of `bytes` from `src` into `dst` at `offset`, ordered on
    // `stream`'s in-order queue after every kernel enqueued before it. The data
    // is copied first into a staging block that the plugin frees when the write
    // has completed, so `src` may be reused at once. This is how shape_info is
    // updated: a kernel of the previous run that still reads the buffer runs
    // before the write on the same queue, and the host never waits.
    virtual void write_async(Stream& stream, Buffer& dst, size_t offset, const void* src, size_t bytes) = 0;

    // `bytes` of shape_info for kernels run on `stream`, in a buffer shared with
    // the other shape-agnostic kernels of that stream: its arena hands out
    // regions of a few buffers (4 KiB, then twice the last, up to 1 MiB) and
    // takes them back when released: a few device allocations and memory
    // objects per stream instead of one per shape-agnostic impl
    // (docs/opencl.md). A stream of another engine gets a buffer of its own.
    virtual std::shared_ptr<ShapeInfoRegion> shape_info_region(Stream& stream, size_t bytes) = 0;

    // A stream with its own in-order queue; `profiling` measures kernel times.
    virtual std::shared_ptr<Stream> create_stream(bool profiling) = 0;
    virtual OclStreamProfile stream_profile(Stream& stream) const = 0;

    virtual OclBuildStats build_stats() const = 0;
    // Forgets the programs built by this engine (the disk cache stays).
    virtual void clear_program_cache() = 0;
    // Folder of the binary cache; empty when the disk cache is off.
    virtual std::string cache_dir() const = 0;

protected:
    ~OclDevice() = default;   // owned by its engine, never deleted through this interface
};

// ---- shape-agnostic kernels -------------------------------------------------
//
// shape_info is an int32 array in a device buffer, passed to a shape-agnostic
// kernel as its first two arguments: the buffer (`shape_info_base`) and the
// array's offset in it in ints (`shape_info_offset`); the JIT constant
// `shape_info` is `(shape_info_base + shape_info_offset)`, so kernel code reads
// `shape_info[i]`. The kernels of one stream share a few buffers
// (OclDevice::shape_info_region, OclShapeInfo). It holds one slot of
// kShapeInfoSlotInts ints per *dynamic* tensor (a
// tensor whose compile-time layout is not static): first the dynamic inputs in
// input order, then the dynamic outputs in output order. A slot holds
//   [0, 8)   the runtime dims right-aligned and left-padded with 1
//            (shape [5, 7] -> 1,1,1,1,1,1,5,7),
//   [8, 16)  the lower padding of each dim, aligned the same way (0 = none),
//   [16, 24) the upper padding.
// A padded tensor is stored with the padded dims (dim + lower + upper) in
// row-major order, its element 0 at the lower corner; kernels address it with
// <NAME>_PHYS(i) (see tensor_jit_defines).

inline constexpr size_t kShapeInfoDims = 8;
inline constexpr size_t kShapeInfoSlotInts = 3 * kShapeInfoDims;

// IS_DYNAMIC (1 or 0: test it with #if), OPTIONAL_SHAPE_INFO_ARG
// ("__global const int* shape_info_base, const int shape_info_offset," or
// empty), OPTIONAL_SHAPE_INFO_TENSOR ("shape_info_base, shape_info_offset," or
// empty), `shape_info` (dynamic builds only) and SHAPE_INFO_DIMS.
JitDefines shape_agnostic_defines(bool is_dynamic);

// Slot of every tensor in shape_info (-1: static, not in shape_info).
struct ShapeInfoPlan {
    std::vector<int> input_slots;
    std::vector<int> output_slots;
    size_t slots = 0;
    size_t ints() const { return slots * kShapeInfoSlotInts; }
    size_t bytes() const { return ints() * sizeof(int32_t); }
};
// From the compile-time (node) layouts of the impl.
ShapeInfoPlan plan_shape_info(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs);
// Fills `out` (resized to plan.ints()) from the runtime layouts. Throws
// dynrt::Error for a rank above kShapeInfoDims, a dim or padding above
// INT32_MAX, a negative padding or a dynamic runtime shape.
void pack_shape_info(const ShapeInfoPlan& plan, const std::vector<Layout>& inputs, const std::vector<Layout>& outputs,
                     std::vector<int32_t>& out);

// The shape_info of one shape-agnostic impl: `bytes` in a region of the arena
// of the stream it runs on, taken at its first run (and again when it runs on
// another stream), written only when the packed contents change.
class OclShapeInfo {
public:
    explicit OclShapeInfo(size_t bytes = 0) : bytes_(bytes) {}
    bool empty() const { return bytes_ == 0; }
    // No region on `stream` yet: the next update() takes one and writes.
    bool needs_region(const Stream& stream) const { return bytes_ != 0 && (!region_ || region_->stream() != &stream); }
    // Writes `packed` (plan.ints() ints) on `stream`'s queue unless the region
    // holds it already; ordered after the kernels enqueued before.
    void update(OclDevice& device, Stream& stream, const std::vector<int32_t>& packed);
    // The kernel's first two arguments: the buffer and the offset in ints.
    // After update().
    void push_args(std::vector<OclArg>& args) const;

private:
    size_t bytes_;
    std::shared_ptr<ShapeInfoRegion> region_;
    std::vector<int32_t> last_;
};

// JIT constants of one tensor: <NAME>_TYPE (OpenCL C type), <NAME>_RANK,
// <NAME>_DIM0..<NAME>_DIM7 (right-aligned like shape_info, leading ones),
// <NAME>_LENGTH (element count), and for padding <NAME>_PAD_LOWER0..7,
// <NAME>_PAD_UPPER0..7, <NAME>_PADDED (0 when no dim is padded) and the
// function-like <NAME>_PHYS(i): the storage index (ulong) of the element whose
// row-major index over the logical dims is `i` ((ulong)(i) when unpadded).
// Static dims and the paddings of a static layout are literals (a static
// unpadded layout gives <NAME>_PADDED 0, so padded paths compile out); a layout
// with dynamic dims reads `(shape_info[slot * 24 + j])` for dim j and the slot's
// padding entries, so `slot` must be >= 0 for it.
JitDefines tensor_jit_defines(const std::string& name, const Layout& layout, int slot);
const char* ocl_type_name(DataType t);   // float, half, int, long, uchar, char, uchar

// Small JIT helpers the ops share.
// A double as an OpenCL float literal, exact to 17 digits: "((float)(0.5))".
std::string jit_float_literal(double v);
// DATA_F16 (1 for f16, else 0): selects ocl_common.cl's LOAD / STORE / LOAD4 /
// STORE4 (vload_half / vstore_half_rte for f16, computed in float).
std::pair<std::string, std::string> jit_data_f16(DataType t);
// "(NAME_DIMa*...*NAME_DIMb-1)": the product of dims [from, to) of a rank-`rank`
// tensor, over its right-aligned JIT dims; "(1)" when empty.
std::string jit_dims_product(const std::string& name, size_t rank, size_t from, size_t to);

// ---- work sizes --------------------------------------------------------------
//
// PoCL compiles a work-group function per distinct local size (25-33 ms each),
// so launches use a small fixed set: a total of limits.preferred_local_size
// (64 on CPUs, 256 on GPUs, capped by max_work_group_size, a power of two)
// spread over the dims whose extent is > 1 (1 dim: N; 2: sqrt split; 3: cube
// split, the larger factors first), and 1 on dims of extent 1. Kernels launched
// this way must bounds-check: the global size is rounded up.
std::array<size_t, 3> pick_local_size(const size_t work[3], size_t dims, const OclDeviceLimits& limits);
// `work` rounded up to multiples of pick_local_size(work).
OclDispatch dispatch_for(const size_t work[3], size_t dims, const OclDeviceLimits& limits);

}   // namespace dynrt
