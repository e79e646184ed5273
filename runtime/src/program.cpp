// Program building: name resolution, validation, topological order, partial
// shape inference and shape_of-subgraph marking.
#include "dynrt/program.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

namespace {

ErrorContext node_ctx(const Node& n, const std::string& field = {}) {
    ErrorContext c = n.where;
    c.node = n.name;
    c.op = n.op;
    if (!field.empty()) c.field = field;
    return c;
}

std::string join_layouts(const std::vector<Layout>& ls) {
    std::string s;
    for (size_t i = 0; i < ls.size(); ++i) s += (i ? ", " : "") + ls[i].to_string();
    return s;
}

}   // namespace

Program::Program(std::shared_ptr<const Registry> registry, std::string name)
    : registry_(std::move(registry)), name_(std::move(name)) {
    if (!registry_) throw Error("Program needs a registry");
}

static void check_new_name(const std::vector<Node>& nodes, const std::string& name, const ErrorContext& where) {
    ErrorContext c = where;
    c.node = name;
    if (name.empty()) throw Error("node name is empty", c);
    if (name.find(':') != std::string::npos) throw Error("node names may not contain ':'", c);
    for (const auto& n : nodes)
        if (n.name == name) throw Error("duplicate node name '" + name + "'", c);
}

void Program::add_input(const std::string& name, const Layout& layout, ErrorContext where) {
    check_new_name(nodes_, name, where);
    Node n;
    n.name = name;
    n.kind = NodeKind::input;
    n.op = "<input>";
    n.declared = layout;
    n.where = std::move(where);
    nodes_.push_back(std::move(n));
    built_ = false;
}

void Program::add_constant(const std::string& name, HostTensor value, ErrorContext where) {
    check_new_name(nodes_, name, where);
    Node n;
    n.name = name;
    n.kind = NodeKind::constant;
    n.op = "<const>";
    n.constant = std::make_shared<const HostTensor>(std::move(value));
    n.where = std::move(where);
    nodes_.push_back(std::move(n));
    built_ = false;
}

void Program::add_node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                       Attributes raw_attrs, ErrorContext where) {
    check_new_name(nodes_, name, where);
    Node n;
    n.name = name;
    n.op = op;
    n.input_names = std::move(inputs);
    n.attrs = std::move(raw_attrs);
    n.where = std::move(where);
    nodes_.push_back(std::move(n));
    built_ = false;
}

void Program::add_output(const std::string& name, ErrorContext where) {
    output_names_.push_back(name);
    output_where_.push_back(std::move(where));
    built_ = false;
}

size_t Program::node_index(const std::string& name) const {
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].name == name) return i;
    throw Error("unknown node '" + name + "'");
}

NodeInput Program::resolve(const std::string& ref, const ErrorContext& where) const {
    std::string name = ref;
    size_t out = 0;
    auto colon = ref.rfind(':');
    if (colon != std::string::npos) {
        name = ref.substr(0, colon);
        const std::string idx = ref.substr(colon + 1);
        if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos)
            throw Error("bad reference '" + ref + "': expected 'node' or 'node:K'", where);
        // Nine digits at most: no node has a billion outputs, and stoul never overflows.
        if (idx.size() > 9) throw Error("bad reference '" + ref + "': output index " + idx + " is out of range", where);
        out = std::stoul(idx);
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].name == name) return NodeInput{i, out};
    }
    throw Error("reference to unknown node '" + name + "'", where);
}

void Program::build() {
    order_.clear();
    inputs_.clear();
    outputs_.clear();
    for (auto& n : nodes_) {
        n.inputs.clear();
        n.users.clear();
        n.is_output = false;
        n.shape_of_roots.clear();
        n.in_shape_of_subgraph = false;
    }
    for (size_t i = 0; i < nodes_.size(); ++i) resolve_node(i);
    order_topologically();
    for (size_t idx : order_) infer_node(nodes_[idx]);
    resolve_outputs();
    mark_shape_of_subgraphs();
    built_ = true;
}

// The node's op, attributes and input references.
void Program::resolve_node(size_t i) {
    Node& n = nodes_[i];
    if (n.is_input()) inputs_.push_back(i);
    if (!n.is_op()) return;   // built in: no op, no inputs
    n.def = registry_->find_op(n.op);
    if (!n.def) {
        std::string known;
        for (const auto& name : registry_->op_names()) known += (known.empty() ? "" : ", ") + name;
        throw Error("unknown op '" + n.op + "' (loaded ops: " + known + ")", node_ctx(n, "op"));
    }
    const OpDefinition& def = n.def->def;
    const size_t nin = n.input_names.size();
    if (nin < def.min_inputs || nin > def.max_inputs) {
        std::string expect =
            def.min_inputs == def.max_inputs
                ? std::to_string(def.min_inputs)
                : std::to_string(def.min_inputs) + ".." +
                      (def.max_inputs == SIZE_MAX ? std::string("any") : std::to_string(def.max_inputs));
        throw Error("op '" + n.op + "' takes " + expect + " inputs, got " + std::to_string(nin), node_ctx(n, "inputs"));
    }
    try {
        n.attrs = Attributes::validate(def.attrs, n.attrs);
    } catch (const Error& e) {
        throw e.with_context(node_ctx(n));
    }
    for (const auto& ref : n.input_names) {
        NodeInput in = resolve(ref, node_ctx(n, "inputs"));
        if (in.node == i) throw Error("node '" + n.name + "' uses itself as input", node_ctx(n, "inputs"));
        n.inputs.push_back(in);
    }
}

