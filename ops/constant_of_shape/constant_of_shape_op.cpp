// constant_of_shape: a tensor of the shape held in input 0 (a 1-D i32/i64
// tensor, read by value during shape inference), every element `value`, of
// type `dtype` (ONNX ConstantOfShape). Until the shape's values are known the
// output has their count as rank and dynamic dims.
//
// `value` is a double: every f32, f16, i32, i8, u8 and boolean value is exact,
// i64 values up to 2^53 (the importer refuses larger ones).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "constant_of_shape_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const std::vector<std::string> kTypes = {"f32", "f16", "f64", "i32", "i64", "u8", "i8", "boolean"};

Error shape_error(const ShapeInferContext& ctx, const std::string& message) {
    return Error(message, node_context(ctx.node, "constant_of_shape", "shape"));
}

std::vector<Layout> infer_constant_of_shape(const ShapeInferContext& ctx) {
    const Layout& shape = ctx.inputs.at(0);
    const DataType t = parse_data_type(ctx.attrs.get_string("dtype"));
    if (shape.dtype != DataType::i32 && shape.dtype != DataType::i64)
        throw shape_error(ctx, "the shape (input 0) must be i32 or i64, got " + shape.to_string());
    if (shape.shape.rank() != 1) throw shape_error(ctx, "the shape (input 0) must be 1-D, got " + shape.to_string());
    const HostTensor* value = ctx.value(0);
    if (value == nullptr) {
        const Dimension& n = shape.shape[0];
        if (n.is_dynamic())
            throw shape_error(ctx,
                              "the shape (input 0) has dynamic length and unknown values, so the output rank is "
                              "unknown");
        if (static_cast<uint64_t>(n.get_length()) > kMaxRank)
            throw shape_error(ctx, "the shape (input 0) has length " + n.to_string() + ", above the " +
                                       std::to_string(kMaxRank) + " dims a shape may have");
        return {Layout(PartialShape::dynamic_of_rank(static_cast<size_t>(n.get_length())), t)};
    }
    const std::vector<int64_t> dims = value->to_int64();
    size_t count = 0;
    for (const int64_t d : dims)
        if (d < 0) throw shape_error(ctx, "the shape " + ints_to_string(dims) + " has a negative dim");
    if (!count_fits(dims, &count))
        throw shape_error(ctx, "the shape " + ints_to_string(dims) + " has more than 2^60 elements");
    std::vector<Dimension> out(dims.begin(), dims.end());
    return {Layout(PartialShape(std::move(out)), t)};
}

// ---- reference ------------------------------------------------------------

void constant_of_shape_kernel(HostCall& call) {
    const double v = call.attrs().get_float("value");
    const size_t n = call.out_shape(0).count();
    for (size_t i = 0; i < n; ++i) call.set(0, i, v);
}

// ---- OpenCL ---------------------------------------------------------------

// The bits of `v` stored as `t`, as an OpenCL literal of the element width.
std::string value_bits(DataType t, double v) {
    HostTensor one(t, Shape{});
    one.set_from_double(0, v);
    uint64_t bits = 0;
    std::memcpy(&bits, one.data(), byte_size(t));
    return std::to_string(bits) + "UL";
}

OclKernelSpec constant_of_shape_ocl_spec() {
    OclKernelSpec spec;
    spec.source = constant_of_shape_cl;
    spec.kernel_name = "constant_of_shape_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.outputs.at(0).dtype;
        return JitDefines{{"BITS_T", ocl_bits_type(t)}, {"VALUE_BITS", value_bits(t, p.attrs->get_float("value"))}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_constant_of_shape(ImportContext& c) {
    if (!c.only_attrs({"value"})) return false;
    c.use_inputs({0});
    const ImportAttr* a = c.attr("value");
    if (a == nullptr) return true;   // f32 0, the defaults
    if (a->kind != ImportAttr::Kind::Tensor || !a->tensor)
        return c.unsupported("ConstantOfShape's `value` is not a tensor");
    const HostTensor& t = *a->tensor;
    if (t.count() != 1)
        return c.unsupported("ConstantOfShape's `value` has " + std::to_string(t.count()) +
                             " elements; it must have one");
    const double v = t.get_as_double(0);
    if (t.dtype() == DataType::i64 && static_cast<double>(t.to_int64()[0]) != v)
        return c.unsupported("ConstantOfShape's i64 `value` " + std::to_string(t.to_int64()[0]) +
                             " is not exact as a double");
    c.set("value", v);
    c.set("dtype", std::string(to_string(t.dtype())));
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("ConstantOfShape", 1, 1, onnx_constant_of_shape,
                      "shape as input 0 (read by value); `value` tensor -> `value`, `dtype`")};
}

void register_constant_of_shape(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("constant_of_shape", "A tensor of the shape in input 0 filled with `value` of type `dtype`", 1, 1,
               {attr_float("value", 0.0, "every element's value"),
                attr_string("dtype", std::string("f32"), kTypes, "the output's data type")},
               infer_constant_of_shape);
    def.value_inputs = {0};
    def.imports = onnx_rules();
    reg.add_op(def);
    // Input 0 is the shape (i32/i64), output 0 any type: no dtype filter.
    add_host_impls(reg, "constant_of_shape", constant_of_shape_kernel);
    add_ocl_impls(reg, "constant_of_shape", constant_of_shape_ocl_spec());
}

}   // namespace

DYNRT_MODULE("constant_of_shape", register_constant_of_shape)
