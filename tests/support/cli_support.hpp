// Running the `dynrt` command line from tests, and the files it writes: the
// binary of this build with its output and exit code, a temporary folder
// removed at the end of the test, a whole file as a string, and the tools'
// strict JSON reader (RFC 8259: no trailing commas, no NaN, escapes checked)
// for the reports and traces the CLI writes.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "json_reader.hpp"

namespace dynrt::test {

struct CliResult {
    int code = -1;     // exit code; -1 when it did not exit (a signal)
    std::string out;   // stdout and stderr together
};

// Runs `ENV<build>/bin/dynrt ARGS` through the shell (ARGS as written
// there; ENV e.g. "DYNRT_PASSES=none " or "env -u DYNRT_PASSES ").
CliResult run_dynrt(const std::string& args, const std::string& env = "");

// A fresh folder under the system's temporary folder, removed with its
// contents when the object goes.
class ScratchDir {
public:
    explicit ScratchDir(const std::string& prefix = "dynrt_test");
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string operator/(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

// The whole of a file ("" when it cannot be read).
std::string read_text(const std::string& path);

// The strict JSON reader of the tools (tools/common/json_reader.hpp).
using tools::JsonValue;
using tools::parse_json;

}   // namespace dynrt::test
