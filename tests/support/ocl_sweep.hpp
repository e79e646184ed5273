// OpenCL test support: the ocl engine (or nullptr when there is no OpenCL
// module or platform), element-wise comparison with tolerances, and the sweep
// that runs one program on ONE ocl InferRequest and one cpu InferRequest over a
// list of sizes, comparing output 0 and checking which ocl impl ran.
//
// The first call of ocl_engine() points DYNRT_CACHE_DIR at a temp folder of
// the test program (removed at exit), so no run depends on a user's cache.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/program.hpp"

namespace dynrt::test {

EnginePtr ocl_engine();

// Every element: |got - want| <= atol + rtol * |want|; NaN matches NaN.
void expect_close(const HostTensor& got, const HostTensor& want, double rtol, double atol);

// Inputs of one run, by input name.
using OclInputs = std::vector<std::pair<std::string, HostTensor>>;

// Runs `program` on ONE ocl InferRequest and one cpu InferRequest, feeding both
// make(n, seed) for each n of `sizes`, and compares output 0. The node "node"
// must have run the ocl impl of the requested kind; with static impls a size
// seen before must come from the impl cache.
void ocl_sweep(const EnginePtr& eng, const std::shared_ptr<Program>& program, const std::vector<int64_t>& sizes,
               bool dynamic, const std::function<OclInputs(int64_t n, uint64_t seed)>& make, double rtol,
               double atol);

}  // namespace dynrt::test
