// Grouped transposed convolution over NCDHW, NCHW or NCW (OpenCL C 1.2, f32).
// Every rank is walked as three spatial axes (d, h, w): the host maps the
// axes a lower rank lacks to extent 1 (IN_*, OUT_*, K_* "1", STRIDE_*,
// DILATION_* 1, PAD_* 0), so the loops over them fold away.
// One work-item per output element, gather form: output row oh takes input
// row ih from kernel tap kh when oh + PAD_H - kh * DILATION_H == ih * STRIDE_H
// (same per axis). Weights are [C, O/groups, k...], in `plain` or in `osv16`
// (dim 0 in slices of 16, innermost; WEIGHTS_BLOCK 16), the format the flow
// reordered them into. Strides, dilations and groups are JIT constants in
// both builds; PAD_* too, or for pads derived from the extents (output_shape,
// auto_pad same_*) an expression of the dims. The dims are literals in the
// static build and shape_info reads in the dynamic one.

// The begin pad of an output of OUT rows: the natural extent minus OUT, split
// with the odd row at the begin when LOWER; a negative total (a longer output)
// adds the rows at the end. deconvolution_op.cpp computes the same on the host.
#define DERIVED_PAD_TOTAL(IN, OUT, K, S, D, OP) (((IN) - 1) * (S) + ((K) - 1) * (D) + 1 + (OP) - (OUT))
#define DERIVED_PAD_BEGIN(IN, OUT, K, S, D, OP, LOWER)                                                        \
    (DERIVED_PAD_TOTAL(IN, OUT, K, S, D, OP) <= 0 ? 0                                                        \
     : (LOWER) ? DERIVED_PAD_TOTAL(IN, OUT, K, S, D, OP) - DERIVED_PAD_TOTAL(IN, OUT, K, S, D, OP) / 2       \
               : DERIVED_PAD_TOTAL(IN, OUT, K, S, D, OP) / 2)

// The input index that output index `o` reads through tap `k`, or -1.
#define DECONV_TAP(o, k, PAD, S, D, IN) deconv_tap((o) + (PAD) - (k) * (D), (S), (IN))
inline int deconv_tap(int t, int s, int in) {
    if (t < 0 || t % s != 0) return -1;
    const int i = t / s;
    return i < in ? i : -1;
}

KERNEL(deconvolution)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global const float* input1,
#if INPUTS_COUNT > 2
                      __global const float* input2,
#endif
                      __global float* output0 FUSED_OPS_ARGS) {
    const int N = N_DIM, C = C_DIM, ID = IN_D, H = IN_H, W = IN_W;
    const int OG = OG_DIM, KD = K_D, KH = K_H, KW = K_W;
    const int O = O_DIM, OD = OUT_D, OH = OUT_H, OW = OUT_W;
    const int pad_d = PAD_D, pad_h = PAD_H, pad_w = PAD_W;
    const int ow = (int)get_global_id(0);
    const int oh = (int)get_global_id(1);
    const int z = (int)get_global_id(2);
    if (ow >= OW || oh >= OH || z >= N * O * OD) return;
    const int od = z % OD, no = z / OD;
    const int oc = no % O, n = no / O;
    const int grp = oc / OG, ocg = oc % OG;
    const int CG = C / GROUPS;
    const int inner = OG * KD * KH * KW;   // weights elements per input channel

#if INPUTS_COUNT > 2
    float acc = input2[oc];
#else
    float acc = 0.0f;
#endif
    for (int ci = 0; ci < CG; ++ci) {
        const int ic = grp * CG + ci;
        __global const float* xp = input0 + (n * C + ic) * ID * H * W;
        __global const float* wb = input1 + (ic / WEIGHTS_BLOCK) * inner * WEIGHTS_BLOCK + ic % WEIGHTS_BLOCK;
        for (int kd = 0; kd < KD; ++kd) {
            const int id = DECONV_TAP(od, kd, pad_d, STRIDE_D, DILATION_D, ID);
            if (id < 0) continue;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = DECONV_TAP(oh, kh, pad_h, STRIDE_H, DILATION_H, H);
                if (ih < 0) continue;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = DECONV_TAP(ow, kw, pad_w, STRIDE_W, DILATION_W, W);
                    if (iw < 0) continue;
                    const int r = ((ocg * KD + kd) * KH + kh) * KW + kw;
                    acc = mad(xp[(id * H + ih) * W + iw], wb[r * WEIGHTS_BLOCK], acc);
                }
            }
        }
    }
    float fused_v = acc;
    const ulong fused_oi = ((((ulong)n * O + oc) * OD + od) * OH + oh) * OW + ow;
    FUSED_OPS
    output0[fused_oi] = fused_v;
}
