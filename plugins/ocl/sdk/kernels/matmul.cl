// The matrix-product kernel family of the OpenCL op SDK (OpenCL C 1.2, f32),
// used by gemm and fully_connected (dynrt/ocl_matmul.hpp):
//   y[b, m, n] = ALPHA * sum_k op(a)[b, m, k] * op(b)[b, k, n] + BETA * c[b, m, n]
// The host picks the kernel by M (the SDK's ocl_matmul.cpp):
//   - M <= 16 ("skinny", decode shapes): matmul_skinny_<MM>, MM the row
//     bucket. A work-group owns a block of output columns; its work-items split
//     K into strided slices, each keeps MM partial sums (per column, or per
//     float4 of columns when b is [K, N]) in registers, and the slices are
//     summed in local memory. With b [N, K], a not transposed and K a
//     multiple of 4, the slices read a and b as float4. The weights are read
//     once, which is what bounds these shapes. The shape-agnostic build
//     holds the buckets 1, 2, 4, 8 and 16 (same program, one entry point
//     each); the static build one for its M.
//   - otherwise ("tiled"): a work-group of WG_N x WG_M work-items computes a
//     TM x TN tile of y (TM = WG_M * RM, TN = WG_N * RN), staging TK-deep slabs
//     of op(a) and op(b) in local memory; each work-item accumulates an RM x RN
//     register block. Tails are handled by zero-filling the slabs and by
//     bounds-checked stores.
// Entry points rather than one kernel with a branch on M: no barrier sits
// under a condition, the row loops have constant trip counts, and a static impl
// runs only the path its M needs.
//
// JIT constants besides the INPUTk_/OUTPUT0_ dims: FC (fully_connected: every
// leading dim of input 0 is a row, weights [N, K], no batch), TA, TB, ALPHA,
// BETA, WG_M, WG_N, RM, RN, TK, LDA, LDB, SK_MAX_M (largest bucket compiled:
// 16 dynamic, M static), SKINNY_PAIRS (K not a literal), SK_WG, SK_COLS,
// SK_SLICES (b [N, K]), SKN_COLS4, SKN_SLICES (b [K, N]), and the fused
// post-ops' FUSED_OPS_ARGS, FUSED_OPS_PASS and FUSED_OPS
// (dynrt/ocl_fused_ops.hpp). In the static build every dim is a
// literal, so loops get constant trip counts; in the dynamic build the dims are
// read from shape_info and the same body runs.
#define HAS_C (INPUTS_COUNT > 2)

// Element (m, k) of op(a) and (k, n) of op(b); the pointers are already offset
// to the batch.
#if TA
#define A_AT(p, m, k, M, K) (p)[(k) * (M) + (m)]
#else
#define A_AT(p, m, k, M, K) (p)[(m) * (K) + (k)]
#endif
#if TB
#define B_AT(p, k, n, K, N) (p)[(n) * (K) + (k)]
#else
#define B_AT(p, k, n, K, N) (p)[(k) * (N) + (n)]
#endif

// Stores output element `idx` of the current batch (row-major over its M x N
// product, `y_off` the batch's first element). A padded output (a view into a
// larger buffer, e.g. the new rows of an in-place concat) is addressed through
// OUTPUT0_PHYS; `y_padded` is OUTPUT0_PADDED read once per work-item (a
// literal 0 in static builds of dense outputs, where the branch compiles out).
// Fused post-ops (dynrt/ocl_fused_ops.hpp) run on the value first: `fused_oi`
// is the element's row-major index over the logical output dims (y_off + idx
// for gemm's batches; every leading dim is a row for fully_connected, where
// y_off is 0).
#define STORE_Y(idx, v)                                             \
    do {                                                            \
        const int yi_ = (idx);                                      \
        float fused_v = (v);                                        \
        const ulong fused_oi = (ulong)(y_off + yi_);                \
        (void)fused_oi;                                             \
        FUSED_OPS                                                   \
        if (y_padded) y[OUTPUT0_PHYS(y_off + yi_)] = fused_v;       \
        else y[y_off + yi_] = fused_v;                              \
    } while (0)

inline float finish_value(float acc, __global const float* c, int m, int n, int c_sm, int c_sn) {
    float v = ALPHA * acc;
#if HAS_C
    v += BETA * c[m * c_sm + n * c_sn];
#endif
    return v;
}

