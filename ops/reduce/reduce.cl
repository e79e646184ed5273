// reduce on OpenCL. Two kernels:
//   reduce_rows (the host defines ROW_LEN): the reduced dims are the
//     innermost ones, so output element r reduces the contiguous run
//     [r * ROW_LEN, (r + 1) * ROW_LEN). `lanes` work-items (a power of two)
//     share a row, ROW_GROUP / lanes rows per work-group: consecutive
//     work-items read consecutive 4-element vectors (coalesced), each
//     accumulates its share, then a tree over each row's lanes in local
//     memory combines them.
//   reduce_ref (every other case): one work-item per output element, looping
//     over the elements of the input that reduce into it, described below.
//
// The input's 8 right-aligned dims (INPUT0_DIM0..7) split into kept and
// reduced dims, a bit mask over the 8 (bit j: dim j is reduced). The output
// element's index, split over the kept dims (innermost fastest, whether the
// reduced dims are kept as 1 or removed), gives the first input element; an
// odometer over the reduced dims walks the rest, adding or rewinding one
// stride per step, no division in the loop.
//
// From the host: MODE (the index of the mode, as below), IS_INT, LOWEST /
// HIGHEST (the max / min identity of the type), DATA_F16, NOOP_EMPTY, and
// either AXES_MASK (axes from the attribute) or AXES_INPUT 1: the axes are
// input 1 (i32 or i64), read here; shape inference checked their values, an
// out-of-range one is ignored so that nothing is read out of bounds.
// Floats accumulate in FLOAT_ACC (double where the device has fp64); integers
// in long, sums and products through ulong so that they wrap like the host
// impl's two's complement.
#define MODE_SUM 0
#define MODE_MEAN 1
#define MODE_MAX 2
#define MODE_MIN 3
#define MODE_PROD 4
#define MODE_L1 5
#define MODE_L2 6
#define MODE_SUM_SQUARE 7
#define MODE_LOG_SUM 8
#define MODE_LOG_SUM_EXP 9

#if IS_INT
#define ACC_T long
#define LOAD_X(i) ((long)input0[(i)])
#define ADD(a, b) ((long)((ulong)(a) + (ulong)(b)))
#define MUL(a, b) ((long)((ulong)(a) * (ulong)(b)))
#define ABS_X(x) ((x) < 0 ? MUL((x), -1) : (x))
#define IS_NAN(x) 0
#else
#define ACC_T FLOAT_ACC
#define LOAD_X(i) ((FLOAT_ACC)LOAD(input0, (i)))
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define ABS_X(x) fabs(x)
#define IS_NAN(x) isnan(x)
#endif

#if MODE == MODE_PROD
#define INIT ((ACC_T)1)
#elif MODE == MODE_MAX
#define INIT ((ACC_T)(LOWEST))
#elif MODE == MODE_MIN
#define INIT ((ACC_T)(HIGHEST))
#else
#define INIT ((ACC_T)0)
#endif

// One element x into the accumulator a (mx: the maximum, for log_sum_exp).
inline ACC_T reduce_step(ACC_T a, ACC_T x, ACC_T mx) {
#if MODE == MODE_MAX
    return (x > a || IS_NAN(x)) ? x : a;
#elif MODE == MODE_MIN
    return (x < a || IS_NAN(x)) ? x : a;
#elif MODE == MODE_PROD
    return MUL(a, x);
#elif MODE == MODE_L1
    return ADD(a, ABS_X(x));
#elif MODE == MODE_L2 || MODE == MODE_SUM_SQUARE
    return ADD(a, MUL(x, x));
#elif MODE == MODE_LOG_SUM_EXP
    return isfinite(mx) ? a + exp(x - mx) : a;
#else
    return ADD(a, x);
#endif
}

// The result of n elements accumulated in a.
inline ACC_T reduce_finish(ACC_T a, ulong n, ACC_T mx) {
#if MODE == MODE_MEAN && IS_INT
    return n == 0 ? 0 : a / (long)n;
#elif MODE == MODE_MEAN
    return a / (ACC_T)n;
#elif MODE == MODE_L2 && IS_INT
    return a < 0 ? 0 : (long)sqrt((FLOAT_ACC)a);
#elif MODE == MODE_L2
    return sqrt(a);
#elif MODE == MODE_LOG_SUM
    return log(a);
#elif MODE == MODE_LOG_SUM_EXP
    return isfinite(mx) ? mx + log(a) : (n == 0 ? (ACC_T)(-INFINITY) : mx);
#else
    return a;
#endif
}

// The reduced dims as a mask over the 8 right-aligned dims.
#if AXES_INPUT
// n: the number of axes (INPUT1_LENGTH, a shape_info read in the dynamic build).
inline uint reduced_mask(__global const INPUT1_TYPE* axes, ulong n) {
    const long rank = INPUT0_RANK;
    if (n == 0) return NOOP_EMPTY ? 0u : (uint)(((1u << rank) - 1u) << (8 - rank));   // every dim
    uint mask = 0;
    for (ulong k = 0; k < n; ++k) {
        long a = (long)axes[k];
        if (a < 0) a += rank;
        if (a >= 0 && a < rank) mask |= 1u << (8 - rank + a);
    }
    return mask;
}
#endif

