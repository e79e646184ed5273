// transpose on OpenCL: one work-item per output element.
//
// Dims are right-aligned over 8 positions (INPUT0_DIMj / OUTPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one). PERMj is the input position that output position j reads (positions
// left of the rank map to themselves: their extent is 1). Work-item o splits
// its index into output coordinates, innermost first, and sums each
// coordinate times the input pitch of the position it comes from. Elements
// move as unsigned integers of their width (ELEM_T), so one kernel serves every
// data type.
KERNEL(transpose_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                              INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong out_dims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,
                               OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};
    const int perm[8] = {PERM0, PERM1, PERM2, PERM3, PERM4, PERM5, PERM6, PERM7};
    ulong in_pitch[8];
    ulong pitch = 1;
    for (int j = 7; j >= 0; --j) {
        in_pitch[j] = pitch;
        pitch *= in_dims[j];
    }
    ulong rest = o, src = 0;
    for (int j = 7; j >= 8 - TRANSPOSE_RANK; --j) {
        const ulong c = rest % out_dims[j];
        rest /= out_dims[j];
        src += c * in_pitch[perm[j]];
    }
    output0[o] = input0[src];
}
