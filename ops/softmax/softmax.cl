// softmax on OpenCL: one work-item per row.
//
// Work-item w splits into (outer, inner) with inner < INNER (product of the
// dims after the row's dims) and walks the row's AXIS_LEN elements. MODE 0
// (softmax) and 1 (log_softmax) make three passes: the maximum, the sum of
// exp(x - max), and the results; subtracting the maximum keeps exp() from
// overflowing. The sum accumulates in ACC_T (FLOAT_ACC: double where the
// device has fp64, else float). MODE 2 (hardmax) finds the first maximum (a
// NaN beats every number, as numpy's argmax) and writes 1 there, 0 elsewhere.
// Rows are independent, so no synchronisation is needed; a work-group
// reduction would only pay off for very long rows with few of them.
//
// From the host: ACC_T, REAL (the type the math runs in: double for f64
// data, else float), DATA_F16, MODE, AXIS_LEN, INNER and OUTER_INNER (the
// number of rows).
KERNEL(softmax_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong w = get_global_id(0);
    if (w >= (ulong)(OUTER_INNER)) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong len = (ulong)(AXIS_LEN);
    const ulong base = (w / inner_n) * len * inner_n + w % inner_n;
#if MODE == 2
    ulong best = 0;
    REAL best_v = (REAL)LOAD(input0, base);
    for (ulong k = 1; k < len && !isnan(best_v); ++k) {
        const REAL v = (REAL)LOAD(input0, base + k * inner_n);
        if (isnan(v) || v > best_v) {
            best = k;
            best_v = v;
        }
    }
    for (ulong k = 0; k < len; ++k) STORE(output0, base + k * inner_n, k == best ? (REAL)1 : (REAL)0);
#else
    REAL mx = -INFINITY;
    for (ulong k = 0; k < len; ++k) mx = fmax(mx, (REAL)LOAD(input0, base + k * inner_n));
    ACC_T sum = (ACC_T)0;
    for (ulong k = 0; k < len; ++k) sum += (ACC_T)exp((REAL)LOAD(input0, base + k * inner_n) - mx);
#if MODE == 0
    const REAL inv = (REAL)((ACC_T)1 / sum);
    for (ulong k = 0; k < len; ++k) {
        const ulong i = base + k * inner_n;
        STORE(output0, i, exp((REAL)LOAD(input0, i) - mx) * inv);
    }
#else
    // (x - max) first: near the maximum it is small and exact, and
    // log(sum) is then subtracted without losing it to max's magnitude.
    const REAL log_sum = (REAL)log(sum);
    for (ulong k = 0; k < len; ++k) {
        const ulong i = base + k * inner_n;
        STORE(output0, i, ((REAL)LOAD(input0, i) - mx) - log_sum);
    }
#endif
#endif
}
