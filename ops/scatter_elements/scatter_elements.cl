// scatter_elements on OpenCL, after dynrt/ocl_scatter.cl (GET, PUT, COMBINE):
// two kernels in order on the stream, scatter_copy (ocl_scatter.cl: out =
// data, as bits), then scatter_elements_apply: one work-item per line of
// indices along the axis (every coordinate but the axis one). It walks its
// line in order and applies each update at the line's coordinates with the
// axis coordinate replaced by the index, so the targets of two work-items
// never meet and duplicates within a line combine in row-major order, as on
// the host. Dims are the 8 right-aligned INPUTk_DIMj (literals in the static
// build, shape_info reads in the shape-agnostic one); AXIS_POS is the axis
// among them. A negative index counts from the end; an update whose index is
// still out of range is dropped and the index reported (scatter_report_index
// of ocl_scatter.cl: its position in indices and value), and the host raises
// the host impls' error after the run.
//
// From the host: the constants of dynrt/ocl_scatter.cl and AXIS_POS.
KERNEL(scatter_elements_apply)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT1_TYPE* input1,
                               __global const ELEM_T* input2, __global ELEM_T* output0,
                               __global int* report) {
    const ulong data_dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                                INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong index_dims[8] = {INPUT1_DIM0, INPUT1_DIM1, INPUT1_DIM2, INPUT1_DIM3,
                                 INPUT1_DIM4, INPUT1_DIM5, INPUT1_DIM6, INPUT1_DIM7};
    const ulong k_n = index_dims[AXIS_POS];
    const ulong line = get_global_id(0);
    if (line >= (ulong)INPUT1_LENGTH / k_n) return;   // the global size is rounded up
    // The line's first index element and the data offset of its coordinates
    // (the axis coordinate left at 0), innermost dim first.
    ulong rest = line, first = 0, base = 0, ipitch = 1, dpitch = 1, axis_pitch = 1, axis_ipitch = 1;
    for (int j = 7; j >= 0; --j) {
        if (j == AXIS_POS) {
            axis_pitch = dpitch;
            axis_ipitch = ipitch;
        } else {
            const ulong c = rest % index_dims[j];
            rest /= index_dims[j];
            first += c * ipitch;
            base += c * dpitch;
        }
        ipitch *= index_dims[j];
        dpitch *= data_dims[j];
    }
    const long len = (long)data_dims[AXIS_POS];
    for (ulong k = 0; k < k_n; ++k) {
        const ulong at = first + k * axis_ipitch;
        const long given = (long)input1[at];
        const long v = given < 0 ? given + len : given;
        if (v < 0 || v >= len) {
            scatter_report_index(report, at, given);
            continue;
        }
        const ulong to = base + (ulong)v * axis_pitch;
        const VALUE_T a = GET(output0, to);
        const VALUE_T b = GET(input2, at);
        PUT(output0, to, COMBINE(a, b));
    }
}
