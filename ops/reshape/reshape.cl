// reshape on OpenCL: the bytes of input 0 copied to the output (the flow may
// also alias the two; when it does not, this copy runs).
//
// Each work-item moves four elements with vload4/vstore4 (these only need the
// element's alignment), the last one a scalar tail. Elements move as unsigned
// integers of the element's width (ELEM_T), so every data type is one kernel.
// Input 1, the target shape, is only used by shape inference.
#define KERNEL(name) __kernel void name

KERNEL(reshape_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
#if INPUTS_COUNT > 1
                    __global const INPUT1_TYPE* input1,
#endif
                    __global ELEM_T* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong base = (ulong)get_global_id(0) * 4;
    if (base >= n) return;   // the global size is rounded up
    if (base + 4 <= n) {
        vstore4(vload4(0, input0 + base), 0, output0 + base);
    } else {
        for (ulong i = base; i < n; ++i) output0[i] = input0[i];
    }
}
