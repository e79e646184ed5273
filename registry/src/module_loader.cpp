// ModuleLoader: the only place that touches Boost.DLL (P8 of the
// plugin-systems reference); modules never see Boost types.
//
// Order of checks for one file, each with its own message (docs/module-abi.md):
// exists -> trusted owner and mode -> its ELF headers are sound and its entry
// points functions (module_elf.cpp) -> loads with RTLD_NOW -> exports the info
// entry point -> ABI version and fingerprint match -> exports the register entry
// point -> registering succeeds -> nothing conflicts with what is loaded.
#include "dynrt/module_loader.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "module_elf.hpp"

namespace fs = std::filesystem;

namespace dynrt {

namespace {

// dlopen is not reentrant-safe everywhere and registration must not interleave
// (P18): one mutex for every load in the process.
std::mutex& loader_mutex() {
    static std::mutex m;
    return m;
}

const char* const kRebuild = "rebuild the module against this dynrt SDK";

// Boost 1.74 reports "<what> (dlerror system message: <text>): <errc text>",
// where the errc text is unrelated to the failure; keep only dlerror's text,
// without the file name it starts with (the error context already names it).
std::string dlerror_text(const std::system_error& e, const std::string& path) {
    std::string s = e.what();
    const std::string suffix = ": " + e.code().message();
    if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
        s.erase(s.size() - suffix.size());
    const std::string marker = "(dlerror system message: ";
    const size_t at = s.find(marker);
    if (at == std::string::npos) return s;
    s = s.substr(at + marker.size());
    if (!s.empty() && s.back() == ')') s.pop_back();
    if (s.compare(0, path.size() + 2, path + ": ") == 0) s.erase(0, path.size() + 2);
    return s;
}

std::string str_or(const char* s, const char* fallback) { return s ? std::string(s) : std::string(fallback); }

// Anyone who can write a module file, or the folder it sits in, runs code in
// every dynrt process that loads it. Refused unless the user says otherwise.
const char* const kAllowInsecure = "DYNRT_ALLOW_INSECURE_MODULES";

bool insecure_allowed() {
    const char* v = std::getenv(kAllowInsecure);
    return v && std::string(v) == "1";
}

// Why `p` (a module file or folder) is unsafe to load code from, or "".
std::string unsafe_owner_or_mode(const fs::path& p, const char* what) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return {};
    if (st.st_mode & S_IWOTH)
        return std::string("the ") + what + " is world-writable (anyone could replace the code dynrt runs)";
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
        return std::string("the ") + what + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
    return {};
}

void check_trusted(const fs::path& p, const char* what, const ErrorContext& where) {
    if (insecure_allowed()) return;
    const std::string why = unsafe_owner_or_mode(p, what);
    if (!why.empty())
        throw Error("refused: " + why + ". Fix its owner or mode, or set " + kAllowInsecure + "=1 to load it anyway",
                    where);
}

}   // namespace

std::string ModuleLoader::default_module_dir() {
    const fs::path exe = boost::dll::program_location();
    return (exe.parent_path() / ".." / "lib" / "dynrt").lexically_normal().string();
}

std::vector<std::string> ModuleLoader::search_path(const std::vector<std::string>& explicit_dirs) {
    if (!explicit_dirs.empty()) return explicit_dirs;
    if (const char* env = std::getenv("DYNRT_MODULE_PATH")) {
        std::vector<std::string> dirs;
        std::string item;
        for (const char* c = env;; ++c) {
            if (*c == ':' || *c == '\0') {
                if (!item.empty()) dirs.push_back(item);
                item.clear();
                if (*c == '\0') break;
            } else {
                item += *c;
            }
        }
        if (!dirs.empty()) return dirs;
    }
    return {default_module_dir()};
}

namespace {

// The file is a regular, trusted file in a trusted folder whose ELF headers
// hold both entry points. dlopen trusts the file's headers: a truncated
// module would be mapped past its end (SIGBUS), a data object named like an
// entry point called as code. Read them first (module_elf.hpp).
void check_module_file(const fs::path& path, const ErrorContext& where) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(ec ? "cannot be opened: " + ec.message() : "no such module file", where);
    if (!fs::is_regular_file(path, ec)) throw Error("not a regular file", where);
    check_trusted(path, "module file", where);
    check_trusted(path.parent_path(), "module folder", where);
    const char* const entry_points[] = {DYNRT_MODULE_INFO_SYMBOL, DYNRT_MODULE_REGISTER_SYMBOL};
    const std::string elf = detail::elf_module_problem(path.string(), entry_points, 2);
    if (!elf.empty()) throw Error(elf, where);
}

// rtld_now: a missing symbol fails here, catchably, instead of killing the
// process at the first call (P5).
std::shared_ptr<boost::dll::shared_library> open_module(const fs::path& path, const ErrorContext& where) {
    auto library = std::make_shared<boost::dll::shared_library>();
    try {
        library->load(path, boost::dll::load_mode::rtld_now);
    } catch (const std::system_error& e) {
        const std::string why = dlerror_text(e, path.string());
        // A library the module needs is not found ("libX.so.0: cannot open
        // shared object file"): a search-path problem, not a bad module.
        const size_t missing = why.find(": cannot open shared object file");
        if (missing != std::string::npos)
            throw Error("cannot be loaded: it needs " + why.substr(0, missing) +
                            ", which is not found in the module's RUNPATH, LD_LIBRARY_PATH or the system's library "
                            "folders (" +
                            why + "). Install that library, or add its folder to LD_LIBRARY_PATH",
                        where);
        throw Error("cannot be loaded: " + why + ". A module must link only against symbols of dynrt and its own " +
                        "dependencies: " + kRebuild +
                        " (dynrt_add_module links with --no-undefined to catch this at build time)",
                    where);
    }
    return library;
}

