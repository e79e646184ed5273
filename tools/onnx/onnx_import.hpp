// The ONNX importer and the node-test runner behind `dynrt onnx-test`.
//
// load_model()/parse_tensor() read ONNX protobuf files (ModelProto, TensorProto
// with raw_data or typed fields) into plain structs; protobuf stays inside this
// library. map_node() turns one ONNX node into one dynrt op with dynrt
// attributes (Gemm's transA -> transpose_a, Conv's pads -> pads_begin/pads_end,
// CumSum's axis input -> attribute ...) or says why it cannot (`unsupported`).
// import_graph() builds one Program from every node of the main graph, and a
// GraphRunner runs it on one network (docs/onnx.md). run_tests() runs node-test
// folders (model.onnx + test_data_set_*/) on one device, each case once on a
// static network and once with every input dim dynamic, and compares with rtol
// 1e-3 / atol 1e-7. Errors in files (unknown op, unsupported dtype, shape
// mismatch, a broken graph) throw dynrt::Error naming the file and the node.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/passes.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::onnx {

// TensorProto.DataType values and their dynrt counterparts.
std::optional<DataType> dtype_from_onnx(int onnx_type);
std::string onnx_type_name(int onnx_type);   // "FLOAT", "DOUBLE" ...

using OnnxAttr = ImportAttr;   // dynrt/op_import.hpp

struct ValueInfo {
    std::string name;
    int onnx_type = 0;             // elem_type of a tensor type
    std::string kind = "tensor";   // "tensor", "sequence", "optional", "map", ...
    bool has_shape = false;
    PartialShape shape;   // symbolic or missing dims are dynamic
    // Per dim of `shape`: the dim_param symbol ("N"), empty for dim_value and
    // anonymous dims (is_anonymous_dim_param). Inputs sharing a symbol must
    // agree at run time.
    std::vector<std::string> dim_params;
};

// Whether a dim_param names nothing: "", "?" and "unk__<digits>" are what
// exporters write for "unknown" (tf2onnx, onnxruntime's tools, hand-edited
// models), so each such dim is its own unknown, tied to no other dim, like a
// dim with neither value nor param or a negative dim_value.
bool is_anonymous_dim_param(const std::string& param);

struct OnnxNode {
    std::string name, op_type, domain;
    std::vector<std::string> inputs;   // "" = optional input left out
    std::vector<std::string> outputs;
    std::map<std::string, OnnxAttr> attrs;
};

// The newest opset of the default domain (ai.onnx) the import rules are
// written for: every op's rule (OpDefinition::imports, dynrt/op_import.hpp)
// reads ImportContext::opset() for the changes up to it (Swish, opset 24, is
// the newest op mapped). A model importing a newer opset, whose ops may mean
// something else, is refused, as onnxruntime refuses opsets newer than it
// knows (parse_model); raise this once the rules have been checked against
// the next opset's changes.
inline constexpr int64_t kNewestOnnxOpset = 24;

struct OnnxModel {
    std::string file;
    // What the file says about itself (`dynrt info`): ModelProto.ir_version,
    // producer_name, producer_version and the main graph's name.
    int64_t ir_version = 0;
    std::string producer_name, producer_version, graph_name;
    int64_t opset = 0;                       // of the default domain
    std::map<std::string, int64_t> opsets;   // every opset_import ("" = default domain)
    std::vector<OnnxNode> nodes;
    std::vector<ValueInfo> inputs;   // graph inputs that are not initializers
    // Graph inputs that have an initializer: constants, never set at run time.
    std::vector<std::string> initialized_inputs;
    std::vector<ValueInfo> outputs;
    std::map<std::string, HostTensor> initializers;
};

// Throw dynrt::Error (file = path) on unreadable or malformed files, on
// TensorProto dtypes dynrt does not have, and on a model whose default-domain
// opset is outside 1..kNewestOnnxOpset, or missing while a node of the
// default domain needs it.
OnnxModel load_model(const std::string& path);
OnnxModel parse_model(const std::string& bytes, const std::string& file);
HostTensor read_tensor(const std::string& path);
HostTensor parse_tensor(const std::string& bytes, const std::string& file);

// ---- mapping (onnx_map.cpp; no protobuf) -----------------------------------

// What the mapper knows about one ONNX input of the node.
struct MapInput {
    bool present = false;
    Layout layout;                       // static in node tests
    const HostTensor* value = nullptr;   // data or initializer, when known
};

