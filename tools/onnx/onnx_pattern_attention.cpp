// pattern_attention: scaled dot-product attention as exporters spell it,
// imported as one DynrtSdpa node (the sdpa op: q [B,Hq,Sq,D], k [B,Hk,Sk,D],
// v [B,Hk,Sk,Dv], an optional mask, attributes scale, causal,
// zero_masked_rows). The core it replaces:
//
//   s = MatMul(q', kT')          q' = q, Mul(q, c) or Div(q, c); kT' likewise
//   s = Mul(s, c) | Div(s, c)    optional; every c a floating constant of one element
//   s = Add(s, m) | Add(m, s)    m: any tensor, the sdpa's float mask
//     | Where(b, s, c)           c <= -1e30 or -inf: b (bool, true keeps) is the mask
//     | Where(b, c, s)           the same with b inverted
//   p = Softmax(s)               on the last axis (opset < 13: axis -1 or 3)
//   p = Where(IsNaN(p), 0, p)    optional: zero_masked_rows 1
//   MatMul(p, v)                 the sdpa's output, named as this node
//
// scale is the product of the c's (1 when there is none: OPT, T5 and Whisper
// scale q in its projection). kT, K with its last two axes swapped, comes as
//   - Transpose(x, perm) of rank 4: K = Transpose(x, perm with its last two
//     entries swapped), x itself where that is the identity (the Llama family's
//     k.transpose(2, 3)), else a new Transpose node (torchscript exports of
//     encoders: the head split and the swap in one perm [0, 2, 3, 1]);
//   - Reshape(Transpose(Reshape(k, [-1, S, D]), [0, 2, 1]), [*lead, D, S]),
//     every shape taken from Shape(k) by Slice and Concat (the dynamo
//     exporter's decomposition of torch's SDPA); each Slice and Concat is
//     checked, so another reshape declines.
// A Where mask with c = -inf maps to the bool mask (inverted through a new
// Not node); with a finite c <= -1e30 to a float mask Where(b, 0, c) (or
// Where(b, c, 0)) added to the scores, so that a row whose every key is
// masked still averages v uniformly as the export does.
//
// Every intermediate tensor is read inside the pattern only and is no graph
// output. The importer checks what only mapping knows (PatternCheck): q, K
// and v rank 4 of one dtype, f32 or f16, and the mask rank 4 at most, else
// it maps the original nodes.
// Not matched: the head split and the construction of causal masks (the mask
// subgraph stays and feeds the sdpa's mask input), a scale applied after the
// mask. Equivalence holds for finite scores of magnitude below 1e22 (what a
// mask value <= -1e30 needs to vanish) and shapes whose dims are not 0 (the
// dynamo reshape is ill-defined there).
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_patterns.hpp"

namespace dynrt::onnx {

namespace {

constexpr const char* kPass = "pattern_attention";
constexpr double kMaskLimit = -1e30;

// What a match makes of the model's nodes.
struct Attention {
    std::vector<size_t> nodes;   // the pattern's nodes, all replaced
    size_t out = 0;              // the MatMul(p, v): the sdpa takes its place and name
    std::string q, k, v;         // k: "" until set (a helper's output or the model's tensor)
    std::string k_source;        // the tensor K's rank comes from
    std::string mask;            // the sdpa's mask input ("" none)
    std::string mask_source;     // the model tensor it comes from
    std::vector<OnnxNode> helpers;
    double scale = 1;
    bool zero_rows = false;
};

struct Declined {
    std::string why;
};

OnnxAttr int_attr(int64_t v) {
    OnnxAttr a;
    a.kind = OnnxAttr::Kind::Int;
    a.i = v;
    return a;
}

OnnxAttr float_attr(double v) {
    OnnxAttr a;
    a.kind = OnnxAttr::Kind::Float;
    a.f = v;
    return a;
}

class AttentionMatcher {
public:
    AttentionMatcher(GraphIndex& g, bool has_not) : g_(g), has_not_(has_not) {}

    // Whether Softmax node sm reads scores a MatMul computed (through at most
    // a mask and a scale): only those are candidates that decline aloud.
    bool candidate(size_t sm) const {
        std::vector<std::string> front = {g_.node(sm).inputs[0]};
        for (int step = 0; step < 3 && !front.empty(); ++step) {
            std::vector<std::string> next;
            for (const std::string& t : front) {
                const std::optional<size_t> p = g_.producer(t);
                if (!p || g_.constant(t)) continue;
                const std::string& op = g_.node(*p).op_type;
                if (op == "MatMul") return true;
                if (op == "Add" || op == "Where" || op == "Mul" || op == "Div")
                    next.insert(next.end(), g_.node(*p).inputs.begin(), g_.node(*p).inputs.end());
            }
            front = std::move(next);
        }
        return false;
    }

