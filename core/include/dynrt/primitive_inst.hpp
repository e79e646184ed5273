// PrimitiveInst: the run-time state of one node inside one InferRequest, and the
// per-primitive execution flow.
//
// execute() is the whole flow in one short function:
//   update_shape -> (empty output: skip) -> (shape_of subgraph with unchanged
//   roots: reuse values, skip) -> if the shape changed: update_impl and
//   realloc_if_needed -> set_arguments if impl or memory changed -> impl.execute
// Each step is its own method with its own counters (stats.hpp). Op-specific
// behaviour comes only from the op's traits and hooks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/implementation_map.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/program.hpp"
#include "dynrt/stats.hpp"

namespace dynrt {

class Network;
class ShapePredictor;
struct RegisteredImpl;

class PrimitiveInst {
public:
    PrimitiveInst(Network& network, ShapePredictor& predictor, Stream& stream, size_t node_index);

    // Wires producers (called once all insts of the request exist).
    void set_dependencies(std::vector<PrimitiveInst*> deps, std::vector<PrimitiveInst*> shape_of_roots) {
        deps_ = std::move(deps);
        roots_ = std::move(shape_of_roots);
    }

    void begin_run();   // resets per-run flags and counters (called after each run)
    void execute();     // the flow; no-op for inputs and constants

    // Inputs: the request writes the data (sized through the predictor).
    void set_input_data(const HostTensor& value);

    const Node& node() const { return node_; }
    const std::string& name() const { return node_.name; }
    const KernelParams& params() const { return params_; }
    const Layout& output_layout(size_t i = 0) const { return params_.outputs.at(i); }
    const MemoryPtr& output_memory(size_t i = 0) const { return outputs_.at(i); }
    size_t output_capacity(size_t i = 0) const { return capacity_.at(i); }
    const ImplPtr& impl() const { return impl_; }
    const Counters& counters() const { return counters_; }
    bool initialized() const { return initialized_; }

    // Flags of the current run.
    bool shape_changed() const { return shape_changed_; }
    bool executed() const { return executed_; }
    // Set by a primitive that ran this one's update_shape on its behalf.
    void set_update_shape_done_by_other() { update_shape_done_by_other_ = true; }

    // The flow steps (public for tests and for primitives acting on others).
    void update_shape();
    void update_impl();
    void realloc_if_needed();

private:
    bool roots_unchanged() const;
    std::vector<const HostTensor*> read_value_inputs();
    MemoryPtr input_memory(size_t i) const;
    void allocate_output(size_t i, const Layout& layout);
    ErrorContext ctx() const;

    Network& network_;
    ShapePredictor& predictor_;
    Stream& stream_;
    const Node& node_;
    std::vector<PrimitiveInst*> deps_;
    std::vector<PrimitiveInst*> roots_;     // shape_of roots of a shape_of subgraph node

    KernelParams params_;
    std::vector<MemoryPtr> outputs_;
    std::vector<size_t> capacity_;          // bytes of each output's buffer
    ImplPtr impl_;
    ImplPtr dynamic_impl_;                  // shape-agnostic impl, kept once created
    std::string impl_key_;
    std::vector<HostTensor> last_values_;   // values of value inputs at the last inference
    std::vector<Layout> actual_outputs_;    // data-dependent outputs

    Counters counters_;
    bool initialized_ = false;              // has run update_shape at least once
    bool has_run_ = false;                  // has executed at least once
    bool shape_changed_ = false;
    bool executed_ = false;
    bool update_shape_done_by_other_ = false;
    bool impl_changed_ = false;
    bool memory_changed_ = false;
    bool waiting_async_ = false;            // background static build queued for impl_key_
};

}  // namespace dynrt
