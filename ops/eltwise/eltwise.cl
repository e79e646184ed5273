// eltwise on OpenCL, two paths chosen by the shapes:
//
// - same shapes (both inputs have the output's element count, so neither
//   broadcasts): a flat, vectorised grid-stride loop. Work-item i handles
//   4-element vectors i, i + G, ... (G = global size) through vector pointers
//   (buffers start aligned: one 16-byte access per float4 on GPUs), then the
//   LENGTH % 4 tail elements go to work-items 0..2. This is the common case
//   and is memory-bound, so it moves whole vectors and no index is split.
// - broadcast: one work-item per output element. The output index is split
//   into its 8 right-aligned coordinates and each input's flat index taken at
//   them, a size-1 dim held at 0 (ocl_common.cl's BCAST_SPLIT / BCAST_OFFSET).
// A padded output (a view into a larger buffer, e.g. one input's slice of an
// in-place concat) takes the element-wise path of either case and stores
// through OUTPUT0_PHYS; OUTPUT0_PADDED is a literal 0 for dense outputs of a
// static build. Fused post-ops take the element-wise path too.
// In the static build the test is on literals, so only one path is compiled.
// In the shape-agnostic build it is a uniform branch on the shape_info dims;
// the host's dispatch (eltwise_op.cpp) makes the same test to size the grid.
//
// From the host: OP_EXPR, the operation as an expression of two COMPUTE_T
// values `a` and `b`, and DATA_F16. Floats compute in float. Integers load
// into long (COMPUTE_T) and compute add/sub/mul/squared_diff through ulong, so
// overflow wraps to the same low bits as the host's two's-complement result;
// min/max compare the long values. Integer div and pow are left to the host
// impl.
// Vector types of the 4-element path: f16 computes in float4.
#if DATA_F16
#define A_VEC float4
#define B_VEC float4
#define VEC_T float4
#else
#define A_VEC CAT(INPUT0_TYPE, 4)
#define B_VEC CAT(INPUT1_TYPE, 4)
#define VEC_T CAT(OUTPUT0_TYPE, 4)
#endif

inline COMPUTE_T op(COMPUTE_T a, COMPUTE_T b) { return OP_EXPR; }

// Fused post-ops (dynrt/ocl_fused_ops.hpp; f32 outputs only): applied to each
// value before it is stored, `oi` its row-major output index. With them the
// no-broadcast case takes the element-wise path.
#if HAS_FUSED_OPS
#define STORE_F(p, i, oi, v)                 \
    do {                                     \
        float fused_v = (float)(v);          \
        const ulong fused_oi = (oi);         \
        FUSED_OPS                            \
        STORE(p, i, fused_v);                \
    } while (0)
#else
#define STORE_F(p, i, oi, v) STORE(p, i, v)
#endif

#define OP_LANE(s) (OUTPUT0_TYPE) op((COMPUTE_T)a4.s, (COMPUTE_T)b4.s)
#if DATA_F16
#undef OP_LANE
#define OP_LANE(s) op(a4.s, b4.s)
#endif

KERNEL(eltwise_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global OUTPUT0_TYPE* output0 FUSED_OPS_ARGS) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong gid = get_global_id(0);
    if (BCAST_SAME(0) && BCAST_SAME(1)) {
        const ulong gs = get_global_size(0);
        if (OUTPUT0_PADDED || HAS_FUSED_OPS) {
            for (ulong i = gid; i < n; i += gs)
                STORE_F(output0, OUTPUT0_PHYS(i), i, op((COMPUTE_T)LOAD(input0, i), (COMPUTE_T)LOAD(input1, i)));
            return;
        }
        const ulong n4 = n / 4;
        for (ulong i = gid; i < n4; i += gs) {
            const A_VEC a4 = LOAD4(INPUT0_TYPE, input0, i);
            const B_VEC b4 = LOAD4(INPUT1_TYPE, input1, i);
            STORE4(OUTPUT0_TYPE, output0, i, (VEC_T)(OP_LANE(s0), OP_LANE(s1), OP_LANE(s2), OP_LANE(s3)));
        }
        const ulong t = n4 * 4 + gid;
        if (t < n) STORE(output0, t, op((COMPUTE_T)LOAD(input0, t), (COMPUTE_T)LOAD(input1, t)));
        return;
    }
    const ulong o = gid;
    if (o >= n) return;   // the global size is rounded up
    BCAST_SPLIT(c, o);
    const COMPUTE_T a = (COMPUTE_T)LOAD(input0, BCAST_OFFSET(c, 0));
    const COMPUTE_T b = (COMPUTE_T)LOAD(input1, BCAST_OFFSET(c, 1));
    STORE_F(output0, OUTPUT0_PHYS(o), o, OP_EXPR);
}
