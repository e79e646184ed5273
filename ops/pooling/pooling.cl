// pooling on OpenCL: one work-item per output element walks its window.
//
// Every rank is walked as three spatial axes (d, h, w): the host maps the
// axes a lower rank lacks to extent 1 (IN_*, OUT_*, K_*, S_*, DIL_* are "1").
// From the host, as JIT constants: POOL_MODE (0 max, 1 avg, 2 lp), ACC_T (the
// accumulator: float or int for max, FLOAT_ACC otherwise), LP_P, COUNT_PAD
// (avg divides by the taps inside the padded input), WITH_INDICES (output1:
// flat input index of each maximum), COLUMN_MAJOR (its spatial part with the
// first axis fastest), the taps K_*, steps S_* and tap distances DIL_*
// (attributes, in both builds; a global window is the input extent), and the
// extents IN_* / OUT_* (literals in the static build, shape_info reads in the
// dynamic one). The pads are scalars computed on the host for each runtime
// shape, as auto_pad same_* derives them from the input extent. Shape
// inference guarantees every window covers at least one input element, so
// the maximum is always set.
KERNEL(pooling)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0,
#if WITH_INDICES
                __global OUTPUT1_TYPE* output1,
#endif
                long pb_d, long pb_h, long pb_w, long pe_d, long pe_h, long pe_w) {
    const ulong y = get_global_id(0);
    if (y >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const long ow = (long)(y % (ulong)OUT_W);
    const ulong t = y / (ulong)OUT_W;
    const long oh = (long)(t % (ulong)OUT_H);
    const long od = (long)((t / (ulong)OUT_H) % (ulong)OUT_D);
    const ulong plane = t / (ulong)OUT_H / (ulong)OUT_D;
    const ulong in_plane = (ulong)(IN_D * IN_H * IN_W);
    __global const INPUT0_TYPE* x = input0 + plane * in_plane;
    const long d0 = od * S_D - pb_d, h0 = oh * S_H - pb_h, w0 = ow * S_W - pb_w;

    ACC_T acc = (ACC_T)0;
    long inside = 0, in_padded = 0, arg = 0;
    for (long kd = 0; kd < K_D; ++kd) {
        const long id = d0 + kd * DIL_D;
        const int pad_d = id >= -pb_d && id < IN_D + pe_d;
        for (long kh = 0; kh < K_H; ++kh) {
            const long ih = h0 + kh * DIL_H;
            const int pad_h = ih >= -pb_h && ih < IN_H + pe_h;
            for (long kw = 0; kw < K_W; ++kw) {
                const long iw = w0 + kw * DIL_W;
                in_padded += pad_d && pad_h && iw >= -pb_w && iw < IN_W + pe_w;
                if (id < 0 || id >= IN_D || ih < 0 || ih >= IN_H || iw < 0 || iw >= IN_W) continue;
                const long at = (id * IN_H + ih) * IN_W + iw;
                const ACC_T v = (ACC_T)LOAD(x, at);
#if POOL_MODE == 0
                if (inside == 0 || v > acc) {
                    acc = v;
#if COLUMN_MAJOR
                    arg = id + IN_D * (ih + IN_H * iw);
#else
                    arg = at;
#endif
                }
#elif POOL_MODE == 1
                acc += v;
#elif LP_P == 1
                acc += fabs(v);
#elif LP_P == 2
                acc += v * v;
#else
                acc += pow(fabs(v), (ACC_T)LP_P);
#endif
                ++inside;
            }
        }
    }
#if POOL_MODE == 1
    acc /= (ACC_T)(COUNT_PAD ? in_padded : inside);
#elif POOL_MODE == 2
#if LP_P == 2
    acc = sqrt(acc);
#elif LP_P != 1
    acc = pow(acc, (ACC_T)1 / (ACC_T)LP_P);
#endif
#endif
    STORE(output0, y, acc);
#if WITH_INDICES
    output1[y] = (OUTPUT1_TYPE)(plane * in_plane + (ulong)arg);
#endif
}
