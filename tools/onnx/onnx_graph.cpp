// ONNX main graph -> one dynrt Program (import_graph), and GraphRunner, which
// runs it on one network with the dim_param checks ONNX implies.
//
// Nodes are visited in topological order so that each is mapped with the
// layouts of its inputs (partial shape inference of the dynrt ops already
// mapped), and with the values of inputs that are constants.
#include <algorithm>
#include <set>

#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"
#include "onnx_import.hpp"
#include "single_node.hpp"

namespace dynrt::onnx {

namespace {

// What one ONNX tensor name stands for while the program is built.
struct TensorInfo {
    std::string ref;                           // dynrt reference; empty until first used (constants)
    Layout layout;                             // as the mapper sees it
    std::shared_ptr<const HostTensor> value;   // constants only
    std::string producer;                      // for messages: "node 'mm'", "graph input", "initializer"
    size_t graph_input = SIZE_MAX;             // index into model.inputs
};

std::string join(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

// The value of a Constant node (ONNX: exactly one of value, value_float,
// value_floats, value_int, value_ints ...); empty `why` when it maps.
std::shared_ptr<const HostTensor> constant_value(const OnnxNode& node, std::string& why) {
    if (node.attrs.size() != 1) {
        why = "a Constant node needs exactly one value attribute, it has " + std::to_string(node.attrs.size());
        return nullptr;
    }
    const auto& [name, a] = *node.attrs.begin();
    using K = OnnxAttr::Kind;
    if (name == "value" && a.kind == K::Tensor && a.tensor) return a.tensor;
    if (name == "value_float" && a.kind == K::Float)
        return std::make_shared<HostTensor>(HostTensor::from_floats(Shape{}, {static_cast<float>(a.f)}));
    if (name == "value_floats" && a.kind == K::Floats)
        return std::make_shared<HostTensor>(HostTensor::from_floats(
            Shape{static_cast<int64_t>(a.floats.size())}, std::vector<float>(a.floats.begin(), a.floats.end())));
    if (name == "value_int" && a.kind == K::Int)
        return std::make_shared<HostTensor>(HostTensor::from_int64(DataType::i64, Shape{}, {a.i}));
    if (name == "value_ints" && a.kind == K::Ints)
        return std::make_shared<HostTensor>(
            HostTensor::from_int64(DataType::i64, Shape{static_cast<int64_t>(a.ints.size())}, a.ints));
    why = "Constant attribute '" + name + "' is not supported (value, value_float(s), value_int(s) are)";
    return nullptr;
}

class Importer {
public:
    Importer(std::shared_ptr<const Registry> registry, const OnnxModel& model, const ImportOptions& options)
        : registry_(std::move(registry)), model_(model), options_(options) {
        FusedGraph f = fuse_known_subgraphs(*registry_, model, options.passes, options.device);
        nodes_ = std::move(f.nodes);
        dormant_.assign(nodes_.size(), false);
        out_.fused = f.fused;
        out_.matched = std::move(f.matched);
        out_.declined = std::move(f.declined);
        absorbed_ = std::move(f.absorbed);
        checks_ = std::move(f.checks);
        // A match's helpers and original nodes wait at the end of the list,
        // mapped only when the match is (helpers) or is not (originals).
        for (size_t c = 0; c < checks_.size(); ++c) {
            check_of_[checks_[c].node] = c;
            for (auto* list : {&checks_[c].helpers, &checks_[c].original}) {
                std::vector<size_t>& at = list == &checks_[c].helpers ? helper_nodes_[c] : original_nodes_[c];
                for (const OnnxNode& n : *list) {
                    at.push_back(nodes_.size());
                    nodes_.push_back(n);
                    dormant_.push_back(true);
                }
            }
        }
    }

    ImportedGraph run() {
        ProgramOptions program_options;
        apply_passes(options_.passes, &program_options, nullptr);
        out_.program = std::make_shared<Program>(registry_, model_.file, program_options);
        if (!check_declared(model_.inputs) || !check_declared(model_.outputs)) return unsupported_result();
        label_nodes();
        register_sources();
        register_node_outputs();
        const std::vector<size_t> order = order_nodes();
        for (size_t k : order) {
            if (!map_one(k)) return unsupported_result();
        }
        add_inputs();
        for (const ValueInfo& o : model_.outputs) {
            auto it = tensors_.find(o.name);
            if (it == tensors_.end())
                throw Error("graph output '" + o.name + "' is produced by no node and is no graph input or initializer",
                            where("output"));
            out_.program->add_output(ref_of(o.name), where("output"));
            out_.outputs.push_back(o.name);
        }
        try {
            out_.program->build();
        } catch (const Error& e) {
            throw e.with_context(where());
        }
        for (const OnnxNode& n : model_.nodes) out_.ops.push_back(n.op_type);   // as the model has them
        record_tensors();
        return out_;
    }

private:
    ErrorContext where(const std::string& field = {}) const {
        ErrorContext c;
        c.file = model_.file;
        c.field = field;
        return c;
    }
    ErrorContext at_node(size_t k, const std::string& field = {}) const {
        ErrorContext c = where(field);
        c.node = labels_[k];
        c.op = nodes_[k].op_type;
        return c;
    }
    std::string node_text(size_t k) const { return "node '" + labels_[k] + "' (" + nodes_[k].op_type + ")"; }

    ImportedGraph unsupported_result() const {
        ImportedGraph g;
        g.unsupported = unsupported_;
        return g;
    }

    // dynrt node names may not hold ':' and share one namespace with inputs
    // and constants; ONNX names keep theirs where they can.
    std::string unique_name(std::string want) {
        std::replace(want.begin(), want.end(), ':', '_');
        if (want.empty()) want = "t";
        std::string name = want;
        for (int k = 2; used_names_.count(name); ++k) name = want + "_" + std::to_string(k);
        used_names_.insert(name);
        return name;
    }

    bool check_declared(const std::vector<ValueInfo>& side) {
        for (const ValueInfo& v : side) {
            if (v.kind != "tensor") {
                unsupported_ = "'" + v.name + "' is a " + v.kind + " (dynrt has tensors only)";
                return false;
            }
            if (!dtype_from_onnx(v.onnx_type)) {
                unsupported_ = "'" + v.name + "' is " + onnx_type_name(v.onnx_type) + ", which dynrt does not have";
                return false;
            }
        }
        return true;
    }

    void label_nodes() {
        for (size_t k = 0; k < nodes_.size(); ++k) {
            const OnnxNode& n = nodes_[k];
            labels_.push_back(n.name.empty() ? n.op_type + "_" + std::to_string(k) : n.name);
        }
    }

    // Graph inputs and initializers: names reserved first, so that they keep
    // their ONNX names in the program.
    void register_sources() {
        for (size_t g = 0; g < model_.inputs.size(); ++g) {
            const ValueInfo& v = model_.inputs[g];
            if (tensors_.count(v.name)) throw Error("graph input '" + v.name + "' is declared twice", where("input"));
            if (!v.has_shape) {
                // The rank is needed to map and to declare the input.
                throw Error("graph input '" + v.name + "' has no shape (dynrt needs at least its rank)",
                            where("input"));
            }
            TensorInfo t;
            t.ref = unique_name(v.name);
            t.layout = Layout(v.shape, *dtype_from_onnx(v.onnx_type));
            t.producer = "graph input";
            t.graph_input = g;
            tensors_[v.name] = std::move(t);
        }
        for (const auto& [name, value] : model_.initializers) {
            if (tensors_.count(name)) continue;   // a graph input of that name is declared without it
            TensorInfo t;
            t.layout = value.layout();
            t.value = std::make_shared<const HostTensor>(value);
            t.producer = "initializer";
            tensors_[name] = std::move(t);
        }
    }

    // Each tensor name is produced once: by one node, or as a graph input or initializer.
    void register_node_outputs() {
        for (size_t k = 0; k < nodes_.size(); ++k) {
            if (dormant_[k]) continue;
            for (const std::string& o : nodes_[k].outputs) {
                if (o.empty()) continue;
                auto src = tensors_.find(o);
                if (src != tensors_.end())
                    throw Error(node_text(k) + " writes '" + o + "', which is already a " + src->second.producer,
                                at_node(k, "output"));
                auto [it, fresh] = producer_.emplace(o, k);
                if (!fresh)
                    throw Error("output name '" + o + "' is produced twice: by " + node_text(it->second) + " and " +
                                    node_text(k),
                                at_node(k, "output"));
            }
        }
    }

    // Model order where the model is sorted (ONNX requires it; not every
    // exporter obeys); a missing input or a cycle is an error.
    std::vector<size_t> order_nodes() {
        const size_t n = nodes_.size();
        std::vector<std::vector<size_t>> users(n);
        std::vector<size_t> indeg(n, 0);
        for (size_t k = 0; k < n; ++k) {
            if (dormant_[k]) continue;
            const OnnxNode& node = nodes_[k];
            const std::string domain = node.domain == "ai.onnx" ? std::string() : node.domain;
            const bool built_in = domain.empty() && node.op_type == "Constant";   // no dynrt op: a constant
            if (!built_in && !has_rule(*registry_, node)) {
                auto op = model_.opsets.find(domain);
                OnnxNode named = node;
                named.name = labels_[k];
                try {
                    require_rule(*registry_, named, op == model_.opsets.end() ? 0 : op->second);
                } catch (const Error& e) {
                    throw e.with_context(at_node(k));
                }
            }
            // A match the mapping may still undo waits for everything its
            // original nodes read.
            auto check = check_of_.find(k);
            for (const std::string& in : check == check_of_.end() ? node.inputs : checks_[check->second].needs) {
                if (in.empty()) continue;
                auto p = producer_.find(in);
                if (p != producer_.end()) {
                    users[p->second].push_back(k);
                    ++indeg[k];
                } else if (!tensors_.count(in)) {
                    throw Error(node_text(k) + " reads '" + in +
                                    "', which no node produces and which is no graph input or initializer",
                                at_node(k, "input"));
                }
            }
        }
        std::set<size_t> ready;
        for (size_t k = 0; k < n; ++k)
            if (indeg[k] == 0 && !dormant_[k]) ready.insert(k);
        std::vector<size_t> order;
        while (!ready.empty()) {
            const size_t k = *ready.begin();
            ready.erase(ready.begin());
            order.push_back(k);
            for (size_t u : users[k])
                if (--indeg[u] == 0) ready.insert(u);
        }
        if (order.size() != n - static_cast<size_t>(std::count(dormant_.begin(), dormant_.end(), true))) {
            std::vector<std::string> cyc;
            size_t first = n;
            for (size_t k = 0; k < n; ++k)
                if (indeg[k] != 0) {
                    cyc.push_back("'" + labels_[k] + "'");
                    first = std::min(first, k);
                }
            throw Error("the graph has a cycle through nodes " + join(cyc), at_node(first, "input"));
        }
        return order;
    }

    // Constant folding: a node whose inputs all have known values, or a
    // shape_of-like node whose input layouts are static, runs once here on the
    // cpu engine and its outputs become constants (program nodes when first
    // used). The shape arithmetic exported models are full of (Shape -> Gather
    // -> Concat -> Reshape) folds away where shapes are static, and later nodes
    // are mapped knowing the values. Only small results fold; a node that
    // cannot run here (no cpu impl for its types) stays a node.
    bool fold(size_t k, const RegisteredOp& def, const Mapped& m, const std::vector<Layout>& layouts,
              const std::vector<const HostTensor*>& values, const std::vector<Layout>& outs) {
        constexpr size_t kMaxFoldElements = size_t{1} << 16;
        if (!options_.passes.on("constant_folding")) return false;
        const OpTraits& traits = def.def.traits;
        if (traits.is_input || traits.reads_state || traits.writes_state || traits.data_dependent_output) return false;
        auto small_static = [&](const Layout& l) {
            return l.shape.is_static() && l.shape.to_shape().count() <= kMaxFoldElements;
        };
        // Shapes fold only where they are fixed: the declared layouts the
        // nodes are mapped with are not, in an import with every input dim
        // dynamic.
        const bool by_shape = traits.shape_of_like && !options_.dynamic_inputs;
        for (size_t i = 0; i < layouts.size(); ++i)
            if (!values[i] && !(by_shape && small_static(layouts[i]))) return false;
        if (!std::all_of(outs.begin(), outs.end(), small_static)) return false;
        std::vector<HostTensor> placeholders;   // inputs read only for their shape
        placeholders.reserve(layouts.size());
        tools::SingleNode one;
        one.op = m.op;
        one.attrs = m.attrs;
        one.where = at_node(k);
        for (size_t i = 0; i < layouts.size(); ++i) {
            const HostTensor* v = values[i];
            if (!v) {
                placeholders.emplace_back(layouts[i].dtype, layouts[i].shape.to_shape());
                v = &placeholders.back();
            }
            one.inputs.push_back(tools::node_input(*v, tools::InputRole::constant, false));
        }
        std::vector<std::shared_ptr<const HostTensor>> results;
        try {
            if (!fold_engine_) {
                EngineConfig cfg;
                cfg.device = "cpu";
                fold_engine_ = registry_->create_engine("cpu", cfg);
            }
            InferRequest request(Network::create(tools::build_single_node(registry_, one), fold_engine_, {}));
            request.infer();
            for (size_t o = 0; o < outs.size(); ++o)
                results.push_back(std::make_shared<const HostTensor>(request.get_output(o)));
        } catch (const Error&) {
            return false;
        }
        const OnnxNode& node = nodes_[k];
        for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
            if (node.outputs[o].empty()) continue;
            TensorInfo t;
            t.layout = results[o]->layout();
            t.value = results[o];
            t.producer = node_text(k);
            tensors_[node.outputs[o]] = std::move(t);
        }
        ++out_.folded;
        return true;
    }

    // What became of every tensor a node produces (ImportedGraph::tensors).
    void record_tensors() {
        for (const OnnxNode& n : nodes_)
            for (const std::string& o : n.outputs) {
                auto it = tensors_.find(o);
                if (o.empty() || it == tensors_.end()) continue;
                ImportedTensor& t = out_.tensors[o];
                t.ref = it->second.ref;
                t.value = it->second.value;
            }
        for (const auto& [tensor, why] : absorbed_) out_.tensors[tensor].absorbed = why;
    }

    // The dynrt reference of a tensor; a constant gets its program node here,
    // when something first uses it.
    std::string ref_of(const std::string& name) {
        TensorInfo& t = tensors_.at(name);
        if (t.ref.empty()) {
            t.ref = unique_name(name);
            ErrorContext w = where("initializer");
            w.node = t.ref;
            out_.program->add_constant(t.ref, *t.value, w);
        }
        return t.ref;
    }

    bool map_one(size_t k) {
        auto check = check_of_.find(k);
        return check == check_of_.end() ? map_node_at(k) : map_checked(k, check->second);
    }

    // What a pattern could not know before mapping (PatternCheck): the
    // ranks of the tensors its node reads. Empty when they hold.
    std::string check_ranks(const PatternCheck& c) const {
        static const char* const kNames[] = {"q", "K", "v"};
        for (size_t i = 0; i < c.rank4.size(); ++i) {
            const size_t rank = tensors_.at(c.rank4[i]).layout.shape.rank();
            if (rank != 4)
                return std::string(i < 3 ? kNames[i] : "input") + " '" + c.rank4[i] + "' is rank " +
                       std::to_string(rank) + " (sdpa takes rank 4)";
        }
        if (!c.rank4.empty()) {
            // q, K and v of one dtype that sdpa computes in.
            const DataType q = tensors_.at(c.rank4[0]).layout.dtype;
            if (q != DataType::f32 && q != DataType::f16)
                return "q '" + c.rank4[0] + "' is " + to_string(q) + " (sdpa takes f32 and f16)";
            for (size_t i = 1; i < c.rank4.size(); ++i)
                if (tensors_.at(c.rank4[i]).layout.dtype != q)
                    return std::string(i < 3 ? kNames[i] : "input") + " '" + c.rank4[i] + "' is " +
                           to_string(tensors_.at(c.rank4[i]).layout.dtype) + ", q is " + to_string(q);
        }
        if (!c.mask.empty()) {
            const size_t rank = tensors_.at(c.mask).layout.shape.rank();
            if (rank > 4)
                return "the mask '" + c.mask + "' is rank " + std::to_string(rank) + " (sdpa takes rank 4 at most)";
        }
        return {};
    }

    // A pattern's node: mapped with its helpers when the checks hold, else
    // the nodes it replaced are mapped and the match counts as declined.
    bool map_checked(size_t k, size_t c) {
        const PatternCheck& check = checks_[c];
        const std::string why = check_ranks(check);
        if (why.empty()) {
            for (size_t h : helper_nodes_[c])
                if (!map_node_at(h)) return false;
            return map_node_at(k);
        }
        out_.declined.push_back(check.pass + ": " + node_text(k) + ": " + why);
        --out_.fused;
        if (--out_.matched[check.pass] == 0) out_.matched.erase(check.pass);
        for (const std::string& t : check.absorbed) absorbed_.erase(t);
        for (size_t o : original_nodes_[c])
            if (!map_node_at(o)) return false;
        return true;
    }

    bool map_node_at(size_t k) {
        const OnnxNode& node = nodes_[k];
        if (node.op_type == "Identity") return map_identity(k);
        if (node.op_type == "Constant") return map_constant(k);
        Mapped m;
        if (!map_rule(k, m)) return false;
        const RegisteredOp* def = registry_->find_op(m.op);
        if (!def)
            throw Error(
                "ONNX op '" + node.op_type + "' maps to dynrt op '" + m.op + "', which no loaded module provides",
                at_node(k));
        std::vector<Layout> layouts;
        std::vector<const HostTensor*> values;
        for (size_t onnx_index : m.inputs) {
            const TensorInfo& t = tensors_.at(node.inputs[onnx_index]);
            layouts.push_back(t.layout);
            values.push_back(t.value.get());
        }
        for (size_t v : def->def.value_inputs) {
            // A graph input giving values to shape inference keeps its length
            // in a dynamic import (the rank it describes is fixed).
            if (v < m.inputs.size()) {
                const TensorInfo& t = tensors_.at(node.inputs[m.inputs[v]]);
                if (t.graph_input != SIZE_MAX) keep_static_.insert(t.graph_input);
            }
        }
        const std::string name = unique_name(labels_[k]);
        const std::vector<Layout> outs = infer_mapped(k, name, *def, m, layouts, values);
        if (fold(k, *def, m, layouts, values, outs)) return true;
        add_mapped(k, name, m, outs);
        return true;
    }

    // An alias: the output names the input's program node (a constant gets
    // its node now, so that both names share it).
    bool map_identity(size_t k) {
        const OnnxNode& node = nodes_[k];
        if (node.inputs.size() != 1 || node.outputs.size() != 1 || node.inputs[0].empty() || !node.attrs.empty())
            throw Error(node_text(k) + " is not an Identity of one input and one output without attributes",
                        at_node(k));
        ref_of(node.inputs[0]);
        tensors_[node.outputs[0]] = tensors_.at(node.inputs[0]);
        return true;
    }

    bool map_constant(size_t k) {
        const OnnxNode& node = nodes_[k];
        std::string why;
        auto value = constant_value(node, why);
        if (!value) {
            unsupported_ = node_text(k) + ": " + why;
            return false;
        }
        if (node.outputs.size() != 1 || !node.inputs.empty())
            throw Error(node_text(k) + " must have no inputs and one output", at_node(k));
        TensorInfo t;
        t.layout = value->layout();
        t.value = value;
        t.producer = node_text(k);
        // The constant node takes the node's name, not the tensor's.
        t.ref = unique_name(labels_[k]);
        out_.program->add_constant(t.ref, *value, at_node(k));
        tensors_[node.outputs[0]] = std::move(t);
        return true;
    }

    // The module's import rule for node k: the dynrt op, its inputs and
    // attributes (false: unsupported, with the reason kept).
    bool map_rule(size_t k, Mapped& m) {
        const OnnxNode& node = nodes_[k];
        std::vector<MapInput> mi(node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            if (node.inputs[i].empty()) continue;
            const TensorInfo& t = tensors_.at(node.inputs[i]);
            mi[i].present = true;
            mi[i].layout = t.layout;
            mi[i].value = t.value.get();
        }
        OnnxNode named = node;
        named.name = labels_[k];
        try {
            // A node of another domain (com.microsoft) sees that domain's opset.
            const auto dom = model_.opsets.find(split_rule_name(rule_name(node)).first);
            m = map_node(*registry_, named, dom == model_.opsets.end() ? model_.opset : dom->second, mi);
        } catch (const Error& e) {
            throw e.with_context(at_node(k));
        }
        if (m.unsupported.empty()) return true;
        unsupported_ = node_text(k) + ": " + m.unsupported;
        return false;
    }

    // The layouts the next nodes are mapped with; Program::build infers them
    // again for the program itself.
    std::vector<Layout> infer_mapped(size_t k, const std::string& name, const RegisteredOp& def, const Mapped& m,
                                     const std::vector<Layout>& layouts, const std::vector<const HostTensor*>& values) {
        std::vector<Layout> outs;
        try {
            const Attributes attrs = Attributes::validate(def.def.attrs, m.attrs);
            ShapeInferContext ctx{name, layouts, attrs, {}};
            ctx.values.assign(layouts.size(), nullptr);
            for (size_t v : def.def.value_inputs)
                if (v < values.size()) ctx.values[v] = values[v];
            outs = def.def.infer(ctx);
        } catch (const Error& e) {
            ErrorContext w = at_node(k);
            w.op = m.op;
            throw e.with_context(w);
        }
        if (outs.empty()) throw Error("dynrt op '" + m.op + "' has no output", at_node(k));
        return outs;
    }

    // The program node and the tensors its outputs give.
    void add_mapped(size_t k, const std::string& name, const Mapped& m, const std::vector<Layout>& outs) {
        const OnnxNode& node = nodes_[k];
        const ErrorContext w = at_node(k);
        std::vector<std::string> refs;
        for (size_t onnx_index : m.inputs) refs.push_back(ref_of(node.inputs[onnx_index]));
        out_.program->add_node(name, m.op, refs, m.attrs, w);
        for (size_t o = 0; o < node.outputs.size(); ++o) {
            if (node.outputs[o].empty()) continue;   // an optional output left out
            if (o >= outs.size())
                throw Error("dynrt op '" + m.op + "' has " + std::to_string(outs.size()) +
                                " outputs, the node uses output " + std::to_string(o),
                            w);
            TensorInfo t;
            t.ref = o == 0 ? name : name + ":" + std::to_string(o);
            t.layout = outs[o];
            t.producer = node_text(k);
            tensors_[node.outputs[o]] = std::move(t);
        }
    }

    // Every graph input is declared, used or not, so that a data set can set it.
    void add_inputs() {
        for (size_t g = 0; g < model_.inputs.size(); ++g) {
            const ValueInfo& v = model_.inputs[g];
            GraphInput in;
            in.name = v.name;
            in.node = tensors_.at(v.name).ref;
            in.layout = Layout(v.shape, *dtype_from_onnx(v.onnx_type));
            if (options_.dynamic_inputs && !keep_static_.count(g))
                in.layout = Layout(PartialShape::dynamic_of_rank(v.shape.rank()), in.layout.dtype);
            in.dim_params = v.dim_params;
            in.dim_params.resize(v.shape.rank());
            ErrorContext w = where("input");
            w.node = in.node;
            out_.program->add_input(in.node, in.layout, w);
            out_.inputs.push_back(std::move(in));
        }
    }

    std::shared_ptr<const Registry> registry_;
    const OnnxModel& model_;
    ImportOptions options_;
    ImportedGraph out_;
    std::map<std::string, std::string> absorbed_;   // tensors gone with a fused subgraph -> why
    std::vector<OnnxNode> nodes_;                   // the model's, recognised subgraphs fused (fuse_known_subgraphs)
    std::vector<bool> dormant_;                     // a match's helpers and originals: mapped only through it
    std::vector<PatternCheck> checks_;              // matches the mapping checks
    std::map<size_t, size_t> check_of_;             // fused node -> its check
    std::map<size_t, std::vector<size_t>> helper_nodes_, original_nodes_;   // per check: their nodes_ indices
    std::string unsupported_;
    std::vector<std::string> labels_;
    std::map<std::string, TensorInfo> tensors_;
    std::map<std::string, size_t> producer_;
    std::set<std::string> used_names_;
    std::set<size_t> keep_static_;
    EnginePtr fold_engine_;   // the cpu engine constant folding runs on, made when first needed
};

}   // namespace

ImportedGraph import_graph(const std::shared_ptr<const Registry>& registry, const OnnxModel& model,
                           const ImportOptions& options) {
    return Importer(registry, model, options).run();
}

// ---- GraphRunner ------------------------------------------------------------

GraphRunner::GraphRunner(const ImportedGraph& graph, const EnginePtr& engine, const NetworkOptions& options,
                         std::string file)
    : graph_(graph), file_(std::move(file)) {
    if (!graph_.program) throw Error("the graph was not imported: " + graph_.unsupported);
    network_ = Network::create(graph_.program, engine, options);
    request_ = std::make_unique<InferRequest>(network_);
    shapes_.resize(graph_.inputs.size());
    set_since_infer_.assign(graph_.inputs.size(), false);
}

void GraphRunner::set_input(const std::string& name, const HostTensor& value) {
    ErrorContext w;
    w.file = file_;
    w.field = name;
    size_t k = 0;
    while (k < graph_.inputs.size() && graph_.inputs[k].name != name) ++k;
    if (k == graph_.inputs.size()) {
        std::vector<std::string> names;
        for (const GraphInput& g : graph_.inputs) names.push_back("'" + g.name + "'");
        throw Error("the model has no input '" + name + "' (its inputs: " + join(names) + ")", w);
    }
    const GraphInput& in = graph_.inputs[k];
    if (value.dtype() != in.layout.dtype || !in.layout.shape.compatible(value.shape()))
        throw Error(
            "input '" + name + "' is " + value.layout().to_string() + ", the model declares " + in.layout.to_string(),
            w);
    const std::optional<Shape> before = shapes_[k];
    shapes_[k] = value.shape();
    try {
        check_symbols(k, set_since_infer_);
    } catch (...) {
        shapes_[k] = before;
        throw;
    }
    request_->set_input(in.node, value);
    set_since_infer_[k] = true;
}

// Input k against itself and the inputs marked in `against`. Anonymous dims
// ("", "?", "unk__N": is_anonymous_dim_param) are tied to nothing, even in a
// graph whose dim_params did not come through load_model.
void GraphRunner::check_symbols(size_t k, const std::vector<bool>& against) const {
    const GraphInput& a = graph_.inputs[k];
    for (size_t d = 0; d < a.dim_params.size(); ++d) {
        const std::string& sym = a.dim_params[d];
        if (is_anonymous_dim_param(sym)) continue;
        for (size_t j = 0; j < graph_.inputs.size(); ++j) {
            if ((j != k && !against[j]) || !shapes_[j]) continue;
            const GraphInput& b = graph_.inputs[j];
            for (size_t e = 0; e < b.dim_params.size(); ++e) {
                if (b.dim_params[e] != sym || (j == k && e == d)) continue;
                const int64_t x = (*shapes_[k])[d], y = (*shapes_[j])[e];
                if (x == y) continue;
                ErrorContext w;
                w.file = file_;
                w.field = a.name;
                throw Error("inputs '" + a.name + "' and '" + b.name + "' disagree on dim_param '" + sym + "': '" +
                                a.name + "' dim " + std::to_string(d) + " is " + std::to_string(x) + ", '" + b.name +
                                "' dim " + std::to_string(e) + " is " + std::to_string(y),
                            w);
            }
        }
    }
}

void GraphRunner::infer() {
    const std::vector<bool> all(graph_.inputs.size(), true);
    for (size_t k = 0; k < graph_.inputs.size(); ++k) {
        if (!shapes_[k]) {
            ErrorContext w;
            w.file = file_;
            w.field = graph_.inputs[k].name;
            throw Error("input '" + graph_.inputs[k].name + "' was never set", w);
        }
        check_symbols(k, all);
    }
    request_->infer();
    set_since_infer_.assign(graph_.inputs.size(), false);
}

HostTensor GraphRunner::output(size_t k) const { return request_->get_output(k); }

}   // namespace dynrt::onnx