// The module's info, refused unless its ABI and build fingerprint are this
// dynrt's. The first two fields are the same in every ABI version; the rest
// is read only when the version and size say the layout is ours.
const DynrtModuleInfo& checked_info(boost::dll::shared_library& library, const ErrorContext& where) {
    if (!library.has(DYNRT_MODULE_INFO_SYMBOL))
        throw Error(std::string("lacks the entry point ") + DYNRT_MODULE_INFO_SYMBOL +
                        ": not a dynrt module, or built against an SDK older than ABI " +
                        std::to_string(DYNRT_MODULE_ABI_VERSION) + " (use DYNRT_MODULE to define it)",
                    where);
    auto& info_fn = library.get<const DynrtModuleInfo*()>(DYNRT_MODULE_INFO_SYMBOL);
    const DynrtModuleInfo* info = info_fn();
    if (!info) throw Error(std::string(DYNRT_MODULE_INFO_SYMBOL) + " returned null: " + kRebuild, where);
    const std::string host_fp = DYNRT_BUILD_FINGERPRINT;
    const bool layout_ok =
        info->abi_version == DYNRT_MODULE_ABI_VERSION && info->struct_size >= sizeof(DynrtModuleInfo);
    const std::string module_fp = layout_ok ? str_or(info->fingerprint, "<none>") : std::string("<unknown>");
    if (!layout_ok || module_fp != host_fp)
        throw Error("built for ABI " + std::to_string(info->abi_version) + " / fingerprint " + module_fp +
                        ", this dynrt is ABI " + std::to_string(DYNRT_MODULE_ABI_VERSION) + " / fingerprint " +
                        host_fp + ": " + kRebuild,
                    where);
    if (!library.has(DYNRT_MODULE_REGISTER_SYMBOL))
        throw Error(std::string("lacks the entry point ") + DYNRT_MODULE_REGISTER_SYMBOL +
                        " (use DYNRT_MODULE to define both entry points): " + kRebuild,
                    where);
    return *info;
}

}   // namespace

void ModuleLoader::load_file(Registry& registry, const std::string& path_in) {
    std::error_code ec;
    // Absolute paths only: Boost 1.74 resolves a bare name against the current
    // directory (P6), and the record should name the file unambiguously.
    fs::path path = fs::absolute(path_in, ec).lexically_normal();
    if (ec) path = fs::path(path_in);
    ErrorContext where;
    where.file = path.string();
    check_module_file(path, where);

    std::lock_guard<std::mutex> lock(loader_mutex());
    auto library = open_module(path, where);
    const DynrtModuleInfo& info = checked_info(*library, where);
    auto& register_fn = library->get<int(dynrt::ModuleRegistrar*, char*, size_t)>(DYNRT_MODULE_REGISTER_SYMBOL);
    auto record = std::make_shared<ModuleRecord>();
    record->path = path.string();
    record->name = str_or(info.name, path.stem().string().c_str());
    record->fingerprint = DYNRT_BUILD_FINGERPRINT;   // checked_info refused any other
    record->library = library;                       // shared_ptr<shared_library> -> shared_ptr<void>

    // Declared after `library`, so the staged entries (whose code lives in the
    // module) are destroyed before a refused module is unloaded.
    ModuleRegistrar registrar(registry, record);
    char message[2048] = {};
    if (register_fn(&registrar, message, sizeof message) != 0)
        throw Error(std::string("threw while registering: ") + (message[0] ? message : "no message") +
                        " (nothing of this module was registered)",
                    where);
    try {
        registrar.commit();
    } catch (const Error& e) {
        throw e.with_context(where);
    }
}

LoadReport ModuleLoader::load_dirs(Registry& registry, const std::vector<std::string>& dirs) {
    LoadReport report;
    for (const std::string& dir : dirs) {
        std::error_code ec;
        const fs::path folder = fs::absolute(dir, ec).lexically_normal();
        if (!fs::is_directory(folder, ec)) {
            report.failed.push_back({folder.string(), folder.string() + ": module folder does not exist"});
            continue;
        }
        std::vector<fs::path> files;
        // No throwing accessors: one bad entry (a symlink loop, a dangling
        // link) is that entry's failure, never the folder's or the command's.
        for (const auto& entry : fs::directory_iterator(folder, ec)) {
            std::error_code entry_ec;
            if (entry.path().extension() == ".so" && !entry.is_directory(entry_ec)) files.push_back(entry.path());
        }
        if (ec) {
            report.failed.push_back({folder.string(), folder.string() + ": cannot list the folder: " + ec.message()});
            continue;
        }
        std::sort(files.begin(), files.end());
        for (const fs::path& f : files) {
            try {
                load_file(registry, f.string());
                report.loaded.push_back(f.string());
            } catch (const std::exception& e) {
                report.failed.push_back({f.string(), e.what()});
            }
        }
    }
    return report;
}

}   // namespace dynrt