    // The match, or why Softmax node sm is no attention the pass can prove.
    std::optional<Attention> match(size_t sm, Declined& d) {
        Attention a;
        if (!softmax_ok(sm, d) || !forward(sm, a, d)) return std::nullopt;
        const OnnxNode& s = g_.node(sm);
        a.nodes.push_back(sm);
        if (!internal(s.inputs[0], "the Softmax's input", d)) return std::nullopt;
        std::string scores = s.inputs[0];
        if (!mask(scores, a, d)) return std::nullopt;
        std::optional<size_t> mm = scaled_matmul(scores, a, d);
        if (!mm) return std::nullopt;
        const OnnxNode& m = g_.node(*mm);
        a.q = strip_scale(m.inputs[0], a);
        if (!internal(m.inputs[1], "K^T", d)) return std::nullopt;
        const std::string kt = strip_scale(m.inputs[1], a);
        if (kt != m.inputs[1] && !internal(kt, "K^T", d)) return std::nullopt;
        if (!untransposed(kt, a, d)) return std::nullopt;
        if (a.scale == 0 || !std::isfinite(a.scale)) {
            d.why = "the scales multiply to " + std::to_string(a.scale) + ", which sdpa's scale cannot say";
            return std::nullopt;
        }
        return a;
    }

private:
    bool internal(const std::string& t, const std::string& what, Declined& d) const {
        if (g_.internal(t)) return true;
        d.why =
            what + " '" + t + "' is " +
            (g_.graph_output(t) ? std::string("a graph output") : "read " + std::to_string(g_.readers(t)) + " times") +
            ", not only inside the pattern";
        return false;
    }

    // A floating constant of one element and rank 4 at most (so that it
    // broadcasts without growing a rank-4 operand): its value.
    std::optional<double> scale_constant(const std::string& t) const {
        const HostTensor* c = g_.constant(t);
        if (!c || c->shape().rank() > 4) return std::nullopt;
        return g_.scalar(t);
    }

    bool softmax_ok(size_t sm, Declined& d) const {
        const OnnxNode& s = g_.node(sm);
        const int64_t opset = g_.model().opset;
        int64_t axis = opset >= 13 ? -1 : 1;
        for (const auto& [name, attr] : s.attrs) {
            if (name != "axis" || attr.kind != OnnxAttr::Kind::Int) {
                d.why = "the Softmax has attribute '" + name + "'";
                return false;
            }
            axis = attr.i;
        }
        if (axis == -1 || axis == 3) return true;   // 3: the last axis of the rank-4 scores the importer checks
        d.why = opset >= 13 ? "the Softmax is on axis " + std::to_string(axis) + ", not the last one"
                            : "the Softmax (opset " + std::to_string(opset) + ") is on axis " + std::to_string(axis) +
                                  ": below opset 13 it normalises the dims from that axis on together";
        return false;
    }

    // Softmax -> [IsNaN, Where guard] -> MatMul(p, v).
    bool forward(size_t sm, Attention& a, Declined& d) {
        const std::string& p = g_.node(sm).outputs[0];
        if (g_.graph_output(p)) {
            d.why = "the Softmax's output is a graph output";
            return false;
        }
        const std::vector<size_t> r = g_.all_readers(p);
        std::string probs = p;
        if (r.size() == 2) {
            // Where(IsNaN(p), 0, p), its nodes in either order.
            const size_t isnan = g_.is(r[0], "IsNaN", 1) ? r[0] : r[1];
            const size_t where = isnan == r[0] ? r[1] : r[0];
            const std::optional<double> zero = g_.is(isnan, "IsNaN", 1) && g_.is(where, "Where", 3)
                                                   ? scale_constant(g_.node(where).inputs[1])
                                                   : std::nullopt;
            const OnnxNode& w = g_.node(where);
            if (!zero || *zero != 0 || w.inputs[0] != g_.node(isnan).outputs[0] || w.inputs[2] != p ||
                !g_.internal(w.inputs[0])) {
                d.why = "the Softmax's output is read twice, not by IsNaN and Where(IsNaN(p), 0, p)";
                return false;
            }
            a.nodes.insert(a.nodes.end(), {isnan, where});
            a.zero_rows = true;
            probs = w.outputs[0];
        } else if (r.size() != 1) {
            d.why = "the Softmax's output is read " + std::to_string(r.size()) + " times";
            return false;
        }
        const std::optional<size_t> out = g_.reader(probs);
        if (!out || !g_.is(*out, "MatMul", 2) || g_.node(*out).inputs[0] != probs || g_.node(*out).inputs[1] == probs) {
            d.why = "the probabilities '" + probs + "' are not the first input of one MatMul that reads them alone";
            return false;
        }
        a.out = *out;
        a.v = g_.node(*out).inputs[1];
        a.nodes.push_back(*out);
        return true;
    }

