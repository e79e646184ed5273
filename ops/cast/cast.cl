// cast on OpenCL: a grid-stride loop over 4-element vectors, each loaded
// whole (ocl_common.cl's LOAD4: vload_half4 for f16), converted element by
// element and stored whole (STORE4: vstore_half4_rte for f16); work-items
// 0..2 convert the LENGTH % 4 tail elements (dispatch_vec4 launches them).
//
// From the host: IN_F16 / OUT_F16 (an f16 input loads as float, exactly; an
// f16 output is stored from CAST_T rounded once), USES_F64 (an f64 input or
// output: the device needs cl_khr_fp64), CAST_T and CAST_VALUE(v), the
// conversion of one value by the rules of cast_op.cpp: convert_<T>_sat
// (truncation toward zero, saturation, NaN -> 0) from floating to integer
// types, C casts between integers (wrap) and to floating types (round to
// nearest even), `v != 0` to boolean, f16 from double directly for an f64
// input.
#if USES_F64 && !defined(cl_khr_fp64)
#error "cast of f64 data needs a device with cl_khr_fp64"
#endif

#if IN_F16
#define IN_VEC float4
#else
#define IN_VEC CAT(INPUT0_TYPE, 4)
#endif
#if OUT_F16
#define STORE_ONE(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define STORE_ONE(p, i, v) ((p)[(i)] = (v))
#endif

KERNEL(cast_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong n = (ulong)OUTPUT0_LENGTH, n4 = n / 4, gid = get_global_id(0), gs = get_global_size(0);
    for (ulong v = gid; v < n4; v += gs) {
        const IN_VEC x = LOAD4(INPUT0_TYPE, input0, v);
        const CAT(CAST_T, 4) y =
            (CAT(CAST_T, 4))(CAST_VALUE(x.s0), CAST_VALUE(x.s1), CAST_VALUE(x.s2), CAST_VALUE(x.s3));
        STORE4(CAST_T, output0, v, y);
    }
    const ulong t = n4 * 4 + gid;
    if (t < n) STORE_ONE(output0, t, CAST_VALUE(LOAD(input0, t)));
}
