// dynamic_quantize_linear on OpenCL, by the rules of
// dynamic_quantize_linear_op.cpp, in two kernels:
//   dql_range: one work-group (GROUP_MAX items at most) strides over x for
//     min(0, x) and max(0, x), reduces them in local memory and work-item 0
//     writes y_scale (output1) and y_zero_point (output2);
//   dql_quantize: one work-item per element, reading them back.
KERNEL(dql_range)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
                  __global OUTPUT1_TYPE* output1, __global OUTPUT2_TYPE* output2) {
    __local float lo[GROUP_MAX], hi[GROUP_MAX];
    const uint lid = get_local_id(0), g = get_local_size(0);
    float l = 0.0f, h = 0.0f;
    for (ulong i = lid; i < (ulong)INPUT0_LENGTH; i += g) {
        const float v = input0[i];
        l = v < l ? v : l;
        h = v > h ? v : h;
    }
    lo[lid] = l;
    hi[lid] = h;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid != 0) return;
    for (uint k = 1; k < g; ++k) {
        l = lo[k] < l ? lo[k] : l;
        h = hi[k] > h ? hi[k] : h;
    }
    const float scale = (h - l) / 255.0f;
    output1[0] = scale;
    output2[0] = scale > 0.0f ? (uchar)rint(clamp(0.0f - l / scale, 0.0f, 255.0f)) : (uchar)0;
}

KERNEL(dql_quantize)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
                     __global OUTPUT1_TYPE* output1, __global OUTPUT2_TYPE* output2) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;
    const float scale = output1[0], zp = (float)output2[0];
    if (!(scale > 0.0f)) {
        output0[i] = 0;
        return;
    }
    const float q = input0[i] / scale;
    output0[i] = isnan(q) ? (uchar)0 : convert_uchar_sat(clamp(rint(clamp(q, -zp - 1.0f, 256.0f - zp)) + zp, 0.0f, 255.0f));
}
