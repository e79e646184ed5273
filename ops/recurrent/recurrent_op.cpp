// recurrent: ONNX's LSTM, GRU and RNN as one op whose `cell` attribute picks
// the cell (the three share inputs, directions, sequence lengths, layouts and
// outputs; only the gate math differs). This file holds the definition,
// shape inference, the reference impl and the ONNX import rules; the cpu
// engine's loop is in recurrent_cpu.cpp, the OpenCL impls in recurrent_ocl.cpp.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "recurrent_call.hpp"
#include "recurrent_impls.hpp"

namespace {

using namespace dynrt;
using recurrent::Config;
using recurrent::Kind;

constexpr const char* kOp = "recurrent";

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, kOp, field));
}

// Checks one dim against an expected one (when both are static).
void expect_dim(const ShapeInferContext& ctx, const std::string& field, const Layout& l, size_t axis,
                const Dimension& want, const std::string& what) {
    const Dimension& got = l.shape[axis];
    if (got.is_static() && want.is_static() && got.get_length() != want.get_length())
        throw node_error(ctx, field,
                         field + " " + l.shape.to_string() + ": dim " + std::to_string(axis) + " is " +
                             std::to_string(got.get_length()) + ", " + what + " is " +
                             std::to_string(want.get_length()));
}

void expect_rank(const ShapeInferContext& ctx, const std::string& field, const Layout& l, size_t rank,
                 const std::string& dims) {
    if (l.shape.rank() != rank)
        throw node_error(ctx, field,
                         field + " " + l.to_string() + " must have rank " + std::to_string(rank) + " " + dims);
}

// k * d; a product past 2^62 is refused (a fuzzed or corrupt shape).
Dimension times(const ShapeInferContext& ctx, const Dimension& d, int64_t k) {
    if (!d.is_static()) return Dimension();
    if (d.get_length() > (int64_t{1} << 62) / k)
        throw node_error(ctx, "hidden_size", "hidden_size " + std::to_string(d.get_length()) + " is too large");
    return Dimension(d.get_length() * k);
}

