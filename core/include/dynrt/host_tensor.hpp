// HostTensor: a dense tensor in host memory (static layout, no padding).
//
// Used for network inputs and outputs, constants, the values of shape-inference
// dependencies and .npy files. Element access is by typed pointer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "dynrt/layout.hpp"

namespace dynrt {

class HostTensor {
public:
    HostTensor() = default;
    HostTensor(DataType t, const Shape& shape);   // zero-filled
    DataType dtype() const { return dtype_; }
    const Shape& shape() const { return shape_; }
    Layout layout() const { return Layout(PartialShape(shape_), dtype_); }
    size_t count() const { return shape_.count(); }
    size_t bytes() const { return count() * byte_size(dtype_); }
    void* data() { return data_.data(); }
    const void* data() const { return data_.data(); }
    template <typename T>
    T* as() {
        return reinterpret_cast<T*>(data_.data());
    }
    template <typename T>
    const T* as() const {
        return reinterpret_cast<const T*>(data_.data());
    }

    // Values of an integer tensor (i32/i64/u8/i8/boolean) widened to int64.
    std::vector<int64_t> to_int64() const;
    // Element i converted to double (any dtype; f16 decoded).
    double get_as_double(size_t i) const;
    void set_from_double(size_t i, double v);

    // Changes dtype/shape in place, keeping the storage's capacity (used to keep
    // request outputs preallocated across runs). Contents are unspecified.
    void reset(DataType t, const Shape& shape) {
        dtype_ = t;
        shape_ = shape;
        data_.resize(bytes());
    }
    void reserve_bytes(size_t n) { data_.reserve(n); }
    size_t capacity_bytes() const { return data_.capacity(); }

    static HostTensor from_int64(DataType t, const Shape& shape, const std::vector<int64_t>& v);
    static HostTensor from_floats(const Shape& shape, const std::vector<float>& v);

private:
    DataType dtype_ = DataType::f32;
    Shape shape_;
    std::vector<uint8_t> data_;
};

// IEEE half <-> float helpers (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}   // namespace dynrt
