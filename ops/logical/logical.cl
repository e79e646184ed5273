// logical on OpenCL: one work-item per output element, uchar 0/1 out; any
// non-zero input byte reads as true.
//
// From the host: LOGIC(a, b), the operation on two truth values (`not` reads
// only `a`), and UNARY (1 for `not`: one input). When every input has the
// output's element count nothing broadcasts and the output index is the
// input index. Otherwise the output index is split into its 8 right-aligned
// coordinates (the JIT dims carry leading ones) and an input dim of size 1 is
// held at 0. The static build tests the lengths on literals; the
// shape-agnostic build on the shape_info dims.
#if UNARY
KERNEL(logical_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const bool a = input0[o] != 0;
    output0[o] = LOGIC(a, a) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
#else
#define BCAST_STEP(j)                                \
    {                                                \
        const ulong c = r % (ulong)(OUTPUT0_DIM##j); \
        r /= (ulong)(OUTPUT0_DIM##j);                \
        if ((INPUT0_DIM##j) != 1) ia += c * sa;      \
        if ((INPUT1_DIM##j) != 1) ib += c * sb;      \
        sa *= (ulong)(INPUT0_DIM##j);                \
        sb *= (ulong)(INPUT1_DIM##j);                \
    }

KERNEL(logical_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
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
    const bool a = input0[ia] != 0;
    const bool b = input1[ib] != 0;
    output0[o] = LOGIC(a, b) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
#endif
