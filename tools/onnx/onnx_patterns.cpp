// Subgraphs that exporters write for one operation ONNX also has as a single
// op, recognised before mapping: the op's module then runs them as one node,
// which a producer can take as a post-op.
//
// Gelu (ONNX Gelu, approximate "none"), as PyTorch exports nn.GELU below
// opset 20 and as hand-written graphs spell it:
//   d = Div(x, sqrt(2))  or  Mul(x, 1/sqrt(2))
//   e = Erf(d); a = Add(e, 1)
//   Mul(Mul(x, a), 0.5)  or  Mul(Mul(x, 0.5), a)      (any operand order)
// Every intermediate tensor must be read by the next node of the pattern
// alone and be no graph output; the constants must be scalars (one element)
// of a floating type within 1e-6 of their value. The last node's output then
// comes from one Gelu node of x, named as that node; the others leave. Only
// where a loaded module maps Gelu.
//
// Gelu with approximate "tanh", as PyTorch exports nn.GELU(approximate=
// 'tanh') below opset 20 and as GPT-2's gelu_new spells it:
//   c = x^3: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
//   a = Add(x, Mul(c, 0.044715)); t = Tanh(Mul(a, sqrt(2/pi)))
//   u = Add(t, 1); Mul(Mul(x, 0.5), u)  or  Mul(Mul(x, u), 0.5)   (any operand order)
// with the same rules for intermediates and constants as the Erf form.
//
// RMSNorm (Pow, ReduceMean, Add, Sqrt, Reciprocal or Div, Mul[, Cast][,
// Mul(weight)]) is onnx_pattern_rms_norm.cpp's, attention
// onnx_pattern_attention.cpp's.
//
// Swish with alpha 1 (SiLU; ONNX Swish since opset 24), as PyTorch exports
// nn.SiLU: Mul(x, Sigmoid(x)) in either operand order, the Sigmoid's output
// read by that Mul alone and no graph output. The Mul's output then comes
// from one Swish node of x, named as the Mul. Only where a module maps Swish.
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_patterns.hpp"

namespace dynrt::onnx {

GraphIndex::GraphIndex(const OnnxModel& m) : model_(m) {
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        for (const std::string& in : m.nodes[k].inputs)
            if (!in.empty()) {
                ++readers_[in];
                taken_.insert(in);
            }
        for (const std::string& out : m.nodes[k].outputs)
            if (!out.empty()) {
                producer_.emplace(out, k);
                taken_.insert(out);
            }
    }
    for (const ValueInfo& o : m.outputs) graph_outputs_.insert(o.name);
    for (const ValueInfo& i : m.inputs) taken_.insert(i.name);
    for (const auto& kv : m.initializers) taken_.insert(kv.first);
}

std::string GraphIndex::label(size_t k) const {
    const OnnxNode& n = model_.nodes[k];
    return n.name.empty() ? n.op_type + " node " + std::to_string(k) : "'" + n.name + "' (" + n.op_type + ")";
}

bool GraphIndex::is_op(size_t k, const char* op, size_t inputs) const {
    const OnnxNode& n = model_.nodes[k];
    return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op && n.inputs.size() == inputs &&
           n.outputs.size() == 1 && !n.outputs[0].empty();
}

bool GraphIndex::is(size_t k, const char* op, size_t inputs) const {
    return is_op(k, op, inputs) && model_.nodes[k].attrs.empty();
}

size_t GraphIndex::readers(const std::string& t) const {
    auto it = readers_.find(t);
    return it == readers_.end() ? 0 : it->second;
}

std::optional<size_t> GraphIndex::reader(const std::string& t) const {
    if (!internal(t)) return std::nullopt;
    const std::vector<size_t> r = all_readers(t);
    return r.empty() ? std::nullopt : std::optional<size_t>(r[0]);
}

std::vector<size_t> GraphIndex::all_readers(const std::string& t) const {
    std::vector<size_t> out;
    for (size_t k = 0; k < model_.nodes.size(); ++k)
        for (const std::string& in : model_.nodes[k].inputs)
            if (in == t) out.push_back(k);
    return out;
}

