// nonzero on OpenCL in three stages over chunks of CHUNK elements:
//   nonzero_count: one work-item per chunk counts its non-zeros into counts[c];
//   nonzero_scan:  one work-item turns counts into exclusive prefix positions,
//                  the total into counts[CHUNKS] and the report;
//   nonzero_write: one work-item per chunk writes the coordinates of its
//                  non-zeros from its chunk's position on, row d of the output
//                  starting at d * total.
// f16 is tested as a float (so -0 is zero); other types compare with 0.
#define TOTAL ((ulong)INPUT0_LENGTH)
#define CHUNKS ((TOTAL + CHUNK - 1) / CHUNK)
#if DATA_F16
#define NONZERO(i) (vload_half((i), (__global const half*)input0) != 0.0f)
#else
#define NONZERO(i) (input0[(i)] != 0)
#endif

KERNEL(nonzero_count)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global int* counts) {
    const ulong c = get_global_id(0);
    if (c >= CHUNKS) return;
    int n = 0;
    for (ulong i = c * CHUNK; i < min(TOTAL, (c + 1) * CHUNK); ++i) n += NONZERO(i) ? 1 : 0;
    counts[c] = n;
}

KERNEL(nonzero_scan)(OPTIONAL_SHAPE_INFO_ARG __global int* counts, __global int* report) {
    int at = 0;
    for (ulong c = 0; c < CHUNKS; ++c) {
        const int n = counts[c];
        counts[c] = at;
        at += n;
    }
    counts[CHUNKS] = at;
    report[0] = at;
}

KERNEL(nonzero_write)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const int* counts,
                      __global long* output0) {
    const ulong c = get_global_id(0);
    if (c >= CHUNKS) return;
    const ulong total = (ulong)counts[CHUNKS];
    const ulong dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                           INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    ulong at = (ulong)counts[c];
    for (ulong i = c * CHUNK; i < min(TOTAL, (c + 1) * CHUNK); ++i) {
        if (!NONZERO(i)) continue;
        ulong rest = i;
        for (int d = 7; d >= 8 - INPUT0_RANK; --d) {
            output0[(ulong)(d - (8 - INPUT0_RANK)) * total + at] = (long)(rest % dims[d]);
            rest /= dims[d];
        }
        ++at;
    }
}
