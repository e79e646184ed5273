// The direct convolution's loops built with AVX-512 F + VL and FMA (this
// file's compile options, plugins/cpu/sdk/CMakeLists.txt): the same 8-lane
// vectors, in 32 registers, so rows of 16 columns go 8 channels at a time.
// Called only where the CPU has them (cpu_conv_direct.cpp checks).
#include "cpu_conv_direct_kernel.hpp"

namespace dynrt {

void direct_conv_prep_avx512(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_prep(a, begin, end); }
void direct_conv_rows_avx512(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_rows<8>(a, begin, end); }

}   // namespace dynrt
