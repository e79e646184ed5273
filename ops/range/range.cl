// range on OpenCL: one work-item per output element, start + i * delta.
//
// From the host: RANGE_INTEGER (1 for integer types: exact 64-bit arithmetic;
// the value lies between start and limit, so it fits the type) and DATA_F16.
// Floating types compute in FLOAT_ACC (double where the device has fp64) and
// round once on store; no fused multiply-add, so the result is the host
// reference's bit for bit. Input 1 (limit) only sized the output.
#pragma OPENCL FP_CONTRACT OFF
KERNEL(range_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                  __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
#if RANGE_INTEGER
    output0[i] = (OUTPUT0_TYPE)((long)input0[0] + (long)i * (long)input2[0]);
#else
    const FLOAT_ACC start = (FLOAT_ACC)LOAD(input0, 0), delta = (FLOAT_ACC)LOAD(input2, 0);
    STORE(output0, i, start + (FLOAT_ACC)i * delta);
#endif
}
