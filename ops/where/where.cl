// where on OpenCL: one work-item per output element, y = condition ? x : y.
//
// From the host: BITS_T, the unsigned integer type of the element width, so
// any data type (f16 included) is copied bit for bit. When every input has the
// output's element count nothing broadcasts and the output index is each
// input's index. Otherwise the output index is split into its 8 right-aligned
// coordinates (the JIT dims carry leading ones) and an input dim of size 1 is
// held at 0. The static build tests the lengths on literals; the
// shape-agnostic build on the shape_info dims.
#define BCAST_STEP(j)                                \
    {                                                \
        const ulong k = r % (ulong)(OUTPUT0_DIM##j); \
        r /= (ulong)(OUTPUT0_DIM##j);                \
        if ((INPUT0_DIM##j) != 1) ic += k * sc;      \
        if ((INPUT1_DIM##j) != 1) ix += k * sx;      \
        if ((INPUT2_DIM##j) != 1) iy += k * sy;      \
        sc *= (ulong)(INPUT0_DIM##j);                \
        sx *= (ulong)(INPUT1_DIM##j);                \
        sy *= (ulong)(INPUT2_DIM##j);                \
    }

KERNEL(where_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                  __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong o = get_global_id(0);
    if (o >= n) return;   // the global size is rounded up
    ulong ic = o, ix = o, iy = o;
    // Bitwise: in the static build the tests are constants.
    const int same = ((ulong)INPUT0_LENGTH == n) & ((ulong)INPUT1_LENGTH == n) & ((ulong)INPUT2_LENGTH == n);
    if (!same) {
        ulong r = o, sc = 1, sx = 1, sy = 1;
        ic = 0;
        ix = 0;
        iy = 0;
        BCAST_STEP(7) BCAST_STEP(6) BCAST_STEP(5) BCAST_STEP(4)
        BCAST_STEP(3) BCAST_STEP(2) BCAST_STEP(1) BCAST_STEP(0)
    }
    __global const BITS_T* x = (__global const BITS_T*)input1;
    __global const BITS_T* y = (__global const BITS_T*)input2;
    ((__global BITS_T*)output0)[o] = input0[ic] != 0 ? x[ix] : y[iy];
}
