// einsum: sums of products of the inputs' elements over labelled axes (ONNX
// Einsum). The equation names each input's axes with letters, one term per
// input ("bij,bjk->bik"): axes that share a letter are walked together (within
// one term: a diagonal, "ii->i"), the output keeps the letters after "->" in
// that order and sums over every other one. Without "->" the output is the
// ellipsis dims, then the letters used exactly once, in ASCII order. "..."
// stands for the dims a term does not name, numpy-broadcast across the inputs
// (a 1 stretches); an explicit output without "..." sums over them too.
//
// Every impl runs the same plan: each distinct label (a letter, or one dim of
// the ellipsis) becomes an id, the output's first in output order; an input's
// stride for a label is the sum of the strides of its axes carrying it (0 for
// an axis of extent 1, which broadcasts), so an output element is a loop over
// the other labels' extents adding the product of one element per input.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "einsum_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "einsum";
constexpr char kEllipsis = '.';   // a term's "..." once parsed

// ---- the equation -----------------------------------------------------------

// One term per input and the output's, each a string of letters with "..."
// kept as one kEllipsis character.
struct Equation {
    std::string text;
    std::vector<std::string> inputs;
    std::string output;
};

Error equation_error(const std::string& text, const std::string& why) {
    ErrorContext where;
    where.op = kOp;
    where.field = "equation";
    return Error("einsum equation '" + text + "': " + why, where);
}

// "term 'ij' (input 1)" or "the output term 'ji'", for messages.
std::string term_name(const std::string& term, size_t input, size_t inputs) {
    std::string shown;
    for (char ch : term) shown += ch == kEllipsis ? std::string("...") : std::string(1, ch);
    return input < inputs ? "term '" + shown + "' (input " + std::to_string(input) + ")"
                          : "the output term '" + shown + "'";
}

// One term of `raw` (whitespace removed), checked: letters and at most one "...".
std::string parse_term(const std::string& text, const std::string& raw, size_t input, size_t inputs) {
    std::string term;
    for (size_t i = 0; i < raw.size(); ++i) {
        const char ch = raw[i];
        if (std::isalpha(static_cast<unsigned char>(ch))) {
            term += ch;
        } else if (raw.compare(i, 3, "...") == 0 && term.find(kEllipsis) == std::string::npos) {
            term += kEllipsis;
            i += 2;
        } else {
            const std::string where = input < inputs ? "term '" + raw + "' (input " + std::to_string(input) + ")"
                                                     : "the output term '" + raw + "'";
            throw equation_error(text, where + " has '" + std::string(1, ch) + "' at position " + std::to_string(i) +
                                           "; a term holds letters a-z, A-Z and at most one '...'");
        }
    }
    return term;
}

// Without "->": the ellipsis (when an input has one), then the letters used
// exactly once over all terms, in ASCII order.
std::string implicit_output(const std::vector<std::string>& terms) {
    std::map<char, int> uses;
    bool ellipsis = false;
    for (const std::string& t : terms)
        for (char ch : t) (ch == kEllipsis ? (void)(ellipsis = true) : (void)++uses[ch]);
    std::string out = ellipsis ? std::string(1, kEllipsis) : std::string();
    for (const auto& [ch, n] : uses)
        if (n == 1) out += ch;
    return out;
}

