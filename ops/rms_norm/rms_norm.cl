// rms_norm on OpenCL: one work-group per row (the last axis, ROW_LEN
// elements, contiguous).
//
// A row of a multiple of 4 elements (it then starts 16-byte aligned) is read
// once: each work-item loads its 4-element vectors of the row (work-item i
// the vectors i, i + G, ... for a group of G) into registers, up to CACHED
// of them, all loads in flight at once; the group sums their squares
// (ocl_common.cl's work_group_sum, in ACC_T = FLOAT_ACC: double where the
// device has fp64), then writes the vectors scaled by 1 / sqrt(mean +
// EPSILON). A longer row is read again as vectors to be written; other rows
// go element by element.
//
// scale (input 1, when HAS_SCALE) holds one element per element of the row,
// read as vectors at the row's positions, or one element for every row.
//
// From the host: ACC_T, ROW_LEN, EPSILON, HAS_SCALE, GROUP_MAX (the size of
// the local buffer, at least the work-group size, a power of two), CACHED,
// DATA_F16.

#if DATA_F16
#define ROW_LOAD4(p, q) vload_half4((q), (p))
#define ROW_STORE4(p, q, v) vstore_half4_rte((v), (q), (p))
#else
#define ROW_LOAD4(p, q) (((__global const float4*)(p))[(q)])
#define ROW_STORE4(p, q, v) (((__global float4*)(p))[(q)] = (v))
#endif

#if HAS_SCALE
// 1 when scale holds a whole row (a one-element row: either reading is the same).
#define SCALE_ROW ((ulong)(INPUT1_LENGTH) == (ulong)(ROW_LEN))
#define SCALE_PARAM , __global const INPUT1_TYPE* input1
#define SCALE4(q) (SCALE_ROW ? ROW_LOAD4(input1, q) : (float4)one_scale)
#define SCALE_AT(j) (SCALE_ROW ? (float)LOAD(input1, j) : one_scale)
#else
#define SCALE_ROW 0
#define SCALE_PARAM
#define SCALE4(q) ((float4)1.0f)
#define SCALE_AT(j) 1.0f
#endif

inline ACC_T sq4(float4 v) { return (ACC_T)v.x * v.x + (ACC_T)v.y * v.y + (ACC_T)v.z * v.z + (ACC_T)v.w * v.w; }

KERNEL(rms_norm_rows)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0 SCALE_PARAM, __global OUTPUT0_TYPE* output0) {
    __local ACC_T part[GROUP_MAX];
    const ulong row = get_group_id(0);
    const ulong n = (ulong)(ROW_LEN), n4 = n / 4;
    const ulong base = row * n;
    __global const INPUT0_TYPE* x = input0 + base;
    __global OUTPUT0_TYPE* y = output0 + base;
    const uint lid = get_local_id(0), step = get_local_size(0);
#if HAS_SCALE
    const float one_scale = (float)LOAD(input1, 0);
#endif
    // Vectors when the row holds whole ones, else element by element (the
    // loops PoCL compiles correctly for a literal row length).
    const bool vectors = n % 4 == 0;
    const bool cached = vectors && n4 <= (ulong)step * CACHED;

    float4 v[CACHED];
    ACC_T sq = (ACC_T)0;
    if (cached) {
        for (int k = 0; k < CACHED; ++k) {   // every load issued before the first sum
            const ulong q = lid + (ulong)k * step;
            v[k] = q < n4 ? ROW_LOAD4(x, q) : (float4)0.0f;
        }
        for (int k = 0; k < CACHED; ++k) sq += sq4(v[k]);
    } else if (vectors) {
        for (ulong q = lid; q < n4; q += step) sq += sq4(ROW_LOAD4(x, q));
    } else {
        for (ulong j = lid; j < n; j += step) {
            const ACC_T e = (ACC_T)LOAD(x, j);
            sq += e * e;
        }
    }
    const float inv = (float)((ACC_T)1 / sqrt(work_group_sum(part, sq) / (ACC_T)n + (ACC_T)EPSILON));

    if (cached) {
        for (int k = 0; k < CACHED; ++k) {
            const ulong q = lid + (ulong)k * step;
            if (q < n4) ROW_STORE4(y, q, v[k] * inv * SCALE4(q));
        }
    } else if (vectors) {
        for (ulong q = lid; q < n4; q += step) ROW_STORE4(y, q, ROW_LOAD4(x, q) * inv * SCALE4(q));
    } else {
        for (ulong j = lid; j < n; j += step) STORE(y, j, (float)LOAD(x, j) * inv * SCALE_AT(j));
    }
}
