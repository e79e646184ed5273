// depth_to_space on OpenCL: one work-item per output element.
//
// The output [N, C, H*BLOCK, W*BLOCK] is the last 4 of the 8 right-aligned
// dims (OUTPUT0_DIM4..7: literals in the static build, shape_info reads in
// the shape-agnostic one). Output element (n, c, oh, ow) reads input channel
// (i*BLOCK + j) * C + c (DCR) or (c*BLOCK + i)*BLOCK + j (MODE_CRD), with
// i = oh % BLOCK, j = ow % BLOCK, at (oh / BLOCK, ow / BLOCK). Elements move
// as unsigned integers of their width (ELEM_T), so one kernel serves every
// data type.
KERNEL(depth_to_space_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong c_n = (ulong)OUTPUT0_DIM5, oh_n = (ulong)OUTPUT0_DIM6, ow_n = (ulong)OUTPUT0_DIM7;
    const ulong h_n = oh_n / BLOCK, w_n = ow_n / BLOCK;
    const ulong ow = o % ow_n;
    const ulong oh = o / ow_n % oh_n;
    const ulong c = o / (ow_n * oh_n) % c_n;
    const ulong n = o / (ow_n * oh_n * c_n);
    const ulong i = oh % BLOCK, j = ow % BLOCK;
#if MODE_CRD
    const ulong ic = (c * BLOCK + i) * BLOCK + j;
#else
    const ulong ic = (i * BLOCK + j) * c_n + c;
#endif
    output0[o] = input0[((n * c_n * BLOCK * BLOCK + ic) * h_n + oh / BLOCK) * w_n + ow / BLOCK];
}
