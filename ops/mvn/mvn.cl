// mvn on OpenCL: one work-group per group (a position of the kept dims).
//
// Element j of group g lives at the flat index made by splitting g over the
// kept dims and j over the reduced ones (REDUCED_MASK, a bit per right-aligned
// dim); when the reduced dims are the trailing ones (TRAILING) that is g *
// GROUP_LEN + j. The group's work-items stride over its elements and combine
// their partial sums through local memory (ocl_common.cl's work_group_sum): the
// mean, then the sum of (x - mean)^2, then each writes (x - mean) / (sqrt(var)
// + EPSILON). Sums are kept in ACC_T (FLOAT_ACC: double where the device has
// fp64).
//
// From the host: ACC_T, REDUCED_MASK, TRAILING, GROUP_LEN, EPSILON, GROUP_MAX
// (the size of the local buffer, at least the work-group size, a power of two),
// DATA_F16.

// `d`: the 8 right-aligned dims of x (a kernel argument holds them in the
// shape-agnostic build, so the kernel passes them in).
inline ulong element_index(const ulong* d, ulong n, ulong g, ulong j) {
#if TRAILING
    return g * n + j;
#else
    ulong offset = 0, stride = 1;
    for (int k = 7; k >= 0; --k) {
        ulong c;
        if ((REDUCED_MASK >> k) & 1u) {
            c = j % d[k];
            j /= d[k];
        } else {
            c = g % d[k];
            g /= d[k];
        }
        offset += c * stride;
        stride *= d[k];
    }
    return offset;
#endif
}

KERNEL(mvn_groups)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    __local ACC_T part[GROUP_MAX];
    const ulong g = get_group_id(0);
    const ulong n = (ulong)(GROUP_LEN);
    const uint lid = get_local_id(0), step = get_local_size(0);
    const ulong dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                           INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};

    ACC_T sum = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) sum += (ACC_T)LOAD(input0, element_index(dims, n, g, j));
    const ACC_T mean = work_group_sum(part, sum) / (ACC_T)n;
    ACC_T sq = (ACC_T)0;
    for (ulong j = lid; j < n; j += step) {
        const ACC_T d = (ACC_T)LOAD(input0, element_index(dims, n, g, j)) - mean;
        sq += d * d;
    }
    // The mean as two floats: x - hi is exact near the mean, so large means
    // lose no precision.
    const float hi = (float)mean, lo = (float)(mean - (ACC_T)hi);
    const float inv = (float)((ACC_T)1 / (sqrt(work_group_sum(part, sq) / (ACC_T)n) + (ACC_T)EPSILON));
    for (ulong j = lid; j < n; j += step) {
        const ulong i = element_index(dims, n, g, j);
        STORE(output0, i, (((float)LOAD(input0, i) - hi) - lo) * inv);
    }
}
