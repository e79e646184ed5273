// Program building: name resolution, validation, topological order, partial
// shape inference, affine folding and shape_of-subgraph marking.
#include "dynrt/program.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "dynrt/host_tensor.hpp"
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

Program::Program(std::shared_ptr<const Registry> registry, std::string name, ProgramOptions options)
    : registry_(std::move(registry)), name_(std::move(name)), options_(options) {
    if (!registry_) throw Error("Program needs a registry");
}

void Program::set_options(const ProgramOptions& options) {
    options_ = options;
    built_ = false;
}

// Names are looked up through by_name_ (one hash lookup), so adding, resolving
// and folding stay linear in the node count.
void Program::check_new_name(const std::string& name, const ErrorContext& where) const {
    ErrorContext c = where;
    c.node = name;
    if (name.empty()) throw Error("node name is empty", c);
    if (name.find(':') != std::string::npos) throw Error("node names may not contain ':'", c);
    if (by_name_.count(name)) throw Error("duplicate node name '" + name + "'", c);
}

void Program::push_node(Node n) {
    by_name_.emplace(n.name, nodes_.size());
    nodes_.push_back(std::move(n));
    built_ = false;
}

void Program::add_input(const std::string& name, const Layout& layout, ErrorContext where) {
    check_new_name(name, where);
    Node n;
    n.name = name;
    n.kind = NodeKind::input;
    n.op = "<input>";
    n.declared = layout;
    n.where = std::move(where);
    push_node(std::move(n));
}

void Program::add_constant(const std::string& name, HostTensor value, ErrorContext where) {
    check_new_name(name, where);
    Node n;
    n.name = name;
    n.kind = NodeKind::constant;
    n.op = "<const>";
    n.constant = std::make_shared<const HostTensor>(std::move(value));
    n.where = std::move(where);
    push_node(std::move(n));
}

void Program::add_node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                       Attributes raw_attrs, ErrorContext where) {
    check_new_name(name, where);
    Node n;
    n.name = name;
    n.op = op;
    n.input_names = std::move(inputs);
    n.attrs = std::move(raw_attrs);
    n.where = std::move(where);
    push_node(std::move(n));
}

void Program::add_output(const std::string& name, ErrorContext where) {
    output_names_.push_back(name);
    output_where_.push_back(std::move(where));
    built_ = false;
}

size_t Program::node_index(const std::string& name) const {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
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
    for (bool alias = true; alias;) {   // a folded node reads as the node that took its place
        auto it = folded_into_.find(name);
        alias = it != folded_into_.end();
        if (alias) name = it->second;
    }
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return NodeInput{it->second, out};
    throw Error("reference to unknown node '" + name + "'", where);
}

void Program::build() {
    built_ = false;
    build_graph();
    if (options_.fold_permutations) fold_permutations();
    if (options_.fold_channel_affine) fold_channel_affines();
    mark_shape_of_subgraphs();
    built_ = true;
}

