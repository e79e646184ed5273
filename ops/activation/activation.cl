// activation on OpenCL: y = FUNC_EXPR of x, four elements at a time.
//
// From the host: FUNC_EXPR, the function as an expression of an ACC_TYPE `x`
// with ALPHA and BETA baked in (attributes are fixed per node, so both the
// static and the shape-agnostic build specialise on them; the kernel has no
// branch on the function), and DATA_F16. ACC_TYPE is float for f32 and f16
// (the math runs in float) and the input's own type for integers (char,
// uchar, int, long: exact, wrapping like the type).
//
// The kernel is memory-bound, so it moves whole vectors: work-item i handles
// vectors i, i + G, i + 2G, ... (G = global size, a grid-stride loop over
// LENGTH / 4 vectors, so few work-groups are launched and each moves several
// vectors), then the LENGTH % 4 tail elements go to work-items 0..2. Vectors
// are read through a 4-vector pointer (buffers start aligned), which GPUs turn
// into one 16-byte access; f16 uses vload_half4 / vstore_half4_rte.
//
// A padded output (a view into a larger buffer, e.g. one input's slice of an
// in-place concat) is written element by element through OUTPUT0_PHYS: the
// same grid-stride loop over elements instead of vectors. OUTPUT0_PADDED is a
// literal 0 in static builds of dense outputs, so that path compiles out there;
// in the shape-agnostic build it is a uniform branch on shape_info.
inline ACC_TYPE act(ACC_TYPE x) { return FUNC_EXPR; }

KERNEL(activation_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong n4 = n / 4;
    const ulong gs = get_global_size(0);
    const ulong gid = get_global_id(0);
    if (OUTPUT0_PADDED) {
        for (ulong i = gid; i < n; i += gs) STORE(output0, OUTPUT0_PHYS(i), act(LOAD(input0, i)));
        return;
    }
    for (ulong i = gid; i < n4; i += gs) {
        const CAT(ACC_TYPE, 4) x = LOAD4(INPUT0_TYPE, input0, i);
        STORE4(OUTPUT0_TYPE, output0, i, (CAT(ACC_TYPE, 4))(act(x.s0), act(x.s1), act(x.s2), act(x.s3)));
    }
    const ulong t = n4 * 4 + gid;
    if (t < n) STORE(output0, t, act(LOAD(input0, t)));
}
