// softmax_cross_entropy on OpenCL, after dynrt/ocl_loss.cl (loss_class,
// LOSS_STORE and the constants from the host). Each position p of
// [N, d1..dk] gets log_softmax over its C_LEN classes (stride INNER), written
// to output1, and the loss -log_prob[label] * weight[label], 0 with weight 0
// where the label is ignored or out of range. With a reduction one work-item
// walks every position, so each position's log_softmax is written once either
// way. The dims are read in the kernel (shape_info in the shape-agnostic
// build) and handed to sce_at.
inline REAL sce_at(__global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1, LOSS_WEIGHT_PARAM
                       __global OUTPUT1_TYPE* output1,
                   ulong p, ulong c_len, ulong inner, REAL* w) {
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
    const long t = loss_class(input1, LOSS_WEIGHT_ARG p, c_len, w);
    if (t < 0) return (REAL)0;
    return -(((REAL)LOAD(input0, base + (ulong)t * inner) - mx) - log_sum) * *w;
}

KERNEL(softmax_cross_entropy_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1, LOSS_WEIGHT_PARAM
     __global OUTPUT0_TYPE* output0,
 __global OUTPUT1_TYPE* output1) {
    const ulong c_len = (ulong)(C_LEN), inner = (ulong)(INNER);
#define LOSS_AT(p, w) sce_at(input0, input1, LOSS_WEIGHT_ARG output1, (p), c_len, inner, (w))
    LOSS_STORE(get_global_id(0));
#undef LOSS_AT
}
