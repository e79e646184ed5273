// resize on OpenCL: one work-item per output element, the math of the
// reference impl in ops/resize/resize_op.cpp.
//
// Dims are right-aligned over 8 positions (leading ones). AXIS_POS[j] is dim
// j's index into the scales / sizes / roi, -1 for a dim that is not resized
// (read at the output's own coordinate). For each resized dim the work-item
// finds the source coordinate and the run of taps with a nonzero weight, then
// sums the input over the product of those runs, recomputing each tap's weight
// (an antialiasing filter may span many taps, too many to keep per dim).
// Coordinates and weights are FLOAT_ACC (double where the device has it), as
// a nearest index flips on the last bit of its coordinate.
#define TARGET_ATTR 0
#define TARGET_SCALES 1
#define TARGET_SIZES 2
#define HALF ((FLOAT_ACC)0.5)
#define ONE ((FLOAT_ACC)1)

inline FLOAT_ACC resize_filter(FLOAT_ACC d) {
    d = fabs(d);
#if MODE == 1
    return d < ONE ? ONE - d : (FLOAT_ACC)0;
#else
    const FLOAT_ACC a = CUBIC_A;
    if (d <= ONE) return ((a + 2) * d - (a + 3)) * d * d + ONE;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
#endif
}

// Weight of input index idx for source coordinate src, before normalising.
inline FLOAT_ACC tap_weight(long idx, FLOAT_ACC src, FLOAT_ACC filter_scale, long n) {
#if EXCLUDE_OUTSIDE
    if (idx < 0 || idx >= n) return 0;
#endif
    return resize_filter(((FLOAT_ACC)idx - src) * filter_scale);
}

// As ONNX's reference, `width` is the unfloored output length scale * n.
inline FLOAT_ACC source_coord(FLOAT_ACC x, FLOAT_ACC scale, FLOAT_ACC n, FLOAT_ACC out, FLOAT_ACC roi0,
                              FLOAT_ACC roi1) {
    const FLOAT_ACC width = scale * n;
#if COORD == 0
    return (x + HALF) / scale - HALF;
#elif COORD == 1
    return n / 2 * (ONE - out / width) + (x + HALF) / scale - HALF;
#elif COORD == 2
    return width > ONE ? (x + HALF) / scale - HALF : (FLOAT_ACC)0;
#elif COORD == 3
    return width == ONE ? (FLOAT_ACC)0 : x * (n - ONE) / (width - ONE);
#elif COORD == 4
    return x / scale;
#elif COORD == 5
    return (x + HALF) / scale;
#else
    return roi0 * (n - ONE) +
           (width == ONE ? (roi1 - roi0) * (n - ONE) / 2 : x * (roi1 - roi0) * (n - ONE) / (width - ONE));
#endif
}

inline long nearest_index(FLOAT_ACC src) {
#if NEAREST == 0
    return (long)ceil(src - HALF);
#elif NEAREST == 1
    return (long)floor(src + HALF);
#elif NEAREST == 2
    return (long)floor(src);
#else
    return (long)ceil(src);
#endif
}

// Input 1 (scales or sizes) is absent when the scales are an attribute, input 2 (roi) without tf_crop_and_resize.
#if TARGET != TARGET_ATTR
#define TARGET_ARG __global const INPUT1_TYPE *input1,
#else
#define TARGET_ARG
#endif
#if HAS_ROI
#define ROI_ARG __global const INPUT2_TYPE *input2,
#else
#define ROI_ARG
#endif

KERNEL(resize_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, TARGET_ARG ROI_ARG __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const int pos[8] = AXIS_POS;
    const long in_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                             INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const long out_dims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,
                              OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};
#if TARGET == TARGET_ATTR
    const FLOAT_ACC attr_scales[8] = ATTR_SCALES;
