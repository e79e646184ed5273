// Test support: one registry with every in-tree module loaded, engines, and a
// one-node network runner for op tests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::test {

// Folder of the in-tree modules (build/lib/dynrt).
std::string module_dir();
// A registry with every module of module_dir() loaded (once per process);
// fails the test program if any module does not load.
std::shared_ptr<const Registry> registry();
EnginePtr engine(const std::string& type = "cpu");

// Random tensor with values in [low, high) (integers for integer dtypes).
HostTensor random_tensor(DataType t, const Shape& s, uint64_t seed, double low = -1.0, double high = 1.0);

// Builds a one-node program: inputs "in0", "in1"... with the given partial
// layouts (inputs in `constants` become constant nodes instead), node "node"
// of `op`, output "node".
std::shared_ptr<Program> single_node_program(const std::string& op, const std::vector<Layout>& inputs,
                                             const Attributes& attrs,
                                             const std::map<size_t, HostTensor>& constants = {});

// Runs `program` once on a fresh network for `engine` with the given inputs (by
// input order, constants skipped) and returns output 0.
HostTensor run_once(const std::shared_ptr<Program>& program, const std::vector<HostTensor>& inputs,
                    NetworkOptions options = {}, const std::string& engine_type = "cpu");

// Max |a-b| over all elements (shapes and dtypes must match, else +inf).
double max_abs_diff(const HostTensor& a, const HostTensor& b);

}  // namespace dynrt::test
