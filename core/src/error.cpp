#include "dynrt/error.hpp"

#include <utility>

namespace dynrt {

Error::Error(const std::string& message, ErrorContext ctx)
    : std::runtime_error(format(message, ctx)), message_(message), ctx_(std::move(ctx)) {}

// Out of line on purpose: the key function pins the vtable and type_info into
// libdynrt_core.so, so an Error thrown by a module is caught as dynrt::Error here.
Error::~Error() = default;

Error Error::with_context(const ErrorContext& outer) const {
    ErrorContext merged = ctx_;
    if (merged.file.empty()) merged.file = outer.file;
    if (merged.line == 0) merged.line = outer.line;
    if (merged.column == 0) merged.column = outer.column;
    if (merged.node.empty()) merged.node = outer.node;
    if (merged.op.empty()) merged.op = outer.op;
    if (merged.field.empty()) merged.field = outer.field;
    return Error(message_, std::move(merged));
}

// "file:line:col: node 'n' (op), field 'f': message", leaving out what is unknown.
std::string Error::format(const std::string& message, const ErrorContext& ctx) {
    std::string out;
    std::string where = ctx.file;
    if (ctx.line > 0) {
        where += (where.empty() ? "line " : ":") + std::to_string(ctx.line);
        if (ctx.column > 0) where += ":" + std::to_string(ctx.column);
    }
    if (!where.empty()) out = where + ": ";

    std::string who;
    if (!ctx.node.empty()) {
        who = "node '" + ctx.node + "'";
        if (!ctx.op.empty()) who += " (" + ctx.op + ")";
    } else if (!ctx.op.empty()) {
        who = "op '" + ctx.op + "'";
    }
    if (!ctx.field.empty()) {
        if (!who.empty()) who += ", ";
        who += "field '" + ctx.field + "'";
    }
    if (!who.empty()) out += who + ": ";
    return out + message;
}

}   // namespace dynrt
