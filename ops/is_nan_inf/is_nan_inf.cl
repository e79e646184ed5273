// is_nan_inf on OpenCL: one work-item per element, a boolean (uchar 0/1) per
// test.
//
// From the host: TEST(x), the test of one loaded value as an int expression
// (isnan, or isinf restricted by sign), and IN_F16 (f16 loads through
// ocl_common.cl's LOAD, vload_half into float, which keeps NaN and the
// infinities). The input is read as its own type otherwise (float, double).
KERNEL(is_nan_inf_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    output0[o] = TEST(LOAD(input0, o)) ? (OUTPUT0_TYPE)1 : (OUTPUT0_TYPE)0;
}
