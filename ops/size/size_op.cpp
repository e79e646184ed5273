// size: the number of elements of its input as a rank-0 integer tensor (ONNX
// Size).
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
#include "size_cl.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_size(const ShapeInferContext& ctx) {
    const DataType out = parse_data_type(ctx.attrs.get_string("output_type"));
    return {Layout(PartialShape{}, out)};
}

void size_kernel(HostCall& call) {
    // The count comes from the layout only: the input buffer is never touched.
    const Shape& in = call.in_shape(0);
    const auto n = static_cast<int64_t>(in.count());   // bounded: the input tensor exists
    if (call.out_type(0) == DataType::i64) call.out<int64_t>(0)[0] = n;
    else call.out<int32_t>(0)[0] = static_cast<int32_t>(n);
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_size(ImportContext& c) {
    if (!c.only_attrs({})) return false;
    c.set("output_type", std::string("i64"));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() { return {onnx_rule("Size", 1, 1, onnx_size, "output i64")}; }

std::string check_output(const KernelParams& p) {
    const DataType t = p.outputs.at(0).dtype;
    if (t != DataType::i64 && t != DataType::i32)
        return std::string("output type ") + to_string(t) + " is not i64 or i32";
    // A rank-0 input does not bind as a buffer argument here; the host impl
    // (which the flow prefers for shape_of-like ops anyway) serves it.
    if (p.inputs.at(0).shape.rank() == 0) return "a rank-0 input (its count is 1) runs on the host impl";
    if (p.inputs.at(0).shape.rank() > kShapeInfoDims)
        return "input rank " + std::to_string(p.inputs[0].shape.rank()) + " is above 8";
    return {};
}

void register_size(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("size", "Number of elements of the input as an i64/i32 scalar (ONNX Size)", 1, 1,
               {attr_string("output_type", std::string("i64"), {"i64", "i32"}, "data type of the output")}, infer_size);
    def.traits.shape_of_like = true;
    def.imports = onnx_rules();
    reg.add_op(def);

    add_host_impls(reg, "size", size_kernel, host_options({}, [](const KernelParams& p) -> std::string {
                       const DataType t = p.outputs.at(0).dtype;
                       if (t != DataType::i64 && t != DataType::i32)
                           return std::string("output type ") + to_string(t) + " is not i64 or i32";
                       return {};
                   }));

    // OpenCL: a single work-item. The flow prefers the host impl for
    // shape_of-like ops; this kernel serves nodes whose output feeds a device op.
    OclKernelSpec spec;
    spec.source = size_cl;
    spec.kernel_name = "size_ref";
    spec.defines = [](const KernelParams&, bool) { return JitDefines{}; };
    spec.dispatch = [](const KernelParams&, const OclDeviceLimits& limits) { return dispatch_1d(1, limits); };
    add_ocl_impls(reg, "size", spec, ocl_options({}, check_output));
}

}   // namespace

DYNRT_MODULE("size", register_size)
