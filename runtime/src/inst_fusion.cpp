// Fusion: a producer with a fused chain (Network::fused_chain) infers the
// chain's shapes and, when its impl can serve them, runs the post-ops in its
// own kernel; the fused nodes then only alias its output. Otherwise they run
// as their own primitives (the unfused subgraph).
#include <cstdio>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// The producer, right after its own update_shape: infers the chain's shapes
// (each fused node is then marked done) and decides whether its impl runs the
// post-ops this time. The decision holds while no shape changes.
void PrimitiveInst::prepare_fusion() {
    bool changed = run_.shape_changed || !fusion_.decided;
    for (PrimitiveInst* f : fusion_.chain) {
        if (!f->run_.update_shape_done_by_other) {
            f->update_shape();
            f->run_.update_shape_done_by_other = true;
        }
        changed |= f->run_.shape_changed;
    }
    if (!changed) return;
    fusion_.decided = true;
    params_.fused_ops.clear();
    std::vector<FusedOpDesc> descs;
    const std::string why = fusion_blocker(descs);
    const bool ok = why.empty();
    if (!ok && network_.options().verbose)
        std::fprintf(stderr, "[dynrt] %s (%s): runs unfused: %s\n", node_.name.c_str(), node_.op.c_str(), why.c_str());
    if (ok) params_.fused_ops = std::move(descs);
    // The impl key holds the fused ops: choose again. Fused nodes leaving the
    // producer's buffer need buffers (and impls) of their own.
    run_.shape_changed = true;
    if (ok != fusion_.active) {
        for (PrimitiveInst* f : fusion_.chain) {
            f->run_.shape_changed = true;
            if (!ok) {
                f->outputs_[0].reset();
                f->capacity_[0] = 0;
            }
        }
    }
    fusion_.active = ok;
}

std::string PrimitiveInst::fusion_blocker(std::vector<FusedOpDesc>& descs) {
    const Layout* running = &params_.outputs.at(0);
    if (!running->is_static()) return "output is not static";
    for (size_t j = 0; j < fusion_.chain.size(); ++j) {
        PrimitiveInst* f = fusion_.chain[j];
        const Layout& out = f->params_.outputs.at(0);
        // The other inputs must broadcast into the running result without
        // growing it: the post-op writes where the result is.
        if (out.shape != running->shape || out.dtype != running->dtype)
            return "'" + f->name() + "' makes " + out.to_string() + " from " + running->to_string() +
                   ": its other inputs do not broadcast into the result";
        for (size_t k = 0; k < f->params_.inputs.size(); ++k)
            if (k != fusion_.main_input[j] && !f->params_.inputs[k].padding.empty())
                return "input " + std::to_string(k) + " of '" + f->name() + "' is padded";
        ImplPtr host = f->fused_host_impl();
        if (!host) return "'" + f->name() + "' has no host impl to run as a post-op";
        FusedOpDesc d;
        d.node = f->name();
        d.op = &f->node_.def->def;
        d.attrs = &f->node_.attrs;
        d.inputs = f->params_.inputs;
        d.main_input = fusion_.main_input[j];
        d.output = out;
        d.host_impl = std::move(host);
        descs.push_back(std::move(d));
        running = &out;
    }
    return fused_impl_blocker(descs);
}

// The impl that would serve this primitive alone must take the post-ops too:
// a slower impl only to fuse does not pay.
std::string PrimitiveInst::fused_impl_blocker(const std::vector<FusedOpDesc>& descs) const {
    KernelParams fused = params_;
    fused.fused_ops = descs;
    for (const RegisteredImpl* c : impl_candidates()) {
        if (!c->entry.check(params_).empty()) continue;
        const std::string why = c->entry.check(fused);
        return why.empty() ? std::string() : c->entry.name + ": " + why;
    }
    return "no impl serves '" + node_.name + "'";
}

ImplPtr PrimitiveInst::fused_host_impl() {
    if (fusion_.host_impl) return fusion_.host_impl;
    const Registry& reg = *network_.program().registry();
    for (const RegisteredImpl* c : reg.impls(node_.op, "cpu")) {
        if (c->entry.shape_type != ShapeType::dynamic_shape || !c->entry.check(params_).empty()) continue;
        try {
            fusion_.host_impl = Registry::hold(c->entry.create(params_), c->library);
        } catch (const Error& e) {
            throw e.with_context(ctx());
        }
        break;
    }
    return fusion_.host_impl;
}

// A fused node whose producer ran it as a post-op: only its view changes.
void PrimitiveInst::take_fused_output() {
    update_shape();   // done by the producer
    const MemoryPtr& m = fusion_.into->outputs_.at(0);
    if (m && (!outputs_[0] || outputs_[0]->buffer() != m->buffer() || outputs_[0]->offset() != m->offset() ||
              !same_layout(outputs_[0]->layout(), params_.outputs[0]))) {
        outputs_[0] = std::make_shared<Memory>(m->buffer(), params_.outputs[0], m->offset());
        run_.memory_changed = true;
    }
    capacity_[0] = fusion_.into->capacity_[0];
    initialized_ = true;
    run_.executed = true;
    has_run_ = true;
}

// The fused ops' other inputs, in order (their producers ran already).
void PrimitiveInst::collect_fused_inputs() {
    fusion_.inputs.clear();
    if (!fusion_.active) return;
    for (size_t j = 0; j < fusion_.chain.size(); ++j)
        for (size_t k = 0; k < fusion_.chain[j]->deps_.size(); ++k)
            if (k != fusion_.main_input[j]) fusion_.inputs.push_back(fusion_.chain[j]->input_memory(k));
}

}   // namespace dynrt
