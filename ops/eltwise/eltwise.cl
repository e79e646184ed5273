// eltwise on OpenCL: any number of inputs, two paths chosen by the shapes:
//
// - same shapes (every input has the output's element count, so none
//   broadcasts): a flat, vectorised grid-stride loop. Work-item i handles
//   4-element vectors i, i + G, ... (G = global size) through vector pointers
//   (buffers start aligned: one 16-byte access per float4 on GPUs), then the
//   LENGTH % 4 tail elements go to work-items 0..2. This is the common case
//   and is memory-bound, so it moves whole vectors and no index is split.
//   Inputs of different types (pow's exponent) take the element-wise loop.
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
// From the host (eltwise_op.cpp, ocl_defines):
//   OP_EXPR            the operation on two COMPUTE_T values `a` and `b`
//   COMPUTE_T          float (f32, f16), double (f64) or long (integers: add,
//                      sub, mul go through ulong so overflow wraps to the
//                      host's result; integer div, mod, fmod, pow stay on the
//                      host impl)
//   ELT_INPUT_ARGS     "__global const INPUT0_TYPE* input0, ..." for every input
//   INk_HALF           1 when input k is f16 (loaded through vload_half)
//   ELT_COMBINE(GET)   the fold op(op(GET(0), GET(1)), GET(2)) ... over the
//                      inputs (divided by their count for mean), GET(k) giving
//                      input k's value at the current element
//   ELT_ALL_SAME       1 when no input broadcasts (BCAST_SAME of each)
//   ELT_VEC, ELT_VLOADS  every input has the output's type: the vector path,
//                      and its loads (ELT_VLOAD(k) for each k)
//   ELT_BITS           the width of the type (shifts by more give 0)
//   USES_F64           an f64 input or output
#if USES_F64 && !defined(cl_khr_fp64)
#error "eltwise of f64 data needs a device with cl_khr_fp64"
#endif

inline COMPUTE_T op(COMPUTE_T a, COMPUTE_T b) { return OP_EXPR; }

// Input k's element i as COMPUTE_T.
#define ELT_LOAD_1(p, i) vload_half((i), (p))
#define ELT_LOAD_0(p, i) ((p)[(i)])
#define ELT_IN(k, i) ((COMPUTE_T)CAT(ELT_LOAD_, IN##k##_HALF)(input##k, (i)))
#define GET_SAME(k) ELT_IN(k, i)
#define GET_BCAST(k) ELT_IN(k, BCAST_OFFSET(c, k))

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

// The 4-element path: vectors of every input (f16 as float4), lane s of each.
#if DATA_F16
#define IN_VEC float4
#define OUT_VEC float4
#define LANE_T float
#else
#define IN_VEC CAT(INPUT0_TYPE, 4)
#define OUT_VEC CAT(OUTPUT0_TYPE, 4)
#define LANE_T OUTPUT0_TYPE
#endif
#define ELT_VLOAD(k) const IN_VEC v##k = LOAD4(INPUT##k##_TYPE, input##k, i4);
#define LANE0(k) ((COMPUTE_T)v##k.s0)
#define LANE1(k) ((COMPUTE_T)v##k.s1)
#define LANE2(k) ((COMPUTE_T)v##k.s2)
#define LANE3(k) ((COMPUTE_T)v##k.s3)
#define ELT_LANE(L) ((LANE_T)ELT_COMBINE(L))

KERNEL(eltwise_ref)(OPTIONAL_SHAPE_INFO_ARG ELT_INPUT_ARGS __global OUTPUT0_TYPE* output0 FUSED_OPS_ARGS) {
    const ulong n = (ulong)OUTPUT0_LENGTH;
    const ulong gid = get_global_id(0);
    if (ELT_ALL_SAME) {
        const ulong gs = get_global_size(0);
#if ELT_VEC
        if (!(OUTPUT0_PADDED || HAS_FUSED_OPS)) {
            const ulong n4 = n / 4;
            for (ulong i4 = gid; i4 < n4; i4 += gs) {
                ELT_VLOADS
                STORE4(OUTPUT0_TYPE, output0, i4,
                       (OUT_VEC)(ELT_LANE(LANE0), ELT_LANE(LANE1), ELT_LANE(LANE2), ELT_LANE(LANE3)));
            }
            const ulong i = n4 * 4 + gid;
            if (i < n) STORE(output0, i, ELT_COMBINE(GET_SAME));
            return;
        }
#endif
        for (ulong i = gid; i < n; i += gs) STORE_F(output0, OUTPUT0_PHYS(i), i, ELT_COMBINE(GET_SAME));
        return;
    }
    const ulong o = gid;
    if (o >= n) return;   // the global size is rounded up
    BCAST_SPLIT(c, o);
    STORE_F(output0, OUTPUT0_PHYS(o), o, ELT_COMBINE(GET_BCAST));
}
