// OpenCL test support: the sweep that runs one program on ONE ocl InferRequest
// and one cpu InferRequest over a list of sizes, comparing output 0 and
// checking which ocl impl ran. ocl_engine() and expect_close() come from the
// op test library (op_test.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/implementation_map.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "op_test.hpp"   // ocl_engine(), expect_close()

namespace dynrt::test {

// Inputs of one run, by input name.
using OclInputs = std::vector<std::pair<std::string, HostTensor>>;

// Runs `program` on ONE ocl InferRequest and one cpu InferRequest, feeding both
// make(n, seed) for each n of `sizes`, and compares output 0. The node "node"
// must have run the ocl impl of the requested kind; with static impls a size
// seen before must come from the impl cache.
void ocl_sweep(const EnginePtr& eng, const std::shared_ptr<Program>& program, const std::vector<int64_t>& sizes,
               bool dynamic, const std::function<OclInputs(int64_t n, uint64_t seed)>& make, double rtol, double atol);

// ocl_sweep() with dynamic impls, then with static impls, exact comparison.
void ocl_sweep_exact(const EnginePtr& eng, const std::shared_ptr<Program>& program, const std::vector<int64_t>& sizes,
                     const std::function<OclInputs(int64_t n, uint64_t seed)>& make);

// ocl_sweep_exact() on ocl_engine() for each element width (f16, i64, u8):
// program(t) is the program of dtype t, make(t, n, seed) the inputs of one run.
// Skips the test (with a note) when there is no ocl engine.
void ocl_sweep_every_width(const std::vector<int64_t>& sizes,
                           const std::function<std::shared_ptr<Program>(DataType t)>& program,
                           const std::function<OclInputs(DataType t, int64_t n, uint64_t seed)>& make);

// ONE request on the ocl engine (dynamic: shape-agnostic impls serve every new
// shape while static builds are queued in the background for revisits; else
// static impls only) and one cpu reference request, both for `program`. The
// ocl request takes the rest of its options from `ocl_options`.
struct OclAndCpuRequests {
    OclAndCpuRequests(const EnginePtr& eng, const std::shared_ptr<Program>& program, bool dynamic,
                      NetworkOptions ocl_options = {});
    // Feeds `inputs` (by name) to both requests and runs both.
    void infer(const OclInputs& inputs);
    InferRequest req;
    InferRequest ref;
};

// Runs one impl on `eng` directly (no network): allocates device memory for
// p.inputs and p.outputs, executes `impl` on `stream` and reads output 0 back.
// The input buffers are left uninitialised (for ops that only read shapes).
HostTensor execute_impl(const EnginePtr& eng, Stream& stream, Impl& impl, const KernelParams& p);

// The impl a node ran in one step of a sweep on the ocl engine. Dynamic
// (background builds on): a new shape runs the *_ocl_dynamic impl, a revisit the
// dynamic impl or a static one built meanwhile. Static: the *_ocl_static impl,
// built on a new shape, from the impl cache on a revisit. `what` names the step.
void expect_ocl_impl(const NodeStats& ns, bool dynamic, bool revisit, const std::string& what);

// Runs `program` once on `eng` with `inputs` (by name) and expects the node to
// have fallen back to a host impl (no *_ocl_static / *_ocl_dynamic); returns
// output 0.
HostTensor expect_host_fallback(const EnginePtr& eng, const std::shared_ptr<Program>& program, const OclInputs& inputs);

// Two-input ops without an f16 OpenCL kernel: runs `op` on random f16 inputs
// of shapes `s0`, `s1` on the ocl engine through expect_host_fallback() and
// returns {input 0, input 1, output 0}; empty when there is no ocl engine.
std::vector<HostTensor> f16_host_fallback(const std::string& op, const Shape& s0, const Shape& s1,
                                          const Attributes& attrs);

// Tail sizes, then revisits, never the same size twice in a row (so each run
// selects an impl): 1, 3, 13, 16, 17, 255, 257, 16, 1, 257.
const std::vector<int64_t>& ocl_tail_sizes();

}   // namespace dynrt::test
