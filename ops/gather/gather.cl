// gather on OpenCL: the output is rows of INNER elements (the product of the
// data dims after the axis); row r is (outer, j) with j < INPUT1_LENGTH (a
// position in the indices tensor) and copies data row (outer, indices[j]).
// A grid-stride loop over the output's 4-element vectors: one index load and
// one division per vector, and whole-vector copies when INNER is a multiple
// of 4 (every row then starts 4-aligned on both sides), else element by
// element. Elements move as unsigned integers of the element's width (ELEM_T,
// from the host), so every data type is one kernel. A negative index counts
// from the end of the axis; an index still out of range writes 0 and goes to
// the report: the work-item that sets report[0] from 0 to the index's
// position + 1 (an atomic, so one of several bad indices is kept whole)
// writes its low and high 32 bits into report[1] and report[2], and the host
// raises the host impls' error after the run.
//
// From the host: ELEM_T, AXIS_LEN (data dim at the axis) and INNER, both
// written in terms of the INPUT0_DIMj constants (literals in the static build,
// shape_info reads in the shape-agnostic one).

// The data offset of output row `row`, or -1 when its index is out of range
// (then reported).
inline long source_row(__global const INPUT1_TYPE* indices, ulong row, ulong count, long axis_len, ulong inner,
                       __global int* report) {
    ulong j;
    const ulong outer = udiv_rem(row, count, &j);
    const long given = (long)indices[j];
    const long idx = given < 0 ? given + axis_len : given;
    if (idx < 0 || idx >= axis_len) {
        if (atomic_cmpxchg(report, 0, (int)(j + 1)) == 0) {
            report[1] = (int)(given & 0xffffffffL);
            report[2] = (int)(given >> 32);
        }
        return -1;
    }
    return (long)((outer * (ulong)axis_len + (ulong)idx) * inner);
}

typedef CAT(ELEM_T, 4) vec_t;

KERNEL(gather_ref)(OPTIONAL_SHAPE_INFO_ARG __global const ELEM_T* input0, __global const INPUT1_TYPE* input1,
                   __global ELEM_T* output0, __global int* report) {
    const ulong n = (ulong)OUTPUT0_LENGTH, n4 = (n + 3) / 4, gs = get_global_size(0);
    const ulong inner = (ulong)(INNER), count = (ulong)INPUT1_LENGTH;
    const long axis_len = (long)(AXIS_LEN);
    for (ulong v = get_global_id(0); v < n4; v += gs) {
        ulong col;
        ulong row = udiv_rem(v * 4, inner, &col);
        long from = source_row(input1, row, count, axis_len, inner, report);
        if (inner % 4 == 0) {
            ((__global vec_t*)output0)[v] = from < 0 ? (vec_t)0 : ((__global const vec_t*)input0)[(from + col) / 4];
            continue;
        }
        for (ulong o = v * 4; o < v * 4 + 4 && o < n; ++o) {
            output0[o] = from < 0 ? (ELEM_T)0 : input0[from + col];
            if (++col == inner) {
                col = 0;
                from = source_row(input1, ++row, count, axis_len, inner, report);
            }
        }
    }
}
