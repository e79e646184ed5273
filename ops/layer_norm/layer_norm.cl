// layer_norm on OpenCL: one work-group per row (the dims from the axis on,
// ROW_LEN elements, contiguous).
//
// The group's work-items stride over the row and combine their partial sums
// through local memory: the mean, then the sum of (x - mean)^2, then each
// writes its elements normalised, scaled and shifted. Sums are kept in ACC_T
// (FLOAT_ACC: double where the device has fp64). Work-item 0 writes the row's
// mean and 1 / sqrt(var + EPSILON) to outputs 1 and 2 (always f32).
//
// Scale and bias broadcast into the row: when one holds ROW_LEN elements its
// index is the element's position in the row, else the element's coordinates
// are split over the output dims (BCAST_SPLIT) and mapped into it.
//
// From the host: ACC_T, ROW_LEN, EPSILON, HAS_BIAS, GROUP_MAX (the size of
// the local buffer, at least the work-group size, a power of two), DATA_F16.

// Sum of every work-item's `v` over the work-group (a power of two in size).
inline ACC_T group_sum(__local ACC_T* part, ACC_T v) {
    const uint lid = get_local_id(0);
    part[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const ACC_T total = part[0];
    barrier(CLK_LOCAL_MEM_FENCE);   // part is reused by the next call
    return total;
}

// 1 when input i (scale 1, bias 2) holds a whole row: no broadcast.
#define ROW_SIZED(i) ((ulong)(INPUT##i##_LENGTH) == (ulong)(ROW_LEN))

KERNEL(layer_norm_rows)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
#if HAS_BIAS
 __global const INPUT2_TYPE* input2,
#endif
 __global OUTPUT0_TYPE* output0, __global float* output1, __global float* output2) {
    __local ACC_T part[GROUP_MAX];
    const ulong row = get_group_id(0);
    const ulong n = (ulong)(ROW_LEN);
    const ulong base = row * n;
    const uint lid = get_local_id(0), step = get_local_size(0);

    ACC_T sum = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) sum += (ACC_T)LOAD(input0, base + j);
    const ACC_T mean = group_sum(part, sum) / (ACC_T)n;
    ACC_T sq = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) {
        const ACC_T d = (ACC_T)LOAD(input0, base + j) - mean;
        sq += d * d;
    }
    const ACC_T inv = (ACC_T)1 / sqrt(group_sum(part, sq) / (ACC_T)n + (ACC_T)EPSILON);
    const float fmean = (float)mean, finv = (float)inv;
    for (ulong j = lid; j < n; j += step) {
        const ulong o = base + j;
        ulong si = j;
#if HAS_BIAS
        ulong bi = j;
        if (!(ROW_SIZED(1) & ROW_SIZED(2))) {
            BCAST_SPLIT(c, o);
            if (!ROW_SIZED(1)) si = BCAST_OFFSET(c, 1);
            if (!ROW_SIZED(2)) bi = BCAST_OFFSET(c, 2);
        }
        const float b = (float)LOAD(input2, bi);
#else
        if (!ROW_SIZED(1)) {
            BCAST_SPLIT(c, o);
            si = BCAST_OFFSET(c, 1);
        }
        const float b = 0.0f;
#endif
        STORE(output0, o, ((float)LOAD(input0, o) - fmean) * finv * (float)LOAD(input1, si) + b);
    }
    if (lid == 0) {
        output1[row] = fmean;
        output2[row] = finv;
    }
}
