// The direct convolution's loops built with AVX2 + FMA (this file's
// compile options, plugins/cpu/sdk/CMakeLists.txt); called only where the
// CPU has both (cpu_conv_direct.cpp checks).
#include "cpu_conv_direct_kernel.hpp"

namespace dynrt {

void direct_conv_prep_avx2(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_prep(a, begin, end); }
void direct_conv_rows_avx2(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_rows(a, begin, end); }

}   // namespace dynrt
