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

enum class DataType : uint8_t { f32, f16, i32, i64, u8, i8, boolean };

size_t bitwidth(DataType t);
inline size_t byte_size(DataType t) { return (bitwidth(t) + 7) / 8; }
const char* to_string(DataType t);
DataType parse_data_type(const std::string& s);   // "f32", "float32", "int64", "bool" ...; throws
bool is_floating(DataType t);

// Memory format. `plain` is row-major in the order of the shape's dims. Blocked
// formats (channels split in blocks of N) will be added as further values; code
// must ask is_blocked() rather than compare against plain.
enum class Format : uint8_t { plain };
const char* to_string(Format f);
Format parse_format(const std::string& s);
bool is_blocked(Format f);

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
    Shape get_shape() const { return shape.to_shape(); }      // throws unless static
    Shape padded_shape() const;                               // dims + lower + upper
    size_t count() const;                                     // logical elements
    size_t bytes() const;                                     // padded elements * dtype size
    Layout with_shape(const Shape& s) const;                  // same type/format, no padding
    std::string to_string() const;                            // "f32[1,?,64]"

    bool operator==(const Layout& o) const;
    bool operator!=(const Layout& o) const { return !(*this == o); }
};

// Hash combining helper used by impl-cache keys.
inline void hash_combine(size_t& seed, size_t v) {
    seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}
size_t hash_layout(const Layout& l);

}  // namespace dynrt
