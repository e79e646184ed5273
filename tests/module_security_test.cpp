// Module folders as a hostile or careless user leaves them: world-writable
// folders and files, files of another owner, symlink loops, a module built for
// another CPU architecture, a module cut short by an interrupted install, an
// entry point that is data. Each is refused (or skipped) with a message that
// says why and what to do, and never stops the other modules from loading.
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;

namespace {

// A private folder holding a copy of one in-tree module.
class ModuleFolder : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/dynrt_modsec.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        good_ = dir_ / "libdynrt_op_softmax.so";
        fs::copy_file(fs::path(test::module_dir()) / "libdynrt_op_softmax.so", good_);
        fs::permissions(good_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
        ::unsetenv("DYNRT_ALLOW_INSECURE_MODULES");
    }
    void TearDown() override {
        ::unsetenv("DYNRT_ALLOW_INSECURE_MODULES");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // The failure message of `file` in a load of the folder ("" = it loaded).
    std::string load_message(Registry& reg, const fs::path& file) {
        const LoadReport r = ModuleLoader::load_dirs(reg, {dir_.string()});
        for (const auto& f : r.failed)
            if (f.path == file.string()) return f.message;
        return {};
    }
    fs::path dir_, good_;
};

TEST_F(ModuleFolder, WorldWritableFolder_IsRefusedUnlessAllowed) {
    fs::permissions(dir_, fs::perms::others_write, fs::perm_options::add);
    {
        Registry reg;
        const std::string msg = load_message(reg, good_);
        EXPECT_NE(msg.find("module folder is world-writable"), std::string::npos) << msg;
        EXPECT_NE(msg.find("DYNRT_ALLOW_INSECURE_MODULES=1"), std::string::npos) << msg;
        EXPECT_EQ(reg.find_op("softmax"), nullptr);
    }
    ::setenv("DYNRT_ALLOW_INSECURE_MODULES", "1", 1);
    Registry reg;
    EXPECT_EQ(load_message(reg, good_), "");
    EXPECT_NE(reg.find_op("softmax"), nullptr);
}

TEST_F(ModuleFolder, WorldWritableModuleFile_IsRefused) {
    fs::permissions(good_, fs::perms::others_write, fs::perm_options::add);
    Registry reg;
    const std::string msg = load_message(reg, good_);
    EXPECT_NE(msg.find("module file is world-writable"), std::string::npos) << msg;
    EXPECT_NE(msg.find(good_.string()), std::string::npos) << msg;
}

TEST_F(ModuleFolder, FileOfAnotherUser_IsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
    ASSERT_EQ(::chown(good_.c_str(), 65534, 65534), 0);
    Registry reg;
    const std::string msg = load_message(reg, good_);
    EXPECT_NE(msg.find("owned by another user (uid 65534)"), std::string::npos) << msg;
}

TEST_F(ModuleFolder, SymlinkLoop_FailsAloneAndTheOthersLoad) {
    fs::create_symlink(dir_ / "libloop.so", dir_ / "libloop.so");
    fs::create_symlink(dir_ / "libmissing_target.so", dir_ / "libdangling.so");
    Registry reg;
    LoadReport r;
    ASSERT_NO_THROW(r = ModuleLoader::load_dirs(reg, {dir_.string()}));
    EXPECT_NE(reg.find_op("softmax"), nullptr);
    ASSERT_EQ(r.loaded.size(), 1u);
    EXPECT_EQ(r.failed.size(), 2u);
    for (const auto& f : r.failed) EXPECT_FALSE(f.message.empty()) << f.path;
}

constexpr bool host_is_aarch64() {
#if defined(__aarch64__)
    return true;
#else
    return false;
#endif
}

// An ELF header of a 64-bit little-endian shared object for another machine.
void write_foreign_elf(const fs::path& p, uint16_t machine) {
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    h[16] = 3;   // ET_DYN
    h[18] = static_cast<unsigned char>(machine & 0xff);
    h[19] = static_cast<unsigned char>(machine >> 8);
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(h), sizeof h);
}

