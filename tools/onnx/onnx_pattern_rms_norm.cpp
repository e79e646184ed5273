// pattern_rms_norm: RMSNorm as exporters spell it (Llama, Mistral, Qwen2,
// T5), imported as one DynrtRmsNorm node (the rms_norm op: x, an optional
// scale, attribute epsilon):
//
//   s = Pow(x, 2) | Mul(x, x)
//   m = ReduceMean(s)              the last axis only (axes [-1], as the attribute
//                                  below opset 18, else a constant input), keepdims 1
//   a = Add(m, eps) | Add(eps, m)  eps a floating constant of one element
//   r = Sqrt(a)
//   n = Mul(x, Reciprocal(r))      dynamo
//     | Mul(x, Div(1, r))          torchscript
//     | Div(x, r)                  ONNX's own expansion of RMSNormalization
//                                  (Mul in either operand order)
//   [Cast(n, to T)]                only where x is known to be of type T (x a
//                                  Cast to T, or a graph input declared T): a Cast
//                                  that changes nothing (torchscript's .to(f32) of
//                                  an f32 tensor)
//   [Mul(w, .) | Mul(., w)]        w a floating constant (an initializer or a
//                                  Constant node, through Identity nodes) of rank
//                                  0 or 1: the scale
//
// x is any tensor (read elsewhere too: the residual). Every other tensor of
// the match is read by the next node of the pattern alone and is no graph
// output; the Constant nodes only the match reads leave with it. The match
// ends where that stops holding: an n read twice gives an rms_norm without a
// scale, the Mul stays. A Cast that changes the type (an f16 model's Cast
// back after the f32 norm) stays, and so does the Mul(w) after it.
//
// Candidates are the ReduceMean nodes of the squares of a tensor (Pow(x, 2),
// Mul(x, x)). One that is no RMSNorm the pass can prove says why (another
// axis, keepdims 0, an epsilon that is not a constant, an intermediate read
// twice ...) in FusedGraph::declined.
//
// The equivalence is exact in the real numbers; rms_norm sums the squares in
// double (its reference) or float lanes combined in double, so the results
// differ from the nodes' by rounding only. A scale whose length is neither 1
// nor the last dim of x (which ONNX would broadcast into a larger result) is
// an error of rms_norm's shape inference when the shapes are known.
#include <optional>
#include <string>
#include <vector>

#include "onnx_patterns.hpp"

namespace dynrt::onnx {

namespace {

constexpr const char* kPass = "pattern_rms_norm";

struct RmsNorm {
    std::string x, scale;
    double epsilon = 0;
    std::vector<size_t> nodes;   // the pattern's nodes, all replaced
    size_t last = 0;             // the node whose output the rms_norm gives
};

class RmsNormMatcher {
public:
    explicit RmsNormMatcher(const GraphIndex& g) : g_(g) {}

    // ReduceMean node k reads the squares of a tensor: that tensor.
    std::optional<std::string> squared(size_t k) const {
        const OnnxNode& rm = g_.node(k);
        if (rm.inputs.empty()) return std::nullopt;
        const std::optional<size_t> p = g_.producer(rm.inputs[0]);
        if (!p) return std::nullopt;
        const std::vector<std::string>& in = g_.node(*p).inputs;
        if (g_.is(*p, "Pow", 2) && g_.scalar(in[1], 2.0)) return in[0];
        if (g_.is(*p, "Mul", 2) && in[0] == in[1]) return in[0];
        return std::nullopt;
    }

