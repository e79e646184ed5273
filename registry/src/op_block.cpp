#include "dynrt/op_block.hpp"

#include "dynrt/checked_math.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

int64_t blocksize_attr(const Attributes& a, const std::string& op, const std::string& node) {
    const int64_t b = a.get_int("blocksize");
    if (b < 1)
        throw Error("blocksize " + std::to_string(b) + " must be at least 1", node_context(node, op, "blocksize"));
    return b;
}

Dimension dim_times(const Dimension& d, int64_t f, const ErrorContext& where, const std::string& what) {
    const auto mul = [&](int64_t v) {
        if (v > static_cast<int64_t>(kMaxElements) / f) throw Error(what + " has more than 2^60 elements", where);
        return v * f;
    };
    if (d.is_static()) return Dimension(mul(d.get_length()));
    return Dimension(mul(d.min()), d.max() == Dimension::kUnbounded ? Dimension::kUnbounded : mul(d.max()));
}

Dimension dim_over(const Dimension& d, int64_t f) {
    if (d.is_static()) return Dimension(d.get_length() / f);
    return Dimension((d.min() + f - 1) / f, d.max() == Dimension::kUnbounded ? Dimension::kUnbounded : d.max() / f);
}

}   // namespace dynrt
