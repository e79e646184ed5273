// expand on OpenCL: a strided walk over the output (ocl_common.cl's
// strided_copy) whose input strides are 0 along the broadcast dims.
//
// From the host: COPY_ELEM_T, the unsigned integer type of the element width,
// so any data type (f16, f64 included) is copied bit for bit. Input 1 (the
// target shape) only sized the output. Each work-item merges the dims that
// broadcast alike once (a [1, K] row expanded to [R, K] is R rows of K: whole
// 4-element vectors of one cached row), then walks its vectors grid-stride.
KERNEL(expand_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                   __global OUTPUT0_TYPE* output0) {
    ulong d[8] = {BCAST_DIMS_(OUTPUT0)};
    const ulong in_dims[8] = {BCAST_DIMS_(INPUT0)};
    long s[8];
    long pitch = 1;
    for (int j = 7; j >= 0; --j) {
        s[j] = in_dims[j] == 1 ? 0 : pitch;
        pitch *= (long)in_dims[j];
    }
    strided_copy((__global const COPY_ELEM_T*)input0, (__global COPY_ELEM_T*)output0, (ulong)OUTPUT0_LENGTH, 0, d,
                 s);
}
