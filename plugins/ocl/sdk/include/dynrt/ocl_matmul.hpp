// The matrix-product kernel family of the OpenCL op SDK (kernels/matmul.cl),
// shared by the ops that are a matrix product at heart (gemm, fully_connected).
//
// An op says what its attributes make of the product (OclMatmulVariant: a
// fully_connected mode, transposes, alpha, beta) and how its runtime layouts
// give the sizes (OclMatmulSizes), and add_ocl_matmul_impls() registers
// "ocl_dynamic" and "ocl_static" (f32) as multi-kernel impls (ocl_impl.hpp):
// skinny kernels for M <= 16 (decode shapes), one entry point per row bucket
// (matmul_skinny_1, _2, _4, _8, _16), and matmul_tiled. A static impl builds
// the one kernel its M needs (a skinny kernel compiled for exactly its M); the
// shape-agnostic impl builds every entry point of its one program and runs the
// one the runtime M picks (its update_dispatch_data): the smallest bucket >= M,
// so the row loops have constant trip counts. Tile sizes come from the device
// (16x16 work-items with 8x8 register blocks on GPUs, smaller on CPUs).
// The kernels store through OUTPUT0_PHYS (the output may be a slice of an
// in-place concat) and apply fused post-ops.
#pragma once

#include <functional>
#include <string>

#include "dynrt/implementation_map.hpp"
#include "dynrt/op_matmul.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// What the op's attributes make of the kernels; fixed per node.
using OclMatmulVariant = MatmulVariant;

// Sizes of the product for the runtime layouts: [batches] x M x N.
struct OclMatmulSizes {
    size_t M = 0, N = 0, batches = 0;
};

struct OclMatmulHooks {
    std::function<OclMatmulVariant(const KernelParams&)> variant;
    std::function<OclMatmulSizes(const KernelParams&)> sizes;   // when the runtime layouts change
    size_t fake_align_rows = 0;   // ImplEntry::fake_align_rows (rows rounded up at run time)
};

void add_ocl_matmul_impls(ModuleRegistrar& reg, const std::string& op, OclMatmulHooks hooks);

}   // namespace dynrt
