// dynrt::Model: modules, the program (an ONNX model through the importer or a
// YAML pipeline through the pipeline front end), the device engine and the
// network, set up as `dynrt run` sets them up (tools/pipeline/runner.cpp).
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include "api_impl.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/passes.hpp"

namespace dynrt {

namespace fs = std::filesystem;

namespace {

// The folder dynrt/ next to this library: <prefix>/lib/dynrt installed,
// build/lib/dynrt in the build tree (the CLI's default is relative to the
// executable, which here is the application's).
std::string library_module_dir() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&library_module_dir), &info) == 0 || !info.dli_fname)
        return ModuleLoader::default_module_dir();
    return (fs::path(info.dli_fname).parent_path() / "dynrt").lexically_normal().string();
}

std::vector<std::string> module_dirs(const ModelOptions& options) {
    if (!options.module_dirs.empty()) return options.module_dirs;
    const char* env = std::getenv("DYNRT_MODULE_PATH");
    if (env && *env) return ModuleLoader::search_path({});
    return {library_module_dir()};
}

struct LoadedModules {
    std::shared_ptr<Registry> registry;
    std::vector<std::string> warnings;
};

// One registry per set of module folders, shared by the models that use it
// while any of them lives: a second model does not load every module again.
LoadedModules load_modules(const std::vector<std::string>& dirs, bool verbose) {
    static std::mutex mutex;
    static std::map<std::vector<std::string>, std::pair<std::weak_ptr<Registry>, std::vector<std::string>>> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto& entry = cache[dirs];
    if (auto registry = entry.first.lock()) return {registry, entry.second};
    auto registry = std::make_shared<Registry>();
    const LoadReport report = ModuleLoader::load_dirs(*registry, dirs);
    std::vector<std::string> warnings;
    for (const auto& f : report.failed) warnings.push_back(f.message);
    if (verbose) {
        std::string list;
        for (const auto& d : dirs) list += " " + d;
        std::fprintf(stderr, "dynrt: module folders:%s; %zu modules loaded\n", list.c_str(), report.loaded.size());
        for (const auto& w : warnings) std::fprintf(stderr, "dynrt: warning: %s\n", w.c_str());
    }
    if (report.loaded.empty()) {
        std::string msg = "no module loaded from";
        for (const auto& d : dirs) msg += " " + d;
        if (!warnings.empty()) msg += " (" + warnings.front() + ")";
        ErrorContext c;
        c.field = "module_dirs";
        throw Error(msg, c);
    }
    entry = {registry, warnings};
    return {registry, warnings};
}

// The OpenCL engine reads DYNRT_CACHE_DIR and DYNRT_OCL_PROFILE when it is
// made: a model's cache_dir and profiling are set for the time it takes, then
// the variables are put back (one model at a time).
class ScopedEnv {
public:
    explicit ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) : vars_(std::move(vars)) {
        if (vars_.empty()) return;
        mutex().lock();
        for (const auto& [name, value] : vars_) {
            const char* old = std::getenv(name.c_str());
            old_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
            ::setenv(name.c_str(), value.c_str(), 1);
        }
    }
    ~ScopedEnv() {
        if (vars_.empty()) return;
        for (size_t i = 0; i < vars_.size(); ++i) {
            if (old_[i]) ::setenv(vars_[i].first.c_str(), old_[i]->c_str(), 1);
            else ::unsetenv(vars_[i].first.c_str());
        }
        mutex().unlock();
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    std::vector<std::pair<std::string, std::string>> vars_;
    std::vector<std::optional<std::string>> old_;
};

std::vector<std::pair<std::string, std::string>> engine_env(const ModelOptions& options) {
    std::vector<std::pair<std::string, std::string>> vars;
    if (!options.cache_dir.empty()) vars.emplace_back("DYNRT_CACHE_DIR", options.cache_dir);
    if (options.profiling) vars.emplace_back("DYNRT_OCL_PROFILE", "1");
    return vars;
}

bool is_onnx(const std::string& path) { return fs::path(path).extension() == ".onnx"; }

// What a graph (ONNX or YAML) gives the model: program, inputs, outputs and
// the run settings.
struct Loaded {
    std::shared_ptr<Program> program;
    std::vector<pipeline::InputSpec> inputs;
    std::vector<std::string> model_input_names;   // as the model writes them
    std::vector<std::string> outputs;
    pipeline::RunSettings run;
};

