// reverse_sequence on OpenCL: one work-item per output element.
//
// The input's dims are right-aligned over 8 positions (INPUT0_DIMj, leading
// ones; literals in the static build, shape_info reads in the shape-agnostic
// one); TIME_POS and BATCH_POS are the two axes there, TIME_STRIDE and
// BATCH_STRIDE their row-major strides. Element o at time t of batch entry b
// reads time len - 1 - t when t < len = sequence_lens[b], else itself. A
// length outside [0, steps] writes 0, reads nothing and goes to the report:
// the work-item that sets report[0] from 0 to b + 1 (an atomic, so one of
// several bad lengths is kept whole) writes the length's low and high 32 bits
// into report[1] and report[2], and the host raises the host impls' error.
// Elements move as unsigned integers of their width (BITS_T).
KERNEL(reverse_sequence_ref)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_T* input0,
                             __global const INPUT1_TYPE* input1, __global BITS_T* output0,
                             __global int* report) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong dims[8] = {INPUT0_DIM0, INPUT0_DIM1, INPUT0_DIM2, INPUT0_DIM3,
                           INPUT0_DIM4, INPUT0_DIM5, INPUT0_DIM6, INPUT0_DIM7};
    const ulong ts = (ulong)(TIME_STRIDE), steps = dims[TIME_POS];
    const ulong t = o / ts % steps, b = o / (ulong)(BATCH_STRIDE) % dims[BATCH_POS];
    const long len = (long)input1[b];
    if (len < 0 || len > (long)steps) {
        output0[o] = (BITS_T)0;
        if (atomic_cmpxchg(report, 0, (int)(b + 1)) == 0) {
            report[1] = (int)(len & 0xffffffffL);
            report[2] = (int)(len >> 32);
        }
        return;
    }
    const ulong from = t < (ulong)len ? o - t * ts + ((ulong)len - 1 - t) * ts : o;
    output0[o] = input0[from];
}
