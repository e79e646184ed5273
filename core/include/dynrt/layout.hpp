// Layouts: data type, memory format, padding and the (partial) shape of a tensor.
//
// A Layout describes one tensor: shape (PartialShape; static at run time), data
// type, format (plain row-major today; blocked formats have room in the enum) and
// padding (lower/upper per dim). Byte sizes are only defined for static layouts
// and include padding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/shape.hpp"

namespace dynrt {

enum class DataType : uint8_t { f32, f16, i32, i64, u8, i8, boolean, f64 };

size_t bitwidth(DataType t);
inline size_t byte_size(DataType t) { return (bitwidth(t) + 7) / 8; }
const char* to_string(DataType t);
DataType parse_data_type(const std::string& s);   // "f32", "float32", "int64", "bool" ...; throws
bool is_floating(DataType t);

// Memory format. `plain` is row-major in the order of the shape's dims. Blocked
// formats split a dim into blocks; code must ask is_blocked() rather than
// compare against plain.
//   osv16: weights layout. Dim 0 (output features) is cut into slices of 16 that
//          become the innermost dim: logical [O, d1, ..., dn] is stored as
//          [ceil(O/16), d1, ..., dn, 16], row-major, the tail of the last slice
//          zero-filled. A kernel computing 16 output features at once then reads
//          them from consecutive addresses (fully_connected [N, K] -> [N/16, K, 16],
//          convolution [O, C, kH, kW] -> [O/16, C, kH, kW, 16]).
enum class Format : uint8_t { plain, osv16 };
const char* to_string(Format f);
Format parse_format(const std::string& s);
bool is_blocked(Format f);
// Elements of dim 0 per block (1 for unblocked formats).
size_t block_size(Format f);
// Storage index (in elements, padding excluded) of the element at row-major
// logical index `flat` of a tensor of shape `s` stored in format `f`.
size_t storage_index(const Shape& s, Format f, size_t flat);

struct Padding {
    std::vector<int64_t> lower;   // empty = no padding; else one per dim
    std::vector<int64_t> upper;
    bool empty() const;
    bool operator==(const Padding& o) const;
    bool operator!=(const Padding& o) const { return !(*this == o); }
};

struct Layout {
    PartialShape shape;
    DataType dtype = DataType::f32;
    Format format = Format::plain;
    Padding padding;

    Layout() = default;
    Layout(PartialShape s, DataType t, Format f = Format::plain, Padding p = {})
        : shape(std::move(s)), dtype(t), format(f), padding(std::move(p)) {}

    bool is_static() const { return shape.is_static(); }
    Shape get_shape() const { return shape.to_shape(); }   // throws unless static
    Shape padded_shape() const;                            // dims + lower + upper
    size_t count() const;                                  // logical elements
    // Elements the storage holds: padded dims, dim 0 rounded up to the format's
    // block (osv16: a multiple of 16).
    size_t storage_count() const;
    size_t bytes() const;                      // storage_count * dtype size
    Layout with_shape(const Shape& s) const;   // same type/format, no padding
    std::string to_string() const;             // "f32[1,?,64]"

    bool operator==(const Layout& o) const;
    bool operator!=(const Layout& o) const { return !(*this == o); }
};

// Same result as operator==, for checks that run on every execution: the
// common case (no padding vector on either side) is decided inline, the rest
// goes to operator== (which also takes an all-zero padding for no padding).
inline bool same_layout(const Layout& a, const Layout& b) {
    if (a.dtype != b.dtype || a.format != b.format || a.shape != b.shape) return false;
    if (a.padding.lower.empty() && a.padding.upper.empty() && b.padding.lower.empty() && b.padding.upper.empty())
        return true;
    return a == b;
}
inline bool same_layouts(const std::vector<Layout>& a, const std::vector<Layout>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!same_layout(a[i], b[i])) return false;
    return true;
}

// Hash combining helper used by impl-cache keys.
inline void hash_combine(size_t& seed, size_t v) { seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }
size_t hash_layout(const Layout& l);

}   // namespace dynrt
