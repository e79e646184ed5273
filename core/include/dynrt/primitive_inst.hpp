// PrimitiveInst: the run-time state of one node inside one InferRequest, and the
// per-primitive execution flow.
//
// execute() is the whole flow in one short function:
//   update_shape -> (empty output: skip) -> (shape_of subgraph with unchanged
//   roots: reuse values, skip) -> if the shape changed: update_impl and
//   realloc_if_needed -> set_arguments if impl or memory changed -> impl.execute
// Each step is its own method with its own counters (stats.hpp). Op-specific
// behaviour comes only from the op's traits and hooks.
//
// Three mechanisms act across primitives:
//   - in-place targets (OpDefinition::inplace_axis): the first producer to run
//     calls prepare_inplace() on the target, which infers every producer's and the
//     target's shape (update_shape_done_by_other), and, when every producer's impl
//     can write a padded output, gives each producer a layout padded along the
//     axis; the first producer to reallocate sizes the target's buffer through the
//     ShapePredictor (allocation_done_by_other) and every producer's output becomes
//     a view into it. The target then runs no kernel.
//   - state (OpTraits::reads_state / writes_state): readers alias the request's
//     variable (or copy it into an in-place view), writers stage their input.
//   - the request's MemoryPool: every output buffer is acquired from it.
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
class InferRequest;
class MemoryPool;
class ShapePredictor;
struct RegisteredImpl;

class PrimitiveInst {
public:
    PrimitiveInst(InferRequest& request, size_t node_index);

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

    // In-place wiring (set once by the request): this producer may write into
    // `target`; this target may take the writes of `producers` along `axis`.
    void set_inplace_target(PrimitiveInst* target) { inplace_target_ = target; }
    void set_inplace_producers(std::vector<PrimitiveInst*> producers, int64_t axis) {
        inplace_producers_ = std::move(producers);
        inplace_axis_ = axis;
    }
    // True while this target's producers write into its buffer (this run).
    bool inplace_active() const { return inplace_active_; }
    // Called by the first producer of an in-place target to run.
    void prepare_inplace();
    // The request's variables were reset: a reader forgets the value it aliased.
    void on_state_reset();

    // The flow steps (public for tests and for primitives acting on others).
    void update_shape();
    void update_impl();
    void realloc_if_needed();

private:
    bool roots_unchanged() const;
    std::vector<const HostTensor*> read_value_inputs();
    MemoryPtr input_memory(size_t i) const;
    // `same_as` > 0: that many bytes, no prediction (a buffer replaced as is).
    void allocate_output(size_t i, const Layout& layout, size_t same_as = 0);
    ErrorContext ctx() const;
    std::vector<const RegisteredImpl*> impl_candidates() const;
    bool impl_accepts(const Layout& padded_output) const;   // for an in-place view
    bool reads_assigned_state() const;                      // reader whose variable has a value
    void read_state();                                      // output = the variable's value
    void write_state();                                     // stages the input as the new value
    bool use_inplace_view(size_t i);                        // output i is a view into the target

    InferRequest& request_;
    Network& network_;
    ShapePredictor& predictor_;
    Stream& stream_;
    MemoryPool& pool_;
    const size_t index_;
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
    std::vector<Layout> upper_outputs_;     // data-dependent: the bound shape inference gave
    std::string variable_;                  // state readers / writers: the variable's name

    PrimitiveInst* inplace_target_ = nullptr;           // producer side
    std::vector<PrimitiveInst*> inplace_producers_;     // target side
    int64_t inplace_axis_ = 0;
    bool inplace_active_ = false;
    bool inplace_decided_ = false;          // a decision exists (kept while shapes hold)
    bool allocation_done_by_other_ = false;

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
