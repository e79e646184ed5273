// pad on OpenCL: one work-item per output element.
//
// Dims are right-aligned over 8 slots (INPUT0_DIMj / OUTPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one). Each work-item gathers the begin and end amounts of every slot: entry
// k (k < PAD_N) names axis axes[k] with amounts pads[k] and pads[k + PAD_N],
// read from inputs 1 and 3 when the node has them (PAD_INPUTS counts its
// inputs) and otherwise from the attribute constants ATTR_PADk, ATTR_AXISk.
// Then, per slot, it maps its output coordinate to an input position as the
// host does (crops first, then PAD_MODE: 0 constant, 1 reflect, 2 edge,
// 3 wrap); the constant comes from input 2 or ATTR_VALUE (its bits in the
// data's type). A position outside the input (values changed under a stale
// shape) writes the constant. Elements move as unsigned integers of their
// width (ELEM_T), so one kernel serves every data type.
inline long pad_source(long c, long dim, long b, long e) {
    const long lo = max(-b, 0L);
    const long kept = dim - lo - max(-e, 0L);
    long x = c - max(b, 0L);
    if (x >= 0 && x < kept) return lo + x;
    if (PAD_MODE == 0 || kept <= 0) return -1;
    if (PAD_MODE == 2) {
        x = clamp(x, 0L, kept - 1);
    } else if (PAD_MODE == 3) {
        x = ((x % kept) + kept) % kept;
    } else {
        const long period = 2 * (kept - 1);
        if (period == 0) {
            x = 0;
        } else {
            x = ((x % period) + period) % period;
            if (x >= kept) x = period - x;
        }
    }
    return lo + x;
}

KERNEL(pad_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0,
#if PAD_INPUTS > 1
                __global const INPUT1_TYPE* input1,
#endif
#if PAD_INPUTS > 2
                __global const ELEM_T* input2,
#endif
#if PAD_INPUTS > 3
                __global const INPUT3_TYPE* input3,
#endif
                __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const long in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                             INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const long out_dims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,
                              OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};
    const long attr_pad[16] = {ATTR_PAD0,  ATTR_PAD1,  ATTR_PAD2,  ATTR_PAD3,  ATTR_PAD4,  ATTR_PAD5,
                               ATTR_PAD6,  ATTR_PAD7,  ATTR_PAD8,  ATTR_PAD9,  ATTR_PAD10, ATTR_PAD11,
                               ATTR_PAD12, ATTR_PAD13, ATTR_PAD14, ATTR_PAD15};
    const long attr_axis[8] = {ATTR_AXIS0, ATTR_AXIS1, ATTR_AXIS2, ATTR_AXIS3,
                               ATTR_AXIS4, ATTR_AXIS5, ATTR_AXIS6, ATTR_AXIS7};
    long begin[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long end[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int n = PAD_N;
    for (int k = 0; k < n && k < 8; ++k) {
#if PAD_INPUTS > 3
        long axis = (long)input3[k];
#else
        long axis = attr_axis[k];
#endif
        if (axis < 0) axis += PAD_RANK;
        if (axis < 0 || axis >= PAD_RANK) continue;
        const int slot = 8 - PAD_RANK + (int)axis;
#if PAD_INPUTS > 1
        begin[slot] = (long)input1[k];
        end[slot] = (long)input1[k + n];
#else
        begin[slot] = attr_pad[k];
        end[slot] = attr_pad[k + n];
#endif
    }
#if PAD_INPUTS > 2
    const ELEM_T value = input2[0];
#else
    const ELEM_T value = ATTR_VALUE;
#endif
    ulong rest = o;
    long src = 0, pitch = 1;
    bool inside = true;
    for (int j = 7; j >= 8 - PAD_RANK; --j) {
        const long dim = in_dims[j];
        const long c = (long)(rest % (ulong)out_dims[j]);
        rest /= (ulong)out_dims[j];
        const long x = pad_source(c, dim, begin[j], end[j]);
        inside = inside && x >= 0 && x < dim;
        src += x * pitch;
        pitch *= dim;
    }
    output0[o] = inside ? input0[src] : value;
}
