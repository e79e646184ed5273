// dequantize_linear: y = (x - zero_point) * scale, from u8, i8 or i32 to the
// scale's type (ONNX DequantizeLinear, opsets 10 to 19 without float8 and
// blocks).
//
// scale (and zero_point, of the same shape and x's type) is per tensor (a
// scalar or one element) or per axis (1-D, one element per index of x along
// `axis`). x - zero_point is exact in integers; the product is rounded once
// to the output type (f32: every impl gives the same bits for u8/i8 x). An
// i32 x takes no zero point other than 0, as ONNX says.
//
// A scale that is not positive (zero, negative, NaN) is an error naming the
// node and field x_scale: at import when the scale is a constant, else when
// the kernel runs (host impls check it; the OpenCL kernel reports it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dequantize_linear_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_quant.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const char* const kOp = "dequantize_linear";
// Of input 0 (x) and output 0 (y), as ImplEntry::dtypes checks both.
const std::vector<DataType> kTypes = {DataType::u8, DataType::i8, DataType::i32, DataType::f32, DataType::f16};

Error field_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, kOp, field));
}

// ---- shape inference ---------------------------------------------------------

bool same_shape(const PartialShape& a, const PartialShape& b) {
    bool same = a.rank() == b.rank();
    for (size_t d = 0; same && d < a.rank(); ++d) same = a[d].compatible(b[d]);
    return same;
}

void check_scale(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs[0];
    const Layout& s = ctx.inputs[1];
    if (s.dtype != DataType::f32 && s.dtype != DataType::f16)
        throw field_error(ctx.node, "x_scale", "x_scale " + s.to_string() + " must be f32 or f16");
    if (s.shape.rank() > 1)
        throw field_error(ctx.node, "x_scale",
                          "x_scale " + s.shape.to_string() + " must be a scalar or 1-D (per tensor or per axis)");
    if (s.shape.rank() == 1 && s.shape[0].is_static() && s.shape[0].get_length() != 1) {
        const int64_t rank = static_cast<int64_t>(x.shape.rank());
        if (rank == 0)
            throw field_error(ctx.node, "x_scale",
                              "a per-axis x_scale " + s.shape.to_string() + " needs x of rank >= 1");
        const auto axis = static_cast<size_t>(normalize_axis(ctx.attrs.get_int("axis"), rank, "axis"));
        const Dimension& d = x.shape[axis];
        if (d.is_static() && d.get_length() != s.shape[0].get_length())
            throw field_error(ctx.node, "x_scale",
                              "per-axis x_scale " + s.shape.to_string() + " has " +
                                  std::to_string(s.shape[0].get_length()) + " elements but x " + x.shape.to_string() +
                                  " has " + std::to_string(d.get_length()) + " along axis " + std::to_string(axis));
    }
    if (ctx.inputs.size() < 3) return;
    const Layout& z = ctx.inputs[2];
    if (z.dtype != x.dtype)
        throw field_error(ctx.node, "x_zero_point",
                          "x_zero_point " + z.to_string() + " must have x's type (x " + x.to_string() + ")");
    if (!same_shape(z.shape, s.shape))
        throw field_error(ctx.node, "x_zero_point",
                          "x_zero_point " + z.shape.to_string() + " must have x_scale's shape " + s.shape.to_string());
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() < 2 || ctx.inputs.size() > 3)
        throw field_error(ctx.node, "inputs",
                          "dequantize_linear takes 2 or 3 inputs (x, x_scale[, x_zero_point]), got " +
                              std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (x.dtype != DataType::u8 && x.dtype != DataType::i8 && x.dtype != DataType::i32)
        throw field_error(ctx.node, "x", "dequantize_linear takes a u8, i8 or i32 x, got " + x.to_string());
    check_scale(ctx);
    return {Layout(x.shape, ctx.inputs[1].dtype)};
}

// ---- the host impls --------------------------------------------------------------

