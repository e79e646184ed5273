// Network and InferRequest: a program compiled for one engine, and one stream of
// inferences on it.
//
// A Network is shared: it holds the program, the engine, constants in device
// memory, the impl cache (LRU, keyed by attributes + layouts) and the compilation
// context for background static builds. It is safe to run several InferRequests
// on one Network from several threads. An InferRequest owns per-request state: a
// primitive_inst per node (current layouts, impl, output memory), input and
// output tensors, its own ShapePredictor and MemoryPool, and its variables (state
// read and written by ops across runs, reset by reset_state()).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/memory_pool.hpp"
#include "dynrt/program.hpp"
#include "dynrt/shape_predictor.hpp"
#include "dynrt/stats.hpp"

namespace dynrt {

class Impl;
class ImplCache;
class CompilationContext;
class PrimitiveInst;
struct RegisteredImpl;

struct NetworkOptions {
    size_t impl_cache_capacity = 300;   // entries of the LRU impl cache
    bool use_dynamic_impls = true;      // false: always build static impls
    // Host impls: only the reference impls (ImplEntry::reference), the oracle,
    // never the optimised ones (debugging a result; tests of flow mechanisms
    // built around the references, e.g. their blocked weights).
    bool host_reference_only = false;
    bool async_compile = true;   // critical ops: background static build
    size_t compile_threads = 1;
    // The run of a shape on which its background static build is queued: 1 =
    // its first run; 2 (default) = when the shape runs a second time, in a row
    // or on a later visit. A growing sequence never runs a shape twice, so
    // nothing is compiled that no run would pick up; a shape that stays or
    // comes back gets its static impl one run later than with 1.
    size_t async_compile_after = 2;
    ShapePredictor::Settings prealloc;   // per-request predictor settings
    bool verbose = false;                // impl choice reasons on stderr
    // Producers of an in-place target (OpDefinition::inplace_axis, e.g. concat)
    // write straight into its buffer; false: the target runs its kernel (copies).
    bool inplace_concat = true;
    // Layout-only ops (OpTraits::view: reshape ...) view their input's buffer
    // and run no kernel; false: they run their kernels (tests of the kernels).
    bool views = true;
    // Output buffers come from a per-request pool that shares them between
    // primitives whose lifetimes do not overlap and keeps freed buffers for reuse
    // (memory_pool.hpp); false: every buffer is a fresh device allocation.
    bool memory_pool = true;
    // Device bytes one request's output buffers may hold; 0 = no limit. Going
    // over is a dynrt::Error naming the request size and the budget.
    size_t memory_budget_bytes = 0;
    // Bytes one tensor may take (a graph input set on a request, or an output
    // shape inference computes); 0 = no cap beyond the device's largest
    // allocation. Going over is a dynrt::Error naming the tensor, its layout,
    // its bytes and the cap, raised before anything is allocated.
    size_t max_tensor_bytes = 0;

    // ---- weights (docs/architecture.md, "Weights") ------------------------
    // Reordered constant weights kept per primitive (LRU keyed by layout; the
    // original layout takes an entry too). At least 1.
    size_t weights_cache_capacity = 3;
    // Reorder constant weights into the format an impl reads, through the op
    // that declares OpDefinition::convert_format (its impls come from the
    // registry and the impl cache like any other). false, or no such op: never
    // reorder (impls then get their weights as they are).
    bool reorder_weights = true;

    // ---- fusion (docs/architecture.md, "Fusion") -----------------------------
    // Fuse elementwise consumers (OpTraits::fusable) into their producer
    // (OpTraits::accepts_fused_ops); false: every node runs on its own.
    bool fusion = true;

    // ---- fake alignment (docs/architecture.md, "Fake alignment") -------------
    bool fake_alignment = true;
    // 0: each impl's own row tile (ImplEntry::fake_align_rows); N: tile N for
    // every op with a fake_align hook (tuning, tests).
    size_t fake_align_rows = 0;
};

class Network : public std::enable_shared_from_this<Network> {
public:
    static std::shared_ptr<Network> create(std::shared_ptr<const Program> program, EnginePtr engine,
                                           NetworkOptions options = {});
    ~Network();

