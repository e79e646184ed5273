// What the attributes of a matrix-product op (gemm, fully_connected) make of
// the product, for the device SDKs' matmul families (dynrt/ocl_matmul.hpp,
// dynrt/cpu_matmul.hpp): one description, every device.
#pragma once

namespace dynrt {

struct MatmulVariant {
    bool fc = false;               // fully_connected: every leading dim of input 0 is a row, weights [N, K], bias [N]
    bool ta = false, tb = false;   // op(a), op(b) transposed over their last two dims
    double alpha = 1.0, beta = 1.0;
};

}   // namespace dynrt
