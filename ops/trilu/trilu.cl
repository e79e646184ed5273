// trilu on OpenCL: one work-item per element; element [..., i, j] is copied
// when j - i >= k (UPPER 1) or j - i <= k (UPPER 0), else written as zero bits.
//
// From the host: BITS_T (the unsigned integer type of the element width, so
// any type moves bit for bit), UPPER, and HAS_K (input 1, the i64 scalar k, is
// present; it is read here on every run, so a new k needs no rebuild). The
// matrix dims are the last two right-aligned dims, OUTPUT0_DIM6 and _DIM7.
#if HAS_K
#define K_ARG , __global const INPUT1_TYPE* input1
#define K_VALUE ((long)input1[0])
#else
#define K_ARG
#define K_VALUE 0L
#endif
KERNEL(trilu_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0 K_ARG, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong cols = (ulong)OUTPUT0_DIM7, rows = (ulong)OUTPUT0_DIM6;
    const long i = (long)(o / cols % rows), j = (long)(o % cols);
    const long k = K_VALUE;
#if UPPER
    const bool keep = j - i >= k;
#else
    const bool keep = j - i <= k;
#endif
    ((__global BITS_T*)output0)[o] = keep ? ((__global const BITS_T*)input0)[o] : (BITS_T)0;
}
