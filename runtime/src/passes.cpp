// The pass table and PassSet (passes.hpp).
#include "dynrt/passes.hpp"

#include <algorithm>
#include <cctype>

#include "dynrt/error.hpp"

namespace dynrt {

namespace {

std::vector<PassInfo> make_table() {
    using S = PassStage;
    return {
        {"constant_folding", S::import,
         "nodes whose inputs are known at import (and shape_of-like nodes of static inputs) run once on the cpu "
         "engine; their outputs become constants",
         nullptr, nullptr},
        {"pattern_gelu", S::import,
         "the Erf form of Gelu (Div or Mul, Erf, Add, Mul, Mul) and its tanh form (Pow, Mul, Add, Mul, Tanh, Add, Mul, "
         "Mul) are imported as one Gelu node",
         nullptr, nullptr},
        {"pattern_swish", S::import, "Mul(x, Sigmoid(x)) is imported as one Swish node", nullptr, nullptr},
        {"pattern_rms_norm", S::import,
         "Pow(x, 2) or Mul(x, x), ReduceMean (last axis), Add(eps), Sqrt, Reciprocal or Div, Mul[, Cast][, "
         "Mul(weight)] is imported as one rms_norm node",
         nullptr, nullptr},
        {"pattern_attention", S::import,
         "MatMul(q, K^T), scale, mask, Softmax, [NaN guard], MatMul(p, v) is imported as one sdpa node", nullptr,
         nullptr},
        {"fold_permutations", S::program,
         "a permutation (transpose) feeding only a consumer that reads its input permuted (gemm) leaves; the "
         "consumer takes new attributes",
         &ProgramOptions::fold_permutations, nullptr},
        {"fold_channel_affine", S::program,
         "a per-channel affine (batch_norm) of a producer's only output is folded into the producer's constant "
         "weights (convolution)",
         &ProgramOptions::fold_channel_affine, nullptr},
        {"views", S::network, "layout-only ops (reshape ...) view their input's buffer and run no kernel", nullptr,
         &NetworkOptions::views},
        {"fusion", S::network,
         "elementwise consumers run as post-ops inside their producer's kernel (unfused again when shapes do not "
         "allow it)",
         nullptr, &NetworkOptions::fusion},
        {"inplace_concat", S::network, "producers of a concat write into its buffer; the concat copies nothing",
         nullptr, &NetworkOptions::inplace_concat},
        {"fake_alignment", S::network, "fully_connected runs on rows rounded up to the impl's tile", nullptr,
         &NetworkOptions::fake_alignment},
        {"reorder_weights", S::network,
         "constant weights are reordered once into the format the chosen impl reads (osv16 ...)", nullptr,
         &NetworkOptions::reorder_weights},
        {"memory_pool", S::network,
         "primitives whose lifetimes do not overlap share output buffers (off: a fresh buffer each)", nullptr,
         &NetworkOptions::memory_pool},
    };
}

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

ErrorContext field(const std::string& source) {
    ErrorContext c;
    c.field = source;
    return c;
}

}   // namespace

const char* to_string(PassStage stage) {
    switch (stage) {
        case PassStage::import: return "import";
        case PassStage::program: return "program";
        case PassStage::network: return "network";
    }
    return "?";
}

const std::vector<PassInfo>& passes() {
    static const std::vector<PassInfo> kTable = make_table();
    return kTable;
}

const PassInfo* find_pass(const std::string& name) {
    for (const PassInfo& p : passes())
        if (name == p.name) return &p;
    return nullptr;
}

std::string pass_names() {
    std::string s;
    for (const PassInfo& p : passes()) s += (s.empty() ? "" : ", ") + std::string(p.name);
    return s;
}

PassSet::PassSet() : on_(passes().size(), true) {}

PassSet PassSet::none() {
    PassSet s;
    s.on_.assign(s.on_.size(), false);
    return s;
}

PassSet PassSet::parse(const std::string& spec, const std::string& source) {
    PassSet s;
    s.apply(spec, source);
    return s;
}

size_t PassSet::index(const std::string& name, const std::string& source) const {
    const auto& table = passes();
    for (size_t i = 0; i < table.size(); ++i)
        if (name == table[i].name) return i;
    throw Error("unknown pass '" + name + "' (known passes: " + pass_names() + ")", field(source));
}

void PassSet::apply(const std::string& spec, const std::string& source) {
    std::vector<bool> next = on_;
    size_t start = 0;
    while (start <= spec.size()) {
        const size_t comma = std::min(spec.find(',', start), spec.size());
        const std::string item = trim(spec.substr(start, comma - start));
        start = comma + 1;
        if (item.empty()) continue;
        if (item == "all" || item == "none") {
            next.assign(next.size(), item == "all");
            continue;
        }
        std::string name;
        bool value = false;
        const size_t eq = item.find('=');
        if (item[0] == '-' || item[0] == '+') {
            name = trim(item.substr(1));
            value = item[0] == '+';
        } else if (eq != std::string::npos) {
            name = trim(item.substr(0, eq));
            const std::string v = trim(item.substr(eq + 1));
            if (v == "on" || v == "true" || v == "1" || v == "yes") value = true;
            else if (v == "off" || v == "false" || v == "0" || v == "no") value = false;
            else throw Error("'" + item + "': a pass is on or off (on/off, true/false, 1/0, yes/no)", field(source));
        } else if (find_pass(item)) {
            throw Error(
                "'" + item + "' alone says nothing: write -" + item + " (off), +" + item + " (on) or " + item + "=off",
                field(source));
        } else {
            name = item;   // an unknown pass: index() says so
        }
        next[index(name, source)] = value;
    }
    on_ = std::move(next);
}

bool PassSet::on(const std::string& name) const { return on_[index(name, "")]; }

void PassSet::set(const std::string& name, bool on) { on_[index(name, "")] = on; }

bool PassSet::all_on() const {
    return std::all_of(on_.begin(), on_.end(), [](bool b) { return b; });
}

std::vector<std::string> PassSet::off() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < on_.size(); ++i)
        if (!on_[i]) out.emplace_back(passes()[i].name);
    return out;
}

std::string PassSet::to_string() const {
    const std::vector<std::string> names = off();
    if (names.empty()) return "all";
    if (names.size() == on_.size()) return "none";
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "-" : ",-") + n;
    return s;
}

void apply_passes(const PassSet& set, ProgramOptions* program, NetworkOptions* network) {
    for (const PassInfo& p : passes()) {
        if (program && p.program_switch) program->*p.program_switch = set.on(p.name);
        if (network && p.network_switch) network->*p.network_switch = set.on(p.name);
    }
}

}   // namespace dynrt
