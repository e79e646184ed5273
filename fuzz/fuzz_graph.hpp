// The differential graph fuzzer (fuzz_graph.cpp): fuzz bytes decode into a
// small ONNX graph built from the patterns dynrt's passes rewrite (reshape,
// transpose and view chains with constant and run-time targets, MatMul/Gemm
// with broadcasting bias and activations, Conv + BatchNormalization, Concat
// on a dynamic axis, Softmax, LayerNormalization) and 2-4 input shape sets.
// check() imports the graph twice and runs every shape set in turn on one
// GraphRunner each: the engine under test with every pass on, and the cpu
// engine with every pass off (all_passes_off()); every output of every run
// must agree. Callers: LLVMFuzzerTestOneInput (libFuzzer and the replay of
// fuzz/regressions/graph/), and graph_fuzz_main.cpp (the plain driver, which
// can put the ocl engine under test).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/passes.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::fuzz::graph {

// The options under which nothing rewrites the graph or shares a buffer
// between primitives, so that every node runs on its own through the cpu
// reference impls.
struct PassOptions {
    PassSet passes;           // the switchboard (dynrt/passes.hpp): import, program and network passes
    NetworkOptions network;   // the network's options besides the passes (host_reference_only)
};
PassOptions all_passes_on();
PassOptions all_passes_off();

struct Engines {
    std::shared_ptr<const Registry> registry;
    EnginePtr under_test;   // every pass on
    EnginePtr reference;    // cpu, every pass off
};

// What the passes did over the runs with every pass on (coverage, for the
// driver's summary).
struct Coverage {
    uint64_t views = 0, fused_runs = 0, unfused_runs = 0, concat_inplace = 0, fake_aligned = 0, pool_hits = 0,
             folded_nodes = 0, import_folded = 0, import_fused = 0;
};

struct Result {
    bool ran = false;           // false: the graph is one the importer reports unsupported
    bool both_failed = false;   // both runs raised a dynrt::Error on the same shape set
    std::string finding;        // empty: the runs agree
    std::string graph;          // the graph and its shape sets, readable
    Coverage coverage;
};

// Decodes `data` and compares the two runs. With `bisect`, a finding also says
// which single pass, switched off in the run under test, makes it agree.
Result check(const uint8_t* data, size_t size, const Engines& engines, bool bisect);

}   // namespace dynrt::fuzz::graph
