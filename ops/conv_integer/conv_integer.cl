// conv_integer on OpenCL: one work-item per output element, by the rules of
// conv_integer_op.cpp: an int sum of (x - x_zp) * (w - w_zp[m]) over the
// window's taps inside the input, stored as int or requantized (rint(acc *
// multiplier) + y_zp, saturated).
//
// From the host: X, W (W_TYPE) and the parameter inputs by name (HAS_XZP /
// XZP ..., each with its _LEN: 1 for per tensor), NUM_INPUTS (the argument
// list), the dims C, IH, IW, M, CG, KH, KW, OH, OW, the steps SH, SW,
// dilations DH, DW, GROUPS, REQUANT with HAS_BIAS, QLO / QHI / CONVERT_OUT;
// the runtime begin pads as scalars. Work-item 0 checks the scales: one that
// is not positive sets report[0..2] (x, w, y).
#define IN_ARG(k) , __global const INPUT##k##_TYPE* input##k

KERNEL(conv_integer_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0,
                         __global const INPUT1_TYPE* input1
#if NUM_INPUTS > 2
                         IN_ARG(2)
#endif
#if NUM_INPUTS > 3
                         IN_ARG(3)
#endif
#if NUM_INPUTS > 4
                         IN_ARG(4) IN_ARG(5) IN_ARG(6) IN_ARG(7)
#endif
#if NUM_INPUTS > 8
                         IN_ARG(8)
#endif
                         , __global OUTPUT0_TYPE* output0, __global int* report, int pad_h, int pad_w) {
    const ulong o = get_global_id(0);
#if REQUANT
    if (o == 0) {
        if (!(XS[0] > 0.0f)) report[0] = 1;
        for (ulong i = 0; i < (ulong)WS_LEN; ++i)
            if (!(WS[i] > 0.0f)) report[1] = 1;
        if (!(YS[0] > 0.0f)) report[2] = 1;
    }
#endif
    if (o >= (ulong)OUTPUT0_LENGTH) return;
    const long ox = (long)(o % (ulong)OW), oy = (long)((o / (ulong)OW) % (ulong)OH);
    const long oc = (long)((o / ((ulong)OW * (ulong)OH)) % (ulong)M), b = (long)(o / ((ulong)OW * (ulong)OH * (ulong)M));
    const long grp = oc / ((long)M / GROUPS);
#if HAS_XZP
    const int xzp = (int)XZP[0];
#else
    const int xzp = 0;
#endif
#if HAS_WZP
    const int wzp = (int)WZP[(ulong)WZP_LEN == 1 ? 0 : oc];
#else
    const int wzp = 0;
#endif
    int acc = 0;
    for (long ic = 0; ic < (long)CG; ++ic) {
        __global const INPUT0_TYPE* xp = X + ((b * (long)C + grp * (long)CG + ic) * (long)IH) * (long)IW;
        __global const W_TYPE* wp = W + ((oc * (long)CG + ic) * (long)KH) * (long)KW;
        for (long ky = 0; ky < (long)KH; ++ky) {
            const long iy = oy * SH - pad_h + ky * DH;
            if (iy < 0 || iy >= (long)IH) continue;
            for (long kx = 0; kx < (long)KW; ++kx) {
                const long ix = ox * SW - pad_w + kx * DW;
                if (ix < 0 || ix >= (long)IW) continue;
                acc += ((int)xp[iy * (long)IW + ix] - xzp) * ((int)wp[ky * (long)KW + kx] - wzp);
            }
        }
    }
#if REQUANT
#if HAS_BIAS
    acc += input8[oc];
#endif
    const float mult = (XS[0] * WS[(ulong)WS_LEN == 1 ? 0 : oc]) / YS[0];
    output0[o] = CONVERT_OUT(clamp(rint((float)acc * mult) + (float)YZP[0], QLO, QHI));
#else
    output0[o] = acc;
#endif
}