struct Mapped {
    std::string unsupported;      // non-empty: why this node cannot be mapped
    std::string op;               // dynrt op
    Attributes attrs;             // raw dynrt attributes
    std::vector<size_t> inputs;   // ONNX input index feeding each dynrt input
};

// The name an import rule gives the node's op: its op_type in the default
// domain ("MatMul"), domain and op_type joined by a dot in any other
// ("com.microsoft.MatMulNBits"); split_rule_name turns it back into the
// domain ("" for ai.onnx) and the op_type.
std::string rule_name(const OnnxNode& node);
std::pair<std::string, std::string> split_rule_name(const std::string& name);
// The ONNX ops the loaded modules map (by rule name), each with its dynrt op.
std::map<std::string, std::string> claimed_ops(const Registry& registry);
// The dynrt op an ONNX op maps to ("" when none).
std::string target_op(const Registry& registry, const std::string& onnx_op);
// Whether a loaded module maps the node's op (domain included); require_rule
// throws the "unknown ONNX op" error naming the op, domain and opset if not.
bool has_rule(const Registry& registry, const OnnxNode& node);
void require_rule(const Registry& registry, const OnnxNode& node, int64_t opset);
// Maps one node through its op's import rule. Throws dynrt::Error for ops no
// module maps and for input counts the rule does not take.
Mapped map_node(const Registry& registry, const OnnxNode& node, int64_t opset, const std::vector<MapInput>& inputs);

// ---- graphs (onnx_graph.cpp) --------------------------------------------------

struct GraphInput {
    std::string name;                      // ONNX name
    std::string node;                      // the program's input node
    Layout layout;                         // as the program declares it
    std::vector<std::string> dim_params;   // per dim, "" where none or anonymous
};

struct ImportOptions {
    // Every dim of every graph input dynamic (a graph input that feeds values to
    // shape inference, like a Reshape target, keeps its length). Ops are still
    // mapped with the layouts the model declares.
    bool dynamic_inputs = false;
    // The passes (dynrt/passes.hpp): the import passes (constant_folding,
    // pattern_*) are read here, the program passes go to the Program's
    // ProgramOptions. The network passes are the caller's (apply_passes on
    // its NetworkOptions).
    PassSet passes;
    // The device the program is for ("cpu", "ocl"; empty: any). A pattern
    // whose op has no impl there is not applied (FusedGraph::declined says
    // so): the nodes it would replace run on the device, the op would not.
    std::string device;
};

// One tensor that a node of the ONNX graph produces, and what the import
// made of it.
struct ImportedTensor {
    // The program reference holding its value ("node" or "node:K"); empty
    // when no program node does (folded at import and unused, or inside a
    // pattern).
    std::string ref;
    // Folded at import (constant_folding): its value.
    std::shared_ptr<const HostTensor> value;
    // No value of its own in the program: which pass took it, and into what
    // ("pattern_gelu: inside Gelu node 'mul_2'").
    std::string absorbed;
};

struct ImportedGraph {
    // Non-empty: a node the importer knows cannot be mapped with these
    // attributes or inputs ("node 'n' (Softmax): ..."); nothing else is set.
    std::string unsupported;
    std::shared_ptr<Program> program;        // built
    std::vector<GraphInput> inputs;          // in model order
    std::vector<std::string> outputs;        // ONNX names; program output k is outputs[k]
    std::vector<std::string> ops;            // ONNX op types of the nodes, in model order
    size_t folded = 0;                       // nodes computed at import (constant folding)
    size_t fused = 0;                        // subgraphs imported as one op (fuse_known_subgraphs)
    std::map<std::string, size_t> matched;   // of them, per pattern pass
    // Candidates a pattern pass did not take, and why ("pattern_attention:
    // Softmax node 'sm': the Softmax is not on the last axis").
    std::vector<std::string> declined;
    // Every tensor a node of the model produces, by ONNX name (the bisect
    // tool reads them through the program).
    std::map<std::string, ImportedTensor> tensors;
};

