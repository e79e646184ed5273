// .npy reading and writing (NumPy format 1.0/2.0/3.0), little-endian, C order.
#include <cctype>
#include <cstring>

#include "dynrt/checked_math.hpp"
#include "file_io.hpp"
#include "pipeline.hpp"

namespace dynrt::pipeline {
namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct NpyType {
    const char* descr;
    DataType dtype;
};
// The descr written for each dtype; reading also accepts '<'/'='/'|' variants.
const NpyType kTypes[] = {{"<f4", DataType::f32},     {"<f2", DataType::f16}, {"<i4", DataType::i32},
                          {"<i8", DataType::i64},     {"|u1", DataType::u8},  {"|i1", DataType::i8},
                          {"|b1", DataType::boolean}, {"<f8", DataType::f64}};

bool host_is_little_endian() {
    const uint16_t one = 1;
    uint8_t first = 0;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

std::string descr_of(DataType t) {
    for (const auto& e : kTypes)
        if (e.dtype == t) return e.descr;
    throw Error(std::string("no .npy dtype for ") + to_string(t));
}

DataType dtype_of_descr(const std::string& descr, const std::string& name) {
    if (descr.size() == 3) {
        const char order = descr[0];
        const std::string code = descr.substr(1);
        if (order == '>' && code != "u1" && code != "i1" && code != "b1")
            throw Error("big-endian data ('" + descr + "') is not supported; save it little-endian",
                        in_file(name, "descr"));
        if (order == '<' || order == '|' || order == '=' || order == '>') {
            for (const auto& e : kTypes)
                if (code == e.descr + 1) return e.dtype;
        }
    }
    throw Error("unsupported dtype '" + descr + "'; supported: <f4 <f2 <i4 <i8 |u1 |i1 |b1", in_file(name, "descr"));
}

// Minimal reader of the header dict: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Keys may come in any order.
class HeaderParser {
public:
    HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

    void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
        bool have_descr = false, have_fortran = false, have_shape = false;
        expect('{');
        while (true) {
            skip_ws();
            if (peek() == '}') break;
            const std::string key = string_literal();
            expect(':');
            skip_ws();
            if (key == "descr") {
                descr = string_literal();
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran = boolean();
                have_fortran = true;
            } else if (key == "shape") {
                shape = tuple();
                have_shape = true;
            } else {
                fail("unexpected key '" + key + "'");
            }
            skip_ws();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            skip_ws();
            if (peek() != '}') fail("expected ',' or '}'");
        }
        if (!have_descr || !have_fortran || !have_shape) fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw Error("malformed .npy header (" + why + ")", in_file(name_, "header"));
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    void expect(char c) {
        skip_ws();
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    std::string string_literal() {
        skip_ws();
        const char q = peek();
        if (q != '\'' && q != '"') fail("expected a string");
        const size_t end = s_.find(q, i_ + 1);
        if (end == std::string::npos) fail("unterminated string");
        std::string out = s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        return out;
    }
    bool boolean() {
        if (s_.compare(i_, 4, "True") == 0) {
            i_ += 4;
            return true;
        }
        if (s_.compare(i_, 5, "False") == 0) {
            i_ += 5;
            return false;
        }
        fail("expected True or False");
    }
    std::vector<int64_t> tuple() {
        std::vector<int64_t> out;
        expect('(');
        while (true) {
            skip_ws();
            if (peek() == ')') {
                ++i_;
                return out;
            }
            if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a dimension");
            int64_t v = 0;
            while (std::isdigit(static_cast<unsigned char>(peek()))) {
                if (v > (INT64_MAX - 9) / 10) fail("dimension too large");
                v = v * 10 + (s_[i_++] - '0');
            }
            out.push_back(v);
            skip_ws();
            if (peek() == ',') ++i_;
            else if (peek() != ')') fail("expected ',' or ')' in shape");
        }
    }

    const std::string& s_;
    const std::string& name_;
    size_t i_ = 0;
};

uint32_t read_le(const std::string& b, size_t at, size_t n) {
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + k])) << (8 * k);
    return v;
}

}   // namespace

