// gather_elements on OpenCL: one work-item per output element (= per index).
//
// Data and indices have the same rank; their dims are right-aligned over 8
// positions (INPUTk_DIMj, leading ones; literals in the static build,
// shape_info reads in the shape-agnostic one). Work-item o splits its index
// into coordinates over the indices dims and reads data at those coordinates,
// the one at AXIS_POS (the axis, right-aligned) replaced by indices[o]. A
// negative index counts from the end of the axis; one still out of range
// writes 0, reads nothing and goes to the report: the work-item that sets
// report[0] from 0 to its position + 1 (an atomic, so one of several bad
// indices is kept whole) writes the index's low and high 32 bits into
// report[1] and report[2], and the host raises the host impls' error. Elements
// move as unsigned integers of their width (ELEM_T), so one kernel serves
// every data type.
KERNEL(gather_elements_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
                            __global const INPUT1_TYPE* input1, __global ELEM_T* output0,
                            __global int* report) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong data_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                                INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong index_dims[8] = {INPUT1_DIM0, INPUT1_DIM1, INPUT1_DIM2, INPUT1_DIM3,
                                 INPUT1_DIM4, INPUT1_DIM5, INPUT1_DIM6, INPUT1_DIM7};
    const long len = (long)data_dims[AXIS_POS];
    const long given = (long)input1[o];
    const long idx = given < 0 ? given + len : given;
    if (idx < 0 || idx >= len) {
        output0[o] = (ELEM_T)0;
        if (atomic_cmpxchg(report, 0, (int)(o + 1)) == 0) {
            report[1] = (int)(given & 0xffffffffL);
            report[2] = (int)(given >> 32);
        }
        return;
    }
    ulong rest = o, from = 0, pitch = 1;
    for (int j = 7; j >= 0; --j) {
        const ulong c = rest % index_dims[j];
        rest /= index_dims[j];
        from += (j == AXIS_POS ? (ulong)idx : c) * pitch;
        pitch *= data_dims[j];
    }
    output0[o] = input0[from];
}
