// update_shape and the shape-driven skips: inputs set by the request, values of
// value inputs, shape inference, shape_of subgraphs whose roots saw no change.
#include <cstring>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "inst_util.hpp"

namespace dynrt {

using inst_util::layouts_to_string;
using inst_util::strip_padding;

namespace {

bool same_bytes(const HostTensor& a, const HostTensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

}   // namespace

void PrimitiveInst::set_input_data(const HostTensor& value) {
    const Layout& declared = node_.declared;
    if (value.dtype() != declared.dtype)
        throw Error(
            std::string("input has data type ") + to_string(value.dtype()) + ", declared " + to_string(declared.dtype),
            ctx());
    if (!declared.shape.compatible(value.shape()))
        throw Error("input has shape " + value.shape().to_string() + ", declared " + declared.shape.to_string(), ctx());
    Layout l(PartialShape(value.shape()), declared.dtype, declared.format);
    check_tensor_bytes({l}, "input");
    if (!initialized_ || l != params_.outputs[0]) {
        run_.shape_changed = true;
        ++counters_.shape_changes;
        params_.outputs[0] = l;
        realloc_if_needed();
    }
    if (value.bytes() > 0) outputs_[0]->buffer()->write(stream_, value.data(), outputs_[0]->offset(), value.bytes());
    initialized_ = true;
    run_.executed = true;   // new values this run (value-input consumers re-read them)
}

// A shape_of subgraph whose shape_of roots saw no new shape computes the same
// values again: keep the last ones.
bool PrimitiveInst::skip_shape_of_subgraph() {
    if (!node_.in_shape_of_subgraph || !has_run_ || roots_.empty()) return false;
    for (const PrimitiveInst* r : roots_)
        if (r->shape_changed()) return false;
    ++counters_.skip_shape_of_subgraph;
    return true;
}

// shape_of-like ops produce the same values while their input shape holds.
bool PrimitiveInst::skip_unchanged_shape_of() const {
    return node_.def->def.traits.shape_of_like && has_run_ && !run_.shape_changed;
}

// A data-dependent output is sized for the bound again each run (the last
// run's actual shape says nothing about this one's).
void PrimitiveInst::size_for_bound() {
    if (node_.def->def.traits.data_dependent_output && !upper_outputs_.empty()) params_.outputs = upper_outputs_;
}

std::vector<const HostTensor*> PrimitiveInst::read_value_inputs() {
    const auto& vin = node_.def->def.value_inputs;
    std::vector<const HostTensor*> values(deps_.size(), nullptr);
    if (vin.empty()) return values;
    if (last_values_.size() != deps_.size()) last_values_.resize(deps_.size());
    for (size_t v : vin) {
        if (v >= deps_.size()) continue;
        // A producer that did not run this time still holds the values read last time.
        const PrimitiveInst& dep = *deps_[v];
        if (initialized_ && !dep.executed() && dep.initialized() &&
            last_values_[v].shape() == dep.output_layout(node_.inputs[v].output).get_shape()) {
            values[v] = &last_values_[v];
            continue;
        }
        const MemoryPtr& mem = input_memory(v);
        const Layout& l = mem->layout();
        HostTensor value(l.dtype, l.get_shape());
        // Waits for the producer: the value is needed on the host now.
        if (value.bytes() > 0) mem->buffer()->read(stream_, value.data(), mem->offset(), value.bytes());
        last_values_[v] = std::move(value);
        values[v] = &last_values_[v];
    }
    return values;
}

// A reader whose variable has a value: the output is that value's layout.
bool PrimitiveInst::update_state_reader_shape() {
    if (!reads_assigned_state()) return false;
    const Layout value = strip_padding(request_.variable(variable_)->layout());
    if (!initialized_ || strip_padding(params_.outputs.at(0)) != value) {
        params_.outputs[0] = value;
        run_.shape_changed = true;
        ++counters_.shape_changes;
    } else {
        ++counters_.skip_shape_unchanged;
    }
    initialized_ = true;
    return true;
}

// Values of the inputs shape inference reads (e.g. a reshape target computed
// by a shape_of subgraph): a change of value is a change of input. Ops without
// value inputs skip this (no vector built on the unchanged path).
bool PrimitiveInst::value_inputs_changed(std::vector<const HostTensor*>& values) {
    const OpDefinition& def = node_.def->def;
    if (def.value_inputs.empty()) return false;
    const std::vector<HostTensor> previous = last_values_;
    values = read_value_inputs();
    bool changed = false;
    for (size_t v : def.value_inputs) {
        if (v >= deps_.size()) continue;
        if (v >= previous.size() || !same_bytes(previous[v], last_values_[v])) changed = true;
    }
    return changed;
}

void PrimitiveInst::update_shape() {
    if (run_.update_shape_done_by_other) {
        ++counters_.skip_done_by_other;
        return;
    }
    if (update_state_reader_shape()) return;
    bool inputs_changed = !initialized_ || params_.inputs.size() != deps_.size();
    if (params_.inputs.size() != deps_.size()) params_.inputs.resize(deps_.size());
    for (size_t i = 0; i < deps_.size(); ++i) {
        const Layout& l = deps_[i]->output_layout(node_.inputs[i].output);
        if (!same_layout(params_.inputs[i], l)) {
            params_.inputs[i] = l;
            inputs_changed = true;
        }
    }
    if (node_.def->def.traits.shape_of_like && !inputs_changed) {
        ++counters_.skip_shape_of;
        return;
    }
    std::vector<const HostTensor*> values;
    inputs_changed |= value_inputs_changed(values);
    if (!inputs_changed) {
        ++counters_.skip_shape_unchanged;
        return;
    }
    infer_outputs(values);
}

void PrimitiveInst::infer_outputs(const std::vector<const HostTensor*>& known_values) {
    const OpDefinition& def = node_.def->def;
    // Shape inference sees one entry per input (nullptr: no value).
    std::vector<const HostTensor*> values = known_values;
    if (values.empty()) values.assign(deps_.size(), nullptr);
    run_.shape_changed = true;
    ++counters_.shape_changes;
    if (def.traits.data_dependent_output) ++counters_.skip_data_dependent;
    ShapeInferContext sctx{node_.name, params_.inputs, node_.attrs, values};
    sctx.run_time = true;
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
    check_tensor_bytes(outs, "output");
    if (def.traits.data_dependent_output) upper_outputs_ = outs;
    params_.outputs = std::move(outs);
    initialized_ = true;
}

}   // namespace dynrt
