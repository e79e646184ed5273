// logical: elementwise boolean logic (ONNX And, Or, Xor, Not). `not` takes
// one input; `and`, `or` and `xor` take two with numpy broadcasting. Inputs
// and output are boolean, one byte per element; any non-zero byte reads as
// true and results are stored as 0 or 1.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "logical_cl.hpp"

namespace {

using namespace dynrt;

enum class Mode { and_, or_, xor_, not_ };

const std::vector<std::string> kModes = {"and", "or", "xor", "not"};

Mode parse_mode(const std::string& s) {
    for (size_t i = 0; i < kModes.size(); ++i)
        if (s == kModes[i]) return static_cast<Mode>(i);
    ErrorContext where;
    where.field = "mode";
    throw Error("unknown logical mode '" + s + "'", where);
}

size_t arity(Mode m) { return m == Mode::not_ ? 1 : 2; }

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    ErrorContext where;
    where.node = ctx.node;
    where.op = "logical";
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

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const std::string& name = ctx.attrs.get_string("mode");
    const Mode mode = parse_mode(name);
    const size_t n = arity(mode);
    if (ctx.inputs.size() != n)
        throw node_error(ctx, "inputs",
                         "logical mode '" + name + "' takes " + std::to_string(n) + (n == 1 ? " input" : " inputs") +
                             ", got " + std::to_string(ctx.inputs.size()));
    for (size_t i = 0; i < n; ++i)
        if (ctx.inputs[i].dtype != DataType::boolean)
            throw node_error(
                ctx, "inputs",
                "input " + std::to_string(i) + " is " + ctx.inputs[i].to_string() + "; logical takes boolean inputs");
    PartialShape out = ctx.inputs[0].shape;
    if (n == 2) {
        const PartialShape& a = ctx.inputs[0].shape;
        const PartialShape& b = ctx.inputs[1].shape;
        try {
            out = broadcast_bounded(a, b);
        } catch (const Error& e) {
            throw node_error(
                ctx, "inputs",
                "inputs a " + a.to_string() + " and b " + b.to_string() + " cannot be broadcast (" + e.message() + ")");
        }
        // Checked size: the known dims of the result must fit an element count.
        std::vector<int64_t> known;
        for (const Dimension& d : out) known.push_back(d.is_static() ? d.get_length() : d.min());
        size_t count = 0;
        if (!count_fits(known, &count))
            throw node_error(ctx, "inputs",
                             "the broadcast shape " + out.to_string() + " of a " + a.to_string() + " and b " +
                                 b.to_string() + " has more than 2^60 elements");
    }
    return {Layout(out, DataType::boolean)};
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

bool apply(Mode m, bool a, bool b) {
    switch (m) {
        case Mode::and_: return a && b;
        case Mode::or_: return a || b;
        case Mode::xor_: return a != b;
        case Mode::not_: return !a;
    }
    return false;
}

void reference(HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Shape& out = call.out_shape(0);
    const Shape& sa = call.in_shape(0);
    const std::vector<size_t> ta = strides_of(sa);
    const auto* a = call.in<uint8_t>(0);
    auto* y = call.out<uint8_t>(0);
    if (m == Mode::not_) {
        for (size_t o = 0; o < out.count(); ++o) y[o] = apply(m, a[o] != 0, false) ? 1 : 0;
        return;
    }
    const Shape& sb = call.in_shape(1);
    const std::vector<size_t> tb = strides_of(sb);
    const auto* b = call.in<uint8_t>(1);
    for (size_t o = 0; o < out.count(); ++o) {
        const bool va = a[source_index(o, out, sa, ta)] != 0;
        const bool vb = b[source_index(o, out, sb, tb)] != 0;
        y[o] = apply(m, va, vb) ? 1 : 0;
    }
}

// ---- OpenCL ---------------------------------------------------------------

const char* ocl_expr(Mode m) {
    switch (m) {
        case Mode::and_: return "((a) && (b))";
        case Mode::or_: return "((a) || (b))";
        case Mode::xor_: return "((a) != (b))";
        case Mode::not_: return "(!(a))";
    }
    return "0";
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = logical_cl;
    spec.kernel_name = "logical_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const Mode m = parse_mode(p.attrs->get_string("mode"));
        return JitDefines{{"UNARY", m == Mode::not_ ? "1" : "0"}, {"LOGIC(a, b)", ocl_expr(m)}};
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

void register_logical(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("logical", "Elementwise boolean and/or/xor (numpy broadcasting) and not", 1, 2,
               {attr_string("mode", std::nullopt, kModes, "and, or, xor (two inputs) or not (one)")}, infer);
    reg.add_op(def);
    const std::vector<DataType> types = {DataType::boolean};
    add_host_impls(reg, "logical", reference, host_options(types));                // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "logical", ocl_spec(), ocl_options(types, ocl_validate));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("logical", register_logical)
