// Device-side helpers shared by every OpenCL kernel the SDK builds: the SDK
// puts this file ahead of each op's .cl source (after the JIT constants), so
// an op's kernel uses these names without defining them.
//
//   KERNEL(name)              the entry-point declarator
//   CAT(a, b)                 token pasting after expansion (CAT(INPUT0_TYPE, 4) -> float4)
//   LOAD(p, i) / STORE(p, i, v)
//                             element access by DATA_F16 (a JIT constant the op
//                             sets from its dtype, dynrt::jit_data_f16): f16 goes
//                             through vload_half / vstore_half_rte (core OpenCL
//                             1.2, no cl_khr_fp16) and computes in float; other
//                             types are plain accesses, STORE converting to
//                             OUTPUT0_TYPE. An op whose inputs and output differ
//                             in type sets IN_F16 (LOAD, LOAD4) and OUT_F16
//                             (STORE, STORE4) instead; each defaults to DATA_F16
//   LOAD4(T, p, i) / STORE4(T, p, i, v)
//                             vector i of 4 elements of a buffer of element type
//                             T: through a vector pointer (buffers start aligned,
//                             so a GPU makes one 16-byte access), vload_half4 /
//                             vstore_half4_rte for f16 (float4 values)
//   BCAST_SAME(i)             1 when input i has the output's element count, so
//                             it does not broadcast and its index is the output's
//   BCAST_SPLIT(c, o)         declares ulong c[8]: output element o split into
//                             its 8 right-aligned coordinates over OUTPUT0_DIM0..7
//                             (the JIT dims carry leading ones)
//   BCAST_OFFSET(c, i)        flat index into input i at coordinates c, numpy
//                             broadcasting: a size-1 dim of input i is held at 0
//   BCAST_INDEX2(o, i0, i1) / BCAST_INDEX3(o, i0, i1, i2)
//                             declare ulong i0, i1 (, i2): the flat indices into
//                             inputs 0, 1 (, 2) of output element o. When every
//                             input has the output's element count nothing
//                             broadcasts and each is o (a test on literals in
//                             the static build, on shape_info dims in the
//                             shape-agnostic one); else o is split once
//   FLOAT_ACC                 a float accumulator: double where the device has fp64
//   work_group_sum(part, v)   the sum of every work-item's v over a 1-D work-group
//                             (a power of two in size), through __local FLOAT_ACC
//                             part[get_local_size(0)]; every work-item gets it
//   udiv_rem(a, b, &r)        a / b and a % b (r), in 32 bits when both fit:
//                             GPUs divide 64-bit integers in software
//   strided_merge(d, s, &l, &ls)
//                             a walk over 8 right-aligned dims d with element
//                             strides s (out[o] = in[base + sum c_j * s_j]) with
//                             the dims that continue each other merged; the
//                             innermost merged dim goes to l (extent) and ls
//                             (stride), the others stay in d / s (ones between)
//   strided_row_offset(d, s, r)
//                             the input offset of row r of such a walk
//   strided_copy(in, out, n, base, d, s)
//                             (when the op defines COPY_ELEM_T) the walk's n
//                             elements, a grid-stride loop over 4-element
//                             vectors: vector loads and stores where the rows
//                             allow, else element by element
//   HAS_FUSED_OPS, FUSED_OPS_ARGS, FUSED_OPS_PASS, FUSED_OPS
//                             empty defaults when the impl adds no fused post-ops
//                             (dynrt/ocl_fused_ops.hpp)
#define KERNEL(name) __kernel void name

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#ifndef IN_F16
#define IN_F16 DATA_F16
#endif
#ifndef OUT_F16
#define OUT_F16 DATA_F16
#endif

#if IN_F16
#define LOAD(p, i) vload_half((i), (p))
#define LOAD4(T, p, i) vload_half4((i), (p))
#else
#define LOAD(p, i) ((p)[(i)])
#define LOAD4(T, p, i) (((__global const CAT(T, 4)*)(p))[(i)])
#endif
#if OUT_F16
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define STORE4(T, p, i, v) vstore_half4_rte((v), (i), (p))
#else
#define STORE(p, i, v) ((p)[(i)] = (OUTPUT0_TYPE)(v))
#define STORE4(T, p, i, v) (((__global CAT(T, 4)*)(p))[(i)] = (v))
#endif

// Numpy broadcasting over 8 right-aligned dims. With literal dims (the static
// build) the loops unroll and the divisions are by constants.
inline void bcast_split(ulong* c, ulong o, ulong d0, ulong d1, ulong d2, ulong d3, ulong d4, ulong d5, ulong d6,
                        ulong d7) {
    const ulong d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
    for (int j = 7; j >= 0; --j) {
        c[j] = o % d[j];
        o /= d[j];
    }
}

inline ulong bcast_offset(const ulong* c, ulong d0, ulong d1, ulong d2, ulong d3, ulong d4, ulong d5, ulong d6,
                          ulong d7) {
    const ulong d[8] = {d0, d1, d2, d3, d4, d5, d6, d7};
    ulong offset = 0, stride = 1;
    for (int j = 7; j >= 0; --j) {
        if (d[j] != 1) offset += c[j] * stride;
        stride *= d[j];
    }
    return offset;
}

