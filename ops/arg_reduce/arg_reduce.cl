// arg_reduce on OpenCL: one work-item per line along the axis, a serial scan
// keeping the index of the best element so far.
//
// Work-item w splits into (outer, inner) with inner < INNER (the product of
// the dims after the axis); its line holds AXIS_LEN elements INNER apart, and
// its result goes to output element w (the output is the input without the
// axis, or with it as 1: the same order either way). Shape inference refuses
// an empty axis, so every line has a first element.
//
// From the host: IS_MAX, SELECT_LAST (ties take the later index), IS_INT
// (integers compare as long, exactly), IN_F16 (f16 loads as float), AXIS_LEN,
// INNER and OUTER_INNER (the number of lines). A NaN beats every number, the
// first one wins (the last one with SELECT_LAST), as in the host impl.
#if IS_INT
#define VAL_T long
#define IS_NAN(x) 0
#else
#define VAL_T FLOAT_ACC
#define IS_NAN(x) isnan(x)
#endif

#if IS_MAX
#define BEYOND(x, b) ((x) > (b))
#else
#define BEYOND(x, b) ((x) < (b))
#endif

inline bool replaces(VAL_T x, VAL_T best) {
    if (IS_NAN(x)) return SELECT_LAST || !IS_NAN(best);
    if (IS_NAN(best)) return false;
    if (x == best) return SELECT_LAST;
    return BEYOND(x, best);
}

KERNEL(arg_reduce_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong w = get_global_id(0);
    if (w >= (ulong)(OUTER_INNER)) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong len = (ulong)(AXIS_LEN);
    const ulong base = (w / inner_n) * len * inner_n + w % inner_n;
    VAL_T best = (VAL_T)LOAD(input0, base);
    long at = 0;
    for (ulong k = 1; k < len; ++k) {
        const VAL_T x = (VAL_T)LOAD(input0, base + k * inner_n);
        if (replaces(x, best)) {
            best = x;
            at = (long)k;
        }
    }
    output0[w] = at;
}
