// The module ABI: what a dynrt module (op or device plugin) exports.
//
// A module is a shared object exporting exactly two C symbols:
//   dynrt_module_info_v1()      -> const DynrtModuleInfo*   (no side effects)
//   dynrt_module_register_v1(r) -> 0 on success, else writes a message
// The loader calls the first, checks the ABI version and the build fingerprint
// against the host's before anything else, and only then calls the second. No
// exception crosses the boundary: DYNRT_MODULE catches everything. Nothing is
// registered by static initialisers. See docs/module-abi.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dynrt/registry.hpp"
#include "dynrt/sdk_id.hpp"

#define DYNRT_MODULE_ABI_VERSION 1

#define DYNRT_STR2(x) #x
#define DYNRT_STR(x) DYNRT_STR2(x)

#if defined(__clang__)
#define DYNRT_COMPILER_ID "clang-" DYNRT_STR(__clang_major__)
#elif defined(__GNUC__)
#define DYNRT_COMPILER_ID "gcc-" DYNRT_STR(__GNUC__)
#else
#define DYNRT_COMPILER_ID "cc"
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define DYNRT_CXXABI_ID "cxx11abi" DYNRT_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define DYNRT_CXXABI_ID "cxx11abi?"
#endif
#if defined(_GLIBCXX_RELEASE)
#define DYNRT_STDLIB_ID "libstdc++" DYNRT_STR(_GLIBCXX_RELEASE)
#elif defined(_LIBCPP_VERSION)
#define DYNRT_STDLIB_ID "libc++" DYNRT_STR(_LIBCPP_VERSION)
#else
#define DYNRT_STDLIB_ID "stdlib?"
#endif
#if defined(_GLIBCXX_DEBUG)
#define DYNRT_DEBUGSTL_ID "+debugstl"
#else
#define DYNRT_DEBUGSTL_ID ""
#endif

// Everything that must match between host and module for C++ types to be passed
// across: ABI version, compiler family, standard library and its string ABI,
// pointer width, and the digest of the public headers the module was built with.
#define DYNRT_BUILD_FINGERPRINT                                                               \
    "dynrt-abi" DYNRT_STR(DYNRT_MODULE_ABI_VERSION) "/" DYNRT_COMPILER_ID "/" DYNRT_STDLIB_ID \
                                                    "/" DYNRT_CXXABI_ID DYNRT_DEBUGSTL_ID     \
                                                    "/ptr" DYNRT_STR(__SIZEOF_POINTER__) "/sdk-" DYNRT_SDK_ID

extern "C" {
struct DynrtModuleInfo {
    uint32_t struct_size;      // sizeof(DynrtModuleInfo) of the module's build
    uint32_t abi_version;      // DYNRT_MODULE_ABI_VERSION of the module's build
    const char* fingerprint;   // DYNRT_BUILD_FINGERPRINT of the module's build
    const char* name;          // module name, e.g. "cumsum"
};
typedef const DynrtModuleInfo* (*DynrtModuleInfoFn)();
typedef int (*DynrtModuleRegisterFn)(dynrt::ModuleRegistrar* registrar, char* error, size_t error_size);
}

#define DYNRT_MODULE_INFO_SYMBOL "dynrt_module_info_v1"
#define DYNRT_MODULE_REGISTER_SYMBOL "dynrt_module_register_v1"

namespace dynrt::detail {
int run_module_register(void (*fn)(ModuleRegistrar&), ModuleRegistrar* r, char* error, size_t size) noexcept;
}

// Defines a module's two entry points. `register_fn` is `void f(dynrt::ModuleRegistrar&)`.
#define DYNRT_MODULE(module_name, register_fn)                                                                        \
    extern "C" __attribute__((visibility("default"))) const DynrtModuleInfo* dynrt_module_info_v1() {                 \
        static const DynrtModuleInfo info{sizeof(DynrtModuleInfo), DYNRT_MODULE_ABI_VERSION, DYNRT_BUILD_FINGERPRINT, \
                                          module_name};                                                               \
        return &info;                                                                                                 \
    }                                                                                                                 \
    extern "C" __attribute__((visibility("default"))) int dynrt_module_register_v1(dynrt::ModuleRegistrar* registrar, \
                                                                                   char* error, size_t error_size) {  \
        return dynrt::detail::run_module_register(&register_fn, registrar, error, error_size);                        \
    }