#elif TARGET == TARGET_SIZES && POLICY != 0
    // keep_aspect_ratio_policy: one scale, the smallest (not_larger) or largest ratio of sizes to dims.
    FLOAT_ACC common = POLICY == 1 ? (FLOAT_ACC)INFINITY : (FLOAT_ACC)0;
    for (int j = 0; j < 8; ++j) {
        if (pos[j] < 0 || in_dims[j] == 0) continue;
        const FLOAT_ACC r = (FLOAT_ACC)input1[pos[j]] / (FLOAT_ACC)in_dims[j];
        common = POLICY == 1 ? fmin(common, r) : fmax(common, r);
    }
#endif
    FLOAT_ACC src[8], filter_scale[8], norm[8];
    long first[8], taps[8];
    ulong rest = o, total = 1;
    for (int j = 7; j >= 0; --j) {
        const long x = (long)(rest % (ulong)out_dims[j]);
        rest /= (ulong)out_dims[j];
        first[j] = x, taps[j] = 1;
        if (pos[j] < 0) continue;
#if TARGET == TARGET_ATTR
        const FLOAT_ACC scale = attr_scales[j];
#elif TARGET == TARGET_SCALES
        const FLOAT_ACC scale = (FLOAT_ACC)input1[pos[j]];
#elif POLICY == 0
        const FLOAT_ACC scale = in_dims[j] == 0 ? ONE : (FLOAT_ACC)out_dims[j] / (FLOAT_ACC)in_dims[j];
#else
        const FLOAT_ACC scale = common;
#endif
#if HAS_ROI
        const FLOAT_ACC roi0 = (FLOAT_ACC)input2[pos[j]], roi1 = (FLOAT_ACC)input2[NUM_AXES + pos[j]];
#else
        const FLOAT_ACC roi0 = 0, roi1 = ONE;
#endif
        const FLOAT_ACC s =
            source_coord((FLOAT_ACC)x, scale, (FLOAT_ACC)in_dims[j], (FLOAT_ACC)out_dims[j], roi0, roi1);
#if COORD == 6
        if (s < 0 || s > (FLOAT_ACC)(in_dims[j] - 1)) {
            STORE(output0, o, EXTRAPOLATION);
            return;
        }
#endif
#if MODE == 0
        first[j] = nearest_index(s);
#else
        // Antialiasing widens the filter by 1/scale when downsampling.
        const FLOAT_ACC fs = ANTIALIAS ? fmin(scale, ONE) : ONE;
        const long start = (long)floor((MODE == 1 ? -ONE : (FLOAT_ACC)-2) / fs) + 1;
        const long base = (long)ceil(s) - 1;
        FLOAT_ACC sum = 0;
        long lo = 0, hi = -1;   // the nonzero run, empty while hi < lo
        for (long i = start; i <= 1 - start; ++i) {
            const FLOAT_ACC w = tap_weight(base + i, s, fs, in_dims[j]);
            sum += w;
            if (w == 0) continue;
            if (hi < lo) lo = base + i;
            hi = base + i;
        }
        first[j] = lo, taps[j] = hi - lo + 1;
        src[j] = s, filter_scale[j] = fs;
        norm[j] = (ANTIALIAS || EXCLUDE_OUTSIDE) && sum != 0 ? ONE / sum : ONE;
#endif
        total *= (ulong)taps[j];
    }
    FLOAT_ACC acc = 0;
    for (ulong t = 0; t < total; ++t) {
        ulong r = t, from = 0, pitch = 1;
        FLOAT_ACC w = ONE;
        for (int j = 7; j >= 0; --j) {
            const long idx = first[j] + (long)(r % (ulong)taps[j]);
            r /= (ulong)taps[j];
#if MODE != 0
            if (pos[j] >= 0) w *= tap_weight(idx, src[j], filter_scale[j], in_dims[j]) * norm[j];
#endif
            from += (ulong)clamp(idx, 0L, in_dims[j] - 1) * pitch;
            pitch *= (ulong)in_dims[j];
        }
        acc += w * (FLOAT_ACC)LOAD(input0, from);
    }
    STORE(output0, o, acc);
}