void Program::build_graph() {
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

// Permutation folding: each consumer input that reads a permutation the
// consumer can take in its attributes reads the permutation's input instead;
// the permutations so bypassed leave and the graph is built again. One pass:
// a permutation feeding a permutation is not absorbed.
void Program::fold_permutations() {
    std::vector<bool> removed(nodes_.size(), false);
    const size_t folded_before = folded_.size();
    for (size_t idx : order_) {
        if (!nodes_[idx].is_op() || !nodes_[idx].def->def.absorb_permutation) continue;
        for (size_t k = 0; k < nodes_[idx].inputs.size(); ++k) fold_permutation(idx, k, removed);
    }
    if (folded_.size() == folded_before) return;
    remove_folded(removed, {});
    build_graph();
}

// Input `input` of `consumer` is output 0 of a permutation that has no other
// user, reads it once, is not an output, and whose permutation the consumer
// takes: the consumer gets the attributes absorb_permutation gives and the
// permutation's input; the permutation is marked removed.
bool Program::fold_permutation(size_t consumer, size_t input, std::vector<bool>& removed) {
    Node& c = nodes_[consumer];
    const NodeInput in = c.inputs[input];
    const Node& p = nodes_[in.node];
    if (removed[in.node] || !p.is_op() || !p.def->def.permutation || p.is_output || in.output != 0 ||
        p.inputs.empty() || p.users != std::vector<size_t>{consumer})
        return false;
    if (std::count_if(c.inputs.begin(), c.inputs.end(), [&](const NodeInput& i) { return i.node == in.node; }) != 1)
        return false;
    const NodeInput src = p.inputs[0];
    const size_t rank = nodes_[src.node].out_layouts.at(src.output).shape.rank();
    const std::optional<std::vector<size_t>> perm = p.def->def.permutation(p.attrs, rank);
    if (!perm) return false;
    std::optional<Attributes> attrs = c.def->def.absorb_permutation(c.attrs, input, *perm);
    if (!attrs) return false;
    c.attrs = std::move(*attrs);
    c.input_names[input] = p.input_names[0];
    removed[in.node] = true;
    folded_.push_back({p.name, p.op, c.name, "fold_permutations", false});
    return true;
}

// Affine folding: every consumer that can go is folded in one pass (each
// producer takes at most one fold per pass), the removed nodes and the
// constants only they used leave, and the graph is built again; a chain
// (conv -> batch_norm -> batch_norm) folds over several passes.
void Program::fold_channel_affines() {
    for (;;) {
        std::vector<bool> touched(nodes_.size(), false);
        const size_t folded_before = folded_.size();
        for (size_t idx : order_)
            if (fold_into_producer(idx, touched)) touched[idx] = true;
        if (folded_.size() == folded_before) return;
        std::vector<std::vector<size_t>> lost_users(nodes_.size());
        std::vector<bool> removed(nodes_.size(), false);
        for (size_t k = folded_before; k < folded_.size(); ++k) {
            const size_t c = node_index(folded_[k].node), p = node_index(folded_[k].into);
            removed[c] = true;
            for (const NodeInput& in : nodes_[c].inputs) lost_users[in.node].push_back(c);
            for (const NodeInput& in : nodes_[p].inputs) {   // inputs before the fold, resolved
                bool still = false;
                for (const std::string& ref : nodes_[p].input_names) still |= resolve(ref, {}).node == in.node;
                if (!still) lost_users[in.node].push_back(p);
            }
        }
        remove_folded(removed, lost_users);
        build_graph();
    }
}

// Folds node `consumer` into its producer when the consumer is a per-channel
// affine of the producer's only use, every value the two hooks need is a
// constant and the producer can absorb it: the producer's inputs then name
// new constants, and `consumer` names the producer (folded_into_).
bool Program::fold_into_producer(size_t consumer, std::vector<bool>& touched) {
    const Node& c = nodes_[consumer];
    if (touched[consumer] || !c.is_op() || !c.def->def.channel_affine || c.out_layouts.size() != 1 || c.inputs.empty())
        return false;
    const size_t producer = c.inputs[0].node;
    const Node& p = nodes_[producer];
    if (touched[producer] || !p.is_op() || !p.def->def.absorb_channel_affine || p.is_output ||
        p.out_layouts.size() != 1 || p.users != std::vector<size_t>{consumer})
        return false;
    for (size_t i = 1; i < c.inputs.size(); ++i)
        if (c.inputs[i].node == producer) return false;   // the producer feeds the affine's parameters too
    const DataType t = p.out_layouts[0].dtype;
    if (!is_floating(t) || c.out_layouts[0].dtype != t) return false;
    const auto constants = [this](const Node& n) {
        ConstantInputs k;
        for (const NodeInput& in : n.inputs) k.push_back(nodes_[in.node].constant.get());
        return k;
    };
    const std::optional<ChannelAffine> affine = c.def->def.channel_affine(c.attrs, constants(c));
    if (!affine) return false;
    const PartialShape& out = p.out_layouts[0].shape;
    if (out.rank() < 2 || affine->scale.size() != affine->shift.size() ||
        (out[1].is_static() && size_t(out[1].get_length()) != affine->scale.size()))
        return false;
    std::vector<std::optional<HostTensor>> values = p.def->def.absorb_channel_affine(p.attrs, constants(p), *affine);
    if (values.empty() || values.size() > p.def->def.max_inputs) return false;
    const std::string producer_name = p.name, consumer_name = c.name, consumer_op = c.op;
    const ErrorContext where = p.where;
    for (size_t i = 0; i < values.size(); ++i) {
        if (!values[i]) continue;
        const std::string name = unused_name(producer_name + "_folded" + std::to_string(i));
        add_constant(name, std::move(*values[i]), where);   // may move nodes_: no references past here
        std::vector<std::string>& refs = nodes_[producer].input_names;
        if (refs.size() <= i) refs.resize(i + 1);
        refs[i] = name;
    }
    touched[producer] = true;
    folded_into_[consumer_name] = producer_name;
    folded_.push_back({consumer_name, consumer_op, producer_name, "fold_channel_affine", true});
    return true;
}

std::string Program::unused_name(const std::string& base) const {
    const auto taken = [this](const std::string& n) { return folded_into_.count(n) != 0 || by_name_.count(n) != 0; };
    std::string name = base;
    for (size_t k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    return name;
}

// Drops the folded nodes, and the constants whose every user folded or
// replaced them (their data would only take memory).
void Program::remove_folded(const std::vector<bool>& removed, const std::vector<std::vector<size_t>>& lost_users) {
    std::vector<bool> drop = removed;
    for (size_t k = 0; k < lost_users.size(); ++k) {
        const Node& n = nodes_[k];
        if (!n.is_constant() || n.is_output || lost_users[k].empty()) continue;
        bool used = false;
        for (size_t u : n.users)
            used |= std::find(lost_users[k].begin(), lost_users[k].end(), u) == lost_users[k].end();
        drop[k] = !used;
    }
    drop.resize(nodes_.size(), false);
    std::vector<Node> kept;
    kept.reserve(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(nodes_[i]));
    nodes_ = std::move(kept);
    by_name_.clear();
    for (size_t i = 0; i < nodes_.size(); ++i) by_name_.emplace(nodes_[i].name, i);
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