#define BCAST_DIMS_(t)                                                                            \
    (ulong)(t##_DIM0), (ulong)(t##_DIM1), (ulong)(t##_DIM2), (ulong)(t##_DIM3), (ulong)(t##_DIM4), \
        (ulong)(t##_DIM5), (ulong)(t##_DIM6), (ulong)(t##_DIM7)
#define BCAST_SAME(i) ((ulong)(INPUT##i##_LENGTH) == (ulong)(OUTPUT0_LENGTH))
#define BCAST_SPLIT(c, o) \
    ulong c[8];           \
    bcast_split(c, (o), BCAST_DIMS_(OUTPUT0))
#define BCAST_OFFSET(c, i) bcast_offset(c, BCAST_DIMS_(INPUT##i))
// Bitwise &: in the static build the tests are constants.
#define BCAST_INDEX2(o, i0, i1)                                           \
    ulong i0 = (o), i1 = (o);                                             \
    if (!(BCAST_SAME(0) & BCAST_SAME(1))) {                               \
        BCAST_SPLIT(bcast_c_, (o));                                       \
        i0 = BCAST_OFFSET(bcast_c_, 0), i1 = BCAST_OFFSET(bcast_c_, 1); }
#define BCAST_INDEX3(o, i0, i1, i2)                                                                       \
    ulong i0 = (o), i1 = (o), i2 = (o);                                                                   \
    if (!(BCAST_SAME(0) & BCAST_SAME(1) & BCAST_SAME(2))) {                                               \
        BCAST_SPLIT(bcast_c_, (o));                                                                       \
        i0 = BCAST_OFFSET(bcast_c_, 0), i1 = BCAST_OFFSET(bcast_c_, 1), i2 = BCAST_OFFSET(bcast_c_, 2); }

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define FLOAT_ACC double
#else
#define FLOAT_ACC float
#endif

#ifndef FUSED_OPS_ARGS
#define HAS_FUSED_OPS 0
#define FUSED_OPS_ARGS
#define FUSED_OPS_PASS
#define FUSED_OPS
#endif

// Sum of `v` over the work-group; `part` holds get_local_size(0) accumulators.
inline FLOAT_ACC work_group_sum(__local FLOAT_ACC* part, FLOAT_ACC v) {
    const uint lid = get_local_id(0);
    part[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] += part[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const FLOAT_ACC total = part[0];
    barrier(CLK_LOCAL_MEM_FENCE);   // part is reused by the next call
    return total;
}

inline ulong udiv_rem(ulong a, ulong b, ulong* rem) {
    if (((a | b) >> 32) == 0) {
        const uint q = (uint)a / (uint)b;
        *rem = (uint)a - q * (uint)b;
        return q;
    }
    const ulong q = a / b;
    *rem = a - q * b;
    return q;
}

// Every index is a constant once the loops unroll, so d and s stay in
// registers. A dim moves outward over size-1 slots and merges with the next
// live dim when that one's stride is its extent times its stride.
inline void strided_merge(ulong* d, long* s, ulong* inner, long* inner_stride) {
    for (int j = 7; j > 0; --j) {
        if (d[j] == 1) continue;
        if (d[j - 1] == 1 || s[j - 1] == s[j] * (long)d[j]) {
            d[j - 1] *= d[j];
            s[j - 1] = s[j];
            d[j] = 1;
        }
    }
    *inner = 1;
    *inner_stride = 0;
    bool found = false;
    for (int j = 7; j >= 0; --j) {
        if (!found && d[j] != 1) {
            *inner = d[j];
            *inner_stride = s[j];
            d[j] = 1;
            found = true;
        }
    }
}

inline long strided_row_offset(const ulong* d, const long* s, ulong r) {
    long offset = 0;
    for (int j = 7; j >= 0; --j) {
        if (d[j] == 1) continue;
        ulong c;
        r = udiv_rem(r, d[j], &c);
        offset += (long)c * s[j];
    }
    return offset;
}

#ifdef COPY_ELEM_T
// Rows of `inner` elements: whole vectors when every row starts 4-aligned on
// both sides and the row is contiguous; a broadcast row (stride 0) repeats
// one element.
inline void strided_copy(__global const COPY_ELEM_T* in, __global COPY_ELEM_T* out, ulong n, long base, ulong* d,
                         long* s) {
    ulong inner;
    long inner_stride;
    strided_merge(d, s, &inner, &inner_stride);
    bool aligned = inner_stride == 1 && base % 4 == 0;
    for (int j = 0; j < 8; ++j) aligned = aligned && (d[j] == 1 || s[j] % 4 == 0);
    aligned = inner % 4 == 0 && (aligned || inner_stride == 0);
    const ulong n4 = (n + 3) / 4, gs = get_global_size(0);
    for (ulong v = get_global_id(0); v < n4; v += gs) {
        ulong col;
        ulong row = udiv_rem(v * 4, inner, &col);
        long from = base + strided_row_offset(d, s, row) + (long)col * inner_stride;
        if (aligned) {
            ((__global CAT(COPY_ELEM_T, 4)*)out)[v] =
                inner_stride ? ((__global const CAT(COPY_ELEM_T, 4)*)in)[from / 4] : (CAT(COPY_ELEM_T, 4))(in[from]);
            continue;
        }
        for (ulong o = v * 4; o < v * 4 + 4 && o < n; ++o) {
            out[o] = in[from];
            from += inner_stride;
            if (++col == inner) {
                col = 0;
                from = base + strided_row_offset(d, s, ++row);
            }
        }
    }
}
#endif
