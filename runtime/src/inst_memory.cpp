// realloc_if_needed: output buffers from the request's memory pool, reused
// while their capacity suffices, otherwise sized through the ShapePredictor.
#include <algorithm>

#include "dynrt/error.hpp"
#include "dynrt/memory_pool.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "dynrt/shape_predictor.hpp"
#include "inst_util.hpp"

namespace dynrt {

using inst_util::predictor_key;

namespace {

// True when every output is static and holds no element. Checks the dims
// directly: Layout::count() builds a Shape, and this runs on every execution.
bool all_empty(const std::vector<Layout>& outputs) {
    if (outputs.empty()) return false;
    for (const Layout& l : outputs) {
        // A dimension whose upper bound is 0 is a static 0 (this runs every run:
        // no is_static() walk first).
        bool zero = false;
        for (const Dimension& d : l.shape) zero |= d.max() == 0;
        if (!zero) return false;
    }
    return true;
}

}   // namespace

// Runs that need buffers but no kernel: a layout-only op viewing its input,
// an empty output, or an in-place target whose producers wrote their outputs
// into its buffer.
bool PrimitiveInst::skip_without_kernel() {
    if (node_.def->def.traits.view && network_.options().views && run_as_view()) return true;
    const bool empty = all_empty(params_.outputs);
    if (!empty && !inplace_.active) return false;
    if (run_.shape_changed || !outputs_[0]) realloc_if_needed();
    if (empty) {
        ++counters_.skip_empty_output;
        return true;
    }
    ++counters_.concat_inplace;
    run_.executed = true;
    has_run_ = true;
    return true;
}

namespace {

bool plain_dense(const Layout& l) { return l.format == Format::plain && l.padding.empty() && l.is_static(); }

}   // namespace

// OpTraits::view: the output is input 0's buffer under the output layout. The
// view is made again only when the input's buffer or the layout changed. Where
// no view can serve (a padded or blocked layout), the output leaves the
// input's buffer and the op's kernel runs.
bool PrimitiveInst::run_as_view() {
    const MemoryPtr& in = input_memory(0);
    const Layout& out = params_.outputs[0];
    if (!in || !plain_dense(in->layout()) || !plain_dense(out) || in->layout().bytes() != out.bytes()) {
        if (viewing_) {
            viewing_ = false;
            outputs_[0].reset();   // the kernel must not write into the input's buffer
            capacity_[0] = 0;
            realloc_if_needed();
        }
        return false;
    }
    if (!viewing_ || !outputs_[0] || outputs_[0]->buffer() != in->buffer() || outputs_[0]->offset() != in->offset() ||
        outputs_[0]->layout() != out) {
        outputs_[0] = in->reinterpret(out);
        capacity_[0] = in->capacity();
        run_.memory_changed = true;
    }
    viewing_ = true;
    ++counters_.views;
    run_.executed = true;
    has_run_ = true;
    return true;
}

// Bytes output i needs: its layout, or more under fake alignment (this op's
// kernel writes the rounded-up rows, and a user with a fake_align hook reads
// them from this buffer).
size_t PrimitiveInst::output_need(size_t i) const {
    const Layout& l = params_.outputs[i];
    size_t need = l.bytes();
    if (i == 0 && align_.aligned && !impl_.exec_params.outputs.empty())
        need = std::max(need, impl_.exec_params.outputs[0].bytes());
    for (PrimitiveInst* u : users_)
        if (!u->deps_.empty() && u->deps_[0] == this && u->node_.inputs[0].output == i)
            need = std::max(need, u->aligned_input_bytes(l));
    return need;
}

void PrimitiveInst::realloc_if_needed() {
    // An in-place target whose buffer a producer already sized this run.
    if (run_.allocation_done_by_other) return;
    for (size_t i = 0; i < params_.outputs.size(); ++i) {
        if (use_inplace_view(i)) continue;
        const Layout& l = params_.outputs[i];
        const size_t need = output_need(i);
        const bool fits = outputs_[i] && need <= capacity_[i];
        // Release a buffer far larger than the need (reclaim rule: need * 10 < capacity).
        const bool reclaim = fits && need > 0 && need * 10 < capacity_[i];
        if (fits && !reclaim) {
            predictor_.predict_preallocation_shape(predictor_key(node_.name, i), l.get_shape(), bitwidth(l.dtype), true,
                                                   l.format);
            if (outputs_[i]->layout() != l) {
                outputs_[i] = outputs_[i]->reinterpret(l);
                run_.memory_changed = true;
            }
            ++counters_.reuses;
        } else {
            if (reclaim) ++counters_.reclaims;
            allocate_output(i, l, 0, need);
        }
    }
}

void PrimitiveInst::allocate_output(size_t i, const Layout& l, size_t same_as, size_t min_bytes) {
    const std::string id = predictor_key(node_.name, i);
    const size_t need = std::max(l.bytes(), min_bytes);
    size_t size = std::max(need, same_as);
    auto prediction =
        same_as ? std::pair<bool, Shape>{false, {}}
                : predictor_.predict_preallocation_shape(id, l.get_shape(), bitwidth(l.dtype), false, l.format);
    if (prediction.first) {
        const size_t predicted = (prediction.second.count() * bitwidth(l.dtype) + 7) / 8;
        if (predicted > need && predictor_.can_preallocate(predicted)) size = predicted;
    }
    outputs_[i].reset();   // the old buffer can go back before the new one is taken
    MemoryPool::Grant grant;
    try {
        grant = pool_.acquire(size, index_, node_.is_dynamic);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    outputs_[i] = std::make_shared<Memory>(std::move(grant.buffer), l);
    // The node may use `size` bytes; the pool's record may be larger (size class).
    capacity_[i] = size;
    run_.memory_changed = true;
    ++counters_.allocations;
    ++(grant.hit ? counters_.pool_hits : counters_.pool_misses);
    counters_.bytes_allocated += size;
}

// An output buffer that an input also lives in (a variable still holding the
// buffer this node wrote last run) is replaced: the kernel must not overwrite
// what it reads. Same capacity as the buffer it replaces, so that the two
// buffers alternate through the pool instead of growing.
void PrimitiveInst::replace_read_outputs(const std::vector<MemoryPtr>& inputs) {
    if (inplace_.target && inplace_.target->inplace_.active) return;   // a view into the target
    auto reads_buffer = [&](const MemoryPtr& out) {
        for (const MemoryPtr& in : inputs)
            if (in && in->buffer() == out->buffer()) return true;
        for (const MemoryPtr& in : fusion_.inputs)
            if (in && in->buffer() == out->buffer()) return true;
        return false;
    };
    for (size_t o = 0; o < outputs_.size(); ++o)
        if (outputs_[o] && reads_buffer(outputs_[o])) allocate_output(o, params_.outputs[o], capacity_[o]);
}

// Scratch buffers (Impl::scratch_bytes) for the current impl and layouts,
// asked for when the shape or the impl changed: each grows (from the pool,
// counted like outputs) to at least the size asked for and never shrinks.
void PrimitiveInst::update_scratch() {
    const std::vector<size_t> sizes = impl_.impl->scratch_bytes(impl_.exec_special ? impl_.exec_params : params_);
    scratch_.sized_for = impl_.impl.get();
    scratch_.buffers.resize(sizes.size());
    scratch_.capacity.resize(sizes.size(), 0);
    for (size_t i = 0; i < sizes.size(); ++i) {
        const Layout l(PartialShape{Dimension(static_cast<int64_t>(sizes[i]))}, DataType::u8);
        if (scratch_.buffers[i] && sizes[i] <= scratch_.capacity[i]) {
            scratch_.buffers[i] = scratch_.buffers[i]->reinterpret(l);
            continue;
        }
        scratch_.buffers[i].reset();   // the old buffer can go back first
        MemoryPool::Grant grant;
        try {
            grant = pool_.acquire(std::max<size_t>(sizes[i], 1), index_, node_.is_dynamic);
        } catch (const Error& e) {
            throw e.with_context(ctx());
        }
        scratch_.buffers[i] = std::make_shared<Memory>(std::move(grant.buffer), l);
        scratch_.capacity[i] = std::max<size_t>(sizes[i], 1);
        ++counters_.allocations;
        ++(grant.hit ? counters_.pool_hits : counters_.pool_misses);
        counters_.bytes_allocated += scratch_.capacity[i];
    }
}

void PrimitiveInst::check_tensor_bytes(const std::vector<Layout>& layouts, const char* what) const {
    const size_t cap = network_.options().max_tensor_bytes;
    if (cap == 0) return;
    for (size_t i = 0; i < layouts.size(); ++i) {
        const size_t bytes = layouts[i].bytes();   // checked: an overflowing count throws
        if (bytes > cap)
            throw Error(std::string(what) + " " + std::to_string(i) + " would be " + layouts[i].to_string() + ": " +
                            std::to_string(bytes) + " bytes, over the per-tensor cap of " + std::to_string(cap) +
                            " bytes (NetworkOptions::max_tensor_bytes)",
                        ctx());
    }
}

Error PrimitiveInst::out_of_memory_error(const std::string& where) const {
    size_t need = 0;
    for (const Layout& l : params_.outputs)
        if (l.is_static()) need += l.bytes();
    const DeviceInfo& dev = network_.engine().info();
    const NetworkOptions& opt = network_.options();
    auto limit = [](size_t v) { return v ? std::to_string(v) + " bytes" : std::string("none"); };
    return Error("out of memory " + where + ": its outputs need " + std::to_string(need) + " bytes (" +
                     inst_util::layouts_to_string(params_.outputs) + ") on " + dev.name +
                     "; limits: largest device allocation " + limit(dev.max_alloc_bytes) + ", request budget " +
                     limit(opt.memory_budget_bytes) + " (NetworkOptions::memory_budget_bytes), per-tensor cap " +
                     limit(opt.max_tensor_bytes) + " (NetworkOptions::max_tensor_bytes)",
                 ctx());
}

}   // namespace dynrt
