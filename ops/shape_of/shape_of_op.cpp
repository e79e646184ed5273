// shape_of: the dims of its input as a 1-D integer tensor, optionally only
// dims [start, end) (ONNX Shape-15: negative values count from the end, both
// are clamped to [0, rank]).
//
// The output depends only on the input's *shape* (traits.shape_of_like), which
// lets the flow skip it while that shape is unchanged and lets the kernel run
// without the input's data ever being read.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "shape_of_cl.hpp"

namespace {

using namespace dynrt;

constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();

// The dims [first, last) of a rank-`rank` input that the `start` and `end`
// attributes select: negative values count from the end, then both are
// clamped to [0, rank]; an empty range when last <= first.
struct DimRange {
    int64_t first = 0, last = 0;
    int64_t count() const { return std::max<int64_t>(last - first, 0); }
};

DimRange dim_range(const Attributes& attrs, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    const auto clamp = [r](int64_t v) { return std::min(std::max<int64_t>(v < 0 ? v + r : v, 0), r); };
    return {clamp(attrs.get_int("start")), clamp(attrs.get_int("end"))};
}

std::vector<Layout> infer_shape_of(const ShapeInferContext& ctx) {
    const DataType out = parse_data_type(ctx.attrs.get_string("output_type"));
    const DimRange dims = dim_range(ctx.attrs, ctx.inputs.at(0).shape.rank());
    return {Layout(PartialShape{Dimension(dims.count())}, out)};
}

void shape_of_kernel(HostCall& call) {
    // Dims come from the layout only: the input buffer is never touched.
    const Shape& in = call.in_shape(0);
    const DimRange dims = dim_range(call.attrs(), in.rank());
    for (int64_t i = dims.first; i < dims.last; ++i) {
        const auto o = static_cast<size_t>(i - dims.first);
        if (call.out_type(0) == DataType::i64) call.out<int64_t>(0)[o] = in[static_cast<size_t>(i)];
        else call.out<int32_t>(0)[o] = static_cast<int32_t>(in[static_cast<size_t>(i)]);
    }
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_shape(ImportContext& c) {
    if (!c.only_attrs({"start", "end"})) return false;
    if ((c.has("start") || c.has("end")) && c.opset() < 15)
        return c.unsupported("Shape `start`/`end` at opset " + std::to_string(c.opset()) +
                             " (they come with opset 15)");
    c.set("output_type", std::string("i64"));
    c.set("start", c.i("start", 0));
    c.set("end", c.i("end", kToTheEnd));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Shape", 1, 1, onnx_shape, "`start`, `end` (opset 15; negative and clamped)")};
}

void register_shape_of(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "shape_of", "Dims [start, end) of the input as a 1-D i64/i32 tensor (ONNX Shape)", 1, 1,
        {attr_string("output_type", std::string("i64"), {"i64", "i32"}, "data type of the output"),
         attr_int("start", 0, "first dim given; negative counts from the end; clamped to [0, rank]"),
         attr_int("end", kToTheEnd, "dim after the last given; negative counts from the end; clamped to [0, rank]")},
        infer_shape_of);
    def.traits.shape_of_like = true;
    def.imports = onnx_rules();
    reg.add_op(def);

    const auto check_output = [](const KernelParams& p) -> std::string {
        const DataType t = p.outputs.at(0).dtype;
        if (t != DataType::i64 && t != DataType::i32)
            return std::string("output type ") + to_string(t) + " is not i64 or i32";
        return {};
    };
    add_host_impls(reg, "shape_of", shape_of_kernel, host_options({}, check_output));

    // OpenCL: one work-item per dim. The flow prefers the host impl for
    // shape_of (its output usually feeds shape inference on the host); this
    // kernel serves the nodes whose output feeds a device op.
    OclKernelSpec spec;
    spec.source = shape_of_cl;
    spec.kernel_name = "shape_of_ref";
    // The rank is fixed per node, so the selected range is a constant of
    // both builds.
    spec.defines = [](const KernelParams& p, bool) {
        const DimRange dims = dim_range(*p.attrs, p.inputs.at(0).shape.rank());
        return JitDefines{{"FIRST_DIM", std::to_string(dims.first)}, {"DIM_COUNT", std::to_string(dims.count())}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(static_cast<size_t>(dim_range(*p.attrs, p.inputs.at(0).shape.rank()).count()), limits);
    };
    add_ocl_impls(reg, "shape_of", spec, ocl_options({}, check_output));
}

}   // namespace

DYNRT_MODULE("shape_of", register_shape_of)
