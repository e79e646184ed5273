// slice on OpenCL: one work-item per output element.
//
// Dims are right-aligned over 8 slots (INPUT0_DIMj / OUTPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one). Each work-item first gathers the raw start and step of every slot:
// entry k (k < SLICE_N) names axis axes[k] and gives starts[k], steps[k],
// read from inputs 1, 3, 4 when the node has them (SLICE_INPUTS counts its
// inputs) and otherwise from the attribute constants ATTR_STARTk, ATTR_AXISk,
// ATTR_STEPk. Then, per slot, it normalises the start as the host does
// (negative counts from the end, clamped by the sign of the step) and walks
// its output coordinate back to an input position. Shape inference sized the
// output from the same values, so every position is inside the input; a
// position outside it (values changed under a stale shape) writes 0 rather
// than reading out of bounds. Elements move as unsigned integers of their
// width (ELEM_T), so one kernel serves every data type.
KERNEL(slice_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
#if SLICE_INPUTS > 1
                  __global const INPUT1_TYPE* input1, __global const INPUT2_TYPE* input2,
#endif
#if SLICE_INPUTS > 3
                  __global const INPUT3_TYPE* input3,
#endif
#if SLICE_INPUTS > 4
                  __global const INPUT4_TYPE* input4,
#endif
                  __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const long in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                             INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const long out_dims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,
                              OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};
    const long attr_start[8] = {ATTR_START0, ATTR_START1, ATTR_START2, ATTR_START3,
                                ATTR_START4, ATTR_START5, ATTR_START6, ATTR_START7};
    const long attr_axis[8] = {ATTR_AXIS0, ATTR_AXIS1, ATTR_AXIS2, ATTR_AXIS3,
                               ATTR_AXIS4, ATTR_AXIS5, ATTR_AXIS6, ATTR_AXIS7};
    const long attr_step[8] = {ATTR_STEP0, ATTR_STEP1, ATTR_STEP2, ATTR_STEP3,
                               ATTR_STEP4, ATTR_STEP5, ATTR_STEP6, ATTR_STEP7};
    long start[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long step[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const int n = SLICE_N;
    for (int k = 0; k < n && k < 8; ++k) {
#if SLICE_INPUTS > 3
        long axis = (long)input3[k];
#else
        long axis = attr_axis[k];
#endif
        if (axis < 0) axis += SLICE_RANK;
        if (axis < 0 || axis >= SLICE_RANK) continue;
        const int slot = 8 - SLICE_RANK + (int)axis;
#if SLICE_INPUTS > 1
        start[slot] = (long)input1[k];
#else
        start[slot] = attr_start[k];
#endif
#if SLICE_INPUTS > 4
        step[slot] = (long)input4[k];
#else
        step[slot] = attr_step[k];
#endif
    }
    ulong rest = o;
    long src = 0, pitch = 1;
    bool inside = true;
    for (int j = 7; j >= 8 - SLICE_RANK; --j) {
        const long dim = in_dims[j];
        long s = start[j];
        if (s < 0) s += dim;
        s = step[j] > 0 ? clamp(s, 0L, dim) : clamp(s, -1L, dim - 1);
        const long c = (long)(rest % (ulong)out_dims[j]);
        rest /= (ulong)out_dims[j];
        const long x = s + c * step[j];
        inside = inside && x >= 0 && x < dim;
        src += x * pitch;
        pitch *= dim;
    }
    output0[o] = inside ? input0[src] : (ELEM_T)0;
}
