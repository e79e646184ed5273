// compare on OpenCL: one work-item per output element, a boolean (uchar 0/1)
// per comparison.
//
// From the host: CMP(a, b), the comparison of two loaded values, and IN_F16
// (f16 inputs load through ocl_common.cl's LOAD, vload_half into float,
// exact). NaN compares false for every mode, as ordered comparisons in OpenCL
// C do. Input indices come from ocl_common.cl's BCAST_INDEX2 (no split when
// nothing broadcasts).
KERNEL(compare_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    BCAST_INDEX2(o, ia, ib)
    output0[o] = CMP(LOAD(input0, ia), LOAD(input1, ib)) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
