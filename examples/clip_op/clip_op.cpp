// clip: an out-of-tree example op, built against the *installed* dynrt SDK.
//
// y = min(max(x, min), max), elementwise, with the bounds as attributes. It is
// deliberately small: the point of this folder is the packaging (find_package,
// dynrt_add_module, a module folder, a YAML pipeline), and the op shows the
// three things every op module provides: a definition with a pure
// shape-inference function, a host reference kernel, and one entry point.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

// Shape inference never looks at data: the output has the input's layout,
// dynamic dims included. Bad attributes are caught here, once per shape change,
// rather than in the kernel on every run.
std::vector<Layout> infer_clip(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    if (!is_floating(in.dtype)) throw Error("clip takes a floating-point input, got " + in.to_string());
    const double lo = ctx.attrs.get_float("min");
    const double hi = ctx.attrs.get_float("max");
    if (lo > hi) {
        ErrorContext where;
        where.field = "max";
        throw Error("clip needs min <= max, got min " + std::to_string(lo) + " and max " + std::to_string(hi), where);
    }
    return {Layout(in.shape, in.dtype)};
}

// Written as max-then-min, so a NaN input stays NaN (std::max/std::min return
// their first argument when a comparison with NaN is false).
double clip_value(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

void clip_kernel(HostCall& call) {
    const double lo = call.attrs().get_float("min");
    const double hi = call.attrs().get_float("max");
    const size_t n = call.in_shape(0).count();
    if (call.in_type(0) == DataType::f32) {
        const float* x = call.in<float>(0);
        float* y = call.out<float>(0);
        for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(clip_value(x[i], lo, hi));
        return;
    }
    // f16 (and any other floating type) through the generic decode/encode.
    for (size_t i = 0; i < n; ++i) call.set(0, i, clip_value(call.get(0, i), lo, hi));
}

void register_clip(ModuleRegistrar& reg) {
    OpDefinition def;
    def.name = "clip";
    def.doc = "Elementwise clamp of x to [min, max]";
    def.min_inputs = 1;
    def.max_inputs = 1;
    def.attrs = {attr_float("min", 0.0, "lower bound"), attr_float("max", 6.0, "upper bound")};
    def.infer = infer_clip;
    reg.add_op(def);

    HostImplOptions opts;
    opts.dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "clip", clip_kernel, opts);
}

}   // namespace

DYNRT_MODULE("clip", register_clip)
