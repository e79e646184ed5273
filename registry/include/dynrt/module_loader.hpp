// ModuleLoader: finds and loads dynrt modules (Boost.DLL) into a Registry.
//
// Search path: the folder `<dir of the executable>/../lib/dynrt`, unless folders
// are given explicitly (--modules-dir, repeatable) or through DYNRT_MODULE_PATH
// (colon-separated); either replaces the default. Every `*.so` in each folder is
// a candidate. Before dlopen sees a file, the loader reads its ELF headers itself
// (class, byte order and machine of this host; every loadable segment, the
// section table and the dynamic symbol table inside the file; the info entry
// point a function), so a truncated file, which dlopen would map past its end
// (SIGBUS), or a data object named like the entry point is refused with a
// reason. Loading is serialised by one mutex, uses RTLD_NOW and absolute
// paths, checks the ABI version and fingerprint before calling the register entry
// point, and reports a bad module without stopping the others.
#pragma once

#include <string>
#include <vector>

#include "dynrt/registry.hpp"

namespace dynrt {

struct LoadFailure {
    std::string path;
    std::string message;   // names the file, what went wrong and what to rebuild
};

struct LoadReport {
    std::vector<std::string> loaded;   // absolute paths
    std::vector<LoadFailure> failed;
};

class ModuleLoader {
public:
    // Default module folder of this process: <exe dir>/../lib/dynrt.
    static std::string default_module_dir();
    // Folders to search: `explicit_dirs` if non-empty, else DYNRT_MODULE_PATH if
    // set, else the default folder.
    static std::vector<std::string> search_path(const std::vector<std::string>& explicit_dirs);

    // Loads one module file. Throws dynrt::Error (file = path) on failure; the
    // registry is unchanged then.
    static void load_file(Registry& registry, const std::string& path);
    // Loads every *.so of every folder (sorted by name). Failures are collected,
    // not thrown; a folder that does not exist is a failure too.
    static LoadReport load_dirs(Registry& registry, const std::vector<std::string>& dirs);
};

}   // namespace dynrt
