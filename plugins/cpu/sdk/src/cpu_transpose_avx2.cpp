// transpose_tile_avx2, built with AVX2 (this file's compile options,
// plugins/cpu/sdk/CMakeLists.txt); called only where the CPU has it
// (cpu_transpose.cpp checks).
#include <immintrin.h>

#include "cpu_transpose.hpp"

namespace dynrt {

namespace {

// Rows r[0..7] become columns: the classic unpack / shuffle / lane-swap net.
inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

}   // namespace

void transpose_tile_avx2(const float* x, float* y, size_t rows, size_t cols, size_t ldx, size_t ldy) {
    const size_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
    for (size_t c = 0; c < cols8; c += 8)
        for (size_t r = 0; r < rows8; r += 8) {
            __m256 v[8];
            for (size_t i = 0; i < 8; ++i) v[i] = _mm256_loadu_ps(x + (r + i) * ldx + c);
            transpose8(v);
            for (size_t i = 0; i < 8; ++i) _mm256_storeu_ps(y + (c + i) * ldy + r, v[i]);
        }
    // The edges: the rows past the last block of 8 (every column), then the
    // columns past it (the rows the blocks covered).
    if (rows8 < rows) transpose_tile_baseline(x + rows8 * ldx, y + rows8, rows - rows8, cols, ldx, ldy);
    if (cols8 < cols) transpose_tile_baseline(x + cols8, y + cols8 * ldy, rows8, cols - cols8, ldx, ldy);
}

}   // namespace dynrt
