#include "dynrt/shape.hpp"

#include <algorithm>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"

namespace dynrt {

Dimension::Dimension(int64_t value) : min_(value), max_(value) {
    if (value < 0) throw Error("a static dimension must be >= 0, got " + std::to_string(value));
}

Dimension::Dimension(int64_t min, int64_t max) : min_(min), max_(max) {
    if (min < 0) throw Error("a dimension's lower bound must be >= 0, got " + std::to_string(min));
    if (max != kUnbounded && max < min)
        throw Error("invalid dimension bounds " + std::to_string(min) + ".." + std::to_string(max));
}

int64_t Dimension::get_length() const {
    if (!is_static()) throw Error("dimension " + to_string() + " is dynamic and has no length");
    return min_;
}

bool Dimension::compatible(const Dimension& other) const {
    const int64_t lo = std::max(min_, other.min_);
    if (max_ != kUnbounded && lo > max_) return false;
    if (other.max_ != kUnbounded && lo > other.max_) return false;
    return true;
}

std::string Dimension::to_string() const {
    if (is_static()) return std::to_string(min_);
    if (max_ == kUnbounded) return min_ == 0 ? "?" : std::to_string(min_) + "..";
    return std::to_string(min_) + ".." + std::to_string(max_);
}

size_t Shape::count() const {
    size_t n = 0;
    if (!count_fits(dims_, &n))
        throw Error("shape " + to_string() + " has more than 2^60 elements (or a negative dim)");
    return n;
}

std::string Shape::to_string() const {
    std::string s = "[";
    for (size_t i = 0; i < dims_.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(dims_[i]);
    }
    return s + "]";
}

PartialShape::PartialShape(const Shape& s) {
    dims_.reserve(s.size());
    for (int64_t d : s) dims_.emplace_back(d);
}

PartialShape PartialShape::dynamic_of_rank(size_t rank) {
    if (rank > kMaxRank)
        throw Error("rank " + std::to_string(rank) + " is above the limit of " + std::to_string(kMaxRank));
    return PartialShape(std::vector<Dimension>(rank, Dimension::dynamic()));
}

bool PartialShape::is_static() const {
    return std::all_of(dims_.begin(), dims_.end(), [](const Dimension& d) { return d.is_static(); });
}

Shape PartialShape::to_shape() const {
    if (!is_static()) throw Error("shape " + to_string() + " is dynamic, a static shape is required");
    std::vector<int64_t> s;
    s.reserve(dims_.size());
    for (const Dimension& d : dims_) s.push_back(d.get_length());
    return Shape(std::move(s));
}

bool PartialShape::compatible(const Shape& s) const {
    if (s.size() != dims_.size()) return false;
    for (size_t i = 0; i < dims_.size(); ++i)
        if (!dims_[i].contains(s[i])) return false;
    return true;
}

std::string PartialShape::to_string() const {
    std::string s = "[";
    for (size_t i = 0; i < dims_.size(); ++i) {
        if (i) s += ",";
        s += dims_[i].to_string();
    }
    return s + "]";
}

}   // namespace dynrt
