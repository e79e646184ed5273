// nll_loss on OpenCL. REDUCTION 0 (none): one work-item per position p of
// [N, d1..dk] writes -input[n, t, d] * weight[t]. REDUCTION 1 (sum) and 2
// (mean): a single work-item walks every position, summing the losses and
// (for mean) the weights in ACC_T. A target equal to IGNORE_INDEX, or one out
// of [0, C_LEN), contributes 0 with weight 0 and reads nothing (the host
// impls raise an error for the latter: the device cannot report one).
//
// The dims are read in the kernel itself (shape_info in the shape-agnostic
// build) and handed to loss_at.
//
// From the host: ACC_T, REAL (double for f64 data, else float), DATA_F16,
// REDUCTION, HAS_WEIGHT, IGNORE_INDEX, C_LEN, INNER (product of d1..dk) and
// POSITIONS (N * INNER).
inline REAL loss_at(__global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_WEIGHT
                    __global const INPUT2_TYPE* input2,
#endif
                    ulong p, ulong c_len, ulong inner, REAL* w) {
    const long t = (long)input1[p];
    *w = (REAL)0;
    if (t == IGNORE_INDEX || t < 0 || t >= (long)c_len) return (REAL)0;
#if HAS_WEIGHT
    *w = (REAL)LOAD(input2, t);
#else
    *w = (REAL)1;
#endif
    return -(REAL)LOAD(input0, ((p / inner) * c_len + (ulong)t) * inner + p % inner) * *w;
}

KERNEL(nll_loss_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_WEIGHT
 __global const INPUT2_TYPE* input2,
#endif
 __global OUTPUT0_TYPE* output0) {
    const ulong g = get_global_id(0);
#if HAS_WEIGHT
#define LOSS_AT(p, w) loss_at(input0, input1, input2, (p), c_len, inner, (w))
#else
#define LOSS_AT(p, w) loss_at(input0, input1, (p), c_len, inner, (w))
#endif
    const ulong c_len = (ulong)(C_LEN), inner = (ulong)(INNER);
    REAL w;
#if REDUCTION == 0
    if (g >= (ulong)(POSITIONS)) return;   // the global size is rounded up
    STORE(output0, g, LOSS_AT(g, &w));
#else
    if (g != 0) return;
    ACC_T sum = (ACC_T)0, wsum = (ACC_T)0;
    for (ulong p = 0; p < (ulong)(POSITIONS); ++p) {
        sum += (ACC_T)LOSS_AT(p, &w);
        wsum += (ACC_T)w;
    }
#if REDUCTION == 2
    sum /= wsum;
#endif
    STORE(output0, 0, (REAL)sum);
#endif
#undef LOSS_AT
}
