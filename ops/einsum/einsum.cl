// einsum on OpenCL: one work-item per output element, looping over the
// labels the output does not keep (einsum_op.cpp describes the plan).
//
// Each input's dims are right-aligned over 8 positions (INPUTk_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one) and AXIS_LABELS_k gives the label of each (-1 for the leading
// padding). The work-item first derives every label's extent and, per input,
// its stride (the sum of the strides of the axes carrying it; an axis of
// extent 1 adds none, so it broadcasts), then splits its output index over
// labels 0..OUT_LABELS-1 and adds EINSUM_PRODUCT over the other labels with
// an odometer, in the order the host reference walks them.
//
// From the host (einsum_op.cpp, einsum_defines):
//   NUM_INPUTS, NUM_LABELS (at least 1: array sizes), SUM_LABELS (the label
//   count), OUT_LABELS (the output rank)
//   EINSUM_INPUT_ARGS  "__global const INPUT0_TYPE* input0, ..." for every input
//   EINSUM_SETUP       SETUP_INPUT(k) for every input
//   EINSUM_PRODUCT     the product of GET(k) over the inputs
//   ACC_T, STORE_T     FLOAT_ACC or double (floats); ulong and long for
//                      integers, so products and sums wrap as on the host
// No fused multiply-adds: each product and sum rounds as on the host, so f64
// results match the reference exactly.
#pragma OPENCL FP_CONTRACT OFF

#if USES_F64 && !defined(cl_khr_fp64)
#error "einsum of f64 data needs a device with cl_khr_fp64"
#endif

#define GET(k) ((ACC_T)LOAD(input##k, off[k]))

// Adds the axes of one input: `labels` and `dims` over 8 right-aligned positions.
inline void add_axes(const int* labels, const ulong* dims, ulong* extent, ulong* stride) {
    ulong pitch = 1;
    for (int j = 7; j >= 0 && labels[j] >= 0; --j) {
        if (dims[j] != 1) {
            extent[labels[j]] = dims[j];
            stride[labels[j]] += pitch;
        }
        pitch *= dims[j];
    }
}

#define SETUP_INPUT(k)                                                                                   \
    {                                                                                                    \
        const int labels[8] = AXIS_LABELS_##k;                                                           \
        const ulong dims[8] = {INPUT##k##_DIM0, INPUT##k##_DIM1, INPUT##k##_DIM2, INPUT##k##_DIM3,       \
                               INPUT##k##_DIM4, INPUT##k##_DIM5, INPUT##k##_DIM6, INPUT##k##_DIM7};      \
        add_axes(labels, dims, extent, stride + (k) * NUM_LABELS);                                       \
    }

KERNEL(einsum_ref)(OPTIONAL_SHAPE_INFO_ARG EINSUM_INPUT_ARGS __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    ulong extent[NUM_LABELS], coord[NUM_LABELS], stride[NUM_INPUTS * NUM_LABELS], off[NUM_INPUTS];
    for (int l = 0; l < NUM_LABELS; ++l) extent[l] = 1, coord[l] = 0;
    for (int i = 0; i < NUM_INPUTS * NUM_LABELS; ++i) stride[i] = 0;
    for (int k = 0; k < NUM_INPUTS; ++k) off[k] = 0;
    EINSUM_SETUP
    ulong rest = o;
    for (int l = OUT_LABELS - 1; l >= 0; --l) {
        const ulong c = rest % extent[l];
        rest /= extent[l];
        for (int k = 0; k < NUM_INPUTS; ++k) off[k] += c * stride[k * NUM_LABELS + l];
    }
    ulong inner = 1;
    for (int l = OUT_LABELS; l < SUM_LABELS; ++l) inner *= extent[l];
    ACC_T acc = 0;
    for (ulong i = 0; i < inner; ++i) {
        acc += EINSUM_PRODUCT;
        for (int l = SUM_LABELS - 1; l >= OUT_LABELS; --l) {   // odometer over the summed labels
            if (++coord[l] < extent[l]) {
                for (int k = 0; k < NUM_INPUTS; ++k) off[k] += stride[k * NUM_LABELS + l];
                break;
            }
            coord[l] = 0;
            for (int k = 0; k < NUM_INPUTS; ++k) off[k] -= stride[k * NUM_LABELS + l] * (extent[l] - 1);
        }
    }
    STORE(output0, o, (STORE_T)acc);
}
