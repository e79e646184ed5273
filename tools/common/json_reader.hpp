// A strict JSON reader (RFC 8259) for the files the tools write and read
// back: `dynrt plot` reads a run report with it, and the tests read reports
// and traces with it.
//
// Strict: one value and nothing after it, no trailing commas, no comments,
// no NaN or infinities (nor a number too large for a double), no leading
// zeros, escapes checked, control characters in strings refused, strings
// valid UTF-8. \uXXXX escapes are decoded to UTF-8 (a surrogate pair to its
// code point; a lone surrogate, which no UTF-8 text can hold, to U+FFFD, as
// the writer writes an invalid byte). Objects keep their members in file
// order; a repeated key is kept twice and find() returns the first.
// Errors name the line, column and byte offset of the first thing that is
// not JSON.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynrt::tools {

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

// "object", "number", ...: a type's name in messages.
const char* to_string(JsonValue::Type t);

// Not JSON: what() is "not JSON at line L, column C (byte B): WHAT"; line and
// column count from 1, columns in bytes.
class JsonSyntaxError : public std::runtime_error {
public:
    JsonSyntaxError(const std::string& what, size_t offset, size_t line, size_t column);
    size_t offset() const { return offset_; }
    size_t line() const { return line_; }
    size_t column() const { return column_; }

private:
    size_t offset_, line_, column_;
};

// Arrays and objects nest at most this many levels ([[1]] is two); a deeper
// document is refused, never a stack overflow.
inline constexpr int kMaxJsonDepth = 256;

// Parses `text`; throws JsonSyntaxError.
JsonValue parse_json(const std::string& text);

}   // namespace dynrt::tools
