// expand on OpenCL: one work-item per output element, copied from the input
// element it broadcasts from.
//
// From the host: BITS_T, the unsigned integer type of the element width, so
// any data type (f16, f64 included) is copied bit for bit. Input 1 (the target
// shape) only sized the output. When the input has the output's element count
// nothing broadcasts and the index is used as is; otherwise ocl_common.cl's
// BCAST_SPLIT / BCAST_OFFSET map the output coordinates to the input's.
KERNEL(expand_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                   __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    ulong from = o;
    if (!BCAST_SAME(0)) {
        BCAST_SPLIT(c, o);
        from = BCAST_OFFSET(c, 0);
    }
    ((__global BITS_T*)output0)[o] = ((__global const BITS_T*)input0)[from];
}
