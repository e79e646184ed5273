// Shapes: Dimension, PartialShape (graph-time, may be dynamic) and Shape (run-time,
// static).
//
// A Dimension is static (min == max) or dynamic with optional bounds
// ([min, max], max = -1 for unbounded). A PartialShape is a list of Dimensions of
// any rank; a Shape is a list of concrete extents. Program building works on
// PartialShapes; every run of a network resolves them to Shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace dynrt {

// The largest rank a shape built from a length (a target tensor's element
// count, an attribute) may have; more is an Error, never a huge allocation.
inline constexpr size_t kMaxRank = 64;

class Dimension {
public:
    static constexpr int64_t kUnbounded = -1;

    Dimension() = default;                 // fully dynamic: [0, inf)
    Dimension(int64_t value);              // NOLINT: static dim, value >= 0
    Dimension(int64_t min, int64_t max);   // bounded dynamic (max = -1: unbounded)
    static Dimension dynamic() { return Dimension(); }

    bool is_static() const { return max_ != kUnbounded && min_ == max_; }
    bool is_dynamic() const { return !is_static(); }
    int64_t get_length() const;   // throws unless static
    int64_t min() const { return min_; }
    int64_t max() const { return max_; }   // -1 = unbounded
    bool contains(int64_t v) const { return v >= min_ && (max_ == kUnbounded || v <= max_); }
    bool compatible(const Dimension& other) const;   // ranges intersect
    std::string to_string() const;                   // "4", "?", "1..8", "2.."

    bool operator==(const Dimension& o) const { return min_ == o.min_ && max_ == o.max_; }
    bool operator!=(const Dimension& o) const { return !(*this == o); }

private:
    int64_t min_ = 0;
    int64_t max_ = kUnbounded;
};

class Shape {
public:
    using value_type = int64_t;
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

    size_t size() const { return dims_.size(); }   // rank
    size_t rank() const { return dims_.size(); }
    bool empty() const { return dims_.empty(); }
    int64_t& operator[](size_t i) { return dims_[i]; }
    int64_t operator[](size_t i) const { return dims_[i]; }
    auto begin() { return dims_.begin(); }
    auto end() { return dims_.end(); }
    auto begin() const { return dims_.begin(); }
    auto end() const { return dims_.end(); }
    void push_back(int64_t d) { dims_.push_back(d); }
    const std::vector<int64_t>& dims() const { return dims_; }

    size_t count() const;            // product of dims (1 for rank 0)
    std::string to_string() const;   // "[1,7,64]"

    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    bool operator!=(const Shape& o) const { return dims_ != o.dims_; }
    bool operator<(const Shape& o) const { return dims_ < o.dims_; }

private:
    std::vector<int64_t> dims_;
};

class PartialShape {
public:
    PartialShape() = default;   // rank 0, static (a scalar)
    PartialShape(std::initializer_list<Dimension> dims) : dims_(dims) {}
    explicit PartialShape(std::vector<Dimension> dims) : dims_(std::move(dims)) {}
    PartialShape(const Shape& s);                       // NOLINT: static shape
    static PartialShape dynamic_of_rank(size_t rank);   // throws above kMaxRank

    size_t rank() const { return dims_.size(); }
    size_t size() const { return dims_.size(); }
    Dimension& operator[](size_t i) { return dims_[i]; }
    const Dimension& operator[](size_t i) const { return dims_[i]; }
    auto begin() const { return dims_.begin(); }
    auto end() const { return dims_.end(); }
    const std::vector<Dimension>& dims() const { return dims_; }

    bool is_static() const;
    bool is_dynamic() const { return !is_static(); }
    Shape to_shape() const;                  // throws unless static
    bool compatible(const Shape& s) const;   // same rank, each dim contains
    std::string to_string() const;           // "[1,?,64]"

    bool operator==(const PartialShape& o) const { return dims_ == o.dims_; }
    bool operator!=(const PartialShape& o) const { return !(*this == o); }

private:
    std::vector<Dimension> dims_;
};

}   // namespace dynrt
