// dequantize_linear on OpenCL: one work-item per element, by the rules of
// dequantize_linear_op.cpp: (x - zero point) in int, one multiply in f32.
//
// From the host: SCALE_F16 / OUT_F16 (scale loaded, y stored through
// vload_half / vstore_half_rte), X_I32, HAS_ZP, PER_AXIS with CHANNELS and
// INNER (element i takes scale (i / INNER) % CHANNELS). Work-items below the
// scale's length check their scale (not positive: report[0] = index + 1) and,
// for an i32 x, their zero point (not 0: report[1] = index + 1).
#if SCALE_F16
#define LOAD_S(i) vload_half((i), input1)
#else
#define LOAD_S(i) input1[(i)]
#endif

KERNEL(dequantize_linear_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                              __global const INPUT1_TYPE* input1,
#if HAS_ZP
                              __global const INPUT2_TYPE* input2,
#endif
                              __global OUTPUT0_TYPE* output0, __global int* report) {
    const ulong i = get_global_id(0);
    if (i < (ulong)INPUT1_LENGTH) {
        if (!(LOAD_S(i) > 0.0f)) atomic_cmpxchg(report, 0, (int)(i + 1));
#if HAS_ZP && X_I32
        if (input2[i] != 0) atomic_cmpxchg(report + 1, 0, (int)(i + 1));
#endif
    }
    if (i >= (ulong)OUTPUT0_LENGTH) return;
#if PER_AXIS
    const ulong c = (i / (ulong)INNER) % (ulong)CHANNELS;
#else
    const ulong c = 0;
#endif
#if HAS_ZP
    const int zp = (int)input2[c];
#else
    const int zp = 0;
#endif
    const float y = (float)((int)input0[i] - zp) * (float)LOAD_S(c);
#if OUT_F16
    vstore_half_rte(y, i, output0);
#else
    output0[i] = y;
#endif
}
