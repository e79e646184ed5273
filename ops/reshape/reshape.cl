// reshape on OpenCL: the bytes of input 0 copied to the output (the flow may
// also alias the two; when it does not, this copy runs).
//
// A memory copy, so it moves whole vectors: work-item i copies 4-element
// vectors i, i + G, i + 2G, ... (a grid-stride loop, G = global size) through
// vector pointers (buffers start aligned: one access per vector on GPUs), then
// the LENGTH % 4 tail elements go to work-items 0..2. Elements move as unsigned
// integers of the element's width (ELEM_T), so every data type is one kernel.
// Input 1, the target shape, is only used by shape inference.
#define ELEM_VEC CAT(ELEM_T, 4)

KERNEL(reshape_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
#if INPUTS_COUNT > 1
                    __global const INPUT1_TYPE* input1,
#endif
                    __global ELEM_T* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong n4 = n / 4;
    const ulong gid = get_global_id(0), gs = get_global_size(0);
    __global const ELEM_VEC* in4 = (__global const ELEM_VEC*)input0;
    __global ELEM_VEC* out4 = (__global ELEM_VEC*)output0;
    for (ulong i = gid; i < n4; i += gs) out4[i] = in4[i];
    const ulong t = n4 * 4 + gid;
    if (t < n) output0[t] = input0[t];
}
