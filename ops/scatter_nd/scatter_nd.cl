// scatter_nd on OpenCL, after dynrt/ocl_scatter.cl (GET, PUT, COMBINE): two
// kernels in order on the stream, scatter_copy (ocl_scatter.cl: out = data,
// as bits), then scatter_nd_apply: one work-item per position e within a
// slice (INNER, the product of the data dims after the tuple). It walks the
// TUPLES index tuples in order and applies updates[t, e] at slice tuple t,
// position e, so two work-items never touch one element and duplicate tuples
// combine in row-major order, as on the host. A tuple's TUPLE_LEN indices
// address data dims FIRST_DIM.. of the 8 right-aligned INPUT0_DIMj (literals
// in the static build, shape_info reads in the shape-agnostic one), each
// counted from the end when negative; an update whose tuple is still out of
// range is dropped and the tuple's first bad index reported
// (scatter_report_index of ocl_scatter.cl: its position in indices and
// value), and the host raises the host impls' error after the run.
//
// From the host: the constants of dynrt/ocl_scatter.cl, TUPLE_LEN, FIRST_DIM,
// TUPLES and INNER.
KERNEL(scatter_nd_apply)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT1_TYPE* input1, __global const ELEM_T* input2,
                         __global ELEM_T* output0, __global int* report) {
    const ulong inner = (ulong)(INNER);
    const ulong e = get_global_id(0);
    if (e >= inner) return;   // the global size is rounded up
    const ulong data_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                                INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong tuples = (ulong)(TUPLES);
    for (ulong t = 0; t < tuples; ++t) {
        ulong at = 0;
        int ok = 1;
        for (int i = 0; i < TUPLE_LEN && ok; ++i) {
            const long len = (long)data_dims[FIRST_DIM + i];
            const long given = (long)input1[t * TUPLE_LEN + i];
            const long v = given < 0 ? given + len : given;
            ok = v >= 0 && v < len;
            if (!ok) scatter_report_index(report, t * TUPLE_LEN + i, given);
            at = at * (ulong)len + (ulong)v;
        }
        if (!ok) continue;
        const ulong to = at * inner + e;
        const VALUE_T a = GET(output0, to);
        const VALUE_T b = GET(input2, t * inner + e);
        PUT(output0, to, COMBINE(a, b));
    }
}
