// roi_align on OpenCL, two stages.
//
// roi_align_check: one work-group finds the first roi whose batch index lies
// outside [0, N) and writes roi + 1 and the index's low and high 32 bits
// into the report (left zero when every index is good); the host raises the
// error after the run, as the host impls do.
//
// roi_align_ref: one work-item per output element (roi, c, ph, pw). The
// work-item reads its roi and batch index, derives the bin grid as the
// host reference does (in ACC_T, FLOAT_ACC: double where the device has fp64,
// so that adaptive sample counts agree) and walks the bin's samples. A batch
// index out of range writes 0 and reads nothing (the check reports it).
//
// From the host: POOLED_H, POOLED_W, SAMPLING_RATIO (0: adaptive),
// SPATIAL_SCALE, HALF_PIXEL, MAX_MODE, MAX_SAMPLES, CHECK_GROUP (the check's
// local buffer, at least its work-group size, a power of two), DATA_F16 (x,
// rois and y share the type); x [N, C, H, W] is INPUT0_DIM4..7.

#define ACC_T FLOAT_ACC

// The low neighbour and fraction of a sample along an axis of `size`; false
// when the sample lies more than one element outside.
inline bool sample_axis(ACC_T v, long size, long* low, ACC_T* frac) {
    if (!(v >= (ACC_T)-1 && v <= (ACC_T)size)) return false;   // NaN too
    v = max(v, (ACC_T)0);
    *low = (long)v;
    if (*low >= size - 1) {
        *low = size - 1;
        v = (ACC_T)*low;
    }
    *frac = v - (ACC_T)*low;
    return true;
}

// ceil(per_bin) adaptive samples, none for an empty or inverted roi, and none
// past MAX_SAMPLES or for a non-finite box (where the host impls raise an error).
inline long adaptive_samples(ACC_T per_bin) {
    const ACC_T s = ceil(per_bin);
    return s > (ACC_T)0 && s <= (ACC_T)MAX_SAMPLES ? (long)s : 0;
}

// Consecutive work-items read consecutive indices; each keeps the first bad
// roi of its stride, and a local-memory min reduction gives the group's.
KERNEL(roi_align_check)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT2_TYPE* input2, __global int* report) {
    __local long first[CHECK_GROUP];
    const long rois = (long)INPUT2_LENGTH;
    const uint lid = get_local_id(0), step = get_local_size(0);
    long mine = rois;
    for (long r = lid; r < rois; r += step) {
        const long b = (long)input2[r];
        if (b < 0 || b >= (long)INPUT0_DIM4) {
            mine = r;
            break;
        }
    }
    first[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = step / 2; s > 0; s >>= 1) {
        if (lid < s) first[lid] = min(first[lid], first[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && first[0] < rois) {
        const long b = (long)input2[first[0]];
        report[0] = (int)(first[0] + 1);
        report[1] = (int)(b & 0xffffffffL);
        report[2] = (int)(b >> 32);
    }
}

KERNEL(roi_align_ref)
(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global const INPUT1_TYPE* input1,
 __global const INPUT2_TYPE* input2, __global OUTPUT0_TYPE* output0) {
    const ulong o = get_global_id(0);
    if (o >= (ulong)OUTPUT0_LENGTH) return;   // the global size is rounded up
    const long channels = INPUT0_DIM5, height = INPUT0_DIM6, width = INPUT0_DIM7;
    const long pw = o % POOLED_W, ph = o / POOLED_W % POOLED_H;
    const long c = o / (POOLED_W * POOLED_H) % channels, r = o / (POOLED_W * POOLED_H) / channels;
    const long b = (long)input2[r];
    if (b < 0 || b >= (long)INPUT0_DIM4) {
        STORE(output0, o, 0.0f);
        return;
    }
    const ACC_T scale = (ACC_T)SPATIAL_SCALE, offset = HALF_PIXEL ? (ACC_T)0.5 : (ACC_T)0;
    const ACC_T x0 = (ACC_T)LOAD(input1, r * 4) * scale - offset, y0 = (ACC_T)LOAD(input1, r * 4 + 1) * scale - offset;
    ACC_T w = (ACC_T)LOAD(input1, r * 4 + 2) * scale - offset - x0;
    ACC_T h = (ACC_T)LOAD(input1, r * 4 + 3) * scale - offset - y0;
    if (!HALF_PIXEL) {   // output_half_pixel makes malformed rois 1 x 1
        w = max(w, (ACC_T)1);
        h = max(h, (ACC_T)1);
    }
    const ACC_T bin_h = h / POOLED_H, bin_w = w / POOLED_W;
    const long samples_h = SAMPLING_RATIO > 0 ? SAMPLING_RATIO : adaptive_samples(h / POOLED_H);
    const long samples_w = SAMPLING_RATIO > 0 ? SAMPLING_RATIO : adaptive_samples(w / POOLED_W);
    const ACC_T count = (ACC_T)max(samples_h * samples_w, 1L);
    const ulong plane = (ulong)(b * channels + c) * (ulong)(height * width);
    ACC_T sum = 0, best = 0;
    bool any = false;
    for (long iy = 0; iy < samples_h; ++iy)
        for (long ix = 0; ix < samples_w; ++ix) {
            const ACC_T y = y0 + (ph + (iy + (ACC_T)0.5) / samples_h) * bin_h;
            const ACC_T x = x0 + (pw + (ix + (ACC_T)0.5) / samples_w) * bin_w;
            long yl = 0, xl = 0;
            ACC_T ly = 0, lx = 0;
            ACC_T v0 = 0, v1 = 0, v2 = 0, v3 = 0;
            if (sample_axis(y, height, &yl, &ly) && sample_axis(x, width, &xl, &lx)) {
                const long yh = min(yl + 1, height - 1), xh = min(xl + 1, width - 1);
                v0 = (1 - ly) * (1 - lx) * (ACC_T)LOAD(input0, plane + (ulong)(yl * width + xl));
                v1 = (1 - ly) * lx * (ACC_T)LOAD(input0, plane + (ulong)(yl * width + xh));
                v2 = ly * (1 - lx) * (ACC_T)LOAD(input0, plane + (ulong)(yh * width + xl));
                v3 = ly * lx * (ACC_T)LOAD(input0, plane + (ulong)(yh * width + xh));
            }
            const ACC_T m = max(max(v0, v1), max(v2, v3));
            best = any ? max(best, m) : m;
            any = true;
            sum += v0 + v1 + v2 + v3;
        }
    STORE(output0, o, MAX_MODE ? best : sum / count);
}
