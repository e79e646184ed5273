// eye_like on OpenCL: one work-item per element of the 2-D output, ONE_BITS
// where j - i == DIAGONAL, zero bits elsewhere.
//
// From the host: BITS_T (the unsigned integer type of the output's element
// width), ONE_BITS (1 stored in the output's type, f16 included) and
// DIAGONAL (k). The input's data is never read: only its shape sized the output.
KERNEL(eye_like_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong cols = (ulong)OUTPUT0_DIM7;
    const long i = (long)(o / cols), j = (long)(o % cols);
    ((__global BITS_T*)output0)[o] = j - i == DIAGONAL ? (BITS_T)(ONE_BITS) : (BITS_T)0;
}
