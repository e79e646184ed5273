// The scatter ops (scatter_elements, scatter_nd; dynrt/op_reduction.hpp), put
// ahead of the op's source (ocl_source_with): GET/PUT of one element,
// COMBINE(a, b) of the node's reduction and scatter_copy, the first of the
// op's two kernels (out = data).
//
// From the host (jit_scatter_defines): BITS_T (unsigned type of the element's
// width), ELEM_T (the pointer type of the op's apply kernel: BITS_T without a
// reduction, else the element's type, half for f16), VALUE_T (float for f16,
// else ELEM_T), DATA_F16, IS_INTEGER, UVALUE_T (the unsigned type integer add
// and mul wrap in), REDUCTION (0 none, 1 add, 2 mul, 3 max, 4 min), USES_F64.
#if USES_F64 && !defined(cl_khr_fp64)
#error "a reduction over f64 data needs a device with cl_khr_fp64"
#endif

#if DATA_F16
#define GET(p, i) vload_half((i), (p))
#define PUT(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define GET(p, i) ((p)[(i)])
#define PUT(p, i, v) ((p)[(i)] = (v))
#endif

#if REDUCTION == 1 && IS_INTEGER
#define COMBINE(a, b) ((VALUE_T)((UVALUE_T)(a) + (UVALUE_T)(b)))
#elif REDUCTION == 1
#define COMBINE(a, b) ((a) + (b))
#elif REDUCTION == 2 && IS_INTEGER
#define COMBINE(a, b) ((VALUE_T)((UVALUE_T)(a) * (UVALUE_T)(b)))
#elif REDUCTION == 2
#define COMBINE(a, b) ((a) * (b))
#elif REDUCTION == 3
#define COMBINE(a, b) ((b) > (a) ? (b) : (a))
#elif REDUCTION == 4
#define COMBINE(a, b) ((b) < (a) ? (b) : (a))
#else
#define COMBINE(a, b) (b)
#endif

// An index out of range (the host impls' error, raised after the run by the
// op's report_check through scatter_bad_index): the work-item that sets
// report[0] from 0 to the index's position + 1 (an atomic, so one of several
// bad indices is kept whole) stores its low and high 32 bits after it.
void scatter_report_index(__global int* report, ulong position, long value) {
    if (atomic_cmpxchg(report, 0, (int)(position + 1)) == 0) {
        report[1] = (int)(value & 0xffffffffL);
        report[2] = (int)(value >> 32);
    }
}

// One work-item per element, as bits.
KERNEL(scatter_copy)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_T* input0, __global BITS_T* output0) {
    const ulong i = get_global_id(0);
    if (i < (ulong)OUTPUT0_LENGTH) output0[i] = input0[i];
}
