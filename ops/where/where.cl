// where on OpenCL: one work-item per output element, y = condition ? x : y.
//
// From the host: BITS_T, the unsigned integer type of the element width, so
// any data type (f16 included) is copied bit for bit. Input indices come from
// ocl_common.cl's BCAST_INDEX3 (no split when nothing broadcasts).
KERNEL(where_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                  __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    BCAST_INDEX3(o, ic, ix, iy)
    __global const BITS_T* x = (__global const BITS_T*)input1;
    __global const BITS_T* y = (__global const BITS_T*)input2;
    ((__global BITS_T*)output0)[o] = input0[ic] != 0 ? x[ix] : y[iy];
}
