// Reads a module file's ELF headers with plain reads, every offset and size
// bounds-checked against the file's length, before dlopen maps it (why: see
// module_elf.hpp). Only this process's own ELF class and byte order get past
// the first check, so the rest reads the native structures (ElfW).
#include "module_elf.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dynrt::detail {

namespace {

using Ehdr = ElfW(Ehdr);
using Phdr = ElfW(Phdr);
using Shdr = ElfW(Shdr);
using Sym = ElfW(Sym);

constexpr bool kHost64 = sizeof(void*) == 8;
constexpr unsigned char kHostData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

const char* const kCutShort =
    ". The file was cut short or damaged (an interrupted copy or install, a full disk): reinstall or rebuild the "
    "module";

// ELF e_machine values of the architectures dynrt builds for, by name.
std::string machine_name(uint16_t m) {
    switch (m) {
        case EM_386: return "x86 (32-bit)";
        case EM_ARM: return "arm (32-bit)";
        case EM_X86_64: return "x86_64";
        case EM_AARCH64: return "aarch64";
        case EM_RISCV: return "riscv";
        default: return "ELF machine " + std::to_string(m);
    }
}

uint16_t host_machine() {
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#elif defined(__i386__)
    return EM_386;
#elif defined(__arm__)
    return EM_ARM;
#elif defined(__riscv)
    return EM_RISCV;
#else
    return 0;
#endif
}

// A read-only file descriptor and the file's size; reads outside the file fail.
class ElfFile {
public:
    explicit ElfFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        struct stat st {};
        if (fd_ < 0) {
            error_ = std::strerror(errno);
        } else if (::fstat(fd_, &st) != 0) {
            error_ = std::strerror(errno);
        } else {
            size_ = static_cast<uint64_t>(st.st_size);
        }
    }
    ~ElfFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;

    const std::string& error() const { return error_; }
    uint64_t size() const { return size_; }
    // [off, off + len) inside the file, without overflowing.
    bool within(uint64_t off, uint64_t len) const { return off <= size_ && len <= size_ - off; }
    bool read(uint64_t off, void* out, uint64_t len) const {
        if (!within(off, len)) return false;
        auto* p = static_cast<char*>(out);
        while (len > 0) {
            const ssize_t n = ::pread(fd_, p, len, static_cast<off_t>(off));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            p += n;
            off += static_cast<uint64_t>(n);
            len -= static_cast<uint64_t>(n);
        }
        return true;
    }

private:
    int fd_ = -1;
    uint64_t size_ = 0;
    std::string error_;
};

std::string range(uint64_t off, uint64_t len) {
    return std::to_string(len) + " bytes at offset " + std::to_string(off);
}

std::string past_end(const std::string& what, uint64_t off, uint64_t len, uint64_t size) {
    return "truncated: " + what + " (" + range(off, len) + ") ends past the end of the file (" + std::to_string(size) +
           " bytes)" + kCutShort;
}

std::string damaged(const std::string& what) { return "damaged ELF file: " + what + kCutShort; }

// The NUL-terminated string at `off` of a string table, or nullptr.
const char* string_at(const std::vector<char>& table, uint64_t off) {
    if (off >= table.size()) return nullptr;
    const void* nul = std::memchr(table.data() + off, '\0', table.size() - off);
    return nul ? table.data() + off : nullptr;
}

std::string symbol_type_name(unsigned t) {
    switch (t) {
        case STT_NOTYPE: return "a symbol without type (STT_NOTYPE)";
        case STT_OBJECT: return "a data object (STT_OBJECT)";
        case STT_SECTION: return "a section (STT_SECTION)";
        case STT_FILE: return "a file name (STT_FILE)";
        case STT_COMMON: return "a common data object (STT_COMMON)";
        case STT_TLS: return "a thread-local data object (STT_TLS)";
        case STT_GNU_IFUNC: return "an indirect function (STT_GNU_IFUNC)";
        default: return "a symbol of type " + std::to_string(t);
    }
}

