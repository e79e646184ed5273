// sdpa on OpenCL: flash attention, one work-group per (batch, query head,
// block of BR query rows).
//
// The group loads its query rows (scaled) into local memory, then walks the
// keys in tiles of `bc`: the tile's k and v rows go through local memory
// (each loaded once for the BR rows), the BR x bc scores are computed by the
// whole group, one work-item per row updates the row's running maximum m,
// running sum l of exp(score - m) and turns the scores into weights (scaling
// what was summed so far by exp(m_old - m_new) when the maximum grows: the
// online softmax), then the group adds the weighted v rows to the BR x Dv
// sums. Nothing of size [Sq, Sk] exists. Keys past the causal limit of the
// group's last row are never loaded; within a tile a key past a row's limit
// scores -inf. A row whose maximum is still -inf at the end saw no key: 0 or
// NaN (ZERO_MASKED_ROWS). Math in float; f16 data through LOAD / STORE.
//
// Dims (right-aligned JIT dims of rank-4 tensors: dims 4..7): q [B, Hq, Sq,
// D], k [B, Hk, Sk, D], v [B, Hk, Sk, Dv]; the mask's dims 4..7 broadcast to
// [B, Hq, Sq, Sk] (a dim of 1 has stride 0). Literals in the static build,
// shape_info reads in the shape-agnostic one.
//
// From the host: BR, HAS_MASK, MASK_BOOL (bool / u8: non-zero keeps the
// key), CAUSAL (0 none, 1 upper-left, 2 lower-right), ZERO_MASKED_ROWS,
// DATA_F16. Scalars: `lmem` (local floats: BR*D + bc*D + bc*DV + BR*bc +
// BR*DV + 3*BR), `scale` (of q . k) and `bc` (keys per tile).

#define DIM_HQ ((uint)(INPUT0_DIM5))
#define DIM_SQ ((uint)(INPUT0_DIM6))
#define DIM_D ((uint)(INPUT0_DIM7))
#define DIM_HK ((uint)(INPUT1_DIM5))
#define DIM_SK ((uint)(INPUT1_DIM6))
#define DIM_DV ((uint)(INPUT2_DIM7))

// The end (exclusive) of the keys query row i sees.
inline uint visible_end(uint i, uint sq, uint sk) {
#if CAUSAL == 1
    return min(sk, i + 1);
#elif CAUSAL == 2
    const uint end = i + 1 + sk;
    return end > sq ? min(sk, end - sq) : 0;
#else
    return sk;
#endif
}

// Element stride of mask dim a (4..7) over the scores: 0 where it broadcasts.
#define MASK_STRIDE(a, after) ((ulong)(INPUT3_DIM##a) == 1 ? (ulong)0 : (ulong)(after))

KERNEL(sdpa_flash)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* q, __global const INPUT1_TYPE* k,
 __global const INPUT2_TYPE* v,
#if HAS_MASK
 __global const INPUT3_TYPE* mask,
