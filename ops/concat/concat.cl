// concat on OpenCL: one kernel over every output element, all inputs as
// arguments.
//
// The input count varies per node, so the host writes the argument list
// (CONCAT_INPUT_ARGS: "__global const ELEM_T* input0, ...") and the chain of
// CONCAT_PICK(k) steps (CONCAT_PICKS) as JIT constants, with IN_AXIS_LEN_k =
// input k's dim at the axis. Output element o splits into (outer, a, inner),
// a < OUT_AXIS_LEN being the position along the axis; the steps walk the inputs
// subtracting their axis lengths until `a` falls inside one. Elements move as
// unsigned integers of the element's width (ELEM_T), so every data type is one
// kernel.
#define KERNEL(name) __kernel void name

#define CONCAT_PICK(k)                                                                 \
    if (a < (ulong)(IN_AXIS_LEN_##k)) {                                                \
        output0[o] = input##k[(outer * (ulong)(IN_AXIS_LEN_##k) + a) * inner_n + inner]; \
        return;                                                                        \
    }                                                                                  \
    a -= (ulong)(IN_AXIS_LEN_##k);

KERNEL(concat_ref)(OPTIONAL_SHAPE_INFO_ARG CONCAT_INPUT_ARGS __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER);
    const ulong axis_n = (ulong)(OUT_AXIS_LEN);
    const ulong inner = o % inner_n;
    const ulong t = o / inner_n;
    ulong a = t % axis_n;
    const ulong outer = t / axis_n;
    CONCAT_PICKS
}
