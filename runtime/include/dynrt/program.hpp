// Program: the graph as built by a front end (YAML, the op harness, the API).
//
// Nodes are added by name; inputs refer to other nodes as "name" or "name:K"
// (output K). build() validates everything against the registry (ops exist,
// attribute schemas, input counts, no cycles, outputs exist), orders the nodes
// topologically and infers every output layout with partial shapes. Errors carry
// the ErrorContext given when the node was added (file, line, node, field).
//
// build() then folds per-channel affine consumers into their producers'
// constant weights (ProgramOptions::fold_channel_affine; docs/architecture.md,
// "Affine folding"): the consumer node is removed and every reference to it,
// the program's outputs included, reads the producer instead. It folds a
// permutation (a transpose) into the one consumer that can read its input
// unpermuted (ProgramOptions::fold_permutations; "Permutation folding").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/layout.hpp"

namespace dynrt {

class Registry;
struct RegisteredOp;

// Graph inputs and constants are built into Program (no op definition, no
// impl): an input's data is set by the request, a constant's is uploaded once.
enum class NodeKind { op, input, constant };

struct NodeInput {
    size_t node = 0;   // index into Program::nodes()
    size_t output = 0;
};

struct Node {
    std::string name;
    NodeKind kind = NodeKind::op;
    std::string op;                         // ops: the op name; built-in kinds: "<input>", "<const>"
    std::vector<std::string> input_names;   // as given
    std::vector<NodeInput> inputs;          // resolved by build()
    Attributes attrs;                       // validated by build()
    ErrorContext where;
    const RegisteredOp* def = nullptr;            // resolved by build(); null for inputs and constants
    std::vector<Layout> out_layouts;              // partial layouts, by build()
    std::shared_ptr<const HostTensor> constant;   // constants only
    Layout declared;                              // inputs only
    std::vector<size_t> users;                    // consumer node indices
    bool is_output = false;
    bool is_dynamic = false;              // any input or output dim dynamic
    bool in_shape_of_subgraph = false;    // computes only from shapes
    std::vector<size_t> shape_of_roots;   // shape_of nodes feeding the subgraph

    bool is_op() const { return kind == NodeKind::op; }
    bool is_input() const { return kind == NodeKind::input; }
    bool is_constant() const { return kind == NodeKind::constant; }
};

struct ProgramOptions {
    // Fold a node whose op declares OpDefinition::channel_affine (batch_norm
    // in inference) into its producer when the producer's op declares
    // OpDefinition::absorb_channel_affine (convolution) and feeds only it;
    // false: every node stays (tests compare both).
    bool fold_channel_affine = true;
    // Fold a node whose op declares OpDefinition::permutation (transpose)
    // into its only consumer when the consumer's op declares
    // OpDefinition::absorb_permutation (gemm) and takes it: the consumer reads
    // the permutation's input with new attributes and the node goes.
    bool fold_permutations = true;
};

// One fold done by build(): `node` (of op `op`) was folded into `into` by
// the pass `pass` (dynrt/passes.hpp).
struct FoldedNode {
    std::string node, op, into;
    std::string pass;
    // True: references to `node` read `into` now, whose output is node's
    // value (into's own value before the fold is computed no more). False:
    // `node` is gone and `into` computes its own value without it.
    bool into_takes_output = false;
};

class Program {
public:
    explicit Program(std::shared_ptr<const Registry> registry, std::string name = "program",
                     ProgramOptions options = {});

    void add_input(const std::string& name, const Layout& layout, ErrorContext where = {});
    void add_constant(const std::string& name, HostTensor value, ErrorContext where = {});
    void add_node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                  Attributes raw_attrs = {}, ErrorContext where = {});
    void add_output(const std::string& name, ErrorContext where = {});   // "node" or "node:K"
    void build();

    const std::string& name() const { return name_; }
    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<size_t>& order() const { return order_; }     // topological
    const std::vector<size_t>& inputs() const { return inputs_; }   // node indices
    const std::vector<NodeInput>& outputs() const { return outputs_; }
    const std::vector<std::string>& output_names() const { return output_names_; }
    size_t node_index(const std::string& name) const;   // throws if unknown
    const std::shared_ptr<const Registry>& registry() const { return registry_; }
    bool built() const { return built_; }
    const ProgramOptions& options() const { return options_; }
    void set_options(const ProgramOptions& options);   // takes effect at the next build()
    // Nodes folded away by build(), in the order they were folded.
    const std::vector<FoldedNode>& folded() const { return folded_; }

private:
    NodeInput resolve(const std::string& ref, const ErrorContext& where) const;
    void check_new_name(const std::string& name, const ErrorContext& where) const;
    void push_node(Node n);   // indexes its name
    // build()'s steps, in order.
    void build_graph();   // the next five
    void resolve_node(size_t i);
    void order_topologically();
    void infer_node(Node& n);
    void resolve_outputs();
    void fold_permutations();      // then build_graph() again, when one folds
    void fold_channel_affines();   // then build_graph() again, while one folds
    void mark_shape_of_subgraphs();
    bool fold_permutation(size_t consumer, size_t input, std::vector<bool>& removed);
    // fold_channel_affines()'s steps.
    bool fold_into_producer(size_t consumer, std::vector<bool>& touched);
    std::string unused_name(const std::string& base) const;
    void remove_folded(const std::vector<bool>& removed, const std::vector<std::vector<size_t>>& lost_users);

    std::shared_ptr<const Registry> registry_;
    std::string name_;
    ProgramOptions options_;
    std::vector<Node> nodes_;
    std::unordered_map<std::string, size_t> by_name_;   // node name -> index into nodes_
    std::vector<size_t> order_;
    std::vector<size_t> inputs_;
    std::vector<NodeInput> outputs_;
    std::vector<std::string> output_names_;
    std::vector<ErrorContext> output_where_;
    std::vector<FoldedNode> folded_;
    std::map<std::string, std::string> folded_into_;   // a folded node's name -> the node that took its place
    bool built_ = false;
};

}   // namespace dynrt