std::optional<size_t> GraphIndex::producer(const std::string& t) const {
    auto it = producer_.find(t);
    return it == producer_.end() ? std::nullopt : std::optional<size_t>(it->second);
}

const HostTensor* GraphIndex::constant(const std::string& t) const {
    auto init = model_.initializers.find(t);
    if (init != model_.initializers.end()) return &init->second;
    if (std::optional<size_t> p = producer(t)) {
        const OnnxNode& c = model_.nodes[*p];
        auto value = c.attrs.find("value");
        if ((c.domain.empty() || c.domain == "ai.onnx") && c.op_type == "Constant" && c.attrs.size() == 1 &&
            value != c.attrs.end() && value->second.tensor)
            return value->second.tensor.get();
    }
    return nullptr;
}

std::optional<double> GraphIndex::scalar(const std::string& t) const {
    const HostTensor* v = constant(t);
    if (!v || v->count() != 1 || !is_floating(v->dtype())) return std::nullopt;
    return v->get_as_double(0);
}

bool GraphIndex::scalar(const std::string& t, double want) const {
    const std::optional<double> v = scalar(t);
    return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want);
}

std::optional<std::string> GraphIndex::other_than_scalar(size_t k, double want) const {
    const std::vector<std::string>& in = model_.nodes[k].inputs;
    if (scalar(in[1], want)) return in[0];
    if (scalar(in[0], want)) return in[1];
    return std::nullopt;
}

std::optional<int64_t> GraphIndex::int_scalar(const std::string& t) const {
    const HostTensor* v = constant(t);
    if (!v || v->count() != 1 || (v->dtype() != DataType::i64 && v->dtype() != DataType::i32)) return std::nullopt;
    if (v->dtype() == DataType::i64) return v->as<int64_t>()[0];
    return v->as<int32_t>()[0];
}