// The first static one of the dims, else the first.
Dimension known(std::initializer_list<Dimension> dims) {
    for (const Dimension& d : dims)
        if (d.is_static()) return d;
    return *dims.begin();
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    Config c;
    try {
        c = recurrent::config_of(ctx.attrs, ctx.inputs.size());
    } catch (const Error& e) {
        throw e.with_context(node_context(ctx.node, kOp, e.context().field));
    }
    const Layout& x = ctx.inputs[0];
    const Layout& w = ctx.inputs[1];
    const Layout& r = ctx.inputs[2];
    if (!is_floating(x.dtype)) throw node_error(ctx, "X", "recurrent takes a floating-point X, got " + x.to_string());
    expect_rank(ctx, "X", x, 3,
                c.layout == 0 ? "[seq_length, batch_size, input_size]" : "[batch_size, seq_length, input_size]");
    expect_rank(ctx, "W", w, 3, "[num_directions, gates * hidden_size, input_size]");
    expect_rank(ctx, "R", r, 3, "[num_directions, gates * hidden_size, hidden_size]");
    for (const auto& [field, l] : {std::pair<const char*, const Layout*>{"W", &w}, {"R", &r}})
        if (l->dtype != x.dtype)
            throw node_error(ctx, field,
                             std::string(field) + " " + l->to_string() + " must have the type of X " + x.to_string());
    const auto g = static_cast<int64_t>(c.gates);
    const Dimension dirs(static_cast<int64_t>(c.dirs));
    // hidden_size: the attribute, else R's last dim, else W's or R's gate rows / gates.
    Dimension hidden = c.hidden > 0 ? Dimension(c.hidden) : r.shape[2];
    if (!hidden.is_static()) {
        const Dimension rows = known({w.shape[1], r.shape[1]});
        if (rows.is_static()) hidden = Dimension(rows.get_length() / g);
    }
    const Dimension gh = times(ctx, hidden, g);
    const std::string gates = std::to_string(g) + " * hidden_size";
    expect_dim(ctx, "W", w, 0, dirs, "num_directions");
    expect_dim(ctx, "W", w, 1, gh, gates);
    if (w.shape[1].is_static() && w.shape[1].get_length() % g != 0)
        throw node_error(ctx, "W", "W " + w.shape.to_string() + ": dim 1 is not " + gates);
    expect_dim(ctx, "W", w, 2, x.shape[2], "X's input_size");
    expect_dim(ctx, "R", r, 0, dirs, "num_directions");
    expect_dim(ctx, "R", r, 1, gh, gates);
    expect_dim(ctx, "R", r, 2, hidden, "hidden_size");
    Dimension batch = c.layout == 0 ? x.shape[1] : x.shape[0];
    const Dimension seq = c.layout == 0 ? x.shape[0] : x.shape[1];
    if (c.in_b >= 0) {
        const Layout& b = ctx.inputs[static_cast<size_t>(c.in_b)];
        expect_rank(ctx, "B", b, 2, "[num_directions, 2 * gates * hidden_size]");
        if (b.dtype != x.dtype) throw node_error(ctx, "B", "B " + b.to_string() + " must have the type of X");
        expect_dim(ctx, "B", b, 0, dirs, "num_directions");
        expect_dim(ctx, "B", b, 1, times(ctx, gh, 2), "2 * " + gates);
    }
    if (c.in_seq >= 0) {
        const Layout& s = ctx.inputs[static_cast<size_t>(c.in_seq)];
        if (s.shape.rank() != 1 || (s.dtype != DataType::i32 && s.dtype != DataType::i64))
            throw node_error(ctx, "sequence_lens",
                             "sequence_lens " + s.to_string() + " must be a 1-D i32 or i64 tensor [batch_size]");
        expect_dim(ctx, "sequence_lens", s, 0, batch, "batch_size");
        batch = known({batch, s.shape[0]});
    }
    const bool batch_first = c.layout == 1;
    for (const auto& [field, index] : {std::pair<const char*, int>{"initial_h", c.in_h0}, {"initial_c", c.in_c0}}) {
        if (index < 0) continue;
        const Layout& h = ctx.inputs[static_cast<size_t>(index)];
        expect_rank(
            ctx, field, h, 3,
            batch_first ? "[batch_size, num_directions, hidden_size]" : "[num_directions, batch_size, hidden_size]");
        if (h.dtype != x.dtype)
            throw node_error(ctx, field, std::string(field) + " " + h.to_string() + " must have the type of X");
        expect_dim(ctx, field, h, batch_first ? 1 : 0, dirs, "num_directions");
        expect_dim(ctx, field, h, batch_first ? 0 : 1, batch, "batch_size");
        expect_dim(ctx, field, h, 2, hidden, "hidden_size");
        batch = known({batch, h.shape[batch_first ? 0 : 1]});
    }
    if (c.in_p >= 0) {
        const Layout& p = ctx.inputs[static_cast<size_t>(c.in_p)];
        expect_rank(ctx, "P", p, 2, "[num_directions, 3 * hidden_size]");
        if (p.dtype != x.dtype) throw node_error(ctx, "P", "P " + p.to_string() + " must have the type of X");
        expect_dim(ctx, "P", p, 0, dirs, "num_directions");
        expect_dim(ctx, "P", p, 1, times(ctx, hidden, 3), "3 * hidden_size");
    }
    const Layout y(batch_first ? PartialShape{batch, seq, dirs, hidden} : PartialShape{seq, dirs, batch, hidden},
                   x.dtype);
    const Layout state(batch_first ? PartialShape{batch, dirs, hidden} : PartialShape{dirs, batch, hidden}, x.dtype);
    if (c.kind == Kind::lstm) return {y, state, state};
    return {y, state};
}

// 2 FLOPs per multiply-add of the input projection and of the recurrence.
OpCost cost(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs, const Attributes&) {
    OpCost k = io_bytes_cost(inputs, outputs);
    const Shape x = inputs.at(0).get_shape(), w = inputs.at(1).get_shape(), r = inputs.at(2).get_shape();
    k.flops =
        2.0 * static_cast<double>(x[0] * x[1]) * static_cast<double>(w[0] * w[1]) * static_cast<double>(w[2] + r[2]);
    return k;
}

