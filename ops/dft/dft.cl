// dft on OpenCL: one work-item per output bin (outer, k, inner), a direct sum
// over the line's samples in FLOAT_ACC (double where the device has fp64).
//
// From the host: OUTER, INNER, N_IN (the input's axis dim), PARTS (1 real, 2
// complex), BINS (the output's axis dim), HAS_LENGTH (input 1 holds L, the
// transform length; else L = N_IN), INVERSE, DATA_F16. Twiddles as described at the loop.
#define ANCHOR 32   // a power of two

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
    // The twiddle z = exp(+-2 pi i k n / L) of sample n is rotated by w (one
    // step of k) from sample to sample and recomputed from the exactly reduced
    // angle every ANCHOR samples, so rounding cannot build up over a long line
    // and sincos runs once per ANCHOR samples.
    ulong kn = 0;   // k * n mod len
    FLOAT_ACC wc, zc = 1, zs = 0;
    const FLOAT_ACC ws = sincos(step * (FLOAT_ACC)k, &wc);
    for (ulong n = 0; n < used; ++n) {
        const ulong at = ((o * n_in + n) * inner + i) * (ulong)PARTS;
        const FLOAT_ACC xr = (FLOAT_ACC)LOAD(input0, at);
        const FLOAT_ACC xi = (PARTS == 2) ? (FLOAT_ACC)LOAD(input0, at + 1) : (FLOAT_ACC)0;
        if ((n & (ANCHOR - 1)) == 0) zs = sincos(step * (FLOAT_ACC)kn, &zc);   // exact again
        re += xr * zc - xi * zs;
        im += xr * zs + xi * zc;
        const FLOAT_ACC t = zc * wc - zs * ws;   // z *= w: the next sample's twiddle
        zs = zc * ws + zs * wc;
        zc = t;
        kn += k;
        if (kn >= len) kn -= len;
    }
#if INVERSE
    re /= (FLOAT_ACC)len;
    im /= (FLOAT_ACC)len;
#endif
    const ulong y = ((o * bins + k) * inner + i) * 2;
    STORE(output0, y, re);
    STORE(output0, y + 1, im);
}
