// The byte-copy kernel of the OpenCL op SDK (kernels/copy.cl), shared by the
// layout-only ops (reshape, squeeze, unsqueeze, flatten): the output holds the
// input's elements in the same order under another shape. Such ops are views
// (OpTraits::view), so the copy only runs where the flow cannot alias the two
// buffers (padded or blocked layouts, views turned off).
//
// add_copy_ocl_impls() registers "ocl_dynamic" and "ocl_static" (ocl_impl.hpp)
// of one kernel for every dtype: elements move as unsigned integers of their
// width, 4-element vectors per work-item in a grid-stride loop.
#pragma once

#include <string>

#include "dynrt/ocl_impl.hpp"

namespace dynrt {

// Registers the copy as `op`'s OpenCL impls. `options` as for add_ocl_impls;
// a check that input 0 and output 0 hold as many elements is added in front
// of options.validate.
void add_copy_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclImplOptions options = {});

}   // namespace dynrt