inline void tiled(OPTIONAL_SHAPE_INFO_ARG __global const float* a, __global const float* b, __global const float* c,
                  __global float* y, int y_off, bool y_padded FUSED_OPS_ARGS,
                  int M, int N, int K, int c_sm, int c_sn, __local float* As, __local float* Bs) {
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * WG_N + tx;
    const int m0 = get_group_id(1) * (WG_M * RM), n0 = get_group_id(0) * (WG_N * RN);
    float acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TK) {
        // Slab of op(a): TK x TM, stored k-major (As[k * LDA + m]); the read
        // order follows the contiguous dim of a in global memory.
#pragma unroll
        for (int r = 0; r < TK * RM / WG_N; ++r) {
            const int l = lid + r * (WG_M * WG_N);
#if TA
            const int mm = l % (WG_M * RM), kk = l / (WG_M * RM);
#else
            const int kk = l % TK, mm = l / TK;
#endif
            const int gm = m0 + mm, gk = k0 + kk;
            As[kk * LDA + mm] = (gm < M && gk < K) ? A_AT(a, gm, gk, M, K) : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < TK * RN / WG_M; ++r) {
            const int l = lid + r * (WG_M * WG_N);
#if TB
            const int kk = l % TK, nn = l / TK;
#else
            const int nn = l % (WG_N * RN), kk = l / (WG_N * RN);
#endif
            const int gn = n0 + nn, gk = k0 + kk;
            Bs[kk * LDB + nn] = (gn < N && gk < K) ? B_AT(b, gk, gn, K, N) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            float ar[RM], br[RN];
#pragma unroll
            for (int q = 0; q < RM / 4; ++q) {
                const float4 v = vload4(q, As + kk * LDA + ty * RM);
                ar[4 * q] = v.s0, ar[4 * q + 1] = v.s1, ar[4 * q + 2] = v.s2, ar[4 * q + 3] = v.s3;
            }
#pragma unroll
            for (int q = 0; q < RN / 4; ++q) {
                const float4 v = vload4(q, Bs + kk * LDB + tx * RN);
                br[4 * q] = v.s0, br[4 * q + 1] = v.s1, br[4 * q + 2] = v.s2, br[4 * q + 3] = v.s3;
            }
#pragma unroll
            for (int i = 0; i < RM; ++i)
#pragma unroll
                for (int j = 0; j < RN; ++j) acc[i][j] = mad(ar[i], br[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#pragma unroll
    for (int i = 0; i < RM; ++i) {
        const int m = m0 + ty * RM + i;
        if (m >= M) break;
#pragma unroll
        for (int j = 0; j < RN; ++j) {
            const int n = n0 + tx * RN + j;
            if (n < N) STORE_Y(m * N + n, finish_value(acc[i][j], c, m, n, c_sm, c_sn));
        }
    }
}

// The skinny product for up to MM rows (MM a literal at every call: the
// entry points below pass their bucket, so after inlining the row loops have
// constant trip counts and acc[] lives in registers). Rows m >= M of the bucket
// read row M - 1 again instead of testing m < M inside the K loop (no
// predication there); their sums are never stored.
// Row m of the bucket's K loop: with `full` (M == MM; a literal at each call,
// so the loops below exist in both forms) row m itself, at a constant offset
// from the first; otherwise row min(m, M - 1). The shape-agnostic build takes
// the first form whenever M is a bucket size (1, 2, 4, 8, 16: the usual decode
// batches) and gets the static build's addressing there.
#define SKINNY_ROW(m) (full ? (m) : min((m), M - 1))

#if TB
#if !TA
// The float4 loop over K of b [N, K] (K a multiple of 4). With SKINNY_PAIRS
// (the host sets it when K is not a literal) each slice takes two adjacent
// float4s of K per step, so one row address serves two loads of a: with a
// runtime row stride the address arithmetic of the MM rows, not the loads,
// bounds the loop (H100, fully_connected with every dim dynamic: 0.68x of
// static at M = 8 with one float4, 0.97x with two). With K a literal the rows
// sit at constant offsets and one float4 per step is faster (const-weight
// M = 16: 8671 against 6025 GFLOP/s). An odd last float4 is slice 0's.
inline void skinny_nk4(__global const float4* a4, __global const float4* b4, int K4, int M, int s, float* acc,
                       const int MM, const bool full) {
#if !SKINNY_PAIRS
#pragma unroll 2
    for (int k4 = s; k4 < K4; k4 += SK_SLICES) {
        const float4 bv = b4[k4];
#pragma unroll
        for (int m = 0; m < MM; ++m) acc[m] += dot(a4[SKINNY_ROW(m) * K4 + k4], bv);
    }
#else
    const int pairs = K4 >> 1;
#pragma unroll 2
    for (int p = s; p < pairs; p += SK_SLICES) {
        const int k4 = 2 * p;
        const float4 b0 = b4[k4], b1 = b4[k4 + 1];
#pragma unroll
        for (int m = 0; m < MM; ++m) {
            __global const float4* r = a4 + SKINNY_ROW(m) * K4 + k4;
            acc[m] += dot(r[0], b0) + dot(r[1], b1);
        }
    }
    if ((K4 & 1) && s == 0) {
        const float4 bv = b4[K4 - 1];
#pragma unroll
        for (int m = 0; m < MM; ++m) acc[m] += dot(a4[SKINNY_ROW(m) * K4 + K4 - 1], bv);
    }
#endif
}
#endif

// b is [N, K] (the fully_connected weights): consecutive work-items walk K of
// one column (coalesced), SK_SLICES slices per column, SK_COLS columns per
// work-group; the slices are summed in local memory.
inline void skinny(OPTIONAL_SHAPE_INFO_ARG __global const float* a, __global const float* b, __global const float* c,
                   __global float* y, int y_off, bool y_padded FUSED_OPS_ARGS,
                   int M, int N, int K, int c_sm, int c_sn, __local float* red, const int MM) {
    const int lid = get_local_id(0);
    const int s = lid % SK_SLICES, col = lid / SK_SLICES;
    const int n = get_group_id(0) * SK_COLS + col;
    float acc[SK_MAX_M];
    int arow[SK_MAX_M];
#pragma unroll
    for (int m = 0; m < MM; ++m) {
        acc[m] = 0.0f;
        arow[m] = min(m, M - 1);
    }
    if (n < N) {
#if !TA
        if ((K & 3) == 0) {
            // K a multiple of 4: the rows of a and of b start 16-byte aligned
            // (buffers and sub-buffers are), so each work-item reads float4s,
            // a quarter of the load instructions; consecutive slices still
            // read consecutive float4s of the column (coalesced).
            const int K4 = K >> 2;
            __global const float4* a4 = (__global const float4*)a;
            __global const float4* b4 = (__global const float4*)b + n * K4;
            if (M == MM) skinny_nk4(a4, b4, K4, M, s, acc, MM, true);
            else skinny_nk4(a4, b4, K4, M, s, acc, MM, false);
        } else
#endif
        {
#pragma unroll 4
            for (int k = s; k < K; k += SK_SLICES) {
                const float bv = B_AT(b, k, n, K, N);
#pragma unroll
                for (int m = 0; m < MM; ++m) acc[m] = mad(A_AT(a, arow[m], k, M, K), bv, acc[m]);
            }
        }
    }
#pragma unroll
    for (int m = 0; m < MM; ++m) red[m * SK_WG + lid] = acc[m];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Tree sum over the slices of each column (adjacent work-items).
    for (int st = SK_SLICES / 2; st > 0; st >>= 1) {
        if (s < st)
#pragma unroll
            for (int m = 0; m < MM; ++m) red[m * SK_WG + lid] += red[m * SK_WG + lid + st];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (s == 0 && n < N)
#pragma unroll
        for (int m = 0; m < MM; ++m)
            if (m < M) STORE_Y(m * N + n, finish_value(red[m * SK_WG + lid], c, m, n, c_sm, c_sn));
}
#else
// b is [K, N]: each work-item owns 4 adjacent columns (one float4 of a row of
// b), consecutive work-items take consecutive float4s along N (coalesced,
// SKN_COLS4 of them per work-group), and SKN_SLICES slices split K. Rows of b
// are read as float4 through an aligned pointer when N is a multiple of 4
// (every row then starts 16-byte aligned), else with vload4 and a bounded
// tail. The slices are summed in local memory, up to 4 rows at a time so
// that the float4 buffer stays small.
inline float4 load_b4(__global const float* b, int k, int n, int N, bool aligned) {
    if (aligned) return ((__global const float4*)b)[(k * N + n) >> 2];
    __global const float* r = b + k * N + n;
    if (n + 4 <= N) return vload4(0, r);
    return (float4)(r[0], n + 1 < N ? r[1] : 0.0f, n + 2 < N ? r[2] : 0.0f, 0.0f);
}

// The K loop of b [K, N] with N a multiple of 4 (aligned float4 rows).
// The row of b advances by a pointer step rather than k * N per load (N is
// not a literal in the shape-agnostic build).
inline void skinny_kn4(__global const float* a, __global const float* b, int n, int N, int K, int M, int s,
                       float4* acc, const int MM, const bool full) {
    const int N4 = N >> 2;
    const int step = SKN_SLICES * N4;
    __global const float4* bp = (__global const float4*)b + s * N4 + (n >> 2);
#pragma unroll 4
    for (int k = s; k < K; k += SKN_SLICES, bp += step) {
        const float4 bv = *bp;
#pragma unroll
        for (int m = 0; m < MM; ++m) acc[m] = mad((float4)(A_AT(a, SKINNY_ROW(m), k, M, K)), bv, acc[m]);
    }
}

inline void skinny(OPTIONAL_SHAPE_INFO_ARG __global const float* a, __global const float* b, __global const float* c,
                   __global float* y, int y_off, bool y_padded FUSED_OPS_ARGS,
                   int M, int N, int K, int c_sm, int c_sn, __local float4* red, const int MM) {
    const int lid = get_local_id(0);
    const int c4 = lid % SKN_COLS4, s = lid / SKN_COLS4;
    const int n = (get_group_id(0) * SKN_COLS4 + c4) * 4;
    const int RR = MM < 4 ? MM : 4;   // rows per reduction round (red holds RR x SK_WG float4)
    float4 acc[SK_MAX_M];
    int arow[SK_MAX_M];
#pragma unroll
    for (int m = 0; m < MM; ++m) {
        acc[m] = (float4)(0.0f);
        arow[m] = min(m, M - 1);
    }
    if (n < N) {
        const bool aligned = (N & 3) == 0;
        if (aligned) {
            if (M == MM) skinny_kn4(a, b, n, N, K, M, s, acc, MM, true);
            else skinny_kn4(a, b, n, N, K, M, s, acc, MM, false);
        } else {
            for (int k = s; k < K; k += SKN_SLICES) {
                const float4 bv = load_b4(b, k, n, N, false);
#pragma unroll
                for (int m = 0; m < MM; ++m) acc[m] = mad((float4)(A_AT(a, arow[m], k, M, K)), bv, acc[m]);
            }
        }
    }
#pragma unroll
    for (int m0 = 0; m0 < MM; m0 += RR) {
#pragma unroll
        for (int r = 0; r < RR; ++r)
            if (m0 + r < MM) red[r * SK_WG + lid] = acc[m0 + r];
        barrier(CLK_LOCAL_MEM_FENCE);
        // Tree sum over the slices of each float4 column (stride SKN_COLS4).
        for (int st = SKN_SLICES / 2; st > 0; st >>= 1) {
            if (s < st)
#pragma unroll
                for (int r = 0; r < RR; ++r)
                    if (m0 + r < MM) red[r * SK_WG + lid] += red[r * SK_WG + lid + st * SKN_COLS4];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (s == 0 && n < N) {
#pragma unroll
            for (int r = 0; r < RR; ++r) {
                const int m = m0 + r;
                if (m < MM && m < M) {
                    const float4 v = red[r * SK_WG + lid];
                    STORE_Y(m * N + n, finish_value(v.s0, c, m, n, c_sm, c_sn));
                    if (n + 1 < N) STORE_Y(m * N + n + 1, finish_value(v.s1, c, m, n + 1, c_sm, c_sn));
                    if (n + 2 < N) STORE_Y(m * N + n + 2, finish_value(v.s2, c, m, n + 2, c_sm, c_sn));
                    if (n + 3 < N) STORE_Y(m * N + n + 3, finish_value(v.s3, c, m, n + 3, c_sm, c_sn));
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);   // red is reused by the next rows
    }
}
#endif

// Sizes and batch offsets of one product, from the JIT dims (literals or
// shape_info reads).
typedef struct {
    int M, N, K;
    int a_off, b_off, c_off, y_off;
    int c_sm, c_sn;   // c strides over rows and columns (0 where c broadcasts)
} problem_t;

inline problem_t problem(OPTIONAL_SHAPE_INFO_ARG int batch) {
    problem_t p;
#if FC
    // x [..., K] with every leading dim a row; w [N, K]; optional bias [N].
    p.K = INPUT0_DIM7;
    p.M = INPUT0_DIM0 * INPUT0_DIM1 * INPUT0_DIM2 * INPUT0_DIM3 * INPUT0_DIM4 * INPUT0_DIM5 * INPUT0_DIM6;
    p.N = INPUT1_DIM6;
    p.a_off = p.b_off = p.c_off = p.y_off = 0;
#else
    p.M = TA ? INPUT0_DIM7 : INPUT0_DIM6;
    p.K = TA ? INPUT0_DIM6 : INPUT0_DIM7;
    p.N = TB ? INPUT1_DIM6 : INPUT1_DIM7;
    // The batch index walks the output's leading dims; a, b and c broadcast
    // where their (right-aligned) dim is 1.
    int rem = batch;
    p.y_off = batch * p.M * p.N;
    p.a_off = p.b_off = p.c_off = 0;
    int sa = INPUT0_DIM6 * INPUT0_DIM7, sb = INPUT1_DIM6 * INPUT1_DIM7;
#if HAS_C
    int sc = INPUT2_DIM6 * INPUT2_DIM7;
#define C_STEP(d)                                 \
    p.c_off += INPUT2_DIM##d == 1 ? 0 : i * sc;   \
    sc *= INPUT2_DIM##d;
#else
#define C_STEP(d)
#endif
#define BATCH_STEP(d)                                 \
    {                                                 \
        const int od = OUTPUT0_DIM##d;                \
        const int i = rem % od;                       \
        rem /= od;                                    \
        p.a_off += INPUT0_DIM##d == 1 ? 0 : i * sa;   \
        sa *= INPUT0_DIM##d;                          \
        p.b_off += INPUT1_DIM##d == 1 ? 0 : i * sb;   \
        sb *= INPUT1_DIM##d;                          \
        C_STEP(d)                                     \
    }
    BATCH_STEP(5) BATCH_STEP(4) BATCH_STEP(3) BATCH_STEP(2) BATCH_STEP(1) BATCH_STEP(0)
#endif
#if HAS_C
    p.c_sm = INPUT2_DIM6 == 1 ? 0 : INPUT2_DIM7;
    p.c_sn = INPUT2_DIM7 == 1 ? 0 : 1;
#else
    p.c_sm = p.c_sn = 0;
#endif
    return p;
}

#if HAS_C
#define C_PTR(p) (input2 + (p).c_off)
#define C_ARG __global const float* input2,
#else
#define C_PTR(p) ((__global const float*)0)
#define C_ARG
#endif

// Skinny entry points, one per M bucket: matmul_skinny_<MM> handles
// M <= MM rows. The shape-agnostic build has all of {1, 2, 4, 8, 16} in one
// program and the host picks the smallest bucket >= M on every run; the
// static build has only matmul_skinny_<M> for its exact M (SK_MAX_M = M).
// Work: dim 0 = column blocks (work-groups of SK_WG), dim 1 = batch.
#if TB
#define SKINNY_RED(MM) __local float red[(MM) * SK_WG];
#else
#define SKINNY_RED(MM) __local float4 red[((MM) < 4 ? (MM) : 4) * SK_WG];
#endif
#define SKINNY_KERNEL_(MM)                                                                                    \
    KERNEL(matmul_skinny_##MM)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0,                        \
                               __global const float* input1, C_ARG __global float* output0 FUSED_OPS_ARGS) { \
        const problem_t p = problem(OPTIONAL_SHAPE_INFO_TENSOR (int)get_group_id(1));                        \
        SKINNY_RED(MM)                                                                                        \
        skinny(OPTIONAL_SHAPE_INFO_TENSOR input0 + p.a_off, input1 + p.b_off, C_PTR(p), output0, p.y_off,     \
               OUTPUT0_PADDED FUSED_OPS_PASS, p.M, p.N, p.K, p.c_sm, p.c_sn, red, MM);                          \
    }
#define SKINNY_KERNEL(MM) SKINNY_KERNEL_(MM)

#if IS_DYNAMIC
SKINNY_KERNEL(1)
SKINNY_KERNEL(2)
SKINNY_KERNEL(4)
SKINNY_KERNEL(8)
SKINNY_KERNEL(16)
#else
SKINNY_KERNEL(SK_MAX_M)
#endif

// Work: dims 0/1 = (WG_N, WG_M) work-items per TN x TM tile, dim 2 = batch.
KERNEL(matmul_tiled)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global const float* input1, C_ARG
                     __global float* output0 FUSED_OPS_ARGS) {
    const problem_t p = problem(OPTIONAL_SHAPE_INFO_TENSOR (int)get_group_id(2));
    __local float As[TK * LDA];
    __local float Bs[TK * LDB];
    tiled(OPTIONAL_SHAPE_INFO_TENSOR input0 + p.a_off, input1 + p.b_off, C_PTR(p), output0, p.y_off,
          OUTPUT0_PADDED FUSED_OPS_PASS, p.M, p.N, p.K, p.c_sm, p.c_sn, As, Bs);
}
