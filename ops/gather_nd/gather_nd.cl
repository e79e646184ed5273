// gather_nd on OpenCL: one work-item per output element.
//
// Output element o splits into (t, e): t = o / INNER is the index tuple (batch
// t / TUPLES), e = o % INNER the position in the copied slice. The tuple's
// TUPLE_LEN indices address data dims FIRST_DIM.. (right-aligned positions
// of INPUT0_DIMj: literals in the static build, shape_info reads in the
// shape-agnostic one), each counted from the end when negative. A tuple with
// an index still out of range writes 0, reads nothing from data and reports
// the index: the work-item that sets report[0] from 0 to the index's position
// in indices + 1 (an atomic, so one of several bad indices is kept whole)
// writes its low and high 32 bits into report[1] and report[2], and the host
// raises the host impls' error. Elements move as unsigned integers of their
// width (ELEM_T).
KERNEL(gather_nd_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global const INPUT1_TYPE* input1,
                      __global ELEM_T* output0, __global int* report) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong data_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                                INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong inner = (ulong)(INNER);
    const ulong t = o / inner;
    ulong at = 0;
    for (int i = 0; i < TUPLE_LEN; ++i) {
        const long len = (long)data_dims[FIRST_DIM + i];
        const ulong pos = t * TUPLE_LEN + i;
        const long given = (long)input1[pos];
        const long v = given < 0 ? given + len : given;
        if (v < 0 || v >= len) {
            output0[o] = (ELEM_T)0;
            if (atomic_cmpxchg(report, 0, (int)(pos + 1)) == 0) {
                report[1] = (int)(given & 0xffffffffL);
                report[2] = (int)(given >> 32);
            }
            return;
        }
        at = at * (ulong)len + (ulong)v;
    }
    output0[o] = input0[(t / (ulong)(TUPLES) * (ulong)(PREFIX) + at) * inner + o % inner];
}
