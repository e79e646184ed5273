// non_max_suppression on OpenCL in three stages over the PAIRS (batch, class)
// pairs, each pair owning BOXES ints of `order` and of `tmp`:
//   nms_select: one work-item per pair: the candidates (score above the
//               threshold) sorted by descending score, ties by box index (a
//               stable merge sort through `tmp`), then greedy suppression; the
//               kept boxes stay at the front of the pair's `order`, their
//               number goes to counts[pair]. Work-item 0 also checks the run's
//               parameters and reports a bad one (report[1] its code, report[2]
//               and [3] the value's low and high 32 bits); no pair keeps a box.
//   nms_scan:   one work-item turns counts into the pairs' first rows, the
//               total into counts[PAIRS] and report[0];
//   nms_write:  one work-item per pair writes its rows (batch, class, box).
// The IoU test is the host reference's, step by step in float (no fused
// multiply-add, no division), so every impl decides a pair near the threshold
// alike.
#pragma OPENCL FP_CONTRACT OFF

#define BATCHES ((long)INPUT1_DIM5)
#define CLASSES ((long)INPUT1_DIM6)
#define BOXES ((long)INPUT1_DIM7)
#define PAIRS (BATCHES * CLASSES)

// std::min / std::max of the reference (the first operand wins unless the
// second compares strictly beyond it).
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))

// Box v[0..3] as (y_min, x_min, y_max, x_max). (Helpers take no dims: in the
// shape-agnostic build those read the kernel's shape_info argument.)
float4 corners_of(__global const float* v) {
#if CENTER_POINT_BOX
    return (float4)(v[1] - v[3] * 0.5f, v[0] - v[2] * 0.5f, v[1] + v[3] * 0.5f, v[0] + v[2] * 0.5f);
#else
    return (float4)(MIN_OF(v[0], v[2]), MIN_OF(v[1], v[3]), MAX_OF(v[0], v[2]), MAX_OF(v[1], v[3]));
#endif
}

bool overlaps(float4 a, float4 b, float threshold) {
    const float h = MIN_OF(a.s2, b.s2) - MAX_OF(a.s0, b.s0);
    const float w = MIN_OF(a.s3, b.s3) - MAX_OF(a.s1, b.s1);
    if (h <= 0 || w <= 0) return false;
    const float inter = h * w;
    const float area_a = (a.s2 - a.s0) * (a.s3 - a.s1);
    const float area_b = (b.s2 - b.s0) * (b.s3 - b.s1);
    const float uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter > threshold * uni;
}

// Stable merge sort of idx[0, n) by descending score, through tmp.
void sort_by_score(__global int* idx, __global int* tmp, int n, __global const float* score) {
    __global int* src = idx;
    __global int* dst = tmp;
    for (long width = 1; width < n; width *= 2) {
        for (long lo = 0; lo < n; lo += 2 * width) {
            const int mid = (int)min(lo + width, (long)n), hi = (int)min(lo + 2 * width, (long)n);
            int i = (int)lo, j = mid, k = (int)lo;
            while (i < mid && j < hi) dst[k++] = score[src[j]] > score[src[i]] ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        __global int* t = src;
        src = dst;
        dst = t;
    }
    if (src != idx)
        for (int k = 0; k < n; ++k) idx[k] = src[k];
}

// The run's parameters: an input where given, else the attribute's literal.
#if HAS_MAX_INPUT
#define MAX_PER_CLASS ((long)max_boxes[0])
#define MAX_ARG , __global const INPUT2_TYPE* max_boxes
#else
#define MAX_PER_CLASS ((long)MAX_BOXES_ATTR)
#define MAX_ARG
#endif
#if HAS_IOU_INPUT
#define IOU_THRESHOLD (iou[0])
#define IOU_ARG , __global const float* iou
#else
#define IOU_THRESHOLD IOU_ATTR
#define IOU_ARG
#endif
#if HAS_SCORE_INPUT
#define SCORE_THRESHOLD (score_threshold[0])
#define SCORE_ARG , __global const float* score_threshold
#else
#define SCORE_THRESHOLD SCORE_ATTR
#define SCORE_ARG
#endif

KERNEL(nms_select)(OPTIONAL_SHAPE_INFO_ARG __global const float* boxes, __global const float* scores MAX_ARG IOU_ARG
                       SCORE_ARG,
                   __global int* order, __global int* tmp, __global int* counts, __global int* report) {
    const long pair = get_global_id(0);
    const long max_per_class = MAX_PER_CLASS;
    const float iou_threshold = IOU_THRESHOLD;
    const bool bad_max = max_per_class < 0, bad_iou = !(iou_threshold >= 0.0f && iou_threshold <= 1.0f);
    if (pair == 0 && (bad_max || bad_iou)) {
        report[1] = bad_max ? BAD_MAX_CODE : BAD_IOU_CODE;
        report[2] = bad_max ? (int)(max_per_class & 0xffffffffL) : as_int(iou_threshold);
        report[3] = bad_max ? (int)(max_per_class >> 32) : 0;
    }
    if (pair >= PAIRS) return;
    if (bad_max || bad_iou) {
        counts[pair] = 0;
        return;
    }
    __global const float* batch_boxes = boxes + pair / CLASSES * BOXES * 4;
    const float score_threshold_value = SCORE_THRESHOLD;
    __global const float* score = scores + pair * BOXES;
    __global int* idx = order + pair * BOXES;
    int m = 0;
    for (int i = 0; i < (int)BOXES; ++i)
        if (score[i] > score_threshold_value) idx[m++] = i;
    sort_by_score(idx, tmp + pair * BOXES, m, score);
    const long limit = min(max_per_class, (long)m);
    int kept = 0;
    for (int k = 0; k < m && kept < limit; ++k) {
        const float4 box = corners_of(batch_boxes + idx[k] * 4);
        bool suppressed = false;
        for (int j = 0; j < kept && !suppressed; ++j)
            suppressed = overlaps(corners_of(batch_boxes + idx[j] * 4), box, iou_threshold);
        if (!suppressed) idx[kept++] = idx[k];
    }
    counts[pair] = kept;
}

KERNEL(nms_scan)(OPTIONAL_SHAPE_INFO_ARG __global int* counts, __global int* report) {
    int at = 0;
    for (long p = 0; p < PAIRS; ++p) {
        const int n = counts[p];
        counts[p] = at;
        at += n;
    }
    counts[PAIRS] = at;
    report[0] = at;
}

KERNEL(nms_write)(OPTIONAL_SHAPE_INFO_ARG __global const int* order, __global const int* counts,
                  __global long* output0) {
    const long pair = get_global_id(0);
    if (pair >= PAIRS) return;
    __global const int* idx = order + pair * BOXES;
    const long first = counts[pair], n = counts[pair + 1] - first;
    for (long k = 0; k < n; ++k) {
        __global long* row = output0 + (first + k) * 3;
        row[0] = pair / CLASSES;
        row[1] = pair % CLASSES;
        row[2] = idx[k];
    }
}