HostTensor parse_npy(const std::string& bytes, const std::string& name) {
    if (!host_is_little_endian()) throw Error(".npy support needs a little-endian host", in_file(name));
    if (bytes.size() < kMagicLen + 4 || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
        throw Error("not a .npy file (bad magic)", in_file(name));
    const int major = static_cast<uint8_t>(bytes[6]);
    size_t header_len = 0, header_at = 0;
    if (major == 1) {
        header_len = read_le(bytes, 8, 2);
        header_at = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw Error("truncated .npy header", in_file(name));
        header_len = read_le(bytes, 8, 4);
        header_at = 12;
    } else {
        throw Error("unsupported .npy format version " + std::to_string(major), in_file(name));
    }
    if (bytes.size() < header_at + header_len) throw Error("truncated .npy header", in_file(name));
    const std::string header = bytes.substr(header_at, header_len);

    std::string descr;
    bool fortran = false;
    std::vector<int64_t> dims;
    HeaderParser(header, name).parse(descr, fortran, dims);
    const DataType dtype = dtype_of_descr(descr, name);
    size_t non_unit = 0;
    for (int64_t d : dims) non_unit += d != 1;
    // Fortran order equals C order when at most one dim is not 1.
    if (fortran && non_unit > 1)
        throw Error("Fortran-ordered arrays are not supported; save with np.ascontiguousarray",
                    in_file(name, "fortran_order"));

    const Shape shape(dims);
    // The size the header claims, checked against the bytes present before
    // anything is allocated: a 100-byte file claiming 10^9 elements is refused
    // here, not after zeroing gigabytes.
    size_t count = 0;
    if (!count_fits(dims, &count))
        throw Error("shape " + shape.to_string() + " has more elements than fit (at most 2^60)",
                    in_file(name, "shape"));
    const size_t expected = checked_mul(count, byte_size(dtype), ".npy data size");
    const size_t data_at = header_at + header_len;
    if (bytes.size() - data_at != expected)
        throw Error("data size " + std::to_string(bytes.size() - data_at) + " bytes does not match " + descr + " " +
                        shape.to_string() + " (" + std::to_string(expected) + " bytes)",
                    in_file(name));
    HostTensor t(dtype, shape);
    if (t.bytes() > 0) std::memcpy(t.data(), bytes.data() + data_at, t.bytes());
    return t;
}

HostTensor read_npy(const std::string& path) {
    return parse_npy(tools::read_file_capped(path, tools::max_tensor_file_bytes(), ".npy file"), path);
}

std::string to_npy(const HostTensor& t) {
    // Python tuple syntax: "()", "(5,)", "(2, 3)".
    std::string tuple = "(";
    for (size_t i = 0; i < t.shape().size(); ++i) tuple += (i ? ", " : "") + std::to_string(t.shape()[i]);
    tuple += t.shape().size() == 1 ? ",)" : ")";
    std::string dict = "{'descr': '" + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + tuple;
    dict += ", }";
    // The whole preamble is padded with spaces to a multiple of 64 bytes and
    // ends in '\n', as the format asks.
    size_t prefix = kMagicLen + 2 + 2;
    int major = 1;
    if ((prefix + dict.size() + 1 + 63) / 64 * 64 - prefix > 65535) {
        major = 2;
        prefix = kMagicLen + 2 + 4;
    }
    const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    const size_t header_len = total - prefix;
    dict.append(header_len - dict.size() - 1, ' ');
    dict += '\n';

    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    const size_t len_bytes = major == 1 ? 2 : 4;
    for (size_t k = 0; k < len_bytes; ++k) out += static_cast<char>((header_len >> (8 * k)) & 0xff);
    out += dict;
    out.append(static_cast<const char*>(t.data()), t.bytes());
    return out;
}

void write_npy(const std::string& path, const HostTensor& t) { write_file_atomic(path, to_npy(t)); }

}   // namespace dynrt::pipeline
