// update_weights: when the impl changes, constant weights go into the format
// the new impl reads (ImplEntry::weights_format), reordered by the
// weights-reorder op and kept in a per-primitive LRU keyed by layout.
#include <algorithm>

#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

namespace {

// Two dense layouts whose storage puts every element at the same place (same
// format, or a blocked format over a dim 0 its blocks divide with nothing
// inside): a buffer of one can be reinterpreted as the other, no copy.
bool storage_compatible(const Layout& a, const Layout& b) {
    if (a.shape != b.shape || a.dtype != b.dtype || !a.padding.empty() || !b.padding.empty() || !a.is_static())
        return false;
    if (a.format == b.format) return true;
    const Shape s = a.get_shape();
    if (s.rank() == 0 || s.count() == 0) return false;
    const size_t d0 = static_cast<size_t>(s[0]);
    return s.count() / d0 == 1 && d0 % block_size(a.format) == 0 && d0 % block_size(b.format) == 0;
}

}   // namespace

bool PrimitiveInst::weights_reorderable() const {
    const OpDefinition& def = node_.def->def;
    if (!def.traits.weightable || !network_.format_converter() || def.weights_input >= deps_.size()) return false;
    return deps_[def.weights_input]->node().is_constant();
}

MemoryPtr PrimitiveInst::weights_cache_get(const Layout& l) {
    auto& cache = weights_.cache;
    for (auto it = cache.begin(); it != cache.end(); ++it) {
        if (it->first != l) continue;
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
    }
    return nullptr;
}

void PrimitiveInst::weights_cache_put(const Layout& l, MemoryPtr m) {
    auto& cache = weights_.cache;
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->first == l) {
            cache.erase(it);
            break;
        }
    cache.emplace_front(l, std::move(m));
    const size_t cap = std::max<size_t>(1, network_.options().weights_cache_capacity);
    while (cache.size() > cap) cache.pop_back();
}

// A static impl for these exact layouts first (weights do not change shape),
// device impls before host ones.
const RegisteredImpl& PrimitiveInst::pick_reorder_impl(const KernelParams& rp) const {
    const Registry& reg = *network_.program().registry();
    const std::string& type = network_.engine().info().type;
    std::vector<const RegisteredImpl*> candidates = reg.impls(rp.op->name, type);
    if (type != "cpu") {
        const std::vector<const RegisteredImpl*> host = reg.impls(rp.op->name, "cpu");
        candidates.insert(candidates.end(), host.begin(), host.end());
    }
    std::string reasons;
    for (int pass = 0; pass < 2; ++pass) {
        for (const RegisteredImpl* c : candidates) {
            if ((c->entry.shape_type == ShapeType::static_shape) != (pass == 0)) continue;
            const std::string why = c->entry.check(rp);
            if (why.empty()) return *c;
            if (pass == 0) reasons += "\n  " + c->entry.name + ": " + why;
        }
    }
    throw Error("no implementation of the weights-reorder op '" + rp.op->name + "' for " + rp.inputs.at(0).to_string() +
                    " -> " + rp.outputs.at(0).to_string() + reasons,
                ctx());
}

ImplPtr PrimitiveInst::reorder_impl(const KernelParams& rp) {
    ImplCache& cache = network_.impl_cache();
    const std::string key = ImplCache::make_key(rp);
    if (ImplPtr hit = cache.get(key)) return hit;
    const RegisteredImpl& pick = pick_reorder_impl(rp);
    ImplPtr impl;
    try {
        impl = Registry::hold(pick.entry.create(rp), pick.library);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    cache.put(key, impl);
    return impl;
}

// Called when the impl changed: the weights go into the format the new impl
// reads, from the cache when they were reordered before.
void PrimitiveInst::update_weights() {
    if (!impl_.impl || !weights_reorderable()) {
        weights_.mem.reset();
        return;
    }
    const size_t w = node_.def->def.weights_input;
    const MemoryPtr original = input_memory(w);
    const Layout& orig = original->layout();
    Layout expected = orig;
    expected.format = impl_.impl->weights_format();
    if (w < impl_.exec_params.inputs.size()) impl_.exec_params.inputs[w] = expected;
    if (expected.format == orig.format) {
        // Recorded too, so that a small cache drops stale reordered buffers.
        weights_cache_put(orig, original);
        weights_.mem = original;
        return;
    }
    if (MemoryPtr hit = weights_cache_get(expected)) {
        ++counters_.weights_cache_hits;
        weights_.mem = hit;
        return;
    }
    weights_.mem =
        storage_compatible(orig, expected) ? original->reinterpret(expected) : reorder_weights(original, expected);
    weights_cache_put(expected, weights_.mem);
}

// Runs the weights-reorder op from `original` into a new buffer of `expected`.
MemoryPtr PrimitiveInst::reorder_weights(const MemoryPtr& original, const Layout& expected) {
    const RegisteredOp& rop = *network_.format_converter();
    try {
        weights_.reorder_attrs = Attributes::validate(rop.def.attrs, rop.def.convert_format(expected.format));
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    KernelParams rp;
    rp.node = node_.name + "/weights";
    rp.op = &rop.def;
    rp.attrs = &weights_.reorder_attrs;
    rp.inputs = {original->layout()};
    rp.outputs = {expected};
    rp.engine = &network_.engine();
    ImplPtr reorder = reorder_impl(rp);
    MemoryPtr dst = std::make_shared<Memory>(weights_buffer(original, expected.bytes()), expected);
    std::vector<MemoryPtr> ins{original}, outs{dst};
    ExecContext ec{stream_, rp, ins, outs};
    try {
        reorder->execute(ec);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    ++counters_.weights_reorders;
    return dst;
}

// A full cache hands its least recently used buffer over when it is large
// enough (never the original weights); otherwise a new one.
std::shared_ptr<Buffer> PrimitiveInst::weights_buffer(const MemoryPtr& original, size_t bytes) {
    const size_t cap = std::max<size_t>(1, network_.options().weights_cache_capacity);
    if (weights_.cache.size() >= cap) {
        const MemoryPtr victim = weights_.cache.back().second;
        weights_.cache.pop_back();
        if (victim->buffer() != original->buffer() && victim->offset() == 0 && victim->buffer()->size() >= bytes)
            return victim->buffer();
    }
    try {
        return network_.engine().allocate(bytes);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
}

}   // namespace dynrt