// A match whose proof needs what only mapping knows: the ranks of the
// tensors it reads (layouts come from the dynrt ops mapped before it). The
// importer checks them when it reaches the fused node; where they fail it
// maps `original` in its place and the match counts as declined.
struct PatternCheck {
    std::string pass;                    // "pattern_attention"
    size_t node = 0;                     // the fused node, an index into FusedGraph::nodes
    std::vector<OnnxNode> helpers;       // nodes only the fused node reads (a Transpose of K), mapped right before it
    std::vector<OnnxNode> original;      // the model's nodes it replaces, in an order that maps them
    std::vector<std::string> needs;      // tensors helpers and originals read from outside them
    std::vector<std::string> rank4;      // q, K, v: rank 4, one dtype, f32 or f16
    std::string mask;                    // the mask the fused node reads ("" none): rank 4 at most
    std::vector<std::string> absorbed;   // tensors that leave with the match
};

struct FusedGraph {
    std::vector<OnnxNode> nodes;                   // the model's, with each match replaced by one node
    size_t fused = 0;                              // matches (for those in `checks`: before the mapping checks)
    std::map<std::string, size_t> matched;         // matches per pass
    std::vector<std::string> declined;             // "<pass>: <node>: why" for candidates that are no match
    std::map<std::string, std::string> absorbed;   // tensor that left -> "<pass>: inside <op> node '<name>'"
    std::vector<PatternCheck> checks;
};

// The model's nodes with each subgraph that spells an ONNX op in several
// nodes (the Erf form of Gelu, attention as MatMul, Softmax, MatMul) replaced
// by that op's node, where a loaded module maps that op (onnx_patterns.cpp)
// and its pass is on in `passes`, and, where `device` is given, has an impl
// there.
FusedGraph fuse_known_subgraphs(const Registry& registry, const OnnxModel& model,
                                const PassSet& passes = PassSet::all(), const std::string& device = {});

// Every node of the main graph: initializers and Constant nodes become
// constants, Identity outputs alias their input, nodes are wired by tensor name.
// Throws dynrt::Error naming the model file and the node for a broken graph
// (a node input nobody produces, an output produced twice, a cycle) and for ops
// without a mapping (op, domain, opset).
ImportedGraph import_graph(const std::shared_ptr<const Registry>& registry, const OnnxModel& model,
                           const ImportOptions& options = {});

// One network and request running an imported graph again and again.
// set_input() checks the dtype, the declared shape and that inputs sharing a
// dim_param agree (against the inputs set since the last infer(); infer()
// checks the inputs kept from earlier runs too).
class GraphRunner {
public:
    GraphRunner(const ImportedGraph& graph, const EnginePtr& engine, const NetworkOptions& options,
                std::string file = {});
    void set_input(const std::string& name, const HostTensor& value);
    void infer();
    HostTensor output(size_t k) const;
    const InferRequest& request() const { return *request_; }

private:
    void check_symbols(size_t input, const std::vector<bool>& against) const;

    ImportedGraph graph_;
    std::string file_;
    std::shared_ptr<Network> network_;
    std::unique_ptr<InferRequest> request_;
    std::vector<std::optional<Shape>> shapes_;   // per input: the shape last set
    std::vector<bool> set_since_infer_;
};

// Why some node of an imported program has no impl of `device` for its first
// input's dtype ("node 'n': no ocl impl of dynrt op 'x'"); empty when every
// node may run there (onnx_runner.cpp).
std::string graph_no_impl(const Registry& registry, const std::string& device, const Program& program);

// ---- node tests (onnx_runner.cpp) -------------------------------------------

struct TestOptions {
    std::string device = "cpu";
    std::vector<std::string> ops;   // ONNX op types to run (empty: every claimed op)
    double rtol = 1e-3;
    double atol = 1e-7;
    bool dynamic_pass = true;
    bool verbose = false;
    bool graphs_only = false;   // only the models of several nodes
    bool strict = false;        // an unsupported case fails the run too (model corpora)
    PassSet passes;             // --passes over DYNRT_PASSES (dynrt/passes.hpp)
};

struct CaseResult {
    std::string folder;   // test folder (its name)
    std::string path;
    std::string onnx_op;
    std::string data_set;   // "test_data_set_0"
    std::string status;     // "pass", "FAIL", "unsupported", "error"
    std::string detail;
    std::string impl_static, impl_dynamic;   // impls that ran
    double max_abs = 0;
};

struct TestReport {
    std::vector<CaseResult> cases;
    std::vector<std::string> skipped;             // folders not run: an op not claimed
    std::map<std::string, std::string> claimed;   // ONNX op -> dynrt op
    size_t passed = 0, failed = 0, errors = 0, unsupported = 0;
};

