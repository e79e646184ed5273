// JSON output for the tools: one string escaper and a small streaming writer.
//
// Every JSON the CLI prints or writes (`dynrt run --report`, `dynrt test-op
// --json`, `dynrt ops --json`) goes through here, so escaping is decided once:
// quotes, backslash and control characters are escaped, valid UTF-8 passes
// through, and each byte that is not part of a valid UTF-8 sequence becomes
// \ufffd (the replacement character), so the output is always valid JSON
// whatever bytes a node name or an error message holds.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace dynrt::tools {

// Length of the valid UTF-8 sequence starting at s[i] (i < s.size()), or 0
// when the byte there does not start one (stray continuation byte, overlong
// form, surrogate, code point above U+10FFFF, truncated sequence). The JSON
// reader and the HTML writer of `dynrt plot` check text with it too.
size_t utf8_length(const std::string& s, size_t i);

// `s` as a JSON string literal, quotes included.
std::string json_quote(const std::string& s);
// A JSON number (6 significant digits); NaN and infinities, which JSON lacks,
// become null.
std::string json_number(double v);

// Streaming writer: tracks where a comma is due, so callers write values in
// order without bookkeeping. Separators are ", " (one line per document).
class JsonWriter {
public:
    std::string str() const { return out_.str(); }

    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    JsonWriter& key(const std::string& k);

    JsonWriter& value(const std::string& s) { return raw(json_quote(s)); }
    JsonWriter& value(const char* s) { return raw(json_quote(s)); }
    JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
    JsonWriter& value(double v) { return raw(json_number(v)); }
    // Every standard integer type, so int64_t, uint64_t and size_t (whichever
    // of these they are on the platform) never convert to double.
    JsonWriter& value(int v) { return raw(std::to_string(v)); }
    JsonWriter& value(long v) { return raw(std::to_string(v)); }
    JsonWriter& value(long long v) { return raw(std::to_string(v)); }
    JsonWriter& value(unsigned v) { return raw(std::to_string(v)); }
    JsonWriter& value(unsigned long v) { return raw(std::to_string(v)); }
    JsonWriter& value(unsigned long long v) { return raw(std::to_string(v)); }
    JsonWriter& null() { return raw("null"); }
    template <typename T>
    JsonWriter& field(const std::string& k, const T& v) {
        return key(k).value(v);
    }
    // Starts a new line inside the current array or object (readability of
    // long reports only; JSON ignores it).
    JsonWriter& newline(int indent = 1);

private:
    JsonWriter& raw(const std::string& text);
    void comma();
    JsonWriter& open(char c);
    JsonWriter& close(char c);

    std::ostringstream out_;
    std::vector<bool> first_;   // per open level: nothing written in it yet
    bool after_key_ = false;
    bool pending_newline_ = false;
    int newline_indent_ = 0;
};

}   // namespace dynrt::tools
