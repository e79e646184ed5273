// update_impl: the impl cache, the choice between the shape-agnostic impl and a
// static build (synchronous, or in the background for critical ops), and
// picking finished background builds up on later runs.
#include <algorithm>
#include <cstdio>

#include "dynrt/compilation_context.hpp"
#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "inst_util.hpp"

namespace dynrt {

namespace {

// What a shape-agnostic impl is specialised on besides the entry: the fused
// post-ops' ops, attributes and input ranks and types (device impls generate
// code for them).
std::string fused_signature(const KernelParams& p) {
    std::string s;
    for (const auto& f : p.fused_ops) {
        s += f.op ? f.op->name : std::string("?");
        s += f.attrs ? f.attrs->to_string() : std::string("{}");
        s += '#' + std::to_string(f.main_input);
        for (const auto& l : f.inputs) s += std::string(":") + to_string(l.dtype) + std::to_string(l.shape.rank());
        s += ';';
    }
    return s;
}

// Impls reading reordered weights are created with the weights' new layout.
KernelParams params_for(const KernelParams& req, bool reorder_weights, size_t weights_input, const ImplEntry& e) {
    KernelParams p = req;
    if (reorder_weights && weights_input < p.inputs.size()) p.inputs[weights_input].format = e.weights_format;
    return p;
}

ImplPtr create_impl(const RegisteredImpl& r, const KernelParams& p, const ErrorContext& where) {
    try {
        return Registry::hold(r.entry.create(p), r.library);
    } catch (const Error& e) {
        throw e.with_context(where);
    }
}

}   // namespace

// The shape (or the impl's inputs) changed: choose the impl again, then the
// weights it reads and the output buffers.
void PrimitiveInst::choose_impl() {
    try {
        update_impl();
    } catch (const Error& e) {
        // A fused node running on its own (its producer's impl could not take
        // it) without an impl of its own: nothing can run it.
        if (!fusion_.into) throw;
        throw Error("fused into '" + fusion_.into->name() + "' and cannot run unfused either: " + e.message(), ctx());
    }
    if (run_.impl_changed || !weights_.mem) update_weights();
    lap(FlowStep::impl);
    realloc_if_needed();
    lap(FlowStep::memory);
}

// Same shapes as last run while a background static build is pending.
void PrimitiveInst::pick_up_async_build() {
    // Another run of the same shapes: time to queue a deferred build?
    if (impl_.deferred && count_visit(impl_.key) >= network_.options().async_compile_after) {
        queue_static_build(*impl_.deferred->impl, impl_.deferred->params, impl_.key);
        impl_.deferred.reset();
    }
    // A background static build for the current shapes may have finished.
    ImplPtr built = network_.impl_cache().get(impl_.key);
    if (!built) return;
    impl_.impl = std::move(built);
    impl_.waiting_async = false;
    ++counters_.async_builds_picked;
    on_impl_changed();
    update_weights();
}

// Every switch of impl gives this request a fresh state of the new impl.
void PrimitiveInst::on_impl_changed() {
    run_.impl_changed = true;
    ++counters_.impl_changes;
    impl_.state = impl_.impl->create_state();
}

std::vector<const RegisteredImpl*> PrimitiveInst::impl_candidates() const {
    const Registry& reg = *network_.program().registry();
    const std::string& type = network_.engine().info().type;
    // Device impls first, host impls as the fallback; shape_of subgraphs (small
    // integer tensors read back by shape inference) prefer the host.
    std::vector<const RegisteredImpl*> candidates = reg.impls(node_.op, type);
    if (type != "cpu") {
        std::vector<const RegisteredImpl*> host = reg.impls(node_.op, "cpu");
        const bool host_first = node_.in_shape_of_subgraph || node_.def->def.traits.shape_of_like;
        candidates.insert(host_first ? candidates.begin() : candidates.end(), host.begin(), host.end());
    }
    if (network_.options().host_reference_only)
        candidates.erase(
            std::remove_if(candidates.begin(), candidates.end(),
                           [](const RegisteredImpl* c) { return c->entry.impl_type == "cpu" && !c->entry.reference; }),
            candidates.end());
    return candidates;
}

void PrimitiveInst::update_impl() {
    // The params the impl is chosen, keyed and created with: params_ plus the
    // fused ops and the fake alignment. Impls reading reordered weights are
    // created with the weights' new layout, so the key says whether the
    // weights can be reordered (constant) at all.
    const KernelParams req = request_params();
    const bool reorder_weights = weights_reorderable();
    if (keeps_dynamic_impl(req, reorder_weights)) {
        impl_.key.clear();
        impl_.exec_params = req;
        impl_.exec_special = align_.aligned || !req.fused_ops.empty() || reorder_weights;
        return;
    }
    const std::string key = ImplCache::make_key(req) + (reorder_weights ? "|reordered-weights" : "");
    const ImplPtr previous = impl_.impl;
    if (ImplPtr cached = network_.impl_cache().get(key)) {
        ++counters_.impl_cache_hits;
        impl_.impl = std::move(cached);
        impl_.waiting_async = false;
        impl_.deferred.reset();
    } else {
        ++counters_.impl_cache_misses;
        build_impl(req, key, reorder_weights);
    }
    impl_.key = key;
    impl_.exec_params = req;
    impl_.exec_special = align_.aligned || !req.fused_ops.empty() || reorder_weights;
    if (impl_.impl != previous) on_impl_changed();
}

// A node on its shape-agnostic impl that gets no static builds (not a
// critical op, or an impl that makes them redundant) takes new layouts as
// they come: no impl-cache key or lookup (the cache cannot hold a static impl
// for it), only its entry's check, while the fused ops are of the kind the
// impl was created for (fused_signature).
bool PrimitiveInst::keeps_dynamic_impl(const KernelParams& req, bool reorder_weights) const {
    if (!impl_.impl || impl_.impl != impl_.dynamic_impl || !impl_.dynamic_entry) return false;
    if (node_.def->def.traits.critical && !impl_.impl->static_builds_redundant()) return false;
    if (reorder_weights != impl_.dynamic_reordered) return false;
    const std::vector<FusedOpDesc>& was = impl_.exec_params.fused_ops;
    if (req.fused_ops.size() != was.size()) return false;
    for (size_t i = 0; i < was.size(); ++i) {
        const FusedOpDesc &a = req.fused_ops[i], &b = was[i];
        if (a.op != b.op || a.attrs != b.attrs || a.main_input != b.main_input || a.inputs.size() != b.inputs.size())
            return false;
        for (size_t k = 0; k < a.inputs.size(); ++k)
            if (a.inputs[k].dtype != b.inputs[k].dtype || a.inputs[k].shape.rank() != b.inputs[k].shape.rank())
                return false;
    }
    return impl_.dynamic_entry->entry.check(req).empty();
}

// Impl-cache miss: the first dynamic and the first static candidate that
// validate, then the dynamic impl (dynamic nodes) or a static build.
void PrimitiveInst::build_impl(const KernelParams& req, const std::string& key, bool reorder_weights) {
    const NetworkOptions& opt = network_.options();
    const RegisteredImpl* dyn = nullptr;
    const RegisteredImpl* stat = nullptr;
    std::string reasons;
    for (const RegisteredImpl* c : impl_candidates()) {
        const std::string why = c->entry.check(req);
        if (!why.empty()) reasons += "\n  " + c->entry.name + ": " + why;
        else if (c->entry.shape_type == ShapeType::dynamic_shape) dyn = dyn ? dyn : c;
        else stat = stat ? stat : c;
    }
    if (opt.verbose && !reasons.empty())
        std::fprintf(stderr, "[dynrt] %s (%s): impls skipped:%s\n", node_.name.c_str(), node_.op.c_str(),
                     reasons.c_str());
    // A producer writing into an in-place target gets a new padding whenever
    // the target grows: like a dynamic node it takes the shape-agnostic impl,
    // and a static build for one padding would not be reused.
    const bool inplace_view = inplace_.target && inplace_.target->inplace_.active;
    const bool critical = node_.def->def.traits.critical && !inplace_view;
    const bool use_dynamic =
        dyn && opt.use_dynamic_impls && (node_.is_dynamic || inplace_view) && !(critical && stat && !opt.async_compile);
    if (use_dynamic) return use_dynamic_impl(*dyn, critical ? stat : nullptr, req, key, reorder_weights);
    if (!stat)
        throw Error("no implementation of op '" + node_.op + "' on device '" + network_.engine().info().type +
                        "' for " + inst_util::layouts_to_string(params_.inputs) + " -> " +
                        inst_util::layouts_to_string(params_.outputs) +
                        (reasons.empty() ? std::string(" (none registered)") : ":" + reasons),
                    ctx());
    impl_.impl = create_impl(*stat, params_for(req, reorder_weights, node_.def->def.weights_input, stat->entry), ctx());
    network_.impl_cache().put(key, impl_.impl);
    ++counters_.static_builds;
    impl_.waiting_async = false;
    impl_.deferred.reset();
}

// The shape-agnostic impl (one per entry and fused-op set); a critical op with
// a static candidate also gets a background static build of it, unless the
// dynamic impl is as fast (Impl::static_builds_redundant).
void PrimitiveInst::use_dynamic_impl(const RegisteredImpl& dyn, const RegisteredImpl* stat, const KernelParams& req,
                                     const std::string& key, bool reorder_weights) {
    const NetworkOptions& opt = network_.options();
    const size_t w_in = node_.def->def.weights_input;
    const std::string sig = dyn.entry.name + "|" + fused_signature(req);
    if (!impl_.dynamic_impl || sig != impl_.dynamic_sig) {
        impl_.dynamic_impl = create_impl(dyn, params_for(req, reorder_weights, w_in, dyn.entry), ctx());
        impl_.dynamic_sig = sig;
        impl_.dynamic_entry = &dyn;
        impl_.dynamic_reordered = reorder_weights;
    }
    impl_.impl = impl_.dynamic_impl;
    impl_.waiting_async = false;
    impl_.deferred.reset();
    if (!stat || !opt.async_compile || !network_.compilation_context()) return;
    if (impl_.dynamic_impl->static_builds_redundant()) return;
    if (count_visit(key) >= opt.async_compile_after)
        queue_static_build(*stat, params_for(req, reorder_weights, w_in, stat->entry), key);
    else impl_.deferred = DeferredBuild{stat, params_for(req, reorder_weights, w_in, stat->entry)};
    impl_.waiting_async = true;
}

uint32_t PrimitiveInst::count_visit(const std::string& key) {
    // Bounded: a sequence of ever new shapes forgets the oldest counts at once.
    if (impl_.key_visits.size() >= 4096) impl_.key_visits.clear();
    return ++impl_.key_visits[key];
}

void PrimitiveInst::queue_static_build(const RegisteredImpl& impl, const KernelParams& params, const std::string& key) {
    ImplCache* cache = &network_.impl_cache();
    std::shared_ptr<void> lib = impl.library;
    const ImplEntry* entry = &impl.entry;
    const bool queued = network_.compilation_context()->push(key, [params, cache, lib, entry, key] {
        if (cache->contains(key)) return;   // built meanwhile
        cache->put(key, Registry::hold(entry->create(params), lib));
    });
    if (queued) ++counters_.async_builds_queued;
}

}   // namespace dynrt
