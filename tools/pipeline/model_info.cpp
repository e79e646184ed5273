// `dynrt info MODEL.onnx`: the model's inputs (with the symbols --shapes sets
// their dynamic dims by), outputs, opsets, producer, ops and initializers,
// and what of it this build cannot run, found by the importer's own checks
// (an import rule per op, the import itself, an impl per node and device).
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "model_cli.hpp"

#ifdef DYNRT_HAVE_ONNX
#include "onnx_import.hpp"
#endif

namespace dynrt::pipeline {

namespace {

// The value the example command gives a dynamic dim, by its name: 1 for a
// batch (a name holding "batch", "N", "B", "bs", or an anonymous first dim of
// an input of rank 2 or more: [-1, 3, ?, ?]), 0 for a cache's past length
// ("past_sequence": the first step, so a "total" length equals the new one),
// 1600 for audio samples ("samples", "audio", "wav": a convolution stack
// needs more than a few), else 16.
int64_t example_value(const std::string& name, bool anonymous, size_t dim, size_t rank) {
    std::string lower;
    for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto has = [&](const char* part) { return lower.find(part) != std::string::npos; };
    if (has("batch") || lower == "n" || lower == "b" || lower == "bs" || (anonymous && dim == 0 && rank >= 2)) return 1;
    if (has("past")) return 0;
    if (has("sample") || has("audio") || has("wav")) return 1600;
    return 16;
}

std::string dims_text(const ModelTensorInfo& t) {
    if (t.kind != "tensor") return "(" + t.kind + ")";
    if (!t.has_shape) return "(shape not declared)";
    std::string s = "[";
    for (size_t k = 0; k < t.dims.size(); ++k) {
        const ModelDimInfo& d = t.dims[k];
        s += k ? ", " : "";
        if (d.is_static) s += std::to_string(d.value);
        else if (!d.symbol.empty()) s += d.symbol;
        else if (!d.dim_param.empty()) s += d.dim_param;
        else s += "?";
    }
    return s + "]";
}

std::string pad(const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

#ifdef DYNRT_HAVE_ONNX
ModelTensorInfo tensor_info(const onnx::ValueInfo& v) {
    ModelTensorInfo t;
    t.name = t.onnx_name = v.name;
    t.kind = v.kind;
    if (v.kind == "tensor") {
        const auto dt = onnx::dtype_from_onnx(v.onnx_type);
        t.dtype = dt ? std::string(to_string(*dt)) : onnx::onnx_type_name(v.onnx_type);
    }
    t.has_shape = v.has_shape;
    if (!t.has_shape) return t;
    for (size_t k = 0; k < v.shape.rank(); ++k) {
        ModelDimInfo d;
        d.is_static = v.shape[k].is_static();
        if (d.is_static) d.value = v.shape[k].get_length();
        d.dim_param = k < v.dim_params.size() ? v.dim_params[k] : std::string();
        d.anonymous = !d.is_static && d.dim_param.empty();
        t.dims.push_back(d);
    }
    return t;
}
#endif

}   // namespace

#ifdef DYNRT_HAVE_ONNX
namespace {

// The devices every op is checked on: cpu and ocl, then any other engine.
std::vector<std::string> info_devices(const Registry& registry) {
    std::vector<std::string> devices = {"cpu", "ocl"};
    for (const std::string& e : registry.engine_names())
        if (std::find(devices.begin(), devices.end(), e) == devices.end()) devices.push_back(e);
    return devices;
}

// The ops by type, each checked the way the importer checks it.
void add_ops(const onnx::OnnxModel& model, const Registry& registry, const std::vector<std::string>& devices,
             ModelInfo& info) {
    for (const onnx::OnnxNode& n : model.nodes) {
        const std::string domain = n.domain.empty() ? std::string("ai.onnx") : n.domain;
        auto op = std::find_if(info.ops.begin(), info.ops.end(),
                               [&](const ModelOpInfo& o) { return o.op_type == n.op_type && o.domain == domain; });
        if (op != info.ops.end()) {
            ++op->nodes;
            continue;
        }
        ModelOpInfo o;
        o.op_type = n.op_type;
        o.domain = domain;
        o.nodes = 1;
        const bool constant = domain == "ai.onnx" && n.op_type == "Constant";   // a constant: no dynrt op
        o.import_rule = constant || onnx::has_rule(registry, n);
        if (o.import_rule) {
            const bool alias = domain == "ai.onnx" && n.op_type == "Identity";   // its input under a second name
            o.dynrt_op = constant ? "(constant)" : alias ? "(alias)" : onnx::target_op(registry, onnx::rule_name(n));
            for (const std::string& dev : devices)
                o.impls.emplace_back(dev, constant || alias || !registry.impls(o.dynrt_op, dev).empty());
        }
        info.ops.push_back(std::move(o));
    }
}

// Why an op type does not load, or has no impl on a device.
void add_unsupported_ops(ModelInfo& info) {
    for (const ModelOpInfo& o : info.ops) {
        const std::string nodes = std::to_string(o.nodes) + (o.nodes == 1 ? " node" : " nodes");
        const std::string name = (o.domain == "ai.onnx" ? "" : o.domain + ".") + o.op_type;
        if (!o.import_rule) {
            info.unsupported.push_back(name + " (" + nodes + "): no loaded module maps this ONNX op (domain '" +
                                       o.domain + "')");
            continue;
        }
        for (const auto& [dev, has] : o.impls)
            if (!has)
                info.unsupported.push_back(name + " (" + nodes + "): dynrt op '" + o.dynrt_op + "' has no " + dev +
                                           " impl" +
                                           (dev == "cpu" ? "" : " (it runs on the host with --device " + dev + ")"));
    }
}

// Each dynamic dim of `t` (input `d` of its rank) under its symbol.
void add_symbols(const ModelTensorInfo& t, ModelInfo& info) {
    for (size_t d = 0; d < t.dims.size(); ++d) {
        const ModelDimInfo& dim = t.dims[d];
        if (dim.is_static) continue;
        const std::string sym = !dim.symbol.empty() ? dim.symbol : dim.dim_param;
        if (sym.empty()) continue;   // anonymous, and not imported: no symbol to give
        auto s = std::find_if(info.symbols.begin(), info.symbols.end(),
                              [&](const ModelSymbolInfo& x) { return x.name == sym; });
        if (s == info.symbols.end()) {
            ModelSymbolInfo si;
            si.name = sym;
            si.dim_param = dim.dim_param != sym ? dim.dim_param : std::string();
            si.anonymous = dim.anonymous;
            si.example = example_value(dim.anonymous ? std::string() : sym, dim.anonymous, d, t.dims.size());
            info.symbols.push_back(si);
            s = info.symbols.end() - 1;
        }
        s->where.push_back(t.name + " dim " + std::to_string(d));
    }
}

// The import, as `dynrt run` makes it: the symbols of the dynamic dims, the
// passes' matches and declines, and which devices run every node.
void add_import(const std::string& path, const onnx::OnnxModel& model, const std::shared_ptr<const Registry>& registry,
                const PassSet& passes, const std::vector<std::string>& devices, ModelInfo& info) {
    ModelGraph graph;
    try {
        graph = load_model_graph(path, registry, passes);
    } catch (const Error& e) {
        info.import_error = e.what();
        info.unsupported.push_back("the import: " + info.import_error);
    }
    const bool imported = graph.program && graph.inputs.size() == model.inputs.size();
    if (imported) {
        info.program_nodes = graph.program_nodes;
        info.pattern_matches = graph.pattern_matches;
        info.pattern_declines = graph.pattern_declines;
    }
    for (size_t k = 0; k < model.inputs.size(); ++k) {
        ModelTensorInfo t = tensor_info(model.inputs[k]);
        if (imported) {
            const InputSpec& in = graph.inputs[k];
            t.name = in.name;
            for (size_t d = 0; d < t.dims.size() && d < in.dims.size(); ++d)
                if (in.dims[d].kind == DimSpec::Kind::symbol) t.dims[d].symbol = in.dims[d].symbol;
        }
        add_symbols(t, info);
        info.inputs.push_back(std::move(t));
    }
    if (imported)
        for (const std::string& dev : devices)
            info.devices.emplace_back(dev, onnx::graph_no_impl(*registry, dev, *graph.program));
}

}   // namespace
#endif

ModelInfo describe_model(const std::string& path, const std::shared_ptr<const Registry>& registry,
                         const PassSet& passes) {
#ifdef DYNRT_HAVE_ONNX
    const onnx::OnnxModel model = onnx::load_model(path);
    ModelInfo info;
    info.file = path;
    info.ir_version = model.ir_version;
    info.producer_name = model.producer_name;
    info.producer_version = model.producer_version;
    info.graph_name = model.graph_name;
    for (const auto& [domain, version] : model.opsets) info.opsets[domain.empty() ? "ai.onnx" : domain] = version;
    for (const onnx::ValueInfo& v : model.outputs) info.outputs.push_back(tensor_info(v));
    info.initializers = model.initializers.size();
    for (const auto& [name, t] : model.initializers) info.initializer_bytes += t.bytes();
    info.nodes = model.nodes.size();
    const std::vector<std::string> devices = info_devices(*registry);
    add_ops(model, *registry, devices, info);
    add_unsupported_ops(info);
    add_import(path, model, registry, passes, devices, info);
    return info;
#else
    (void)registry;
    (void)passes;
    throw Error("this dynrt was built without ONNX support (install libonnx-dev and libprotobuf-dev, then reconfigure)",
                in_file(path, "model"));
#endif
}

std::vector<std::string> example_ranges(const ModelInfo& info) {
    std::vector<std::string> out;
    for (const ModelTensorInfo& t : info.inputs) {
        std::string lower;
        for (char c : t.name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if ((t.dtype == "i64" || t.dtype == "i32") && lower.find("mask") != std::string::npos)
            out.push_back(t.name + "=0..2");
    }
    return out;
}

std::string example_command(const ModelInfo& info) {
    const std::string shapes = example_shapes(info);
    if (shapes.empty()) return {};
    std::string out = "dynrt run " + info.file + " --shapes \"" + shapes + "\"";
    for (const std::string& r : example_ranges(info)) out += " --input-range " + r;
    return out;
}

std::string example_shapes(const ModelInfo& info) {
    std::string out;
    for (const ModelSymbolInfo& s : info.symbols)
        out += (out.empty() ? "" : ";") + s.name + "=" + std::to_string(s.example);
    return out;
}

std::string model_inputs_text(const ModelInfo& info) {
    std::ostringstream os;
    size_t width = 0;
    for (const ModelTensorInfo& t : info.inputs) width = std::max(width, t.name.size());
    os << "inputs:\n";
    if (info.inputs.empty()) os << "  (none)\n";
    for (const ModelTensorInfo& t : info.inputs) {
        os << "  " << pad(t.name, width) << "  " << pad(t.dtype, 4) << " " << dims_text(t);
        if (t.onnx_name != t.name) os << "  (ONNX name '" << t.onnx_name << "')";
        os << "\n";
    }
    if (!info.symbols.empty()) {
        size_t sw = 0;
        for (const ModelSymbolInfo& s : info.symbols) sw = std::max(sw, s.name.size());
        os << "dynamic dims (set them with --shapes \"name=N;...\"):\n";
        for (const ModelSymbolInfo& s : info.symbols) {
            os << "  " << pad(s.name, sw) << "  ";
            for (size_t k = 0; k < s.where.size(); ++k) os << (k ? ", " : "") << s.where[k];
            if (s.anonymous) os << " (anonymous in the model)";
            else if (!s.dim_param.empty()) os << " (dim_param '" << s.dim_param << "')";
            os << "\n";
        }
    }
    return os.str();
}

std::string model_info_text(const ModelInfo& info) {
    std::ostringstream os;
    os << info.file << "\n";
    os << "  ir_version " << info.ir_version << ", producer "
       << (info.producer_name.empty() ? std::string("(none)") : info.producer_name)
       << (info.producer_version.empty() ? "" : " " + info.producer_version) << ", graph '" << info.graph_name
       << "'\n  opsets:";
    if (info.opsets.empty()) os << " (none)";
    for (const auto& [domain, version] : info.opsets) os << " " << domain << " " << version;
    os << "\n" << model_inputs_text(info);
    os << "outputs:\n";
    size_t width = 0;
    for (const ModelTensorInfo& t : info.outputs) width = std::max(width, t.name.size());
    for (const ModelTensorInfo& t : info.outputs)
        os << "  " << pad(t.name, width) << "  " << pad(t.dtype, 4) << " " << dims_text(t) << "\n";
    os << "nodes: " << info.nodes << "\n";
    size_t ow = 0;
    for (const ModelOpInfo& o : info.ops)
        ow = std::max(ow, o.op_type.size() + (o.domain == "ai.onnx" ? 0 : o.domain.size() + 1));
    for (const ModelOpInfo& o : info.ops) {
        os << "  " << pad((o.domain == "ai.onnx" ? "" : o.domain + ".") + o.op_type, ow) << "  "
           << pad(std::to_string(o.nodes), 4) << "  ";
        if (!o.import_rule) {
            os << "no import rule\n";
            continue;
        }
        os << "-> " << o.dynrt_op << " (";
        for (size_t k = 0; k < o.impls.size(); ++k)
            os << (k ? ", " : "") << o.impls[k].first << (o.impls[k].second ? "" : ": none");
        os << ")\n";
    }
    os << "initializers: " << info.initializers << " (" << info.initializer_bytes << " bytes)\n";
    if (info.import_error.empty()) {
        os << "imported: " << info.program_nodes << " program nodes; patterns matched:";
        if (info.pattern_matches.empty()) os << " none";
        for (const auto& [pass, n] : info.pattern_matches) os << " " << pass << " " << n;
        os << "\n";
        for (const std::string& d : info.pattern_declines) os << "  declined by " << d << "\n";
        os << "runs on:";
        for (const auto& [dev, why] : info.devices) os << " " << dev << (why.empty() ? "" : " (partly on the host)");
        os << "\n";
    }
    if (info.unsupported.empty()) {
        os << "unsupported on this build: nothing\n";
    } else {
        os << "unsupported on this build:\n";
        for (const std::string& u : info.unsupported) os << "  " << u << "\n";
        for (const auto& [dev, why] : info.devices)
            if (!why.empty()) os << "  on " << dev << ": " << why << "\n";
    }
    if (const std::string ex = example_command(info); !ex.empty() && info.import_error.empty())
        os << "example: " << ex << "\n";
    return os.str();
}

std::string model_info_json(const ModelInfo& info) {
    tools::JsonWriter w;
    auto tensors = [&](const std::vector<ModelTensorInfo>& list, bool inputs) {
        w.begin_array();
        for (const ModelTensorInfo& t : list) {
            w.newline().begin_object().field("name", t.name).field("onnx_name", t.onnx_name).field("kind", t.kind);
            w.field("dtype", t.dtype).key("dims");
            if (!t.has_shape) {
                w.null();
            } else {
                w.begin_array();
                for (const ModelDimInfo& d : t.dims) {
                    w.begin_object();
                    if (d.is_static) {
                        w.field("value", d.value);
                    } else {
                        if (inputs) w.field("symbol", d.symbol);
                        w.field("dim_param", d.dim_param).field("anonymous", d.anonymous);
                    }
                    w.end_object();
                }
                w.end_array();
            }
            w.end_object();
        }
        w.end_array();
    };
    w.begin_object().field("file", info.file).field("ir_version", info.ir_version);
    w.key("producer")
        .begin_object()
        .field("name", info.producer_name)
        .field("version", info.producer_version)
        .end_object();
    w.field("graph", info.graph_name).key("opsets").begin_object();
    for (const auto& [domain, version] : info.opsets) w.field(domain, version);
    w.end_object().key("inputs");
    tensors(info.inputs, true);
    w.key("outputs");
    tensors(info.outputs, false);
    w.key("symbols").begin_array();
    for (const ModelSymbolInfo& s : info.symbols) {
        w.newline()
            .begin_object()
            .field("name", s.name)
            .field("dim_param", s.dim_param)
            .field("anonymous", s.anonymous);
        w.field("example", s.example).key("dims").begin_array();
        for (const std::string& d : s.where) w.value(d);
        w.end_array().end_object();
    }
    w.end_array().field("example_shapes", example_shapes(info)).key("example_ranges").begin_array();
    for (const std::string& r : example_ranges(info)) w.value(r);
    w.end_array().field("example_command", example_command(info));
    w.field("nodes", info.nodes).key("ops").begin_array();
    for (const ModelOpInfo& o : info.ops) {
        w.newline().begin_object().field("op_type", o.op_type).field("domain", o.domain).field("nodes", o.nodes);
        w.field("import_rule", o.import_rule).field("dynrt_op", o.dynrt_op).key("impls").begin_object();
        for (const auto& [dev, has] : o.impls) w.field(dev, has);
        w.end_object().end_object();
    }
    w.end_array().key("initializers").begin_object().field("count", info.initializers);
    w.field("bytes", info.initializer_bytes).end_object();
    w.field("program_nodes", info.program_nodes).key("pattern_matches").begin_object();
    for (const auto& [pass, n] : info.pattern_matches) w.field(pass, n);
    w.end_object().key("pattern_declines").begin_array();
    for (const std::string& d : info.pattern_declines) w.newline().value(d);
    w.end_array();
    w.field("imports", info.import_error.empty())
        .field("import_error", info.import_error)
        .key("devices")
        .begin_object();
    for (const auto& [dev, why] : info.devices) {
        w.key(dev).begin_object().field("every_node_has_an_impl", why.empty()).field("first_without", why).end_object();
    }
    w.end_object().key("unsupported").begin_array();
    for (const std::string& u : info.unsupported) w.newline().value(u);
    w.end_array().end_object();
    return w.str() + "\n";
}

}   // namespace dynrt::pipeline
