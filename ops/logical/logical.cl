// logical on OpenCL: one work-item per output element, uchar 0/1 out; any
// non-zero input byte reads as true.
//
// From the host: LOGIC(a, b), the operation on two truth values (`not` reads
// only `a`), and UNARY (1 for `not`: one input). Input indices of the binary
// modes come from ocl_common.cl's BCAST_INDEX2 (no split when nothing
// broadcasts).
#if UNARY
KERNEL(logical_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const bool a = input0[o] != 0;
    output0[o] = LOGIC(a, a) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
#else
KERNEL(logical_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    BCAST_INDEX2(o, ia, ib)
    const bool a = input0[ia] != 0;
    const bool b = input1[ib] != 0;
    output0[o] = LOGIC(a, b) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
#endif
