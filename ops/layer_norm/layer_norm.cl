// layer_norm on OpenCL: one work-group per row (the dims from the axis on,
// ROW_LEN elements, contiguous).
//
// A row of a multiple of 4 elements (it then starts 16-byte aligned) is read
// once: each work-item loads its 4-element vectors of the row (work-item i
// the vectors i, i + G, ... for a group of G) into registers, up to CACHED
// of them, all loads in flight at once; the group sums them (ocl_common.cl's
// work_group_sum, in ACC_T = FLOAT_ACC: double where the device has fp64) for
// the mean, then sums (x - mean)^2 from the registers for the variance, then
// writes the vectors normalised, scaled and shifted. A longer row is read
// again as vectors for each pass; other rows element by element. Work-item 0
// writes the row's mean and 1 / sqrt(var + EPSILON) to outputs 1 and 2
// (always f32).
//
// Scale and bias broadcast into the row: when both hold ROW_LEN elements they
// are read as vectors at the row's positions, else (the element loop) each
// element's coordinates are split over the output dims (BCAST_SPLIT) and
// mapped into them.
//
// From the host: ACC_T, ROW_LEN, EPSILON, HAS_BIAS, GROUP_MAX (the size of
// the local buffer, at least the work-group size, a power of two), CACHED,
// DATA_F16.

// 1 when input i (scale 1, bias 2) holds a whole row: no broadcast.
#define ROW_SIZED(i) ((ulong)(INPUT##i##_LENGTH) == (ulong)(ROW_LEN))
#if HAS_BIAS
#define AFFINE_ROWS (ROW_SIZED(1) & ROW_SIZED(2))
#else
#define AFFINE_ROWS ROW_SIZED(1)
#endif

// Rows of a multiple of 4 elements start 16-byte aligned (f32) and hold
// whole vectors. vload_half4 / vstore_half4_rte need only 2-byte alignment.
#if DATA_F16
#define ROW_LOAD4(p, q) vload_half4((q), (p))
#define ROW_STORE4(p, q, v) vstore_half4_rte((v), (q), (p))
#else
#define ROW_LOAD4(p, q) (((__global const float4*)(p))[(q)])
#define ROW_STORE4(p, q, v) (((__global float4*)(p))[(q)] = (v))
#endif

inline ACC_T sum4(float4 v) { return (ACC_T)v.x + (ACC_T)v.y + (ACC_T)v.z + (ACC_T)v.w; }

inline ACC_T sq4(float4 v, ACC_T mean) {
    const ACC_T a = (ACC_T)v.x - mean, b = (ACC_T)v.y - mean, c = (ACC_T)v.z - mean, d = (ACC_T)v.w - mean;
    return a * a + b * b + c * c + d * d;
}

// r = xn scaled and shifted as output element o (row position j), scale or
// bias broadcasting: a macro, as the dims it splits o over are shape_info
// reads in the shape-agnostic build (a kernel argument).
#if HAS_BIAS
#define BIAS_INDEX(c, bi) \
    if (!ROW_SIZED(2)) bi = BCAST_OFFSET(c, 2)
#define BIAS_AT(bi) (float)LOAD(input2, bi)
#define BIAS4(q) ROW_LOAD4(input2, q)
#else
#define BIAS_INDEX(c, bi)
#define BIAS_AT(bi) 0.0f
#define BIAS4(q) ((float4)0.0f)
#endif
#define AFFINE(r, xn, j, o)                                    \
    do {                                                       \
        ulong si = (j), bi = (j);                              \
        if (!AFFINE_ROWS) {                                    \
            BCAST_SPLIT(c, (o));                               \
            if (!ROW_SIZED(1)) si = BCAST_OFFSET(c, 1);        \
            BIAS_INDEX(c, bi);                                 \
        }                                                      \
        r = (xn) * (float)LOAD(input1, si) + BIAS_AT(bi);      \
    } while (0)

KERNEL(layer_norm_rows)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_BIAS
 __global const INPUT2_TYPE* input2,
#endif
 __global OUTPUT0_TYPE* output0, __global float* output1, __global float* output2) {
    __local ACC_T part[GROUP_MAX];
    const ulong row = get_group_id(0);
    const ulong n = (ulong)(ROW_LEN), n4 = n / 4;
    const ulong base = row * n;
    __global const INPUT0_TYPE* x = input0 + base;
    __global OUTPUT0_TYPE* y = output0 + base;
    const uint lid = get_local_id(0), step = get_local_size(0);
    // Vectors when the row holds whole ones, else element by element (the
    // loops PoCL compiles correctly for a literal row length).
    const bool vectors = n % 4 == 0;
    const bool cached = vectors && n4 <= (ulong)step * CACHED;

    float4 v[CACHED];
    ACC_T sum = (ACC_T)0;
    if (cached) {
        for (int k = 0; k < CACHED; ++k) {   // every load issued before the first sum
            const ulong q = lid + (ulong)k * step;
            v[k] = q < n4 ? ROW_LOAD4(x, q) : (float4)0.0f;
        }
        for (int k = 0; k < CACHED; ++k) sum += sum4(v[k]);
    } else if (vectors) {
        for (ulong q = lid; q < n4; q += step) sum += sum4(ROW_LOAD4(x, q));
    } else {
        for (ulong j = lid; j < n; j += step) sum += (ACC_T)LOAD(x, j);
    }
    const ACC_T mean = work_group_sum(part, sum) / (ACC_T)n;

    ACC_T sq = (ACC_T)0;
    if (cached) {
        for (int k = 0; k < CACHED; ++k)
            if (lid + (ulong)k * step < n4) sq += sq4(v[k], mean);
    } else if (vectors) {
        for (ulong q = lid; q < n4; q += step) sq += sq4(ROW_LOAD4(x, q), mean);
    } else {
        for (ulong j = lid; j < n; j += step) {
            const ACC_T d = (ACC_T)LOAD(x, j) - mean;
            sq += d * d;
        }
    }
    const ACC_T inv = (ACC_T)1 / sqrt(work_group_sum(part, sq) / (ACC_T)n + (ACC_T)EPSILON);

    // The mean as two floats: x - hi is exact near the mean, so rows far from
    // zero lose no precision.
    const float hi = (float)mean, lo = (float)(mean - (ACC_T)hi), finv = (float)inv;
    if (AFFINE_ROWS && cached) {
        for (int k = 0; k < CACHED; ++k) {
            const ulong q = lid + (ulong)k * step;
            if (q < n4) ROW_STORE4(y, q, ((v[k] - hi) - lo) * finv * ROW_LOAD4(input1, q) + BIAS4(q));
        }
    } else if (AFFINE_ROWS && vectors) {
        for (ulong q = lid; q < n4; q += step)
            ROW_STORE4(y, q, ((ROW_LOAD4(x, q) - hi) - lo) * finv * ROW_LOAD4(input1, q) + BIAS4(q));
    } else {
        // Element by element, x read again; a broadcast scale or bias goes
        // through the element's coordinates.
        for (ulong j = lid; j < n; j += step) {
            float r;
            AFFINE(r, (((float)LOAD(x, j) - hi) - lo) * finv, j, base + j);
            STORE(y, j, r);
        }
    }
    if (lid == 0) {
        output1[row] = hi;
        output2[row] = finv;
    }
}
