// mel_weight_matrix on OpenCL: one work-item per output element (bin j, band
// i); each computes its band's three edges from the scalar inputs in
// FLOAT_ACC (double where the device has fp64), as the host reference does in
// double. The output's dims are [dft_length / 2 + 1, num_mel_bins].
inline long mel_edge(FLOAT_ACC low, FLOAT_ACC step, long e, long dft_length, long sample_rate) {
    const FLOAT_ACC hz = (FLOAT_ACC)700 * expm1(((FLOAT_ACC)e * step + low) / (FLOAT_ACC)2595 * log((FLOAT_ACC)10));
    return (long)floor((FLOAT_ACC)(dft_length + 1) * hz / (FLOAT_ACC)sample_rate);
}

KERNEL(mel_weight_matrix_bands)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                                __global const INPUT1_TYPE* input1, __global const INPUT2_TYPE* input2,
                                __global const INPUT3_TYPE* input3, __global const INPUT4_TYPE* input4,
                                __global OUTPUT0_TYPE* output0) {
    const ulong id = get_global_id(0);
    if (id >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const long bands = (long)input0[0], dft_length = (long)input1[0], sample_rate = (long)input2[0];
    const FLOAT_ACC low = (FLOAT_ACC)2595 * log10((FLOAT_ACC)1 + (FLOAT_ACC)input3[0] / (FLOAT_ACC)700);
    const FLOAT_ACC high = (FLOAT_ACC)2595 * log10((FLOAT_ACC)1 + (FLOAT_ACC)input4[0] / (FLOAT_ACC)700);
    const FLOAT_ACC step = (high - low) / (FLOAT_ACC)(bands + 2);
    const long i = (long)(id % (ulong)bands), j = (long)(id / (ulong)bands);
    const long l = mel_edge(low, step, i, dft_length, sample_rate);
    const long c = mel_edge(low, step, i + 1, dft_length, sample_rate);
    const long h = mel_edge(low, step, i + 2, dft_length, sample_rate);
    FLOAT_ACC w = 0;
    if (h > c && j >= c && j < h) w = (FLOAT_ACC)(h - j) / (FLOAT_ACC)(h - c);
    else if (j == c) w = 1;
    else if (j >= l && j < c) w = (FLOAT_ACC)(j - l) / (FLOAT_ACC)(c - l);
    STORE(output0, id, w);
}