TEST_F(ModuleFolder, ModuleForAnotherArchitecture_SaysSo) {
#if defined(__aarch64__)
    const uint16_t other = 62;
    const char* other_name = "x86_64";
#else
    const uint16_t other = 183;
    const char* other_name = "aarch64";
#endif
    const fs::path foreign = dir_ / "libforeign.so";
    write_foreign_elf(foreign, other);
    Registry reg;
    const std::string msg = load_message(reg, foreign);
    EXPECT_NE(msg.find(std::string("built for ") + other_name), std::string::npos) << msg;
    EXPECT_NE(msg.find("build the module for this machine"), std::string::npos) << msg;
    EXPECT_NE(reg.find_op("softmax"), nullptr);   // the good one still loads
}

// ---- ELF files dlopen must never see ------------------------------------------

std::vector<char> slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& p, const std::vector<char>& bytes, size_t n) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
}

// Where a real module is cut: half way, one page short (the last loadable
// segment's tail then lies past the end: dlopen maps it and SIGBUS follows),
// one byte short, and just past the ELF and program headers.
std::vector<std::pair<std::string, size_t>> cut_points(const std::vector<char>& so) {
    ElfW(Ehdr) eh{};
    std::memcpy(&eh, so.data(), sizeof eh);
    const size_t headers = eh.e_phoff + size_t{eh.e_phnum} * eh.e_phentsize + 16;
    size_t load_end = 0;
    for (size_t k = 0; k < eh.e_phnum; ++k) {
        ElfW(Phdr) ph{};
        std::memcpy(&ph, so.data() + eh.e_phoff + k * eh.e_phentsize, sizeof ph);
        if (ph.p_type == PT_LOAD) load_end = std::max<size_t>(load_end, ph.p_offset + ph.p_filesz);
    }
    return {{"half", so.size() / 2},
            {"segment_page_short", load_end - 4096},
            {"page_short", so.size() - 4096},
            {"byte_short", so.size() - 1},
            {"past_headers", headers}};
}

uint16_t other_machine() { return host_is_aarch64() ? EM_X86_64 : EM_AARCH64; }

