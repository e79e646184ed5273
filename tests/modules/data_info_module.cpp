// A shared object whose dynrt_module_info_v1 is a data object, not a function:
// dlsym finds it all the same, and calling it jumps into non-executable data.
// The loader must refuse it from the file's symbol table, before dlopen. Its
// register entry point aborts: the loader must never get that far.
#include <cstdlib>

#include "dynrt/module_abi.hpp"

extern "C" {
__attribute__((visibility("default"))) extern const DynrtModuleInfo dynrt_module_info_v1;
const DynrtModuleInfo dynrt_module_info_v1 = {sizeof(DynrtModuleInfo), DYNRT_MODULE_ABI_VERSION,
                                              DYNRT_BUILD_FINGERPRINT, "data_info"};

__attribute__((visibility("default"))) int dynrt_module_register_v1(dynrt::ModuleRegistrar*, char*, size_t) {
    std::abort();
}
}
