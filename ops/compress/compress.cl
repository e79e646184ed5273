// compress on OpenCL, two stages over the N slices along the axis (AXIS_LEN
// of them, INNER elements apart; flattened: every element is a slice).
//   compress_scan: one work-item walks the condition (at most N of it) and
//                  writes each kept slice's output position into pos (-1 for a
//                  dropped one), the count into the report;
//   compress_copy: one work-item per input element copies it to its slice's
//                  position when the slice is kept (the output's axis dim is
//                  the count, read from the report).
#if FLATTEN
#define N ((ulong)INPUT0_LENGTH)
#define INNER_N 1UL
#else
#define N ((ulong)AXIS_LEN)
#define INNER_N ((ulong)INNER)
#endif
#define COND_LEN ((ulong)INPUT1_LENGTH)

KERNEL(compress_scan)(OPTIONAL_SHAPE_INFO_ARG __global const uchar* input1, __global int* pos,
                      __global int* report) {
    int at = 0;
    for (ulong a = 0; a < N; ++a) {
        const int keep = a < COND_LEN && input1[a] != 0;
        pos[a] = keep ? at : -1;
        at += keep;
    }
    report[0] = at;
}

KERNEL(compress_copy)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_TYPE* input0, __global const int* pos,
                      __global const int* report, __global BITS_TYPE* output0) {
    const ulong e = get_global_id(0);
    if (e >= (ulong)INPUT0_LENGTH) return;
    const ulong inner = INNER_N;
    const ulong a = (e / inner) % N;
    const int at = pos[a];
    if (at < 0) return;
    const ulong count = (ulong)report[0];
    output0[((e / inner / N) * count + (ulong)at) * inner + e % inner] = input0[e];
}
