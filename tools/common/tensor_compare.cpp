// Comparison of a result with the reference, per-dtype default tolerances.
#include <cmath>
#include <cstdio>

#include "tensor_compare.hpp"

namespace dynrt::tools {

Tolerance default_tolerance(DataType t) {
    switch (t) {
        case DataType::f32: return {1e-4, 1e-5};
        // f16 has an 11-bit significand: one rounding step is ~5e-4 relative,
        // and impls may accumulate in f16.
        case DataType::f16: return {1e-2, 1e-3};
        // f64: impls may evaluate in another order (fma, a device's math
        // library): a few ulps of 2^-52 apart, far below f32's tolerance.
        case DataType::f64: return {1e-12, 1e-14};
        default: return {0.0, 0.0};   // integers and bool are exact
    }
}

Comparison compare(const HostTensor& got, const HostTensor& ref, Tolerance tol) {
    Comparison c;
    if (got.dtype() != ref.dtype()) {
        c.ok = false;
        c.max_abs = c.max_rel = INFINITY;
        c.mismatch = std::string("dtype ") + to_string(got.dtype()) + ", reference " + to_string(ref.dtype());
        return c;
    }
    if (got.shape() != ref.shape()) {
        c.ok = false;
        c.max_abs = c.max_rel = INFINITY;
        c.mismatch = "shape " + got.shape().to_string() + ", reference " + ref.shape().to_string();
        return c;
    }
    double worst_excess = 0;   // how far the worst element is outside tolerance
    for (size_t i = 0; i < ref.count(); ++i) {
        const double g = got.get_as_double(i), r = ref.get_as_double(i);
        double diff = 0;
        bool bad = false;
        if (std::isnan(g) || std::isnan(r)) {
            bad = std::isnan(g) != std::isnan(r);
            diff = bad ? INFINITY : 0;
        } else if (std::isinf(g) || std::isinf(r)) {
            bad = g != r;
            diff = bad ? INFINITY : 0;
        } else {
            diff = std::fabs(g - r);
            bad = diff > tol.abs + tol.rel * std::fabs(r);
        }
        if (diff > c.max_abs) c.max_abs = diff;
        if (r != 0 && !std::isnan(r)) {
            const double rel = diff / std::fabs(r);
            if (rel > c.max_rel) c.max_rel = rel;
        }
        if (bad) {
            const double excess = std::isinf(diff) ? INFINITY : diff - (tol.abs + tol.rel * std::fabs(r));
            if (c.ok || excess > worst_excess) {
                worst_excess = excess;
                c.worst = i;
                char buf[160];
                std::snprintf(buf, sizeof(buf), "element %zu: got %.9g, reference %.9g", i, g, r);
                c.mismatch = buf;
            }
            c.ok = false;
        }
    }
    return c;
}

}   // namespace dynrt::tools
