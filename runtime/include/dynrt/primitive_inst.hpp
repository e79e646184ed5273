// PrimitiveInst: the run-time state of one node inside one InferRequest, and the
// per-primitive execution flow.
//
// execute() (primitive_inst.cpp) is a list of named steps, each in the file of
// its mechanism (runtime/src/inst_*.cpp):
//   in-place decision (first producer of a target) -> fused node: take the
//   producer's output -> shape_of subgraph with unchanged roots: skip ->
//   update_shape -> fusion decision (producer of a chain) -> unchanged
//   shape_of-like: skip -> data-dependent: size for the bound -> state reader
//   or writer: alias, no kernel -> empty output or in-place target: buffers
//   only -> shape changed: update_impl, update_weights, realloc_if_needed (or
//   else: pick a finished background build up) -> fake alignment recheck ->
//   run_impl (bind inputs, scratch and impl state, execute, read back
//   data-dependent shapes, count).
// Every step has its counters (stats.hpp); the flags of one run live in one
// struct reset by begin_run(). Op-specific behaviour comes only from the op's
// traits and hooks.
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
//   - the request's MemoryPool: every output and scratch buffer is acquired from it.
//
// Four more act on one primitive's impl (docs/architecture.md):
//   - weights: when the impl changes, constant weights are reordered into the
//     format it reads (ImplEntry::weights_format) by the weights-reorder op,
//     through a per-primitive LRU of reordered buffers keyed by layout.
//   - fusion: a producer with a fused chain (Network::fused_chain) infers the
//     chain's shapes and, when its impl can serve them, runs the post-ops in its
//     own kernel; the fused nodes then only alias its output. Otherwise the
//     fused nodes run as their own primitives (the unfused subgraph).
//   - fake alignment: ops with a fake_align hook run on rows rounded up to the
//     impl's tile; the input's producer sizes its buffer to fit.
//   - impl state and scratch: each switch of impl makes this request's state of
//     the new impl (Impl::create_state); when the shape or the impl changed the
//     scratch buffers grow to Impl::scratch_bytes. Both go to the impl in
//     ExecContext.
#pragma once

#include <chrono>
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
        fusion_.chain = std::move(chain);
        fusion_.main_input = std::move(main_inputs);
    }
    void set_fused_into(PrimitiveInst* producer) { fusion_.into = producer; }
    // This run, this producer's impl applies its fused chain.
    bool fused_active() const { return fusion_.active; }
    // This fused node ran inside its producer's impl (its output is the producer's buffer).
    bool fused_away() const { return fusion_.into && fusion_.into->fusion_.active; }
    // The memory the impl reads as weights (nullptr: the input as it is).
    const MemoryPtr& weights_memory() const { return weights_.mem; }

    void begin_run();   // resets the per-run flags and counters (called after each run)
    void execute();     // the flow; no-op for inputs and constants
    // What a failed allocation anywhere in this node's flow is reported as: the
    // node, what its outputs need, the device and the limits in force.
    Error out_of_memory_error(const std::string& where) const;

    // Inputs: the request writes the data (sized through the predictor).
    void set_input_data(const HostTensor& value);

    const Node& node() const { return node_; }
    const std::string& name() const { return node_.name; }
    const KernelParams& params() const { return params_; }
    const Layout& output_layout(size_t i = 0) const { return params_.outputs.at(i); }
    const MemoryPtr& output_memory(size_t i = 0) const { return outputs_.at(i); }
    size_t output_capacity(size_t i = 0) const { return capacity_.at(i); }
    const ImplPtr& impl() const { return impl_.impl; }
    // This request's state of the current impl (Impl::create_state(); null: none).
    const ImplState* impl_state() const { return impl_.state.get(); }
    // The scratch buffers handed to the current impl (Impl::scratch_bytes()),
    // each viewed as u8 of the size the impl asked for.
    const std::vector<MemoryPtr>& scratch() const { return scratch_.buffers; }
    const Counters& counters() const { return counters_; }
    // Profiled runs (InferRequest::set_profiling): this run's time per flow step.
    const NodeTimes& times() const { return times_; }
    void set_profiling(bool on) { profiling_ = on; }
    // Profiled runs: waits for this node's device work and counts the wait.
    void wait_profiled();
    void set_device_ns(uint64_t ns) { times_.device_ns = ns; }
    bool initialized() const { return initialized_; }

    // Flags of the current run.
    bool shape_changed() const { return run_.shape_changed; }
    bool executed() const { return run_.executed; }
    // Set by a primitive that ran this one's update_shape on its behalf.
    void set_update_shape_done_by_other() { run_.update_shape_done_by_other = true; }

    // In-place wiring (set once by the request): this producer may write into
    // `target`; this target may take the writes of `producers` along `axis`.
    void set_inplace_target(PrimitiveInst* target) { inplace_.target = target; }
    void set_inplace_producers(std::vector<PrimitiveInst*> producers, int64_t axis) {
        inplace_.producers = std::move(producers);
        inplace_.axis = axis;
    }
    // True while this target's producers write into its buffer (this run).
    bool inplace_active() const { return inplace_.active; }
    // This run, the output is a view of input 0's buffer (OpTraits::view).
    bool viewing() const { return viewing_; }
    // Called by the first producer of an in-place target to run.
    void prepare_inplace();
    // The request's variables were reset: a reader forgets the value it aliased.
    void on_state_reset();

    // The flow steps (public for tests and for primitives acting on others).
    void update_shape();
    void update_impl();
    void realloc_if_needed();

