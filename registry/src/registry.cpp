// Registry, ModuleRegistrar and ImplEntry::check.
//
// Every entry holds the shared_ptr of the library it came from (P2 of the
// plugin-systems reference): a registry entry whose code lives in a module must
// die before that module is unmapped, and so must every impl and engine created
// from it, which is what hold() and create_engine() arrange.
#include "dynrt/registry.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"

namespace dynrt {

namespace {

std::string module_path(const std::shared_ptr<const ModuleRecord>& m) { return m ? m->path : std::string("<builtin>"); }

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += sep;
        out += v[i];
    }
    return out;
}

// The impl order (docs/architecture.md, "Impl priority"): effective priority,
// highest first; ties by impl name, then module name. Load order and file
// names never decide.
bool tried_before(const RegisteredImpl& a, const RegisteredImpl& b) {
    const int pa = a.entry.effective_priority(), pb = b.entry.effective_priority();
    if (pa != pb) return pa > pb;
    if (a.entry.name != b.entry.name) return a.entry.name < b.entry.name;
    const std::string ma = a.module ? a.module->name : std::string(), mb = b.module ? b.module->name : std::string();
    return ma < mb;
}

std::string dtype_list(const std::vector<DataType>& v) {
    std::vector<std::string> names;
    for (DataType t : v) names.emplace_back(to_string(t));
    return join(names);
}

}   // namespace

// ---- Impl / ShapeType ------------------------------------------------------

Impl::~Impl() = default;
ImplState::~ImplState() = default;

const char* to_string(ShapeType t) {
    switch (t) {
        case ShapeType::static_shape: return "static";
        case ShapeType::dynamic_shape: return "dynamic";
    }
    return "?";
}

int ImplEntry::effective_priority() const {
    if (priority != kPriorityDefault) return priority;
    if (reference) return kPriorityReference;
    return shape_type == ShapeType::static_shape ? kPriorityDeviceStatic : kPriorityDeviceDynamic;
}

std::string ImplEntry::check(const KernelParams& params) const {
    // Host impls ("cpu") map their buffers and so run on any engine: they serve
    // shape_of subgraphs and ops a device has no kernel for.
    if (params.engine && params.engine->info().type != impl_type && impl_type != "cpu")
        return "runs on '" + impl_type + "', the engine is '" + params.engine->info().type + "'";
    if (!dtypes.empty()) {
        auto allowed = [&](DataType t) { return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); };
        if (!params.inputs.empty() && !allowed(params.inputs[0].dtype))
            return std::string("input 0 has dtype ") + to_string(params.inputs[0].dtype) +
                   ", supported: " + dtype_list(dtypes);
        if (!params.outputs.empty() && !allowed(params.outputs[0].dtype))
            return std::string("output 0 has dtype ") + to_string(params.outputs[0].dtype) +
                   ", supported: " + dtype_list(dtypes);
    }
    if (!params.fused_ops.empty() && !fused_ops) return "does not apply fused post-ops";
    if (!formats.empty()) {
        auto allowed = [&](Format f) { return std::find(formats.begin(), formats.end(), f) != formats.end(); };
        for (size_t i = 0; i < params.inputs.size(); ++i)
            if (!allowed(params.inputs[i].format))
                return "input " + std::to_string(i) + " has format " + to_string(params.inputs[i].format) +
                       ", which this impl does not take";
        for (size_t i = 0; i < params.outputs.size(); ++i)
            if (!allowed(params.outputs[i].format))
                return "output " + std::to_string(i) + " has format " + to_string(params.outputs[i].format) +
                       ", which this impl does not take";
    }
    if (validate) return validate(params);
    return {};
}

// ---- Registry ---------------------------------------------------------------

Registry::Registry() = default;

Registry::~Registry() { clear(); }

void Registry::clear() {
    // Move everything out under the lock, then destroy in a fixed order: entries
    // (whose std::functions live in module code) first, module records (which
    // hold the libraries) last.
    std::map<std::string, RegisteredOp> ops;
    std::map<std::string, std::vector<RegisteredImpl>> impls;
    std::map<std::string, EngineEntry> engines;
    std::vector<std::shared_ptr<const ModuleRecord>> modules;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ops.swap(ops_);
        impls.swap(impls_);
        engines.swap(engines_);
        modules.swap(modules_);
    }
    impls.clear();
    engines.clear();
    ops.clear();
    modules.clear();
}

const RegisteredOp* Registry::find_op(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ops_.find(name);
    return it == ops_.end() ? nullptr : &it->second;
}

const RegisteredOp& Registry::op(const std::string& name) const {
    if (const RegisteredOp* r = find_op(name)) return *r;
    const std::vector<std::string> known = op_names();
    ErrorContext ctx;
    ctx.field = "op";
    throw Error("unknown op '" + name + "'" +
                    (known.empty() ? std::string(" (no ops are registered: were the modules loaded?)")
                                   : " (known ops: " + join(known) + ")"),
                ctx);
}

