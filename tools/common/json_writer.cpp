// JSON escaping and the streaming writer.
#include "json_writer.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace dynrt::tools {

size_t utf8_length(const std::string& s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
    else return 0;
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                ++i;
                continue;
            case '\\':
                out += "\\\\";
                ++i;
                continue;
            case '\b':
                out += "\\b";
                ++i;
                continue;
            case '\f':
                out += "\\f";
                ++i;
                continue;
            case '\n':
                out += "\\n";
                ++i;
                continue;
            case '\r':
                out += "\\r";
                ++i;
                continue;
            case '\t':
                out += "\\t";
                ++i;
                continue;
            default: break;
        }
        if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
            continue;
        }
        const size_t n = utf8_length(s, i);
        if (n == 0) {
            out += "\\ufffd";   // one replacement character per invalid byte
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    return out + "\"";
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

JsonWriter& JsonWriter::key(const std::string& k) {
    comma();
    out_ << json_quote(k) << ": ";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::newline(int indent) {
    pending_newline_ = true;
    newline_indent_ = indent;
    return *this;
}

JsonWriter& JsonWriter::raw(const std::string& text) {
    comma();
    out_ << text;
    return *this;
}

void JsonWriter::comma() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    const bool separate = !first_.empty() && !first_.back();
    if (!first_.empty()) first_.back() = false;
    if (separate) out_ << ',';
    if (pending_newline_) {
        out_ << '\n' << std::string(static_cast<size_t>(newline_indent_), ' ');
        pending_newline_ = false;
    } else if (separate) {
        out_ << ' ';
    }
}

JsonWriter& JsonWriter::open(char c) {
    comma();
    out_ << c;
    first_.push_back(true);
    return *this;
}

JsonWriter& JsonWriter::close(char c) {
    if (pending_newline_) {
        out_ << '\n' << std::string(static_cast<size_t>(newline_indent_), ' ');
        pending_newline_ = false;
    }
    if (!first_.empty()) first_.pop_back();
    out_ << c;
    return *this;
}

}   // namespace dynrt::tools
