// one_hot on OpenCL: one work-item per output element.
//
// Output element o splits into (outer, d, inner) with inner < INNER (product
// of the output dims after the new axis) and d < DEPTH (the new dim); it reads
// the index at outer * INNER + inner and copies values[1] (on) when that
// index, plus DEPTH when negative, equals d, else values[0] (off). Floating
// indices (INDEX_FLOAT; f16 through LOAD with IN_F16) are truncated and
// compared in FLOAT_ACC, as the host compares in double; integer indices in
// long. Input 1 (depth) only sized the output. Values move as unsigned
// integers of their width (ELEM_T), so every output type is one kernel.
KERNEL(one_hot_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
                    __global const ELEM_T* input2, __global ELEM_T* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong inner_n = (ulong)(INNER), depth = (ulong)(DEPTH);
    const ulong d = o / inner_n % depth;
    const ulong at = o / (inner_n * depth) * inner_n + o % inner_n;
#if INDEX_FLOAT
    FLOAT_ACC v = trunc((FLOAT_ACC)LOAD(input0, at));
    if (v < 0) v += (FLOAT_ACC)depth;
    const int on = v == (FLOAT_ACC)d;
#else
    long v = (long)input0[at];
    if (v < 0) v += (long)depth;
    const int on = v == (long)d;
#endif
    output0[o] = input2[on ? 1 : 0];
}