    // The mask before the Softmax, if any; `scores` becomes what it masks.
    bool mask(std::string& scores, Attention& a, Declined& d) {
        const std::optional<size_t> p = g_.producer(scores);
        if (!p) return true;
        const OnnxNode& n = g_.node(*p);
        if (g_.is(*p, "Add", 2)) {
            for (size_t i : {0, 1}) {
                const std::optional<size_t> from = g_.producer(n.inputs[i]);
                if (!from) continue;
                const std::string& op = g_.node(*from).op_type;
                if (op != "MatMul" && op != "Mul" && op != "Div") continue;
                if (!internal(n.inputs[i], "the scores", d)) continue;
                a.nodes.push_back(*p);
                scores = n.inputs[i];
                a.mask = a.mask_source = n.inputs[1 - i];
                d.why.clear();
                return true;
            }
            if (d.why.empty()) d.why = "neither operand of the Add before the Softmax is a MatMul's scores";
            return false;
        }
        if (!g_.is(*p, "Where", 3)) return true;
        const std::optional<double> keep_c = scale_constant(n.inputs[2]), drop_c = scale_constant(n.inputs[1]);
        const bool inverted = !(keep_c && *keep_c <= kMaskLimit) && drop_c && *drop_c <= kMaskLimit;
        if (!inverted && !(keep_c && *keep_c <= kMaskLimit)) {
            d.why = "the Where before the Softmax has no constant scalar <= -1e30 or -inf as its other branch";
            return false;
        }
        const std::string& cond = n.inputs[0];
        const std::string& c = inverted ? n.inputs[1] : n.inputs[2];
        const double value = inverted ? *drop_c : *keep_c;
        scores = inverted ? n.inputs[2] : n.inputs[1];
        a.nodes.push_back(*p);
        a.mask_source = cond;
        if (std::isinf(value) && !inverted) {
            a.mask = cond;
            return true;
        }
        const std::string base = n.name.empty() ? std::string("attention_mask") : n.name;
        if (std::isinf(value)) {
            if (!has_not_) {
                d.why = "the Where keeps where its condition is false and no loaded module maps Not";
                return false;
            }
            OnnxNode no;
            no.name = base + "_keep";
            no.op_type = "Not";
            no.inputs = {cond};
            no.outputs = {g_.fresh_name(cond + "_keep")};
            a.mask = no.outputs[0];
            a.helpers.push_back(std::move(no));
            return true;
        }
        // A finite c: the float mask Where(b, 0, c) added to the scores.
        OnnxNode zero;
        zero.name = base + "_zero";
        zero.op_type = "Constant";
        OnnxAttr t;
        t.kind = OnnxAttr::Kind::Tensor;
        t.tensor = std::make_shared<HostTensor>(g_.constant(c)->dtype(), Shape{});
        zero.attrs["value"] = t;
        zero.outputs = {g_.fresh_name(base + "_zero")};
        OnnxNode w;
        w.name = base + "_additive";
        w.op_type = "Where";
        w.inputs = inverted ? std::vector<std::string>{cond, c, zero.outputs[0]}
                            : std::vector<std::string>{cond, zero.outputs[0], c};
        w.outputs = {g_.fresh_name(base + "_additive")};
        a.mask = w.outputs[0];
        a.helpers.push_back(std::move(zero));
        a.helpers.push_back(std::move(w));
        return true;
    }