// The zero points; an i32 x takes only zeros (ONNX: "must be 0 for int32").
std::vector<int64_t> zero_points(const HostCall& call, size_t n) {
    std::vector<int64_t> z(n, 0);
    if (call.num_inputs() < 3) return z;
    for (size_t k = 0; k < n; ++k) {
        z[k] = static_cast<int64_t>(call.get(2, k));
        if (call.in_type(0) == DataType::i32 && z[k] != 0)
            throw field_error(call.node(), "x_zero_point",
                              "x_zero_point[" + std::to_string(k) + "] is " + std::to_string(z[k]) +
                                  "; an i32 x takes zero points of 0 only");
    }
    return z;
}

void reference(HostCall& call) {
    const QuantChannels ch = quant_channels(call, kOp, "x_scale");
    const std::vector<float> scale = checked_quant_scales(call, kOp, "x_scale");
    const std::vector<int64_t> zp = zero_points(call, scale.size());
    for (size_t i = 0; i < ch.count; ++i) {
        const size_t c = (i / ch.inner) % ch.channels;
        const auto diff = static_cast<int64_t>(call.get(0, i)) - zp[c];
        call.set(0, i, static_cast<double>(diff) * static_cast<double>(scale[c]));
    }
}

// ---- cpu: vectorised u8/i8 -> f32 runs over the engine's threads ---------------
//
// (x - zp) of u8/i8 is at most 9 bits, exact in f32, so x * scale - zp * scale
// would round twice: the loop converts the difference and multiplies once.
template <typename T>
__attribute__((always_inline)) inline void dequantize_run(const T* x, float* y, size_t n, float scale, int32_t zp) {
    for (size_t j = 0; j < n; ++j) y[j] = static_cast<float>(static_cast<int32_t>(x[j]) - zp) * scale;
}
DYNRT_CPU_CLONES void dequantize_u8(const uint8_t* x, float* y, size_t n, float scale, int32_t zp) {
    dequantize_run(x, y, n, scale, zp);
}
DYNRT_CPU_CLONES void dequantize_i8(const int8_t* x, float* y, size_t n, float scale, int32_t zp) {
    dequantize_run(x, y, n, scale, zp);
}
void dequantize_any(const uint8_t* x, float* y, size_t n, float s, int32_t z) { dequantize_u8(x, y, n, s, z); }
void dequantize_any(const int8_t* x, float* y, size_t n, float s, int32_t z) { dequantize_i8(x, y, n, s, z); }

template <typename T>
void fast_typed(HostCall& call) {
    const QuantChannels ch = quant_channels(call, kOp, "x_scale");
    if (ch.count == 0) return;
    const std::vector<float> scale = checked_quant_scales(call, kOp, "x_scale");
    const std::vector<int64_t> zp = zero_points(call, scale.size());
    const T* x = call.in<T>(0);
    float* y = call.out<float>(0);
    const CpuThreads threads(call.params().engine, checked_mul(ch.count, sizeof(float) + 1, "dequantize_linear bytes"));
    parallel_for(threads, ch.count, 16384, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end;) {   // runs of one channel within [begin, end)
            const size_t row = i / ch.inner, stop = std::min(end, (row + 1) * ch.inner), c = row % ch.channels;
            dequantize_any(x + i, y + i, stop - i, scale[c], static_cast<int32_t>(zp[c]));
            i = stop;
        }
    });
}

void fast_kernel(HostCall& call) {
    if (call.in_type(0) == DataType::u8) fast_typed<uint8_t>(call);
    else fast_typed<int8_t>(call);
}

std::string fast_validate(const KernelParams& p) {
    if (p.inputs.at(0).dtype == DataType::i32) return "x is i32 (u8 and i8 only)";
    return p.inputs.at(1).dtype == DataType::f32 ? "" : "x_scale is not f32";
}

// ---- OpenCL ----------------------------------------------------------------