Equation parse_equation(const std::string& text, size_t inputs) {
    std::string s;
    for (char ch : text)
        if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
    Equation e;
    e.text = text;
    const size_t arrow = s.find("->");
    if (arrow != std::string::npos && s.find("->", arrow + 2) != std::string::npos)
        throw equation_error(text, "has more than one '->'");
    const std::string lhs = s.substr(0, arrow);
    std::vector<std::string> raw;
    for (size_t from = 0;;) {
        const size_t comma = lhs.find(',', from);
        raw.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (raw.size() != inputs)
        throw equation_error(
            text, "has " + std::to_string(raw.size()) + " input terms for " + std::to_string(inputs) + " inputs");
    for (size_t k = 0; k < inputs; ++k) e.inputs.push_back(parse_term(text, raw[k], k, inputs));
    if (arrow == std::string::npos) {
        e.output = implicit_output(e.inputs);
        return e;
    }
    e.output = parse_term(text, s.substr(arrow + 2), inputs, inputs);
    for (char ch : e.output) {
        if (ch == kEllipsis) continue;
        if (std::count(e.output.begin(), e.output.end(), ch) > 1)
            throw equation_error(text,
                                 term_name(e.output, inputs, inputs) + " names '" + std::string(1, ch) + "' twice");
        if (std::none_of(e.inputs.begin(), e.inputs.end(),
                         [ch](const std::string& t) { return t.find(ch) != std::string::npos; }))
            throw equation_error(text, term_name(e.output, inputs, inputs) + " names '" + std::string(1, ch) +
                                           "', which no input term has");
    }
    return e;
}

// ---- the plan: label ids per axis -------------------------------------------

struct Plan {
    size_t labels = 0;   // distinct labels; ids [0, out_rank) are the output's, in order
    size_t out_rank = 0;
    std::vector<std::vector<size_t>> axes;   // per input, per axis: its label id
    std::vector<bool> in_ellipsis;           // per label: one dim of the ellipsis (broadcasts)
    std::vector<std::string> names;          // per label, for messages
};

Plan make_plan(const Equation& e, const std::vector<size_t>& ranks) {
    const size_t n = e.inputs.size();
    // Dims each input's ellipsis covers; the ellipsis has the most of them.
    std::vector<size_t> covered(n, 0);
    size_t ell = 0;
    for (size_t k = 0; k < n; ++k) {
        const std::string& t = e.inputs[k];
        const bool has = t.find(kEllipsis) != std::string::npos;
        const size_t letters = t.size() - (has ? 1 : 0);
        if (has ? ranks[k] < letters : ranks[k] != letters)
            throw equation_error(e.text, term_name(t, k, n) + " names " + std::to_string(letters) + " axes" +
                                             (has ? " besides '...'" : "") + ", input " + std::to_string(k) +
                                             " has rank " + std::to_string(ranks[k]));
        covered[k] = has ? ranks[k] - letters : 0;
        ell = std::max(ell, covered[k]);
    }
    Plan p;
    std::map<char, size_t> letter_id;
    std::vector<size_t> ell_id(ell, SIZE_MAX);
    const auto add = [&p](const std::string& name, bool ellipsis) {
        p.names.push_back(name);
        p.in_ellipsis.push_back(ellipsis);
        return p.labels++;
    };
    // The labels of `t` in axis order (an ellipsis of `dims` dims as the last `dims` of the full one).
    const auto walk = [&](const std::string& t, size_t dims) {
        std::vector<size_t> ids;
        for (char ch : t) {
            if (ch != kEllipsis) {
                if (!letter_id.count(ch)) letter_id[ch] = add("'" + std::string(1, ch) + "'", false);
                ids.push_back(letter_id[ch]);
                continue;
            }
            for (size_t d = ell - dims; d < ell; ++d) {
                if (ell_id[d] == SIZE_MAX) ell_id[d] = add("dim " + std::to_string(d) + " of '...'", true);
                ids.push_back(ell_id[d]);
            }
        }
        return ids;
    };
    p.out_rank = walk(e.output, ell).size();
    for (size_t k = 0; k < n; ++k) p.axes.push_back(walk(e.inputs[k], covered[k]));
    return p;
}

// The extent of every label over the input shapes: a letter's axes must agree
// (a static mismatch is an error), an ellipsis dim broadcasts numpy-style.
std::vector<Dimension> label_dims(const Equation& e, const Plan& p, const std::vector<PartialShape>& shapes) {
    std::vector<Dimension> dims(p.labels, Dimension(1));
    std::vector<std::string> seen(p.labels);   // where the label's dim was first taken from
    for (size_t k = 0; k < shapes.size(); ++k) {
        for (size_t a = 0; a < p.axes[k].size(); ++a) {
            const size_t l = p.axes[k][a];
            const Dimension& d = shapes[k][a];
            const std::string here = term_name(e.inputs[k], k, shapes.size()) + " axis " + std::to_string(a) + " of " +
                                     shapes[k].to_string();
            Dimension& cur = dims[l];
            const bool first = seen[l].empty();
            const bool ones = p.in_ellipsis[l] && d.is_static() && d.get_length() == 1;
            if (first || (p.in_ellipsis[l] && cur.is_static() && cur.get_length() == 1)) {
                if (!ones || first) cur = d, seen[l] = here;
                continue;
            }
            if (ones) continue;
            if (d.is_static() && cur.is_static() && d.get_length() != cur.get_length())
                throw equation_error(e.text, "label " + p.names[l] + " has dim " + cur.to_string() + " at " + seen[l] +
                                                 " and " + d.to_string() + " at " + here);
            if (cur.is_dynamic() && d.is_static()) cur = d, seen[l] = here;
        }
    }
    return dims;
}

bool is_einsum_type(DataType t) { return is_floating(t) || t == DataType::i32 || t == DataType::i64; }

std::vector<Layout> infer_einsum(const ShapeInferContext& ctx) {
    const DataType t = ctx.inputs.at(0).dtype;
    std::vector<size_t> ranks;
    std::vector<PartialShape> shapes;
    for (size_t k = 0; k < ctx.inputs.size(); ++k) {
        const Layout& in = ctx.inputs[k];
        if (in.dtype != t || !is_einsum_type(t))
            throw Error("input " + std::to_string(k) + " is " + in.to_string() + "; einsum takes inputs of one type, " +
                            "f32, f16, f64, i32 or i64 (input 0 is " + ctx.inputs[0].to_string() + ")",
                        node_context(ctx.node, kOp, "inputs"));
        ranks.push_back(in.shape.rank());
        shapes.push_back(in.shape);
    }
    const Equation e = parse_equation(ctx.attrs.get_string("equation"), ctx.inputs.size());
    const Plan p = make_plan(e, ranks);
    const std::vector<Dimension> dims = label_dims(e, p, shapes);
    return {Layout(PartialShape(std::vector<Dimension>(dims.begin(), dims.begin() + p.out_rank)), t)};
}

// ---- runtime plan: extents and strides ---------------------------------------

struct Walk {
    std::vector<size_t> extent;                // per label
    std::vector<std::vector<size_t>> stride;   // per input, per label (elements)
};

Walk make_walk(const Attributes& attrs, const std::vector<Shape>& shapes) {
    std::vector<size_t> ranks;
    std::vector<PartialShape> partial;
    for (const Shape& s : shapes) {
        ranks.push_back(s.rank());
        partial.emplace_back(std::vector<Dimension>(s.begin(), s.end()));
    }
    const Equation e = parse_equation(attrs.get_string("equation"), shapes.size());
    const Plan p = make_plan(e, ranks);
    Walk w;
    for (const Dimension& d : label_dims(e, p, partial)) w.extent.push_back(static_cast<size_t>(d.get_length()));
    for (size_t k = 0; k < shapes.size(); ++k) {
        const std::vector<size_t> axis_stride = strides_of(shapes[k]);
        std::vector<size_t> s(p.labels, 0);
        for (size_t a = 0; a < shapes[k].rank(); ++a)
            if (shapes[k][a] != 1) s[p.axes[k][a]] += axis_stride[a];
        w.stride.push_back(std::move(s));
    }
    return w;
}

// ---- reference ------------------------------------------------------------

// Integers multiply and add wrapping (two's complement), as the device does.
int64_t mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
double mul(double a, double b) { return a * b; }
double add(double a, double b) { return a + b; }

// out[o] = sum over the labels not in the output of the product of one element per input.
template <typename V>
std::vector<V> contract(const Walk& w, size_t out_rank, const std::vector<std::vector<V>>& in) {
    const size_t labels = w.extent.size(), n = in.size();
    size_t out_count = 1, inner = 1;
    for (size_t l = 0; l < labels; ++l) (l < out_rank ? out_count : inner) *= w.extent[l];
    std::vector<V> out(out_count, V(0));
    std::vector<size_t> off(n), coord(labels);
    for (size_t o = 0; o < out_count; ++o) {
        std::fill(off.begin(), off.end(), 0);
        for (size_t l = out_rank, rest = o; l-- > 0; rest /= w.extent[l])
            for (size_t k = 0; k < n; ++k) off[k] += rest % w.extent[l] * w.stride[k][l];
        std::fill(coord.begin(), coord.end(), 0);
        for (size_t i = 0; i < inner; ++i) {
            V prod(1);
            for (size_t k = 0; k < n; ++k) prod = mul(prod, in[k][off[k]]);
            out[o] = add(out[o], prod);
            for (size_t l = labels; l-- > out_rank;) {   // odometer over the summed labels
                if (++coord[l] < w.extent[l]) {
                    for (size_t k = 0; k < n; ++k) off[k] += w.stride[k][l];
                    break;
                }
                coord[l] = 0;
                for (size_t k = 0; k < n; ++k) off[k] -= w.stride[k][l] * (w.extent[l] - 1);
            }
        }
    }
    return out;
}

void einsum_kernel(HostCall& call) {
    std::vector<Shape> shapes;
    for (size_t k = 0; k < call.num_inputs(); ++k) shapes.push_back(call.in_shape(k));
    const Walk w = make_walk(call.attrs(), shapes);
    const size_t out_rank = call.out_shape(0).rank();
    if (is_floating(call.out_type(0))) {
        std::vector<std::vector<double>> in(shapes.size());
        for (size_t k = 0; k < shapes.size(); ++k)
            for (size_t i = 0; i < shapes[k].count(); ++i) in[k].push_back(call.get(k, i));
        const std::vector<double> out = contract(w, out_rank, in);
        for (size_t o = 0; o < out.size(); ++o) call.set(0, o, out[o]);
        return;
    }
    std::vector<std::vector<int64_t>> in;
    for (size_t k = 0; k < shapes.size(); ++k) in.push_back(call.get_ints(k));
    const std::vector<int64_t> out = contract(w, out_rank, in);
    for (size_t o = 0; o < out.size(); ++o) {
        if (call.out_type(0) == DataType::i64) call.out<int64_t>(0)[o] = out[o];
        else call.out<int32_t>(0)[o] = static_cast<int32_t>(out[o]);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;      // dims the shape info and JIT constants hold
constexpr size_t kOclMaxInputs = 16;   // kernel arguments are bounded

// The kernel's argument list, each input's label per right-aligned dim and
// the product of the inputs (einsum.cl says how they are used).
JitDefines einsum_defines(const KernelParams& p, bool) {
    std::vector<size_t> ranks;
    for (const Layout& l : p.inputs) ranks.push_back(l.shape.rank());
    const Plan plan = make_plan(parse_equation(p.attrs->get_string("equation"), p.inputs.size()), ranks);
    const DataType t = p.outputs.at(0).dtype;
    JitDefines d{jit_data_f16(t),
                 {"ACC_T", is_floating(t) ? (t == DataType::f64 ? "double" : "FLOAT_ACC") : "ulong"},
                 {"STORE_T", is_floating(t) ? "ACC_T" : "long"},
                 {"USES_F64", t == DataType::f64 ? "1" : "0"},
                 {"NUM_INPUTS", std::to_string(p.inputs.size())},
                 {"NUM_LABELS", std::to_string(std::max<size_t>(plan.labels, 1))},
                 {"OUT_LABELS", std::to_string(plan.out_rank)},
                 {"SUM_LABELS", std::to_string(plan.labels)}};
    std::string args, setup, product = "((ACC_T)1)";
    for (size_t k = 0; k < p.inputs.size(); ++k) {
        const std::string ks = std::to_string(k);
        args += "__global const INPUT" + ks + "_TYPE* input" + ks + ", ";
        setup += "SETUP_INPUT(" + ks + ") ";
        product += " * GET(" + ks + ")";
        std::string labels = "{";
        for (size_t j = 0; j < kOclMaxRank; ++j) {
            const size_t lead = kOclMaxRank - ranks[k];
            labels += (j ? ", " : "") + (j < lead ? std::string("-1") : std::to_string(plan.axes[k][j - lead]));
        }
        d.emplace_back("AXIS_LABELS_" + ks, labels + "}");
    }
    d.insert(d.end(), {{"EINSUM_INPUT_ARGS", args}, {"EINSUM_SETUP", setup}, {"EINSUM_PRODUCT", product}});
    return d;
}

OclKernelSpec einsum_ocl_spec() {
    OclKernelSpec spec;
    spec.source = einsum_cl;
    spec.kernel_name = "einsum_ref";
    spec.defines = einsum_defines;
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.size() > kOclMaxInputs)
        return std::to_string(p.inputs.size()) + " inputs run on the host impl (the kernel takes at most " +
               std::to_string(kOclMaxInputs) + ")";
    if (p.outputs.at(0).shape.rank() > kOclMaxRank)
        return "output rank " + std::to_string(p.outputs.at(0).shape.rank()) + " is above " +
               std::to_string(kOclMaxRank);
    return check_max_rank(p, kOclMaxRank);
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_einsum(ImportContext& c) {
    if (!c.only_attrs({"equation"})) return false;
    if (!c.has("equation")) return c.unsupported("Einsum has no equation");
    c.set("equation", c.s("equation", ""));
    c.use_all_inputs();
    return true;
}

void register_einsum(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp, "Sums of products over labelled axes (ONNX Einsum)", 1, SIZE_MAX,
                              {attr_string("equation", std::nullopt, {},
                                           "terms of axis letters per input, ',' between, '->' then the output's; "
                                           "'...' for unnamed dims")},
                              infer_einsum);
    def.imports = {onnx_rule("Einsum", 1, kAnyInputs, onnx_einsum, "`equation`, every input")};
    reg.add_op(def);
    const std::vector<DataType> types{DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64};
    add_host_impls(reg, kOp, einsum_kernel, host_options(types));
    add_ocl_impls(reg, kOp, einsum_ocl_spec(), ocl_options(types, check_ocl));
}

}   // namespace

DYNRT_MODULE("einsum", register_einsum)
