// cumsum on OpenCL: one work-item per line along the axis, a serial scan.
//
// Work-item w splits into (outer, inner) with inner < INNER (product of the
// dims after the axis); it walks the AXIS_LEN elements of its line, from the
// end when REVERSE, writing the running sum (without the current element when
// EXCLUSIVE). Lines are independent, so a serial scan per line is exact and
// simple; only very long axes with few lines would want a parallel scan.
//
// From the host: ACC_T, the accumulator (FLOAT_ACC for floats: double where
// the device has fp64, else float; uint / ulong for i32 / i64, so overflow
// wraps like the host impl's two's-complement result), DATA_F16, AXIS_LEN,
// INNER, OUTER_INNER (the number of lines), EXCLUSIVE and REVERSE.
KERNEL(cumsum_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong w = get_global_id(0);
    if (w >= (ulong)(OUTER_INNER)) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong len = (ulong)(AXIS_LEN);
    const ulong inner = w % inner_n;
    const ulong outer = w / inner_n;
    const ulong base = outer * len * inner_n + inner;
    ACC_T acc = (ACC_T)0;
    for (ulong k = 0; k < len; ++k) {
        const ulong pos = REVERSE ? len - 1 - k : k;
        const ulong i = base + pos * inner_n;
        const ACC_T v = (ACC_T)LOAD(input0, i);
#if EXCLUSIVE
        STORE(output0, i, acc);
        acc += v;
#else
        acc += v;
        STORE(output0, i, acc);
#endif
    }
}
