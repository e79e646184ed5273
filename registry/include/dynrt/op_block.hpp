// Block rearrangements between channels and spatial dims (depth_to_space,
// space_to_depth): the `blocksize` attribute and the dims of an output whose
// extents are an input's times or over a block factor, bounds kept for
// dynamic dims.
#pragma once

#include <cstdint>
#include <string>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/shape.hpp"

namespace dynrt {

// `blocksize` of op `op`'s node `node`: an error naming the attribute when it is below 1.
int64_t blocksize_attr(const Attributes& a, const std::string& op, const std::string& node);

// Dim `d` times `f` (>= 1), bounds scaled; a product above kMaxElements is an
// error at `where` naming `what`.
Dimension dim_times(const Dimension& d, int64_t f, const ErrorContext& where, const std::string& what);

// Dim `d` over `f` (>= 1): a static dim's quotient (the caller checked it is a
// multiple), bounds narrowed to the multiples of f.
Dimension dim_over(const Dimension& d, int64_t f);

}   // namespace dynrt