Loaded load_graph(const std::string& path, const std::shared_ptr<Registry>& registry, const ModelOptions& options) {
    const pipeline::PassOverrides overrides{
        pipeline::env_passes(), options.passes.empty() ? std::nullopt : std::optional<std::string>(options.passes)};
    Loaded out;
    if (is_onnx(path)) {
        // A model's run settings are the defaults, with DYNRT_PASSES and then
        // the options' passes over them (as `dynrt run MODEL.onnx --passes`).
        if (overrides.env) out.run.passes.apply(*overrides.env, "DYNRT_PASSES");
        if (overrides.cli) out.run.passes.apply(*overrides.cli, "passes");
        pipeline::ModelGraph g = pipeline::load_model_graph(path, registry, out.run.passes);
        out.program = g.program;
        out.inputs = std::move(g.inputs);
        out.model_input_names = std::move(g.onnx_inputs);
        out.outputs = std::move(g.outputs);
    } else {
        pipeline::Pipeline p = pipeline::load_pipeline(path, registry, overrides);
        out.program = p.program;
        out.inputs = std::move(p.inputs);
        for (const auto& in : out.inputs) out.model_input_names.push_back(in.name);
        out.outputs = std::move(p.outputs);
        out.run = std::move(p.run);
    }
    return out;
}

std::vector<Dim> input_dims(const pipeline::InputSpec& spec, const std::vector<Dim>* declared) {
    std::vector<Dim> dims;
    for (size_t k = 0; k < spec.dims.size(); ++k) {
        const pipeline::DimSpec& d = spec.dims[k];
        Dim out;
        if (d.kind == pipeline::DimSpec::Kind::fixed) out.value = d.value;
        else if (d.kind == pipeline::DimSpec::Kind::symbol) out.symbol = d.symbol;
        // An ONNX dim with no name of its own: the importer names it
        // "<input>_<k>" for --shapes, the model names it nothing.
        if (declared && k < declared->size() && !(*declared)[k].is_static() && (*declared)[k].symbol.empty())
            out.symbol.clear();
        dims.push_back(out);
    }
    return dims;
}

NetworkOptions network_options(const pipeline::RunSettings& run, bool verbose) {
    NetworkOptions n;
    n.impl_cache_capacity = run.impl_cache_capacity;
    n.use_dynamic_impls = run.dynamic_impls;
    n.async_compile = run.async_compile;
    n.async_compile_after = run.async_compile_after;
    n.compile_threads = run.compile_threads;
    n.prealloc = pipeline::resolve_prealloc(std::nullopt, std::getenv("DYNRT_MEM_PREALLOC"), run.prealloc);
    n.verbose = verbose;
    apply_passes(run.passes, nullptr, &n);
    n.weights_cache_capacity = run.weights_cache_capacity;
    n.memory_budget_bytes = run.memory_budget_bytes;
    n.max_tensor_bytes = run.max_tensor_bytes;
    return n;
}

}   // namespace

std::string dims_text(const std::vector<Dim>& dims) {
    std::string s = "[";
    for (size_t k = 0; k < dims.size(); ++k) {
        if (k) s += ",";
        s += dims[k].is_static() ? std::to_string(dims[k].value) : dims[k].symbol.empty() ? "?" : dims[k].symbol;
    }
    return s + "]";
}

std::string TensorInfo::shape_text() const { return dims_text(dims); }

ErrorContext Model::Impl::where(const std::string& field) const {
    ErrorContext c;
    c.file = path;
    c.field = field;
    return c;
}

namespace {

// The index of `name` among the model's inputs or outputs (`kind`), else an
// error listing them with the closest name.
size_t find_tensor(const std::map<std::string, size_t>& index, const std::vector<TensorInfo>& infos,
                   const std::string& kind, const std::string& name, const ErrorContext& where) {
    const auto it = index.find(name);
    if (it != index.end()) return it->second;
    std::vector<std::string> names;
    for (const auto& t : infos) names.push_back(t.name);
    std::string msg = "the model has no " + kind + " '" + name + "'";
    const auto close = pipeline::close_names(name, names, 1);
    if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error(msg + "; its " + kind + "s: " + list, where);
}

// Inputs as the model declares them; `symbol_of` gets each ONNX dim_param's
// symbol in the importer's inputs.
void describe_inputs(Model::Impl& impl, const Loaded& g, const std::optional<DeclaredDims>& declared,
                     std::map<std::string, std::string>& symbol_of) {
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        const pipeline::InputSpec& spec = g.inputs[i];
        const std::string& name = g.model_input_names.at(i);
        const std::vector<Dim>* decl = nullptr;
        if (declared) {
            const auto it = declared->inputs.find(name);
            if (it != declared->inputs.end()) decl = &it->second;
        }
        impl.inputs.push_back({name, spec.dtype, input_dims(spec, decl)});
        if (decl && decl->size() == spec.dims.size())
            for (size_t k = 0; k < decl->size(); ++k)
                if (!(*decl)[k].symbol.empty() && spec.dims[k].kind == pipeline::DimSpec::Kind::symbol)
                    symbol_of.emplace((*decl)[k].symbol, spec.dims[k].symbol);
        impl.input_index[name] = i;
        impl.input_index.emplace(spec.name, i);
    }
}