#endif
 __global OUTPUT0_TYPE* out, __local float* lmem, const float scale, const int bc_arg) {
    const uint lid = get_local_id(0), wg = get_local_size(0);
    const uint d = DIM_D, dv = DIM_DV, sq = DIM_SQ, sk = DIM_SK, bc = (uint)bc_arg;
    const uint blocks = (sq + BR - 1) / BR;
    const uint group = get_group_id(0);
    const uint bh = group / blocks, i0 = (group % blocks) * BR;
    const uint hq = DIM_HQ, hkn = DIM_HK;
    const uint b = bh / hq, h = bh % hq, hk = h / (hq / hkn);
    const uint rows = min((uint)BR, sq - i0);

    __local float* qs = lmem;             // [BR, d], scaled
    __local float* ks = qs + BR * d;      // [bc, d]
    __local float* vs = ks + bc * d;      // [bc, dv]
    __local float* ss = vs + bc * dv;     // [BR, bc]: scores, then weights
    __local float* acc = ss + BR * bc;    // [BR, dv]
    __local float* mrow = acc + BR * dv;  // [BR] running maximum
    __local float* lrow = mrow + BR;      // [BR] running sum
    __local float* crow = lrow + BR;      // [BR] this tile's rescale factor

    const ulong qbase = (((ulong)b * hq + h) * sq + i0) * d;
    const ulong kbase = ((ulong)b * hkn + hk) * sk * d;
    const ulong vbase = ((ulong)b * hkn + hk) * sk * dv;
    const ulong obase = (((ulong)b * hq + h) * sq + i0) * dv;
#if HAS_MASK
    const ulong m7 = MASK_STRIDE(7, 1), m6 = MASK_STRIDE(6, INPUT3_DIM7);
    const ulong m5 = MASK_STRIDE(5, (ulong)(INPUT3_DIM6) * INPUT3_DIM7);
    const ulong m4 = MASK_STRIDE(4, (ulong)(INPUT3_DIM5) * INPUT3_DIM6 * INPUT3_DIM7);
    const ulong mbase = b * m4 + h * m5;
#endif

    for (uint x = lid; x < BR * d; x += wg) qs[x] = x / d < rows ? (float)LOAD(q, qbase + x) * scale : 0.0f;
    for (uint x = lid; x < BR * dv; x += wg) acc[x] = 0.0f;
    for (uint r = lid; r < BR; r += wg) {
        mrow[r] = -INFINITY;
        lrow[r] = 0.0f;
    }
    const uint keys = visible_end(i0 + rows - 1, sq, sk);   // the last row sees the most
    for (uint j0 = 0; j0 < keys; j0 += bc) {
        const uint nb = min(bc, keys - j0);
        barrier(CLK_LOCAL_MEM_FENCE);   // the previous tile is used up
        for (uint x = lid; x < nb * d; x += wg) ks[x] = (float)LOAD(k, kbase + (ulong)j0 * d + x);
        for (uint x = lid; x < nb * dv; x += wg) vs[x] = (float)LOAD(v, vbase + (ulong)j0 * dv + x);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint x = lid; x < BR * bc; x += wg) {
            const uint r = x / bc, c = x % bc, i = i0 + r, j = j0 + c;
            float s = -INFINITY;
            if (r < rows && c < nb && j < visible_end(i, sq, sk)) {
                float dot = 0.0f;
                for (uint t = 0; t < d; ++t) dot += qs[r * d + t] * ks[c * d + t];
                s = dot;
#if HAS_MASK
                const ulong mi = mbase + i * m6 + j * m7;
#if MASK_BOOL
                if (mask[mi] == 0) s = -INFINITY;
#else
                s += (float)LOAD(mask, mi);
#endif
#endif
            }
            ss[x] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint r = lid; r < BR; r += wg) {
            __local float* sr = ss + r * bc;
            const float m_old = mrow[r];
            float mx = m_old;
            for (uint c = 0; c < nb; ++c) mx = fmax(mx, sr[c]);
            float corr = 1.0f;
            if (mx == -INFINITY) {   // every key so far masked: no weight
                for (uint c = 0; c < nb; ++c) sr[c] = 0.0f;
            } else {
                corr = exp(m_old - mx);   // 0 while nothing was seen
                float sum = 0.0f;
                for (uint c = 0; c < nb; ++c) {
                    const float p = exp(sr[c] - mx);
                    sr[c] = p;
                    sum += p;
                }
                lrow[r] = lrow[r] * corr + sum;
                mrow[r] = mx;
            }
            crow[r] = corr;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint x = lid; x < BR * dv; x += wg) {
            const uint r = x / dv, t = x % dv;
            __local const float* sr = ss + r * bc;
            float a = acc[x] * crow[r];
            for (uint c = 0; c < nb; ++c) a += sr[c] * vs[c * dv + t];
            acc[x] = a;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint x = lid; x < rows * dv; x += wg) {
        const uint r = x / dv;
#if ZERO_MASKED_ROWS
        const float y = mrow[r] == -INFINITY ? 0.0f : acc[x] / lrow[r];
#else
        const float y = mrow[r] == -INFINITY ? NAN : acc[x] / lrow[r];
#endif
        STORE(out, obase + x, y);
    }
}
