// dft on OpenCL: one work-item per output bin (outer, k, inner), a direct sum
// over the line's samples in FLOAT_ACC (double where the device has fp64).
//
// From the host: OUTER, INNER, N_IN (the input's axis dim), PARTS (1 real, 2
// complex), BINS (the output's axis dim), HAS_LENGTH (input 1 holds L, the
// transform length; else L = N_IN), INVERSE, DATA_F16. The angle is reduced
// exactly (k n mod L) before the multiply, as in the host reference.
KERNEL(dft_direct)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
#if HAS_LENGTH
                   __global const INPUT1_TYPE* input1,
#endif
                   __global OUTPUT0_TYPE* output0) {
    const ulong id = get_global_id(0);
    const ulong inner = (ulong)INNER, bins = (ulong)BINS, n_in = (ulong)N_IN;
    if (id >= (ulong)OUTER * bins * inner) return;   // the global size is rounded up
#if HAS_LENGTH
    const ulong len = (ulong)input1[0];
#else
    const ulong len = n_in;
#endif
    const ulong i = id % inner, k = (id / inner) % bins, o = id / (inner * bins);
    const ulong used = min(n_in, len);
#if INVERSE
    const FLOAT_ACC sign = (FLOAT_ACC)1;
#else
    const FLOAT_ACC sign = (FLOAT_ACC)-1;
#endif
    const FLOAT_ACC step = sign * (FLOAT_ACC)6.283185307179586476925 / (FLOAT_ACC)len;
    FLOAT_ACC re = 0, im = 0;
    ulong kn = 0;   // k * n mod len
    for (ulong n = 0; n < used; ++n) {
        const ulong at = ((o * n_in + n) * inner + i) * (ulong)PARTS;
        const FLOAT_ACC xr = (FLOAT_ACC)LOAD(input0, at);
        const FLOAT_ACC xi = (PARTS == 2) ? (FLOAT_ACC)LOAD(input0, at + 1) : (FLOAT_ACC)0;
        FLOAT_ACC c;
        const FLOAT_ACC s = sincos(step * (FLOAT_ACC)kn, &c);
        re += xr * c - xi * s;
        im += xr * s + xi * c;
        kn += k;
        if (kn >= len) kn %= len;
    }
#if INVERSE
    re /= (FLOAT_ACC)len;
    im /= (FLOAT_ACC)len;
#endif
    const ulong y = ((o * bins + k) * inner + i) * 2;
    STORE(output0, y, re);
    STORE(output0, y + 1, im);
}
