// det: the determinant of each square matrix in the last two dims of an
// [..., M, M] input (ONNX Det); the output has the leading dims [...].
// Computed by LU decomposition with partial pivoting: the product of the
// pivots, negated once per row swap; a matrix whose best pivot is 0 is
// singular and gives 0. An empty matrix (M = 0) has determinant 1.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "det_cl.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "det";

std::vector<Layout> infer_det(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const auto fail = [&](const std::string& why) {
        return Error("input " + in.to_string() + " " + why, node_context(ctx.node, kOp, "input"));
    };
    if (!is_floating(in.dtype)) throw fail("is not f32, f16 or f64");
    const size_t rank = in.shape.rank();
    if (rank < 2) throw fail("has rank " + std::to_string(rank) + "; det needs [..., M, M]");
    if (!in.shape[rank - 2].compatible(in.shape[rank - 1])) throw fail("holds no square matrices");
    return {Layout(PartialShape(std::vector<Dimension>(in.shape.begin(), in.shape.end() - 2)), in.dtype)};
}

// ---- reference ------------------------------------------------------------

// Determinant of the m x m row-major matrix `a` (overwritten by its LU factors).
double lu_det(std::vector<double>& a, size_t m) {
    double det = 1;
    for (size_t k = 0; k < m; ++k) {
        size_t pivot = k;
        for (size_t i = k + 1; i < m; ++i)
            if (std::fabs(a[i * m + k]) > std::fabs(a[pivot * m + k])) pivot = i;
        if (a[pivot * m + k] == 0) return 0;
        if (pivot != k) {
            for (size_t j = 0; j < m; ++j) std::swap(a[k * m + j], a[pivot * m + j]);
            det = -det;
        }
        det *= a[k * m + k];
        for (size_t i = k + 1; i < m; ++i) {
            const double f = a[i * m + k] / a[k * m + k];
            for (size_t j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

void det_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const auto m = static_cast<size_t>(s[s.rank() - 1]);
    const size_t size = m * m, matrices = call.out_shape(0).count();
    std::vector<double> a(size);
    for (size_t b = 0; b < matrices; ++b) {
        for (size_t e = 0; e < size; ++e) a[e] = call.get(0, b * size + e);
        call.set(0, b, lu_det(a, m));
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// One FLOAT_ACC (at most a double) per element of every matrix, at least one.
std::vector<size_t> det_scratch(const KernelParams& p) {
    const size_t n = std::max<size_t>(p.inputs.at(0).count(), 1);
    return {checked_mul(n, sizeof(double), "det scratch bytes")};
}

OclMultiKernelSpec det_ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = det_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        return JitDefines{jit_data_f16(t), {"USES_F64", t == DataType::f64 ? "1" : "0"}};
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{{"det_lu", {OclArgRef::input(0), OclArgRef::output(0), OclArgRef::scratch(0)}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = dispatch_1d(p.outputs.at(0).count(), l);
    };
    spec.scratch_bytes = det_scratch;
    return spec;
}

void register_det(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "Determinant of each [M, M] matrix in the last two dims (ONNX Det)", 1, 1, {}, infer_det);
    def.imports = {onnx_rule("Det", 1, 1, import_plain(), "as it is")};
    reg.add_op(def);
    const std::vector<DataType> floats{DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, kOp, det_kernel, host_options(floats));
    add_ocl_multi_impls(reg, kOp, det_ocl_spec(),
                        ocl_options(floats, [](const KernelParams& p) { return check_max_rank(p, kOclMaxRank); }));
}

}   // namespace

DYNRT_MODULE("det", register_det)
