// What the import patterns (onnx_patterns.cpp, onnx_pattern_attention.cpp,
// onnx_pattern_rms_norm.cpp)
// ask of the model's node list before anything is mapped: who produces and
// who reads each tensor, which tensors are constants and what they hold.
// Built once per import by fuse_known_subgraphs; internal to tools/onnx.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_import.hpp"

namespace dynrt::onnx {

class GraphIndex {
public:
    explicit GraphIndex(const OnnxModel& m);

    const OnnxModel& model() const { return model_; }
    const OnnxNode& node(size_t k) const { return model_.nodes[k]; }
    // "'name' (Op)", or "Op node k" for a node without a name.
    std::string label(size_t k) const;

    // Node k is a default-domain `op` of `inputs` inputs, one output and no
    // attributes (is) or any attributes (is_op).
    bool is(size_t k, const char* op, size_t inputs) const;
    bool is_op(size_t k, const char* op, size_t inputs) const;

    size_t readers(const std::string& t) const;
    bool graph_output(const std::string& t) const { return graph_outputs_.count(t) != 0; }
    // The tensor is read once, by a node of the pattern, and is no graph output.
    bool internal(const std::string& t) const { return readers(t) == 1 && !graph_output(t); }
    // The one node reading tensor t (internal(t) holds).
    std::optional<size_t> reader(const std::string& t) const;
    // Every node reading t, once per input that reads it.
    std::vector<size_t> all_readers(const std::string& t) const;
    std::optional<size_t> producer(const std::string& t) const;

    // The value of an initializer or of a Constant node's `value`; null otherwise.
    const HostTensor* constant(const std::string& t) const;
    // A floating constant of one element: its value.
    std::optional<double> scalar(const std::string& t) const;
    // A floating scalar constant (initializer or Constant node) within 1e-6 of `want`.
    bool scalar(const std::string& t, double want) const;
    // Node k has two inputs, one of them the scalar `want`: the other.
    std::optional<std::string> other_than_scalar(size_t k, double want) const;
    // An integer constant of one element: its value.
    std::optional<int64_t> int_scalar(const std::string& t) const;

    // A tensor name not used by the model, starting with `base`.
    std::string fresh_name(const std::string& base);

private:
    const OnnxModel& model_;
    std::map<std::string, size_t> readers_;    // tensor -> how many node inputs read it
    std::map<std::string, size_t> producer_;   // tensor -> node
    std::set<std::string> graph_outputs_;
    std::set<std::string> taken_;   // every tensor name, and the ones fresh_name gave out
};

// The attention pattern (onnx_pattern_attention.cpp). Every Softmax whose
// scores come from a MatMul is a candidate. A match marks its nodes `gone`,
// puts one DynrtSdpa node in place of its last one (nodes[k]) and adds what
// the importer checks when mapping to `out.checks` (PatternCheck::node is
// the model's index of that node; the caller renumbers it). Candidates that
// are not attention as the pass can prove say why in `out.declined`.
void fuse_attention(GraphIndex& index, const Registry& registry, std::vector<OnnxNode>& nodes, std::vector<bool>& gone,
                    FusedGraph& out);

// The RMSNorm pattern (onnx_pattern_rms_norm.cpp). Every ReduceMean of the
// squares of a tensor is a candidate. A match marks its nodes `gone` and puts
// one DynrtRmsNorm node (x, an optional scale; epsilon) in place of its last
// one, named as that node; candidates that are no RMSNorm the pass can prove
// say why in `out.declined`.
void fuse_rms_norm(const GraphIndex& index, std::vector<OnnxNode>& nodes, std::vector<bool>& gone, FusedGraph& out);

}   // namespace dynrt::onnx
