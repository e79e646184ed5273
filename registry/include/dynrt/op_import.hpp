// Import rules: how a node of a model format (ONNX) becomes one dynrt op.
//
// An op module lists, in its OpDefinition, the model ops it implements
// (OpDefinition::imports): for each, the format, the model op's name, how many
// inputs and outputs it may have, and a mapping function. The importer (tools/
// onnx) finds the rule by op name, checks the input and output counts, and
// calls the function with the node's attributes, its input layouts and the
// values of inputs known at import time (initializers, constants). The function
// sets the dynrt attributes and picks the inputs, or says why the node cannot
// be mapped faithfully (ImportContext::unsupported): every attribute it does
// not understand must make the node unsupported, so that nothing passes by
// ignoring one (ImportContext::only_attrs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/layout.hpp"

namespace dynrt {

// One attribute of a model node, as the model file has it.
struct ImportAttr {
    enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Other };
    // "INT", "FLOAT", ... as ONNX spells the AttributeProto type; "another type"
    // for Other (GRAPH, SPARSE_TENSOR, TYPE_PROTO or none set).
    static const char* kind_name(Kind k);
    Kind kind = Kind::Other;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    std::shared_ptr<HostTensor> tensor;
};

// One input of a model node, as the importer knows it.
struct ImportInput {
    bool present = false;                // false: an optional input left out
    Layout layout;                       // as declared or inferred (may be dynamic)
    const HostTensor* value = nullptr;   // known at import time (initializer, constant)
};

struct ImportNode {
    std::string name;      // for messages
    std::string op_type;   // "Trilu"
    int64_t opset = 0;     // of the node's domain
    std::map<std::string, ImportAttr> attrs;
    std::vector<ImportInput> inputs;
    size_t outputs = 1;   // outputs the node lists
};

struct ImportResult {
    std::string unsupported;      // non-empty: why this node cannot be mapped
    std::string op;               // the dynrt op (the rule's own op unless changed)
    Attributes attrs;             // raw dynrt attributes (validated by the importer)
    std::vector<size_t> inputs;   // node input index feeding each dynrt input
};

// What a mapping function reads and fills.
class ImportContext {
public:
    ImportContext(const ImportNode& node, std::string op) : node_(node) { out.op = std::move(op); }

    const ImportNode& node() const { return node_; }
    int64_t opset() const { return node_.opset; }

    bool has(const std::string& a) const { return node_.attrs.count(a) != 0; }
    // Typed readers: the default when the node lacks the attribute, its value
    // when it has the reader's type (i: INT, f: FLOAT, s: STRING, ints: INTS,
    // floats: FLOATS). An attribute of another type (`axis` given as a FLOAT)
    // throws dynrt::Error naming the node, the op, the attribute (field), the
    // type expected and the type found: onnxruntime refuses such a model too,
    // and reading the wrong field would silently give 0. A rule that accepts
    // several types for one attribute reads it through attr() and its kind.
    int64_t i(const std::string& a, int64_t def) const;
    double f(const std::string& a, double def) const;
    std::string s(const std::string& a, const std::string& def) const;
    std::vector<int64_t> ints(const std::string& a) const;   // empty when absent
    std::vector<double> floats(const std::string& a) const;
    const ImportAttr* attr(const std::string& a) const;

    size_t inputs() const { return node_.inputs.size(); }
    bool present(size_t k) const { return k < node_.inputs.size() && node_.inputs[k].present; }
    size_t count_present() const;
    const Layout& layout(size_t k) const { return node_.inputs.at(k).layout; }
    size_t rank(size_t k) const { return layout(k).shape.rank(); }
    const HostTensor* value(size_t k) const { return present(k) ? node_.inputs[k].value : nullptr; }

    // False (node unsupported, naming the attribute) unless every attribute
    // of the node is in `known`.
    bool only_attrs(std::initializer_list<const char*> known);
    // Marks the node unsupported; returns false so that rules can `return c.unsupported(...)`.
    bool unsupported(const std::string& why);
    // Appends the present inputs among `ks` to the dynrt inputs, in order.
    void use_inputs(std::initializer_list<size_t> ks);
    void use_all_inputs();
    void set(const std::string& name, AttrValue v) { out.attrs.set(name, std::move(v)); }

    ImportResult out;

private:
    const ImportAttr* typed(const std::string& a, ImportAttr::Kind want) const;
    const ImportNode& node_;
};

using ImportFn = std::function<bool(ImportContext&)>;

struct ImportRule {
    std::string format = "onnx";
    std::string op_type;
    // Node inputs: the first min_inputs must be present; at most max_inputs
    // may be listed (kAnyInputs: no limit). Checked before `map` runs.
    size_t min_inputs = 1;
    size_t max_inputs = 1;
    size_t max_outputs = 1;   // node outputs k map to dynrt outputs k
    ImportFn map;
    std::string doc;   // one line for docs/conformance.md: how attributes map
};

constexpr size_t kAnyInputs = static_cast<size_t>(-1);

inline ImportRule onnx_rule(std::string op_type, size_t min_inputs, size_t max_inputs, ImportFn map,
                            std::string doc = {}, size_t max_outputs = 1) {
    ImportRule r;
    r.op_type = std::move(op_type);
    r.min_inputs = min_inputs;
    r.max_inputs = max_inputs;
    r.max_outputs = max_outputs;
    r.map = std::move(map);
    r.doc = std::move(doc);
    return r;
}

// A rule that maps the node's inputs as they are, with fixed dynrt
// attributes, when the node has none of its own.
ImportFn import_plain(std::map<std::string, AttrValue> attrs = {});

}   // namespace dynrt
