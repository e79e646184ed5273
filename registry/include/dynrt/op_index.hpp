// Index inputs of the indexing ops (gather_elements, scatter_*, the losses'
// targets, pad's and slice's value inputs): the i32/i64 check every one makes,
// the rank limit of their OpenCL kernels, which address up to 8 right-aligned
// dims, and the checked positions of the ops that index along one axis.
#pragma once

#include <cstddef>
#include <string>

#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

// True for the dtypes an index tensor may have: i32 and i64.
bool is_index_type(DataType t);

// An impl check (HostImplOptions/OclImplOptions validate): empty when input
// `i` is i32 or i64 and, with `max_rank` > 0, no input has a rank above it
// (check_max_rank); else the reason, "<name> type <dtype> is not i32 or i64".
std::string check_index_input(const KernelParams& p, size_t i, const std::string& name, size_t max_rank = 0);

// An impl check: empty when no input has a rank above `max_rank`, else
// "rank <r> is above <max_rank>".
std::string check_max_rank(const KernelParams& p, size_t max_rank);

// Host: the elements-along-an-axis ops (gather_elements, scatter_elements),
// data input 0, indices input 1 of data's rank, the `axis` attribute. For
// every element j of indices, the flat position in data of j's coordinates
// with the axis one replaced by indices[j] (negative counts from the end).
// All are checked first: an index out of range is an error naming op `op`'s
// node, the value, its position, the axis and data's shape.
std::vector<size_t> axis_index_positions(const HostCall& call, const std::string& op);

}   // namespace dynrt