// Header identity: magic, class, byte order, machine. Reads only e_ident and
// e_machine, which sit at the same offsets in both classes.
std::string check_identity(const ElfFile& f) {
    unsigned char h[20] = {};
    if (!f.read(0, h, 4) || std::memcmp(h, ELFMAG, SELFMAG) != 0)
        return "not a shared object (not an ELF file): remove it from the module folder";
    if (!f.read(0, h, sizeof h)) return past_end("the ELF header", 0, sizeof(Ehdr), f.size());
    const bool little = h[EI_DATA] == ELFDATA2LSB;
    const uint16_t machine =
        little ? static_cast<uint16_t>(h[18] | (h[19] << 8)) : static_cast<uint16_t>((h[18] << 8) | h[19]);
    const uint16_t host = host_machine();
    const bool is64 = h[EI_CLASS] == ELFCLASS64;
    if (is64 != kHost64 || (host != 0 && machine != host) || h[EI_DATA] != kHostData) {
        std::string order;
        if (h[EI_DATA] != kHostData) order = little ? ", little-endian" : ", big-endian";
        return "built for " + machine_name(machine) + (is64 ? " (64-bit" : " (32-bit") + order +
               "), this dynrt runs on " + machine_name(host) + ": build the module for this machine";
    }
    if (h[EI_VERSION] != EV_CURRENT) return damaged("ELF version " + std::to_string(h[EI_VERSION]));
    return {};
}

}   // namespace

