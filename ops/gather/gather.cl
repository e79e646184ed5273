// gather on OpenCL: one work-item per output element.
//
// Output element o splits into (outer, j, inner) with inner < INNER (product
// of the data dims after the axis) and j < INPUT1_LENGTH (position in the
// indices tensor). It copies data[outer, indices[j], inner]. Elements move as
// unsigned integers of the element's width (ELEM_T, from the host), so every
// data type is one kernel. A negative index counts from the end of the axis;
// an index still out of range writes 0 (the host impl raises an error instead:
// the device cannot report one without a read-back).
//
// From the host: ELEM_T, AXIS_LEN (data dim at the axis) and INNER, both
// written in terms of the INPUT0_DIMj constants (literals in the static build,
// shape_info reads in the shape-agnostic one).
KERNEL(gather_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global const INPUT1_TYPE* input1,
                   __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong count = (ulong)INPUT1_LENGTH;
    const ulong inner = o % inner_n;
    const ulong t = o / inner_n;
    const ulong j = t % count;
    const ulong outer = t / count;
    const long axis_len = (long)(AXIS_LEN);
    long idx = (long)input1[j];
    if (idx < 0) idx += axis_len;
    if (idx < 0 || idx >= axis_len) {
        output0[o] = (ELEM_T)0;
        return;
    }
    output0[o] = input0[(outer * (ulong)axis_len + (ulong)idx) * inner_n + inner];
}
