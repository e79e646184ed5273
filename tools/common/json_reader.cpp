// The strict JSON reader: a recursive-descent parser over the whole text.
#include "json_reader.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "json_writer.hpp"

namespace dynrt::tools {

const JsonValue* JsonValue::find(const std::string& key) const {
    if (type != Type::object) return nullptr;
    for (const auto& [k, v] : object)
        if (k == key) return &v;
    return nullptr;
}

const char* to_string(JsonValue::Type t) {
    switch (t) {
        case JsonValue::Type::null: return "null";
        case JsonValue::Type::boolean: return "boolean";
        case JsonValue::Type::number: return "number";
        case JsonValue::Type::string: return "string";
        case JsonValue::Type::array: return "array";
        case JsonValue::Type::object: return "object";
    }
    return "?";
}

JsonSyntaxError::JsonSyntaxError(const std::string& what, size_t offset, size_t line, size_t column)
    : std::runtime_error("not JSON at line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte " +
                         std::to_string(offset) + "): " + what),
      offset_(offset), line_(line), column_(column) {}

namespace {

void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        s += static_cast<char>(0xe0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        s += static_cast<char>(0xf0 | (cp >> 18));
        s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Parser {
public:
    explicit Parser(const std::string& t) : t_(t) {}

    JsonValue document() {
        JsonValue v = value(0);
        space();
        if (i_ != t_.size()) fail("text after the value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        size_t line = 1, column = 1;
        for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
            if (t_[k] == '\n') ++line, column = 1;
            else ++column;
        }
        throw JsonSyntaxError(what, i_, line, column);
    }
    bool more() const { return i_ < t_.size(); }
    void space() {
        while (more() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        space();
        if (more() && t_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c, const char* what) {
        if (!eat(c)) fail(what);
    }
    bool word(const char* w) {
        const std::string s(w);
        if (t_.compare(i_, s.size(), s) != 0) return false;
        i_ += s.size();
        return true;
    }

    JsonValue value(int depth) {
        space();
        if (!more()) fail("a value is missing");
        JsonValue v;
        const char c = t_[i_];
        if ((c == '{' || c == '[') && depth >= kMaxJsonDepth)
            fail("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        if (c == '{') object(v, depth);
        else if (c == '[') array(v, depth);
        else if (c == '"') v.type = JsonValue::Type::string, v.string = string();
        else if (word("true")) v.type = JsonValue::Type::boolean, v.boolean = true;
        else if (word("false")) v.type = JsonValue::Type::boolean;
        else if (word("null")) v.type = JsonValue::Type::null;
        else v.type = JsonValue::Type::number, v.number = number();
        return v;
    }

    void object(JsonValue& v, int depth) {
        ++i_;
        v.type = JsonValue::Type::object;
        if (eat('}')) return;
        do {
            space();
            if (!more() || t_[i_] != '"') fail("expected a key in quotes");
            std::string k = string();
            expect(':', "expected ':' after a key");
            v.object.emplace_back(std::move(k), value(depth + 1));
        } while (eat(','));
        expect('}', "expected ',' or '}' in an object");
    }

    void array(JsonValue& v, int depth) {
        ++i_;
        v.type = JsonValue::Type::array;
        if (eat(']')) return;
        do v.array.push_back(value(depth + 1));
        while (eat(','));
        expect(']', "expected ',' or ']' in an array");
    }

    std::string string() {
        ++i_;   // the opening quote
        std::string s;
        while (true) {
            if (!more()) fail("unterminated string");
            const auto c = static_cast<unsigned char>(t_[i_]);
            if (c == '"') {
                ++i_;
                return s;
            }
            if (c < 0x20) fail("control character in a string");
            if (c == '\\') {
                escape(s);
                continue;
            }
            const size_t n = utf8_length(t_, i_);
            if (n == 0) fail("a string is not valid UTF-8");
            s.append(t_, i_, n);
            i_ += n;
        }
    }

    void escape(std::string& s) {
        ++i_;   // the backslash
        if (!more()) fail("unterminated escape");
        const char e = t_[i_++];
        switch (e) {
            case '"': s += '"'; return;
            case '\\': s += '\\'; return;
            case '/': s += '/'; return;
            case 'b': s += '\b'; return;
            case 'f': s += '\f'; return;
            case 'n': s += '\n'; return;
            case 'r': s += '\r'; return;
            case 't': s += '\t'; return;
            case 'u': append_utf8(s, code_point()); return;
            default: --i_, fail(std::string("unknown escape '\\") + e + "'");
        }
    }

    uint32_t hex4() {
        if (i_ + 4 > t_.size()) fail("short \\u escape");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = t_[i_];
            const int d = is_digit(h)              ? h - '0'
                          : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                          : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                   : -1;
            if (d < 0) fail("bad \\u escape");
            v = v * 16 + static_cast<uint32_t>(d);
            ++i_;
        }
        return v;
    }

    // After "\u": one code point; a high surrogate takes the low one after it.
    uint32_t code_point() {
        const uint32_t u = hex4();
        if (u < 0xd800 || u > 0xdfff) return u;
        if (u >= 0xdc00 || t_.compare(i_, 2, "\\u") != 0) return 0xfffd;
        const size_t at = i_;
        i_ += 2;
        const uint32_t low = hex4();
        if (low >= 0xdc00 && low <= 0xdfff) return 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
        i_ = at;   // not a pair: the next escape stands alone
        return 0xfffd;
    }

    double number() {
        const size_t start = i_;
        auto digits = [&] {
            const size_t from = i_;
            while (more() && is_digit(t_[i_])) ++i_;
            return i_ > from;
        };
        if (more() && t_[i_] == '-') ++i_;
        if (more() && t_[i_] == '0') ++i_;
        else if (!digits()) fail(i_ == start ? "expected a value" : "digits expected after '-'");
        if (more() && t_[i_] == '.') {
            ++i_;
            if (!digits()) fail("digits expected after '.'");
        }
        if (more() && (t_[i_] == 'e' || t_[i_] == 'E')) {
            ++i_;
            if (more() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
            if (!digits()) fail("digits expected in the exponent");
        }
        const double v = std::strtod(t_.substr(start, i_ - start).c_str(), nullptr);
        if (!std::isfinite(v)) {
            i_ = start;
            fail("number out of the range of a double");
        }
        return v;
    }

    const std::string& t_;
    size_t i_ = 0;
};

}   // namespace

JsonValue parse_json(const std::string& text) { return Parser(text).document(); }

}   // namespace dynrt::tools
