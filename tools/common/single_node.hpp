// One-node programs: the op under test fed by graph inputs and constants.
//
// The op harness, the ONNX node tests and the op tests all need the same small
// graph: inputs "in0", "in1", ... (graph inputs or constants), one node "node"
// and every output of it ("node", "node:1", ...). build_single_node() makes it;
// node_input() decides how a tensor enters it for a static or a dynamic run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::tools {

inline constexpr const char* kSingleNodeName = "node";
// "in<k>": the name of input k of the node.
std::string single_node_input_name(size_t k);

struct SingleNodeInput {
    Layout layout;                       // a graph input's (partial) layout
    const HostTensor* value = nullptr;   // a constant's data; a graph input's data for feed() (optional)
    bool constant = false;
    ErrorContext where;   // where errors about this input point
};

// How a tensor takes part in the node.
enum class InputRole {
    // Ordinary data: every dim is dynamic in a dynamic run.
    data,
    // Values that shape inference reads (a reshape target): a constant in a
    // static run; in a dynamic run a graph input whose length (the rank it
    // describes) stays static while its values change.
    shape_values,
    // A constant in every run (weights given as initializers).
    constant,
};
// `value` must outlive the program build and every feed().
SingleNodeInput node_input(const HostTensor& value, InputRole role, bool dynamic);

struct SingleNode {
    std::string op;
    Attributes attrs;
    std::vector<SingleNodeInput> inputs;
    ErrorContext where;         // the node's context (node, op, file)
    std::string program_name;   // for messages; default "single node <op>"
};

// Builds (and runs Program::build() on) the one-node program.
std::shared_ptr<Program> build_single_node(std::shared_ptr<const Registry> registry, const SingleNode& node);

// The kernel params of the node of a built one-node program on `engine`, as an
// impl entry's check() sees them (inputs from the producers' layouts).
KernelParams single_node_params(const Program& program, Engine* engine);

// Sets every graph input that has a value on `request`.
void feed(InferRequest& request, const SingleNode& node);

}   // namespace dynrt::tools
