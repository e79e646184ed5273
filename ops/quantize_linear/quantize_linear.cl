// quantize_linear on OpenCL: one work-item per element, by the rules of
// quantize_linear_op.cpp: q = x / scale in f32, rint (ties to even), plus the
// zero point, saturated (convert_*_sat: NaN gives 0).
//
// From the host: IN_F16 / SCALE_F16 (x and scale loaded through vload_half),
// HAS_ZP, PER_AXIS with CHANNELS and INNER (element i takes scale
// (i / INNER) % CHANNELS), QLO / QHI (the output range), CONVERT_OUT(v).
// Work-items below the scale's length check their scale: one that is not
// positive sets report[0] to its index + 1 (the host raises the error).
#if IN_F16
#define LOAD_X(i) vload_half((i), input0)
#else
#define LOAD_X(i) input0[(i)]
#endif
#if SCALE_F16
#define LOAD_S(i) vload_half((i), input1)
#else
#define LOAD_S(i) input1[(i)]
#endif

KERNEL(quantize_linear_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                            __global const INPUT1_TYPE* input1,
#if HAS_ZP
                            __global const INPUT2_TYPE* input2,
#endif
                            __global OUTPUT0_TYPE* output0, __global int* report) {
    const ulong i = get_global_id(0);
    if (i < (ulong)INPUT1_LENGTH && !(LOAD_S(i) > 0.0f)) atomic_cmpxchg(report, 0, (int)(i + 1));
    if (i >= (ulong)OUTPUT0_LENGTH) return;
#if PER_AXIS
    const ulong c = (i / (ulong)INNER) % (ulong)CHANNELS;
#else
    const ulong c = 0;
#endif
    const float q = (float)LOAD_X(i) / (float)LOAD_S(c);
#if HAS_ZP
    const float zp = (float)input2[c];
#else
    const float zp = 0.0f;
#endif
    const float v = clamp(rint(clamp(q, QLO - zp - 1.0f, QHI - zp + 1.0f)) + zp, QLO, QHI);
    output0[i] = CONVERT_OUT(isnan(q) ? 0.0f : v);
}
