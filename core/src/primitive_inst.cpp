// The per-primitive execution flow (see primitive_inst.hpp for the outline).
#include "dynrt/primitive_inst.hpp"

#include <cstdio>

#include "dynrt/compilation_context.hpp"
#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "dynrt/shape_predictor.hpp"

namespace dynrt {

namespace {

std::string layouts_to_string(const std::vector<Layout>& ls) {
    std::string s;
    for (size_t i = 0; i < ls.size(); ++i) s += (i ? ", " : "") + ls[i].to_string();
    return s;
}

// ShapePredictor key of output i: the node name, "_out<i>" appended for i > 0.
std::string predictor_key(const std::string& node, size_t i) {
    return i == 0 ? node : node + "_out" + std::to_string(i);
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

}  // namespace

PrimitiveInst::PrimitiveInst(Network& network, ShapePredictor& predictor, Stream& stream, size_t node_index)
    : network_(network), predictor_(predictor), stream_(stream), node_(network.program().nodes()[node_index]) {
    params_.node = node_.name;
    params_.op = &node_.def->def;
    params_.attrs = &node_.attrs;
    params_.engine = &network.engine();
    params_.outputs = node_.out_layouts;
    outputs_.resize(node_.out_layouts.size());
    capacity_.assign(node_.out_layouts.size(), 0);
    if (node_.def->def.traits.is_constant) {
        outputs_[0] = network.constant_memory(node_index);
        capacity_[0] = outputs_[0]->capacity();
        initialized_ = true;
        has_run_ = true;
    }
}

ErrorContext PrimitiveInst::ctx() const {
    ErrorContext c = node_.where;
    c.node = node_.name;
    c.op = node_.op;
    return c;
}

void PrimitiveInst::begin_run() {
    counters_ = Counters{};
    shape_changed_ = false;
    executed_ = false;
    update_shape_done_by_other_ = false;
    impl_changed_ = false;
    memory_changed_ = false;
}

MemoryPtr PrimitiveInst::input_memory(size_t i) const {
    return deps_[i]->output_memory(node_.inputs[i].output);
}

void PrimitiveInst::set_input_data(const HostTensor& value) {
    const Layout& declared = node_.declared;
    if (value.dtype() != declared.dtype)
        throw Error(std::string("input has data type ") + to_string(value.dtype()) + ", declared " +
                        to_string(declared.dtype),
                    ctx());
    if (!declared.shape.compatible(value.shape()))
        throw Error("input has shape " + value.shape().to_string() + ", declared " + declared.shape.to_string(),
                    ctx());
    Layout l(PartialShape(value.shape()), declared.dtype, declared.format);
    if (!initialized_ || l != params_.outputs[0]) {
        shape_changed_ = true;
        ++counters_.shape_changes;
        params_.outputs[0] = l;
        realloc_if_needed();
    }
    if (value.bytes() > 0) outputs_[0]->buffer()->write(stream_, value.data(), outputs_[0]->offset(), value.bytes());
    initialized_ = true;
    executed_ = true;   // new values this run (value-input consumers re-read them)
}

void PrimitiveInst::execute() {
    const OpTraits& t = node_.def->def.traits;
    if (t.is_input || t.is_constant) return;

    // A shape_of subgraph whose shape_of roots saw no new shape computes the same
    // values again: keep the last ones.
    if (node_.in_shape_of_subgraph && has_run_ && !roots_.empty()) {
        bool unchanged = true;
        for (const PrimitiveInst* r : roots_) unchanged &= !r->shape_changed();
        if (unchanged) {
            ++counters_.skip_shape_of_subgraph;
            return;
        }
    }

    update_shape();

    // shape_of-like ops produce the same values while their input shape holds.
    if (t.shape_of_like && has_run_ && !shape_changed_) return;

    bool empty = !params_.outputs.empty();
    for (const auto& l : params_.outputs) empty &= l.is_static() && l.count() == 0;
    if (empty) {
        if (shape_changed_ || !outputs_[0]) realloc_if_needed();
        ++counters_.skip_empty_output;
        return;
    }

    if (shape_changed_ || !impl_) {
        update_impl();
        realloc_if_needed();
    } else if (waiting_async_) {
        // A background static build for the current shapes may have finished.
        if (ImplPtr built = network_.impl_cache().get(impl_key_)) {
            impl_ = std::move(built);
            waiting_async_ = false;
            impl_changed_ = true;
            ++counters_.async_builds_picked;
            ++counters_.impl_changes;
        }
    }
    if (impl_changed_ || memory_changed_) ++counters_.set_arguments;

    std::vector<MemoryPtr> inputs(deps_.size());
    for (size_t i = 0; i < deps_.size(); ++i) inputs[i] = input_memory(i);
    ExecContext ec{stream_, params_, inputs, outputs_};
    if (t.data_dependent_output) {
        actual_outputs_ = params_.outputs;
        ec.actual_outputs = &actual_outputs_;
    }
    try {
        impl_->execute(ec);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    } catch (const std::exception& e) {
        throw Error(std::string("execution failed: ") + e.what(), ctx());
    }
    if (t.data_dependent_output) {
        for (size_t i = 0; i < outputs_.size(); ++i) {
            if (actual_outputs_[i] != params_.outputs[i]) {
                if (actual_outputs_[i].bytes() > capacity_[i])
                    throw Error("impl reported an output larger than its buffer: " + actual_outputs_[i].to_string(),
                                ctx());
                params_.outputs[i] = actual_outputs_[i];
                outputs_[i] = outputs_[i]->reinterpret(actual_outputs_[i]);
                shape_changed_ = true;
            }
        }
    }
    ++counters_.executions;
    if (impl_->is_dynamic()) ++counters_.dynamic_impl_runs;
    executed_ = true;
    has_run_ = true;
}

std::vector<const HostTensor*> PrimitiveInst::read_value_inputs() {
    const auto& vin = node_.def->def.value_inputs;
    std::vector<const HostTensor*> values(deps_.size(), nullptr);
    if (vin.empty()) return values;
    if (last_values_.size() != deps_.size()) last_values_.resize(deps_.size());
    for (size_t v : vin) {
        if (v >= deps_.size()) continue;
        // A producer that did not run this time still holds the values read last time.
        if (initialized_ && !deps_[v]->executed() && last_values_[v].shape() == deps_[v]->output_layout(node_.inputs[v].output).get_shape() &&
            deps_[v]->initialized()) {
            values[v] = &last_values_[v];
            continue;
        }
        const MemoryPtr& mem = input_memory(v);
        const Layout& l = mem->layout();
        HostTensor value(l.dtype, l.get_shape());
        if (value.bytes() > 0) {
            // Waits for the producer: the value is needed on the host now.
            mem->buffer()->read(stream_, value.data(), mem->offset(), value.bytes());
        }
        last_values_[v] = std::move(value);
        values[v] = &last_values_[v];
    }
    return values;
}

void PrimitiveInst::update_shape() {
    if (update_shape_done_by_other_) {
        ++counters_.skip_done_by_other;
        return;
    }
    const OpDefinition& def = node_.def->def;

    bool inputs_changed = !initialized_ || params_.inputs.size() != deps_.size();
    if (params_.inputs.size() != deps_.size()) params_.inputs.resize(deps_.size());
    for (size_t i = 0; i < deps_.size(); ++i) {
        const Layout& l = deps_[i]->output_layout(node_.inputs[i].output);
        if (params_.inputs[i] != l) {
            params_.inputs[i] = l;
            inputs_changed = true;
        }
    }

    if (def.traits.shape_of_like && !inputs_changed) {
        ++counters_.skip_shape_of;
        return;
    }

    // Values of the inputs shape inference reads (e.g. a reshape target computed
    // by a shape_of subgraph): a change of value is a change of input.
    std::vector<HostTensor> previous;
    if (!def.value_inputs.empty()) previous = last_values_;
    std::vector<const HostTensor*> values = read_value_inputs();
    for (size_t v : def.value_inputs) {
        if (v >= deps_.size()) continue;
        if (v >= previous.size() || !same_bytes(previous[v], last_values_[v])) inputs_changed = true;
    }

    if (!inputs_changed) {
        ++counters_.skip_shape_unchanged;
        return;
    }
    shape_changed_ = true;
    ++counters_.shape_changes;
    if (def.traits.data_dependent_output) ++counters_.skip_data_dependent;

    ShapeInferContext sctx{node_.name, params_.inputs, node_.attrs, values};
    std::vector<Layout> outs;
    try {
        outs = def.infer(sctx);
    } catch (const Error& e) {
        throw Error(e.message() + " (input layouts: " + layouts_to_string(params_.inputs) + ")", ctx())
            .with_context(e.context());
    }
    ++counters_.update_shape_runs;
    if (outs.size() != params_.outputs.size())
        throw Error("shape inference returned " + std::to_string(outs.size()) + " outputs, expected " +
                        std::to_string(params_.outputs.size()),
                    ctx());
    for (size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i].is_static())
            throw Error("shape inference left output " + std::to_string(i) + " dynamic: " + outs[i].to_string() +
                            " (input layouts: " + layouts_to_string(params_.inputs) + ")",
                        ctx());
    }
    params_.outputs = std::move(outs);
    initialized_ = true;
}

