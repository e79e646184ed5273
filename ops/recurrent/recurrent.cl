// recurrent on OpenCL (recurrent_ocl.cpp). Two kernels:
//   recurrent_project: xw[d][row][j] = X[row] . W[d][j] + Wb[d][j] + Rb[d][j]
//     for every row of X (every step of every batch entry) at once, into a
//     float scratch buffer; a GRU with LBR 1 adds Rbh inside the reset.
//   recurrent_steps: one work-group per (batch entry, direction) walks the
//     entry's steps; its work-items share the hidden units, the state lives
//     in local memory (h twice, to read the old while writing the new; c;
//     and a GRU's z and r . h), with a barrier after each step.
// JIT constants: CELL_RNN / CELL_GRU / CELL_LSTM, DIRS, REVERSE, LBR,
// INPUT_FORGET, HAS_CLIP and CLIP, LAYOUT, HAS_B / HAS_SEQ / HAS_H0 / HAS_C0 /
// HAS_P, SEQ_TYPE, and the activations ACT_F0(x) ... ACT_H1(x) of direction
// 0 and 1.

#if HAS_CLIP
#define CLIPPED(v) clamp((v), -(float)CLIP, (float)CLIP)
#else
#define CLIPPED(v) (v)
#endif
// Functions, so that an argument holding a dot product is computed once.
inline float act_f(int d, float v) {
    v = CLIPPED(v);
    return d == 0 ? ACT_F0(v) : ACT_F1(v);
}
inline float act_g(int d, float v) {
    v = CLIPPED(v);
    return d == 0 ? ACT_G0(v) : ACT_G1(v);
}
inline float act_h(int d, float v) { return d == 0 ? ACT_H0(v) : ACT_H1(v); }
#define ACT_F(d, v) act_f((d), (v))
#define ACT_G(d, v) act_g((d), (v))
#define ACT_H(d, v) act_h((d), (v))

KERNEL(recurrent_project)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* x, __global const INPUT0_TYPE* w,
#if HAS_B
                          __global const INPUT0_TYPE* bias,
#endif
                          __global float* xw, int rows, int input, int gh, int hidden) {
    const int j = get_global_id(0), row = get_global_id(1), d = get_global_id(2);
    if (j >= gh || row >= rows || d >= DIRS) return;
    const size_t wrow = ((size_t)d * gh + j) * input, xrow = (size_t)row * input;
    float acc = 0.0f;
    for (int k = 0; k < input; ++k) acc += LOAD(w, wrow + k) * LOAD(x, xrow + k);
#if HAS_B
    acc += LOAD(bias, (size_t)d * 2 * gh + j);
#if CELL_GRU && LBR
    if (j < 2 * hidden)
#endif
        acc += LOAD(bias, (size_t)d * 2 * gh + gh + j);
#endif
    xw[((size_t)d * rows + row) * gh + j] = acc;
}

// Row `row` of R (direction d) times the local vector v.
inline float dot_r(__global const INPUT0_TYPE* r, size_t row, int hidden, __local const float* v) {
    float acc = 0.0f;
    const size_t at = row * hidden;
    for (int k = 0; k < hidden; ++k) acc += LOAD(r, at + k) * v[k];
    return acc;
}

inline size_t x_row(int t, int b, int seq, int batch) { return LAYOUT == 0 ? (size_t)t * batch + b : (size_t)b * seq + t; }
inline size_t y_at(int t, int d, int b, int seq, int batch, int hidden) {
    return (LAYOUT == 0 ? ((size_t)t * DIRS + d) * batch + b : ((size_t)b * seq + t) * DIRS + d) * hidden;
}
inline size_t state_at(int d, int b, int batch, int hidden) {
    return (LAYOUT == 0 ? (size_t)d * batch + b : (size_t)b * DIRS + d) * hidden;
}

KERNEL(recurrent_steps)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* r,
#if HAS_B
                        __global const INPUT0_TYPE* bias,
#endif
#if HAS_SEQ
                        __global const SEQ_TYPE* lens,
#endif
#if HAS_H0
                        __global const INPUT0_TYPE* h0,
#endif
#if HAS_C0
                        __global const INPUT0_TYPE* c0,
#endif
#if HAS_P
                        __global const INPUT0_TYPE* peep,
#endif
                        __global const float* xw, __global OUTPUT0_TYPE* y, __global OUTPUT0_TYPE* yh,
#if CELL_LSTM
                        __global OUTPUT0_TYPE* yc,
