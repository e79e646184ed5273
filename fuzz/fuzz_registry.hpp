// The registry the harnesses run against: every module of the build's module
// folder (DYNRT_FUZZ_MODULE_DIR), loaded once per process.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "dynrt/module_loader.hpp"
#include "dynrt/registry.hpp"

namespace dynrt::fuzz {

inline std::shared_ptr<const Registry> registry() {
    auto reg = std::make_shared<Registry>();
    const LoadReport r = ModuleLoader::load_dirs(*reg, {DYNRT_FUZZ_MODULE_DIR});
    for (const auto& f : r.failed) std::fprintf(stderr, "fuzz: module not loaded: %s\n", f.message.c_str());
    if (r.loaded.empty()) std::abort();   // a harness without ops would test nothing
    return reg;
}

}   // namespace dynrt::fuzz
