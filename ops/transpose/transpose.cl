// transpose on OpenCL over the collapsed dims the host computes (input dims
// that stay adjacent and in order in the output are one dim; the static build
// also drops size-1 dims). Every extent and stride below is a JIT expression:
// a literal in the static build, a product of shape_info dims in the
// shape-agnostic one. Elements move as unsigned integers of their width
// (ELEM_T), so one kernel serves every data type.
//
// TR_TILED 0, transpose_runs: the contiguous input dim stays last, so every
// output row (RUN_LEN elements) is one contiguous input run. A row's input
// offset is computed once per row, then work-items along dim 0 copy the run
// with coalesced 4-element vectors (every run starts 4-aligned when RUN_LEN is
// a multiple of 4: the other input strides are multiples of it), else element
// by element.
//
// TR_TILED 1, transpose_tiles: the contiguous input dim (A, extent TILE_A)
// moves before the output's last dim (B, extent TILE_B). A work-group of
// TILE x TILE/4 work-items moves TILE x TILE tiles through local memory:
// reads along A and writes along B, both coalesced; the padding column keeps
// the transposed reads off one bank. The other dims are the batch; a tile's
// index splits into its A and B tiles and batch index once per tile.
#define TILE 32
#define TILE_ROWS (TILE / 4)

// The offset of index `i` over `n` dims of extents `dims` and strides `strides`.
inline ulong offset_of(ulong i, const ulong* dims, const ulong* strides, int n) {
    ulong offset = 0;
    for (int k = n - 1; k >= 0; --k) {
        ulong c;
        i = udiv_rem(i, dims[k], &c);
        offset += c * strides[k];
    }
    return offset;
}

#if !TR_TILED
KERNEL(transpose_runs)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* output0) {
    const ulong len = RUN_LEN, rows = ROWS;
    const ulong dims[] = {ROW_DIMS};
    const ulong strides[] = {ROW_IN_STRIDES};
    const bool vec = len % 4 == 0;
    const ulong per_row = vec ? len / 4 : len;
    for (ulong r = get_global_id(1); r < rows; r += get_global_size(1)) {
        const ulong from = offset_of(r, dims, strides, ROW_RANK), to = r * len;
        if (vec) {
            __global const CAT(ELEM_T, 4)* src = (__global const CAT(ELEM_T, 4)*)(input0 + from);
            __global CAT(ELEM_T, 4)* dst = (__global CAT(ELEM_T, 4)*)(output0 + to);
            for (ulong v = get_global_id(0); v < per_row; v += get_global_size(0)) dst[v] = src[v];
        } else {
            for (ulong v = get_global_id(0); v < per_row; v += get_global_size(0)) output0[to + v] = input0[from + v];
        }
    }
}
#else
KERNEL(transpose_tiles)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* output0) {
    __local ELEM_T tile[TILE][TILE + 1];
    const ulong a_len = TILE_A, b_len = TILE_B;
    const ulong b_in_stride = TILE_B_IN_STRIDE, a_out_stride = TILE_A_OUT_STRIDE;
    const ulong dims[] = {BATCH_DIMS};
    const ulong in_strides[] = {BATCH_IN_STRIDES};
    const ulong out_strides[] = {BATCH_OUT_STRIDES};
    const ulong tiles_a = (a_len + TILE - 1) / TILE, tiles_b = (b_len + TILE - 1) / TILE;
    const ulong tiles = tiles_a * tiles_b * BATCH;
    const uint x = get_local_id(0), y = get_local_id(1);
    // The trip count is the same for the whole work-group: the barriers are safe.
    for (ulong t = get_group_id(0); t < tiles; t += get_num_groups(0)) {
        ulong ta, tb;
        const ulong batch = udiv_rem(udiv_rem(t, tiles_a, &ta), tiles_b, &tb);
        const ulong in0 = offset_of(batch, dims, in_strides, BATCH_RANK);
        const ulong out0 = offset_of(batch, dims, out_strides, BATCH_RANK);
        const ulong a0 = ta * TILE, b0 = tb * TILE;
        __global const ELEM_T* src = input0 + in0 + (b0 + y) * b_in_stride + a0 + x;
        __global ELEM_T* dst = output0 + out0 + (a0 + y) * a_out_stride + b0 + x;
        if (a0 + TILE <= a_len && b0 + TILE <= b_len) {
            // A whole tile: fixed trip counts, so every load is in flight before the first store.
            ELEM_T v[TILE / TILE_ROWS];
            for (uint k = 0; k < TILE / TILE_ROWS; ++k) v[k] = src[k * TILE_ROWS * b_in_stride];
            for (uint k = 0; k < TILE / TILE_ROWS; ++k) tile[y + k * TILE_ROWS][x] = v[k];
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint k = 0; k < TILE / TILE_ROWS; ++k) v[k] = tile[x][y + k * TILE_ROWS];
            for (uint k = 0; k < TILE / TILE_ROWS; ++k) dst[k * TILE_ROWS * a_out_stride] = v[k];
        } else {
            if (a0 + x < a_len)
                for (uint k = 0; k < TILE / TILE_ROWS && b0 + y + k * TILE_ROWS < b_len; ++k)
                    tile[y + k * TILE_ROWS][x] = src[k * TILE_ROWS * b_in_stride];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (b0 + x < b_len)
                for (uint k = 0; k < TILE / TILE_ROWS && a0 + y + k * TILE_ROWS < a_len; ++k)
                    dst[k * TILE_ROWS * a_out_stride] = tile[x][y + k * TILE_ROWS];
        }
        barrier(CLK_LOCAL_MEM_FENCE);   // the tile is refilled on the next trip
    }
}
#endif
