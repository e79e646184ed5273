// recurrent: reading a node's attributes into a Config (recurrent_call.hpp).
#include "recurrent_call.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"

namespace recurrent {

namespace {

using dynrt::attr_error;

struct ActInfo {
    Act f;
    const char* name;
    bool takes_alpha, takes_beta;
    double alpha, beta;   // ONNX's defaults
};

const ActInfo kActs[] = {
    {Act::relu, "Relu", false, false, 0.0, 0.0},
    {Act::tanh, "Tanh", false, false, 0.0, 0.0},
    {Act::sigmoid, "Sigmoid", false, false, 0.0, 0.0},
    {Act::affine, "Affine", true, true, 1.0, 0.0},
    {Act::leaky_relu, "LeakyRelu", true, false, 0.01, 0.0},
    {Act::thresholded_relu, "ThresholdedRelu", true, false, 1.0, 0.0},
    {Act::scaled_tanh, "ScaledTanh", true, true, 1.0, 1.0},
    {Act::hard_sigmoid, "HardSigmoid", true, true, 0.2, 0.5},
    {Act::elu, "Elu", true, false, 1.0, 0.0},
    {Act::softsign, "Softsign", false, false, 0.0, 0.0},
    {Act::softplus, "Softplus", false, false, 0.0, 0.0},
};

std::string lower(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

const ActInfo& act_info(const std::string& name) {
    for (const ActInfo& a : kActs)
        if (lower(a.name) == lower(name)) return a;
    std::string known;
    for (const ActInfo& a : kActs) known += std::string(known.empty() ? "" : ", ") + a.name;
    throw attr_error("activations", "unknown activation '" + name + "' (the ONNX functions: " + known + ")");
}

std::vector<std::string> split_names(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s + ",") {
        if (ch == ',') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else if (!std::isspace(static_cast<unsigned char>(ch))) {
            cur += ch;
        }
    }
    return out;
}

// Activations with alpha and beta consumed in order by the functions that
// take them (a function past the end of the list takes ONNX's default).
std::vector<Activation> read_acts(const dynrt::Attributes& a, const Config& c) {
    std::vector<std::string> names = split_names(a.get_string("activations"));
    if (names.empty()) {
        const char* defaults[] = {"Sigmoid", "Tanh", "Tanh"};
        if (c.kind == Kind::rnn) names = {"Tanh"};
        else names.assign(defaults, defaults + c.per_dir);
    }
    if (names.size() == c.per_dir && c.dirs == 2) {   // one set for both directions
        const std::vector<std::string> one = names;
        names.insert(names.end(), one.begin(), one.end());
    }
    if (names.size() != c.per_dir * c.dirs)
        throw attr_error("activations", "activations '" + a.get_string("activations") +
                                            "': " + std::to_string(names.size()) + " given, the cell takes " +
                                            std::to_string(c.per_dir) + " per direction (" + std::to_string(c.dirs) +
                                            " directions)");
    const std::vector<double> alphas = a.get_floats("activation_alpha"), betas = a.get_floats("activation_beta");
    size_t ia = 0, ib = 0;
    std::vector<Activation> out;
    for (const std::string& n : names) {
        const ActInfo& info = act_info(n);
        Activation act{info.f, info.alpha, info.beta};
        if (info.takes_alpha && ia < alphas.size()) act.alpha = alphas[ia++];
        if (info.takes_beta && ib < betas.size()) act.beta = betas[ib++];
        out.push_back(act);
    }
    if (ia < alphas.size() || ib < betas.size())
        throw attr_error(ia < alphas.size() ? "activation_alpha" : "activation_beta",
                         "more activation_alpha / activation_beta values (" + std::to_string(alphas.size()) + ", " +
                             std::to_string(betas.size()) + ") than the activations take (" + std::to_string(ia) +
                             ", " + std::to_string(ib) + ")");
    return out;
}

}   // namespace

const char* act_name(Act f) {
    for (const ActInfo& a : kActs)
        if (a.f == f) return a.name;
    return "?";
}

Config config_of(const dynrt::Attributes& a, size_t num_inputs) {
    Config c;
    const std::string cell = a.get_string("cell");
    c.kind = cell == "rnn" ? Kind::rnn : cell == "gru" ? Kind::gru : Kind::lstm;
    c.gates = c.kind == Kind::rnn ? 1 : c.kind == Kind::gru ? 3 : 4;
    c.per_dir = c.kind == Kind::rnn ? 1 : c.kind == Kind::gru ? 2 : 3;
    const std::string direction = a.get_string("direction");
    c.dirs = direction == "bidirectional" ? 2 : 1;
    c.reverse = direction == "reverse";
    c.hidden = a.get_int("hidden_size");
    if (c.hidden < 0) throw attr_error("hidden_size", "hidden_size " + std::to_string(c.hidden) + " is negative");
    c.clip = a.get_float("clip");
    if (c.clip < 0.0 || std::isnan(c.clip))
        throw attr_error("clip", "clip " + std::to_string(c.clip) + ": a threshold > 0 (0: no clip)");
    c.linear_before_reset = a.get_int("linear_before_reset") != 0;
    if (c.linear_before_reset && c.kind != Kind::gru)
        throw attr_error("linear_before_reset", "linear_before_reset is a gru attribute (cell " + cell + ")");
    c.input_forget = a.get_int("input_forget") != 0;
    if (c.input_forget && c.kind != Kind::lstm)
        throw attr_error("input_forget", "input_forget is an lstm attribute (cell " + cell + ")");
    c.layout = a.get_int("layout");
    if (c.layout != 0 && c.layout != 1)
        throw attr_error("layout", "layout " + std::to_string(c.layout) + ": 0 (sequence first) or 1 (batch first)");
    c.acts = read_acts(a, c);

    std::vector<int64_t> slots = a.get_ints("optional_inputs");
    if (num_inputs < 3 || num_inputs > 8)
        throw attr_error("inputs",
                         "recurrent takes 3 to 8 inputs (X, W, R, then B, sequence_lens, initial_h, "
                         "initial_c, P), got " +
                             std::to_string(num_inputs));
    if (slots.empty())
        for (size_t k = 3; k < num_inputs; ++k) slots.push_back(static_cast<int64_t>(k));
    if (slots.size() != num_inputs - 3)
        throw attr_error("optional_inputs", "optional_inputs " + dynrt::ints_to_string(slots) + " names " +
                                                std::to_string(slots.size()) + " inputs, the node has " +
                                                std::to_string(num_inputs - 3) + " after X, W, R");
    int64_t last = 2;
    for (size_t k = 0; k < slots.size(); ++k) {
        const int64_t s = slots[k];
        if (s <= last || s > kP)
            throw attr_error("optional_inputs", "optional_inputs " + dynrt::ints_to_string(slots) +
                                                    ": ONNX slots 3 (B) to 7 (P), increasing");
        if ((s == kInitialC || s == kP) && c.kind != Kind::lstm)
            throw attr_error("optional_inputs",
                             std::string(s == kP ? "P" : "initial_c") + " is an lstm input (cell " + cell + ")");
        last = s;
        const int index = static_cast<int>(3 + k);
        switch (s) {
            case kB: c.in_b = index; break;
            case kSeqLens: c.in_seq = index; break;
            case kInitialH: c.in_h0 = index; break;
            case kInitialC: c.in_c0 = index; break;
            default: c.in_p = index; break;
        }
    }
    return c;
}

Dims dims_of(const Config& c, const dynrt::Shape& x, const dynrt::Shape& r) {
    Dims g;
    g.layout = c.layout;
    g.seq = static_cast<size_t>(c.layout == 0 ? x[0] : x[1]);
    g.batch = static_cast<size_t>(c.layout == 0 ? x[1] : x[0]);
    g.input = static_cast<size_t>(x[2]);
    g.hidden = static_cast<size_t>(r[2]);
    g.dirs = c.dirs;
    g.gates = c.gates;
    return g;
}

dynrt::Error length_error(const std::string& node, int64_t len, size_t b, size_t seq) {
    return dynrt::Error("sequence_lens[" + std::to_string(b) + "] is " + std::to_string(len) + ", outside [0, " +
                            std::to_string(seq) + "] (the sequence length of X)",
                        dynrt::node_context(node, "recurrent", "sequence_lens"));
}

}   // namespace recurrent
