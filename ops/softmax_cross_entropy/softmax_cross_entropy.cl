// softmax_cross_entropy on OpenCL. Each position p of [N, d1..dk] gets
// log_softmax over its C_LEN classes (stride INNER), written to output1, and
// the loss -log_prob[label] * weight[label]. REDUCTION 0 (none): one work-item
// per position writes its loss. REDUCTION 1 (sum) and 2 (mean): a single
// work-item walks every position, summing the losses and (for mean) the
// weights in ACC_T. A label equal to IGNORE_INDEX, or one out of [0, C_LEN),
// contributes 0 with weight 0 and reads nothing (the host impls raise an error
// for the latter: the device cannot report one). The dims are read in the
// kernel (shape_info in the shape-agnostic build) and handed to the helper.
//
// From the host: ACC_T, REAL (double for f64 data, else float), DATA_F16,
// REDUCTION, HAS_WEIGHT, IGNORE_INDEX, C_LEN, INNER and POSITIONS (N * INNER).
inline REAL sce_at(__global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_WEIGHT
                   __global const INPUT2_TYPE* input2,
#endif
                   __global OUTPUT1_TYPE* output1, ulong p, ulong c_len, ulong inner, REAL* w) {
    const ulong base = (p / inner) * c_len * inner + p % inner;
    REAL mx = -INFINITY;
    for (ulong c = 0; c < c_len; ++c) mx = fmax(mx, (REAL)LOAD(input0, base + c * inner));
    ACC_T sum = (ACC_T)0;
    for (ulong c = 0; c < c_len; ++c) sum += (ACC_T)exp((REAL)LOAD(input0, base + c * inner) - mx);
    const REAL log_sum = (REAL)log(sum);
    for (ulong c = 0; c < c_len; ++c) {
        const ulong i = base + c * inner;
        STORE(output1, i, ((REAL)LOAD(input0, i) - mx) - log_sum);
    }
    const long t = (long)input1[p];
    *w = (REAL)0;
    if (t == IGNORE_INDEX || t < 0 || t >= (long)c_len) return (REAL)0;
#if HAS_WEIGHT
    *w = (REAL)LOAD(input2, t);
#else
    *w = (REAL)1;
#endif
    return -(((REAL)LOAD(input0, base + (ulong)t * inner) - mx) - log_sum) * *w;
}

KERNEL(softmax_cross_entropy_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_WEIGHT
 __global const INPUT2_TYPE* input2,
#endif
 __global OUTPUT0_TYPE* output0, __global OUTPUT1_TYPE* output1) {
    const ulong g = get_global_id(0);
    const ulong c_len = (ulong)(C_LEN), inner = (ulong)(INNER);
#if HAS_WEIGHT
#define SCE_AT(p, w) sce_at(input0, input1, input2, output1, (p), c_len, inner, (w))
#else
#define SCE_AT(p, w) sce_at(input0, input1, output1, (p), c_len, inner, (w))
#endif
    REAL w;
#if REDUCTION == 0
    if (g >= (ulong)(POSITIONS)) return;   // the global size is rounded up
    STORE(output0, g, SCE_AT(g, &w));
#else
    if (g != 0) return;
    ACC_T sum = (ACC_T)0, wsum = (ACC_T)0;
    for (ulong p = 0; p < (ulong)(POSITIONS); ++p) {
        sum += (ACC_T)SCE_AT(p, &w);
        wsum += (ACC_T)w;
    }
#if REDUCTION == 2
    sum /= wsum;
#endif
    STORE(output0, 0, (REAL)sum);
#endif
#undef SCE_AT
}
