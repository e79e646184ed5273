// Checked arithmetic for element counts, byte sizes and shape inference.
//
// Every product or sum of dims, counts or byte sizes goes through these, so a
// shape whose size does not fit (an input [2^32, 2^32, 1], a reshape target of
// 2^62 elements) is an Error naming what overflowed instead of a wrapped, tiny
// size that a kernel then reads past. Used by Shape and Layout, by op shape
// inference and by the file readers before they allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dynrt/error.hpp"

namespace dynrt {

// a * b and a + b for int64_t or size_t; throw Error("<what> overflows: a * b")
// when the result does not fit.
template <typename T>
T checked_op(bool overflow, T r, T a, T b, const char* op, const char* what) {
    if (overflow) throw Error(std::string(what) + " overflows: " + std::to_string(a) + op + std::to_string(b));
    return r;
}
template <typename T>
T checked_mul(T a, T b, const char* what) {
    T r{};
    const bool overflow = __builtin_mul_overflow(a, b, &r);
    return checked_op(overflow, r, a, b, " * ", what);
}
template <typename T>
T checked_add(T a, T b, const char* what) {
    T r{};
    const bool overflow = __builtin_add_overflow(a, b, &r);
    return checked_op(overflow, r, a, b, " + ", what);
}

// Product of dims as an element count in `*count`; 0 when any dim is 0
// (whatever the others are). False when a dim is negative or the product
// exceeds kMaxElements (the caller names the shape in its error).
inline constexpr uint64_t kMaxElements = uint64_t{1} << 60;
template <typename Dims>
bool count_fits(const Dims& dims, size_t* count) {
    uint64_t n = 1;
    bool overflow = false;
    for (auto d : dims) {
        if (d == 0) {
            *count = 0;
            return true;
        }
        if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > kMaxElements) overflow = true;
    }
    *count = static_cast<size_t>(n);
    return !overflow;
}

}   // namespace dynrt
