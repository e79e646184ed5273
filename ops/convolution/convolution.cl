// Direct 2-D grouped convolution over NCHW (OpenCL C 1.2, f32).
// One work-item computes OW_BLOCK neighbouring outputs of one row: global id 0
// walks output-width blocks, 1 the output rows, 2 the (batch, output channel)
// pairs. Strides, pads, dilations and groups are JIT constants (attributes, in
// both builds); the dims are literals in the static build, so the kernel loops
// have constant trip counts, and shape_info reads in the dynamic build. Input
// taps that fall into the padding read as zero.
KERNEL(convolution)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global const float* input1,
#if INPUTS_COUNT > 2
                    __global const float* input2,
#endif
                    __global float* output0 FUSED_OPS_ARGS) {
    // Rank-4 tensors sit in dims 4..7 of the right-aligned JIT dims.
    const int N = INPUT0_DIM4, C = INPUT0_DIM5, H = INPUT0_DIM6, W = INPUT0_DIM7;
    const int O = INPUT1_DIM4, CG = INPUT1_DIM5, KH = INPUT1_DIM6, KW = INPUT1_DIM7;
    const int OH = OUTPUT0_DIM6, OW = OUTPUT0_DIM7;
    const int ow0 = (int)get_global_id(0) * OW_BLOCK;
    const int oh = (int)get_global_id(1);
    const int z = (int)get_global_id(2);
    if (ow0 >= OW || oh >= OH || z >= N * O) return;
    const int oc = z % O, n = z / O;
    const int grp = oc / (O / GROUPS);

    float acc[OW_BLOCK];
#if INPUTS_COUNT > 2
    const float b = input2[oc];
#else
    const float b = 0.0f;
#endif
    for (int j = 0; j < OW_BLOCK; ++j) acc[j] = b;

    __global const float* wp = input1 + oc * CG * KH * KW;
    for (int ci = 0; ci < CG; ++ci) {
        __global const float* xp = input0 + (n * C + grp * CG + ci) * H * W;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = oh * STRIDE_H - PAD_H + kh * DILATION_H;
            if (ih < 0 || ih >= H) continue;
            __global const float* row = xp + ih * W;
            for (int kw = 0; kw < KW; ++kw) {
                const float wv = wp[(ci * KH + kh) * KW + kw];
#pragma unroll
                for (int j = 0; j < OW_BLOCK; ++j) {
                    const int iw = (ow0 + j) * STRIDE_W - PAD_W + kw * DILATION_W;
                    if (iw >= 0 && iw < W) acc[j] = mad(row[iw], wv, acc[j]);
                }
            }
        }
    }
    __global float* yp = output0 + ((n * O + oc) * OH + oh) * OW;
#pragma unroll
    for (int j = 0; j < OW_BLOCK; ++j) {
        if (ow0 + j >= OW) continue;
        float fused_v = acc[j];
        const ulong fused_oi = (((ulong)n * O + oc) * OH + oh) * OW + ow0 + j;
        FUSED_OPS
        yp[ow0 + j] = fused_v;
    }
}
