// split on OpenCL: one stage per output, one work-item per element of that
// output (part).
//
// The input is seen as lines along the axis: OUTER_INNER lines of AXIS_LEN
// elements, INNER apart (from the host, in terms of the INPUT0_DIMj constants:
// literals in the static build, shape_info reads in the shape-agnostic one).
// The part holds positions [offset, offset + part_len) of every line; both are
// scalars the host takes from the output layouts. Elements move as unsigned
// integers of their width (ELEM_T), so one kernel serves every data type.
KERNEL(split_part)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global ELEM_T* part, long offset,
                   long part_len) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)(OUTER_INNER) * (ulong)part_len) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong inner = o % inner_n;
    const ulong t = o / inner_n;
    const ulong a = t % (ulong)part_len;
    const ulong outer = t / (ulong)part_len;
    part[o] = input0[(outer * (ulong)(AXIS_LEN) + (ulong)offset + a) * inner_n + inner];
}
