// reorder on OpenCL: copies a tensor into another memory format (layout.hpp:
// `plain` row-major, `osv16` dim 0 cut into slices of 16 that become the
// innermost dim).
//
// One work-item per *storage* element of the output, so the zero tail of the
// last osv16 slice is written too. IN_BLOCK / OUT_BLOCK (from the host) are the
// formats' dim-0 block sizes (1 = plain); the scalars are the logical dim 0
// (dim0), the elements per dim-0 index (inner) and the output's storage count.
// Logical (o, r) -> storage index for block size b.
inline ulong storage_index(ulong o, ulong r, ulong inner, ulong b) {
    return ((o / b) * inner + r) * b + o % b;
}

KERNEL(reorder_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
                    long dim0, long inner, long out_storage) {
    const ulong s = get_global_id(0);
    if (s >= (ulong)out_storage) return;   // the global size is rounded up
    const ulong in_n = (ulong)inner;
    // Decode the output storage index into the logical (o, r).
    ulong o, r;
    if (OUT_BLOCK == 1) {
        o = s / in_n;
        r = s % in_n;
    } else {
        const ulong lane = s % OUT_BLOCK;
        const ulong rest = s / OUT_BLOCK;
        r = rest % in_n;
        o = (rest / in_n) * OUT_BLOCK + lane;
    }
    if (o >= (ulong)dim0) {
        output0[s] = (OUTPUT0_TYPE)0;   // tail of the last block
        return;
    }
    output0[s] = (OUTPUT0_TYPE)input0[storage_index(o, r, in_n, IN_BLOCK)];
}
