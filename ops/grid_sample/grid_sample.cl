// grid_sample on OpenCL: one work-item per output element (n, c, o), o over
// the OUT_SPATIAL output positions.
//
// The work-item reads its SP_RANK grid coordinates (reversed: the first is
// the last spatial axis), turns each into a position along its axis as the
// host reference does, then sums the TAPS^SP_RANK neighbours with the product
// of their per-axis weights. Positions and weights are computed in ACC_T
// (FLOAT_ACC: double where the device has fp64) so that rounding and floor
// agree with the host's double arithmetic.
//
// From the host: SP_RANK (1 to 3), MODE (0 nearest, 1 linear, 2 cubic),
// PADDING (0 zeros, 1 border, 2 reflection), ALIGN_CORNERS, CHANNELS,
// IN_SPATIAL, OUT_SPATIAL, SIZE0..SIZE2 (x's spatial extents, 1 past SP_RANK),
// DATA_F16 (x, grid and y share the type).

#define ACC_T FLOAT_ACC
#define TAPS (MODE == 0 ? 1 : MODE == 1 ? 2 : 4)

inline ACC_T reflect(ACC_T v, ACC_T lo, ACC_T hi) {
    const ACC_T range = hi - lo;
    if (range <= (ACC_T)0) return lo;
    if (v >= lo && v <= hi) return v;
    const ACC_T d = v < lo ? lo - v : v - hi;
    const ACC_T folds = floor(d / range), r = d - folds * range;
    const bool from_low = (v < lo) == (fmod(folds, (ACC_T)2) == (ACC_T)0);
    return from_low ? lo + r : hi - r;
}

inline ACC_T position(ACC_T g, long size) {
    const ACC_T n = (ACC_T)size;
    ACC_T v = ALIGN_CORNERS ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
    if (MODE == 0) v = rint(v);   // half to even, as on the host
    const ACC_T lo = ALIGN_CORNERS ? (ACC_T)0 : (ACC_T)-0.5, hi = ALIGN_CORNERS ? n - 1 : n - (ACC_T)0.5;
    if (v >= lo && v <= hi) return v;
    if (PADDING == 1) v = clamp(v, (ACC_T)0, n - 1);
    if (PADDING == 2) v = reflect(v, lo, hi);
    // Far outside (or NaN): 4 outside has the same zero neighbours and converts safely.
    if (!(v > (ACC_T)-4)) return (ACC_T)-4;
    return v < n + 4 ? v : n + 4;
}

// Index of neighbour i along an axis of `size`, or -1 for a zero.
inline long neighbour(long i, long size) {
    if (i >= 0 && i < size) return i;
    if (PADDING == 0 || size == 0) return -1;
    if (PADDING == 1) return i < 0 ? 0 : size - 1;
    const ACC_T n = (ACC_T)size;
    return (long)(ALIGN_CORNERS ? reflect((ACC_T)i, 0, n - 1) : reflect((ACC_T)i, (ACC_T)-0.5, n - (ACC_T)0.5));
}

// Weight k of the TAPS neighbours at fraction t; the first neighbour is at
// floor(v) - 1 for cubic, floor(v) for linear, v itself for nearest.
inline ACC_T weight(int k, ACC_T t) {
    if (MODE == 0) return (ACC_T)1;
    if (MODE == 1) return k == 0 ? 1 - t : t;
    const ACC_T a = (ACC_T)-0.75;
    const ACC_T x = k == 0 ? t + 1 : k == 1 ? t : k == 2 ? 1 - t : 2 - t;
    return k == 1 || k == 2 ? ((a + 2) * x - (a + 3)) * x * x + 1 : ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

KERNEL(grid_sample_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong plane = o / (ulong)(OUT_SPATIAL), sp = o % (ulong)(OUT_SPATIAL);
    const ulong n = plane / (ulong)(CHANNELS);
    const long sizes[3] = {SIZE0, SIZE1, SIZE2};
    long first[3];
    ACC_T frac[3];
    for (int d = 0; d < SP_RANK; ++d) {
        const ACC_T g = (ACC_T)LOAD(input1, (n * (ulong)(OUT_SPATIAL) + sp) * SP_RANK + (SP_RANK - 1 - d));
        const ACC_T v = position(g, sizes[d]);
        const ACC_T f = floor(v);
        first[d] = MODE == 0 ? (long)v : MODE == 1 ? (long)f : (long)f - 1;
        frac[d] = v - f;
    }
    int combos = 1;
    for (int d = 0; d < SP_RANK; ++d) combos *= TAPS;
    ACC_T sum = 0;
    for (int c = 0; c < combos; ++c) {
        ACC_T w = 1;
        ulong at = 0;
        bool zero = false;
        int rest = c;
        for (int d = 0; d < SP_RANK; ++d, rest /= TAPS) {
            const int k = rest % TAPS;
            const long i = neighbour(first[d] + k, sizes[d]);
            zero = zero || i < 0;
            w *= weight(k, frac[d]);
            at = at * (ulong)sizes[d] + (ulong)(i < 0 ? 0 : i);
        }
        if (!zero) sum += w * (ACC_T)LOAD(input0, plane * (ulong)(IN_SPATIAL) + at);
    }
    STORE(output0, o, sum);
}
