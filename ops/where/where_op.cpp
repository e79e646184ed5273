// where: y = condition ? x : y elementwise (ONNX Where), the three inputs
// broadcast together as numpy does. `condition` is boolean (any non-zero
// byte reads as true); `x` and `y` share one data type, any of them, and the
// output has it. Elements are copied bit for bit (NaN payloads, -0 kept).
#include <algorithm>
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
#include "where_cl.hpp"

namespace {

using namespace dynrt;

const char* const kNames[] = {"condition", "x", "y"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    ErrorContext where;
    where.node = ctx.node;
    where.op = "where";
    where.field = field;
    return Error(message, where);
}

// Numpy broadcasting through the SDK's broadcast_shapes. Where that can only
// answer "dynamic" (two dynamic dims), the result is one of the two dims, so
// it still lies within their joint bounds.
PartialShape broadcast_bounded(const PartialShape& a, const PartialShape& b) {
    PartialShape out = broadcast_shapes(a, b);
    const size_t rank = out.rank();
    for (size_t d = 0; d < rank; ++d) {
        if (out[d] != Dimension::dynamic()) continue;
        const Dimension da = d + a.rank() >= rank ? a[d + a.rank() - rank] : Dimension(1);
        const Dimension db = d + b.rank() >= rank ? b[d + b.rank() - rank] : Dimension(1);
        const int64_t lo = std::min(da.min(), db.min());
        const bool bounded = da.max() != Dimension::kUnbounded && db.max() != Dimension::kUnbounded;
        if (bounded) out[d] = Dimension(lo, std::max(da.max(), db.max()));
        else if (lo > 0) out[d] = Dimension(lo, Dimension::kUnbounded);
    }
    return out;
}

std::string shapes_of(const ShapeInferContext& ctx) {
    std::string s;
    for (size_t i = 0; i < 3; ++i) s += std::string(i ? ", " : "") + kNames[i] + " " + ctx.inputs[i].shape.to_string();
    return s;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() != 3)
        throw node_error(ctx, "inputs",
                         "where takes 3 inputs (condition, x, y), got " + std::to_string(ctx.inputs.size()));
    const Layout& c = ctx.inputs[0];
    const Layout& x = ctx.inputs[1];
    const Layout& y = ctx.inputs[2];
    if (c.dtype != DataType::boolean)
        throw node_error(ctx, "inputs", "input 0 (condition) is " + c.to_string() + "; it must be boolean");
    if (x.dtype != y.dtype)
        throw node_error(ctx, "inputs",
                         "inputs x and y must have one data type, got x " + x.to_string() + " and y " + y.to_string());
    PartialShape out;
    try {
        out = broadcast_bounded(broadcast_bounded(c.shape, x.shape), y.shape);
    } catch (const Error& e) {
        throw node_error(ctx, "inputs", "inputs " + shapes_of(ctx) + " cannot be broadcast (" + e.message() + ")");
    }
    // Checked size: the known dims of the result must fit an element count.
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.is_static() ? d.get_length() : d.min());
    size_t count = 0;
    if (!count_fits(known, &count))
        throw node_error(
            ctx, "inputs",
            "the broadcast shape " + out.to_string() + " of " + shapes_of(ctx) + " has more than 2^60 elements");
    return {Layout(out, x.dtype)};
}

// ---- reference ------------------------------------------------------------

// Flat index into an input of shape `in` of the output element `o` of shape
// `out`: the output coordinates, right-aligned, a size-1 input dim held at 0.
size_t source_index(size_t o, const Shape& out, const Shape& in, const std::vector<size_t>& in_strides) {
    size_t index = 0;
    const size_t lead = out.rank() - in.rank();
    for (size_t d = out.rank(); d-- > lead;) {
        const auto extent = static_cast<size_t>(out[d]);
        const size_t c = o % extent;
        o /= extent;
        if (in[d - lead] != 1) index += c * in_strides[d - lead];
    }
    return index;
}

void reference(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const Shape &sc = call.in_shape(0), &sx = call.in_shape(1), &sy = call.in_shape(2);
    const std::vector<size_t> tc = strides_of(sc), tx = strides_of(sx), ty = strides_of(sy);
    const size_t bytes = byte_size(call.out_type(0));
    const auto* c = call.in<uint8_t>(0);
    const auto* x = static_cast<const unsigned char*>(call.in_raw(1));
    const auto* y = static_cast<const unsigned char*>(call.in_raw(2));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < out.count(); ++o) {
        const bool take_x = c[source_index(o, out, sc, tc)] != 0;
        const unsigned char* src =
            take_x ? x + source_index(o, out, sx, tx) * bytes : y + source_index(o, out, sy, ty) * bytes;
        std::memcpy(dst + o * bytes, src, bytes);
    }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = where_cl;
    spec.kernel_name = "where_ref";
    // Elements move as unsigned integers of their width, whatever the type.
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.outputs.at(0).dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs[0].count(), l);
    };
    return spec;
}

// The kernel splits output indices over 8 right-aligned dims.
std::string ocl_validate(const KernelParams& p) {
    if (p.outputs.at(0).shape.rank() > 8)
        return "rank " + std::to_string(p.outputs[0].shape.rank()) + " is above the kernel's 8 dims";
    return {};
}

void register_where(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("where", "Elementwise condition ? x : y with numpy broadcasting of the three inputs", 3, 3, {}, infer);
    reg.add_op(def);
    // Input 0 is the boolean condition, output 0 has x's type: every type on both.
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                         DataType::u8,  DataType::i8,  DataType::boolean};
    add_host_impls(reg, "where", reference, host_options(types));                // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "where", ocl_spec(), ocl_options(types, ocl_validate));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("where", register_where)
