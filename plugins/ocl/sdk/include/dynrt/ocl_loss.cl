// Losses over class scores (nll_loss, softmax_cross_entropy; dynrt/op_loss.hpp),
// put ahead of the op's source (ocl_source_with). The op defines
// LOSS_AT(p, w), the loss of position p of [N, d1..dk] with *w its weight,
// and ends its kernel with LOSS_STORE(g) for work-item g.
//
// From the host (jit_loss_defines): ACC_T, REAL (double for f64 data, else
// float), DATA_F16, REDUCTION (0 none, 1 sum, 2 mean), HAS_WEIGHT,
// IGNORE_INDEX, C_LEN, INNER (product of d1..dk) and POSITIONS (N * INNER).

// The weights input (input2), where the node has one: as a parameter and as
// an argument, each with its comma.
#if HAS_WEIGHT
#define LOSS_WEIGHT_PARAM __global const INPUT2_TYPE *input2,
#define LOSS_WEIGHT_ARG input2,
#else
#define LOSS_WEIGHT_PARAM
#define LOSS_WEIGHT_ARG
#endif

// The class of position p, with its weight in *w; -1 and weight 0 where the
// target is IGNORE_INDEX or out of [0, c_len) (the host impls raise an error
// for the latter: the device cannot report one).
inline long loss_class(__global const INPUT1_TYPE* input1, LOSS_WEIGHT_PARAM ulong p, ulong c_len, REAL* w) {
    const long t = (long)input1[p];
    *w = (REAL)0;
    if (t == IGNORE_INDEX || t < 0 || t >= (long)c_len) return -1;
#if HAS_WEIGHT
    *w = (REAL)LOAD(input2, t);
#else
    *w = (REAL)1;
#endif
    return t;
}

// REDUCTION 0 (none): work-item g stores the loss of position g. 1 (sum) and
// 2 (mean): work-item 0 walks every position, summing the losses and (for
// mean) the weights in ACC_T; the others do nothing.
#if REDUCTION == 0
#define LOSS_STORE(g)                                                               \
    do {                                                                            \
        REAL w_;                                                                    \
        if ((g) < (ulong)(POSITIONS)) STORE(output0, (g), LOSS_AT((g), &w_));       \
    } while (0)
#else
#define LOSS_STORE(g)                                                               \
    do {                                                                            \
        if ((g) != 0) break;                                                        \
        REAL w_;                                                                    \
        ACC_T sum_ = (ACC_T)0, wsum_ = (ACC_T)0;                                    \
        for (ulong p_ = 0; p_ < (ulong)(POSITIONS); ++p_) {                         \
            sum_ += (ACC_T)LOSS_AT(p_, &w_);                                        \
            wsum_ += (ACC_T)w_;                                                     \
        }                                                                           \
        STORE(output0, 0, (REAL)(REDUCTION == 2 ? sum_ / wsum_ : sum_));            \
    } while (0)
#endif
