// stft on OpenCL: one work-item per output bin (batch, frame, k), a direct
// sum over the frame's samples in FLOAT_ACC (double where the device has
// fp64); twiddles as described at the loop.
//
// From the host: HAS_WINDOW (input 2 is the window), HAS_LENGTH (the input
// LENGTH_INPUT holds L; else L is the window's length or the signal's),
// BATCH, FRAMES, BINS (the output's dims), SIGNAL_LEN, PARTS, WINDOW_LEN,
// DATA_F16. frame_step is read from input 1.
#define ANCHOR 32   // a power of two

KERNEL(stft_direct)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_WINDOW
                    __global const INPUT2_TYPE* input2,
#endif
#if HAS_LENGTH && HAS_WINDOW
                    __global const INPUT3_TYPE* input3,
#elif HAS_LENGTH
                    __global const INPUT2_TYPE* input2,
#endif
                    __global OUTPUT0_TYPE* output0) {
    const ulong id = get_global_id(0);
    const ulong frames = (ulong)FRAMES, bins = (ulong)BINS;
    if (id >= (ulong)BATCH * frames * bins) return;   // the global size is rounded up
    const ulong length = (ulong)SIGNAL_LEN, parts = (ulong)PARTS;
    const ulong step = (ulong)input1[0];
#if HAS_LENGTH
    const ulong len = (ulong)LENGTH_INPUT[0];
#elif HAS_WINDOW
    const ulong len = (ulong)WINDOW_LEN;
#else
    const ulong len = length;
#endif
    const ulong k = id % bins, f = (id / bins) % frames, b = id / (bins * frames);
    const FLOAT_ACC dir = (FLOAT_ACC)-6.283185307179586476925 / (FLOAT_ACC)len;
    FLOAT_ACC re = 0, im = 0;
    // The twiddle z = exp(+-2 pi i k n / L) of sample n is rotated by w (one
    // step of k) from sample to sample and recomputed from the exactly reduced
    // angle every ANCHOR samples, so rounding cannot build up over a long line
    // and sincos runs once per ANCHOR samples.
    ulong kn = 0;   // k * n mod len
    FLOAT_ACC wc, zc = 1, zs = 0;
    const FLOAT_ACC ws = sincos(dir * (FLOAT_ACC)k, &wc);
    for (ulong n = 0; n < len; ++n) {
        const ulong at = (b * length + f * step + n) * parts;
#if HAS_WINDOW
        const FLOAT_ACC w = (FLOAT_ACC)LOAD(input2, n);
#else
        const FLOAT_ACC w = 1;
#endif
        const FLOAT_ACC xr = w * (FLOAT_ACC)LOAD(input0, at);
        const FLOAT_ACC xi = parts == 2 ? w * (FLOAT_ACC)LOAD(input0, at + 1) : (FLOAT_ACC)0;
        if ((n & (ANCHOR - 1)) == 0) zs = sincos(dir * (FLOAT_ACC)kn, &zc);   // exact again
        re += xr * zc - xi * zs;
        im += xr * zs + xi * zc;
        const FLOAT_ACC t = zc * wc - zs * ws;   // z *= w: the next sample's twiddle
        zs = zc * ws + zs * wc;
        zc = t;
        kn += k;
        if (kn >= len) kn -= len;
    }
    const ulong y = id * 2;
    STORE(output0, y, re);
    STORE(output0, y + 1, im);
}
