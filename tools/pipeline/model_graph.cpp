// A pipeline's graph from a model file (`model:` in YAML, `dynrt run
// MODEL.onnx`): the ONNX importer builds the program; each graph input becomes
// an InputSpec whose dynamic dims are schedule symbols, so schedules, feeds
// and shapes work on models as on YAML graphs. Dims sharing a dim_param share
// a symbol; every anonymous dim (no dim_param, or "?", "", "unk__N": see
// onnx::is_anonymous_dim_param) gets one of its own, "<input>_<k>".
#include <cctype>
#include <map>
#include <set>

#include "pipeline.hpp"

#ifdef DYNRT_HAVE_ONNX
#include "onnx_import.hpp"
#endif

namespace dynrt::pipeline {

#ifdef DYNRT_HAVE_ONNX
namespace {

// Letters, digits and '_', not starting with a digit: a schedule symbol as it is.
bool is_symbol(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// `text` made a symbol: other characters become '_', a leading digit (or
// nothing) gets "d_" before it.
std::string symbol_text(const std::string& text) {
    std::string s = text;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
    return s;
}

// The symbols of one model, one per distinct name: a dim_param that is a
// symbol already keeps it; the others ("a-b", "batch size", "2d") take
// symbol_text, and "_2", "_3", ... when that is taken, so two dim_params never
// become one symbol ("a-b" and "a_b" are "a_b_2" and "a_b").
class SymbolNames {
public:
    // Reserves `name` as it is; false when it is taken.
    bool keep(const std::string& name) { return taken_.insert(name).second; }
    // `base`, or `base_N` with the first N >= 2 that is free.
    std::string take(const std::string& base) {
        std::string s = base;
        for (size_t n = 2; !taken_.insert(s).second; ++n) s = base + "_" + std::to_string(n);
        return s;
    }

private:
    std::set<std::string> taken_;
};

}   // namespace
#endif

ModelGraph load_model_graph(const std::string& path, const std::shared_ptr<const Registry>& registry,
                            const PassSet& passes) {
#ifdef DYNRT_HAVE_ONNX
    const onnx::OnnxModel model = onnx::load_model(path);
    onnx::ImportOptions options;
    options.passes = passes;
    const onnx::ImportedGraph g = onnx::import_graph(registry, model, options);
    if (!g.program) throw Error("the model cannot run: " + g.unsupported, in_file(path, "model"));
    ModelGraph out;
    out.program = g.program;
    out.outputs = g.outputs;
    for (const Node& n : g.program->nodes()) out.program_nodes += n.is_op() ? 1 : 0;
    out.pattern_matches = g.matched;
    out.pattern_declines = g.declined;
    // Named dynamic dims first, in model order: those that are symbols as
    // they are, then the others; anonymous dims get theirs below.
    const auto named = [](const onnx::GraphInput& gi, size_t k) {
        return k < gi.dim_params.size() && !onnx::is_anonymous_dim_param(gi.dim_params[k]);
    };
    SymbolNames names;
    std::map<std::string, std::string> symbol_of;   // dim_param -> symbol
    for (const bool as_is : {true, false})
        for (const onnx::GraphInput& gi : g.inputs)
            for (size_t k = 0; k < gi.layout.shape.rank(); ++k) {
                if (gi.layout.shape[k].is_static() || !named(gi, k) || symbol_of.count(gi.dim_params[k])) continue;
                const std::string& param = gi.dim_params[k];
                if (as_is && is_symbol(param) && names.keep(param)) symbol_of[param] = param;
                else if (!as_is) symbol_of[param] = names.take(symbol_text(param));
            }
    for (const onnx::GraphInput& gi : g.inputs) {
        InputSpec in;
        in.name = gi.node;
        in.dtype = gi.layout.dtype;
        in.where = in_file(path, "input");
        in.where.node = gi.name;
        if (!is_floating(in.dtype)) {
            in.low = 0;
            in.high = 10;
        }
        const PartialShape& ps = gi.layout.shape;
        for (size_t k = 0; k < ps.rank(); ++k) {
            DimSpec d;
            if (ps[k].is_static()) {
                d.value = ps[k].get_length();
            } else {
                d.kind = DimSpec::Kind::symbol;
                d.symbol = named(gi, k) ? symbol_of.at(gi.dim_params[k])
                                        : names.take(symbol_text(gi.node + "_" + std::to_string(k)));
            }
            in.dims.push_back(d);
        }
        out.inputs.push_back(std::move(in));
        out.onnx_inputs.push_back(gi.name);
    }
    return out;
#else
    (void)registry;
    (void)passes;
    throw Error("this dynrt was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)",
                in_file(path, "model"));
#endif
}

std::vector<std::string> import_notes(const ModelGraph& g) {
    std::vector<std::string> out;
    std::string matched;
    for (const auto& [pass, n] : g.pattern_matches)
        matched += (matched.empty() ? "" : ", ") + pass + " " + std::to_string(n);
    out.push_back("imported: " + std::to_string(g.program_nodes) +
                  " program nodes; patterns matched: " + (matched.empty() ? std::string("none") : matched));
    for (const std::string& d : g.pattern_declines) out.push_back("declined by " + d);
    return out;
}

}   // namespace dynrt::pipeline