std::vector<const RegisteredImpl*> Registry::impls(const std::string& op, const std::string& impl_type) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const RegisteredImpl*> out;
    auto it = impls_.find(op);
    if (it == impls_.end()) return out;
    for (const RegisteredImpl& r : it->second)
        if (r.entry.impl_type == impl_type) out.push_back(&r);
    return out;
}

std::vector<const RegisteredImpl*> Registry::all_impls(const std::string& op) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const RegisteredImpl*> out;
    auto it = impls_.find(op);
    if (it == impls_.end()) return out;
    for (const RegisteredImpl& r : it->second) out.push_back(&r);
    return out;
}

std::vector<std::string> Registry::op_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& kv : ops_) out.push_back(kv.first);
    return out;
}

std::vector<std::string> Registry::engine_names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& kv : engines_) out.push_back(kv.first);
    return out;
}

bool Registry::has_engine(const std::string& type) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return engines_.count(type) != 0;
}

EnginePtr Registry::create_engine(const std::string& type, const EngineConfig& cfg) const {
    EngineFactory factory;
    std::shared_ptr<void> library;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = engines_.find(type);
        if (it == engines_.end()) {
            std::vector<std::string> known;
            for (const auto& kv : engines_) known.push_back(kv.first);
            ErrorContext ctx;
            ctx.field = "device";
            throw Error("unknown device '" + type + "'" +
                            (known.empty() ? std::string(" (no device modules are loaded)")
                                           : " (available: " + join(known) + ")"),
                        ctx);
        }
        factory = it->second.factory;
        library = it->second.library;
    }
    EnginePtr engine = factory(cfg);
    if (!engine) throw Error("the module for device '" + type + "' returned no engine");
    // The engine's code lives in the module: the handed-out pointer keeps the
    // library alive and releases the engine before the library.
    Engine* raw = engine.get();
    return EnginePtr(raw, [engine, library](Engine*) mutable {
        engine.reset();
        library.reset();
    });
}

std::vector<std::shared_ptr<const ModuleRecord>> Registry::modules() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return modules_;
}

ImplPtr Registry::hold(std::unique_ptr<Impl> impl, std::shared_ptr<void> library) {
    if (!impl) return nullptr;
    Impl* raw = impl.release();
    // The deleter deletes the impl (virtual destructor in the module) and only
    // then drops its reference to the library.
    return ImplPtr(raw, [library](Impl* p) mutable {
        delete p;
        library.reset();
    });
}

void Registry::add_op(RegisteredOp op) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string name = op.def.name;
    auto it = ops_.find(name);
    if (it != ops_.end()) {
        ErrorContext ctx;
        ctx.file = module_path(op.module);
        throw Error("op '" + name + "' is registered by both " + module_path(it->second.module) + " and " +
                        module_path(op.module),
                    ctx);
    }
    for (const ImportRule& rule : op.def.imports) {
        const FoundImport other = find_import_locked(rule.format, rule.op_type);
        if (other.rule) {
            ErrorContext ctx;
            ctx.file = module_path(op.module);
            throw Error(rule.format + " op '" + rule.op_type + "' is imported by both op '" + other.op->def.name +
                            "' (" + module_path(other.op->module) + ") and op '" + name + "' (" +
                            module_path(op.module) + ")",
                        ctx);
        }
    }
    ops_.emplace(name, std::move(op));
}

FoundImport Registry::find_import_locked(const std::string& format, const std::string& op_type) const {
    for (const auto& kv : ops_)
        for (const ImportRule& rule : kv.second.def.imports)
            if (rule.format == format && rule.op_type == op_type) return {&kv.second, &rule};
    return {};
}

FoundImport Registry::find_import(const std::string& format, const std::string& op_type) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return find_import_locked(format, op_type);
}

std::vector<FoundImport> Registry::imports(const std::string& format) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, FoundImport> sorted;
    for (const auto& kv : ops_)
        for (const ImportRule& rule : kv.second.def.imports)
            if (rule.format == format) sorted[rule.op_type] = {&kv.second, &rule};
    std::vector<FoundImport> out;
    for (const auto& kv : sorted) out.push_back(kv.second);
    return out;
}

void Registry::add_impl(RegisteredImpl impl) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& list = impls_[impl.op];
    for (const RegisteredImpl& r : list) {
        if (r.entry.name == impl.entry.name) {
            ErrorContext ctx;
            ctx.file = module_path(impl.module);
            throw Error("impl '" + impl.entry.name + "' of op '" + impl.op + "' is registered by both " +
                            module_path(r.module) + " and " + module_path(impl.module),
                        ctx);
        }
    }
    // Kept in priority order, so that lookups hand out the list as it is.
    const auto at = std::upper_bound(list.begin(), list.end(), impl, tried_before);
    list.insert(at, std::move(impl));
}

