// Test support: one registry with every in-tree module loaded, engines, and a
// one-node network runner for op tests.
#pragma once

#include <cstdlib>
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

// Counters of `node` in the request's last run (a test failure, and zero
// counters, when the node did not run).
const Counters& node_counters(const InferRequest& req, const std::string& node);

// Counter expectations of one step of a shape sweep on one request.
// `same_as_prev`: the shape equals the previous step's; `revisit`: the shape was
// seen on an earlier, not immediately previous, step.
//
// A non-critical op: executes once; a new shape re-infers, an unchanged one
// skips update_shape; with dynamic impls nothing is built, with static impls a
// new shape builds and a revisit hits the impl cache.
void expect_sweep_counters(const Counters& c, bool dynamic_impls, bool same_as_prev, bool revisit, size_t step);

// How the network picks impls for a critical op. On a dynamic node it runs the
// dynamic impl while a static one is built in the background; without
// background compilation it builds the static impl synchronously instead.
enum class Mode { dynamic_async, sync_compile, static_only };

// `prev_new`: the previous step ran a shape never seen before (so it queued a
// background build that this step, on the same shape, picks up).
void expect_impl_counters(Mode mode, const Counters& c, bool same_as_prev, bool revisit, bool prev_new, size_t step);

// One attribute, for test programs: attr("func", std::string("relu")),
// attr("axis", int64_t(1)).
inline Attributes attr(const std::string& name, AttrValue value) {
    Attributes a;
    a.set(name, std::move(value));
    return a;
}

// The shape_of subgraph of tests that reshape by a computed target: nodes
// "shape" = shape_of(x), "batch" = gather(shape, [0]) and "target" =
// concat(batch, [-1], [last]) (constants "idx0", "minus1", "last").
void add_batch_target(Program& p, const std::string& x, int64_t last);

// Restores an environment variable to its value at construction (or unsets it)
// when the test scope ends.
class EnvGuard {
public:
    explicit EnvGuard(const char* name) : name_(name) {
        if (const char* v = std::getenv(name)) old_ = v, had_ = true;
    }
    ~EnvGuard() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

}   // namespace dynrt::test