    // The match of candidate ReduceMean k, or why it is none.
    std::optional<RmsNorm> match(size_t k, const std::string& x, std::string& why) {
        RmsNorm r;
        r.x = x;
        const OnnxNode& rm = g_.node(k);
        if (!internal(rm.inputs[0], "the square", why) || !last_axis(k, why)) return std::nullopt;
        r.nodes = {*g_.producer(rm.inputs[0]), k};
        take_constant(g_.node(r.nodes[0]).inputs[1], r);
        if (rm.inputs.size() > 1) take_constant(rm.inputs[1], r);

        // Add(mean, eps)
        const std::string& mean = rm.outputs[0];
        std::optional<size_t> add = next(mean, "the mean of squares", why);
        if (!add) return std::nullopt;
        if (!g_.is(*add, "Add", 2)) return read_by(mean, "the mean of squares", *add, "an Add of epsilon", why);
        const std::string& eps = g_.node(*add).inputs[0] == mean ? g_.node(*add).inputs[1] : g_.node(*add).inputs[0];
        const std::optional<double> e = g_.scalar(eps);
        if (!e) {
            why = "the epsilon '" + eps + "' added to the mean of squares is not a floating constant of one element";
            return std::nullopt;
        }
        r.epsilon = *e;
        r.nodes.push_back(*add);
        take_constant(eps, r);

        // Sqrt
        const std::string& a = g_.node(*add).outputs[0];
        const std::optional<size_t> sqrt = next(a, "the mean of squares plus epsilon", why);
        if (!sqrt) return std::nullopt;
        if (!g_.is(*sqrt, "Sqrt", 1)) return read_by(a, "the mean of squares plus epsilon", *sqrt, "a Sqrt", why);
        r.nodes.push_back(*sqrt);

        // x / r: Div(x, r), or Mul(x, 1 / r) with Reciprocal(r) or Div(1, r)
        const std::string& rms = g_.node(*sqrt).outputs[0];
        const std::optional<size_t> d = next(rms, "the root mean square", why);
        if (!d) return std::nullopt;
        const std::vector<std::string>& di = g_.node(*d).inputs;
        std::optional<size_t> norm;
        if (g_.is(*d, "Div", 2) && di[1] == rms && g_.scalar(di[0], 1.0)) {
            take_constant(di[0], r);
        } else if (g_.is(*d, "Div", 2) && di[1] == rms) {
            norm = d;   // Div(x, r)
        } else if (!g_.is(*d, "Reciprocal", 1)) {
            return read_by(rms, "the root mean square", *d, "Reciprocal, Div(1, .) or Div(x, .)", why);
        }
        r.nodes.push_back(*d);
        if (!norm) {
            const std::string& inv = g_.node(*d).outputs[0];
            norm = next(inv, "1 / the root mean square", why);
            if (!norm) return std::nullopt;
            if (!g_.is(*norm, "Mul", 2)) return read_by(inv, "1 / the root mean square", *norm, "a Mul", why);
            r.nodes.push_back(*norm);
        }
        const std::vector<std::string>& ni = g_.node(*norm).inputs;
        const std::string& scaled = g_.node(*norm).op_type == "Div" || ni[1] == g_.node(*d).outputs[0] ? ni[0] : ni[1];
        if (scaled != x) {
            why = "the tensor divided by the root mean square is '" + scaled + "', not the squared '" + x + "'";
            return std::nullopt;
        }
        r.last = *norm;
        extend(r);
        return r;
    }

private:
    bool internal(const std::string& t, const std::string& what, std::string& why) const {
        if (g_.internal(t)) return true;
        why =
            what + " '" + t + "' is " +
            (g_.graph_output(t) ? std::string("a graph output") : "read " + std::to_string(g_.readers(t)) + " times") +
            ", not only inside the pattern";
        return false;
    }

    // The one reader of an intermediate tensor t.
    std::optional<size_t> next(const std::string& t, const std::string& what, std::string& why) const {
        if (!internal(t, what, why)) return std::nullopt;
        return g_.reader(t);
    }

    std::nullopt_t read_by(const std::string& t, const std::string& what, size_t k, const std::string& want,
                           std::string& why) const {
        why = what + " '" + t + "' is read by " + g_.label(k) + ", not " + want;
        return std::nullopt;
    }

    // ReduceMean over the last axis alone, keeping it.
    bool last_axis(size_t k, std::string& why) const {
        const OnnxNode& rm = g_.node(k);
        std::optional<std::vector<int64_t>> axes;
        for (const auto& [name, a] : rm.attrs) {
            if (name == "keepdims" && a.kind == OnnxAttr::Kind::Int) {
                if (a.i != 1) {
                    why = "the ReduceMean has keepdims " + std::to_string(a.i) + " (rms_norm keeps the axis)";
                    return false;
                }
            } else if (name == "axes" && a.kind == OnnxAttr::Kind::Ints) {
                axes = a.ints;
            } else if (name != "noop_with_empty_axes" || a.kind != OnnxAttr::Kind::Int) {
                why = "the ReduceMean has attribute '" + name + "'";
                return false;
            }
        }
        if (rm.inputs.size() > 1 && !rm.inputs[1].empty()) {
            const HostTensor* v = g_.constant(rm.inputs[1]);
            if (!v || (v->dtype() != DataType::i64 && v->dtype() != DataType::i32)) {
                why = "the ReduceMean's axes '" + rm.inputs[1] + "' are not an integer constant";
                return false;
            }
            axes.emplace();
            for (size_t i = 0; i < v->count(); ++i)
                axes->push_back(v->dtype() == DataType::i64 ? v->as<int64_t>()[i] : v->as<int32_t>()[i]);
        }
        if (!axes || axes->empty()) {
            why = "the ReduceMean has no axes (it reduces every axis)";
            return false;
        }
        if (*axes != std::vector<int64_t>{-1}) {
            std::string list;
            for (int64_t a : *axes) list += (list.empty() ? "" : ",") + std::to_string(a);
            why = "the ReduceMean is over axes [" + list + "], not the last axis alone (-1)";
            return false;
        }
        return true;
    }

