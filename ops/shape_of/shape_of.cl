// shape_of on OpenCL: one work-item per output element writes one dim of the
// input: output i is dim FIRST_DIM + i, for DIM_COUNT dims (from the host: the
// `start`/`end` range, fixed per node since the rank is). The input buffer is
// never read (only its shape matters).
//
// Static build: INPUT0_DIMj are literals. Shape-agnostic build: they read
// shape_info, so one program serves every input shape of the same rank.
// Dim `i` of the input counted from the left (0 .. INPUT0_RANK-1). The JIT dims
// are right-aligned in 8 slots, so the left-most real dim is slot 8 - RANK.
inline int input_dim(OPTIONAL_SHAPE_INFO_ARG uint i) {
    switch (i + (8 - INPUT0_RANK)) {
        case 0: return INPUT0_DIM0;
        case 1: return INPUT0_DIM1;
        case 2: return INPUT0_DIM2;
        case 3: return INPUT0_DIM3;
        case 4: return INPUT0_DIM4;
        case 5: return INPUT0_DIM5;
        case 6: return INPUT0_DIM6;
        default: return INPUT0_DIM7;
    }
}

KERNEL(shape_of_ref)(OPTIONAL_SHAPE_INFO_ARG __global const uchar* input0, __global OUTPUT0_TYPE* output0) {
    const uint i = (uint)get_global_id(0);
    if (i >= DIM_COUNT) return;   // the global size is rounded up
    output0[i] = (OUTPUT0_TYPE)input_dim(OPTIONAL_SHAPE_INFO_TENSOR FIRST_DIM + i);
}