    // Scores = MatMul, or Mul / Div of one by a constant scalar.
    std::optional<size_t> scaled_matmul(const std::string& scores, Attention& a, Declined& d) {
        if (!internal(scores, "the scores", d)) return std::nullopt;
        std::optional<size_t> p = g_.producer(scores);
        if (p && (g_.is(*p, "Mul", 2) || g_.is(*p, "Div", 2))) {
            const std::string un = strip_scale(scores, a);
            if (un == scores) {
                d.why =
                    "the scores are scaled by a tensor that is not a constant scalar ('" + g_.node(*p).inputs[1] + "')";
                return std::nullopt;
            }
            if (!internal(un, "the unscaled scores", d)) return std::nullopt;
            p = g_.producer(un);
        }
        if (!p || !g_.is(*p, "MatMul", 2)) {
            d.why = "the scores come from " + (p ? g_.label(*p) : std::string("no node")) + ", not a MatMul";
            return std::nullopt;
        }
        a.nodes.push_back(*p);
        return p;
    }

    // t = Mul(x, c), Mul(c, x) or Div(x, c) with c a constant scalar, read
    // only by the pattern: x (its factor taken into the scale); else t.
    std::string strip_scale(const std::string& t, Attention& a) {
        const std::optional<size_t> p = g_.producer(t);
        if (!p || !g_.internal(t)) return t;
        const std::vector<std::string>& in = g_.node(*p).inputs;
        if (g_.is(*p, "Mul", 2)) {
            for (size_t i : {0, 1})
                if (const std::optional<double> c = scale_constant(in[i])) {
                    a.scale *= *c;
                    a.nodes.push_back(*p);
                    return in[1 - i];
                }
        } else if (g_.is(*p, "Div", 2)) {
            if (const std::optional<double> c = scale_constant(in[1])) {
                a.scale /= *c;
                a.nodes.push_back(*p);
                return in[0];
            }
        }
        return t;
    }

    // K from kT (read only by the pattern).
    bool untransposed(const std::string& kt, Attention& a, Declined& d) {
        const std::optional<size_t> p = g_.producer(kt);
        if (p && g_.is_op(*p, "Transpose", 1)) {
            const OnnxNode& t = g_.node(*p);
            auto perm = t.attrs.find("perm");
            std::vector<int64_t> pm =
                perm != t.attrs.end() && t.attrs.size() == 1 && perm->second.kind == OnnxAttr::Kind::Ints
                    ? perm->second.ints
                    : std::vector<int64_t>{};
            std::set<int64_t> seen(pm.begin(), pm.end());
            if (pm.size() != 4 || seen.size() != 4 || *seen.begin() != 0 || *seen.rbegin() != 3) {
                d.why = "K^T comes from a Transpose without a perm of rank 4";
                return false;
            }
            std::swap(pm[2], pm[3]);
            a.nodes.push_back(*p);
            a.k_source = t.inputs[0];
            if (pm == std::vector<int64_t>{0, 1, 2, 3}) {
                a.k = t.inputs[0];
                return true;
            }
            OnnxNode k;
            k.name = (t.name.empty() ? std::string("transpose") : t.name) + "_k";
            k.op_type = "Transpose";
            k.inputs = {t.inputs[0]};
            OnnxAttr attr;
            attr.kind = OnnxAttr::Kind::Ints;
            attr.ints = pm;
            k.attrs["perm"] = attr;
            k.outputs = {g_.fresh_name(t.inputs[0] + "_k")};
            a.k = k.outputs[0];
            a.helpers.push_back(std::move(k));
            return true;
        }
        if (p && g_.is_op(*p, "Reshape", 2)) return dynamo_transposed(*p, a, d);
        d.why = "K^T '" + kt + "' comes from " + (p ? g_.label(*p) : std::string("no node")) +
                ", not a Transpose of K's last two axes";
        return false;
    }