std::string GraphIndex::fresh_name(const std::string& base) {
    std::string name = base;
    for (int k = 2; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
}

namespace {

// A subgraph that is one op of x.
struct Match {
    const char* op = "";
    std::string x;
    std::vector<size_t> nodes;   // every node of the pattern
    size_t last = 0;             // the one whose output the op gives
    std::string approximate;     // Gelu's attribute, when not "none"
};

// The last two nodes of both Gelu forms, after f = node k's output:
// Mul(Mul(x, f), 0.5) or Mul(Mul(x, 0.5), f), any operand order. The Gelu of
// x with those two nodes; the op's output is the last one's.
std::optional<Match> match_half_x_times(const GraphIndex& g, const std::string& x, size_t k) {
    const std::string& f = g.node(k).outputs[0];
    const std::optional<size_t> m = g.reader(f);
    if (!m || !g.is(*m, "Mul", 2)) return std::nullopt;
    const std::vector<std::string>& mi = g.node(*m).inputs;
    const std::string& y = mi[0] == f ? mi[1] : mi[0];
    Match out;
    out.op = "Gelu";
    out.x = x;
    if (y == x) {
        // Mul(Mul(x, f), 0.5)
        const std::optional<size_t> half = g.reader(g.node(*m).outputs[0]);
        if (!half || !g.is(*half, "Mul", 2) || g.other_than_scalar(*half, 0.5) != g.node(*m).outputs[0])
            return std::nullopt;
        out.nodes = {*m, *half};
        out.last = *half;
    } else {
        // Mul(Mul(x, 0.5), f)
        const std::optional<size_t> half = g.producer(y);
        if (!half || !g.internal(y) || !g.is(*half, "Mul", 2) || g.other_than_scalar(*half, 0.5) != x)
            return std::nullopt;
        out.nodes = {*half, *m};
        out.last = *m;
    }
    return out;
}

std::optional<Match> match_gelu(const GraphIndex& g, size_t erf) {
    const OnnxNode& e = g.node(erf);
    const std::optional<size_t> d = g.producer(e.inputs[0]);
    if (!d || !g.internal(e.inputs[0])) return std::nullopt;
    std::optional<std::string> x;
    if (g.is(*d, "Div", 2) && g.scalar(g.node(*d).inputs[1], std::sqrt(2.0))) x = g.node(*d).inputs[0];
    else if (g.is(*d, "Mul", 2)) x = g.other_than_scalar(*d, 1.0 / std::sqrt(2.0));
    if (!x) return std::nullopt;
    const std::optional<size_t> a = g.reader(e.outputs[0]);
    if (!a || !g.is(*a, "Add", 2) || g.other_than_scalar(*a, 1.0) != e.outputs[0]) return std::nullopt;
    std::optional<Match> out = match_half_x_times(g, *x, *a);
    if (!out) return std::nullopt;
    out->nodes.insert(out->nodes.end(), {*d, erf, *a});
    return out;
}

// The Mul(x, x, x) of the tanh form, as Pow(x, 3) or two Muls: x, and the nodes.
std::optional<std::pair<std::string, std::vector<size_t>>> match_cube(const GraphIndex& g, const std::string& c) {
    const std::optional<size_t> p = g.producer(c);
    if (!p || !g.internal(c)) return std::nullopt;
    const std::vector<std::string>& in = g.node(*p).inputs;
    if (g.is(*p, "Pow", 2) && g.scalar(in[1], 3.0)) return std::make_pair(in[0], std::vector<size_t>{*p});
    if (!g.is(*p, "Mul", 2)) return std::nullopt;
    // Mul(x, sq) or Mul(sq, x) with sq = Mul(x, x)
    for (int side = 0; side < 2; ++side) {
        const std::string& x = in[side];
        const std::string& sq = in[1 - side];
        const std::optional<size_t> q = g.producer(sq);
        if (q && g.internal(sq) && g.is(*q, "Mul", 2) && g.node(*q).inputs[0] == x && g.node(*q).inputs[1] == x)
            return std::make_pair(x, std::vector<size_t>{*p, *q});
    }
    return std::nullopt;
}

std::optional<Match> match_gelu_tanh(const GraphIndex& g, size_t tanh) {
    const OnnxNode& t = g.node(tanh);
    const std::optional<size_t> s = g.producer(t.inputs[0]);
    if (!s || !g.internal(t.inputs[0]) || !g.is(*s, "Mul", 2)) return std::nullopt;
    const std::optional<std::string> a_out = g.other_than_scalar(*s, 0.7978845608028654);   // sqrt(2 / pi)
    const std::optional<size_t> a = a_out ? g.producer(*a_out) : std::nullopt;
    if (!a || !g.internal(*a_out) || !g.is(*a, "Add", 2)) return std::nullopt;
    // a = Add(x, Mul(cube(x), 0.044715)), either operand order
    for (int side = 0; side < 2; ++side) {
        const std::string& x = g.node(*a).inputs[side];
        const std::string& m_out = g.node(*a).inputs[1 - side];
        const std::optional<size_t> m = g.producer(m_out);
        if (!m || !g.internal(m_out) || !g.is(*m, "Mul", 2)) continue;
        const std::optional<std::string> c = g.other_than_scalar(*m, 0.044715);
        const auto cube = c ? match_cube(g, *c) : std::nullopt;
        if (!cube || cube->first != x) continue;
        const std::optional<size_t> u = g.reader(t.outputs[0]);
        if (!u || !g.is(*u, "Add", 2) || g.other_than_scalar(*u, 1.0) != t.outputs[0]) return std::nullopt;
        std::optional<Match> out = match_half_x_times(g, x, *u);
        if (!out) return std::nullopt;
        out->approximate = "tanh";
        out->nodes.insert(out->nodes.end(), {*s, *a, *m, tanh, *u});
        out->nodes.insert(out->nodes.end(), cube->second.begin(), cube->second.end());
        return out;
    }
    return std::nullopt;
}

std::optional<Match> match_swish(const GraphIndex& g, size_t sigmoid) {
    const OnnxNode& s = g.node(sigmoid);
    const std::optional<size_t> m = g.reader(s.outputs[0]);
    if (!m || !g.is(*m, "Mul", 2)) return std::nullopt;
    const std::vector<std::string>& in = g.node(*m).inputs;
    const std::string& other = in[0] == s.outputs[0] ? in[1] : in[0];
    if (other != s.inputs[0]) return std::nullopt;
    Match out;
    out.op = "Swish";
    out.x = s.inputs[0];
    out.nodes = {sigmoid, *m};
    out.last = *m;
    return out;
}

bool overlaps(const Match& m, const std::vector<bool>& gone) {
    for (size_t n : m.nodes)
        if (gone[n]) return true;
    return false;
}

}   // namespace

FusedGraph fuse_known_subgraphs(const Registry& registry, const OnnxModel& model, const PassSet& passes,
                                const std::string& device) {
    GraphIndex index(model);
    FusedGraph out;
    std::vector<OnnxNode> nodes = model.nodes;
    std::vector<bool> gone(nodes.size(), false);
    // A module maps the op, and it has an impl on the device.
    const auto runs = [&](const char* onnx_op) {
        const std::string op = target_op(registry, onnx_op);
        return !op.empty() && (device.empty() || !registry.impls(op, device).empty());
    };
    const bool gelu = passes.on("pattern_gelu") && runs("Gelu");
    const bool swish = passes.on("pattern_swish") && runs("Swish");
    for (size_t k = 0; k < nodes.size(); ++k) {
        std::optional<Match> g;
        const char* pass = "";
        if (gelu && index.is(k, "Erf", 1)) {
            g = match_gelu(index, k);
            pass = "pattern_gelu";
        } else if (gelu && index.is(k, "Tanh", 1)) {
            g = match_gelu_tanh(index, k);
            pass = "pattern_gelu";
        } else if (swish && index.is(k, "Sigmoid", 1)) {
            g = match_swish(index, k);
            pass = "pattern_swish";
        }
        if (!g || overlaps(*g, gone)) continue;
        for (size_t n : g->nodes) gone[n] = true;
        const std::string& last = model.nodes[g->last].name;
        const std::string into =
            std::string(pass) + ": inside " + g->op + " node '" + (last.empty() ? std::string(g->op) : last) + "'";
        for (size_t n : g->nodes)
            if (n != g->last) out.absorbed[model.nodes[n].outputs[0]] = into;
        OnnxNode one;
        one.name = model.nodes[g->last].name;
        one.op_type = g->op;
        one.inputs = {g->x};
        one.outputs = {model.nodes[g->last].outputs[0]};
        if (!g->approximate.empty()) {
            OnnxAttr approximate;
            approximate.kind = OnnxAttr::Kind::String;
            approximate.s = g->approximate;
            one.attrs["approximate"] = approximate;
        }
        nodes[g->last] = std::move(one);
        gone[g->last] = false;
        ++out.fused;
        ++out.matched[pass];
    }
    if (passes.on("pattern_rms_norm") && runs("DynrtRmsNorm")) fuse_rms_norm(index, nodes, gone, out);
    if (passes.on("pattern_attention") && runs("DynrtSdpa")) {
        fuse_attention(index, registry, nodes, gone, out);
    } else if (passes.on("pattern_attention") && !target_op(registry, "DynrtSdpa").empty()) {
        // What the pass would take, said and left as it is.
        std::vector<OnnxNode> scratch_nodes = nodes;
        std::vector<bool> scratch_gone = gone;
        FusedGraph scratch;
        fuse_attention(index, registry, scratch_nodes, scratch_gone, scratch);
        if (scratch.fused)
            out.declined.push_back("pattern_attention: " + std::to_string(scratch.fused) +
                                   " matches left as they are: dynrt op '" + target_op(registry, "DynrtSdpa") +
                                   "' has no " + device + " impl");
    }
    std::vector<size_t> renumber(nodes.size(), 0);
    for (size_t k = 0; k < nodes.size(); ++k)
        if (!gone[k]) {
            renumber[k] = out.nodes.size();
            out.nodes.push_back(std::move(nodes[k]));
        }
    for (PatternCheck& c : out.checks) c.node = renumber[c.node];
    return out;
}

}   // namespace dynrt::onnx
