// ONNX node -> dynrt op and attributes. Every attribute a mapping does not
// understand makes the node unsupported (with the reason), so nothing passes
// by ignoring an attribute.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "dynrt/error.hpp"
#include "onnx_import.hpp"

namespace dynrt::onnx {

namespace {

struct Ctx {
    const OnnxNode& node;
    int64_t opset;
    const std::vector<MapInput>& in;
    Mapped out;

    bool has(const std::string& a) const { return node.attrs.count(a) != 0; }
    int64_t i(const std::string& a, int64_t def) const {
        auto it = node.attrs.find(a);
        return it == node.attrs.end() ? def : it->second.i;
    }
    double f(const std::string& a, double def) const {
        auto it = node.attrs.find(a);
        return it == node.attrs.end() ? def : it->second.f;
    }
    std::string s(const std::string& a, const std::string& def) const {
        auto it = node.attrs.find(a);
        return it == node.attrs.end() ? def : it->second.s;
    }
    std::vector<int64_t> ints(const std::string& a) const {
        auto it = node.attrs.find(a);
        return it == node.attrs.end() ? std::vector<int64_t>{} : it->second.ints;
    }
    bool present(size_t k) const { return k < in.size() && in[k].present; }
    size_t count_present() const {
        size_t n = 0;
        for (const MapInput& m : in) n += m.present ? 1 : 0;
        return n;
    }
    // Unsupported unless every attribute of the node is in `known`.
    bool only_attrs(std::initializer_list<const char*> known) {
        for (const auto& kv : node.attrs) {
            if (std::none_of(known.begin(), known.end(), [&](const char* k) { return kv.first == k; })) {
                out.unsupported = "attribute '" + kv.first + "' is not supported";
                return false;
            }
        }
        return true;
    }
    bool unsupported(const std::string& why) {
        out.unsupported = why;
        return false;
    }
    void use_inputs(std::initializer_list<size_t> ks) {
        for (size_t k : ks)
            if (present(k)) out.inputs.push_back(k);
    }
};

using MapFn = std::function<bool(Ctx&)>;

MapFn unary(const std::string& func) {
    return [func](Ctx& c) {
        if (!c.only_attrs({})) return false;
        c.out.op = "activation";
        c.out.attrs.set("func", func);
        c.use_inputs({0});
        return true;
    };
}

MapFn with_alpha(const std::string& func, double def) {
    return [func, def](Ctx& c) {
        if (!c.only_attrs({"alpha"})) return false;
        c.out.op = "activation";
        c.out.attrs.set("func", func);
        c.out.attrs.set("alpha", c.f("alpha", def));
        c.use_inputs({0});
        return true;
    };
}

// Add, Sub ... and the variadic Min/Max/Sum with two inputs (one input is the
// identity).
MapFn binary(const std::string& mode, bool variadic) {
    return [mode, variadic](Ctx& c) {
        if (c.has("broadcast") || c.has("axis"))
            return c.unsupported("legacy broadcast attributes (opset < 7) are not supported");
        if (!c.only_attrs({})) return false;
        const size_t n = c.count_present();
        if (variadic && n == 1) {
            c.out.op = "activation";
            c.out.attrs.set("func", std::string("identity"));
            c.use_inputs({0});
            return true;
        }
        if (n != 2) return c.unsupported(std::to_string(n) + " inputs (dynrt eltwise takes 2)");
        if (c.in[0].layout.dtype != c.in[1].layout.dtype)
            return c.unsupported(std::string("inputs of different types (") + to_string(c.in[0].layout.dtype) + ", " +
                                 to_string(c.in[1].layout.dtype) + "); dynrt eltwise takes one type");
        c.out.op = "eltwise";
        c.out.attrs.set("mode", mode);
        c.use_inputs({0, 1});
        return true;
    };
}

bool map_gemm(Ctx& c) {
    if (c.has("broadcast") && c.i("broadcast", 0) == 0)
        return c.unsupported("Gemm with broadcast=0 (opset < 7) is not supported");
    if (!c.only_attrs({"alpha", "beta", "transA", "transB", "broadcast"})) return false;
    for (size_t k : {0, 1})
        if (c.in[k].layout.shape.rank() != 2) return c.unsupported("Gemm input " + std::to_string(k) + " is not 2-D");
    c.out.op = "gemm";
    c.out.attrs.set("transpose_a", c.i("transA", 0) != 0);
    c.out.attrs.set("transpose_b", c.i("transB", 0) != 0);
    c.out.attrs.set("alpha", c.f("alpha", 1.0));
    c.out.attrs.set("beta", c.f("beta", 1.0));
    c.use_inputs({0, 1, 2});
    return true;
}

bool map_matmul(Ctx& c) {
    if (!c.only_attrs({})) return false;
    for (size_t k : {0, 1})
        if (c.in[k].layout.shape.rank() < 2)
            return c.unsupported("MatMul with a 1-D operand (input " + std::to_string(k) + ") is not supported");
    c.out.op = "gemm";
    c.use_inputs({0, 1});
    return true;
}

bool map_conv(Ctx& c) {
    if (!c.only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})) return false;
    const PartialShape& x = c.in[0].layout.shape;
    const PartialShape& w = c.in[1].layout.shape;
    if (x.rank() != 4 || w.rank() != 4)
        return c.unsupported("only 2-D convolution (4-D input and weights) is supported, the input has rank " +
                             std::to_string(x.rank()));
    const std::vector<int64_t> strides = c.has("strides") ? c.ints("strides") : std::vector<int64_t>{1, 1};
    const std::vector<int64_t> dil = c.has("dilations") ? c.ints("dilations") : std::vector<int64_t>{1, 1};
    if (strides.size() != 2 || dil.size() != 2) return c.unsupported("strides/dilations not of length 2");
    if (c.has("kernel_shape")) {
        const auto ks = c.ints("kernel_shape");
        if (ks.size() != 2 || !w[2].is_static() || !w[3].is_static() || ks[0] != w[2].get_length() ||
            ks[1] != w[3].get_length())
            return c.unsupported("kernel_shape differs from the weights' spatial dims");
    }
    std::vector<int64_t> begin{0, 0}, end{0, 0};
    const std::string auto_pad = c.s("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
        if (c.has("pads")) {
            const auto p = c.ints("pads");
            if (p.size() != 4) return c.unsupported("pads not of length 4");
            begin = {p[0], p[1]};
            end = {p[2], p[3]};
        }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        // The pads depend on the input's spatial dims: computed from the static
        // shape the node is imported with (fixed for that shape).
        for (size_t a = 0; a < 2; ++a) {
            if (!x[2 + a].is_static() || !w[2 + a].is_static())
                return c.unsupported("auto_pad " + auto_pad + " needs static spatial dims");
            const int64_t in = x[2 + a].get_length(), k = w[2 + a].get_length();
            const int64_t out = (in + strides[a] - 1) / strides[a];
            const int64_t total = std::max<int64_t>(0, (out - 1) * strides[a] + (k - 1) * dil[a] + 1 - in);
            const int64_t small = total / 2, big = total - small;
            begin[a] = auto_pad == "SAME_UPPER" ? small : big;
            end[a] = auto_pad == "SAME_UPPER" ? big : small;
        }
    } else if (auto_pad != "VALID") {
        return c.unsupported("auto_pad '" + auto_pad + "' is not supported");
    }
    c.out.op = "convolution";
    c.out.attrs.set("strides", strides);
    c.out.attrs.set("dilations", dil);
    c.out.attrs.set("pads_begin", begin);
    c.out.attrs.set("pads_end", end);
    c.out.attrs.set("groups", c.i("group", 1));
    c.use_inputs({0, 1, 2});
    return true;
}

