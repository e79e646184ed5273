// topk on OpenCL: one work-item per line along the axis (OUTER_INNER lines of
// AXIS_LEN elements, INNER apart). An element's rank is the number of elements
// of its line that come before it (a better value, or an equal one at a lower
// index); the k of rank < k are the result, stored at their rank (SORTED) or in
// index order. Values are moved as bits (BITS_TYPE), compared as KEY_TYPE.
// Work-item 0 reports k as it is (its low and high 32 bits) even when there
// is no line; the host raises an error for a k outside [0, AXIS_LEN]. The
// lines then hold k clamped to that range, so that a bad k never writes past
// the outputs' bound.
#if DATA_F16
#define KEY(p, i) vload_half((i), (__global const half*)(p))
#else
#define KEY(p, i) (((__global const KEY_TYPE*)(p))[(i)])
#endif
#if LARGEST
#define BETTER(a, b) ((a) > (b))
#else
#define BETTER(a, b) ((a) < (b))
#endif

KERNEL(topk_lines)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_TYPE* input0, __global const INPUT1_TYPE* input1,
                   __global BITS_TYPE* output0, __global long* output1, __global int* report) {
    const long n = (long)AXIS_LEN;
    const long k_in = (long)input1[0];
    const long k = clamp(k_in, 0L, n);
    const ulong line = get_global_id(0);
    if (line == 0) {
        report[0] = (int)(k_in & 0xffffffffL);
        report[1] = (int)(k_in >> 32);
    }
    if (line >= (ulong)OUTER_INNER || k == 0) return;
    const ulong inner = (ulong)INNER;
    const ulong src = (line / inner) * (ulong)n * inner + line % inner;
    const ulong dst = (line / inner) * (ulong)k * inner + line % inner;
    long taken = 0;
    for (long i = 0; i < n && taken < k; ++i) {
        const KEY_TYPE v = KEY(input0, src + (ulong)i * inner);
        long rank = 0;
        for (long j = 0; j < n && rank < k; ++j) {
            const KEY_TYPE w = KEY(input0, src + (ulong)j * inner);
            rank += (BETTER(w, v) || (w == v && j < i)) ? 1 : 0;
        }
        if (rank >= k) continue;
        const ulong at = dst + (ulong)(SORTED ? rank : taken) * inner;
        output0[at] = input0[src + (ulong)i * inner];
        output1[at] = i;
        ++taken;
    }
}
