// dropout_with_mask on OpenCL: one work-item per element copies the element's
// bits (BITS_T: the unsigned type of its width, so f16 needs no conversion)
// and sets its mask element to true.
KERNEL(dropout_with_mask)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
                          __global OUTPUT1_TYPE* output1) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    ((__global BITS_T*)output0)[i] = ((__global const BITS_T*)input0)[i];
    output1[i] = (OUTPUT1_TYPE)1;
}