TEST_F(ModuleFolder, TruncatedModule_IsRefusedBeforeDlopenAndTheOthersLoad) {
    const std::vector<char> so = slurp(good_);
    ASSERT_GT(so.size(), 3 * 4096u);
    std::vector<fs::path> cut;
    for (const auto& [name, n] : cut_points(so)) {
        ASSERT_LT(n, so.size());
        cut.push_back(dir_ / ("libcut_" + name + ".so"));
        write_bytes(cut.back(), so, n);
    }
    Registry reg;
    LoadReport r;
    ASSERT_NO_THROW(r = ModuleLoader::load_dirs(reg, {dir_.string()}));
    EXPECT_NE(reg.find_op("softmax"), nullptr);   // the intact one still loads
    EXPECT_EQ(r.loaded, std::vector<std::string>{good_.string()});
    ASSERT_EQ(r.failed.size(), cut.size());
    for (const LoadFailure& failure : r.failed) {
        const fs::path c = failure.path;
        const std::string& msg = failure.message;
        EXPECT_NE(std::find(cut.begin(), cut.end(), c), cut.end()) << c;
        EXPECT_EQ(msg.rfind(c.string() + ": truncated: ", 0), 0u) << msg;
        EXPECT_NE(msg.find("ends past the end of the file (" + std::to_string(fs::file_size(c)) + " bytes)"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("reinstall or rebuild the module"), std::string::npos) << msg;
    }
}

TEST_F(ModuleFolder, SegmentPointingPastTheEnd_IsRefusedNamingTheSegment) {
    // A whole file whose first loadable segment claims more file bytes than
    // the file has: the header lies, the size does not.
    std::vector<char> so = slurp(good_);
    ElfW(Ehdr) eh{};
    std::memcpy(&eh, so.data(), sizeof eh);
    for (size_t k = 0; k < eh.e_phnum; ++k) {
        ElfW(Phdr) ph{};
        char* at = so.data() + eh.e_phoff + k * eh.e_phentsize;
        std::memcpy(&ph, at, sizeof ph);
        if (ph.p_type != PT_LOAD) continue;
        ph.p_filesz = so.size();   // from its offset, past the end (offset 0 would just fit)
        ph.p_offset += 1;
        ph.p_memsz = std::max<decltype(ph.p_memsz)>(ph.p_memsz, ph.p_filesz);
        std::memcpy(at, &ph, sizeof ph);
        const fs::path bad = dir_ / "liblying.so";
        write_bytes(bad, so, so.size());
        Registry reg;
        const std::string msg = load_message(reg, bad);
        EXPECT_NE(msg.find("truncated: loadable segment " + std::to_string(k)), std::string::npos) << msg;
        EXPECT_NE(reg.find_op("softmax"), nullptr);
        return;
    }
    FAIL() << "no PT_LOAD segment in " << good_;
}

TEST_F(ModuleFolder, InfoEntryPointThatIsData_IsRefusedWithoutCallingIt) {
    const fs::path data = dir_ / "libtm_data_info.so";
    fs::copy_file(std::string(DYNRT_TEST_MODULES_DIR) + "/data_info/libtm_data_info.so", data);
    Registry reg;
    const std::string msg = load_message(reg, data);
    EXPECT_NE(msg.find(data.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("its entry point dynrt_module_info_v1 is a data object (STT_OBJECT), not a function"),
              std::string::npos)
        << msg;
    EXPECT_NE(reg.find_op("softmax"), nullptr);
}

TEST_F(ModuleFolder, NonElfAndForeignHeaders_AreRefusedBeforeDlopen) {
    const fs::path text = dir_ / "libtext.so";
    std::ofstream(text) << "#!/bin/sh\necho not a module\n";
    const fs::path empty = dir_ / "libempty.so";
    std::ofstream{empty};
    // A 32-bit header of this machine: the class alone differs.
    const fs::path elf32 = dir_ / "libelf32.so";
    {
        std::vector<char> so = slurp(good_);
        so[EI_CLASS] = ELFCLASS32;
        write_bytes(elf32, so, so.size());
    }
    // An ELF header and nothing else: the magic is right, the header is cut.
    const fs::path stub = dir_ / "libstub.so";
    write_bytes(stub, slurp(good_), 24);
    Registry reg;
    EXPECT_NE(load_message(reg, text).find("not a shared object (not an ELF file)"), std::string::npos);
    EXPECT_NE(load_message(reg, empty).find("not a shared object (not an ELF file)"), std::string::npos);
    const std::string m32 = load_message(reg, elf32);
    EXPECT_NE(m32.find("(32-bit), this dynrt runs on"), std::string::npos) << m32;
    const std::string mstub = load_message(reg, stub);
    EXPECT_NE(mstub.find("truncated: the ELF header"), std::string::npos) << mstub;
    EXPECT_NE(reg.find_op("softmax"), nullptr);
}

// The CLI: a folder full of broken modules still lists the good one, names
// every broken file with its reason, and exits 0 (no SIGBUS in dlopen).
TEST_F(ModuleFolder, DynrtOps_ListsTheGoodModulesBesideBrokenOnes) {
    const std::vector<char> so = slurp(good_);
    for (const auto& [name, n] : cut_points(so)) write_bytes(dir_ / ("libcut_" + name + ".so"), so, n);
    fs::copy_file(std::string(DYNRT_TEST_MODULES_DIR) + "/data_info/libtm_data_info.so", dir_ / "libdata.so");
    write_foreign_elf(dir_ / "libforeign.so", other_machine());
    std::ofstream(dir_ / "libtext.so") << "text\n";

    const std::string cmd = std::string(DYNRT_BINARY_DIR "/bin/dynrt ops --modules-dir ") + dir_.string() + " 2>&1";
    FILE* f = ::popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int status = ::pclose(f);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << "\n"
                                   << out;
    EXPECT_EQ(WEXITSTATUS(status), 0) << out;
    EXPECT_NE(out.find("softmax"), std::string::npos) << out;
    for (const char* bad :
         {"libcut_half.so: truncated", "libcut_segment_page_short.so: truncated", "libcut_page_short.so: truncated",
          "libcut_byte_short.so: truncated", "libcut_past_headers.so: truncated",
          "libdata.so: its entry point dynrt_module_info_v1 is a data object", "libforeign.so: built for",
          "libtext.so: not a shared object"})
        EXPECT_NE(out.find(bad), std::string::npos) << bad << "\n" << out;
}

}   // namespace
