// Axes of ops that add or remove dims (squeeze, unsqueeze): read during shape
// inference from the `axes` attribute or from input 1, a 1-D i32/i64 tensor
// the op lists in OpDefinition::value_inputs, then normalised to positions.
//
// Shape inference calls read_axes() first and, once the rank the axes index is
// known, normalize_axes(). Every error they throw names the node, the op and
// the field 'axes'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt {

// An error of node `node` (op `op`) about its axes.
Error axes_error(const std::string& node, const std::string& op, const std::string& message);

// The axes as given. With input 1 present, giving the attribute too is an
// error, as are a dtype other than i32/i64, a rank other than 1, and unknown
// values of a dynamic length (the output rank would be unknown).
struct OpAxes {
    std::vector<int64_t> values;   // the axes, when known (maybe empty)
    bool known = true;             // false: input 1's values are not known yet
    size_t count = 0;              // with !known: how many axes input 1 holds (> 0)
    std::string source;            // "the `axes` attribute" or "the axes (input 1)", for messages
};
OpAxes read_axes(const ShapeInferContext& ctx, const std::string& op);

// What the axes index, for messages: the input's dims (squeeze) or the
// output's (unsqueeze, whose output rank is the input's plus the axes).
enum class AxesOf { input, output };

// The axes as positions in [0, rank): a negative axis counts from the end. An
// axis outside [-rank, rank) or a position named twice is an error naming
// the axes, their source and the input shape `in`.
std::vector<size_t> normalize_axes(const std::string& node, const std::string& op, const OpAxes& axes, size_t rank,
                                   AxesOf of, const PartialShape& in);

}   // namespace dynrt
