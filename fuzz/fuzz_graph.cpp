// The differential graph fuzzer (fuzz_graph.hpp says what and who calls it).
//
// Decoding: the bytes choose 2-4 shape sets for one or two inputs (some dims
// dynamic, varying between the sets), then a few patterns, each applied to a
// tensor built so far. Every tensor carries its shape in every set, so a
// pattern is only applied where it is valid for all of them (a MatMul needs
// a static K, a constant reshape target needs at most one dim it cannot name
// by 0 or a literal). Bytes past the end read 0, so any input decodes to a
// graph. The last tensor is a graph output; each other computed tensor is one
// with probability 1/4 (none once the bytes run out), so most intermediates (views, fused chains, concat
// producers) are buffers the memory pool may reuse while a view still reads
// them.
#include "fuzz_graph.hpp"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "dynrt/error.hpp"
#include "fuzz_input.hpp"
#include "fuzz_registry.hpp"
#include "onnx_import.hpp"

namespace dynrt::fuzz::graph {

PassOptions all_passes_on() { return {}; }

// Every pass of the switchboard off (the importer's constant folding and
// pattern fusions, the program's folds, every network mechanism: views,
// fusion, in-place concat, fake alignment, weights reorders, the memory pool)
// and the cpu engine's reference impls alone.
PassOptions all_passes_off() {
    PassOptions p;
    p.passes = PassSet::none();
    p.network.host_reference_only = true;
    return p;
}

namespace {

namespace ox = ::onnx;
using Shapes = std::vector<Shape>;   // one per shape set

constexpr size_t kMaxNodes = 12;

struct Tensor {
    std::string name;
    Shapes shapes;
    bool is_input = false;
};

int64_t count_of(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
    int64_t n = 1;
    for (size_t d = from; d < std::min(to, s.rank()); ++d) n *= s[d];
    return n;
}

bool static_dim(const Shapes& s, size_t d) {
    for (const Shape& x : s)
        if (x[d] != s[0][d]) return false;
    return true;
}

std::string shape_text(const Shape& s) {
    std::string t = "[";
    for (size_t d = 0; d < s.rank(); ++d) t += (d ? "," : "") + std::to_string(s[d]);
    return t + "]";
}

std::string shapes_text(const Shapes& s) {
    std::string t;
    for (size_t k = 0; k < s.size(); ++k) t += (k ? " | " : "") + shape_text(s[k]);
    return t;
}

Shape sub(const Shape& s, size_t from, size_t to) {
    std::vector<int64_t> d;
    for (size_t i = from; i < std::min(to, s.rank()); ++i) d.push_back(s[i]);
    return Shape(d);
}

Shape cat(const Shape& a, const Shape& b) {
    std::vector<int64_t> d;
    for (size_t i = 0; i < a.rank(); ++i) d.push_back(a[i]);
    for (size_t i = 0; i < b.rank(); ++i) d.push_back(b[i]);
    return Shape(d);
}

// The decoded case: the model, its inputs per shape set and a readable text.
struct Decoded {
    std::string model_bytes;
    std::vector<std::string> input_names;
    std::vector<std::vector<HostTensor>> sets;   // per shape set, per input
    std::vector<std::string> output_names;
    bool dynamic_inputs = false;
    std::string text;
};

class Builder {
public:
    explicit Builder(Input& in) : in_(in) {
        model_.set_ir_version(8);
        model_.add_opset_import()->set_version(17);
        g_ = model_.mutable_graph();
        g_->set_name("fuzz_graph");
    }

    Decoded build() {
        Decoded d;
        seed_ = 0x9e3779b97f4a7c15ULL ^ in_.byte();
        make_inputs(d);
        const size_t patterns = 1 + pick(8);
        for (size_t p = 0; p < patterns && nodes_ < kMaxNodes; ++p) {
            Tensor t = pool_[pool_.size() - 1 - pick(std::min<size_t>(3, pool_.size()))];
            // A pattern that does not fit the tensor's shapes passes to the next one.
            const size_t first = pick(kPatterns);
            for (size_t k = 0; k < kPatterns; ++k)
                if (apply((first + k) % kPatterns, t)) break;
        }
        choose_outputs(d);
        d.dynamic_inputs = pick(4) == 1;
        d.model_bytes = model_.SerializeAsString();
        std::ostringstream s;
        s << "graph (" << nodes_ << " nodes, opset 17" << (d.dynamic_inputs ? ", every input dim dynamic" : "")
          << "):\n"
          << text_ << "tensors, per shape set:\n";
        for (const Tensor& t : pool_) s << "  " << t.name << ": " << shapes_text(t.shapes) << "\n";
        s << "outputs:";
        for (const auto& o : d.output_names) s << " " << o;
        s << "\n";
        d.text = s.str();
        return d;
    }

private:
    static constexpr size_t kPatterns = 14;

