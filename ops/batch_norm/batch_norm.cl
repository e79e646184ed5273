// batch_norm on OpenCL, x [BATCH, CHANNELS, INNER...].
//
// Inference (TRAINING 0): one work-item per element, channel (i / INNER) %
// CHANNELS, y = (x - mean[c]) * scale[c] / sqrt(var[c] + EPSILON) + bias[c].
//
// Training (TRAINING 1): one work-group per channel. Its work-items stride
// over the channel's BATCH * INNER elements and combine partial sums through
// local memory (ocl_common.cl's work_group_sum): the batch mean, then the sum
// of (x - mean)^2; they then write y with the batch statistics, and work-item
// 0 the running statistics (outputs 1 and 2). Sums are kept in ACC_T
// (FLOAT_ACC: double where the device has fp64).
//
// From the host: ACC_T, TRAINING, BATCH, CHANNELS, INNER, EPSILON, MOMENTUM,
// GROUP_MAX (the size of the local buffer, at least the work-group size, a
// power of two), DATA_F16.
#if TRAINING

// Flat index of element j (over batch and inner) of channel c.
#define CHANNEL_INDEX(c, j) ((((j) / inner) * (ulong)(CHANNELS) + (c)) * inner + (j) % inner)

KERNEL(batch_norm_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global const INPUT2_TYPE* input2, __global const INPUT3_TYPE* input3, __global const INPUT4_TYPE* input4,
 __global OUTPUT0_TYPE* output0, __global OUTPUT1_TYPE* output1, __global OUTPUT2_TYPE* output2) {
    __local ACC_T part[GROUP_MAX];
    const ulong c = get_group_id(0);
    const ulong inner = (ulong)(INNER);
    const ulong n = (ulong)(BATCH)*inner;
    const uint lid = get_local_id(0), step = get_local_size(0);

    ACC_T sum = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) sum += (ACC_T)LOAD(input0, CHANNEL_INDEX(c, j));
    const ACC_T mean = work_group_sum(part, sum) / (ACC_T)n;
    ACC_T sq = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) {
        const ACC_T d = (ACC_T)LOAD(input0, CHANNEL_INDEX(c, j)) - mean;
        sq += d * d;
    }
    const ACC_T var = work_group_sum(part, sq) / (ACC_T)n;
    const float fmean = (float)mean;
    const float k = (float)LOAD(input1, c) * (float)((ACC_T)1 / sqrt(var + (ACC_T)EPSILON));
    const float b = (float)LOAD(input2, c);
    for (ulong j = lid; j < n; j += step) {
        const ulong i = CHANNEL_INDEX(c, j);
        STORE(output0, i, ((float)LOAD(input0, i) - fmean) * k + b);
    }
    if (lid == 0) {
        STORE(output1, c, (float)LOAD(input3, c) * MOMENTUM + fmean * (1.0f - MOMENTUM));
        STORE(output2, c, (float)LOAD(input4, c) * MOMENTUM + (float)var * (1.0f - MOMENTUM));
    }
}

#else

KERNEL(batch_norm_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global const INPUT2_TYPE* input2, __global const INPUT3_TYPE* input3, __global const INPUT4_TYPE* input4,
 __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong c = i / (ulong)(INNER) % (ulong)(CHANNELS);
    const float k = (float)LOAD(input1, c) / sqrt((float)LOAD(input4, c) + EPSILON);
    STORE(output0, i, ((float)LOAD(input0, i) - (float)LOAD(input3, c)) * k + (float)LOAD(input2, c));
}

#endif
