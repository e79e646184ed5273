// Direct grouped convolution over NCDHW, NCHW or NCW (OpenCL C 1.2, f32).
// Every rank is walked as three spatial axes (d, h, w): the host maps the
// axes a lower rank lacks to extent 1 (IN_*, OUT_*, K_* are "1", STRIDE_*,
// DILATION_* 1, PAD_* 0), so the 2-D kernel's loops over them fold away.
// One work-item computes OW_BLOCK neighbouring outputs of one row: global id 0
// walks output-width blocks, 1 the output rows, 2 the (batch, output channel,
// output depth) triples. Strides, pads, dilations and groups are JIT constants
// (attributes, in both builds); the dims are literals in the static build, so
// the kernel loops have constant trip counts, and shape_info reads in the
// dynamic build. Input taps that fall into the padding read as zero.

// auto_pad same_*: the begin pad that makes OUT windows of K taps, D apart,
// S apart, cover IN (the odd one at the begin when LOWER); conv_window.hpp
// computes the same on the host.
#define SAME_PAD_TOTAL(IN, OUT, K, S, D) max(0, ((OUT) - 1) * (S) + ((K) - 1) * (D) + 1 - (IN))
#define SAME_PAD_BEGIN(IN, OUT, K, S, D, LOWER) \
    ((LOWER) ? SAME_PAD_TOTAL(IN, OUT, K, S, D) - SAME_PAD_TOTAL(IN, OUT, K, S, D) / 2 \
             : SAME_PAD_TOTAL(IN, OUT, K, S, D) / 2)

KERNEL(convolution)(OPTIONAL_SHAPE_INFO_ARG __global const float* input0, __global const float* input1,
#if INPUTS_COUNT > 2
                    __global const float* input2,
#endif
                    __global float* output0 FUSED_OPS_ARGS) {
    const int N = N_DIM, C = C_DIM, ID = IN_D, H = IN_H, W = IN_W;
    const int O = O_DIM, CG = CG_DIM, KD = K_D, KH = K_H, KW = K_W;
    const int OD = OUT_D, OH = OUT_H, OW = OUT_W;
    const int pad_d = PAD_D, pad_h = PAD_H, pad_w = PAD_W;
    const int ow0 = (int)get_global_id(0) * OW_BLOCK;
    const int oh = (int)get_global_id(1);
    const int z = (int)get_global_id(2);
    if (ow0 >= OW || oh >= OH || z >= N * O * OD) return;
    const int od = z % OD, no = z / OD;
    const int oc = no % O, n = no / O;
    const int grp = oc / (O / GROUPS);

    float acc[OW_BLOCK];
#if INPUTS_COUNT > 2
    const float b = input2[oc];
#else
    const float b = 0.0f;
#endif
    for (int j = 0; j < OW_BLOCK; ++j) acc[j] = b;

    __global const float* wp = input1 + oc * CG * KD * KH * KW;
    for (int ci = 0; ci < CG; ++ci) {
        __global const float* xp = input0 + (n * C + grp * CG + ci) * ID * H * W;
        for (int kd = 0; kd < KD; ++kd) {
            const int id = od * STRIDE_D - pad_d + kd * DILATION_D;
            if (id < 0 || id >= ID) continue;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * STRIDE_H - pad_h + kh * DILATION_H;
                if (ih < 0 || ih >= H) continue;
                __global const float* row = xp + (id * H + ih) * W;
                __global const float* wr = wp + ((ci * KD + kd) * KH + kh) * KW;
                for (int kw = 0; kw < KW; ++kw) {
                    const float wv = wr[kw];
#pragma unroll
                    for (int j = 0; j < OW_BLOCK; ++j) {
                        const int iw = (ow0 + j) * STRIDE_W - pad_w + kw * DILATION_W;
                        if (iw >= 0 && iw < W) acc[j] = mad(row[iw], wv, acc[j]);
                    }
                }
            }
        }
    }
    const ulong plane = (((ulong)n * O + oc) * OD + od) * OH + oh;
    __global float* yp = output0 + plane * OW;
#pragma unroll
    for (int j = 0; j < OW_BLOCK; ++j) {
        if (ow0 + j >= OW) continue;
        float fused_v = acc[j];
        const ulong fused_oi = plane * OW + ow0 + j;
        FUSED_OPS
        yp[ow0 + j] = fused_v;
    }
}
