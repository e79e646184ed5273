// What the benchmark programs share.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

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

}   // namespace dynrt::bench
