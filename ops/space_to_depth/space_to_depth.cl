// space_to_depth on OpenCL: one work-item per output element.
//
// The input [N, C, H, W] is the last 4 of the 8 right-aligned dims
// (INPUT0_DIM4..7: literals in the static build, shape_info reads in the
// shape-agnostic one). Output element (n, oc, h, w) with oc = (i*BLOCK + j)*C
// + c reads input (n, c, h*BLOCK + i, w*BLOCK + j). Elements move as unsigned
// integers of their width (ELEM_T), so one kernel serves every data type.
KERNEL(space_to_depth_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong c_n = (ulong)INPUT0_DIM5, ih_n = (ulong)INPUT0_DIM6, iw_n = (ulong)INPUT0_DIM7;
    const ulong h_n = ih_n / BLOCK, w_n = iw_n / BLOCK, oc_n = c_n * BLOCK * BLOCK;
    const ulong w = o % w_n;
    const ulong h = o / w_n % h_n;
    const ulong oc = o / (w_n * h_n) % oc_n;
    const ulong n = o / (w_n * h_n * oc_n);
    const ulong c = oc % c_n, i = oc / c_n / BLOCK, j = oc / c_n % BLOCK;
    output0[o] = input0[((n * c_n + c) * ih_n + h * BLOCK + i) * iw_n + w * BLOCK + j];
}