bool map_concat(Ctx& c) {
    if (!c.only_attrs({"axis"})) return false;
    if (!c.has("axis")) return c.unsupported("Concat without axis");
    c.out.op = "concat";
    c.out.attrs.set("axis", c.i("axis", 0));
    for (size_t k = 0; k < c.in.size(); ++k)
        if (c.present(k)) c.out.inputs.push_back(k);
    return true;
}

bool map_shape(Ctx& c) {
    if (!c.only_attrs({"start", "end"})) return false;
    // start/end select a slice of the dims; dynrt's shape_of gives them all, so
    // only selections that cover every dim map.
    const int64_t rank = static_cast<int64_t>(c.in[0].layout.shape.rank());
    auto norm = [&](int64_t v) {
        if (v < 0) v += rank;
        return std::min(std::max<int64_t>(v, 0), rank);
    };
    const int64_t start = norm(c.i("start", 0));
    const int64_t end = c.has("end") ? norm(c.i("end", rank)) : rank;
    if (start != 0 || end != rank)
        return c.unsupported("Shape with start/end selecting dims [" + std::to_string(start) + ", " +
                             std::to_string(end) + ") of " + std::to_string(rank) + " (dynrt shape_of gives all dims)");
    c.out.op = "shape_of";
    c.out.attrs.set("output_type", std::string("i64"));
    c.use_inputs({0});
    return true;
}

