// eltwise on OpenCL: one work-item per output element with numpy broadcasting.
//
// The output index is split into its 8 right-aligned coordinates (the JIT dims
// carry leading ones); an input dim of size 1 is broadcast (stride 0), so the
// input's flat index is the sum of coordinate * stride over its other dims. In
// the static build every dim is a literal and the compiler folds the strides.
//
// From the host: OP_EXPR, the operation as an expression of two COMPUTE_T
// values `a` and `b`, and DATA_F16. Floats compute in float. Integers load
// into long (COMPUTE_T) and compute add/sub/mul/squared_diff through ulong, so
// overflow wraps to the same low bits as the host's two's-complement result;
// min/max compare the long values. Integer div and pow are left to the host
// impl.
#define KERNEL(name) __kernel void name

// DATA_F16 (from the host): f16 data is read and written with vload_half /
// vstore_half_rte and computed in float, so no cl_khr_fp16 is needed.
#if DATA_F16
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#else
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (OUTPUT0_TYPE)(v))
#endif

#define BCAST_STEP(j)                                          \
    {                                                          \
        const ulong c = r % (ulong)(OUTPUT0_DIM##j);           \
        r /= (ulong)(OUTPUT0_DIM##j);                          \
        if ((INPUT0_DIM##j) != 1) ia += c * sa;                \
        if ((INPUT1_DIM##j) != 1) ib += c * sb;                \
        sa *= (ulong)(INPUT0_DIM##j);                          \
        sb *= (ulong)(INPUT1_DIM##j);                          \
    }

KERNEL(eltwise_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    ulong r = o, ia = 0, ib = 0, sa = 1, sb = 1;
    BCAST_STEP(7) BCAST_STEP(6) BCAST_STEP(5) BCAST_STEP(4)
    BCAST_STEP(3) BCAST_STEP(2) BCAST_STEP(1) BCAST_STEP(0)
    const COMPUTE_T a = (COMPUTE_T)LOAD(input0, ia);
    const COMPUTE_T b = (COMPUTE_T)LOAD(input1, ib);
    STORE(output0, o, OP_EXPR);
}
