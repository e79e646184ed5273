#include "dynrt/layout.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"

namespace dynrt {

size_t bitwidth(DataType t) {
    switch (t) {
        case DataType::f32: return 32;
        case DataType::f16: return 16;
        case DataType::i32: return 32;
        case DataType::i64: return 64;
        case DataType::u8: return 8;
        case DataType::i8: return 8;
        case DataType::boolean: return 8;
        case DataType::f64: return 64;
    }
    throw Error("unknown data type value " + std::to_string(static_cast<int>(t)));
}

const char* to_string(DataType t) {
    switch (t) {
        case DataType::f32: return "f32";
        case DataType::f16: return "f16";
        case DataType::i32: return "i32";
        case DataType::i64: return "i64";
        case DataType::u8: return "u8";
        case DataType::i8: return "i8";
        case DataType::boolean: return "boolean";
        case DataType::f64: return "f64";
    }
    return "?";
}

DataType parse_data_type(const std::string& s) {
    std::string k = s;
    std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return std::tolower(c); });
    if (k == "f32" || k == "float32" || k == "float") return DataType::f32;
    if (k == "f16" || k == "float16" || k == "half") return DataType::f16;
    if (k == "i32" || k == "int32") return DataType::i32;
    if (k == "i64" || k == "int64") return DataType::i64;
    if (k == "u8" || k == "uint8") return DataType::u8;
    if (k == "i8" || k == "int8") return DataType::i8;
    if (k == "bool" || k == "boolean") return DataType::boolean;
    if (k == "f64" || k == "float64" || k == "double") return DataType::f64;
    throw Error("unknown data type '" + s + "'; known: f32, f16, f64, i32, i64, u8, i8, bool");
}

bool is_floating(DataType t) { return t == DataType::f32 || t == DataType::f16 || t == DataType::f64; }

const char* to_string(Format f) {
    switch (f) {
        case Format::plain: return "plain";
        case Format::osv16: return "osv16";
    }
    return "?";
}

Format parse_format(const std::string& s) {
    if (s == "plain") return Format::plain;
    if (s == "osv16") return Format::osv16;
    throw Error("unknown format '" + s + "'; known: plain, osv16");
}

bool is_blocked(Format f) { return block_size(f) > 1; }

size_t block_size(Format f) {
    switch (f) {
        case Format::plain: return 1;
        case Format::osv16: return 16;
    }
    return 1;
}

size_t storage_index(const Shape& s, Format f, size_t flat) {
    const size_t b = block_size(f);
    if (b == 1 || s.rank() == 0) return flat;
    // flat = o * inner + r (r indexes d1..dn); stored at ((o / b) * inner + r) * b + o % b.
    const size_t inner = s.rank() > 0 && s[0] > 0 ? s.count() / static_cast<size_t>(s[0]) : 0;
    if (inner == 0) return flat;
    const size_t o = flat / inner, r = flat % inner;
    return ((o / b) * inner + r) * b + o % b;
}

bool Padding::empty() const {
    auto zero = [](int64_t v) { return v == 0; };
    return std::all_of(lower.begin(), lower.end(), zero) && std::all_of(upper.begin(), upper.end(), zero);
}

// An empty vector and an all-zero one mean the same thing ("no padding").
static bool same_pad(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        const int64_t x = i < a.size() ? a[i] : 0;
        const int64_t y = i < b.size() ? b[i] : 0;
        if (x != y) return false;
    }
    return true;
}

bool Padding::operator==(const Padding& o) const { return same_pad(lower, o.lower) && same_pad(upper, o.upper); }

Shape Layout::padded_shape() const {
    Shape s = get_shape();
    auto add = [&](const std::vector<int64_t>& pad, const char* which) {
        if (pad.empty()) return;
        if (pad.size() != s.size())
            throw Error(std::string(which) + " padding has " + std::to_string(pad.size()) +
                        " values for a shape of rank " + std::to_string(s.size()));
        for (size_t i = 0; i < s.size(); ++i) s[i] = checked_add(s[i], pad[i], "padded dim");
    };
    add(padding.lower, "lower");
    add(padding.upper, "upper");
    return s;
}

namespace {

// The dim lengths of a static shape, as count_fits reads them.
class StaticLengths {
public:
    using DimIter = decltype(std::declval<const PartialShape&>().begin());
    class Iter {
    public:
        explicit Iter(DimIter it) : it_(it) {}
        int64_t operator*() const { return it_->get_length(); }
        Iter& operator++() {
            ++it_;
            return *this;
        }
        bool operator!=(const Iter& o) const { return it_ != o.it_; }

    private:
        DimIter it_;
    };
    explicit StaticLengths(const PartialShape& shape) : shape_(shape) {}
    Iter begin() const { return Iter(shape_.begin()); }
    Iter end() const { return Iter(shape_.end()); }

private:
    const PartialShape& shape_;
};

// The element count of a static shape without building a Shape (layouts are
// counted on every run of every node); false where the general path must
// answer (a dynamic dim, or a count beyond the cap, which it reports).
bool static_count(const PartialShape& shape, size_t* count) {
    for (const Dimension& d : shape)
        if (!d.is_static()) return false;
    return count_fits(StaticLengths(shape), count);
}

}   // namespace

size_t Layout::count() const {
    size_t n = 0;
    return static_count(shape, &n) ? n : get_shape().count();
}

size_t Layout::storage_count() const {
    size_t n = 0;
    if (padding.empty() && block_size(format) == 1 && static_count(shape, &n)) return n;
    Shape s = padded_shape();
    const size_t b = block_size(format);
    if (b > 1 && s.rank() > 0) {
        const int64_t bs = static_cast<int64_t>(b);
        s[0] = checked_add(s[0], bs - 1, "blocked dim 0") / bs * bs;
    }
    return s.count();
}

size_t Layout::bytes() const {
    // Counts are capped at 2^60 and elements are at most 8 bytes: no overflow.
    return storage_count() * byte_size(dtype);
}

Layout Layout::with_shape(const Shape& s) const { return Layout(PartialShape(s), dtype, format); }

std::string Layout::to_string() const {
    std::string s = std::string(dynrt::to_string(dtype)) + shape.to_string();
    if (format != Format::plain) s += std::string(":") + dynrt::to_string(format);
    if (!padding.empty()) {
        auto list = [](const std::vector<int64_t>& v) {
            std::string r = "[";
            for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
            return r + "]";
        };
        s += " pad(lower=" + list(padding.lower) + " upper=" + list(padding.upper) + ")";
    }
    return s;
}

bool Layout::operator==(const Layout& o) const {
    return dtype == o.dtype && format == o.format && shape == o.shape && padding == o.padding;
}

size_t hash_layout(const Layout& l) {
    size_t seed = l.shape.rank();
    for (const Dimension& d : l.shape) {
        hash_combine(seed, static_cast<size_t>(d.min()));
        hash_combine(seed, static_cast<size_t>(d.max()));
    }
    hash_combine(seed, static_cast<size_t>(l.dtype));
    hash_combine(seed, static_cast<size_t>(l.format));
    // Equal paddings must hash equally, so empty and all-zero vectors hash alike.
    if (!l.padding.empty()) {
        for (size_t i = 0; i < l.shape.rank(); ++i) {
            hash_combine(seed, static_cast<size_t>(i < l.padding.lower.size() ? l.padding.lower[i] : 0));
            hash_combine(seed, static_cast<size_t>(i < l.padding.upper.size() ? l.padding.upper[i] : 0));
        }
    }
    return seed;
}

}   // namespace dynrt
