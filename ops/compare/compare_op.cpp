// compare: elementwise comparison of two tensors with numpy broadcasting
// (ONNX Equal, Less, LessOrEqual, Greater, GreaterOrEqual), a boolean result.
//
// Floats compare as doubles (f16 decoded exactly), so a NaN on either side
// gives false for every mode, equal included. Integers compare as int64, exact
// for every i64 value. Boolean inputs take only `equal`.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compare_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

enum class Mode { equal, less, less_equal, greater, greater_equal };

const std::vector<std::string> kModes = {"equal", "less", "less_equal", "greater", "greater_equal"};
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                      DataType::u8,  DataType::i8,  DataType::boolean};

Mode parse_mode(const std::string& s) {
    for (size_t i = 0; i < kModes.size(); ++i)
        if (s == kModes[i]) return static_cast<Mode>(i);
    ErrorContext where;
    where.field = "mode";
    throw Error("unknown compare mode '" + s + "'", where);
}

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    ErrorContext where;
    where.node = ctx.node;
    where.op = "compare";
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
    const Mode mode = parse_mode(ctx.attrs.get_string("mode"));
    if (ctx.inputs.size() != 2)
        throw node_error(ctx, "inputs", "compare takes 2 inputs (a, b), got " + std::to_string(ctx.inputs.size()));
    const Layout& a = ctx.inputs[0];
    const Layout& b = ctx.inputs[1];
    if (a.dtype != b.dtype)
        throw node_error(ctx, "inputs",
                         "inputs a and b must have one data type, got a " + a.to_string() + " and b " + b.to_string());
    if (std::find(kTypes.begin(), kTypes.end(), a.dtype) == kTypes.end())
        throw node_error(ctx, "inputs", std::string("compare does not take data type ") + to_string(a.dtype));
    if (a.dtype == DataType::boolean && mode != Mode::equal)
        throw node_error(ctx, "mode",
                         "boolean inputs " + a.to_string() + " and " + b.to_string() +
                             " take only mode 'equal', got '" + ctx.attrs.get_string("mode") + "'");
    PartialShape out;
    try {
        out = broadcast_bounded(a.shape, b.shape);
    } catch (const Error& e) {
        throw node_error(ctx, "inputs",
                         "inputs a " + a.shape.to_string() + " and b " + b.shape.to_string() +
                             " cannot be broadcast (" + e.message() + ")");
    }
    // Checked size: the known dims of the result must fit an element count.
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.is_static() ? d.get_length() : d.min());
    size_t count = 0;
    if (!count_fits(known, &count))
        throw node_error(ctx, "inputs",
                         "the broadcast shape " + out.to_string() + " of a " + a.shape.to_string() + " and b " +
                             b.shape.to_string() + " has more than 2^60 elements");
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

template <typename T>
bool apply(Mode m, T a, T b) {
    switch (m) {
        case Mode::equal: return a == b;
        case Mode::less: return a < b;
        case Mode::less_equal: return a <= b;
        case Mode::greater: return a > b;
        case Mode::greater_equal: return a >= b;
    }
    return false;
}

int64_t load_int(const HostCall& call, size_t input, size_t i) {
    switch (call.in_type(input)) {
        case DataType::i32: return call.in<int32_t>(input)[i];
        case DataType::i64: return call.in<int64_t>(input)[i];
        case DataType::i8: return call.in<int8_t>(input)[i];
        case DataType::u8: return call.in<uint8_t>(input)[i];
        default: return call.in<uint8_t>(input)[i] != 0 ? 1 : 0;   // boolean
    }
}

void reference(HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Shape& out = call.out_shape(0);
    const Shape& sa = call.in_shape(0);
    const Shape& sb = call.in_shape(1);
    const std::vector<size_t> ta = strides_of(sa), tb = strides_of(sb);
    const bool floating = is_floating(call.in_type(0));
    auto* y = call.out<uint8_t>(0);
    for (size_t o = 0; o < out.count(); ++o) {
        const size_t ia = source_index(o, out, sa, ta), ib = source_index(o, out, sb, tb);
        const bool r = floating ? apply(m, call.get(0, ia), call.get(1, ib))
                                : apply(m, load_int(call, 0, ia), load_int(call, 1, ib));
        y[o] = r ? 1 : 0;
    }
}

// ---- OpenCL ---------------------------------------------------------------

const char* ocl_expr(Mode m, DataType t) {
    if (t == DataType::boolean) return "(((a) != 0) == ((b) != 0))";
    switch (m) {
        case Mode::equal: return "((a) == (b))";
        case Mode::less: return "((a) < (b))";
        case Mode::less_equal: return "((a) <= (b))";
        case Mode::greater: return "((a) > (b))";
        case Mode::greater_equal: return "((a) >= (b))";
    }
    return "0";
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = compare_cl;
    spec.kernel_name = "compare_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        return JitDefines{{"IN_F16", t == DataType::f16 ? "1" : "0"},
                          {"CMP(a, b)", ocl_expr(parse_mode(p.attrs->get_string("mode")), t)}};
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

void register_compare(ModuleRegistrar& reg) {
    OpDefinition def = op_def("compare", "Elementwise comparison with numpy broadcasting, boolean result", 2, 2,
                              {attr_string("mode", std::nullopt, kModes, "comparison a <mode> b")}, infer);
    reg.add_op(def);
    add_host_impls(reg, "compare", reference, host_options(kTypes));                // cpu_ref_dynamic, cpu_ref_static
    add_ocl_impls(reg, "compare", ocl_spec(), ocl_options(kTypes, ocl_validate));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("compare", register_compare)
