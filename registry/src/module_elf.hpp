// The module loader's own reading of a module file's ELF headers, before the
// file reaches dlopen (registry/src/module_loader.cpp is the only caller).
//
// dlopen trusts the file: it maps every loadable segment at the size the
// program headers claim, so a module cut short by an interrupted install or a
// full disk is mapped past its end and the process dies of SIGBUS on the first
// touch of the missing page, inside dlopen, whatever module it was loading.
// And the loader calls the info entry point found by dlsym, which is whatever
// symbol has that name: a data object there is called as code. This check
// reads the file with plain reads, bounds-checking every offset and size
// against the file's length (the file is hostile), and says what is wrong.
#pragma once

#include <string>

namespace dynrt::detail {

// Why the file at `path` must not be handed to dlopen, or "" when it may.
// Checked, in order: an ELF header (else "not a shared object ..."); class,
// byte order and machine of this process ("built for ..."); a shared object
// (ET_DYN); the program header table, every PT_LOAD and PT_DYNAMIC segment,
// the section header table and every section with contents inside the file
// ("truncated or damaged ..."); a dynamic symbol table with its string table;
// each of `functions` that the file defines there is a function (STT_FUNC)
// whose address lies in an executable segment. A name the file does not
// define is not an error here: the loader reports a missing entry point itself.
std::string elf_module_problem(const std::string& path, const char* const* functions, size_t count);

}   // namespace dynrt::detail