#endif
                        __global int* report, __local float* buf, int seq, int batch, int hidden) {
    const int b = get_group_id(0), d = get_global_id(1), lid = get_local_id(0), lws = get_local_size(0);
    const int rev = DIRS == 2 ? d == 1 : REVERSE;
    const int gh = GATES * hidden;
    int len = seq, ok = 1;
#if HAS_SEQ
    // No early return: a group leaving before its barriers is undefined (and
    // PoCL then wrote past the outputs). A bad entry runs no step, writes
    // nothing and reports itself (every group of it the same); the host
    // raises the error.
    const long given = (long)lens[b];
    ok = given >= 0 && given <= seq;
    if (!ok && lid == 0) {
        report[0] = b + 1;
        report[1] = (int)(given & 0xffffffff);
        report[2] = (int)(given >> 32);
    }
    len = ok ? (int)given : 0;
#endif
    __local float* hcur = buf;
    __local float* hnext = buf + hidden;
    __local float* cl = buf + 2 * hidden;
    __local float* zr = buf + 3 * hidden;   // GRU: z, then r . h
    const size_t state = state_at(d, b, batch, hidden);
    for (int j = lid; j < hidden; j += lws) {
#if HAS_H0
        hcur[j] = LOAD(h0, state + j);
#else
        hcur[j] = 0.0f;
#endif
#if HAS_C0
        cl[j] = LOAD(c0, state + j);
#else
        cl[j] = 0.0f;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const size_t rows = (size_t)seq * batch;
    const size_t rbase = (size_t)d * gh;
    for (int s = 0; s < len; ++s) {
        const int t = rev ? len - 1 - s : s;
        __global const float* xr = xw + ((size_t)d * rows + x_row(t, b, seq, batch)) * gh;
#if CELL_RNN
        for (int j = lid; j < hidden; j += lws) hnext[j] = ACT_F(d, xr[j] + dot_r(r, rbase + j, hidden, hcur));
#elif CELL_GRU
        for (int j = lid; j < hidden; j += lws) {
            const float z = ACT_F(d, xr[j] + dot_r(r, rbase + j, hidden, hcur));
            const float rg = ACT_F(d, xr[hidden + j] + dot_r(r, rbase + hidden + j, hidden, hcur));
#if LBR
#if HAS_B
            const float rbh = LOAD(bias, (size_t)d * 2 * gh + gh + 2 * hidden + j);
#else
            const float rbh = 0.0f;
#endif
            const float n = ACT_G(d, xr[2 * hidden + j] + rg * (dot_r(r, rbase + 2 * hidden + j, hidden, hcur) + rbh));
            hnext[j] = (1.0f - z) * n + z * hcur[j];
#else
            zr[j] = z;
            zr[hidden + j] = rg * hcur[j];
#endif
        }
#if !LBR
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = lid; j < hidden; j += lws) {
            const float n = ACT_G(d, xr[2 * hidden + j] + dot_r(r, rbase + 2 * hidden + j, hidden, zr + hidden));
            hnext[j] = (1.0f - zr[j]) * n + zr[j] * hcur[j];
        }
#endif
#else   // LSTM: gates i o f c
        for (int j = lid; j < hidden; j += lws) {
            const float c = cl[j];
#if HAS_P
            const size_t pb = (size_t)d * 3 * hidden + j;
            const float pi = LOAD(peep, pb), po = LOAD(peep, pb + hidden), pf = LOAD(peep, pb + 2 * hidden);
#else
            const float pi = 0.0f, po = 0.0f, pf = 0.0f;
#endif
            const float i = ACT_F(d, xr[j] + dot_r(r, rbase + j, hidden, hcur) + pi * c);
#if INPUT_FORGET
            const float f = 1.0f - i;
#else
            const float f = ACT_F(d, xr[2 * hidden + j] + dot_r(r, rbase + 2 * hidden + j, hidden, hcur) + pf * c);
#endif
            const float g = ACT_G(d, xr[3 * hidden + j] + dot_r(r, rbase + 3 * hidden + j, hidden, hcur));
            const float cn = f * c + i * g;
            const float o = ACT_F(d, xr[hidden + j] + dot_r(r, rbase + hidden + j, hidden, hcur) + po * cn);
            cl[j] = cn;   // only this work-item reads unit j's cell
            hnext[j] = o * ACT_H(d, cn);
        }
#endif
        const size_t ya = y_at(t, d, b, seq, batch, hidden);
        for (int j = lid; j < hidden; j += lws) STORE(y, ya + j, hnext[j]);
        barrier(CLK_LOCAL_MEM_FENCE);
        __local float* tmp = hcur;
        hcur = hnext;
        hnext = tmp;
    }
    if (!ok) return;   // after the last barrier
    for (int t = len; t < seq; ++t) {
        const size_t ya = y_at(t, d, b, seq, batch, hidden);
        for (int j = lid; j < hidden; j += lws) STORE(y, ya + j, 0.0f);
    }
    for (int j = lid; j < hidden; j += lws) {
        STORE(yh, state + j, hcur[j]);
#if CELL_LSTM
        STORE(yc, state + j, cl[j]);
#endif
    }
}
