// PrimitiveInst: construction, per-run reset and execute(), the flow as a list
// of named steps. Each step lives in the file of its mechanism:
//   inst_shape.cpp    update_shape, value inputs, shape_of skips
//   inst_impl.cpp     update_impl, impl cache, async static builds
//   inst_weights.cpp  update_weights, reordered-weights cache
//   inst_memory.cpp   realloc_if_needed, output buffers from the memory pool
//   inst_inplace.cpp  runtime in-place concat
//   inst_fusion.cpp   fused post-ops and the unfused fallback
//   inst_state.cpp    request state readers and writers
//   inst_align.cpp    fake alignment
//   inst_execute.cpp  binding the buffers and running the impl
#include "dynrt/primitive_inst.hpp"

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

PrimitiveInst::PrimitiveInst(InferRequest& request, size_t node_index)
    : request_(request), network_(request.network()), predictor_(request.shape_predictor()), stream_(request.stream()),
      pool_(request.memory_pool()), index_(node_index), node_(network_.program().nodes()[node_index]) {
    const Program& program = network_.program();
    params_.node = node_.name;
    params_.op = node_.def ? &node_.def->def : nullptr;
    params_.attrs = &node_.attrs;
    params_.engine = &network_.engine();
    auto node_inputs = std::make_shared<std::vector<Layout>>();
    for (const NodeInput& in : node_.inputs)
        node_inputs->push_back(program.nodes().at(in.node).out_layouts.at(in.output));
    params_.node_inputs = std::move(node_inputs);
    params_.outputs = node_.out_layouts;
    outputs_.resize(node_.out_layouts.size());
    capacity_.assign(node_.out_layouts.size(), 0);
    if (node_.is_constant()) {
        outputs_[0] = network_.constant_memory(node_index);
        capacity_[0] = outputs_[0]->capacity();
        initialized_ = true;
        has_run_ = true;
    }
    if (!node_.is_op()) return;
    const OpTraits& traits = node_.def->def.traits;
    const size_t w = node_.def->def.weights_input;
    params_.constant_weights =
        traits.weightable && w < node_.inputs.size() && program.nodes().at(node_.inputs[w].node).is_constant();
    if (traits.reads_state || traits.writes_state) {
        const auto& name_of = node_.def->def.state_variable;
        if (!name_of)
            throw Error("op '" + node_.op + "' reads or writes request state but has no state_variable hook", ctx());
        variable_ = name_of(node_.attrs);
        if (variable_.empty()) throw Error("the node names no request variable", ctx());
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
    run_ = RunFlags{};
    times_ = NodeTimes{};
}

void PrimitiveInst::start_lap() {
    if (!profiling_) return;
    lap_start_ = std::chrono::steady_clock::now();
    times_.start_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(lap_start_ - request_.run_start()).count());
}

void PrimitiveInst::lap(FlowStep step) {
    if (!profiling_) return;
    const auto now = std::chrono::steady_clock::now();
    times_.ns[static_cast<size_t>(step)] +=
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - lap_start_).count());
    lap_start_ = now;
}

void PrimitiveInst::wait_profiled() {
    if (!profiling_ || !node_.is_op()) return;
    stream_.finish();
    lap(FlowStep::wait);
}

// The flow (docs/architecture.md, "The execution flow of one primitive").
void PrimitiveInst::execute() {
    if (!node_.is_op()) return;   // inputs and constants hold their data
    start_lap();
    // The first producer of an in-place target to run decides for all of them.
    if (inplace_.target && !run_.update_shape_done_by_other) inplace_.target->prepare_inplace();
    if (fused_away()) {
        take_fused_output();
        return lap(FlowStep::shape);
    }
    if (skip_shape_of_subgraph()) return lap(FlowStep::shape);
    update_shape();
    if (!fusion_.chain.empty()) prepare_fusion();
    if (skip_unchanged_shape_of()) return lap(FlowStep::shape);
    size_for_bound();
    lap(FlowStep::shape);
    if (run_state_op() || skip_without_kernel()) return lap(FlowStep::execute);
    if (run_.shape_changed || !impl_.impl) choose_impl();   // laps impl and memory
    else if (impl_.waiting_async) pick_up_async_build();
    recheck_alignment();
    lap(FlowStep::impl);
    run_impl();   // laps arguments and execute
}

}   // namespace dynrt
