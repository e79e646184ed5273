// 2-D grouped transposed convolution over NCHW (OpenCL C 1.2, f32).
// One work-item per output element, gather form: output row oh takes input
// row ih from kernel tap kh when oh + PAD_H - kh * DILATION_H == ih * STRIDE_H
// (same for columns). Weights are [C, O/groups, kH, kW], in `plain` or in
// `osv16` (dim 0 in slices of 16, innermost; WEIGHTS_BLOCK 16), the format the
// flow reordered them into. Strides, pads, dilations and groups are JIT
// constants in both builds; the dims are literals in the static build and
// shape_info reads in the dynamic one.
KERNEL(deconvolution)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global const float* input1,
#if INPUTS_COUNT > 2
                      __global const float* input2,
#endif
                      __global float* output0 FUSED_OPS_ARGS) {
    // Rank-4 tensors sit in dims 4..7 of the right-aligned JIT dims.
    const int N = INPUT0_DIM4, C = INPUT0_DIM5, H = INPUT0_DIM6, W = INPUT0_DIM7;
    const int OG = INPUT1_DIM5, KH = INPUT1_DIM6, KW = INPUT1_DIM7;
    const int O = OUTPUT0_DIM5, OH = OUTPUT0_DIM6, OW = OUTPUT0_DIM7;
    const int ow = (int)get_global_id(0);
    const int oh = (int)get_global_id(1);
    const int z = (int)get_global_id(2);
    if (ow >= OW || oh >= OH || z >= N * O) return;
    const int oc = z % O, n = z / O;
    const int grp = oc / OG, ocg = oc % OG;
    const int CG = C / GROUPS;
    const int inner = OG * KH * KW;   // weights elements per input channel

#if INPUTS_COUNT > 2
    float acc = input2[oc];
#else
    float acc = 0.0f;
#endif
    for (int ci = 0; ci < CG; ++ci) {
        const int ic = grp * CG + ci;
        __global const float* xp = input0 + (n * C + ic) * H * W;
        for (int kh = 0; kh < KH; ++kh) {
            const int th = oh + PAD_H - kh * DILATION_H;
            if (th < 0 || th % STRIDE_H != 0) continue;
            const int ih = th / STRIDE_H;
            if (ih >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int tw = ow + PAD_W - kw * DILATION_W;
                if (tw < 0 || tw % STRIDE_W != 0) continue;
                const int iw = tw / STRIDE_W;
                if (iw >= W) continue;
                const int r = (ocg * KH + kh) * KW + kw;
                const int widx = ((ic / WEIGHTS_BLOCK) * inner + r) * WEIGHTS_BLOCK + ic % WEIGHTS_BLOCK;
                acc = mad(xp[ih * W + iw], input1[widx], acc);
            }
        }
    }
    float fused_v = acc;
    const ulong fused_oi = (((ulong)n * O + oc) * OH + oh) * OW + ow;
    FUSED_OPS
    output0[fused_oi] = fused_v;
}
