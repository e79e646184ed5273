// shape_of: the dims of its input as a 1-D integer tensor.
//
// The output depends only on the input's *shape* (traits.shape_of_like), which
// lets the flow skip it while that shape is unchanged and lets the kernel run
// without the input's data ever being read.
#include <cstdint>
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

std::vector<Layout> infer_shape_of(const ShapeInferContext& ctx) {
    const DataType out = parse_data_type(ctx.attrs.get_string("output_type"));
    const auto rank = static_cast<int64_t>(ctx.inputs.at(0).shape.rank());
    return {Layout(PartialShape{Dimension(rank)}, out)};
}

void shape_of_kernel(HostCall& call) {
    // Dims come from the layout only: the input buffer is never touched.
    const Shape& in = call.in_shape(0);
    if (call.out_type(0) == DataType::i64) {
        int64_t* out = call.out<int64_t>(0);
        for (size_t i = 0; i < in.rank(); ++i) out[i] = in[i];
    } else {
        int32_t* out = call.out<int32_t>(0);
        for (size_t i = 0; i < in.rank(); ++i) out[i] = static_cast<int32_t>(in[i]);
    }
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_shape(ImportContext& c) {
    if (!c.only_attrs({"start", "end"})) return false;
    // start/end select a slice of the dims; shape_of gives them all, so only
    // selections that cover every dim map.
    const int64_t rank = static_cast<int64_t>(c.rank(0));
    auto norm = [&](int64_t v) {
        if (v < 0) v += rank;
        return std::min(std::max<int64_t>(v, 0), rank);
    };
    const int64_t start = norm(c.i("start", 0));
    const int64_t end = c.has("end") ? norm(c.i("end", rank)) : rank;
    if (start != 0 || end != rank)
        return c.unsupported("Shape with start/end selecting dims [" + std::to_string(start) + ", " +
                             std::to_string(end) + ") of " + std::to_string(rank) + " (dynrt shape_of gives all dims)");
    c.set("output_type", std::string("i64"));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Shape", 1, 1, onnx_shape, "`start`/`end` only when they select every dim (after clamping)")};
}

void register_shape_of(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "shape_of", "Dims of the input as a 1-D i64/i32 tensor", 1, 1,
        {attr_string("output_type", std::string("i64"), {"i64", "i32"}, "data type of the output")}, infer_shape_of);
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
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(p.inputs.at(0).shape.rank(), limits);
    };
    add_ocl_impls(reg, "shape_of", spec, ocl_options({}, check_output));
}

}   // namespace

DYNRT_MODULE("shape_of", register_shape_of)
