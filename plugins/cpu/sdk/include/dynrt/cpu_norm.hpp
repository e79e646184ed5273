// Loops of the normalisations over contiguous blocks (instance_norm,
// group_norm): the moments of a block of f32 in two passes, then
// y = (x - mean) * k + bias per channel. Written so that they vectorise without
// reassociating float math: the sums run in kLanes independent double
// accumulators (the reference sums in double; a long block summed in float
// would drift from it). Inlined into the op's own DYNRT_CPU_CLONES block loop.
#pragma once

#include <cmath>
#include <cstddef>

namespace dynrt::norm {

constexpr size_t kLanes = 8;

struct Moments {
    double mean = 0, var = 0;   // var biased (divided by the element count)
};

// Sum of f(x[i]) over [0, n) in kLanes accumulators, then the tail.
template <class F>
[[gnu::always_inline]] inline double lane_sum(const float* x, size_t n, F f) {
    double acc[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (size_t l = 0; l < kLanes; ++l) acc[l] += f(x[i + l]);
    double s = 0;
    for (; i < n; ++i) s += f(x[i]);
    for (size_t l = 0; l < kLanes; ++l) s += acc[l];
    return s;
}

// Mean, then the biased variance as the mean of (x - mean)^2 (n >= 1).
[[gnu::always_inline]] inline Moments moments(const float* x, size_t n) {
    Moments m;
    m.mean = lane_sum(x, n, [](float v) { return static_cast<double>(v); }) / static_cast<double>(n);
    const double mean = m.mean;
    m.var = lane_sum(x, n,
                     [mean](float v) {
                         const double d = static_cast<double>(v) - mean;
                         return d * d;
                     }) /
            static_cast<double>(n);
    return m;
}

// y[i] = (x[i] - mean) * k + bias, k = inv * scale. The mean is subtracted
// first, as the reference does (x * k + (bias - mean * k) would cancel digits
// when the mean is large against the spread), and in two floats: x - hi is
// exact for x near the mean, then lo (the rest of the double mean) follows.
[[gnu::always_inline]] inline void scale_shift(const float* x, float* y, size_t n, double mean, float k, float bias) {
    const auto hi = static_cast<float>(mean);
    const auto lo = static_cast<float>(mean - static_cast<double>(hi));
    for (size_t i = 0; i < n; ++i) y[i] = ((x[i] - hi) - lo) * k + bias;
}

// inv = 1 / sqrt(var + epsilon) in double, as the reference takes it.
inline double inv_stddev(const Moments& m, double epsilon) { return 1.0 / std::sqrt(m.var + epsilon); }

}   // namespace dynrt::norm
