// The `reduction` of the scatter ops (scatter_elements, scatter_nd): how an
// update combines with the data element it lands on. none replaces it, add
// and mul wrap on integers (two's complement), max and min keep the larger or
// smaller; f16 combines in float and rounds once per update, as the device
// does (dynrt/ocl_scatter.cl, dynrt/ocl_snippets.hpp). Boolean data takes
// none only.
#pragma once

#include <cstddef>
#include <string>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt {

enum class ScatterReduction : size_t { none, add, mul, max, min };

// The `reduction` attribute (none, add, mul, max, min; default none).
AttrSpec scatter_reduction_attr();
ScatterReduction scatter_reduction_of(const std::string& op, const Attributes& a);

// An error of scatter op `op` about field `field`: "data D, indices I and
// updates U: <why>".
Error scatter_error(const ShapeInferContext& ctx, const std::string& op, const std::string& field,
                    const std::string& why);
// The checks every scatter op makes first: indices i32 or i64, updates of
// data's dtype, no reduction on boolean data.
void check_scatter_types(const ShapeInferContext& ctx, const std::string& op);

// Host: combines `n` elements of `src` into `dst` (both of the data's dtype).
using ScatterCombine = void (*)(unsigned char* dst, const unsigned char* src, size_t n, ScatterReduction r);
// The combine of dtype `t`; null for boolean (no reduction is defined).
ScatterCombine scatter_combine_for(DataType t);

}   // namespace dynrt