// report[0]: a scale that is not positive (index + 1); report[1]: an i32 x's
// nonzero zero point (index + 1).
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) != 0)
        throw field_error(
            p.node, "x_scale",
            "x_scale[" + std::to_string(report[0] - 1) + "] is not positive; a quantization scale must be");
    if (report.at(1) != 0)
        throw field_error(
            p.node, "x_zero_point",
            "x_zero_point[" + std::to_string(report[1] - 1) + "] is not 0; an i32 x takes zero points of 0 only");
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = dequantize_linear_cl;
    spec.kernel_name = "dequantize_linear_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const PartialShape& s = p.inputs.at(1).shape;
        const bool per_axis = s.rank() == 1 && !(s[0].is_static() && s[0].get_length() == 1);
        std::string channels = "1", inner = "1";
        if (per_axis) {
            const auto axis = static_cast<size_t>(normalize_axis(p.attrs->get_int("axis"), rank, "axis"));
            channels = jit_dims_product("INPUT0", rank, axis, axis + 1);
            inner = jit_dims_product("INPUT0", rank, axis + 1, rank);
        }
        return JitDefines{{"SCALE_F16", p.inputs[1].dtype == DataType::f16 ? "1" : "0"},
                          {"OUT_F16", p.outputs[0].dtype == DataType::f16 ? "1" : "0"},
                          {"X_I32", p.inputs[0].dtype == DataType::i32 ? "1" : "0"},
                          {"HAS_ZP", p.inputs.size() > 2 ? "1" : "0"},
                          {"PER_AXIS", per_axis ? "1" : "0"},
                          {"CHANNELS", channels},
                          {"INNER", inner}};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    spec.report_ints = 2;
    spec.report_check = check_report;
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_dequantize(ImportContext& c) {
    if (!c.only_attrs({"axis", "block_size", "output_dtype"})) return false;
    if (c.i("block_size", 0) != 0) return c.unsupported("blocked quantization (block_size): not implemented");
    if (c.has("output_dtype") && c.i("output_dtype", 0) != 0 && c.i("output_dtype", 0) != 1 &&
        c.i("output_dtype", 0) != 10)
        return c.unsupported("output_dtype " + std::to_string(c.i("output_dtype", 0)) +
                             ": the output takes x_scale's type (FLOAT, FLOAT16)");
    const DataType xt = c.layout(0).dtype;
    if (xt != DataType::u8 && xt != DataType::i8 && xt != DataType::i32)
        return c.unsupported(std::string("x of type ") + to_string(xt) + ": only u8, i8 and i32");
    c.set("axis", c.opset() >= 13 ? c.i("axis", 1) : int64_t{1});
    if (const HostTensor* s = c.value(1))
        for (size_t k = 0; k < s->layout().get_shape().count(); ++k)
            if (!(s->get_as_double(k) > 0.0))
                throw field_error(c.node().name, "x_scale",
                                  "x_scale[" + std::to_string(k) + "] is " + std::to_string(s->get_as_double(k)) +
                                      "; a quantization scale must be positive");
    c.use_inputs({0, 1, 2});
    return true;
}

void register_dequantize_linear(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "(x - zero_point) * scale from u8, i8 or i32, per tensor or per axis", 2, 3,
               {attr_int("axis", 1, "the axis of a per-axis scale (negative counts from the end)")}, infer);
    def.imports = {onnx_rule("DequantizeLinear", 2, 3, onnx_dequantize,
                             "opset 10-19: per tensor and per axis (`axis`), x u8/i8/i32, output in x_scale's type; "
                             "float8 and block_size refused")};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options(kTypes));
    add_host_impls(reg, kOp, fast_kernel,
                   optimised_host_options({DataType::u8, DataType::i8, DataType::f32}, fast_validate));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(kTypes));
}

}   // namespace

DYNRT_MODULE("dequantize_linear", register_dequantize_linear)
