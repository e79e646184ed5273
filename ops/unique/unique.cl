// unique on OpenCL: one work-item does it all (README: why). X is OUTER
// blocks of N slices of INNER elements (flattened: N elements, OUTER = INNER =
// 1). Slices compare lexicographically, element by element in row-major order,
// as KEY_TYPE (f16 as float).
//   1. in index order, each slice is matched against the uniques found so far
//      (first[u]: the index of unique u's first occurrence): a match counts,
//      a miss opens a new unique; inverse[a] is the unique's number;
//   2. rank[u]: the unique's place in the output (SORTED: the number of
//      uniques below it; else u, the first-occurrence order);
//   3. Y, indices and counts written at the ranks, inverse renumbered, and
//      the number of uniques reported.
#define N ((ulong)AXIS_LEN)
#define INNER_N ((ulong)INNER)
#define OUTER_N ((ulong)OUTER)
#if DATA_F16
#define KEY(p, i) vload_half((i), (__global const half*)(p))
#else
#define KEY(p, i) (((__global const KEY_TYPE*)(p))[(i)])
#endif

// -1, 0, 1 as slice a of x is below, equal to or above slice b.
inline int compare_slices(__global const BITS_TYPE* x, ulong a, ulong b, ulong n, ulong inner, ulong outer) {
    for (ulong o = 0; o < outer; ++o)
        for (ulong i = 0; i < inner; ++i) {
            const KEY_TYPE va = KEY(x, (o * n + a) * inner + i), vb = KEY(x, (o * n + b) * inner + i);
            if (va < vb) return -1;
            if (va > vb) return 1;
        }
    return 0;
}

KERNEL(unique_single)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_TYPE* input0, __global BITS_TYPE* output0,
                      __global long* output1, __global long* output2, __global long* output3, __global int* first,
                      __global int* count, __global int* rank, __global int* report) {
    const ulong n = N, inner = INNER_N, outer = OUTER_N;
    int uniques = 0;
    for (ulong a = 0; a < n; ++a) {
        int u = 0;
        while (u < uniques && compare_slices(input0, (ulong)first[u], a, n, inner, outer) != 0) ++u;
        if (u == uniques) {
            first[u] = (int)a;
            count[u] = 0;
            ++uniques;
        }
        ++count[u];
        output2[a] = u;
    }
    for (int u = 0; u < uniques; ++u) {
        int below = 0;
        if (SORTED)
            for (int v = 0; v < uniques; ++v)
                below += compare_slices(input0, (ulong)first[v], (ulong)first[u], n, inner, outer) < 0 ? 1 : 0;
        rank[u] = SORTED ? below : u;
    }
    const ulong kept = (ulong)uniques;
    for (int u = 0; u < uniques; ++u) {
        const ulong r = (ulong)rank[u], src = (ulong)first[u];
        output1[r] = first[u];
        output3[r] = count[u];
        for (ulong o = 0; o < outer; ++o)
            for (ulong i = 0; i < inner; ++i) output0[(o * kept + r) * inner + i] = input0[(o * n + src) * inner + i];
    }
    for (ulong a = 0; a < n; ++a) output2[a] = rank[output2[a]];
    report[0] = uniques;
}
