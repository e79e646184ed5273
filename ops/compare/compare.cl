// compare on OpenCL: one work-item per output element, a boolean (uchar 0/1)
// per comparison.
//
// From the host: CMP(a, b), the comparison of two loaded values, and IN_F16
// (f16 inputs load through vload_half into float, exact). NaN compares false
// for every mode, as ordered comparisons in OpenCL C do.
// When both inputs have the output's element count nothing broadcasts and the
// output index is the input index. Otherwise the output index is split into
// its 8 right-aligned coordinates (the JIT dims carry leading ones) and an
// input dim of size 1 is held at 0. The static build tests the lengths on
// literals; the shape-agnostic build on the shape_info dims.
#if IN_F16
#define LOAD_IN(p, i) vload_half((i), (p))
#else
#define LOAD_IN(p, i) ((p)[(i)])
#endif

#define BCAST_STEP(j)                                \
    {                                                \
        const ulong c = r % (ulong)(OUTPUT0_DIM##j); \
        r /= (ulong)(OUTPUT0_DIM##j);                \
        if ((INPUT0_DIM##j) != 1) ia += c * sa;      \
        if ((INPUT1_DIM##j) != 1) ib += c * sb;      \
        sa *= (ulong)(INPUT0_DIM##j);                \
        sb *= (ulong)(INPUT1_DIM##j);                \
    }

KERNEL(compare_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global OUTPUT0_TYPE* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong o = get_global_id(0);
    if (o >= n) return;   // the global size is rounded up
    ulong ia = o, ib = o;
    // Bitwise: in the static build both tests are constants.
    const int same = ((ulong)INPUT0_LENGTH == n) & ((ulong)INPUT1_LENGTH == n);
    if (!same) {
        ulong r = o, sa = 1, sb = 1;
        ia = 0;
        ib = 0;
        BCAST_STEP(7) BCAST_STEP(6) BCAST_STEP(5) BCAST_STEP(4)
        BCAST_STEP(3) BCAST_STEP(2) BCAST_STEP(1) BCAST_STEP(0)
    }
    output0[o] = CMP(LOAD_IN(input0, ia), LOAD_IN(input1, ib)) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
