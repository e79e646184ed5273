#include "dynrt/host_tensor.hpp"

#include <algorithm>

#include <cmath>
#include <limits>

#include "dynrt/error.hpp"

namespace dynrt {

namespace {

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Rounds `v` (already truncated by `shift` bits) to nearest, ties to even.
uint32_t round_shift(uint32_t v, int shift) {
    const uint32_t q = v >> shift;
    const uint32_t rem = v & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    return (rem > half || (rem == half && (q & 1u))) ? q + 1u : q;
}

template <typename T>
T saturate(double v) {
    if (std::isnan(v)) return 0;
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);   // truncates toward zero, like a C cast
}

}   // namespace

uint16_t float_to_half(float f) {
    const uint32_t x = float_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const int exp = static_cast<int>((x >> 23) & 0xffu);
    uint32_t mant = x & 0x7fffffu;

    if (exp == 0xff) {   // inf or nan; keep nan quiet and non-zero
        if (mant == 0) return sign | 0x7c00u;
        return static_cast<uint16_t>(sign | 0x7e00u | (mant >> 13));
    }
    const int e = exp - 127 + 15;   // half exponent field
    if (e >= 31) return sign | 0x7c00u;
    if (e <= 0) {
        // Subnormal half (or zero): value = mant' * 2^-24 with the implicit bit.
        if (e < -10) return sign;   // below half the smallest subnormal
        mant |= 0x800000u;
        return static_cast<uint16_t>(sign | round_shift(mant, 14 - e));
    }
    // A carry out of the mantissa bumps the exponent, up to inf: still correct.
    const uint32_t v = (static_cast<uint32_t>(e) << 23) | mant;
    return static_cast<uint16_t>(sign | round_shift(v, 13));
}

float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(mant), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

HostTensor::HostTensor(DataType t, const Shape& shape) : dtype_(t), shape_(shape) {
    for (int64_t d : shape)
        if (d < 0) throw Error("tensor shape " + shape.to_string() + " has a negative dimension");
    data_.assign(shape_.count() * byte_size(t), 0);
}

std::vector<int64_t> HostTensor::to_int64() const {
    const size_t n = count();
    std::vector<int64_t> out(n);
    auto widen = [&](const auto* src) { std::copy(src, src + n, out.begin()); };
    switch (dtype_) {
        case DataType::i32: widen(as<int32_t>()); break;
        case DataType::i64: widen(as<int64_t>()); break;
        case DataType::u8:
        case DataType::boolean: widen(as<uint8_t>()); break;
        case DataType::i8: widen(as<int8_t>()); break;
        default:
            throw Error(std::string("expected an integer tensor, got ") + dynrt::to_string(dtype_) +
                        shape_.to_string());
    }
    return out;
}

double HostTensor::get_as_double(size_t i) const {
    if (i >= count())
        throw Error("element " + std::to_string(i) + " is out of range for a tensor of " + std::to_string(count()) +
                    " elements");
    switch (dtype_) {
        case DataType::f32: return as<float>()[i];
        case DataType::f16: return half_to_float(as<uint16_t>()[i]);
        case DataType::i32: return as<int32_t>()[i];
        case DataType::i64: return static_cast<double>(as<int64_t>()[i]);
        case DataType::u8:
        case DataType::boolean: return as<uint8_t>()[i];
        case DataType::i8: return as<int8_t>()[i];
        case DataType::f64: return as<double>()[i];
    }
    return 0;
}

void HostTensor::set_from_double(size_t i, double v) {
    if (i >= count())
        throw Error("element " + std::to_string(i) + " is out of range for a tensor of " + std::to_string(count()) +
                    " elements");
    // Integers truncate toward zero and saturate, so out-of-range values never
    // reach an undefined float-to-int conversion.
    switch (dtype_) {
        case DataType::f32: as<float>()[i] = static_cast<float>(v); break;
        case DataType::f16: as<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
        case DataType::i32: as<int32_t>()[i] = saturate<int32_t>(v); break;
        case DataType::i64: as<int64_t>()[i] = saturate<int64_t>(v); break;
        case DataType::u8: as<uint8_t>()[i] = saturate<uint8_t>(v); break;
        case DataType::i8: as<int8_t>()[i] = saturate<int8_t>(v); break;
        case DataType::boolean: as<uint8_t>()[i] = (v != 0.0) ? 1 : 0; break;
        case DataType::f64: as<double>()[i] = v; break;
    }
}

HostTensor HostTensor::from_int64(DataType t, const Shape& shape, const std::vector<int64_t>& v) {
    HostTensor h(t, shape);
    if (v.size() != h.count())
        throw Error("got " + std::to_string(v.size()) + " values for a tensor of shape " + shape.to_string() + " (" +
                    std::to_string(h.count()) + " elements)");
    for (size_t i = 0; i < v.size(); ++i) {
        switch (t) {
            case DataType::i32: h.as<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
            case DataType::i64: h.as<int64_t>()[i] = v[i]; break;
            case DataType::u8: h.as<uint8_t>()[i] = static_cast<uint8_t>(v[i]); break;
            case DataType::i8: h.as<int8_t>()[i] = static_cast<int8_t>(v[i]); break;
            case DataType::boolean: h.as<uint8_t>()[i] = v[i] != 0 ? 1 : 0; break;
            case DataType::f32: h.as<float>()[i] = static_cast<float>(v[i]); break;
            case DataType::f16: h.as<uint16_t>()[i] = float_to_half(static_cast<float>(v[i])); break;
            case DataType::f64: h.as<double>()[i] = static_cast<double>(v[i]); break;
        }
    }
    return h;
}

HostTensor HostTensor::from_floats(const Shape& shape, const std::vector<float>& v) {
    HostTensor h(DataType::f32, shape);
    if (v.size() != h.count())
        throw Error("got " + std::to_string(v.size()) + " values for a tensor of shape " + shape.to_string() + " (" +
                    std::to_string(h.count()) + " elements)");
    if (!v.empty()) std::memcpy(h.data(), v.data(), v.size() * sizeof(float));
    return h;
}

}   // namespace dynrt
