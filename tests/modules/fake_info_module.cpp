// A module that reports a hand-written DynrtModuleInfo (TM_ABI, TM_FINGERPRINT)
// so the loader's version and fingerprint checks can be tested. Its register
// entry point aborts: the loader must refuse the module before calling it.
#include <cstdlib>

#include "dynrt/module_abi.hpp"

extern "C" __attribute__((visibility("default"))) const DynrtModuleInfo* dynrt_module_info_v1() {
    static const DynrtModuleInfo info{sizeof(DynrtModuleInfo), TM_ABI, TM_FINGERPRINT, "fake_info"};
    return &info;
}

extern "C" __attribute__((visibility("default"))) int dynrt_module_register_v1(dynrt::ModuleRegistrar*, char*, size_t) {
    std::abort();
}
