// What the benchmark programs share.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "dynrt/module_loader.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::bench {

// The folder modules are loaded from: DYNRT_MODULE_PATH's first folder, else
// <exe>/../lib/dynrt when it holds `probe` (an installed or built tree), else
// the build's module folder (`build_dir`, the target's DYNRT_BENCH_MODULE_DIR).
inline std::string module_dir(const char* probe, const char* build_dir) {
    if (const char* env = std::getenv("DYNRT_MODULE_PATH"); env && *env) {
        const std::string s(env);
        return s.substr(0, s.find(':'));
    }
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto dir = exe.parent_path().parent_path() / "lib" / "dynrt";
        if (std::filesystem::exists(dir / probe)) return dir.string();
    }
    return build_dir;
}

// A registry of every module in `dir`; the modules that fail to load are
// named on stderr (the benchmarks of the others still run).
inline std::shared_ptr<Registry> load_registry(const std::string& dir) {
    auto registry = std::make_shared<Registry>();
    const LoadReport r = ModuleLoader::load_dirs(*registry, {dir});
    for (const LoadFailure& f : r.failed) std::fprintf(stderr, "module %s: %s\n", f.path.c_str(), f.message.c_str());
    return registry;
}

}   // namespace dynrt::bench
