// Module folders as a hostile or careless user leaves them: world-writable
// folders and files, files of another owner, symlink loops, a module built for
// another CPU architecture. Each is refused (or skipped) with a message that
// says why and what to do, and never stops the other modules from loading.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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

}   // namespace
