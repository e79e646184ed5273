// Binding the buffers and running the impl: input views (weights, fused-op
// inputs, fake-aligned rows), the impl's execute, data-dependent read-back and
// the execution counters.
#include <new>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

namespace {

// The input views live in a member vector (no allocation per execution) and
// are released when the execution ends, as a local vector's would be: a view
// kept alive holds its buffer in the memory pool.
struct ReleaseViews {
    std::vector<MemoryPtr>& views;
    ~ReleaseViews() {
        for (MemoryPtr& m : views) m.reset();
    }
};

}   // namespace

void PrimitiveInst::run_impl() {
    if (run_.impl_changed || run_.memory_changed) ++counters_.set_arguments;
    if (run_.shape_changed || scratch_.sized_for != impl_.impl.get()) update_scratch();
    std::vector<MemoryPtr>& inputs = exec_inputs_;
    inputs.resize(deps_.size());
    const ReleaseViews release{inputs};
    for (size_t i = 0; i < deps_.size(); ++i) inputs[i] = input_memory(i);
    if (weights_.mem) inputs.at(node_.def->def.weights_input) = weights_.mem;
    collect_fused_inputs();
    replace_read_outputs(inputs);
    // Fake alignment: the kernel sees the rows rounded up (both buffers were
    // sized for them); consumers keep the logical layout.
    std::vector<MemoryPtr> aligned_outputs;
    if (align_.aligned) {
        inputs[0] = inputs[0]->reinterpret(impl_.exec_params.inputs[0]);
        aligned_outputs = outputs_;
        aligned_outputs[0] = outputs_[0]->reinterpret(impl_.exec_params.outputs[0]);
        ++counters_.fake_aligned;
    }
    ExecContext ec{stream_, impl_.exec_special ? impl_.exec_params : params_, inputs,
                   align_.aligned ? aligned_outputs : outputs_};
    ec.fused_inputs = &fusion_.inputs;
    ec.state = impl_.state.get();
    ec.scratch = scratch_.buffers.empty() ? nullptr : &scratch_.buffers;
    if (node_.def->def.traits.data_dependent_output) {
        actual_outputs_ = params_.outputs;
        ec.actual_outputs = &actual_outputs_;
    }
    lap(FlowStep::arguments);
    execute_impl(ec);
    read_back_actual_outputs();
    lap(FlowStep::execute);
    count_execution();
}

void PrimitiveInst::execute_impl(ExecContext& ec) {
    try {
        impl_.impl->execute(ec);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    } catch (const std::bad_alloc&) {
        throw out_of_memory_error("in impl " + impl_.impl->name());
    } catch (const std::exception& e) {
        throw Error(std::string("execution failed: ") + e.what(), ctx());
    }
}

// Data-dependent outputs: the impl reported the actual layouts.
void PrimitiveInst::read_back_actual_outputs() {
    if (!node_.def->def.traits.data_dependent_output) return;
    for (size_t i = 0; i < outputs_.size(); ++i) {
        if (actual_outputs_[i] == params_.outputs[i]) continue;
        if (actual_outputs_[i].bytes() > capacity_[i])
            throw Error("impl reported an output larger than its buffer: " + actual_outputs_[i].to_string(), ctx());
        params_.outputs[i] = actual_outputs_[i];
        outputs_[i] = outputs_[i]->reinterpret(actual_outputs_[i]);
        run_.shape_changed = true;
    }
}

void PrimitiveInst::count_execution() {
    ++counters_.executions;
    if (impl_.impl->is_dynamic()) ++counters_.dynamic_impl_runs;
    if (!fusion_.chain.empty()) ++(fusion_.active ? counters_.fused_runs : counters_.unfused_runs);
    // An in-place target that runs its kernel copies every byte of its output.
    if (node_.def->def.inplace_axis)
        for (const auto& l : params_.outputs) counters_.concat_bytes_copied += l.count() * byte_size(l.dtype);
    run_.executed = true;
    has_run_ = true;
}

}   // namespace dynrt