bool map_cumsum(Ctx& c) {
    if (!c.only_attrs({"exclusive", "reverse"})) return false;
    if (!c.present(1) || !c.in[1].value)
        return c.unsupported("CumSum's axis input has no known value (dynrt takes the axis as an attribute)");
    const auto axis = c.in[1].value->to_int64();
    if (axis.size() != 1) return c.unsupported("CumSum's axis input is not a single value");
    c.out.op = "cumsum";
    c.out.attrs.set("axis", axis[0]);
    c.out.attrs.set("exclusive", c.i("exclusive", 0) != 0);
    c.out.attrs.set("reverse", c.i("reverse", 0) != 0);
    c.use_inputs({0});
    return true;
}

bool map_gather(Ctx& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.out.op = "gather";
    c.out.attrs.set("axis", c.i("axis", 0));
    c.use_inputs({0, 1});
    return true;
}

bool map_reshape(Ctx& c) {
    if (c.opset < 5 || c.has("shape")) {
        if (!c.only_attrs({"shape", "consumed_inputs"})) return false;
        c.out.op = "reshape";
        c.out.attrs.set("shape", c.ints("shape"));
        c.use_inputs({0});
        return true;
    }
    if (!c.only_attrs({"allowzero"})) return false;
    c.out.op = "reshape";
    // allowzero=1: a 0 in the target is an empty dim, not a copy.
    c.out.attrs.set("special_zero", c.i("allowzero", 0) == 0);
    c.use_inputs({0, 1});
    return true;
}

bool map_softmax(Ctx& c) {
    if (!c.only_attrs({"axis"})) return false;
    const int64_t rank = static_cast<int64_t>(c.in[0].layout.shape.rank());
    if (c.opset >= 13) {
        c.out.attrs.set("axis", c.i("axis", -1));
    } else {
        // Before opset 13 the input is coerced to 2-D at `axis` and normalised
        // over the flattened trailing dims: the same as dynrt's softmax only when
        // `axis` is the last dim.
        int64_t axis = c.i("axis", 1);
        if (axis < 0) axis += rank;
        if (axis != rank - 1)
            return c.unsupported("Softmax opset " + std::to_string(c.opset) + " with axis " + std::to_string(axis) +
                                 " of rank " + std::to_string(rank) + " normalises over flattened dims");
        c.out.attrs.set("axis", int64_t{-1});
    }
    c.out.op = "softmax";
    c.use_inputs({0});
    return true;
}

bool map_clip(Ctx& c) {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (c.opset < 11) {
        if (!c.only_attrs({"min", "max"})) return false;
        lo = c.f("min", lo);
        hi = c.f("max", hi);
    } else {
        if (!c.only_attrs({})) return false;
        for (size_t k : {1, 2}) {
            if (!c.present(k)) continue;
            if (!c.in[k].value || c.in[k].value->count() != 1)
                return c.unsupported("Clip's min/max input has no known single value");
            (k == 1 ? lo : hi) = c.in[k].value->get_as_double(0);
        }
    }
    if (lo > hi) return c.unsupported("Clip with min > max");
    c.out.op = "activation";
    c.out.attrs.set("func", std::string("clamp"));
    c.out.attrs.set("alpha", lo);
    c.out.attrs.set("beta", hi);
    c.use_inputs({0});
    return true;
}

bool map_gelu(Ctx& c) {
    if (!c.only_attrs({"approximate"})) return false;
    const std::string a = c.s("approximate", "none");
    if (a != "none" && a != "tanh") return c.unsupported("Gelu approximate='" + a + "'");
    c.out.op = "activation";
    c.out.attrs.set("func", std::string(a == "tanh" ? "gelu_tanh" : "gelu"));
    c.use_inputs({0});
    return true;
}

