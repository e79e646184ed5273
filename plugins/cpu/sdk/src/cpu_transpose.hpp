// A batch of f32 matrix transposes, for the oneDNN impls' staged arguments
// that differ from the plain tensors only by where the channels go (x
// [N, C, S...] taken as [N, S..., C] by oneDNN's direct convolutions):
// y[b][c][r] = x[b][r][c] over `batches` row-major matrices of `rows` x
// `cols`. oneDNN's own reorder moved a 64-channel 112x112 tensor either way
// in 0.21 ms on one AVX-512 core, a sixth of a 3x3 convolution's time;
// 8x8 register transposes over bands of channels take 0.065-0.085 ms.
#pragma once

#include <cstddef>

namespace dynrt {

class CpuThreads;

void transpose_f32(const CpuThreads& threads, const float* x, float* y, size_t batches, size_t rows, size_t cols);

// One tile: y[c][r] = x[r][c] for r < rows, c < cols; x rows `ldx` floats
// apart, y rows `ldy` apart. The AVX2 build moves whole 8x8 blocks in
// registers and leaves the edges to the baseline (cpu_transpose_avx2.cpp).
void transpose_tile_baseline(const float* x, float* y, size_t rows, size_t cols, size_t ldx, size_t ldy);
void transpose_tile_avx2(const float* x, float* y, size_t rows, size_t cols, size_t ldx, size_t ldy);

}   // namespace dynrt
