// The byte copy of layout-only ops (reshape, squeeze, unsqueeze, flatten):
// the output holds the input's elements in the same order.
//
// Work-item i copies the 4-element vectors i, i + G, i + 2G, ... (G the global
// size) through vector pointers (buffers start aligned: one access per vector
// on GPUs), and the LENGTH % 4 tail elements go to work-items 0..2
// (dispatch_vec4 launches at least that many). Elements move as unsigned
// integers of their width (ELEM_T), so one kernel serves every data type.
// Input 1, when the op has one (axes, a target shape), is only read by shape
// inference.
#define ELEM_VEC CAT(ELEM_T, 4)

KERNEL(layout_copy)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
#if INPUTS_COUNT > 1
                    __global const INPUT1_TYPE* input1,
#endif
                    __global ELEM_T* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong n4 = n / 4;
    const ulong gid = get_global_id(0), gs = get_global_size(0);
    for (ulong v = gid; v < n4; v += gs)
        ((__global ELEM_VEC*)output0)[v] = ((__global const ELEM_VEC*)input0)[v];
    const ulong t = n4 * 4 + gid;
    if (t < n) output0[t] = input0[t];
}
