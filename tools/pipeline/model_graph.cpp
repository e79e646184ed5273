// A pipeline's graph from a model file (`model:` in YAML, `dynrt run
// MODEL.onnx`): the ONNX importer builds the program; each graph input becomes
// an InputSpec whose dynamic dims are symbols named by their dim_param (an
// unnamed dynamic dim gets "<input>_<k>"), so schedules, feeds and shapes work
// on models as on YAML graphs.
#include <cctype>

#include "pipeline.hpp"

#ifdef DYNRT_HAVE_ONNX
#include "onnx_import.hpp"
#endif

namespace dynrt::pipeline {

namespace {

// A dim_param as a schedule symbol: letters, digits and '_' ("batch_size",
// "s0"); other characters become '_'.
std::string symbol_name(const std::string& param) {
    std::string s = param;
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
    return s;
}

}   // namespace

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
                d.symbol = gi.dim_params[k].empty() ? symbol_name(gi.node + "_" + std::to_string(k))
                                                    : symbol_name(gi.dim_params[k]);
            }
            in.dims.push_back(d);
        }
        out.inputs.push_back(std::move(in));
    }
    return out;
#else
    (void)registry;
    (void)passes;
    throw Error("this dynrt was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)",
                in_file(path, "model"));
#endif
}

}   // namespace dynrt::pipeline