void PrimitiveInst::update_impl() {
    const NetworkOptions& opt = network_.options();
    ImplCache& cache = network_.impl_cache();
    const std::string key = ImplCache::make_key(params_);
    const ImplPtr previous = impl_;

    if (ImplPtr cached = cache.get(key)) {
        ++counters_.impl_cache_hits;
        impl_ = std::move(cached);
        waiting_async_ = false;
    } else {
        ++counters_.impl_cache_misses;
        const Registry& reg = *network_.program().registry();
        const std::string& type = network_.engine().info().type;
        const RegisteredImpl* dyn = nullptr;
        const RegisteredImpl* stat = nullptr;
        std::string reasons;
        // Device impls first, host impls as the fallback; shape_of subgraphs (small
        // integer tensors read back by shape inference) prefer the host.
        std::vector<const RegisteredImpl*> candidates = reg.impls(node_.op, type);
        if (type != "cpu") {
            std::vector<const RegisteredImpl*> host = reg.impls(node_.op, "cpu");
            const bool host_first = node_.in_shape_of_subgraph || node_.def->def.traits.shape_of_like;
            candidates.insert(host_first ? candidates.begin() : candidates.end(), host.begin(), host.end());
        }
        for (const RegisteredImpl* c : candidates) {
            std::string why = c->entry.check(params_);
            if (why.empty()) {
                if (c->entry.shape_type == ShapeType::dynamic_shape) {
                    if (!dyn) dyn = c;
                } else if (!stat) {
                    stat = c;
                }
            } else {
                reasons += "\n  " + c->entry.name + ": " + why;
            }
        }
        if (opt.verbose && !reasons.empty())
            std::fprintf(stderr, "[dynrt] %s (%s): impls skipped:%s\n", node_.name.c_str(), node_.op.c_str(),
                         reasons.c_str());

        const bool critical = node_.def->def.traits.critical;
        const bool use_dynamic = dyn && opt.use_dynamic_impls && node_.is_dynamic &&
                                 !(critical && stat && !opt.async_compile);
        if (use_dynamic) {
            if (!dynamic_impl_) {
                try {
                    dynamic_impl_ = Registry::hold(dyn->entry.create(params_), dyn->library);
                } catch (const Error& e) {
                    throw e.with_context(ctx());
                }
            }
            impl_ = dynamic_impl_;
            waiting_async_ = false;
            if (critical && stat && opt.async_compile && network_.compilation_context()) {
                KernelParams p = params_;
                ImplCache* cache_ptr = &cache;
                std::shared_ptr<void> lib = stat->library;
                const ImplEntry* entry = &stat->entry;
                const bool queued = network_.compilation_context()->push(key, [p, cache_ptr, lib, entry, key] {
                    if (cache_ptr->contains(key)) return;   // built meanwhile
                    cache_ptr->put(key, Registry::hold(entry->create(p), lib));
                });
                if (queued) ++counters_.async_builds_queued;
                waiting_async_ = true;
            }
        } else if (stat) {
            try {
                impl_ = Registry::hold(stat->entry.create(params_), stat->library);
            } catch (const Error& e) {
                throw e.with_context(ctx());
            }
            cache.put(key, impl_);
            ++counters_.static_builds;
        } else {
            throw Error("no implementation of op '" + node_.op + "' on device '" + type + "' for " +
                            layouts_to_string(params_.inputs) + " -> " + layouts_to_string(params_.outputs) +
                            (reasons.empty() ? std::string(" (none registered)") : ":" + reasons),
                        ctx());
        }
    }
    impl_key_ = key;
    if (impl_ != previous) {
        impl_changed_ = true;
        ++counters_.impl_changes;
    }
}

