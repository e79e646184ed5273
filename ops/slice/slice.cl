// slice on OpenCL: a strided walk over the output (ocl_common.cl's
// strided_copy, grid-stride over 4-element vectors).
//
// Dims are right-aligned over 8 slots (INPUT0_DIMj / OUTPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one). Each work-item first gathers the raw start and step of every slot:
// entry k (k < SLICE_N) names axis axes[k] and gives starts[k], steps[k],
// read from inputs 1, 3, 4 when the node has them (SLICE_INPUTS counts its
// inputs) and otherwise from the attribute constants ATTR_STARTk, ATTR_AXISk,
// ATTR_STEPk. Then, per slot, it normalises the start as the host does
// (negative counts from the end, clamped by the sign of the step) and walks
// its extent to an input start offset and stride; strided_copy then merges
// the dims that continue each other (unsliced inner dims) once and copies
// whole vectors where the rows allow. Shape inference sized the output from
// the same values, so every position is inside the input; when one is not
// (values changed under a stale shape) the whole output is written 0 rather
// than reading out of bounds. Elements move as unsigned integers of their
// width (COPY_ELEM_T), so one kernel serves every data type.
KERNEL(slice_ref)(OPTIONAL_SHAPE_INFO_ARG __global const COPY_ELEM_T* input0,
#if SLICE_INPUTS > 1
                  __global const INPUT1_TYPE* input1, __global const INPUT2_TYPE* input2,
#endif
#if SLICE_INPUTS > 3
                  __global const INPUT3_TYPE* input3,
#endif
#if SLICE_INPUTS > 4
                  __global const INPUT4_TYPE* input4,
#endif
                  __global COPY_ELEM_T* output0) {
    const long in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                             INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
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
    ulong d[8] = {BCAST_DIMS_(OUTPUT0)};
    long s[8];
    long base = 0, pitch = 1;
    bool inside = true;
    for (int j = 7; j >= 0; --j) {
        const long dim = in_dims[j];
        long first = start[j];
        if (first < 0) first += dim;
        first = step[j] > 0 ? clamp(first, 0L, dim) : clamp(first, -1L, dim - 1);
        const long last = first + ((long)d[j] - 1) * step[j];
        inside = inside && (d[j] == 0 || (first >= 0 && first < dim && last >= 0 && last < dim));
        base += first * pitch;
        s[j] = step[j] * pitch;
        pitch *= dim;
    }
    if (!inside) {
        for (ulong o = get_global_id(0); o < (ulong)OUTPUT0_LENGTH; o += get_global_size(0))
            output0[o] = (COPY_ELEM_T)0;
        return;
    }
    strided_copy(input0, output0, (ulong)OUTPUT0_LENGTH, base, d, s);
}
