// lrn on OpenCL: one work-item per element. Element i of x [N, C, inner...]
// sums the squares of its channel neighbours [c - BEFORE, c + AFTER], clipped
// to [0, CHANNELS), in float and divides x by (BIAS + SCALE * sum)^BETA.
//
// From the host: CHANNELS, INNER (product of the dims after the channels),
// BEFORE, AFTER, SCALE (alpha / size), BETA, BIAS, DATA_F16.
KERNEL(lrn_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong inner = (ulong)(INNER);
    const long channels = (long)(CHANNELS);
    const long c = (long)(i / inner % (ulong)channels);
    const ulong first = i - (ulong)c * inner;
    const long lo = max(0L, c - (long)(BEFORE));
    const long hi = min(channels - 1, c + (long)(AFTER));
    float sq = 0.0f;
    for (long k = lo; k <= hi; ++k) {
        const float v = (float)LOAD(input0, first + (ulong)k * inner);
        sq += v * v;
    }
    STORE(output0, i, (float)LOAD(input0, i) / pow(BIAS + SCALE * sq, BETA));
}