private:
    // Flags of one run, all reset by begin_run().
    struct RunFlags {
        bool shape_changed = false;
        bool executed = false;
        bool update_shape_done_by_other = false;
        bool impl_changed = false;
        bool memory_changed = false;
        bool allocation_done_by_other = false;   // in-place target sized by a producer
    };
    // A background static build waiting for another run of the impl key
    // (NetworkOptions::async_compile_after).
    struct DeferredBuild {
        const RegisteredImpl* impl = nullptr;
        KernelParams params;
    };
    // The current impl and what it was chosen and created with (inst_impl.cpp).
    struct ImplSlot {
        ImplPtr impl;
        ImplPtr dynamic_impl;                            // shape-agnostic impl, kept once created
        std::string dynamic_sig;                         // what dynamic_impl was created for
        const RegisteredImpl* dynamic_entry = nullptr;   // ... from which entry
        bool dynamic_reordered = false;                  // ... reading reordered weights
        std::string key;                                 // impl-cache key of the current params
        std::unique_ptr<ImplState> state;                // this request's state of `impl`, made when it changed
        // The params the impl is created and executed with: params_ plus fused
        // ops, fake alignment and the weights format (exec_special: they differ).
        KernelParams exec_params;
        bool exec_special = false;
        bool waiting_async = false;   // background static build queued (or deferred) for `key`
        std::optional<DeferredBuild> deferred;
        std::unordered_map<std::string, uint32_t> key_visits;   // runs on the dynamic impl per key
    };
    struct Scratch {                       // inst_memory.cpp
        std::vector<MemoryPtr> buffers;    // one per Impl::scratch_bytes() entry
        std::vector<size_t> capacity;      // bytes of each buffer
        const Impl* sized_for = nullptr;   // the impl whose scratch_bytes() they follow
    };
    struct Weights {   // inst_weights.cpp
        MemoryPtr mem;
        std::list<std::pair<Layout, MemoryPtr>> cache;   // most recent first
        Attributes reorder_attrs;
    };
    struct Fusion {                          // inst_fusion.cpp
        std::vector<PrimitiveInst*> chain;   // producer: the chain, in order
        std::vector<size_t> main_input;      // producer: main input of each
        PrimitiveInst* into = nullptr;       // fused node: its producer
        bool active = false;
        bool decided = false;
        std::vector<MemoryPtr> inputs;   // other inputs of the fused ops, this run
        ImplPtr host_impl;               // fused node: its post-op host impl
    };
    struct Inplace {                             // inst_inplace.cpp
        PrimitiveInst* target = nullptr;         // producer side
        std::vector<PrimitiveInst*> producers;   // target side
        int64_t axis = 0;
        bool active = false;
        bool decided = false;   // a decision exists (kept while shapes hold)
    };
    struct Alignment {          // inst_align.cpp
        bool aligned = false;   // the current impl runs on aligned rows
        size_t tile = 0;        // row tile of the last impl choice
    };

    // execute()'s steps, in order (one file per mechanism).
    bool skip_shape_of_subgraph();   // inst_shape.cpp
    bool skip_unchanged_shape_of() const;
    void size_for_bound();
    bool run_state_op();          // inst_state.cpp
    bool skip_without_kernel();   // inst_memory.cpp: a view, empty output, in-place target
    bool run_as_view();
    void choose_impl();   // inst_impl.cpp
    void pick_up_async_build();
    void recheck_alignment();   // inst_align.cpp
    void run_impl();            // inst_execute.cpp

    // shape
    std::vector<const HostTensor*> read_value_inputs();
    bool value_inputs_changed(std::vector<const HostTensor*>& values);
    void infer_outputs(const std::vector<const HostTensor*>& values);
    bool update_state_reader_shape();
    const MemoryPtr& input_memory(size_t i) const { return deps_[i]->output_memory(node_.inputs[i].output); }
    ErrorContext ctx() const;
    // NetworkOptions::max_tensor_bytes against each layout (`what`: "input",
    // "output"), before anything is allocated for them.
    void check_tensor_bytes(const std::vector<Layout>& layouts, const char* what) const;
    // impl
    std::vector<const RegisteredImpl*> impl_candidates() const;
    void build_impl(const KernelParams& req, const std::string& key, bool reorder_weights);
    bool keeps_dynamic_impl(const KernelParams& req, bool reorder_weights) const;
    void use_dynamic_impl(const RegisteredImpl& dyn, const RegisteredImpl* stat, const KernelParams& req,
                          const std::string& key, bool reorder_weights);
    uint32_t count_visit(const std::string& key);
    void queue_static_build(const RegisteredImpl& impl, const KernelParams& params, const std::string& key);
    void on_impl_changed();
    // memory; `same_as` > 0: that many bytes, no prediction (a buffer replaced
    // as is); `min_bytes`: at least that many (fake alignment).
    void allocate_output(size_t i, const Layout& layout, size_t same_as = 0, size_t min_bytes = 0);
    size_t output_need(size_t i) const;
    void replace_read_outputs(const std::vector<MemoryPtr>& inputs);
    void update_scratch();   // shape or impl changed: what the impl asks for
    // state
    bool reads_assigned_state() const;   // reader whose variable has a value
    void read_state();                   // output = the variable's value
    void write_state();                  // stages the input as the new value
    // in place
    bool use_inplace_view(size_t i);                        // output i is a view into the target
    bool impl_accepts(const Layout& padded_output) const;   // for an in-place view
    bool plan_inplace_paddings(std::vector<Layout>& padded);
    void apply_inplace(bool ok, const std::vector<Layout>& padded);
    // weights
    void update_weights();
    bool weights_reorderable() const;   // weightable, constant weights, reorder op known
    MemoryPtr weights_cache_get(const Layout& l);
    void weights_cache_put(const Layout& l, MemoryPtr m);
    ImplPtr reorder_impl(const KernelParams& rp);
    const RegisteredImpl& pick_reorder_impl(const KernelParams& rp) const;
    MemoryPtr reorder_weights(const MemoryPtr& original, const Layout& expected);
    std::shared_ptr<Buffer> weights_buffer(const MemoryPtr& original, size_t bytes);
    // fusion
    void prepare_fusion();   // producer: chain shapes, fused or not
    // Why the chain cannot run fused ("" = it can); fills the post-op descs.
    std::string fusion_blocker(std::vector<FusedOpDesc>& descs);
    std::string fused_impl_blocker(const std::vector<FusedOpDesc>& descs) const;
    ImplPtr fused_host_impl();   // fused node: its host impl (post-op)
    void take_fused_output();    // fused node: alias the producer's output
    void collect_fused_inputs();
    // fake alignment
    size_t fake_align_tile_hint() const;                      // for producers sizing their buffers
    size_t aligned_input_bytes(const Layout& input0) const;   // bytes this op reads from input 0
    KernelParams request_params();                            // params_ + alignment (impl choice and key)
    size_t align_tile() const;
    // execution
    void execute_impl(ExecContext& ec);
    void read_back_actual_outputs();
    void count_execution();

    InferRequest& request_;
    Network& network_;
    ShapePredictor& predictor_;
    Stream& stream_;
    MemoryPool& pool_;
    const size_t index_;
    const Node& node_;
    std::vector<PrimitiveInst*> deps_;
    std::vector<PrimitiveInst*> roots_;   // shape_of roots of a shape_of subgraph node
    std::vector<PrimitiveInst*> users_;

    KernelParams params_;
    std::vector<MemoryPtr> outputs_;
    std::vector<size_t> capacity_;          // bytes of each output's buffer
    std::vector<HostTensor> last_values_;   // values of value inputs at the last inference
    std::vector<Layout> actual_outputs_;    // data-dependent outputs
    std::vector<Layout> upper_outputs_;     // data-dependent: the bound shape inference gave
    std::string variable_;                  // state readers / writers: the variable's name
    // The input views handed to the impl, kept between runs so that no vector
    // is allocated per execution; emptied (not shrunk) after each execution,
    // so the views do not outlive it.
    std::vector<MemoryPtr> exec_inputs_;

    ImplSlot impl_;
    Scratch scratch_;
    Weights weights_;
    Fusion fusion_;
    Inplace inplace_;
    bool viewing_ = false;   // inst_memory.cpp: run_as_view()
    Alignment align_;

    Counters counters_;
    RunFlags run_;
    // Profiling: the time since the last lap goes to a flow step (no-ops
    // while the request does not profile).
    void start_lap();
    void lap(FlowStep step);
    bool profiling_ = false;
    NodeTimes times_;
    std::chrono::steady_clock::time_point lap_start_;
    bool initialized_ = false;   // has run update_shape at least once
    bool has_run_ = false;       // has executed at least once
};

}   // namespace dynrt