    // Reshape(Transpose(Reshape(k, [-1, S, D]), [0, 2, 1]), [*lead, D, S]).
    bool dynamo_transposed(size_t outer, Attention& a, Declined& d) {
        const auto fail = [&](const std::string& why) {
            d.why = "K^T comes from a Reshape that is not K's last two axes swapped: " + why;
            return false;
        };
        const OnnxNode& r2 = g_.node(outer);
        const std::optional<size_t> tr = g_.producer(r2.inputs[0]);
        if (!reshape_attrs_ok(outer) || !tr || !g_.internal(r2.inputs[0]) || !g_.is_op(*tr, "Transpose", 1))
            return fail("its data is no Transpose read only there");
        const OnnxNode& t = g_.node(*tr);
        auto perm = t.attrs.find("perm");
        if (t.attrs.size() != 1 || perm == t.attrs.end() || perm->second.ints != std::vector<int64_t>{0, 2, 1})
            return fail("the Transpose's perm is not [0, 2, 1]");
        const std::optional<size_t> r1 = g_.producer(t.inputs[0]);
        if (!r1 || !g_.internal(t.inputs[0]) || !g_.is_op(*r1, "Reshape", 2) || !reshape_attrs_ok(*r1))
            return fail("the Transpose does not read a Reshape read only there");
        const std::string& k = g_.node(*r1).inputs[0];
        // [-1, S, D] and [*lead, D, S], each piece a Slice of Shape(k).
        if (!concat_of(g_.node(*r1).inputs[1], k, {Piece::minus_one, Piece::second_last, Piece::last}))
            return fail("the first Reshape's shape is not Concat([-1], Shape(k)[-2], Shape(k)[-1])");
        if (!concat_of(r2.inputs[1], k, {Piece::lead, Piece::last, Piece::second_last}))
            return fail("the second Reshape's shape is not Concat(Shape(k)[:-2], Shape(k)[-1], Shape(k)[-2])");
        a.nodes.insert(a.nodes.end(), {outer, *tr, *r1});
        a.k = a.k_source = k;
        return true;
    }

    bool reshape_attrs_ok(size_t r) const {
        for (const auto& [name, attr] : g_.node(r).attrs)
            if (name != "allowzero" || attr.kind != OnnxAttr::Kind::Int) return false;
        return true;
    }

    enum class Piece { minus_one, lead, second_last, last };

    // Tensor t is Concat(axis 0) of the pieces, each a Slice of Shape(k)
    // (or the constant [-1]).
    bool concat_of(const std::string& t, const std::string& k, const std::vector<Piece>& pieces) const {
        const std::optional<size_t> c = g_.producer(t);
        if (!c || !g_.is_op(*c, "Concat", pieces.size())) return false;
        const OnnxNode& n = g_.node(*c);
        auto axis = n.attrs.find("axis");
        if (n.attrs.size() != 1 || axis == n.attrs.end() || axis->second.kind != OnnxAttr::Kind::Int ||
            axis->second.i != 0)
            return false;
        for (size_t i = 0; i < pieces.size(); ++i)
            if (!piece(n.inputs[i], k, pieces[i])) return false;
        return true;
    }

    bool piece(const std::string& t, const std::string& k, Piece want) const {
        if (want == Piece::minus_one) {
            const HostTensor* c = g_.constant(t);
            return c && c->shape().rank() == 1 && g_.int_scalar(t) == -1;
        }
        const std::optional<size_t> s = g_.producer(t);
        if (!s || !g_.is_op(*s, "Slice", 3) || !g_.node(*s).attrs.empty()) return false;
        const OnnxNode& sl = g_.node(*s);
        const std::optional<int64_t> start = g_.int_scalar(sl.inputs[1]), end = g_.int_scalar(sl.inputs[2]);
        const std::optional<size_t> shape = g_.producer(sl.inputs[0]);
        if (!start || !end || !shape || !g_.is_op(*shape, "Shape", 1) || g_.node(*shape).inputs[0] != k) return false;
        for (const auto& [name, attr] : g_.node(*shape).attrs)
            if (name != "start" || attr.kind != OnnxAttr::Kind::Int || attr.i != 0) return false;
        constexpr int64_t kToEnd = int64_t{1} << 31;   // an end at or past the rank: clamped to it
        switch (want) {
            case Piece::lead: return (*start == 0 || *start <= -kToEnd) && *end == -2;
            case Piece::second_last: return *start == -2 && *end == -1;
            case Piece::last: return *start == -1 && *end >= kToEnd;
            case Piece::minus_one: break;
        }
        return false;
    }

