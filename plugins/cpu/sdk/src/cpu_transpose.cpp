#include "cpu_transpose.hpp"

#include <algorithm>

#include "dynrt/cpu_parallel.hpp"

namespace dynrt {

namespace {

// Tiles: a band across the short side (the channels) that sweeps the long
// one. Both sides' rows are strided by the other's length; where that is a
// multiple of 4 KiB (64 channels at 96x96: 36 KiB) every row of a wide tile
// falls in the same cache sets, and 32 x 64 tiles took 0.31 ms where these
// take 0.065 (one AVX-512 core, 8x8 register blocks). Channels as rows: 16
// of them (32 from 128 on) by 512 columns; channels as columns: 512 rows by 8
// of them (16 from 128 on). 16 to 256 channels at 56-112 px: 0.003-0.12 ms.
constexpr size_t kSweep = 512;
size_t band(size_t channels, size_t narrow) { return channels >= 128 ? 2 * narrow : narrow; }

using TileFn = void (*)(const float*, float*, size_t, size_t, size_t, size_t);

TileFn tile_fn() {
    static const TileFn kForThisCpu = __builtin_cpu_supports("avx2") ? transpose_tile_avx2 : transpose_tile_baseline;
    return kForThisCpu;
}

size_t tiles(size_t n, size_t tile) { return (n + tile - 1) / tile; }

}   // namespace

void transpose_tile_baseline(const float* x, float* y, size_t rows, size_t cols, size_t ldx, size_t ldy) {
    for (size_t c = 0; c < cols; ++c)
        for (size_t r = 0; r < rows; ++r) y[c * ldy + r] = x[r * ldx + c];
}

void transpose_f32(const CpuThreads& threads, const float* x, float* y, size_t batches, size_t rows, size_t cols) {
    const bool channel_rows = rows <= cols;
    const size_t tile_rows = channel_rows ? band(rows, 16) : kSweep;
    const size_t tile_cols = channel_rows ? kSweep : band(cols, 8);
    const size_t row_tiles = tiles(rows, tile_rows), col_tiles = tiles(cols, tile_cols);
    const size_t per_batch = row_tiles * col_tiles, matrix = rows * cols;
    const TileFn fn = tile_fn();
    // A work item is one tile; a thread takes a contiguous run of them.
    const size_t grain = std::max<size_t>(1, CpuThreads::kBytesPerThread / (2 * sizeof(float) * tile_rows * tile_cols));
    parallel_for(threads, batches * per_batch, grain, [&](size_t begin, size_t end) {
        for (size_t t = begin; t < end; ++t) {
            const size_t b = t / per_batch, rt = t % per_batch / col_tiles, ct = t % col_tiles;
            const size_t r0 = rt * tile_rows, c0 = ct * tile_cols;
            fn(x + b * matrix + r0 * cols + c0, y + b * matrix + c0 * rows + r0, std::min(tile_rows, rows - r0),
               std::min(tile_cols, cols - c0), cols, rows);
        }
    });
}

}   // namespace dynrt
