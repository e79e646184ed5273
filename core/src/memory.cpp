// Device-independent parts of the memory interface: allocation accounting,
// typed views over buffers, host mappings and the checked Engine::allocate.
#include "dynrt/memory.hpp"

#include <new>
#include <string>

#include "dynrt/error.hpp"

namespace dynrt {

Stream::~Stream() = default;

void MemoryTracker::on_alloc(size_t bytes) {
    const size_t now = used.fetch_add(bytes) + bytes;
    allocations.fetch_add(1);
    bytes_allocated.fetch_add(bytes);
    // Lock-free max: retry while another thread has not yet raised the peak past us.
    size_t prev = peak.load();
    while (now > prev && !peak.compare_exchange_weak(prev, now)) {
    }
}

void MemoryTracker::on_free(size_t bytes) { used.fetch_sub(bytes); }

Buffer::Buffer(size_t size, std::shared_ptr<MemoryTracker> tracker) : size_(size), tracker_(std::move(tracker)) {
    if (tracker_) tracker_->on_alloc(size_);
}

Buffer::~Buffer() {
    if (tracker_) tracker_->on_free(size_);
}

Memory::Memory(std::shared_ptr<Buffer> buffer, Layout layout, size_t offset)
    : buffer_(std::move(buffer)), layout_(std::move(layout)), offset_(offset) {
    if (!buffer_) throw Error("Memory: null buffer");
    if (offset_ > buffer_->size())
        throw Error("Memory: offset " + std::to_string(offset_) + " is past the end of a buffer of " +
                    std::to_string(buffer_->size()) + " bytes");
}

std::shared_ptr<Memory> Memory::reinterpret(const Layout& layout) const {
    const size_t need = layout.bytes();
    if (need > capacity())
        throw Error("cannot reinterpret memory as " + layout.to_string() + ": needs " + std::to_string(need) +
                    " bytes, the buffer holds " + std::to_string(capacity()));
    return std::make_shared<Memory>(buffer_, layout, offset_);
}

MappedMemory::MappedMemory(const Memory& mem, Stream& stream)
    : mem_(mem), stream_(stream), ptr_(static_cast<char*>(mem.buffer()->map(stream)) + mem.offset()) {}

MappedMemory::~MappedMemory() {
    // unmap() of a device buffer may fail in theory; a destructor must not throw.
    try {
        mem_.buffer()->unmap(stream_);
    } catch (...) {
    }
}

Engine::Engine() : tracker_(std::make_shared<MemoryTracker>()) {}
Engine::~Engine() = default;

std::shared_ptr<Buffer> Engine::allocate(size_t bytes) {
    // Zero-sized tensors still get a real buffer so that every Memory has a
    // valid, mappable pointer.
    const size_t n = bytes == 0 ? 1 : bytes;
    const DeviceInfo& di = info();
    if (di.max_alloc_bytes != 0 && n > di.max_alloc_bytes)
        throw Error("cannot allocate " + std::to_string(n) + " bytes on " + di.name +
                    ": larger than the device's largest allocation " + std::to_string(di.max_alloc_bytes));
    try {
        return do_allocate(n);
    } catch (const std::bad_alloc&) {
        throw Error("out of memory allocating " + std::to_string(n) + " bytes on " + di.name);
    }
}

}   // namespace dynrt
