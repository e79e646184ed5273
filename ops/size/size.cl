// size on OpenCL: one work-item writes the element count of the input (the
// product of its dims) to the rank-0 output. The input buffer is never read.
//
// Static build: INPUT0_DIMj are literals. Shape-agnostic build: they read
// shape_info, so one program serves every input shape of the same rank. Unused
// leading slots of the 8 right-aligned dims are 1.
KERNEL(size_ref)(OPTIONAL_SHAPE_INFO_ARG __global const uchar* input0, __global OUTPUT0_TYPE* output0) {
    if (get_global_id(0) != 0) return;   // the global size is rounded up
    ulong n = (ulong)INPUT0_DIM0 * (ulong)INPUT0_DIM1 * (ulong)INPUT0_DIM2 * (ulong)INPUT0_DIM3;
    n *= (ulong)INPUT0_DIM4 * (ulong)INPUT0_DIM5 * (ulong)INPUT0_DIM6 * (ulong)INPUT0_DIM7;
    output0[0] = (OUTPUT0_TYPE)n;
}
