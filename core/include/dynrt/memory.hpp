// Memory, engines and streams: the device interface core programs against.
//
// An Engine (one per device, created by a device module such as plugins/cpu)
// allocates Buffers and creates Streams. A Buffer is one device allocation; a
// Memory is a typed view of a Buffer (layout + byte offset), so reinterpreting a
// buffer to a new layout never copies. Engines track bytes in use, the peak and
// the allocation count; these numbers feed ShapePredictor::can_preallocate and the
// run report. Allocation failures throw dynrt::Error naming the size and device.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "dynrt/layout.hpp"

namespace dynrt {

class Stream {
public:
    virtual ~Stream();
    virtual void finish() = 0;   // wait until all enqueued work is done
};

// Running totals for one engine; shared with every buffer it allocated so that a
// buffer released after its engine still updates a live object.
struct MemoryTracker {
    std::atomic<size_t> used{0};
    std::atomic<size_t> peak{0};
    std::atomic<size_t> allocations{0};
    std::atomic<size_t> bytes_allocated{0};
    void on_alloc(size_t bytes);
    void on_free(size_t bytes);
};

class Buffer {
public:
    Buffer(size_t size, std::shared_ptr<MemoryTracker> tracker);
    virtual ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    size_t size() const { return size_; }
    // Host-visible pointer for host impls. Valid until unmap(); the cpu engine
    // returns its storage directly. Blocks until pending device work is done.
    virtual void* map(Stream& stream) = 0;
    virtual void unmap(Stream& stream) = 0;
    virtual void write(Stream& stream, const void* src, size_t offset, size_t bytes) = 0;
    virtual void read(Stream& stream, void* dst, size_t offset, size_t bytes) = 0;

private:
    size_t size_;
    std::shared_ptr<MemoryTracker> tracker_;
};

// A typed view of a buffer. Cheap to copy; reinterpret() gives a view with a new
// layout over the same bytes (the caller checks capacity).
class Memory {
public:
    Memory(std::shared_ptr<Buffer> buffer, Layout layout, size_t offset = 0);
    const Layout& layout() const { return layout_; }
    const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
    size_t offset() const { return offset_; }
    size_t capacity() const { return buffer_->size() - offset_; }
    std::shared_ptr<Memory> reinterpret(const Layout& layout) const;

private:
    std::shared_ptr<Buffer> buffer_;
    Layout layout_;
    size_t offset_;
};
using MemoryPtr = std::shared_ptr<Memory>;

// RAII host mapping of a Memory (offset applied).
class MappedMemory {
public:
    MappedMemory(const Memory& mem, Stream& stream);
    ~MappedMemory();
    MappedMemory(const MappedMemory&) = delete;
    MappedMemory& operator=(const MappedMemory&) = delete;
    template <typename T>
    T* as() const {
        return reinterpret_cast<T*>(ptr_);
    }
    void* data() const { return ptr_; }

private:
    const Memory& mem_;
    Stream& stream_;
    char* ptr_;
};

struct DeviceInfo {
    std::string type;              // "cpu", "ocl"
    std::string name;              // human-readable device name
    size_t max_alloc_bytes = 0;    // largest single allocation (0 = unknown)
    size_t global_mem_bytes = 0;   // device memory (0 = unknown)
    // A GPU or another accelerator: `--device auto` prefers such an OpenCL
    // device to the cpu engine, and a CPU OpenCL device (PoCL) to nothing.
    bool accelerator = false;
    // Host threads the engine computes on (the cpu engine); 0 for devices
    // that run their own work.
    unsigned threads = 0;
};

class Engine {
public:
    Engine();
    virtual ~Engine();
    virtual const DeviceInfo& info() const = 0;
    virtual std::shared_ptr<Stream> create_stream() = 0;

    // Allocates `bytes` (>= 1 byte is always allocated). Throws dynrt::Error when
    // the request exceeds the device limit or the device refuses it.
    std::shared_ptr<Buffer> allocate(size_t bytes);

    size_t used_bytes() const { return tracker_->used.load(); }
    size_t peak_bytes() const { return tracker_->peak.load(); }
    size_t allocation_count() const { return tracker_->allocations.load(); }
    size_t bytes_allocated() const { return tracker_->bytes_allocated.load(); }
    void reset_peak() { tracker_->peak.store(tracker_->used.load()); }

    // Device-specific extension interfaces, looked up by name so that callers
    // need no RTTI across module boundaries (modules hide their symbols). Returns
    // nullptr when the engine does not offer `name`; e.g. OclDevice::from() asks
    // for dynrt::kOclDeviceInterface (dynrt/ocl_api.hpp).
    virtual void* query_interface(const std::string& /*name*/) { return nullptr; }

protected:
    // Device-specific allocation; must construct the Buffer with tracker().
    virtual std::shared_ptr<Buffer> do_allocate(size_t bytes) = 0;
    const std::shared_ptr<MemoryTracker>& tracker() const { return tracker_; }

private:
    std::shared_ptr<MemoryTracker> tracker_;
};
using EnginePtr = std::shared_ptr<Engine>;

}   // namespace dynrt
