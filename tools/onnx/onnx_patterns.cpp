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

#include "onnx_import.hpp"

namespace dynrt::onnx {

namespace {

class Patterns {
public:
    explicit Patterns(const OnnxModel& m) : model_(m) {
        for (size_t k = 0; k < m.nodes.size(); ++k) {
            for (const std::string& in : m.nodes[k].inputs)
                if (!in.empty()) ++readers_[in];
            for (const std::string& out : m.nodes[k].outputs)
                if (!out.empty()) producer_.emplace(out, k);
        }
        for (const ValueInfo& o : m.outputs) graph_outputs_.insert(o.name);
    }

    std::vector<OnnxNode> fuse(const Registry& registry, size_t& fused, const PassSet& passes,
                               std::map<std::string, std::string>* absorbed) {
        std::vector<OnnxNode> nodes = model_.nodes;
        std::vector<bool> gone(nodes.size(), false);
        const bool gelu = passes.on("pattern_gelu") && !target_op(registry, "Gelu").empty();
        const bool swish = passes.on("pattern_swish") && !target_op(registry, "Swish").empty();
        for (size_t k = 0; k < nodes.size(); ++k) {
            std::optional<Match> g;
            const char* pass = "";
            if (gelu && is(k, "Erf", 1)) {
                g = match_gelu(k);
                pass = "pattern_gelu";
            } else if (swish && is(k, "Sigmoid", 1)) {
                g = match_swish(k);
                pass = "pattern_swish";
            }
            if (!g || overlaps(*g, gone)) continue;
            for (size_t n : g->nodes) gone[n] = true;
            if (absorbed) {
                const std::string& last = model_.nodes[g->last].name;
                const std::string into = std::string(pass) + ": inside " + g->op + " node '" +
                                         (last.empty() ? std::string(g->op) : last) + "'";
                for (size_t n : g->nodes)
                    if (n != g->last) (*absorbed)[model_.nodes[n].outputs[0]] = into;
            }
            OnnxNode one;
            one.name = model_.nodes[g->last].name;
            one.op_type = g->op;
            one.inputs = {g->x};
            one.outputs = {model_.nodes[g->last].outputs[0]};
            nodes[g->last] = std::move(one);
            gone[g->last] = false;
            ++fused;
        }
        std::vector<OnnxNode> out;
        for (size_t k = 0; k < nodes.size(); ++k)
            if (!gone[k]) out.push_back(std::move(nodes[k]));
        return out;
    }

private:
    // A subgraph that is one op of x.
    struct Match {
        const char* op = "";
        std::string x;
        std::vector<size_t> nodes;   // every node of the pattern
        size_t last = 0;             // the one whose output the op gives
    };

    // Node k is a default-domain `op` of `inputs` inputs and one output.
    bool is(size_t k, const char* op, size_t inputs) const {
        const OnnxNode& n = model_.nodes[k];
        return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op && n.attrs.empty() &&
               n.inputs.size() == inputs && n.outputs.size() == 1 && !n.outputs[0].empty();
    }

    // The tensor is read once, by a node of the pattern, and is no graph output.
    bool internal(const std::string& t) const {
        auto it = readers_.find(t);
        return it != readers_.end() && it->second == 1 && !graph_outputs_.count(t);
    }

    // The one node reading tensor t (internal(t) holds).
    std::optional<size_t> reader(const std::string& t) const {
        if (!internal(t)) return std::nullopt;
        for (size_t k = 0; k < model_.nodes.size(); ++k)
            for (const std::string& in : model_.nodes[k].inputs)
                if (in == t) return k;
        return std::nullopt;
    }

    std::optional<size_t> producer(const std::string& t) const {
        auto it = producer_.find(t);
        return it == producer_.end() ? std::nullopt : std::optional<size_t>(it->second);
    }