    GraphIndex& g_;
    bool has_not_;
};

// Nodes that only fed the match: every reader of theirs is a removed node,
// no output is a graph output or read by the new nodes. Grows `removed`.
std::vector<size_t> sweep(const GraphIndex& g, std::set<size_t>& removed, const std::set<std::string>& live,
                          const std::vector<bool>& gone) {
    std::vector<size_t> swept;
    for (bool changed = true; changed;) {
        changed = false;
        std::set<size_t> candidates;
        for (size_t n : removed)
            for (const std::string& in : g.node(n).inputs)
                if (std::optional<size_t> p = g.producer(in); p && !removed.count(*p) && !gone[*p])
                    candidates.insert(*p);
        for (size_t c : candidates) {
            bool dead = true;
            for (const std::string& o : g.node(c).outputs) {
                if (o.empty()) continue;
                if (g.graph_output(o) || live.count(o)) dead = false;
                for (size_t r : g.all_readers(o))
                    if (!removed.count(r)) dead = false;
            }
            if (!dead) continue;
            removed.insert(c);
            swept.push_back(c);
            changed = true;
        }
    }
    return swept;
}

// `nodes` in an order where each is after the producers of what it reads.
std::vector<OnnxNode> in_order(const GraphIndex& g, const std::set<size_t>& nodes) {
    std::vector<OnnxNode> out;
    std::set<size_t> done;
    while (done.size() < nodes.size()) {
        const size_t before = done.size();
        for (size_t n : nodes) {
            if (done.count(n)) continue;
            bool ready = true;
            for (const std::string& in : g.node(n).inputs)
                if (std::optional<size_t> p = g.producer(in); p && nodes.count(*p) && !done.count(*p)) ready = false;
            if (!ready) continue;
            done.insert(n);
            out.push_back(g.node(n));
        }
        if (done.size() == before) break;   // a cycle: the importer reports it when it maps them
    }
    return out;
}

}   // namespace

void fuse_attention(GraphIndex& index, const Registry& registry, std::vector<OnnxNode>& nodes, std::vector<bool>& gone,
                    FusedGraph& out) {
    AttentionMatcher matcher(index, !target_op(registry, "Not").empty());
    for (size_t sm = 0; sm < nodes.size(); ++sm) {
        if (gone[sm] || !index.is_op(sm, "Softmax", 1) || !matcher.candidate(sm)) continue;
        Declined d;
        std::optional<Attention> a = matcher.match(sm, d);
        if (a)
            for (size_t n : a->nodes)
                if (gone[n]) a.reset();   // inside another pattern's match: not a candidate of this one
        if (!a) {
            if (!d.why.empty())
                out.declined.push_back(std::string(kPass) + ": Softmax " + index.label(sm) + ": " + d.why);
            continue;
        }
        const OnnxNode& last = index.node(a->out);
        OnnxNode sdpa;
        sdpa.name = last.name;
        sdpa.op_type = "DynrtSdpa";
        sdpa.inputs = {a->q, a->k, a->v};
        if (!a->mask.empty()) sdpa.inputs.push_back(a->mask);
        sdpa.outputs = {last.outputs[0]};
        sdpa.attrs["scale"] = float_attr(a->scale);
        sdpa.attrs["causal"] = int_attr(0);
        sdpa.attrs["zero_masked_rows"] = int_attr(a->zero_rows ? 1 : 0);

        std::set<std::string> live(sdpa.inputs.begin(), sdpa.inputs.end());
        for (const OnnxNode& h : a->helpers) live.insert(h.inputs.begin(), h.inputs.end());
        std::set<size_t> removed(a->nodes.begin(), a->nodes.end());
        sweep(index, removed, live, gone);

        PatternCheck check;
        check.pass = kPass;
        check.node = a->out;
        check.helpers = a->helpers;
        check.original = in_order(index, removed);
        check.rank4 = {a->q, a->k_source, a->v};
        check.mask = a->mask_source;
        std::set<std::string> made;
        for (const OnnxNode& n : check.original) made.insert(n.outputs.begin(), n.outputs.end());
        for (const OnnxNode& n : check.helpers) made.insert(n.outputs.begin(), n.outputs.end());
        std::set<std::string> needs;
        for (const OnnxNode& n : check.original)
            for (const std::string& in : n.inputs)
                if (!in.empty() && !made.count(in)) needs.insert(in);
        for (const OnnxNode& n : check.helpers)
            for (const std::string& in : n.inputs)
                if (!in.empty() && !made.count(in)) needs.insert(in);
        check.needs.assign(needs.begin(), needs.end());
        const std::string into = std::string(kPass) + ": inside sdpa node '" +
                                 (last.name.empty() ? std::string("DynrtSdpa") : last.name) + "'";
        for (const OnnxNode& n : check.original)
            for (const std::string& o : n.outputs)
                if (!o.empty() && o != last.outputs[0]) {
                    out.absorbed[o] = into;
                    check.absorbed.push_back(o);
                }
        for (size_t n : removed) gone[n] = true;
        gone[a->out] = false;
        nodes[a->out] = std::move(sdpa);
        out.checks.push_back(std::move(check));
        ++out.fused;
        ++out.matched[kPass];
    }
}

}   // namespace dynrt::onnx
