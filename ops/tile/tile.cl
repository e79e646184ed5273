// tile on OpenCL: one work-item per output element.
//
// Dims are right-aligned over 8 positions (INPUT0_DIMj / OUTPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one). Work-item o splits its index into output coordinates, innermost first;
// coordinate c along a dim reads input coordinate c mod the input dim. Input 1
// (the repeats) only sized the output. Elements move as unsigned integers of
// their width (BITS_T), so one kernel serves every data type.
KERNEL(tile_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                 __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                              INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong out_dims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,
                               OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};
    ulong rest = o, from = 0, pitch = 1;
    for (int j = 7; j >= 0; --j) {
        const ulong c = rest % out_dims[j];
        rest /= out_dims[j];
        from += (c % in_dims[j]) * pitch;
        pitch *= in_dims[j];
    }
    ((__global BITS_T*)output0)[o] = ((__global const BITS_T*)input0)[from];
}
