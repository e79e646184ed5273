// constant_of_shape on OpenCL: one work-item per output element, each written
// with the value's bits.
//
// From the host: BITS_T, the unsigned integer type of the output's element
// width, and VALUE_BITS, `value` stored in the output's type (f16 rounded on
// the host), so every type is written bit for bit. Input 0 (the shape) only
// sized the output.
KERNEL(constant_of_shape_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                              __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o < (ulong)OUTPUT0_LENGTH) ((__global BITS_T*)output0)[o] = (BITS_T)(VALUE_BITS);
}
