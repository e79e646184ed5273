// The reference impl of layout-only ops (reshape, squeeze, unsqueeze,
// flatten): output 0 holds the bytes of input 0 unchanged, only the shape
// differs. Such an op's register function calls add_copy_host_impls() once;
// its OpenCL counterpart is add_copy_ocl_impls() (dynrt/ocl_copy.hpp).
#pragma once

#include <string>

#include "dynrt/registry.hpp"

namespace dynrt {

// How the reference words an element count that differs between input and
// output: "cannot <op> <in> to <out>", or with `with_count` set
// "cannot <op> <in> (<n> elements) to <out>".
struct CopyHostOptions {
    bool with_count = false;
};

// Registers "cpu_ref_dynamic" and "cpu_ref_static" (add_host_impls) of `op`
// as a byte copy of input 0 to output 0; further inputs (axes, a target
// shape) are only read by shape inference.
void add_copy_host_impls(ModuleRegistrar& reg, const std::string& op, CopyHostOptions options = {});

}   // namespace dynrt
