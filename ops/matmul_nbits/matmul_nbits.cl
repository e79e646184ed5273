// matmul_nbits on OpenCL: one work-item per output element (row m of a,
// column n of the weight), which walks K block by block, dequantising the
// packed codes of its column on the fly: w = (code - zero) * scale.
//
// input0 a [rows, K_DIM] (INPUT0_TYPE), input1 the codes (uchar, BLOB bytes
// per block, low bits first), input2 scales (one per block), optional input3
// zero points (HAS_ZP: packed uchar when ZP_PACKED, ZP_ROW bytes per column,
// else one of a's type per block; none: 2^(BITS-1)), optional bias
// (HAS_BIAS, BIAS_PARAM names it). Sums in FLOAT_ACC.
#if HAS_ZP
#define ZP_PARAM , __global const INPUT3_TYPE* input3
#else
#define ZP_PARAM
#endif

#define CODE_MASK ((1u << BITS) - 1u)

KERNEL(matmul_nbits_cols)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const uchar* input1,
 __global const INPUT2_TYPE* input2 ZP_PARAM BIAS_PARAM, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;
    const ulong m = i / N_DIM, n = i % N_DIM;
    __global const INPUT0_TYPE* a = input0 + m * K_DIM;
    FLOAT_ACC acc = (FLOAT_ACC)0;
    for (uint blk = 0; blk < BLOCKS; ++blk) {
        const float scale = (float)LOAD(input2, n * BLOCKS + blk);
#if HAS_ZP && ZP_PACKED
        const uint zbit = blk * BITS;
        const float zero = (float)((((__global const uchar*)input3)[n * ZP_ROW + zbit / 8] >> (zbit % 8)) & CODE_MASK);
#elif HAS_ZP
        const float zero = (float)LOAD(input3, n * BLOCKS + blk);
#else
        const float zero = (float)(1u << (BITS - 1));
#endif
        __global const uchar* codes = input1 + (n * BLOCKS + blk) * BLOB;
        const uint k0 = blk * BLOCK;
        const uint len = min((uint)BLOCK, (uint)K_DIM - k0);
        float part = 0.0f;
        for (uint j = 0; j < len; ++j) {
            const uint bit = j * BITS;
            const float q = (float)((codes[bit / 8] >> (bit % 8)) & CODE_MASK);
            part += (float)LOAD(a, k0 + j) * ((q - zero) * scale);
        }
        acc += (FLOAT_ACC)part;
    }
#if HAS_BIAS
    acc += (FLOAT_ACC)LOAD(bias, n);
#endif
    STORE(output0, i, acc);
}
