// dynrt::Error: the one error type of the runtime.
//
// Everything that fails because of bad input (a YAML file, a module, a shape, an
// allocation) throws dynrt::Error carrying *where* it happened: file, line and
// column, node, op and field. Callers at the edge (the CLI, the op harness) print
// what() and exit non-zero; nothing aborts on bad input. The class has an
// out-of-line key function so its type_info is unique across modules.
#pragma once

#include <stdexcept>
#include <string>

namespace dynrt {

struct ErrorContext {
    std::string file;    // YAML / .npy / module path
    int line = 0;        // 1-based; 0 = unknown
    int column = 0;      // 1-based; 0 = unknown
    std::string node;    // graph node name
    std::string op;      // op type
    std::string field;   // attribute / YAML key / argument
};

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message, ErrorContext ctx = {});
    ~Error() override;

    const std::string& message() const { return message_; }
    const ErrorContext& context() const { return ctx_; }

    // A copy with missing context fields filled from `outer` (inner wins).
    Error with_context(const ErrorContext& outer) const;

private:
    static std::string format(const std::string& message, const ErrorContext& ctx);
    std::string message_;
    ErrorContext ctx_;
};

}   // namespace dynrt
