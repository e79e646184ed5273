// instance_norm on OpenCL: one work-group per (n, c) plane (PLANE contiguous
// elements, the product of the spatial dims).
//
// The group's work-items stride over the plane and combine their partial sums
// through local memory (ocl_common.cl's work_group_sum): the mean, then the sum
// of (x - mean)^2, then each writes its elements normalised and scaled by
// scale[c], shifted by bias[c]. Sums are kept in ACC_T (FLOAT_ACC: double where
// the device has fp64).
//
// From the host: ACC_T, CHANNELS, PLANE, EPSILON, GROUP_MAX (the size of the
// local buffer, at least the work-group size, a power of two), DATA_F16.

KERNEL(instance_norm_planes)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    __local ACC_T part[GROUP_MAX];
    const ulong plane = get_group_id(0);
    const ulong n = (ulong)(PLANE);
    const ulong base = plane * n;
    const ulong c = plane % (ulong)(CHANNELS);
    const uint lid = get_local_id(0), step = get_local_size(0);

    ACC_T sum = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) sum += (ACC_T)LOAD(input0, base + j);
    const ACC_T mean = work_group_sum(part, sum) / (ACC_T)n;
    ACC_T sq = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) {
        const ACC_T d = (ACC_T)LOAD(input0, base + j) - mean;
        sq += d * d;
    }
    const ACC_T inv = (ACC_T)1 / sqrt(work_group_sum(part, sq) / (ACC_T)n + (ACC_T)EPSILON);
    // The mean as two floats: x - hi is exact near the mean, so large means
    // lose no precision.
    const float hi = (float)mean, lo = (float)(mean - (ACC_T)hi);
    const float k = (float)inv * (float)LOAD(input1, c), b = (float)LOAD(input2, c);
    for (ulong j = lid; j < n; j += step)
        STORE(output0, base + j, (((float)LOAD(input0, base + j) - hi) - lo) * k + b);
}
