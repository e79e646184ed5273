// softmax on OpenCL: one work-item per row along the axis.
//
// Work-item w splits into (outer, inner) with inner < INNER (product of the
// dims after the axis) and makes three passes over its AXIS_LEN elements: the
// maximum, the sum of exp(x - max), and the normalised values. Subtracting the
// maximum keeps exp() from overflowing. The sum accumulates in ACC_T
// (FLOAT_ACC: double where the device has fp64, else float). Rows are
// independent, so no synchronisation is needed; a work-group reduction would
// only pay off for very long rows with few of them.
//
// From the host: ACC_T, DATA_F16, AXIS_LEN, INNER and
// OUTER_INNER (the number of rows).
KERNEL(softmax_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong w = get_global_id(0);
    if (w >= (ulong)(OUTER_INNER)) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong len = (ulong)(AXIS_LEN);
    const ulong base = (w / inner_n) * len * inner_n + w % inner_n;
    float mx = -INFINITY;
    for (ulong k = 0; k < len; ++k) mx = fmax(mx, (float)LOAD(input0, base + k * inner_n));
    ACC_T sum = (ACC_T)0;
    for (ulong k = 0; k < len; ++k) sum += (ACC_T)exp((float)LOAD(input0, base + k * inner_n) - mx);
    const float inv = (float)((ACC_T)1 / sum);
    for (ulong k = 0; k < len; ++k) {
        const ulong i = base + k * inner_n;
        STORE(output0, i, exp((float)LOAD(input0, i) - mx) * inv);
    }
}