// Outputs with the program's layouts; dynamic dims take the names the model
// gives them (the inputs' symbols where an input has the same dim_param).
void describe_outputs(Model::Impl& impl, const Loaded& g, const std::optional<DeclaredDims>& declared,
                      const std::map<std::string, std::string>& symbol_of) {
    const auto& program_outputs = impl.program->outputs();
    for (size_t k = 0; k < g.outputs.size() && k < program_outputs.size(); ++k) {
        const NodeInput& ref = program_outputs[k];
        const Layout& l = impl.program->nodes().at(ref.node).out_layouts.at(ref.output);
        TensorInfo info{g.outputs[k], l.dtype, {}};
        for (const Dimension& d : l.shape) info.dims.push_back(Dim{d.is_static() ? d.get_length() : -1, {}});
        const std::vector<Dim>* named = nullptr;
        if (declared) {
            const auto it = declared->outputs.find(g.outputs[k]);
            if (it != declared->outputs.end()) named = &it->second;
        }
        if (named && named->size() == info.dims.size())
            for (size_t d = 0; d < info.dims.size(); ++d) {
                const Dim& dd = (*named)[d];
                if (info.dims[d].is_static() || dd.symbol.empty()) continue;
                const auto s = symbol_of.find(dd.symbol);
                info.dims[d].symbol = s != symbol_of.end() ? s->second : dd.symbol;
            }
        impl.output_index[info.name] = k;
        impl.outputs.push_back(std::move(info));
    }
}

// The device, as `dynrt run` picks it, and the network on it.
void create_network(Model::Impl& impl, const Loaded& g, const ModelOptions& options) {
    std::vector<std::string> ops;
    for (const auto& n : impl.program->nodes())
        if (n.def && !n.def->def.traits.is_input && !n.def->def.traits.is_constant &&
            std::find(ops.begin(), ops.end(), n.op) == ops.end())
            ops.push_back(n.op);
    const std::string device = options.device.empty() ? g.run.device : options.device;
    const unsigned threads = options.threads ? options.threads : static_cast<unsigned>(g.run.threads);
    std::string note;
    {
        const ScopedEnv env(engine_env(options));
        try {
            impl.engine =
                pipeline::create_device(*impl.registry, device, options.verbose, &impl.device, &note, ops, threads);
        } catch (const Error& e) {
            throw e.with_context(impl.where());
        }
    }
    impl.device_name = impl.engine->info().name;
    if (options.verbose) std::fprintf(stderr, "dynrt: %s\n", note.c_str());
    try {
        impl.network = Network::create(impl.program, impl.engine, network_options(g.run, options.verbose));
    } catch (const Error& e) {
        throw e.with_context(impl.where());
    }
}

}   // namespace

size_t Model::Impl::find_input(const std::string& name) const {
    return find_tensor(input_index, inputs, "input", name, where());
}

size_t Model::Impl::find_output(const std::string& name) const {
    return find_tensor(output_index, outputs, "output", name, where());
}

Model::Model(const std::string& path, const ModelOptions& options) {
    auto impl = std::make_shared<Impl>();
    impl->path = path;
    LoadedModules modules = load_modules(module_dirs(options), options.verbose);
    impl->registry = modules.registry;
    impl->warnings = std::move(modules.warnings);
    Loaded g = load_graph(path, impl->registry, options);
    impl->program = g.program;
    std::optional<DeclaredDims> declared;
#ifdef DYNRT_HAVE_ONNX
    if (is_onnx(path)) declared = declared_dims(path);
#endif
    std::map<std::string, std::string> symbol_of;   // ONNX dim_param -> the importer's symbol
    describe_inputs(*impl, g, declared, symbol_of);
    describe_outputs(*impl, g, declared, symbol_of);
    impl->specs = std::move(g.inputs);
    create_network(*impl, g, options);
    impl_ = std::move(impl);
}

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const std::string& Model::path() const { return impl_->path; }
const std::vector<TensorInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->outputs; }
const std::string& Model::device() const { return impl_->device; }
const std::string& Model::device_name() const { return impl_->device_name; }
const std::vector<std::string>& Model::warnings() const { return impl_->warnings; }

}   // namespace dynrt
