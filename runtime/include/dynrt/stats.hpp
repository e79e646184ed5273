// Counters of the dynamic execution flow, per primitive and per run.
//
// Every branch of the per-primitive flow increments one counter, so tests assert
// on the mechanism (not on timings) and the CLI reports it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynrt {

struct Counters {
    uint64_t executions = 0;               // impl executed
    uint64_t shape_changes = 0;            // update_shape produced a new output layout
    uint64_t update_shape_runs = 0;        // shape inference actually ran
    uint64_t skip_shape_unchanged = 0;     // update_shape skipped: inputs unchanged
    uint64_t skip_shape_of = 0;            // shape_of-like op with unchanged input shape
    uint64_t skip_shape_of_subgraph = 0;   // shape_of subgraph with unchanged roots: values reused
    uint64_t skip_done_by_other = 0;       // update_shape already done by another primitive
    uint64_t skip_data_dependent = 0;      // output shape comes from execution
    uint64_t skip_empty_output = 0;        // empty output: execution skipped
    uint64_t impl_cache_hits = 0;
    uint64_t impl_cache_misses = 0;
    uint64_t static_builds = 0;       // static impls built synchronously
    uint64_t dynamic_impl_runs = 0;   // executions on a shape-agnostic impl
    uint64_t async_builds_queued = 0;
    uint64_t async_builds_picked = 0;   // background static impl took over
    uint64_t impl_changes = 0;
    uint64_t allocations = 0;   // output buffer (re)assigned: a pool hit or a device allocation
    uint64_t reuses = 0;        // buffer reinterpreted, no allocation
    uint64_t reclaims = 0;      // buffer released: need << capacity
    uint64_t bytes_allocated = 0;
    uint64_t pool_hits = 0;             // output buffer taken from the request's memory pool
    uint64_t pool_misses = 0;           // output buffer the pool had to ask the device for
    uint64_t concat_inplace = 0;        // in-place target ran no kernel: producers wrote into it
    uint64_t concat_bytes_copied = 0;   // bytes an in-place-capable op copied with its kernel
    uint64_t state_bytes_copied = 0;    // bytes a state reader copied (variable moved to a new buffer)
    uint64_t weights_reorders = 0;      // weights reordered into the impl's preferred format
    uint64_t weights_cache_hits = 0;    // reordered weights found in the request's weights cache
    uint64_t fused_runs = 0;            // executed with its fused post-ops in its own kernel
    uint64_t unfused_runs = 0;          // fused post-ops ran as their own primitives instead
    uint64_t fake_aligned = 0;          // executed on rows rounded up to the kernel's tile
    uint64_t set_arguments = 0;         // arguments re-bound (impl or memory changed)
    uint64_t views = 0;                 // layout-only op ran no kernel: its output viewed its input (OpTraits::view)

    Counters& operator+=(const Counters& o);
    // (name, value) pairs in a fixed order, for reports.
    std::vector<std::pair<const char*, uint64_t>> items() const;
};

// The steps of one primitive's flow that a profiled run times
// (InferRequest::set_profiling), in the order they run.
enum class FlowStep : uint8_t {
    shape,       // update_shape, the fused chain's shapes, shape_of skips, bounds
    impl,        // update_impl and update_weights: impl cache, impl creation, weights
    memory,      // realloc_if_needed: output buffers from the memory pool or the device
    arguments,   // binding inputs, outputs, scratch and fused-op inputs
    execute,     // Impl::execute: the kernel itself on the cpu engine, its enqueue on a device
    wait,        // waiting for the node's device work (profiled runs wait after each node)
};
constexpr size_t kFlowSteps = 6;
const char* to_string(FlowStep step);

// Nanoseconds per flow step of one node in one run; all zero when the run
// was not profiled. `start_ns`: when the node's first step began, from the
// start of the run (InferRequest::infer), for traces; the steps follow one
// another in FlowStep order.
struct NodeTimes {
    uint64_t start_ns = 0;
    uint64_t ns[kFlowSteps] = {};
    // Device execution time of the node's kernels where the request has a
    // device clock (InferRequest::set_device_clock: OpenCL profiling events);
    // 0 elsewhere (on the cpu engine `execute` is the kernel's time).
    uint64_t device_ns = 0;
    uint64_t total() const;
    uint64_t host() const;   // every step but execute and wait
};

struct NodeStats {
    std::string node;
    std::string op;
    std::string impl;   // impl used in the last run ("" when skipped)
    bool dynamic_impl = false;
    Counters counters;   // this run
    NodeTimes times;     // this run, when profiled
};

// What a profiled run spent outside the nodes' steps (nanoseconds).
struct RunProfile {
    bool on = false;
    uint64_t nodes_ns = 0;     // the nodes' steps (sum of NodeTimes::total())
    uint64_t inputs_ns = 0;    // checking that every input was set, resetting peaks
    uint64_t finish_ns = 0;    // the final wait for the device
    uint64_t outputs_ns = 0;   // copying the outputs to the host
    uint64_t report_ns = 0;    // state commit, counters and this report
};

struct RunStats {
    Counters totals;                // sum over nodes, this run
    std::vector<NodeStats> nodes;   // execution order
    uint64_t peak_bytes = 0;        // engine peak bytes in use during the run
    uint64_t used_bytes = 0;        // engine bytes in use after the run
    // Memory pool of the request (memory_pool.hpp): device bytes it holds after the
    // run (buffers in use plus free ones kept for reuse) and its peak during the run.
    uint64_t pool_bytes = 0;
    uint64_t pool_peak_bytes = 0;
    // Logical bytes of every tensor the request holds after the run: each node
    // output that owns its data (views into another node's buffer count once),
    // the variables and the constants. The "sum of live tensors" that peak bytes
    // are compared with.
    uint64_t tensor_bytes = 0;
    // Nodes the program folded into their producers when it was built
    // (Program::folded(): e.g. a batch_norm into a convolution's weights);
    // they run no kernel and have no entry in `nodes`.
    uint64_t folded_nodes = 0;
    double host_ms = 0;   // wall time of infer()
    // Wall time of infer() until every primitive was issued, before waiting for
    // the device and copying the outputs: the host's own work (shape updates,
    // impl choice, allocation, kernel enqueues). On a device that runs behind
    // the host this is what the host spends; host_ms adds the device's time.
    double submit_ms = 0;
    RunProfile profile;   // when profiled (InferRequest::set_profiling)
};

}   // namespace dynrt