// ---- reference ------------------------------------------------------------
//
// Direction by direction, batch entry by batch entry, step by step as the
// ONNX equations read, every sum in double.
void reference(HostCall& call) {
    const Config c = recurrent::config_of(call.attrs(), call.num_inputs());
    const recurrent::Dims g = recurrent::dims_of(c, call.in_shape(0), call.in_shape(2));
    const size_t H = g.hidden, I = g.input, GH = g.gh();
    std::vector<int64_t> lens(g.batch, static_cast<int64_t>(g.seq));
    if (c.in_seq >= 0) lens = call.get_ints(static_cast<size_t>(c.in_seq));
    for (size_t b = 0; b < g.batch; ++b)
        if (lens[b] < 0 || lens[b] > static_cast<int64_t>(g.seq))
            throw recurrent::length_error(call.node(), lens[b], b, g.seq);
    auto in = [&](int index, size_t k) { return index < 0 ? 0.0 : call.get(static_cast<size_t>(index), k); };
    const bool lstm = c.kind == Kind::lstm;
    std::vector<double> h(H), cell(H), hn(H), cn(H), reset_h(H);
    for (size_t d = 0; d < g.dirs; ++d) {
        const recurrent::Activation& f = c.act(d, 0);
        const recurrent::Activation& gg = c.act(d, c.per_dir > 1 ? 1 : 0);
        const recurrent::Activation& hh = c.act(d, c.per_dir > 2 ? 2 : 0);
        // W row `row` (gate * H + unit) times X's row, plus both biases of the row.
        auto wx = [&](size_t row, size_t xr) {
            double s = in(c.in_b, d * 2 * GH + row) + in(c.in_b, d * 2 * GH + GH + row);
            for (size_t k = 0; k < I; ++k) s += call.get(1, (d * GH + row) * I + k) * call.get(0, xr * I + k);
            return s;
        };
        auto rh = [&](size_t row, const std::vector<double>& v) {
            double s = 0.0;
            for (size_t k = 0; k < H; ++k) s += call.get(2, (d * GH + row) * H + k) * v[k];
            return s;
        };
        for (size_t b = 0; b < g.batch; ++b) {
            const auto len = static_cast<size_t>(lens[b]);
            for (size_t j = 0; j < H; ++j) {
                h[j] = in(c.in_h0, g.state_at(d, b) + j);
                cell[j] = in(c.in_c0, g.state_at(d, b) + j);
            }
            for (size_t s = 0; s < len; ++s) {
                const size_t t = c.reversed(d) ? len - 1 - s : s;
                const size_t xr = g.x_row(t, b);
                if (c.kind == Kind::gru && !c.linear_before_reset)   // r (.) H_t-1, read by every unit's h gate
                    for (size_t k = 0; k < H; ++k)
                        reset_h[k] =
                            recurrent::apply(f, recurrent::clip_to(wx(H + k, xr) + rh(H + k, h), c.clip)) * h[k];
                for (size_t j = 0; j < H; ++j) {
                    if (c.kind == Kind::rnn) {
                        hn[j] = recurrent::apply(f, recurrent::clip_to(wx(j, xr) + rh(j, h), c.clip));
                    } else if (lstm) {
                        auto peep = [&](size_t k, double v) { return in(c.in_p, d * 3 * H + k * H + j) * v; };
                        const double i =
                            recurrent::apply(f, recurrent::clip_to(wx(j, xr) + rh(j, h) + peep(0, cell[j]), c.clip));
                        const double fo =
                            c.input_forget
                                ? 1.0 - i
                                : recurrent::apply(
                                      f, recurrent::clip_to(wx(2 * H + j, xr) + rh(2 * H + j, h) + peep(2, cell[j]),
                                                            c.clip));
                        const double cc =
                            recurrent::apply(gg, recurrent::clip_to(wx(3 * H + j, xr) + rh(3 * H + j, h), c.clip));
                        cn[j] = fo * cell[j] + i * cc;
                        const double o = recurrent::apply(
                            f, recurrent::clip_to(wx(H + j, xr) + rh(H + j, h) + peep(1, cn[j]), c.clip));
                        hn[j] = o * recurrent::apply(hh, cn[j]);
                    } else {   // gru
                        const double z = recurrent::apply(f, recurrent::clip_to(wx(j, xr) + rh(j, h), c.clip));
                        double a = 0.0;
                        if (c.linear_before_reset) {
                            const double r =
                                recurrent::apply(f, recurrent::clip_to(wx(H + j, xr) + rh(H + j, h), c.clip));
                            // Rbh inside the reset: wx() added it outside, so move it.
                            const double rbh = in(c.in_b, d * 2 * GH + GH + 2 * H + j);
                            a = wx(2 * H + j, xr) - rbh + r * (rh(2 * H + j, h) + rbh);
                        } else {
                            a = wx(2 * H + j, xr) + rh(2 * H + j, reset_h);
                        }
                        const double n = recurrent::apply(gg, recurrent::clip_to(a, c.clip));
                        hn[j] = (1.0 - z) * n + z * h[j];
                    }
                }
                h = hn;
                if (lstm) cell = cn;
                for (size_t j = 0; j < H; ++j) call.set(0, g.y_at(t, d, b) + j, h[j]);
            }
            for (size_t t = len; t < g.seq; ++t)
                for (size_t j = 0; j < H; ++j) call.set(0, g.y_at(t, d, b) + j, 0.0);
            for (size_t j = 0; j < H; ++j) {
                call.set(1, g.state_at(d, b) + j, h[j]);
                if (lstm) call.set(2, g.state_at(d, b) + j, cell[j]);
            }
        }
    }
}

// ---- ONNX -----------------------------------------------------------------

