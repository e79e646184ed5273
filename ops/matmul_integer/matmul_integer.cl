// matmul_integer on OpenCL: one work-item per output element, by the rules of
// matmul_integer_op.cpp: an int sum of (a - a_zp[m]) * (b - b_zp[n]) over K,
// stored as int or requantized (rint(acc * multiplier) + y_zp, saturated).
//
// From the host: A, B and the parameter inputs by name (HAS_AZP / AZP ...,
// each with its _LEN: 1 for per tensor), NUM_INPUTS (the argument list), M, K,
// N, A_BATCH / B_BATCH / Y_BATCH (an input's batch is the output's or one
// matrix), REQUANT with QLO / QHI / CONVERT_OUT. Work-item 0 checks the
// scales: one that is not positive sets report[0..2] (a, b, y).
#define IN_ARG(k) , __global const INPUT##k##_TYPE* input##k

KERNEL(matmul_integer_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                           __global const INPUT1_TYPE* input1
#if NUM_INPUTS > 2
                           IN_ARG(2)
#endif
#if NUM_INPUTS > 3
                           IN_ARG(3)
#endif
#if NUM_INPUTS > 4
                           IN_ARG(4) IN_ARG(5) IN_ARG(6) IN_ARG(7)
#endif
                           , __global OUTPUT0_TYPE* output0, __global int* report) {
    const ulong o = get_global_id(0);
#if REQUANT
    if (o == 0) {
        for (ulong i = 0; i < (ulong)AS_LEN; ++i)
            if (!(AS[i] > 0.0f)) report[0] = 1;
        for (ulong i = 0; i < (ulong)BS_LEN; ++i)
            if (!(BS[i] > 0.0f)) report[1] = 1;
        if (!(YS[0] > 0.0f)) report[2] = 1;
    }
#endif
    if (o >= (ulong)OUTPUT0_LENGTH) return;
    const ulong n = o % (ulong)N, m = (o / (ulong)N) % (ulong)M, t = o / ((ulong)N * (ulong)M);
    const ulong ta = (ulong)A_BATCH == 1 ? 0 : t, tb = (ulong)B_BATCH == 1 ? 0 : t;
    __global const INPUT0_TYPE* a = A + (ta * (ulong)M + m) * (ulong)K;
    __global const B_TYPE* b = B + tb * (ulong)K * (ulong)N + n;
#if HAS_AZP
    const int azp = (int)AZP[(ulong)AZP_LEN == 1 ? 0 : m];
#else
    const int azp = 0;
#endif
#if HAS_BZP
    const int bzp = (int)BZP[(ulong)BZP_LEN == 1 ? 0 : n];
#else
    const int bzp = 0;
#endif
    int acc = 0;
    for (ulong q = 0; q < (ulong)K; ++q) acc += ((int)a[q] - azp) * ((int)b[q * (ulong)N] - bzp);
#if REQUANT
    const float mult = (AS[(ulong)AS_LEN == 1 ? 0 : m] * BS[(ulong)BS_LEN == 1 ? 0 : n]) / YS[0];
    const float v = rint((float)acc * mult) + (float)YZP[0];
    output0[o] = CONVERT_OUT(clamp(v, QLO, QHI));
#else
    output0[o] = acc;
#endif
}