// Kahn's algorithm, stable by declaration order; a cycle is an error.
void Program::order_topologically() {
    std::vector<size_t> indeg(nodes_.size(), 0);
    for (size_t i = 0; i < nodes_.size(); ++i)
        for (const auto& in : nodes_[i].inputs) {
            nodes_[in.node].users.push_back(i);
            ++indeg[i];
        }
    std::set<size_t> ready;
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (indeg[i] == 0) ready.insert(i);
    while (!ready.empty()) {
        size_t i = *ready.begin();
        ready.erase(ready.begin());
        order_.push_back(i);
        for (size_t u : nodes_[i].users)
            if (--indeg[u] == 0) ready.insert(u);
    }
    if (order_.size() != nodes_.size()) {
        std::string cyc;
        for (size_t i = 0; i < nodes_.size(); ++i)
            if (indeg[i] != 0) cyc += (cyc.empty() ? "" : ", ") + nodes_[i].name;
        size_t first = 0;
        while (indeg[first] == 0) ++first;
        throw Error("the graph has a cycle through: " + cyc, node_ctx(nodes_[first], "inputs"));
    }
    for (auto& n : nodes_) {
        std::sort(n.users.begin(), n.users.end());
        n.users.erase(std::unique(n.users.begin(), n.users.end()), n.users.end());
    }
}

// Partial shape inference of one node (its producers are done).
void Program::infer_node(Node& n) {
    if (!n.is_op()) {
        n.out_layouts = {n.is_input() ? n.declared : n.constant->layout()};
        n.is_dynamic = n.out_layouts[0].shape.is_dynamic();
        return;
    }
    const OpDefinition& def = n.def->def;
    std::vector<Layout> in_layouts;
    for (const auto& in : n.inputs) {
        const Node& p = nodes_[in.node];
        if (in.output >= p.out_layouts.size())
            throw Error("node '" + p.name + "' has no output " + std::to_string(in.output), node_ctx(n, "inputs"));
        in_layouts.push_back(p.out_layouts[in.output]);
    }
    ShapeInferContext ctx{n.name, in_layouts, n.attrs, {}};
    ctx.values.assign(n.inputs.size(), nullptr);
    for (size_t v : def.value_inputs) {
        if (v < n.inputs.size() && nodes_[n.inputs[v].node].constant)
            ctx.values[v] = nodes_[n.inputs[v].node].constant.get();
    }
    try {
        n.out_layouts = def.infer(ctx);
    } catch (const Error& e) {
        throw Error(e.message() + " (inputs: " + join_layouts(in_layouts) + ")", node_ctx(n)).with_context(e.context());
    }
    const size_t declared = output_count(def, n.attrs);
    if (n.out_layouts.size() != declared)
        throw Error("shape inference returned " + std::to_string(n.out_layouts.size()) + " outputs, op declares " +
                        std::to_string(declared),
                    node_ctx(n));
    n.is_dynamic = false;
    for (const auto& l : in_layouts) n.is_dynamic |= l.shape.is_dynamic();
    for (const auto& l : n.out_layouts) n.is_dynamic |= l.shape.is_dynamic();
}

void Program::resolve_outputs() {
    if (output_names_.empty()) throw Error("the program has no outputs", ErrorContext{});
    for (size_t i = 0; i < output_names_.size(); ++i) {
        ErrorContext where = output_where_[i];
        where.field = "outputs";
        NodeInput o = resolve(output_names_[i], where);
        if (o.output >= nodes_[o.node].out_layouts.size())
            throw Error("node '" + nodes_[o.node].name + "' has no output " + std::to_string(o.output), where);
        nodes_[o.node].is_output = true;
        outputs_.push_back(o);
    }
}

// A node belongs to a shape_of subgraph when everything it reads is a constant,
// a shape_of-like node or another subgraph node: its values then change only
// when the shapes seen by its shape_of roots change.
void Program::mark_shape_of_subgraphs() {
    for (size_t idx : order_) {
        Node& n = nodes_[idx];
        if (!n.is_op()) continue;
        const OpTraits& t = n.def->def.traits;
        if (t.shape_of_like || t.data_dependent_output || n.inputs.empty()) continue;
        bool all = true;
        std::set<size_t> roots;
        for (const auto& in : n.inputs) {
            const Node& p = nodes_[in.node];
            if (p.is_constant()) continue;
            if (p.is_op() && p.def->def.traits.shape_of_like) {
                roots.insert(in.node);
            } else if (p.in_shape_of_subgraph) {
                roots.insert(p.shape_of_roots.begin(), p.shape_of_roots.end());
            } else {
                all = false;
                break;
            }
        }
        if (all && !roots.empty()) {
            n.in_shape_of_subgraph = true;
            n.shape_of_roots.assign(roots.begin(), roots.end());
        }
    }
}

}   // namespace dynrt