// Every PATH is a test folder (has model.onnx) or a folder of test folders.
// Single-node models run as one node (onnx_op is the node's op); models of
// several nodes run as a graph (onnx_op "graph"), every data set in order on one
// network per pass, and only when no op filter is given. Folders given directly
// must use known ops (else an "error" case naming the file and node); in
// scanned folders, models with unclaimed ops are listed in `skipped`.
TestReport run_tests(const std::shared_ptr<const Registry>& registry, const std::vector<std::string>& paths,
                     const TestOptions& opt);

std::string summary_text(const TestReport& r, bool verbose);
std::string summary_markdown(const TestReport& r, const TestOptions& opt);

// The tensors of one side of a data set folder (`prefix` "input_" or
// "output_"), checked against the model's declared inputs or outputs.
std::vector<HostTensor> read_data_set(const std::string& folder, const std::string& prefix,
                                      const std::vector<ValueInfo>& declared);

// ---- bisect (onnx_bisect.cpp; `dynrt onnx-test DIR --bisect`) ---------------
//
// Runs a model folder's data sets as configured (the device, the passes) and
// as the reference: the same model with every pass off on the cpu engine's
// reference impls (NetworkOptions::host_reference_only). Every node's outputs
// are read inside the run, right after the node (InferRequest::set_observer),
// so the graph the passes see is the one that runs. The tensors of the ONNX
// graph that both runs hold are compared in a topological order of the
// model's nodes; the first that differs is reported, then the run is made
// again with each pass that was on turned off alone, and the passes whose
// removal makes that tensor right are named.

struct BisectOptions {
    std::string device = "cpu";
    PassSet passes;   // the run as configured
    double rtol = 1e-3;
    double atol = 1e-7;
    bool dynamic_pass = true;   // bisect the run with every input dim dynamic too
};

struct TensorDiff {
    std::string tensor;         // ONNX tensor name
    std::string node;           // the ONNX node that produces it (its label)
    std::string op_type;        // that node's op
    std::string layout;         // as computed ("f32[2,3]"); the reference's when they differ
    std::string program_node;   // the dynrt node that holds it as configured
    std::string impl;           // the impl that ran that node ("fused", "view" ...)
    double max_abs = 0;
    std::string mismatch;   // the worst element
    size_t first = 0;       // the values below start at this element
    std::vector<double> got, want;
    // The node's inputs, each with what became of it: "'x' (matches)", "'w'
    // (graph input or initializer)", "'t' (no value of its own: ...)". Every
    // input matching means the node computed or read them wrong: a kernel, or
    // an input buffer overwritten after its producer ran.
    std::vector<std::string> inputs;
};

// One pass turned off alone: what became of the differing tensor.
struct PassTrial {
    std::string pass;
    bool fixes = false;    // the tensor is right without the pass
    std::string outcome;   // "right", "still differs (max abs 0.5)", "no value: ..." ...
};

struct BisectSet {
    std::string data_set;        // "test_data_set_0"
    std::string mode;            // "static" or "dynamic" (every input dim dynamic)
    std::string error;           // a run failed: what it said
    bool outputs_match = true;   // the configured run's outputs against the data set's
    std::string outputs_detail;
    bool reference_matches = true;   // the reference's outputs against the data set's
    std::string reference_detail;
    size_t compared = 0;                   // tensors compared (up to the difference)
    std::optional<TensorDiff> diff;        // the first tensor that differs
    std::vector<std::string> unobserved;   // tensors before it with no value of their own: "name: why"
    std::vector<PassTrial> trials;         // when diff: each pass that was on, off alone
    std::vector<std::string> blamed;       // the passes whose trial fixes it
};

struct BisectReport {
    std::string folder;
    std::string passes;   // PassSet::to_string() of the configured run
    std::string device;
    std::string reference_note;   // passes the reference had to keep, and why
    std::vector<BisectSet> sets;
    // A run failed, a tensor differs or an output does not match its data set.
    bool failed() const;
};

// `folder` holds model.onnx and test_data_set_*/ (the node-test layout).
// Throws dynrt::Error naming the file for unreadable models or data sets.
BisectReport bisect(const std::shared_ptr<const Registry>& registry, const std::string& folder,
                    const BisectOptions& options);
std::string bisect_text(const BisectReport& report);

}   // namespace dynrt::onnx

// `dynrt onnx-test PATH... [options]`; returns the process exit code. Built
// without ONNX support it prints so and returns 1.
int dynrt_onnx_test_main(int argc, char** argv);