    // A floating scalar constant (initializer or Constant node) equal to `want`.
    bool scalar(const std::string& t, double want) const {
        const HostTensor* v = nullptr;
        auto init = model_.initializers.find(t);
        if (init != model_.initializers.end()) {
            v = &init->second;
        } else if (std::optional<size_t> p = producer(t)) {
            const OnnxNode& c = model_.nodes[*p];
            auto value = c.attrs.find("value");
            if (c.op_type == "Constant" && c.attrs.size() == 1 && value != c.attrs.end() && value->second.tensor)
                v = value->second.tensor.get();
        }
        if (!v || v->count() != 1 || !is_floating(v->dtype())) return false;
        return std::fabs(v->get_as_double(0) - want) <= 1e-6 * std::fabs(want);
    }

    // Node k has two inputs, one of them the scalar `want`: the other.
    std::optional<std::string> other_than_scalar(size_t k, double want) const {
        const std::vector<std::string>& in = model_.nodes[k].inputs;
        if (scalar(in[1], want)) return in[0];
        if (scalar(in[0], want)) return in[1];
        return std::nullopt;
    }

    std::optional<Match> match_gelu(size_t erf) const {
        const OnnxNode& e = model_.nodes[erf];
        const std::optional<size_t> d = producer(e.inputs[0]);
        if (!d || !internal(e.inputs[0])) return std::nullopt;
        std::optional<std::string> x;
        if (is(*d, "Div", 2) && scalar(model_.nodes[*d].inputs[1], std::sqrt(2.0))) x = model_.nodes[*d].inputs[0];
        else if (is(*d, "Mul", 2)) x = other_than_scalar(*d, 1.0 / std::sqrt(2.0));
        if (!x) return std::nullopt;
        const std::optional<size_t> a = reader(e.outputs[0]);
        if (!a || !is(*a, "Add", 2) || other_than_scalar(*a, 1.0) != e.outputs[0]) return std::nullopt;
        const std::optional<size_t> m = reader(model_.nodes[*a].outputs[0]);
        if (!m || !is(*m, "Mul", 2)) return std::nullopt;
        const std::vector<std::string>& mi = model_.nodes[*m].inputs;
        const std::string& y = mi[0] == model_.nodes[*a].outputs[0] ? mi[1] : mi[0];
        Match g;
        g.op = "Gelu";
        g.x = *x;
        if (y == *x) {
            // Mul(Mul(x, a), 0.5)
            const std::optional<size_t> half = reader(model_.nodes[*m].outputs[0]);
            if (!half || !is(*half, "Mul", 2) || other_than_scalar(*half, 0.5) != model_.nodes[*m].outputs[0])
                return std::nullopt;
            g.nodes = {*d, erf, *a, *m, *half};
            g.last = *half;
        } else {
            // Mul(Mul(x, 0.5), a)
            const std::optional<size_t> half = producer(y);
            if (!half || !internal(y) || !is(*half, "Mul", 2) || other_than_scalar(*half, 0.5) != *x)
                return std::nullopt;
            g.nodes = {*d, erf, *a, *half, *m};
            g.last = *m;
        }
        return g;
    }

    std::optional<Match> match_swish(size_t sigmoid) const {
        const OnnxNode& s = model_.nodes[sigmoid];
        const std::optional<size_t> m = reader(s.outputs[0]);
        if (!m || !is(*m, "Mul", 2)) return std::nullopt;
        const std::vector<std::string>& in = model_.nodes[*m].inputs;
        const std::string& other = in[0] == s.outputs[0] ? in[1] : in[0];
        if (other != s.inputs[0]) return std::nullopt;
        Match g;
        g.op = "Swish";
        g.x = s.inputs[0];
        g.nodes = {sigmoid, *m};
        g.last = *m;
        return g;
    }

    static bool overlaps(const Match& g, const std::vector<bool>& gone) {
        for (size_t n : g.nodes)
            if (gone[n]) return true;
        return false;
    }

    const OnnxModel& model_;
    std::map<std::string, size_t> readers_;    // tensor -> how many node inputs read it
    std::map<std::string, size_t> producer_;   // tensor -> node
    std::set<std::string> graph_outputs_;
};

}   // namespace

std::vector<OnnxNode> fuse_known_subgraphs(const Registry& registry, const OnnxModel& model, size_t& fused,
                                           const PassSet& passes, std::map<std::string, std::string>* absorbed) {
    return Patterns(model).fuse(registry, fused, passes, absorbed);
}

}   // namespace dynrt::onnx
