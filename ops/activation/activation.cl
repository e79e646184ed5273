// activation on OpenCL: one work-item per element, y = FUNC_EXPR of x.
//
// From the host: FUNC_EXPR, the function as an expression of a float `x` with
// ALPHA and BETA baked in (attributes are fixed per node, so both the static
// and the shape-agnostic build specialise on them; the kernel has no branch on
// the function), and DATA_F16. The math runs in float.
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

KERNEL(activation_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const float x = LOAD(input0, i);
    STORE(output0, i, FUNC_EXPR);
}
