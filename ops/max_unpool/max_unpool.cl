// max_unpool on OpenCL: three kernels in order on the stream, so that the
// result does not depend on the order work-items run in.
//
// max_unpool_fill: one work-item per output element: the element 0 and its
// claim (scratch) 0, "no input element".
// max_unpool_claim: one work-item per input element j: atomic_max of j + 1
// into the claim of the output element indices[j] names, so each claim ends
// as the last input element (in row-major order) sent there, as on the host.
// An index outside the unpooled tensor claims nothing and goes to the report:
// the work-item that sets report[0] from 0 to j + 1 (an atomic, so one of
// several bad indices is kept whole) writes the index's low and high 32 bits
// into report[1] and report[2], and the host raises the host impls' error.
// max_unpool_write: one work-item per input element: the claim's winner
// writes its element.
// An index names an element of the unpooled tensor (UNPOOLED_DIMS, 8
// right-aligned dims derived from the input's); it lands at the same
// coordinates of the output, which may be larger (output_shape). Elements
// move as unsigned integers of their width (BITS_T).

// The output position of unpooled element `raw`, or -1 when there is none.
inline long place(long raw, const ulong* udims, const ulong* odims) {
    ulong count = 1;
    for (int d = 0; d < 8; ++d) count *= udims[d];
    if (raw < 0 || (ulong)raw >= count) return -1;
    ulong u = (ulong)raw, at = 0, pitch = 1;
    for (int d = 7; d >= 0; --d) {
        at += u % udims[d] * pitch;
        u /= udims[d];
        pitch *= odims[d];
    }
    return (long)at;
}

// Declares `at`, the output position of input element j's index.
#define PLACE_OF(j)                                                                                   \
    const ulong udims[8] = UNPOOLED_DIMS;                                                             \
    const ulong odims[8] = {OUTPUT0_DIM0, OUTPUT0_DIM1, OUTPUT0_DIM2, OUTPUT0_DIM3,                   \
                            OUTPUT0_DIM4, OUTPUT0_DIM5, OUTPUT0_DIM6, OUTPUT0_DIM7};                  \
    const long at = place((long)input1[j], udims, odims)

KERNEL(max_unpool_fill)(OPTIONAL_SHAPE_INFO_ARG __global BITS_T* output0, __global uint* claims) {
    const ulong i = get_global_id(0);
    if (i >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    output0[i] = (BITS_T)0;
    claims[i] = 0;
}

KERNEL(max_unpool_claim)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT1_TYPE* input1, __global uint* claims,
                         __global int* report) {
    const ulong j = get_global_id(0);
    if (j >= (ulong)INPUT0_LENGTH) return;
    PLACE_OF(j);
    if (at >= 0) {
        atomic_max(claims + at, (uint)(j + 1));
    } else if (atomic_cmpxchg(report, 0, (int)(uint)(j + 1)) == 0) {
        const long given = (long)input1[j];
        report[1] = (int)(given & 0xffffffffL);
        report[2] = (int)(given >> 32);
    }
}

KERNEL(max_unpool_write)(OPTIONAL_SHAPE_INFO_ARG __global const BITS_T* input0, __global const INPUT1_TYPE* input1,
                         __global BITS_T* output0, __global const uint* claims) {
    const ulong j = get_global_id(0);
    if (j >= (ulong)INPUT0_LENGTH) return;
    PLACE_OF(j);
    if (at >= 0 && claims[at] == (uint)(j + 1)) output0[at] = input0[j];
}