// The shared part of the three rules: attributes, directions, layout,
// optional inputs by slot, activations named as ONNX spells them.
bool onnx_common(ImportContext& c, const std::string& cell, std::initializer_list<const char*> known) {
    if (!c.only_attrs(known)) return false;
    if (c.opset() < 7 && c.has("output_sequence"))
        return c.unsupported("output_sequence (opset < 7): Y is always given");
    c.set("cell", cell);
    // An unknown direction is left to the schema, which names it.
    c.set("direction", c.s("direction", "forward"));
    c.set("hidden_size", c.i("hidden_size", 0));
    if (c.has("clip")) {
        const double clip = c.f("clip", 0.0);
        if (!(clip > 0.0)) return c.unsupported("clip " + std::to_string(clip) + " (not a positive threshold)");
        c.set("clip", clip);
    }
    c.set("layout", c.i("layout", 0));
    if (const ImportAttr* a = c.attr("activations")) {
        if (a->kind != ImportAttr::Kind::Strings)
            return c.unsupported("activations of type " + std::string(ImportAttr::kind_name(a->kind)) + " (STRINGS)");
        std::string names;
        for (const std::string& s : a->strings) {
            bool listed = false;
            for (const char* n : {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                  "HardSigmoid", "Elu", "Softsign", "Softplus"})
                listed = listed || s == n;
            if (!listed) return c.unsupported("activation '" + s + "' (not one of the functions the ONNX spec lists)");
            names += (names.empty() ? "" : ",") + s;
        }
        c.set("activations", names);
    }
    c.set("activation_alpha", c.floats("activation_alpha"));
    c.set("activation_beta", c.floats("activation_beta"));
    std::vector<int64_t> slots;
    for (size_t k = 3; k < 8; ++k)
        if (c.present(k)) slots.push_back(static_cast<int64_t>(k));
    c.set("optional_inputs", slots);
    c.use_inputs({0, 1, 2, 3, 4, 5, 6, 7});
    return true;
}

bool onnx_lstm(ImportContext& c) {
    if (!onnx_common(c, "lstm",
                     {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                      "input_forget", "layout", "output_sequence"}))
        return false;
    c.set("input_forget", c.i("input_forget", 0));
    return true;
}

bool onnx_gru(ImportContext& c) {
    if (!onnx_common(c, "gru",
                     {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                      "linear_before_reset", "layout", "output_sequence"}))
        return false;
    c.set("linear_before_reset", c.i("linear_before_reset", 0));
    return true;
}

bool onnx_rnn(ImportContext& c) {
    return onnx_common(c, "rnn",
                       {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size",
                        "layout", "output_sequence"});
}

void register_recurrent(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "One layer of LSTM, GRU or a simple RNN over a sequence (ONNX LSTM, GRU, RNN)", 3, 8,
        {attr_string("cell", std::nullopt, {"lstm", "gru", "rnn"}, "the cell: lstm (gates i o f c), gru (z r h), rnn"),
         attr_string("direction", std::string("forward"), {"forward", "reverse", "bidirectional"},
                     "forward, reverse or bidirectional (forward then reverse)"),
         attr_int("hidden_size", 0, "hidden units (0: R's last dim)"),
         attr_string("activations", std::string(""), {},
                     "comma-separated ONNX names, per direction (empty: Sigmoid,Tanh,Tanh / Sigmoid,Tanh / Tanh)"),
         attr_floats("activation_alpha", std::vector<double>{}, "alpha of the activations that take one, in order"),
         attr_floats("activation_beta", std::vector<double>{}, "beta of the activations that take one, in order"),
         attr_float("clip", 0.0, "pre-activations clamped to [-clip, clip] (0: none)"),
         attr_int("linear_before_reset", 0, "gru: 1 applies the reset gate after the h gate's recurrence product"),
         attr_int("input_forget", 0, "lstm: 1 couples the forget gate to the input gate (f = 1 - i)"),
         attr_int("layout", 0, "0: X [seq, batch, input]; 1: X [batch, seq, input] (and the outputs batch first)"),
         attr_ints(
             "optional_inputs", std::vector<int64_t>{},
             "ONNX slot of each input after R (3 B, 4 sequence_lens, 5 initial_h, 6 initial_c, 7 P); empty: in order")},
        infer);
    def.num_outputs = 3;
    def.output_count = [](const Attributes& a) { return a.get_string("cell") == "lstm" ? size_t{3} : size_t{2}; };
    def.cost = cost;
    const char* common =
        "`direction`, `hidden_size`, `activations` (the spec's list) with alpha/beta, `clip`, `layout`";
    def.imports = {onnx_rule("LSTM", 3, 8, onnx_lstm,
                             std::string(common) + ", `input_forget`; B, sequence_lens, initial_h, initial_c, P", 3),
                   onnx_rule("GRU", 3, 6, onnx_gru,
                             std::string(common) + ", `linear_before_reset`; B, sequence_lens, initial_h", 2),
                   onnx_rule("RNN", 3, 6, onnx_rnn, std::string(common) + "; B, sequence_lens, initial_h", 2)};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options({DataType::f32, DataType::f16}));
    recurrent::register_cpu_impls(reg);
    recurrent::register_ocl_impls(reg);
}

}   // namespace

DYNRT_MODULE("recurrent", register_recurrent)