void PrimitiveInst::realloc_if_needed() {
    for (size_t i = 0; i < params_.outputs.size(); ++i) {
        const Layout& l = params_.outputs[i];
        const size_t need = l.bytes();
        const bool fits = outputs_[i] && need <= capacity_[i];
        // Release a buffer far larger than the need (reclaim rule: need * 10 < capacity).
        const bool reclaim = fits && need > 0 && need * 10 < capacity_[i];
        if (fits && !reclaim) {
            predictor_.predict_preallocation_shape(predictor_key(node_.name, i), l.get_shape(), bitwidth(l.dtype), true, l.format);
            if (outputs_[i]->layout() != l) {
                outputs_[i] = outputs_[i]->reinterpret(l);
                memory_changed_ = true;
            }
            ++counters_.reuses;
        } else {
            if (reclaim) ++counters_.reclaims;
            allocate_output(i, l);
        }
    }
}

void PrimitiveInst::allocate_output(size_t i, const Layout& l) {
    const std::string id = predictor_key(node_.name, i);
    const size_t need = l.bytes();
    size_t size = need;
    auto prediction = predictor_.predict_preallocation_shape(id, l.get_shape(), bitwidth(l.dtype), false, l.format);
    if (prediction.first) {
        const size_t predicted = (prediction.second.count() * bitwidth(l.dtype) + 7) / 8;
        if (predicted > need && predictor_.can_preallocate(predicted)) size = predicted;
    }
    outputs_[i].reset();   // the old buffer can go back before the new one is taken
    std::shared_ptr<Buffer> buffer;
    try {
        buffer = network_.engine().allocate(size);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    outputs_[i] = std::make_shared<Memory>(std::move(buffer), l);
    capacity_[i] = outputs_[i]->capacity();
    memory_changed_ = true;
    ++counters_.allocations;
    counters_.bytes_allocated += size;
}

}  // namespace dynrt
