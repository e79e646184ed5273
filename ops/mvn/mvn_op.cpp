// mvn: mean-variance normalisation over `axes` (ONNX MeanVarianceNormalization):
//   y = (x - mean) / (sqrt(var) + epsilon)
// with the mean and the biased variance taken over the named axes, one group
// per position of the other dims. epsilon is added to the standard deviation,
// not to the variance, as ONNX's definition of the op does (1e-9).
//
// The axes need not be adjacent: a group's elements are addressed by splitting
// a group index over the kept dims and an element index over the reduced
// ones. The variance is taken in a second pass over (x - mean)^2; the
// reference accumulates in double.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_axes.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "mvn_cl.hpp"

namespace {

using namespace dynrt;

// reduced[d]: dim d is one of the axes.
std::vector<bool> reduced_dims(const std::string& node, const Attributes& a, const PartialShape& s) {
    OpAxes axes;
    axes.values = a.get_ints("axes");
    axes.source = "the `axes` attribute";
    std::vector<bool> reduced(s.rank(), false);
    for (size_t d : normalize_axes(node, "mvn", axes, s.rank(), AxesOf::input, s)) reduced[d] = true;
    return reduced;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    if (!is_floating(x.dtype))
        throw Error("mvn takes a floating-point x, got " + x.to_string(), node_context(ctx.node, "mvn", "x"));
    reduced_dims(ctx.node, ctx.attrs, x.shape);
    return {Layout(x.shape, x.dtype)};
}

// ---- reference ------------------------------------------------------------

// Flat index of element j of group g: g split over the kept dims, j over the
// reduced ones, both row-major.
size_t flat_index(const Shape& s, const std::vector<bool>& reduced, size_t g, size_t j) {
    size_t offset = 0, stride = 1;
    for (size_t d = s.rank(); d-- > 0;) {
        const auto n = static_cast<size_t>(s[d]);
        size_t& rest = reduced[d] ? j : g;
        offset += rest % n * stride;
        rest /= n;
        stride *= n;
    }
    return offset;
}

void reference(HostCall& call) {
    const Shape& s = call.in_shape(0);
    if (s.count() == 0) return;
    const std::vector<bool> reduced = reduced_dims(call.node(), call.attrs(), PartialShape(s));
    const double eps = call.attrs().get_float("epsilon");
    size_t n = 1;
    for (size_t d = 0; d < s.rank(); ++d)
        if (reduced[d]) n *= static_cast<size_t>(s[d]);
    const size_t groups = s.count() / n;
    for (size_t g = 0; g < groups; ++g) {
        double sum = 0.0, sq = 0.0;
        for (size_t j = 0; j < n; ++j) sum += call.get(0, flat_index(s, reduced, g, j));
        const double mean = sum / static_cast<double>(n);
        for (size_t j = 0; j < n; ++j) {
            const double d = call.get(0, flat_index(s, reduced, g, j)) - mean;
            sq += d * d;
        }
        const double den = std::sqrt(sq / static_cast<double>(n)) + eps;
        for (size_t j = 0; j < n; ++j) {
            const size_t i = flat_index(s, reduced, g, j);
            call.set(0, i, (call.get(0, i) - mean) / den);
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

// Work-items of the work-group that reduces one group; the kernel's local
// buffer holds 64, the largest. A one-element group gets a one-item group:
// PoCL crashed running a 16-item group over a length that is the literal 1
// (the static build).
constexpr size_t kMaxGroup = 64;

// The reduced dims as a mask over the kernel's 8 right-aligned dims, and
// whether they are the trailing dims (each group then is contiguous).
std::pair<unsigned, bool> reduced_mask(const KernelParams& p) {
    const PartialShape& s = p.inputs.at(0).shape;
    const std::vector<bool> reduced = reduced_dims(p.node, *p.attrs, s);
    unsigned mask = 0;
    bool trailing = true, seen = false;
    for (size_t d = 0; d < s.rank(); ++d) {
        if (reduced[d]) mask |= 1u << (kShapeInfoDims - s.rank() + d);
        if (reduced[d]) seen = true;
        else if (seen) trailing = false;
    }
    return {mask, trailing};
}

std::pair<size_t, size_t> groups_and_size(const KernelParams& p) {
    const Shape s = p.inputs.at(0).get_shape();
    const std::vector<bool> reduced = reduced_dims(p.node, *p.attrs, PartialShape(s));
    size_t groups = 1, n = 1;
    for (size_t d = 0; d < s.rank(); ++d) (reduced[d] ? n : groups) *= static_cast<size_t>(s[d]);
    return {groups, n};
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = mvn_cl;
    spec.kernel_name = "mvn_groups";
    spec.defines = [](const KernelParams& p, bool) {
        const auto [mask, trailing] = reduced_mask(p);
        std::string size = "(1";
        for (unsigned d = 0; d < kShapeInfoDims; ++d)
            if (mask & (1u << d)) size += "*INPUT0_DIM" + std::to_string(d);
        return JitDefines{{"ACC_T", "FLOAT_ACC"},
                          {"REDUCED_MASK", std::to_string(mask) + "u"},
                          {"TRAILING", trailing ? "1" : "0"},
                          {"GROUP_LEN", size + ")"},
                          {"EPSILON", jit_float_literal(p.attrs->get_float("epsilon"))},
                          {"GROUP_MAX", std::to_string(kMaxGroup)},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    // One work-group per group; none when x is empty.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const auto [groups, n] = groups_and_size(p);
        size_t g = n >= 256 ? kMaxGroup : n > 1 ? 16 : 1;
        while (g > 1 && limits.max_work_group_size != 0 && g > limits.max_work_group_size) g /= 2;
        OclDispatch d;
        d.gws[0] = n == 0 ? 0 : checked_mul(groups, g, "mvn work size");
        d.lws[0] = g;
        return d;
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_mvn(ImportContext& c) {
    if (!c.only_attrs({"axes"})) return false;
    c.set("axes", c.has("axes") ? c.ints("axes") : std::vector<int64_t>{0, 2, 3});
    c.set("epsilon", 1e-9);
    c.use_inputs({0});
    return true;
}

void register_mvn(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "mvn", "Mean-variance normalisation over `axes`: (x - mean) / (std + epsilon)", 1, 1,
        {attr_ints("axes", std::vector<int64_t>{0, 2, 3}, "dims to normalise over (negative count from the end)"),
         attr_float("epsilon", 1e-9, "added to the standard deviation")},
        infer);
    def.imports = {onnx_rule("MeanVarianceNormalization", 1, 1, onnx_mvn, "`axes` (default [0, 2, 3]); epsilon 1e-9")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "mvn", reference, host_options(dtypes));
    add_ocl_impls(reg, "mvn", ocl_spec(), ocl_options(dtypes, validate_broadcast_rank));
}

}   // namespace

DYNRT_MODULE("mvn", register_mvn)
