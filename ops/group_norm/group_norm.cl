// group_norm on OpenCL: one work-group per (n, group) block of CPG * SPATIAL
// contiguous elements (CPG channels of SPATIAL elements each).
//
// The group's work-items stride over the block and combine their partial sums
// through local memory (ocl_common.cl's work_group_sum): the mean, then the sum
// of (x - mean)^2; then each writes its elements normalised, scaled and shifted
// by the scale and bias of their channel (or of the group with PER_GROUP). Sums
// are kept in ACC_T (FLOAT_ACC: double where the device has fp64).
//
// From the host: ACC_T, GROUPS, CPG, SPATIAL, EPSILON, PER_GROUP, GROUP_MAX
// (the size of the local buffer, at least the work-group size, a power of two),
// DATA_F16.

KERNEL(group_norm_blocks)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    __local ACC_T part[GROUP_MAX];
    const ulong block = get_group_id(0);
    const ulong spatial = (ulong)(SPATIAL), n = spatial * (ulong)(CPG);
    const ulong base = block * n, g = block % (ulong)(GROUPS);
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
    for (ulong j = lid; j < n; j += step) {
        const ulong k = PER_GROUP ? g : g * (ulong)(CPG) + j / spatial;
        const ACC_T y = ((ACC_T)LOAD(input0, base + j) - mean) * inv * (ACC_T)LOAD(input1, k);
        STORE(output0, base + j, y + (ACC_T)LOAD(input2, k));
    }
}