// Equal, Less ... (compare), And, Or, Xor (logical): one dynrt op with a mode.
MapFn with_mode(const std::string& op, const std::string& mode, size_t inputs) {
    return [op, mode, inputs](Ctx& c) {
        if (c.has("broadcast") || c.has("axis"))
            return c.unsupported("legacy broadcast attributes (opset < 7) are not supported");
        if (!c.only_attrs({})) return false;
        c.out.op = op;
        c.out.attrs.set("mode", mode);
        if (inputs == 1) c.use_inputs({0});
        else c.use_inputs({0, 1});
        return true;
    };
}

// Squeeze / Unsqueeze: axes as an attribute (opset < 13) or as input 1.
MapFn with_axes(const std::string& op) {
    return [op](Ctx& c) {
        if (!c.only_attrs({"axes"})) return false;
        c.out.op = op;
        if (c.has("axes")) {
            c.out.attrs.set("axes", c.ints("axes"));
            c.use_inputs({0});
        } else {
            c.use_inputs({0, 1});
        }
        return true;
    };
}

bool map_flatten(Ctx& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.out.op = "flatten";
    c.out.attrs.set("axis", c.i("axis", 1));
    c.use_inputs({0});
    return true;
}

bool map_transpose(Ctx& c) {
    if (!c.only_attrs({"perm"})) return false;
    c.out.op = "transpose";
    if (c.has("perm")) c.out.attrs.set("perm", c.ints("perm"));
    c.use_inputs({0});
    return true;
}

bool map_where(Ctx& c) {
    if (!c.only_attrs({})) return false;
    c.out.op = "where";
    c.use_inputs({0, 1, 2});
    return true;
}

struct Entry {
    std::string target;
    MapFn fn;
    // ONNX inputs the op takes: the first min_inputs must be given (present),
    // at most max_inputs may be listed. Checked before the mapping indexes them.
    size_t min_inputs = 1;
    size_t max_inputs = 1;
};

constexpr size_t kAny = std::numeric_limits<size_t>::max();

const std::map<std::string, Entry>& table() {
    static const std::map<std::string, Entry> kTable = {
        {"Abs", {"activation", unary("abs")}},
        {"Add", {"eltwise", binary("add", false), 2, 2}},
        {"And", {"logical", with_mode("logical", "and", 2), 2, 2}},
        {"Clip", {"activation", map_clip, 1, 3}},
        {"Concat", {"concat", map_concat, 1, kAny}},
        {"Conv", {"convolution", map_conv, 2, 3}},
        {"CumSum", {"cumsum", map_cumsum, 2, 2}},
        {"Div", {"eltwise", binary("div", false), 2, 2}},
        {"Elu", {"activation", with_alpha("elu", 1.0)}},
        {"Equal", {"compare", with_mode("compare", "equal", 2), 2, 2}},
        {"Exp", {"activation", unary("exp")}},
        {"Flatten", {"flatten", map_flatten}},
        {"Gather", {"gather", map_gather, 2, 2}},
        {"Gelu", {"activation", map_gelu}},
        {"Gemm", {"gemm", map_gemm, 2, 3}},
        {"Greater", {"compare", with_mode("compare", "greater", 2), 2, 2}},
        {"GreaterOrEqual", {"compare", with_mode("compare", "greater_equal", 2), 2, 2}},
        {"HardSwish", {"activation", unary("hswish")}},
        {"Identity", {"activation", unary("identity")}},
        {"LeakyRelu", {"activation", with_alpha("leaky_relu", 0.01)}},
        {"Less", {"compare", with_mode("compare", "less", 2), 2, 2}},
        {"LessOrEqual", {"compare", with_mode("compare", "less_equal", 2), 2, 2}},
        {"Log", {"activation", unary("log")}},
        {"MatMul", {"gemm", map_matmul, 2, 2}},
        {"Max", {"eltwise", binary("max", true), 1, kAny}},
        {"Min", {"eltwise", binary("min", true), 1, kAny}},
        {"Mul", {"eltwise", binary("mul", false), 2, 2}},
        {"Neg", {"activation", unary("neg")}},
        {"Not", {"logical", with_mode("logical", "not", 1)}},
        {"Or", {"logical", with_mode("logical", "or", 2), 2, 2}},
        {"Pow", {"eltwise", binary("pow", false), 2, 2}},
        {"Relu", {"activation", unary("relu")}},
        {"Reshape", {"reshape", map_reshape, 1, 2}},
        {"Shape", {"shape_of", map_shape}},
        {"Sigmoid", {"activation", unary("sigmoid")}},
        {"Softmax", {"softmax", map_softmax}},
        {"Softplus", {"activation", unary("softplus")}},
        {"Squeeze", {"squeeze", with_axes("squeeze"), 1, 2}},
        {"Sqrt", {"activation", unary("sqrt")}},
        {"Sub", {"eltwise", binary("sub", false), 2, 2}},
        {"Sum", {"eltwise", binary("add", true), 1, kAny}},
        {"Tanh", {"activation", unary("tanh")}},
        {"Transpose", {"transpose", map_transpose}},
        {"Unsqueeze", {"unsqueeze", with_axes("unsqueeze"), 1, 2}},
        {"Where", {"where", map_where, 3, 3}},
        {"Xor", {"logical", with_mode("logical", "xor", 2), 2, 2}},
    };
    return kTable;
}

}   // namespace

