// Comparing a computed tensor with a reference one, element by element, within
// a tolerance. The op harness (`dynrt test-op`) and the ONNX node tests
// (`dynrt onnx-test`) judge results with it.
#pragma once

#include <cstddef>
#include <string>

#include "dynrt/host_tensor.hpp"

namespace dynrt::tools {

struct Tolerance {
    double rel = 0;
    double abs = 0;
};
// f32: rel 1e-4 abs 1e-5; f16: rel 1e-2 abs 1e-3; f64: rel 1e-12 abs 1e-14; integers and bool: exact.
Tolerance default_tolerance(DataType t);

struct Comparison {
    bool ok = true;
    double max_abs = 0;     // max |got - ref| (inf on a dtype/shape mismatch)
    double max_rel = 0;     // max |got - ref| / |ref| over elements with ref != 0
    size_t worst = 0;       // flat index of the element furthest outside tolerance
    std::string mismatch;   // dtype/shape mismatch or the worst element, when !ok
};
// Element i passes when |got - ref| <= abs + rel * |ref|; NaN only equals NaN,
// an infinity only itself. Dtypes and shapes must match.
Comparison compare(const HostTensor& got, const HostTensor& ref, Tolerance tol);

}   // namespace dynrt::tools
