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
//
// Three more act on one primitive's impl (docs/architecture.md):
//   - weights: when the impl changes, constant weights are reordered into the
//     format it reads (ImplEntry::weights_format) by the weights-reorder op,
//     through a per-primitive LRU of reordered buffers keyed by layout.
//   - fusion: a producer with a fused chain (Network::fused_chain) infers the
//     chain's shapes and, when its impl can serve them, runs the post-ops in its
//     own kernel; the fused nodes then only alias its output. Otherwise the
//     fused nodes run as their own primitives (the unfused subgraph).
//   - fake alignment: ops with a fake_align hook run on rows rounded up to the
//     impl's tile; the input's producer sizes its buffer to fit.
#pragma once

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
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
    void set_users(std::vector<PrimitiveInst*> users) { users_ = std::move(users); }
    // Fusion wiring (set once by the request from Network's fusion plan).
    void set_fused(std::vector<PrimitiveInst*> chain, std::vector<size_t> main_inputs) {
        fused_ = std::move(chain);
        fused_main_ = std::move(main_inputs);
    }
    void set_fused_into(PrimitiveInst* producer) { fused_into_ = producer; }
    // This run, this producer's impl applies its fused chain.
    bool fused_active() const { return fused_active_; }
    // This fused node ran inside its producer's impl (its output is the producer's buffer).
    bool fused_away() const { return fused_into_ && fused_into_->fused_active_; }
    // The memory the impl reads as weights (nullptr: the input as it is).
    const MemoryPtr& weights_memory() const { return weights_mem_; }

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
    // A background static build waiting for another run of impl_key_
    // (NetworkOptions::async_compile_after).
    struct DeferredBuild {
        const RegisteredImpl* impl = nullptr;
        KernelParams params;
    };
    uint32_t count_visit(const std::string& key);   // runs of `key` on the dynamic impl so far
    void queue_static_build(const RegisteredImpl& impl, const KernelParams& params, const std::string& key);
    bool roots_unchanged() const;
    std::vector<const HostTensor*> read_value_inputs();
    MemoryPtr input_memory(size_t i) const;
    // `same_as` > 0: that many bytes, no prediction (a buffer replaced as is).
    // `min_bytes`: at least that many (fake alignment).
    void allocate_output(size_t i, const Layout& layout, size_t same_as = 0, size_t min_bytes = 0);
    ErrorContext ctx() const;
    std::vector<const RegisteredImpl*> impl_candidates() const;
    bool impl_accepts(const Layout& padded_output) const;   // for an in-place view
    bool reads_assigned_state() const;                      // reader whose variable has a value
    void read_state();                                      // output = the variable's value
    void write_state();                                     // stages the input as the new value
    bool use_inplace_view(size_t i);                        // output i is a view into the target

    // weights
    void update_weights();
    bool weights_reorderable() const;                       // weightable, constant weights, reorder op known
    MemoryPtr weights_cache_get(const Layout& l);
    void weights_cache_put(const Layout& l, MemoryPtr m);
    ImplPtr reorder_impl(const KernelParams& rp);
    // fusion
    void prepare_fusion();                                  // producer: chain shapes, fused or not
    // Why the chain cannot run fused ("" = it can); fills the post-op descs.
    std::string fusion_blocker(std::vector<FusedOpDesc>& descs);
    ImplPtr fused_host_impl();                              // fused node: its host impl (post-op)
    void take_fused_output();                               // fused node: alias the producer's output
    // fake alignment
    size_t fake_align_tile_hint() const;                    // for producers sizing their buffers
    size_t aligned_input_bytes(const Layout& input0) const; // bytes this op reads from input 0
    KernelParams request_params();                          // params_ + alignment (impl choice and key)

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

    std::vector<PrimitiveInst*> users_;

    // The params the impl is created and executed with: params_ plus fused ops,
    // fake alignment and the weights format (exec_special_: they differ).
    KernelParams exec_params_;
    bool exec_special_ = false;
    // The input views handed to the impl, kept between runs so that no vector
    // is allocated per execution; emptied (not shrunk) after each execution,
    // so the views do not outlive it.
    std::vector<MemoryPtr> exec_inputs_;
    bool aligned_ = false;
    size_t align_tile_ = 0;                 // row tile of the last impl choice
    std::string dynamic_sig_;               // what dynamic_impl_ was created for

    // weights
    MemoryPtr weights_mem_;
    std::list<std::pair<Layout, MemoryPtr>> weights_cache_;   // most recent first
    Attributes reorder_attrs_;

    // fusion
    std::vector<PrimitiveInst*> fused_;     // producer: the chain, in order
    std::vector<size_t> fused_main_;        // producer: main input of each
    PrimitiveInst* fused_into_ = nullptr;   // fused node: its producer
    bool fused_active_ = false;
    bool fusion_decided_ = false;
    std::vector<MemoryPtr> fused_inputs_;   // other inputs of the fused ops, this run
    ImplPtr fused_host_impl_;               // fused node: its post-op host impl

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
    bool waiting_async_ = false;            // background static build queued (or deferred) for impl_key_
    std::optional<DeferredBuild> deferred_build_;   // to queue on a later run of impl_key_
    std::unordered_map<std::string, uint32_t> key_visits_;   // runs on the dynamic impl per impl key
};

}  // namespace dynrt