    const Program& program() const { return *program_; }
    Engine& engine() const { return *engine_; }
    const EnginePtr& engine_ptr() const { return engine_; }
    const NetworkOptions& options() const { return options_; }
    ImplCache& impl_cache() const { return *impl_cache_; }
    CompilationContext* compilation_context() const { return compile_ctx_.get(); }
    // Device copy of a constant node's value (nullptr for other nodes).
    MemoryPtr constant_memory(size_t node) const;
    // Waits for every queued background build (tests, benchmarks).
    void wait_for_background_builds() const;

    // Fusion plan (made once per network when options().fusion): a producer's
    // chain of fused post-ops in order, and for a fused node the producer it is
    // fused into (kNotFused otherwise) and which of its inputs takes the
    // running result.
    static constexpr size_t kNotFused = static_cast<size_t>(-1);
    const std::vector<size_t>& fused_chain(size_t node) const { return fused_chain_.at(node); }
    size_t fused_into(size_t node) const { return fused_into_.at(node); }
    static constexpr size_t kMaxFusedOps = 16;   // nodes one fused chain may take
    size_t fused_main_input(size_t node) const { return fused_main_.at(node); }
    // The op that declares OpDefinition::convert_format (the weights reorder
    // op); null when no loaded op does or NetworkOptions::reorder_weights is off.
    const RegisteredOp* format_converter() const { return format_converter_; }

private:
    Network(std::shared_ptr<const Program> program, EnginePtr engine, NetworkOptions options);
    void upload_constants();
    void plan_fusion();

    std::shared_ptr<const Program> program_;
    EnginePtr engine_;
    NetworkOptions options_;
    std::unique_ptr<ImplCache> impl_cache_;
    std::unique_ptr<CompilationContext> compile_ctx_;
    std::vector<MemoryPtr> constants_;
    std::vector<std::vector<size_t>> fused_chain_;
    std::vector<size_t> fused_into_;
    std::vector<size_t> fused_main_;
    const RegisteredOp* format_converter_ = nullptr;
};

// What an observer of a request (InferRequest::set_observer) gets for each
// output of each node, right after the node's step of the run: the memory
// pool reuses buffers, so a value is only valid at that moment. Inputs and
// constants are observed too; so are nodes that skipped their kernel this
// run (their outputs keep the last value).
struct ObservedOutput {
    size_t node = 0;     // index into Program::nodes()
    std::string name;    // the node's name
    std::string op;      // its op ("<input>", "<const>" for the built-in kinds)
    size_t output = 0;   // output index
    Layout layout;       // as the buffer holds it (padding of an in-place view included)
    // A dense, row-major copy of the value (read through padding and blocked
    // formats); null when this output does not hold this node's own value
    // this run (see `absorbed`).
    const HostTensor* value = nullptr;
    // Why `value` is null: the pass that took the node's value and where
    // ("fusion: computed inside 'conv' with its fused chain up to 'relu'").
    std::string absorbed;
};
using OutputObserver = std::function<void(const ObservedOutput&)>;

class InferRequest {
public:
    explicit InferRequest(std::shared_ptr<Network> network);
    ~InferRequest();
    InferRequest(const InferRequest&) = delete;
    InferRequest& operator=(const InferRequest&) = delete;

    // Copies `value` into the input's device buffer (sized through the
    // predictor). Throws when the name is unknown, the dtype differs or the shape
    // does not fit the declared partial shape.
    void set_input(const std::string& name, const HostTensor& value);
    void infer();
    // Copy of an output's current value.
    HostTensor get_output(const std::string& name) const;
    HostTensor get_output(size_t index) const;
    // The request-owned output tensor (valid until the next infer()).
    const HostTensor& output(const std::string& name) const;
    const HostTensor& output(size_t index) const;
    // Current layout of a node's output (tests).
    Layout node_layout(const std::string& node, size_t output = 0) const;

