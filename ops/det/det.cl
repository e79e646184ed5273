// det on OpenCL: one work-item per matrix (output element b).
//
// The matrix is copied into the work-item's part of the scratch buffer as
// FLOAT_ACC (double where the device has fp64) and factored in place by LU
// with partial pivoting, as the host reference does: the determinant is the
// product of the pivots, negated per row swap, 0 once the best pivot is 0.
// M is the last input dim (INPUT0_DIM7, right-aligned: a literal in the
// static build, a shape_info read in the shape-agnostic one).
#pragma OPENCL FP_CONTRACT OFF   // no fused multiply-adds: f64 rounds as on the host, exactly
#if USES_F64 && !defined(cl_khr_fp64)
#error "det of f64 data needs a device with cl_khr_fp64"
#endif

KERNEL(det_lu)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
               __global FLOAT_ACC* scratch) {
    const ulong b = get_global_id(0);
    if (b >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong m = (ulong)INPUT0_DIM7, size = m * m;
    __global FLOAT_ACC* a = scratch + b * size;
    for (ulong e = 0; e < size; ++e) a[e] = (FLOAT_ACC)LOAD(input0, b * size + e);
    FLOAT_ACC det = 1;
    for (ulong k = 0; k < m; ++k) {
        ulong pivot = k;
        for (ulong i = k + 1; i < m; ++i)
            if (fabs(a[i * m + k]) > fabs(a[pivot * m + k])) pivot = i;
        if (a[pivot * m + k] == 0) {
            det = 0;
            break;
        }
        if (pivot != k) {
            for (ulong j = 0; j < m; ++j) {
                const FLOAT_ACC t = a[k * m + j];
                a[k * m + j] = a[pivot * m + j];
                a[pivot * m + j] = t;
            }
            det = -det;
        }
        det *= a[k * m + k];
        for (ulong i = k + 1; i < m; ++i) {
            const FLOAT_ACC f = a[i * m + k] / a[k * m + k];
            for (ulong j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
        }
    }
    STORE(output0, b, det);
}
