// cast on OpenCL: one work-item per element, input0 converted to the output
// type.
//
// From the host: IN_F16 (an f16 input loads through ocl_common.cl's LOAD as
// float, exactly), USES_F64 (an f64 input or output: the device needs
// cl_khr_fp64) and CAST_STORE(p, i, v), the conversion and store of one
// value by the rules of cast_op.cpp: convert_<T>_sat (truncation toward zero,
// saturation, NaN -> 0) from floating to integer types, C casts between
// integers (wrap) and to floating types (round to nearest even), `v != 0` to
// boolean, vstore_half_rte to f16 (from double directly for an f64 input).
#if USES_F64 && !defined(cl_khr_fp64)
#error "cast of f64 data needs a device with cl_khr_fp64"
#endif

KERNEL(cast_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    CAST_STORE(output0, i, LOAD(input0, i));
}
