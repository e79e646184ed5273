// window on OpenCL: one work-item per element, in FLOAT_ACC (double where the
// device has fp64), rounded once on store.
//
// From the host: KIND (0 hann, 1 hamming, 2 blackman), PERIODIC, DATA_F16.
// The length is the output's; input 0 (the size) only sized it.
KERNEL(window_cosine)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong n = get_global_id(0);
    const ulong size = (ulong)OUTPUT0_LENGTH;
    if (n >= size) return;   // the global size is rounded up
#if PERIODIC
    const ulong n_1 = size;
#else
    const ulong n_1 = size - 1;
    if (n_1 == 0) {   // a symmetric window of one element
        STORE(output0, 0, (FLOAT_ACC)1);
        return;
    }
#endif
    const FLOAT_ACC a = (FLOAT_ACC)6.283185307179586476925 * (FLOAT_ACC)n / (FLOAT_ACC)n_1;
#if KIND == 0
    const FLOAT_ACC w = (FLOAT_ACC)0.5 - (FLOAT_ACC)0.5 * cos(a);
#elif KIND == 1
    const FLOAT_ACC w = (FLOAT_ACC)25 / (FLOAT_ACC)46 - (FLOAT_ACC)21 / (FLOAT_ACC)46 * cos(a);
#else
    const FLOAT_ACC w = (FLOAT_ACC)0.42 - (FLOAT_ACC)0.5 * cos(a) + (FLOAT_ACC)0.08 * cos((FLOAT_ACC)2 * a);
#endif
    STORE(output0, n, w);
}
