// Running the `dynrt` command line from tests, and the files it writes: the
// binary of this build with its output and exit code, a temporary folder
// removed at the end of the test, a whole file as a string, and a strict
// JSON reader (RFC 8259: no trailing commas, no NaN, escapes checked) for
// the reports and traces the CLI writes.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// A parsed JSON value.
struct JsonValue {
    enum class Type { null, boolean, number, string, array, object } type = Type::null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<JsonValue> array;
    std::vector<std::pair<std::string, JsonValue>> object;   // in file order

    bool is(Type t) const { return type == t; }
    // The member `key` of an object (nullptr: absent, or not an object).
    const JsonValue* find(const std::string& key) const;
};

// Parses `text`; throws std::runtime_error naming the byte offset of the
// first thing that is not JSON.
JsonValue parse_json(const std::string& text);

}   // namespace dynrt::test