    bool apply(size_t p, const Tensor& t) {
        switch (p) {
            case 0: return reshape_const(t);
            case 1: return reshape_runtime(t);
            case 2: return transpose(t);
            case 3: return flatten(t);
            case 4: return unsqueeze(t);
            case 5: return squeeze(t);
            case 6: return matmul(t);
            case 7: return gemm(t);
            case 8: return binary_const(t);
            case 9: return binary_tensor(t);
            case 10: return activation(t);
            case 11: return conv(t);
            case 12: return concat(t);
            default: return pick(2) ? softmax(t) : layernorm(t);
        }
    }

    // A choice in [0, n) from one byte (n <= 256): a graph takes a few dozen
    // choices, so short inputs reach every pattern. Past the end: 0.
    size_t pick(size_t n) { return n == 0 ? 0 : in_.byte() % n; }

    // ---- values ---------------------------------------------------------

    float uniform(float lo, float hi) {   // a deterministic stream, seeded by the input
        seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return lo + (hi - lo) * static_cast<float>((seed_ >> 40) & 0xffffff) / float(0x1000000);
    }

    std::string fresh(const std::string& prefix) { return prefix + std::to_string(names_++); }

    std::string const_f(const std::vector<int64_t>& dims, float lo, float hi) {
        std::string name = fresh("c");
        ox::TensorProto* t = g_->add_initializer();
        t->set_name(name);
        t->set_data_type(ox::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        std::string v;
        for (int64_t i = 0; i < n; ++i) t->add_float_data(uniform(lo, hi));
        std::string shape = "[";
        for (size_t i = 0; i < dims.size(); ++i) shape += (i ? "," : "") + std::to_string(dims[i]);
        consts_[name] = "f32" + shape + "]";
        return name;
    }
    std::string const_scalar(float value) {
        std::string name = fresh("c");
        ox::TensorProto* t = g_->add_initializer();
        t->set_name(name);
        t->set_data_type(ox::TensorProto::FLOAT);
        t->add_float_data(value);
        consts_[name] = std::to_string(value);
        return name;
    }
    std::string const_i64(const std::vector<int64_t>& v) {
        std::string name = fresh("c");
        ox::TensorProto* t = g_->add_initializer();
        t->set_name(name);
        t->set_data_type(ox::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(v.size()));
        std::string s = "i64{";
        for (size_t i = 0; i < v.size(); ++i) {
            t->add_int64_data(v[i]);
            s += (i ? "," : "") + std::to_string(v[i]);
        }
        consts_[name] = s + "}";
        return name;
    }

    // ---- nodes ----------------------------------------------------------

    ox::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::string& out,
                        const std::string& attrs = {}) {
        ox::NodeProto* n = g_->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const auto& i : ins) n->add_input(i);
        n->add_output(out);
        ++nodes_;
        text_ += "  " + out + " = " + op + "(";
        for (size_t i = 0; i < ins.size(); ++i) {
            auto c = consts_.find(ins[i]);
            text_ += (i ? ", " : "") + (c == consts_.end() ? ins[i] : ins[i] + "=" + c->second);
        }
        text_ += ")" + (attrs.empty() ? std::string() : " " + attrs) + "\n";
        return n;
    }
    static void attr_i(ox::NodeProto* n, const std::string& name, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(ox::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr_f(ox::NodeProto* n, const std::string& name, float v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(ox::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void attr_ints(ox::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(ox::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }
    static std::string ints_text(const std::vector<int64_t>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
        return s + "]";
    }

    const Tensor& add(const std::string& name, Shapes shapes) {
        pool_.push_back(Tensor{name, std::move(shapes), false});
        return pool_.back();
    }

    // ---- inputs -----------------------------------------------------------

    void make_inputs(Decoded& d) {
        const size_t sets = 2 + pick(3);
        const size_t rank = 2 + pick(3);
        static const int64_t kStatic[] = {1, 2, 3, 4, 5, 8, 16, 17};
        Shapes shapes(sets, Shape(std::vector<int64_t>(rank, 1)));
        std::vector<bool> dynamic(rank);
        bool any = false;
        for (size_t r = 0; r < rank; ++r) {
            // The last dim (a MatMul's K) and a 4-D input's channels are mostly static.
            const bool feature = r + 1 == rank || (rank == 4 && r == 1);
            dynamic[r] = pick(feature ? 5 : 3) != 0 ? !feature : feature;
            if (pick(4) == 0) dynamic[r] = !dynamic[r];
            const int64_t fixed = kStatic[pick(8)];
            for (size_t s = 0; s < sets; ++s) shapes[s][r] = dynamic[r] ? 1 + static_cast<int64_t>(pick(9)) : fixed;
            any = any || dynamic[r];
        }
        if (!any) {   // at least one dim varies: the dynamic path is the point
            dynamic[0] = true;
            for (size_t s = 0; s < sets; ++s) shapes[s][0] = 1 + static_cast<int64_t>(pick(9));
        }
        const size_t inputs = pick(4) == 0 ? 2 : 1;
        for (size_t k = 0; k < inputs; ++k) {
            const std::string name = k == 0 ? "x" : "y";
            auto* v = g_->add_input();
            v->set_name(name);
            auto* tt = v->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(ox::TensorProto::FLOAT);
            auto* sh = tt->mutable_shape();
            for (size_t r = 0; r < rank; ++r) {
                if (dynamic[r]) sh->add_dim()->set_dim_param("d" + std::to_string(r));
                else sh->add_dim()->set_dim_value(shapes[0][r]);
            }
            pool_.push_back(Tensor{name, shapes, true});
            d.input_names.push_back(name);
            text_ += "  input " + name + ": f32[";
            for (size_t r = 0; r < rank; ++r)
                text_ += (r ? "," : "") + (dynamic[r] ? "d" + std::to_string(r) : std::to_string(shapes[0][r]));
            text_ += "]\n";
        }
        d.sets.resize(sets);
        for (size_t s = 0; s < sets; ++s) {
            for (size_t k = 0; k < inputs; ++k) {
                HostTensor t(DataType::f32, shapes[s]);
                float* p = t.as<float>();
                for (size_t i = 0; i < t.count(); ++i) p[i] = uniform(-2.f, 2.f);
                d.sets[s].push_back(std::move(t));
            }
        }
    }

    void choose_outputs(Decoded& d) {
        std::vector<std::string> outs;
        for (size_t k = 0; k + 1 < pool_.size(); ++k)
            if (!pool_[k].is_input && pick(4) == 1) outs.push_back(pool_[k].name);
        if (!pool_.back().is_input) outs.push_back(pool_.back().name);
        if (outs.empty()) {   // no pattern fitted: one node at least
            const std::string y = fresh("t");
            node("Relu", {pool_.back().name}, y);
            add(y, pool_[0].shapes);
            outs.push_back(y);
        }
        for (const auto& o : outs) {
            auto* v = g_->add_output();
            v->set_name(o);
            v->mutable_type()->mutable_tensor_type()->set_elem_type(ox::TensorProto::FLOAT);
        }
        d.output_names = outs;
    }

    // ---- patterns -----------------------------------------------------------

    // A constant Reshape target giving `out` from `in` in every set: a dim
    // that agrees across sets is a literal, one that equals the input's dim at
    // its index is 0, one more is -1; nullopt when two dims need -1.
    static std::optional<std::vector<int64_t>> const_target(const Shapes& in, const Shapes& out) {
        std::vector<int64_t> t;
        bool minus = false;
        for (size_t j = 0; j < out[0].rank(); ++j) {
            if (static_dim(out, j)) {
                t.push_back(out[0][j]);
                continue;
            }
            bool copy = j < in[0].rank();
            for (size_t s = 0; copy && s < in.size(); ++s) copy = in[s][j] == out[s][j];
            if (copy) t.push_back(0);
            else if (!minus) {
                t.push_back(-1);
                minus = true;
            } else {
                return std::nullopt;
            }
        }
        return t;
    }

    // A static dim with a divisor other than 1 and itself: (dim index, divisor).
    std::optional<std::pair<size_t, int64_t>> splittable(const Shapes& s) {
        std::vector<std::pair<size_t, int64_t>> c;
        for (size_t d = 0; d < s[0].rank(); ++d) {
            if (!static_dim(s, d)) continue;
            for (int64_t a = 2; a < s[0][d]; ++a)
                if (s[0][d] % a == 0) c.emplace_back(d, a);
        }
        if (c.empty()) return std::nullopt;
        return c[pick(c.size())];
    }

    bool reshape_const(const Tensor& t) {
        const Shapes& s = t.shapes;
        const size_t r = s[0].rank();
        Shapes out;
        const size_t kind = pick(3);
        if (kind == 0 && r >= 2) {   // merge dims i and i+1
            const size_t i = pick(r - 1);
            for (const Shape& x : s) out.push_back(cat(cat(sub(x, 0, i), Shape{x[i] * x[i + 1]}), sub(x, i + 2, r)));
        } else if (kind == 1 && r < 5) {   // split a static dim
            auto sp = splittable(s);
            if (!sp) return false;
            const auto [i, a] = *sp;
            for (const Shape& x : s) out.push_back(cat(cat(sub(x, 0, i), Shape{a, x[i] / a}), sub(x, i + 1, r)));
        } else if (kind == 2 && r >= 2) {   // 2-D around axis k
            const size_t k = 1 + pick(r - 1);
            for (const Shape& x : s) out.push_back(Shape{count_of(x, 0, k), count_of(x, k)});
        } else {
            return false;
        }
        const auto target = const_target(s, out);
        if (!target) return false;
        const std::string y = fresh("t");
        node("Reshape", {t.name, const_i64(*target)}, y);
        add(y, out);
        return true;
    }

    std::string slice_of(const std::string& shape, int64_t from, int64_t to) {
        std::string y = fresh("s");
        node("Slice", {shape, const_i64({from}), const_i64({to}), const_i64({0})}, y);
        return y;
    }

    // Reshape whose target is computed at run time from Shape(t), as
    // converted models spell it: Concat(Shape(x)[0:k], [-1]) and the like.
    bool reshape_runtime(const Tensor& t) {
        const Shapes& s = t.shapes;
        const size_t r = s[0].rank();
        if (r < 2) return false;
        Shapes out;
        std::vector<std::string> parts;
        const size_t kind = pick(4);
        std::optional<std::pair<size_t, int64_t>> sp;
        if (kind == 2 && !(sp = splittable(s))) return false;
        const std::string shape = fresh("s");
        node("Shape", {t.name}, shape);
        if (kind == 0) {   // keep the first k dims, merge the rest
            const size_t k = 1 + pick(r - 1);
            parts = {slice_of(shape, 0, static_cast<int64_t>(k)), const_i64({-1})};
            for (const Shape& x : s) out.push_back(cat(sub(x, 0, k), Shape{count_of(x, k)}));
        } else if (kind == 1) {   // merge the first k dims, keep the rest
            const size_t k = 1 + pick(r - 1);
            parts = {const_i64({-1}), slice_of(shape, static_cast<int64_t>(k), static_cast<int64_t>(r))};
            for (const Shape& x : s) out.push_back(cat(Shape{count_of(x, 0, k)}, sub(x, k, r)));
        } else if (kind == 2) {   // split dim i into (a, -1)
            const auto [i, a] = *sp;
            if (i > 0) parts.push_back(slice_of(shape, 0, static_cast<int64_t>(i)));
            parts.push_back(const_i64({a, -1}));
            if (i + 1 < r) parts.push_back(slice_of(shape, static_cast<int64_t>(i + 1), static_cast<int64_t>(r)));
            for (const Shape& x : s) out.push_back(cat(cat(sub(x, 0, i), Shape{a, x[i] / a}), sub(x, i + 1, r)));
        } else {   // [dim i, -1] through Gather
            const size_t i = pick(r);
            const std::string gi = fresh("s");
            node("Gather", {shape, const_i64({static_cast<int64_t>(i)})}, gi, "axis=0");
            parts = {gi, const_i64({-1})};
            for (const Shape& x : s) out.push_back(Shape{x[i], count_of(x) / x[i]});
        }
        const std::string target = fresh("s");
        attr_i(node("Concat", parts, target, "axis=0"), "axis", 0);
        const std::string y = fresh("t");
        node("Reshape", {t.name, target}, y);
        add(y, out);
        return true;
    }

    bool transpose(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        if (r < 2) return false;
        std::vector<int64_t> perm(r);
        for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
        for (size_t i = r - 1; i > 0; --i) std::swap(perm[i], perm[pick(i + 1)]);
        bool identity = true;
        for (size_t i = 0; i < r; ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
        if (identity) std::swap(perm[r - 1], perm[r - 2]);
        Shapes out;
        for (const Shape& x : t.shapes) {
            Shape o = x;
            for (size_t i = 0; i < r; ++i) o[i] = x[static_cast<size_t>(perm[i])];
            out.push_back(o);
        }
        const std::string y = fresh("t");
        attr_ints(node("Transpose", {t.name}, y, "perm=" + ints_text(perm)), "perm", perm);
        add(y, out);
        return true;
    }

    bool flatten(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        const size_t axis = pick(r + 1);
        Shapes out;
        for (const Shape& x : t.shapes) out.push_back(Shape{count_of(x, 0, axis), count_of(x, axis)});
        const std::string y = fresh("t");
        attr_i(node("Flatten", {t.name}, y, "axis=" + std::to_string(axis)), "axis", static_cast<int64_t>(axis));
        add(y, out);
        return true;
    }

    bool unsqueeze(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        if (r >= 5) return false;
        const size_t axis = pick(r + 1);
        Shapes out;
        for (const Shape& x : t.shapes) out.push_back(cat(cat(sub(x, 0, axis), Shape{1}), sub(x, axis, r)));
        const std::string y = fresh("t");
        node("Unsqueeze", {t.name, const_i64({static_cast<int64_t>(axis)})}, y);
        add(y, out);
        return true;
    }

    bool squeeze(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        std::vector<size_t> ones;
        for (size_t d = 0; d < r; ++d)
            if (static_dim(t.shapes, d) && t.shapes[0][d] == 1) ones.push_back(d);
        if (ones.empty() || r < 2) return false;
        const size_t axis = ones[pick(ones.size())];
        Shapes out;
        for (const Shape& x : t.shapes) out.push_back(cat(sub(x, 0, axis), sub(x, axis + 1, r)));
        const std::string y = fresh("t");
        node("Squeeze", {t.name, const_i64({static_cast<int64_t>(axis)})}, y);
        add(y, out);
        return true;
    }

    int64_t width() {
        static const int64_t kN[] = {1, 2, 3, 8, 16, 17};
        return kN[pick(6)];
    }

    // A broadcasting Add or Mul with a constant after a matrix product, an
    // activation, or nothing: the post-op chains fusion takes.
    std::string post_ops(std::string y, const Shapes& shapes) {
        const size_t n = pick(4);
        const int64_t cols = shapes[0][shapes[0].rank() - 1];
        for (size_t k = 0; k < n && nodes_ < kMaxNodes + 4; ++k) {
            const size_t kind = pick(4);
            const std::string z = fresh("t");
            if (kind == 0) {   // bias: [N], [1, N] or a scalar
                const size_t b = pick(3);
                const std::string c = b == 0   ? const_f({cols}, -1, 1)
                                      : b == 1 ? const_f({1, cols}, -1, 1)
                                               : const_scalar(uniform(-1, 1));
                node("Add", pick(2) ? std::vector<std::string>{y, c} : std::vector<std::string>{c, y}, z);
            } else if (kind == 1) {
                node("Mul", {y, const_scalar(uniform(0.25f, 2.f))}, z);
            } else {
                y = unary(y, shapes, z);
                continue;
            }
            add(z, shapes);
            y = z;
        }
        return y;
    }

    // An activation of `x` named `z` (several nodes for the Erf form of Gelu
    // and x * Sigmoid(x)); adds the tensor, returns its name.
    std::string unary(const std::string& x, const Shapes& shapes, const std::string& z) {
        static const char* kSimple[] = {"Relu", "Sigmoid", "Tanh"};
        const size_t kind = pick(5);
        if (kind < 3) {
            node(kSimple[kind], {x}, z);
        } else if (kind == 3) {   // Gelu, Erf form
            const std::string d = fresh("g"), e = fresh("g"), a = fresh("g"), m = fresh("g");
            if (pick(2)) node("Div", {x, const_scalar(std::sqrt(2.f))}, d);
            else node("Mul", {x, const_scalar(1.f / std::sqrt(2.f))}, d);
            node("Erf", {d}, e);
            node("Add", {e, const_scalar(1.f)}, a);
            if (pick(2)) {
                node("Mul", {x, a}, m);
                node("Mul", {m, const_scalar(0.5f)}, z);
            } else {
                node("Mul", {x, const_scalar(0.5f)}, m);
                node("Mul", {m, a}, z);
            }
        } else {   // x * Sigmoid(x)
            const std::string sg = fresh("g");
            node("Sigmoid", {x}, sg);
            node("Mul", pick(2) ? std::vector<std::string>{x, sg} : std::vector<std::string>{sg, x}, z);
        }
        add(z, shapes);
        return z;
    }

    bool matmul(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        if (r < 2 || !static_dim(t.shapes, r - 1)) return false;
        const int64_t k = t.shapes[0][r - 1], n = width();
        const float scale = 1.f / std::sqrt(static_cast<float>(k));
        const std::string y = fresh("t");
        node("MatMul", {t.name, const_f({k, n}, -scale, scale)}, y);
        Shapes out;
        for (const Shape& x : t.shapes) out.push_back(cat(sub(x, 0, r - 1), Shape{n}));
        add(y, out);
        post_ops(y, out);
        return true;
    }

    bool gemm(const Tensor& t) {
        if (t.shapes[0].rank() != 2) return false;
        const bool trans_a = static_dim(t.shapes, 0) && pick(4) == 0;
        const size_t kd = trans_a ? 0 : 1;
        if (!static_dim(t.shapes, kd)) return false;
        const int64_t k = t.shapes[0][kd], n = width();
        const bool trans_b = pick(2);
        const float scale = 1.f / std::sqrt(static_cast<float>(k));
        std::vector<std::string> ins = {t.name,
                                        trans_b ? const_f({n, k}, -scale, scale) : const_f({k, n}, -scale, scale)};
        const size_t c = pick(4);
        if (c == 1) ins.push_back(const_f({n}, -1, 1));
        else if (c == 2) ins.push_back(const_f({1, n}, -1, 1));
        else if (c == 3) ins.push_back(const_scalar(uniform(-1, 1)));
        static const float kAlpha[] = {1.f, 0.5f, 2.f};
        const float alpha = kAlpha[pick(3)], beta = kAlpha[pick(3)];
        const std::string y = fresh("t");
        ox::NodeProto* g = node("Gemm", ins, y,
                                "transA=" + std::to_string(trans_a) + " transB=" + std::to_string(trans_b) +
                                    " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta));
        attr_i(g, "transA", trans_a);
        attr_i(g, "transB", trans_b);
        attr_f(g, "alpha", alpha);
        attr_f(g, "beta", beta);
        Shapes out;
        for (const Shape& x : t.shapes) out.push_back(Shape{x[1 - kd], n});
        add(y, out);
        post_ops(y, out);
        return true;
    }

    // t (op) constant, the constant broadcast from the right: each of its
    // dims 1 or t's static dim; a static 1 in t may meet a wider constant
    // dim (the result then grows, which fusion must decline).
    bool binary_const(const Tensor& t) {
        static const char* kOps[] = {"Add", "Mul", "Sub", "Div"};
        const size_t op = pick(4);
        const size_t r = t.shapes[0].rank();
        const size_t cr = pick(r + 1);
        std::vector<int64_t> dims(cr, 1);
        Shapes out = t.shapes;
        for (size_t j = 0; j < cr; ++j) {
            const size_t d = r - cr + j;
            if (!static_dim(t.shapes, d)) continue;
            const int64_t v = t.shapes[0][d];
            if (v == 1 && pick(4) == 0) {
                dims[j] = 3;
                for (Shape& o : out) o[d] = 3;
            } else if (pick(2)) {
                dims[j] = v;
            }
        }
        const std::string c = op == 3 ? const_f(dims, 0.5f, 1.5f) : const_f(dims, -1, 1);
        const std::string y = fresh("t");
        node(kOps[op], op < 3 && pick(2) ? std::vector<std::string>{c, t.name} : std::vector<std::string>{t.name, c},
             y);
        add(y, out);
        return true;
    }

    // t (op) u for a tensor u of the same shapes (a residual connection).
    bool binary_tensor(const Tensor& t) {
        std::vector<std::string> same;
        for (const Tensor& u : pool_)
            if (u.shapes == t.shapes) same.push_back(u.name);
        static const char* kOps[] = {"Add", "Mul", "Sub"};
        const std::string u = same[pick(same.size())];
        const std::string y = fresh("t");
        node(kOps[pick(3)], pick(2) ? std::vector<std::string>{t.name, u} : std::vector<std::string>{u, t.name}, y);
        add(y, t.shapes);
        return true;
    }

    bool activation(const Tensor& t) {
        unary(t.name, t.shapes, fresh("t"));
        return true;
    }

    // Conv, then BatchNormalization and an activation (each maybe): what
    // the channel-affine fold and conv post-ops take.
    bool conv(const Tensor& t) {
        const Shapes& s = t.shapes;
        if (s[0].rank() != 4 || !static_dim(s, 1) || s[0][1] > 17) return false;
        const int64_t c = s[0][1], o = width(), kk = pick(2) ? 3 : 1;
        const int64_t pad = pick(3) ? kk / 2 : 0, stride = pick(4) == 0 ? 2 : 1;
        Shapes out;
        for (const Shape& x : s) {
            const int64_t h = (x[2] + 2 * pad - kk) / stride + 1, w = (x[3] + 2 * pad - kk) / stride + 1;
            if (x[2] + 2 * pad < kk || x[3] + 2 * pad < kk) return false;
            out.push_back(Shape{x[0], o, h, w});
        }
        const float scale = 1.f / std::sqrt(static_cast<float>(c * kk * kk));
        std::vector<std::string> ins = {t.name, const_f({o, c, kk, kk}, -scale, scale)};
        if (pick(2)) ins.push_back(const_f({o}, -1, 1));
        std::string y = fresh("t");
        ox::NodeProto* n = node(
            "Conv", ins, y,
            "kernel=" + std::to_string(kk) + " pads=" + std::to_string(pad) + " strides=" + std::to_string(stride));
        attr_ints(n, "kernel_shape", {kk, kk});
        attr_ints(n, "pads", {pad, pad, pad, pad});
        attr_ints(n, "strides", {stride, stride});
        add(y, out);
        if (pick(3) != 0) {
            const std::string b = fresh("t");
            attr_f(
                node("BatchNormalization",
                     {y, const_f({o}, 0.5f, 1.5f), const_f({o}, -1, 1), const_f({o}, -1, 1), const_f({o}, 0.5f, 2.f)},
                     b, "epsilon=1e-5"),
                "epsilon", 1e-5f);
            add(b, out);
            y = b;
        }
        if (pick(2)) unary(y, out, fresh("t"));
        return true;
    }

    // Concat of two fresh single-user producers of t along an axis, a
    // dynamic one where there is one: in-place concat writes both into its
    // buffer. Along the last axis the second may be a MatMul of another width.
    bool concat(const Tensor& t) {
        const Shapes& s = t.shapes;
        const size_t r = s[0].rank();
        std::vector<size_t> dyn;
        for (size_t d = 0; d < r; ++d)
            if (!static_dim(s, d)) dyn.push_back(d);
        const size_t axis = !dyn.empty() && pick(3) != 0 ? dyn[pick(dyn.size())] : pick(r);
        std::vector<std::string> parts;
        std::vector<Shapes> part_shapes;
        for (int k = 0; k < 2; ++k) {
            const size_t kind = pick(4);
            const std::string z = fresh("t");
            if (kind == 0 && axis + 1 == r && static_dim(s, r - 1)) {
                const int64_t kin = s[0][r - 1], n = width();
                const float scale = 1.f / std::sqrt(static_cast<float>(kin));
                node("MatMul", {t.name, const_f({kin, n}, -scale, scale)}, z);
                Shapes o;
                for (const Shape& x : s) o.push_back(cat(sub(x, 0, r - 1), Shape{n}));
                add(z, o);
                part_shapes.push_back(o);
            } else if (kind == 1) {
                node("Mul", {t.name, const_scalar(uniform(-2, 2))}, z);
                add(z, s);
                part_shapes.push_back(s);
            } else if (kind == 2) {   // t itself: a producer with other users
                parts.push_back(t.name);
                part_shapes.push_back(s);
                continue;
            } else {
                unary(t.name, s, z);
                part_shapes.push_back(s);
            }
            parts.push_back(z);
        }
        Shapes out = part_shapes[0];
        for (size_t i = 0; i < out.size(); ++i) out[i][axis] += part_shapes[1][i][axis];
        const std::string y = fresh("t");
        attr_i(node("Concat", parts, y, "axis=" + std::to_string(axis)), "axis", static_cast<int64_t>(axis));
        add(y, out);
        return true;
    }

    bool softmax(const Tensor& t) {
        const int64_t r = static_cast<int64_t>(t.shapes[0].rank());
        const int64_t axis = static_cast<int64_t>(pick(static_cast<size_t>(2 * r))) - r;
        const std::string y = fresh("t");
        attr_i(node("Softmax", {t.name}, y, "axis=" + std::to_string(axis)), "axis", axis);
        add(y, t.shapes);
        return true;
    }

    bool layernorm(const Tensor& t) {
        const size_t r = t.shapes[0].rank();
        size_t first = r;   // the first axis from which every dim is static
        while (first > 0 && static_dim(t.shapes, first - 1)) --first;
        if (first == r) return false;
        const size_t axis = first + pick(r - first);
        std::vector<int64_t> dims;
        for (size_t d = axis; d < r; ++d) dims.push_back(t.shapes[0][d]);
        std::vector<std::string> ins = {t.name, const_f(dims, 0.5f, 1.5f)};
        if (pick(2)) ins.push_back(const_f(dims, -1, 1));
        const std::string y = fresh("t");
        ox::NodeProto* n = node("LayerNormalization", ins, y, "axis=" + std::to_string(axis));
        attr_i(n, "axis", static_cast<int64_t>(axis));
        attr_f(n, "epsilon", 1e-5f);
        add(y, t.shapes);
        return true;
    }

    Input& in_;
    ox::ModelProto model_;
    ox::GraphProto* g_ = nullptr;
    std::vector<Tensor> pool_;
    std::map<std::string, std::string> consts_;   // initializer name -> short text
    std::string text_;
    size_t nodes_ = 0, names_ = 0;
    uint64_t seed_ = 0;
};

// ---- running -----------------------------------------------------------------

struct Run {
    std::string unsupported;                        // the importer's reason
    std::string error;                              // a dynrt::Error's text
    size_t stage = 0;                               // where it failed: 0 import, k + 1 shape set k
    std::vector<std::vector<HostTensor>> outputs;   // per shape set, per graph output
    Coverage coverage;
};

Run run_graph(const Decoded& d, const Engines& e, const EnginePtr& engine, const PassOptions& passes) {
    Run r;
    const std::string file = "fuzz_graph.onnx";
    try {
        const onnx::OnnxModel model = onnx::parse_model(d.model_bytes, file);
        onnx::ImportOptions io;
        io.dynamic_inputs = d.dynamic_inputs;
        io.passes = passes.passes;
        const onnx::ImportedGraph g = onnx::import_graph(e.registry, model, io);
        if (!g.unsupported.empty()) {
            r.unsupported = g.unsupported;
            return r;
        }
        r.coverage.import_folded = g.folded;
        r.coverage.import_fused = g.fused;
        r.coverage.folded_nodes = g.program->folded().size();
        NetworkOptions network = passes.network;
        apply_passes(passes.passes, nullptr, &network);
        onnx::GraphRunner runner(g, engine, network, file);
        for (size_t s = 0; s < d.sets.size(); ++s) {
            r.stage = s + 1;
            for (size_t k = 0; k < d.input_names.size(); ++k) runner.set_input(d.input_names[k], d.sets[s][k]);
            runner.infer();
            std::vector<HostTensor> outs;
            for (size_t k = 0; k < g.outputs.size(); ++k) outs.push_back(runner.output(k));
            r.outputs.push_back(std::move(outs));
            const Counters& c = runner.request().last_run().totals;
            r.coverage.views += c.views;
            r.coverage.fused_runs += c.fused_runs;
            r.coverage.unfused_runs += c.unfused_runs;
            r.coverage.concat_inplace += c.concat_inplace;
            r.coverage.fake_aligned += c.fake_aligned;
            r.coverage.pool_hits += c.pool_hits;
        }
    } catch (const Error& ex) {
        r.error = ex.what();
    }
    return r;
}

std::string stage_text(size_t stage) {
    return stage == 0 ? std::string("import") : "shape set " + std::to_string(stage - 1);
}

// Empty when the two runs agree (rtol 1e-3; atol 1e-4 times the reference
// output's largest magnitude, at least 1).
std::string compare(const Decoded& d, const Run& test, const Run& ref) {
    if (!test.unsupported.empty() || !ref.unsupported.empty()) {
        if (!test.unsupported.empty() && !ref.unsupported.empty()) return {};
        return "only one import says unsupported: " + (test.unsupported.empty() ? ref.unsupported : test.unsupported);
    }
    if (!test.error.empty() || !ref.error.empty()) {
        if (!test.error.empty() && !ref.error.empty() && test.stage == ref.stage) return {};
        if (!test.error.empty() && !ref.error.empty())
            return "both runs fail, at different places: under test at " + stage_text(test.stage) + ": " + test.error +
                   "\nreference at " + stage_text(ref.stage) + ": " + ref.error;
        const Run& bad = test.error.empty() ? ref : test;
        return std::string(test.error.empty() ? "only the reference run" : "only the run under test") + " fails, at " +
               stage_text(bad.stage) + ": " + bad.error;
    }
    for (size_t s = 0; s < ref.outputs.size(); ++s) {
        for (size_t k = 0; k < ref.outputs[s].size(); ++k) {
            const HostTensor& a = test.outputs[s][k];
            const HostTensor& b = ref.outputs[s][k];
            const std::string where = "shape set " + std::to_string(s) + ", output '" + d.output_names[k] + "'";
            if (a.shape() != b.shape() || a.dtype() != b.dtype())
                return where + ": under test " + a.layout().to_string() + ", reference " + b.layout().to_string();
            double magnitude = 1;
            for (size_t i = 0; i < b.count(); ++i)
                if (std::isfinite(b.get_as_double(i))) magnitude = std::max(magnitude, std::fabs(b.get_as_double(i)));
            size_t bad = 0, first = 0;
            double worst = 0;
            for (size_t i = 0; i < b.count(); ++i) {
                const double x = a.get_as_double(i), y = b.get_as_double(i);
                if (std::isnan(x) && std::isnan(y)) continue;
                const double err = std::fabs(x - y);
                if (!(err <= 1e-4 * magnitude + 1e-3 * std::fabs(y)) && x != y) {
                    if (bad++ == 0) first = i;
                    if (!(err <= worst)) worst = err;
                }
            }
            if (bad > 0) {
                std::ostringstream m;
                m << where << " " << b.layout().to_string() << ": " << bad << " of " << b.count()
                  << " elements differ, max error " << worst << "; first at flat index " << first << ": under test "
                  << a.get_as_double(first) << ", reference " << b.get_as_double(first);
                return m.str();
            }
        }
    }
    return {};
}

// bisect() tries every pass of the switchboard off alone, then the optimised
// impls off (the cpu reference impls alone).
std::string bisect(const Decoded& d, const Engines& e, const Run& ref) {
    std::string agree;
    for (const PassInfo& pass : passes()) {
        PassOptions p = all_passes_on();
        p.passes.set(pass.name, false);
        if (compare(d, run_graph(d, e, e.under_test, p), ref).empty()) agree += std::string(" ") + pass.name;
    }
    PassOptions impls = all_passes_on();
    impls.network.host_reference_only = true;
    if (compare(d, run_graph(d, e, e.under_test, impls), ref).empty()) agree += " host_reference_only";
    return agree.empty() ? "no single switch turned off makes the runs agree"
                         : "the runs agree with any one of these off:" + agree;
}

}   // namespace

Result check(const uint8_t* data, size_t size, const Engines& engines, bool bisect_finding) {
    Input in(data, size);
    const Decoded d = Builder(in).build();
    Result res;
    std::ostringstream g;
    g << d.text;
    for (size_t s = 0; s < d.sets.size(); ++s) {
        g << "shape set " << s << ":";
        for (size_t k = 0; k < d.input_names.size(); ++k)
            g << " " << d.input_names[k] << "=" << shape_text(d.sets[s][k].shape());
        g << "\n";
    }
    res.graph = g.str();
    const Run test = run_graph(d, engines, engines.under_test, all_passes_on());
    const Run ref = run_graph(d, engines, engines.reference, all_passes_off());
    res.ran = test.unsupported.empty() && ref.unsupported.empty();
    res.both_failed = !test.error.empty() && !ref.error.empty() && test.stage == ref.stage;
    res.coverage = test.coverage;
    res.finding = compare(d, test, ref);
    if (!res.finding.empty() && bisect_finding) res.finding += "\n" + bisect(d, engines, ref);
    return res;
}

}   // namespace dynrt::fuzz::graph

// libFuzzer (and replay_graph): the cpu engine under test. A finding prints
// the graph, its shape sets and what differs, then aborts so that libFuzzer
// keeps the input. DYNRT_FUZZ_GRAPH_PRINT=1 prints every graph.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace dynrt::fuzz::graph;
    static const Engines engines = [] {
        Engines e;
        e.registry = dynrt::fuzz::registry();
        dynrt::EngineConfig cfg;
        cfg.device = "cpu";
        cfg.threads = 1;   // one harness per core (scripts/fuzz.sh)
        e.under_test = e.registry->create_engine("cpu", cfg);
        e.reference = e.registry->create_engine("cpu", cfg);
        return e;
    }();
    const Result r = check(data, size, engines, true);
    if (std::getenv("DYNRT_FUZZ_GRAPH_PRINT")) std::fprintf(stderr, "%s", r.graph.c_str());
    if (!r.finding.empty()) {
        std::fprintf(stderr, "fuzz_graph: FINDING\n%s%s\n", r.graph.c_str(), r.finding.c_str());
        std::abort();
    }
    return 0;
}
