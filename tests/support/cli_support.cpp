#include "cli_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dynrt::test {

CliResult run_dynrt(const std::string& args, const std::string& env) {
    const std::string cmd = env + std::string(DYNRT_BINARY_DIR "/bin/dynrt ") + args + " 2>&1";
    CliResult r;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
    const int status = ::pclose(f);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

ScratchDir::ScratchDir(const std::string& prefix) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const JsonValue* JsonValue::find(const std::string& key) const {
    if (type != Type::object) return nullptr;
    for (const auto& [k, v] : object)
        if (k == key) return &v;
    return nullptr;
}

namespace {

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
        throw std::runtime_error("not JSON at byte " + std::to_string(i_) + ": " + what);
    }
    void space() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        space();
        if (i_ < t_.size() && t_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    bool word(const char* w) {
        const std::string s(w);
        if (t_.compare(i_, s.size(), s) != 0) return false;
        i_ += s.size();
        return true;
    }

    JsonValue value(int depth) {
        if (depth > 256) fail("nested too deep");
        space();
        if (i_ >= t_.size()) fail("missing value");
        JsonValue v;
        const char c = t_[i_];
        if (c == '{') {
            ++i_;
            v.type = JsonValue::Type::object;
            if (eat('}')) return v;
            do {
                space();
                if (i_ >= t_.size() || t_[i_] != '"') fail("expected a key");
                std::string k = string();
                expect(':');
                v.object.emplace_back(std::move(k), value(depth + 1));
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.type = JsonValue::Type::array;
            if (eat(']')) return v;
            do v.array.push_back(value(depth + 1));
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.type = JsonValue::Type::string;
            v.string = string();
        } else if (word("true") || word("false")) {
            v.type = JsonValue::Type::boolean;
            v.boolean = c == 't';
        } else if (word("null")) {
            v.type = JsonValue::Type::null;
        } else {
            v.type = JsonValue::Type::number;
            v.number = number();
        }
        return v;
    }

    std::string string() {
        ++i_;   // the opening quote
        std::string s;
        while (true) {
            if (i_ >= t_.size()) fail("unterminated string");
            const auto c = static_cast<unsigned char>(t_[i_++]);
            if (c == '"') return s;
            if (c < 0x20) fail("control character in a string");
            if (c != '\\') {
                s += static_cast<char>(c);
                continue;
            }
            if (i_ >= t_.size()) fail("unterminated escape");
            const char e = t_[i_++];
            switch (e) {
                case '"': s += '"'; break;
                case '\\': s += '\\'; break;
                case '/': s += '/'; break;
                case 'b': s += '\b'; break;
                case 'f': s += '\f'; break;
                case 'n': s += '\n'; break;
                case 'r': s += '\r'; break;
                case 't': s += '\t'; break;
                case 'u': {
                    if (i_ + 4 > t_.size()) fail("short \\u escape");
                    for (int k = 0; k < 4; ++k)
                        if (!std::isxdigit(static_cast<unsigned char>(t_[i_ + k]))) fail("bad \\u escape");
                    s += "\\u" + t_.substr(i_, 4);   // kept as written
                    i_ += 4;
                    break;
                }
                default: fail("unknown escape");
            }
        }
    }

    double number() {
        const size_t start = i_;
        auto digits = [&] {
            const size_t from = i_;
            while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
            return i_ > from;
        };
        if (i_ < t_.size() && t_[i_] == '-') ++i_;
        if (i_ < t_.size() && t_[i_] == '0') ++i_;
        else if (!digits()) fail("expected a value");
        if (i_ < t_.size() && t_[i_] == '.') {
            ++i_;
            if (!digits()) fail("digits expected after '.'");
        }
        if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
            ++i_;
            if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
            if (!digits()) fail("digits expected in the exponent");
        }
        return std::strtod(t_.substr(start, i_ - start).c_str(), nullptr);
    }

    const std::string& t_;
    size_t i_ = 0;
};

}   // namespace

JsonValue parse_json(const std::string& text) { return Parser(text).document(); }

}   // namespace dynrt::test
