// Registry: op definitions, their implementation lists and device engines, as
// registered by the loaded modules.
//
// Modules fill a Registry only from their explicit entry point, through a
// ModuleRegistrar that stamps each entry with the module it came from and keeps
// that module's library alive for as long as the entry (and every impl created
// from it) exists. Lookups are read-only and thread-safe once loading is done.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt {

// Options handed to engine factories (device index, flags from the CLI).
struct EngineConfig {
    std::string device;   // full device string, e.g. "cpu", "ocl:1"
    bool verbose = false;
    // Compute threads of a host engine (`--threads`, run.threads); 0 = the
    // machine's physical cores. Devices that run their own work ignore it.
    unsigned threads = 0;
};
using EngineFactory = std::function<EnginePtr(const EngineConfig&)>;

// What one module registered; filled by the loader.
struct ModuleRecord {
    std::string path;   // absolute path ("<builtin>" for in-process)
    std::string name;
    std::string fingerprint;
    std::vector<std::string> ops;
    std::vector<std::pair<std::string, std::string>> impls;   // (op, impl name)
    std::vector<std::string> engines;
    std::shared_ptr<void> library;   // keeps the .so mapped
};

struct RegisteredOp {
    OpDefinition def;
    std::shared_ptr<const ModuleRecord> module;
    std::shared_ptr<void> library;
};
// An import rule (dynrt/op_import.hpp) and the op that declares it.
struct FoundImport {
    const RegisteredOp* op = nullptr;
    const ImportRule* rule = nullptr;
};

struct RegisteredImpl {
    ImplEntry entry;
    std::string op;
    std::shared_ptr<const ModuleRecord> module;
    std::shared_ptr<void> library;
};

class Registry {
public:
    Registry();
    ~Registry();   // clears entries before the libraries they hold go
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    const RegisteredOp* find_op(const std::string& name) const;
    const RegisteredOp& op(const std::string& name) const;   // throws "unknown op"
    // Impls of `op` for engine type `impl_type`, in the order they are tried:
    // ImplEntry::effective_priority() descending, ties by impl name, then by
    // module name (never by load order).
    std::vector<const RegisteredImpl*> impls(const std::string& op, const std::string& impl_type) const;
    std::vector<const RegisteredImpl*> all_impls(const std::string& op) const;   // same order, every type
    std::vector<std::string> op_names() const;
    // The rule for model op `op_type` of `format` ("onnx"); both null when no
    // loaded op declares one. `imports` lists every rule of the format, by
    // model op name.
    FoundImport find_import(const std::string& format, const std::string& op_type) const;
    std::vector<FoundImport> imports(const std::string& format) const;
    std::vector<std::string> engine_names() const;
    bool has_engine(const std::string& type) const;
    EnginePtr create_engine(const std::string& type, const EngineConfig& cfg) const;
    std::vector<std::shared_ptr<const ModuleRecord>> modules() const;

    // Wraps an impl created by a module so that it keeps the module loaded.
    static ImplPtr hold(std::unique_ptr<Impl> impl, std::shared_ptr<void> library);

    // Used by ModuleRegistrar / the loader.
    void add_op(RegisteredOp op);         // throws on duplicate (names both modules)
    void add_impl(RegisteredImpl impl);   // throws on duplicate impl name
    void add_engine(const std::string& type, EngineFactory f, std::shared_ptr<const ModuleRecord> m,
                    std::shared_ptr<void> library);
    void add_module(std::shared_ptr<const ModuleRecord> m);
    void clear();

private:
    struct EngineEntry {
        EngineFactory factory;
        std::shared_ptr<const ModuleRecord> module;
        std::shared_ptr<void> library;
    };
    FoundImport find_import_locked(const std::string& format, const std::string& op_type) const;

    mutable std::mutex mutex_;
    std::map<std::string, RegisteredOp> ops_;
    std::map<std::string, std::vector<RegisteredImpl>> impls_;
    std::map<std::string, EngineEntry> engines_;
    std::vector<std::shared_ptr<const ModuleRecord>> modules_;
};

// Handed to a module's entry point. Registrations are staged and committed only
// when the entry point returns successfully, so a module that throws halfway
// leaves nothing behind.
class ModuleRegistrar {
public:
    ModuleRegistrar(Registry& registry, std::shared_ptr<ModuleRecord> module);
    void add_op(OpDefinition def);
    void add_impl(const std::string& op, ImplEntry entry);
    void add_engine(const std::string& type, EngineFactory factory);
    // Everything staged so far goes into the registry (called by the loader).
    void commit();

private:
    Registry& registry_;
    std::shared_ptr<ModuleRecord> module_;
    std::vector<OpDefinition> ops_;
    std::vector<std::pair<std::string, ImplEntry>> impls_;
    std::vector<std::pair<std::string, EngineFactory>> engines_;
};

}   // namespace dynrt
