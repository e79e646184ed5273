// one_hot: a one-hot encoding of `indices` (ONNX OneHot). The output has the
// shape of `indices` with a new dim of length `depth` inserted at `axis`;
// out[..., d, ...] is values[1] (on) where the index at that position, counted
// from the end when negative, equals d, else values[0] (off). An index outside
// [-depth, depth) gives an all-off line. Floating indices are truncated toward
// zero first, as ONNX casts them to integers.
//
// Inputs: indices (any numeric type), depth (a scalar or one-element tensor
// of any numeric type, truncated; read by value during shape inference),
// values ([off, on], the output type). Output elements are copied from
// `values` bit for bit.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "one_hot_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "one_hot";

bool is_numeric(DataType t) { return t != DataType::boolean; }

// Position of the new dim in the output (rank of indices + 1).
size_t axis_of(const Attributes& a, size_t indices_rank) {
    return static_cast<size_t>(normalize_axis(a.get_int("axis"), static_cast<int64_t>(indices_rank) + 1, "axis"));
}

Dimension depth_of(const ShapeInferContext& ctx) {
    const Layout& l = ctx.inputs.at(1);
    const ErrorContext where = node_context(ctx.node, kOp, "depth");
    if (!is_numeric(l.dtype)) throw Error("depth (input 1) must be numeric, got " + l.to_string(), where);
    if (l.shape.rank() > 1 || (l.shape.rank() == 1 && l.shape[0].is_static() && l.shape[0].get_length() != 1))
        throw Error("depth (input 1) must be a scalar or hold one element, got " + l.to_string(), where);
    const HostTensor* value = ctx.value(1);
    if (value == nullptr) return Dimension();
    if (value->count() != 1)
        throw Error("depth (input 1) must hold one element, got " + value->shape().to_string(), where);
    const double d = std::trunc(value->get_as_double(0));
    if (!(d >= 0) || d > static_cast<double>(kMaxElements))
        throw Error("depth " + std::to_string(value->get_as_double(0)) + " is negative or not a count", where);
    return Dimension(static_cast<int64_t>(d));
}

std::vector<Layout> infer_one_hot(const ShapeInferContext& ctx) {
    const Layout& indices = ctx.inputs.at(0);
    const Layout& values = ctx.inputs.at(2);
    if (!is_numeric(indices.dtype))
        throw Error("indices must be numeric, got " + indices.to_string(), node_context(ctx.node, kOp, "indices"));
    if (values.shape.rank() != 1 || (values.shape[0].is_static() && values.shape[0].get_length() != 2))
        throw Error("values (input 2) must be [off, on], 2 elements, got " + values.to_string(),
                    node_context(ctx.node, kOp, "values"));
    size_t axis = 0;
    try {
        axis = axis_of(ctx.attrs, indices.shape.rank());
    } catch (const Error& e) {
        throw Error(e.message(), node_context(ctx.node, kOp, "axis"));
    }
    std::vector<Dimension> out(indices.shape.begin(), indices.shape.end());
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), depth_of(ctx));
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.min());
    size_t count = 0;
    if (!count_fits(known, &count))
        throw Error("one_hot of " + indices.to_string() + " has more than 2^60 elements",
                    node_context(ctx.node, kOp, "depth"));
    return {Layout(PartialShape(std::move(out)), values.dtype)};
}

// ---- reference ------------------------------------------------------------

void one_hot_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t axis = axis_of(call.attrs(), call.in_shape(0).rank());
    const size_t depth = static_cast<size_t>(out[axis]), inner = dims_product(out, axis + 1, out.rank());
    const size_t count = out.count();
    if (count == 0) return;
    const size_t width = byte_size(call.out_type(0));
    const auto* values = static_cast<const unsigned char*>(call.in_raw(2));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < count; ++o) {
        const size_t d = o / inner % depth, at = o / (inner * depth) * inner + o % inner;
        double v = std::trunc(call.get(0, at));   // exact for every index type but i64 past 2^53
        if (v < 0) v += static_cast<double>(depth);
        std::memcpy(dst + o * width, values + (v == static_cast<double>(d) ? width : 0), width);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclKernelSpec one_hot_ocl_spec() {
    OclKernelSpec spec;
    spec.source = one_hot_cl;
    spec.kernel_name = "one_hot_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType it = p.inputs.at(0).dtype;
        const size_t rank = p.outputs.at(0).shape.rank();
        const size_t axis = axis_of(*p.attrs, rank - 1);
        return JitDefines{{"ELEM_T", ocl_bits_type(p.outputs.at(0).dtype)},
                          {"DATA_F16", "0"},
                          {"IN_F16", it == DataType::f16 ? "1" : "0"},
                          {"INDEX_FLOAT", is_floating(it) ? "1" : "0"},
                          {"DEPTH", jit_dims_product("OUTPUT0", rank, axis, axis + 1)},
                          {"INNER", jit_dims_product("OUTPUT0", rank, axis + 1, rank)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

std::string check_ocl(const KernelParams& p) {
    if (p.outputs.at(0).shape.rank() > kOclMaxRank)
        return "output rank " + std::to_string(p.outputs.at(0).shape.rank()) + " is above " +
               std::to_string(kOclMaxRank);
    return {};
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_one_hot(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.set("axis", c.i("axis", -1));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_one_hot(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "One-hot encoding of indices along a new axis of length depth (ONNX OneHot)", 3, 3,
        {attr_int("axis", -1, "position of the new dim in the output; negative counts from the end")}, infer_one_hot);
    def.value_inputs = {1};
    def.imports = {onnx_rule("OneHot", 3, 3, onnx_one_hot, "`axis`; depth as input 1 (read by value)")};
    reg.add_op(def);
    add_host_impls(reg, kOp, one_hot_kernel);
    add_ocl_impls(reg, kOp, one_hot_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("one_hot", register_one_hot)