// Steps the odometer c over the reduced dims; returns the offset's change.
inline long next_offset(ulong* c, const ulong* d, const ulong* stride, uint mask) {
    long delta = 0;
    for (int j = 7; j >= 0; --j) {
        if (!((mask >> j) & 1u)) continue;
        if (++c[j] < d[j]) return delta + (long)stride[j];
        c[j] = 0;
        delta -= (long)(stride[j] * (d[j] - 1));
    }
    return delta;
}

KERNEL(reduce_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
#if AXES_INPUT
 __global const INPUT1_TYPE* input1,
#endif
 __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)(OUTPUT0_LENGTH)) return;   // the global size is rounded up
#if AXES_INPUT
    const uint mask = reduced_mask(input1, (ulong)(INPUT1_LENGTH));
#else
    const uint mask = AXES_MASK;
#endif
    const ulong d[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                        INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    ulong stride[8], c[8];
    ulong s = 1, rem = o, first = 0, n = 1;
    for (int j = 7; j >= 0; --j) {
        stride[j] = s;
        s *= d[j];
        c[j] = 0;
        if ((mask >> j) & 1u) {
            n *= d[j];
        } else {
            first += (rem % d[j]) * stride[j];
            rem /= d[j];
        }
    }
    ACC_T mx = (ACC_T)0;
#if MODE == MODE_LOG_SUM_EXP
    mx = (ACC_T)(-INFINITY);
    ulong i = first;
    for (ulong r = 0; r < n; ++r) {
        const ACC_T x = LOAD_X(i);
        mx = (x > mx || isnan(x)) ? x : mx;
        i += next_offset(c, d, stride, mask);
    }
#endif
    ACC_T acc = INIT;
    ulong at = first;
    for (ulong r = 0; r < n; ++r) {
        acc = reduce_step(acc, LOAD_X(at), mx);
        at += next_offset(c, d, stride, mask);
    }
    STORE(output0, o, reduce_finish(acc, n, mx));
}

#ifdef ROW_LEN
// Two partial results of one row.
inline ACC_T reduce_combine(ACC_T a, ACC_T b) {
#if MODE == MODE_MAX || MODE == MODE_MIN
    return reduce_step(a, b, a);
#elif MODE == MODE_PROD
    return MUL(a, b);
#else
    return ADD(a, b);
#endif
}

inline ACC_T max_nan(ACC_T a, ACC_T x) { return (x > a || IS_NAN(x)) ? x : a; }

// v combined over the `lanes` work-items of each row (by maximum when
// `take_max`); every lane of the row gets the result.
inline ACC_T row_combine(__local ACC_T* part, ACC_T v, uint lanes, bool take_max) {
    const uint lid = get_local_id(0), lane = lid & (lanes - 1);
    part[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = lanes / 2; s > 0; s >>= 1) {
        if (lane < s)
            part[lid] = take_max ? max_nan(part[lid], part[lid + s]) : reduce_combine(part[lid], part[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const ACC_T total = part[lid - lane];
    barrier(CLK_LOCAL_MEM_FENCE);   // part is reused by the next call
    return total;
}

#if IN_F16
#define VEC4_T float4
#else
#define VEC4_T CAT(INPUT0_TYPE, 4)
#endif

// The lane's share of row `row` (of `len` elements): 4-element vectors when
// every row starts 4-aligned, else single elements, `lanes` apart.
inline ACC_T row_share(__global const INPUT0_TYPE* input0, ulong len, ulong row, uint lane, uint lanes, bool take_max,
                       ACC_T mx) {
    const ulong base = row * len;
    ACC_T acc = take_max ? (ACC_T)(LOWEST) : INIT;
    if (len % 4 == 0) {
        for (ulong v = lane; v < len / 4; v += lanes) {
            const VEC4_T x = LOAD4(INPUT0_TYPE, input0, base / 4 + v);
            const ACC_T x4[4] = {(ACC_T)x.s0, (ACC_T)x.s1, (ACC_T)x.s2, (ACC_T)x.s3};
            for (int k = 0; k < 4; ++k) acc = take_max ? max_nan(acc, x4[k]) : reduce_step(acc, x4[k], mx);
        }
    } else {
        for (ulong i = lane; i < len; i += lanes)
            acc = take_max ? max_nan(acc, LOAD_X(base + i)) : reduce_step(acc, LOAD_X(base + i), mx);
    }
    return acc;
}

KERNEL(reduce_rows)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0, const int lanes_arg) {
    __local ACC_T part[ROW_GROUP];
    const uint lanes = (uint)lanes_arg, lane = get_local_id(0) & (lanes - 1);
    const ulong len = ROW_LEN, rows = ROW_COUNT, per_group = ROW_GROUP / lanes;
    // The trip count is the same for the whole work-group: the barriers are safe.
    for (ulong first = get_group_id(0) * per_group; first < rows; first += get_num_groups(0) * per_group) {
        const ulong row = first + get_local_id(0) / lanes;
        const bool live = row < rows;
        ACC_T mx = (ACC_T)0;
#if MODE == MODE_LOG_SUM_EXP
        mx =
            row_combine(part, live ? row_share(input0, len, row, lane, lanes, true, mx) : (ACC_T)(LOWEST), lanes, true);
#endif
        const ACC_T acc =
            row_combine(part, live ? row_share(input0, len, row, lane, lanes, false, mx) : INIT, lanes, false);
        if (live && lane == 0) STORE(output0, row, reduce_finish(acc, len, mx));
    }
}
#endif
