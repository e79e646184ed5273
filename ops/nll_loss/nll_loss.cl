// nll_loss on OpenCL, after dynrt/ocl_loss.cl (loss_class, LOSS_STORE and the
// constants from the host): the loss of position p of [N, d1..dk] is
// -input[n, t, d] * weight[t] for its target t, 0 with weight 0 where the
// target is ignored or out of range. The dims are read in the kernel itself
// (shape_info in the shape-agnostic build) and handed to nll_at.
inline REAL nll_at(__global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1, LOSS_WEIGHT_PARAM ulong c_len,
                   ulong inner, ulong p, REAL* w) {
    const long t = loss_class(input1, LOSS_WEIGHT_ARG p, c_len, w);
    if (t < 0) return (REAL)0;
    return -(REAL)LOAD(input0, ((p / inner) * c_len + (ulong)t) * inner + p % inner) * *w;
}

KERNEL(nll_loss_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1, LOSS_WEIGHT_PARAM
     __global OUTPUT0_TYPE* output0) {
    const ulong c_len = (ulong)(C_LEN), inner = (ulong)(INNER);
#define LOSS_AT(p, w) nll_at(input0, input1, LOSS_WEIGHT_ARG c_len, inner, (p), (w))
    LOSS_STORE(get_global_id(0));
#undef LOSS_AT
}