void Registry::add_engine(const std::string& type, EngineFactory f, std::shared_ptr<const ModuleRecord> m,
                          std::shared_ptr<void> library) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = engines_.find(type);
    if (it != engines_.end()) {
        ErrorContext ctx;
        ctx.file = module_path(m);
        throw Error(
            "device '" + type + "' is registered by both " + module_path(it->second.module) + " and " + module_path(m),
            ctx);
    }
    engines_.emplace(type, EngineEntry{std::move(f), std::move(m), std::move(library)});
}

void Registry::add_module(std::shared_ptr<const ModuleRecord> m) {
    std::lock_guard<std::mutex> lock(mutex_);
    modules_.push_back(std::move(m));
}

// ---- ModuleRegistrar ----------------------------------------------------------

ModuleRegistrar::ModuleRegistrar(Registry& registry, std::shared_ptr<ModuleRecord> module)
    : registry_(registry), module_(std::move(module)) {
    if (!module_) module_ = std::make_shared<ModuleRecord>();
}

void ModuleRegistrar::add_op(OpDefinition def) {
    if (def.name.empty()) throw Error("a module registered an op without a name");
    if (!def.infer) throw Error("op '" + def.name + "' has no shape-inference function");
    ops_.push_back(std::move(def));
}

void ModuleRegistrar::add_impl(const std::string& op, ImplEntry entry) {
    if (entry.name.empty()) throw Error("an impl of op '" + op + "' has no name");
    if (!entry.create) throw Error("impl '" + entry.name + "' of op '" + op + "' has no create function");
    impls_.emplace_back(op, std::move(entry));
}

void ModuleRegistrar::add_engine(const std::string& type, EngineFactory factory) {
    if (!factory) throw Error("device '" + type + "' has no factory");
    engines_.emplace_back(type, std::move(factory));
}

void ModuleRegistrar::commit() {
    const std::string& path = module_->path;
    ErrorContext ctx;
    ctx.file = path;
    // Check every conflict before adding anything, so that a refused module
    // leaves the registry as it was.
    std::set<std::string> new_ops;
    for (const OpDefinition& d : ops_) {
        if (!new_ops.insert(d.name).second) throw Error("op '" + d.name + "' is registered twice by " + path, ctx);
        if (const RegisteredOp* old = registry_.find_op(d.name))
            throw Error("op '" + d.name + "' is registered by both " + module_path(old->module) + " and " + path, ctx);
    }
    std::set<std::pair<std::string, std::string>> new_impls;
    for (const auto& pi : impls_) {
        if (!new_impls.insert({pi.first, pi.second.name}).second)
            throw Error("impl '" + pi.second.name + "' of op '" + pi.first + "' is registered twice by " + path, ctx);
        for (const RegisteredImpl* old : registry_.all_impls(pi.first))
            if (old->entry.name == pi.second.name)
                throw Error("impl '" + pi.second.name + "' of op '" + pi.first + "' is registered by both " +
                                module_path(old->module) + " and " + path,
                            ctx);
    }
    std::set<std::string> new_engines;
    for (const auto& pe : engines_) {
        if (!new_engines.insert(pe.first).second || registry_.has_engine(pe.first))
            throw Error("device '" + pe.first + "' is registered twice (again by " + path + ")", ctx);
    }

    for (const OpDefinition& d : ops_) module_->ops.push_back(d.name);
    for (const auto& pi : impls_) module_->impls.emplace_back(pi.first, pi.second.name);
    for (const auto& pe : engines_) module_->engines.push_back(pe.first);
    std::shared_ptr<const ModuleRecord> record = module_;
    std::shared_ptr<void> library = module_->library;

    for (OpDefinition& d : ops_) registry_.add_op(RegisteredOp{std::move(d), record, library});
    for (auto& pi : impls_) registry_.add_impl(RegisteredImpl{std::move(pi.second), pi.first, record, library});
    for (auto& pe : engines_) registry_.add_engine(pe.first, std::move(pe.second), record, library);
    registry_.add_module(record);
    ops_.clear();
    impls_.clear();
    engines_.clear();
}

// ---- module entry-point helper ----------------------------------------------

namespace detail {

namespace {
void write_message(char* error, size_t size, const char* msg) {
    if (!error || size == 0) return;
    std::strncpy(error, msg, size - 1);
    error[size - 1] = '\0';
}
}   // namespace

int run_module_register(void (*fn)(ModuleRegistrar&), ModuleRegistrar* r, char* error, size_t size) noexcept {
    // No exception may cross the module boundary (P10): everything becomes a
    // status code and a message the loader turns back into a dynrt::Error.
    try {
        if (!r) {
            write_message(error, size, "null registrar");
            return 1;
        }
        fn(*r);
        return 0;
    } catch (const std::exception& e) {
        write_message(error, size, e.what());
    } catch (...) {
        write_message(error, size, "unknown exception");
    }
    return 1;
}

}   // namespace detail

}   // namespace dynrt