    const RunStats& last_run() const { return last_; }
    const Counters& cumulative() const { return cumulative_; }
    ShapePredictor& shape_predictor() { return *predictor_; }
    Network& network() const { return *network_; }
    Stream& stream() const { return *stream_; }
    PrimitiveInst& inst(const std::string& node) const;

    // ---- state (variables kept across runs) --------------------------------
    // Forgets every variable: the next run's readers give their initial values.
    void reset_state();
    // Names of the variables assigned so far, sorted.
    std::vector<std::string> state_names() const;
    // Copy of a variable's value; throws naming the variable when it is unknown.
    HostTensor get_state(const std::string& variable) const;
    // Current value of a variable (nullptr while unassigned). Used by the flow.
    MemoryPtr variable(const std::string& name) const;
    // Records the value a writer assigns in this run; it becomes the variable's
    // value when the run ends. A second assignment in one run is an error.
    void stage_assign(const std::string& name, MemoryPtr value, const ErrorContext& where);

    // ---- observing intermediate values (the bisect tool) --------------------
    // Calls `observer` for every output of every node in execution order, each
    // right after that node's step, with a host copy of its value (a copy per
    // node and run: for debugging, not for serving). What the passes see is
    // unchanged: no output is added to the graph and no lifetime extended.
    // An empty function turns it off.
    void set_observer(OutputObserver observer) { observer_ = std::move(observer); }

    // ---- profiling ------------------------------------------------------------
    // Times every node's flow steps in the runs that follow (NodeStats::times,
    // RunStats::profile). A profiled run waits for the device after each
    // node, so on a device that runs behind the host its wall time is the sum
    // of the nodes' host and device times rather than their overlap.
    void set_profiling(bool on);
    bool profiling() const { return profiling_; }
    // Profiled runs: a clock of device time (nanoseconds of kernel execution
    // so far on this request's stream, e.g. the sum of OpenCL profiling
    // events that Stream::finish() collects) read after each node's wait; the
    // difference is the node's NodeTimes::device_ns. Empty: none.
    void set_device_clock(std::function<uint64_t()> clock) { device_clock_ = std::move(clock); }
    // When the current (or last) infer() began.
    std::chrono::steady_clock::time_point run_start() const { return run_start_; }

    MemoryPool& memory_pool() const { return *pool_; }
    // Node indices in the order this request executes them: the program order,
    // except that the producers of an in-place target run right before it.
    const std::vector<size_t>& execution_order() const { return exec_order_; }

private:
    void copy_outputs();
    void plan();   // execution order, in-place targets, lifetimes
    std::vector<std::vector<size_t>> plan_inplace_targets() const;
    bool can_write_in_place(size_t producer, const Node& target) const;
    void plan_order(const std::vector<std::vector<size_t>>& producers_of);
    void wire_fusion();
    void wire_inplace(const std::vector<std::vector<size_t>>& producers_of);
    void plan_lifetimes(const std::vector<std::vector<size_t>>& producers_of);
    void update_report();   // last_.nodes and totals from the insts' counters
    void observe(size_t node);
    uint64_t tensor_bytes() const;

    std::shared_ptr<Network> network_;
    std::shared_ptr<Stream> stream_;
    std::unique_ptr<ShapePredictor> predictor_;
    std::unique_ptr<MemoryPool> pool_;
    std::vector<std::unique_ptr<PrimitiveInst>> insts_;
    std::vector<size_t> exec_order_;
    std::map<std::string, MemoryPtr> variables_;
    std::map<std::string, MemoryPtr> staged_;
    std::map<std::string, size_t> input_index_;
    std::vector<HostTensor> outputs_host_;
    RunStats last_;
    // The impl whose name and kind last_.nodes[k] shows (held, so that a new
    // impl at a freed one's address is never taken for it): the report calls
    // Impl::name() only when a node's impl changed.
    std::vector<std::shared_ptr<Impl>> report_impls_;
    Counters cumulative_;
    uint64_t run_index_ = 0;
    OutputObserver observer_;
    bool profiling_ = false;
    std::chrono::steady_clock::time_point run_start_;
    std::function<uint64_t()> device_clock_;
};

}   // namespace dynrt