std::string elf_module_problem(const std::string& path, const char* const* functions, size_t count) {
    const ElfFile f(path);
    if (!f.error().empty()) return "cannot be opened: " + f.error();
    if (std::string why = check_identity(f); !why.empty()) return why;

    Ehdr eh{};
    if (!f.read(0, &eh, sizeof eh)) return past_end("the ELF header", 0, sizeof eh, f.size());
    if (eh.e_type != ET_DYN)
        return std::string("not a shared object (") +
               (eh.e_type == ET_EXEC   ? "an executable"
                : eh.e_type == ET_REL  ? "an object file, not linked"
                : eh.e_type == ET_CORE ? "a core dump"
                                       : "ELF type " + std::to_string(eh.e_type)) +
               "): a module is a shared library (dynrt_add_module builds one)";

    // Program headers: what dlopen maps.
    if (eh.e_phnum == 0) return damaged("no program headers (nothing to load)");
    if (eh.e_phentsize != sizeof(Phdr))
        return damaged("program header entries of " + std::to_string(eh.e_phentsize) + " bytes, not " +
                       std::to_string(sizeof(Phdr)));
    const uint64_t ph_bytes = uint64_t{eh.e_phnum} * sizeof(Phdr);
    std::vector<Phdr> ph(eh.e_phnum);
    if (!f.read(eh.e_phoff, ph.data(), ph_bytes))
        return past_end("the program header table", eh.e_phoff, ph_bytes, f.size());
    size_t loads = 0;
    bool dynamic = false;
    for (size_t k = 0; k < ph.size(); ++k) {
        const Phdr& p = ph[k];
        if (p.p_type != PT_LOAD && p.p_type != PT_DYNAMIC) continue;
        const std::string what =
            std::string(p.p_type == PT_LOAD ? "loadable segment " : "dynamic segment ") + std::to_string(k);
        if (!f.within(p.p_offset, p.p_filesz)) return past_end(what, p.p_offset, p.p_filesz, f.size());
        if (p.p_type == PT_LOAD) {
            if (p.p_filesz > p.p_memsz)
                return damaged(what + " holds more file bytes (" + std::to_string(p.p_filesz) + ") than it maps (" +
                               std::to_string(p.p_memsz) + ")");
            ++loads;
        } else {
            dynamic = true;
        }
    }
    if (loads == 0) return damaged("no loadable segment");
    if (!dynamic) return "not a shared object (no dynamic segment): a module is a shared library";

    // Section headers: where the dynamic symbol table is described.
    if (eh.e_shnum == 0)
        return "has no section header table (stripped with sstrip?): dynrt reads the entry points' symbol types "
               "from it; rebuild the module without removing it";
    if (eh.e_shentsize != sizeof(Shdr))
        return damaged("section header entries of " + std::to_string(eh.e_shentsize) + " bytes, not " +
                       std::to_string(sizeof(Shdr)));
    const uint64_t sh_bytes = uint64_t{eh.e_shnum} * sizeof(Shdr);
    std::vector<Shdr> sh(eh.e_shnum);
    if (!f.read(eh.e_shoff, sh.data(), sh_bytes))
        return past_end("the section header table", eh.e_shoff, sh_bytes, f.size());
    std::vector<char> names;
    if (eh.e_shstrndx < sh.size() && sh[eh.e_shstrndx].sh_type == SHT_STRTAB &&
        f.within(sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size)) {
        names.resize(sh[eh.e_shstrndx].sh_size);
        if (!f.read(sh[eh.e_shstrndx].sh_offset, names.data(), names.size())) names.clear();
    }
    auto section_name = [&](size_t k) {
        const char* n = string_at(names, sh[k].sh_name);
        return "section " + std::to_string(k) + (n && *n ? std::string(" (") + n + ")" : std::string());
    };
    for (size_t k = 1; k < sh.size(); ++k) {
        if (sh[k].sh_type == SHT_NOBITS || sh[k].sh_type == SHT_NULL) continue;
        if (!f.within(sh[k].sh_offset, sh[k].sh_size))
            return past_end(section_name(k), sh[k].sh_offset, sh[k].sh_size, f.size());
    }

    // The dynamic symbols and their names (sizes are inside the file: checked above).
    size_t dynsym = 0;
    for (size_t k = 1; k < sh.size() && dynsym == 0; ++k)
        if (sh[k].sh_type == SHT_DYNSYM) dynsym = k;
    if (dynsym == 0) return "not a shared object (no dynamic symbol table): a module exports its entry points";
    const Shdr& ds = sh[dynsym];
    if (ds.sh_entsize != sizeof(Sym) || ds.sh_size % sizeof(Sym) != 0)
        return damaged(section_name(dynsym) + " has entries of " + std::to_string(ds.sh_entsize) + " bytes, not " +
                       std::to_string(sizeof(Sym)));
    if (ds.sh_link == 0 || ds.sh_link >= sh.size() || sh[ds.sh_link].sh_type != SHT_STRTAB)
        return damaged(section_name(dynsym) + " links to no string table (" + std::to_string(ds.sh_link) + ")");
    std::vector<Sym> syms(ds.sh_size / sizeof(Sym));
    std::vector<char> strtab(sh[ds.sh_link].sh_size);
    if (!f.read(ds.sh_offset, syms.data(), ds.sh_size) ||
        !f.read(sh[ds.sh_link].sh_offset, strtab.data(), strtab.size()))
        return damaged("the dynamic symbol table cannot be read");

    for (size_t n = 0; n < count; ++n) {
        for (const Sym& s : syms) {
            const char* name = string_at(strtab, s.st_name);
            if (s.st_shndx == SHN_UNDEF || name == nullptr || std::strcmp(name, functions[n]) != 0) continue;
            const unsigned type = ELF64_ST_TYPE(s.st_info);
            if (type != STT_FUNC)
                return std::string("its entry point ") + functions[n] + " is " + symbol_type_name(type) +
                       ", not a function: calling it would crash. Not a dynrt module (DYNRT_MODULE defines the "
                       "entry points as functions): remove it from the module folder";
            bool in_code = false;
            for (const Phdr& p : ph)
                if (p.p_type == PT_LOAD && (p.p_flags & PF_X) && s.st_shndx != SHN_ABS && s.st_value >= p.p_vaddr &&
                    s.st_value - p.p_vaddr < p.p_filesz)
                    in_code = true;
            if (!in_code)
                return damaged(std::string("its entry point ") + functions[n] +
                               " lies outside the module's executable code");
            break;
        }
    }
    return {};
}

}   // namespace dynrt::detail
