// A module that calls a function defined nowhere. With lazy binding it would
// load and kill the process at the first call; with rtld_now it must be refused
// at load time.
#include "dynrt/module_abi.hpp"

extern "C" int tm_symbol_defined_nowhere();

namespace {
int g_value = 0;
void register_unresolved(dynrt::ModuleRegistrar&) { g_value = tm_symbol_defined_nowhere(); }
}   // namespace

DYNRT_MODULE("tm_unresolved", register_unresolved)
