// concat on OpenCL: one kernel, all inputs as arguments, two paths:
//
// - OUTER == 1 (every dim before the axis is 1, e.g. axis 0): the output is
//   the inputs laid end to end, so each input is one contiguous block. Every
//   work-item walks every input with a grid-stride loop over 4-element
//   vectors (work-item i copies vectors i, i + G, ... of each input; G = global
//   size), then the block's last len % 4 elements go to work-items 0..2. The
//   input side is read through a vector pointer (buffers start aligned); the
//   output side too when the block starts at a multiple of 4 elements, else
//   with vstore4 (element alignment). This is a plain memory copy, so it moves
//   whole vectors and splits no index.
// - otherwise one work-item per output element: element o splits into (outer,
//   a, inner), a < OUT_AXIS_LEN being the position along the axis, and the
//   CONCAT_PICK steps walk the inputs subtracting their axis lengths until `a`
//   falls inside one.
// The test is on literals in the static build (one path compiled) and a
// uniform branch on shape_info dims in the shape-agnostic one; the host's
// dispatch (concat_op.cpp) makes the same test to size the grid.
//
// From the host: the argument list (CONCAT_INPUT_ARGS: "__global const ELEM_T*
// input0, ..."), the per-input steps of each path (CONCAT_COPIES,
// CONCAT_PICKS), IN_AXIS_LEN_k = input k's dim at the axis, OUT_AXIS_LEN,
// INNER (product of the dims after the axis) and OUTER (before it). Elements
// move as unsigned integers of the element's width (ELEM_T), so every data
// type is one kernel.
#define ELEM_VEC CAT(ELEM_T, 4)

// Copies src[0, len) to dst[start, start + len), grid-stride over vectors.
inline void copy_block(__global const ELEM_T* src, __global ELEM_T* dst, ulong start, ulong len, ulong gid,
                       ulong gs) {
    const ulong n4 = len / 4;
    __global const ELEM_VEC* s4 = (__global const ELEM_VEC*)src;
    __global ELEM_T* d = dst + start;
    if (start % 4 == 0) {
        __global ELEM_VEC* d4 = (__global ELEM_VEC*)d;
        for (ulong i = gid; i < n4; i += gs) d4[i] = s4[i];
    } else {
        for (ulong i = gid; i < n4; i += gs) vstore4(s4[i], i, d);
    }
    const ulong t = n4 * 4 + gid;
    if (t < len) d[t] = src[t];
}

#define CONCAT_COPY(k)                                                 \
    {                                                                  \
        const ulong len = (ulong)(IN_AXIS_LEN_##k) * inner_n;          \
        copy_block(input##k, output0, start, len, gid, gs);            \
        start += len;                                                  \
    }

#define CONCAT_PICK(k)                                                                 \
    if (a < (ulong)(IN_AXIS_LEN_##k)) {                                                \
        output0[o] = input##k[(outer * (ulong)(IN_AXIS_LEN_##k) + a) * inner_n + inner]; \
        return;                                                                        \
    }                                                                                  \
    a -= (ulong)(IN_AXIS_LEN_##k);

KERNEL(concat_ref)(OPTIONAL_SHAPE_INFO_ARG CONCAT_INPUT_ARGS __global ELEM_T* output0) {
    const ulong inner_n = (ulong)(INNER);
    const ulong gid = get_global_id(0);
    if ((ulong)(OUTER) == 1) {
        const ulong gs = get_global_size(0);
        ulong start = 0;
        CONCAT_COPIES
        return;
    }
    const ulong o = gid;
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const ulong axis_n = (ulong)(OUT_AXIS_LEN);
    const ulong inner = o % inner_n;
    const ulong t = o / inner_n;
    ulong a = t % axis_n;
    const ulong outer = t / axis_n;
    CONCAT_PICKS
}
