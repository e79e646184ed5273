// Request state (OpTraits::reads_state / writes_state): readers alias the
// request's variable (or copy it into an in-place view), writers stage their
// input as the variable's next value.
#include <cstring>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

namespace {

// Byte address of element 0 and byte strides of a (static) view.
struct Addressing {
    size_t base = 0;
    std::vector<size_t> strides;
};

Addressing addressing(const Memory& m) {
    const Layout& l = m.layout();
    const Shape padded = l.padded_shape();
    Addressing a;
    a.strides.assign(padded.rank(), byte_size(l.dtype));
    for (size_t d = padded.rank(); d-- > 1;) a.strides[d - 1] = a.strides[d] * static_cast<size_t>(padded[d]);
    a.base = m.offset();
    for (size_t d = 0; d < l.padding.lower.size() && d < a.strides.size(); ++d)
        a.base += static_cast<size_t>(l.padding.lower[d]) * a.strides[d];
    return a;
}

// True when two views of one buffer put every element at the same address (a
// copy between them would be a no-op).
bool same_elements(const Memory& a, const Memory& b) {
    if (a.buffer() != b.buffer() || a.layout().dtype != b.layout().dtype) return false;
    const Shape sa = a.layout().get_shape();
    if (sa != b.layout().get_shape()) return false;
    if (sa.count() == 0) return true;
    const Addressing x = addressing(a), y = addressing(b);
    if (x.base != y.base) return false;
    for (size_t d = 0; d < sa.rank(); ++d)
        if (sa[d] > 1 && x.strides[d] != y.strides[d]) return false;
    return true;
}

// Byte offset of row r (all dims but the last) of `shape` in a view with addressing a.
size_t row_offset(const Shape& shape, const Addressing& a, size_t r) {
    size_t off = a.base;
    for (size_t d = shape.rank() >= 1 ? shape.rank() - 1 : 0; d-- > 0;) {
        const size_t ext = static_cast<size_t>(shape[d]);
        off += (r % ext) * a.strides[d];
        r /= ext;
    }
    return off;
}

// Copies the elements of `src` into `dst` (same dtype and logical shape; either
// may be padded). Goes through a host staging copy, so the two may overlap in
// one buffer. Returns the bytes copied.
size_t copy_elements(Stream& stream, const Memory& src, const Memory& dst) {
    const Shape shape = src.layout().get_shape();
    const size_t esize = byte_size(src.layout().dtype);
    const size_t n = shape.count();
    if (n == 0) return 0;
    const size_t row = shape.rank() ? static_cast<size_t>(shape[shape.rank() - 1]) : 1;
    const size_t rows = n / row;
    const Addressing as = addressing(src), ad = addressing(dst);
    std::vector<uint8_t> staging(n * esize);
    auto* from = static_cast<const uint8_t*>(src.buffer()->map(stream));
    for (size_t r = 0; r < rows; ++r)
        std::memcpy(staging.data() + r * row * esize, from + row_offset(shape, as, r), row * esize);
    src.buffer()->unmap(stream);
    auto* to = static_cast<uint8_t*>(dst.buffer()->map(stream));
    for (size_t r = 0; r < rows; ++r)
        std::memcpy(to + row_offset(shape, ad, r), staging.data() + r * row * esize, row * esize);
    dst.buffer()->unmap(stream);
    return n * esize;
}

}   // namespace

void PrimitiveInst::on_state_reset() {
    if (!node_.is_op() || !node_.def->def.traits.reads_state) return;
    // The output may alias the forgotten value: start again from the initial value.
    for (auto& o : outputs_) o.reset();
    capacity_.assign(capacity_.size(), 0);
    initialized_ = false;
}

bool PrimitiveInst::reads_assigned_state() const {
    return node_.def->def.traits.reads_state && request_.variable(variable_) != nullptr;
}

// A reader with a value, or a writer: no kernel runs.
bool PrimitiveInst::run_state_op() {
    if (reads_assigned_state()) {
        read_state();
        return true;
    }
    if (!node_.def->def.traits.writes_state) return false;
    write_state();
    return true;
}

void PrimitiveInst::read_state() {
    MemoryPtr value = request_.variable(variable_);
    if (inplace_.target && inplace_.target->inplace_.active) {
        // The output is a view into the target's buffer; the value is usually
        // there already (the variable is last run's target output).
        if (run_.shape_changed || !outputs_[0]) realloc_if_needed();
        if (!same_elements(*value, *outputs_[0])) {
            try {
                counters_.state_bytes_copied += copy_elements(stream_, *value, *outputs_[0]);
            } catch (const Error& e) {
                throw e.with_context(ctx());
            }
        }
    } else if (outputs_[0] != value) {
        outputs_[0] = value;
        capacity_[0] = value->capacity();
        run_.memory_changed = true;
    }
    run_.executed = true;
    has_run_ = true;
}

void PrimitiveInst::write_state() {
    // The output aliases the input (no kernel); the value is committed at the end
    // of the run.
    MemoryPtr in = input_memory(0);
    if (!in) throw Error("state writer has no input value", ctx());
    if (outputs_[0] != in) {
        outputs_[0] = in;
        capacity_[0] = in->capacity();
        run_.memory_changed = true;
    }
    request_.stage_assign(variable_, in, ctx());
    run_.executed = true;
    has_run_ = true;
}

}   // namespace dynrt