std::vector<std::string> mapped_onnx_ops() {
    std::vector<std::string> out;
    for (const auto& kv : table()) out.push_back(kv.first);
    return out;
}

std::string target_op(const std::string& onnx_op) {
    auto it = table().find(onnx_op);
    return it == table().end() ? std::string() : it->second.target;
}

Mapped map_node(const OnnxNode& node, int64_t opset, const std::vector<MapInput>& inputs) {
    auto it = table().find(node.op_type);
    if (!node.domain.empty() && node.domain != "ai.onnx") it = table().end();
    if (it == table().end()) {
        ErrorContext c;
        c.op = node.op_type;
        c.node = node.name.empty() ? node.op_type : node.name;
        throw Error(
            "unknown ONNX op '" + (node.domain.empty() ? "" : node.domain + ".") + node.op_type + "' (domain '" +
                (node.domain.empty() ? std::string("ai.onnx") : node.domain) + "', opset " + std::to_string(opset) +
                "; the importer maps, in domain 'ai.onnx': " +
                [] {
                    std::string s;
                    for (const auto& n : mapped_onnx_ops()) s += (s.empty() ? "" : ", ") + n;
                    return s;
                }() +
                ")",
            c);
    }
    Ctx c{node, opset, inputs, {}};
    if (node.outputs.size() != 1) {
        c.out.unsupported =
            std::to_string(node.outputs.size()) + " outputs (dynrt's " + it->second.target + " has one)";
        return c.out;
    }
    const Entry& entry = it->second;
    // Input counts before any mapping indexes `inputs`: a MatMul with one input
    // is malformed ONNX, an error naming the node and the op.
    const size_t given = std::min(node.inputs.size(), inputs.size());
    auto arity = [&] {
        if (entry.max_inputs == kAny) return std::to_string(entry.min_inputs) + " or more inputs";
        if (entry.min_inputs == entry.max_inputs)
            return std::to_string(entry.min_inputs) + (entry.min_inputs == 1 ? " input" : " inputs");
        return std::to_string(entry.min_inputs) + ".." + std::to_string(entry.max_inputs) + " inputs";
    };
    auto fail = [&](const std::string& why) {
        ErrorContext ec;
        ec.op = node.op_type;
        ec.node = node.name.empty() ? node.op_type : node.name;
        ec.field = "input";
        throw Error(
            "ONNX node '" + ec.node + "' (" + node.op_type + ") " + why + "; " + node.op_type + " takes " + arity(),
            ec);
    };
    if (given < entry.min_inputs || node.inputs.size() > entry.max_inputs)
        fail("has " + std::to_string(node.inputs.size()) + (node.inputs.size() == 1 ? " input" : " inputs"));
    for (size_t k = 0; k < entry.min_inputs; ++k)
        if (!inputs[k].present) fail("has no input " + std::to_string(k) + " (it is empty or unknown)");
    if (!it->second.fn(c)) {
        c.out.op.clear();
        c.out.inputs.clear();
    }
    return c.out;
}

}   // namespace dynrt::onnx