    // A Constant node that only node-of-the-match reads leaves with it.
    void take_constant(const std::string& t, RmsNorm& r) const {
        const std::optional<size_t> p = g_.producer(t);
        if (p && g_.node(*p).op_type == "Constant" && g_.internal(t)) r.nodes.push_back(*p);
    }

    // The element type x is known to have (ONNX TensorProto.DataType), 0 when
    // unknown: a Cast's `to`, a graph input's declared type.
    int known_type(const std::string& x) const {
        if (const std::optional<size_t> p = g_.producer(x)) {
            const OnnxNode& c = g_.node(*p);
            auto to = c.attrs.find("to");
            if (g_.is_op(*p, "Cast", 1) && to != c.attrs.end() && to->second.kind == OnnxAttr::Kind::Int)
                return static_cast<int>(to->second.i);
            return 0;
        }
        for (const ValueInfo& in : g_.model().inputs)
            if (in.name == x && in.kind == "tensor") return in.onnx_type;
        return 0;
    }

    // A floating constant of rank 0 or 1, through Identity nodes.
    bool scale_constant(const std::string& t) const {
        std::string at = t;
        for (int hops = 0; hops < 8; ++hops) {
            if (const HostTensor* v = g_.constant(at)) return is_floating(v->dtype()) && v->shape().rank() <= 1;
            const std::optional<size_t> p = g_.producer(at);
            if (!p || !g_.is(*p, "Identity", 1)) return false;
            at = g_.node(*p).inputs[0];
        }
        return false;
    }

    // [Cast to x's type], [Mul(w, .)] after the normalisation.
    void extend(RmsNorm& r) const {
        std::string y = g_.node(r.last).outputs[0];
        std::optional<size_t> k = g_.reader(y);
        if (k && g_.is_op(*k, "Cast", 1)) {
            const OnnxNode& c = g_.node(*k);
            auto to = c.attrs.find("to");
            bool same = to != c.attrs.end() && to->second.kind == OnnxAttr::Kind::Int &&
                        known_type(r.x) == static_cast<int>(to->second.i) && to->second.i != 0;
            for (const auto& [name, a] : c.attrs)
                if (name != "to" && name != "saturate") same = false;
            if (!same) return;
            r.nodes.push_back(*k);
            r.last = *k;
            y = c.outputs[0];
            k = g_.reader(y);
        }
        if (!k || !g_.is(*k, "Mul", 2)) return;
        const std::vector<std::string>& mi = g_.node(*k).inputs;
        const std::string& w = mi[0] == y ? mi[1] : mi[0];
        if (w == y || !scale_constant(w)) return;
        r.nodes.push_back(*k);
        r.last = *k;
        r.scale = w;
    }

    const GraphIndex& g_;
};

OnnxAttr float_attr(double v) {
    OnnxAttr a;
    a.kind = OnnxAttr::Kind::Float;
    a.f = v;
    return a;
}

}   // namespace

void fuse_rms_norm(const GraphIndex& index, std::vector<OnnxNode>& nodes, std::vector<bool>& gone, FusedGraph& out) {
    RmsNormMatcher matcher(index);
    for (size_t k = 0; k < nodes.size(); ++k) {
        if (gone[k] || !index.is_op(k, "ReduceMean", index.node(k).inputs.size())) continue;
        const std::optional<std::string> x = matcher.squared(k);
        if (!x) continue;
        std::string why;
        std::optional<RmsNorm> r = matcher.match(k, *x, why);
        if (r)
            for (size_t n : r->nodes)
                if (gone[n]) r.reset();   // inside another pattern's match: not a candidate of this one
        if (!r) {
            if (!why.empty())
                out.declined.push_back(std::string(kPass) + ": ReduceMean " + index.label(k) + ": " + why);
            continue;
        }
        const OnnxNode& last = index.node(r->last);
        OnnxNode one;
        one.name = last.name;
        one.op_type = "DynrtRmsNorm";
        one.inputs = {r->x};
        if (!r->scale.empty()) one.inputs.push_back(r->scale);
        one.outputs = {last.outputs[0]};
        one.attrs["epsilon"] = float_attr(r->epsilon);
        const std::string into = std::string(kPass) + ": inside rms_norm node '" +
                                 (last.name.empty() ? std::string("rms_norm") : last.name) + "'";
        for (size_t n : r->nodes) {
            gone[n] = true;
            if (n != r->last)
                for (const std::string& o : index.node(n).outputs)
                    if (!o.empty()) out.absorbed[o] = into;
        }
        gone[r->last] = false;
        nodes[r->last] = std::move(one);
        ++out.fused;
        ++out.matched[kPass];
    }
}

}   // namespace dynrt::onnx
