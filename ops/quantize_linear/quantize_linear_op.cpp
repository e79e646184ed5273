// quantize_linear: y = saturate(round_half_even(x / scale) + zero_point), to
// u8 or i8 (ONNX QuantizeLinear, opsets 10 to 19 without float8 and blocks).
//
// scale (and zero_point, of the same shape) is per tensor (a scalar or one
// element) or per axis (1-D, one element per index of x along `axis`). The
// quotient x / scale is taken in f32, as ONNX's reference does (an f16 x or
// scale is widened exactly first), then rounded to the nearest integer, ties
// to even, the zero point added and the sum saturated to the output type; a
// NaN quotient gives 0. Every impl computes exactly that, so they agree bit
// for bit. The output type is the zero point's, or `to` without one.
//
// A scale that is not positive (zero, negative, NaN) is an error naming the
// node and field y_scale: at import when the scale is a constant, else when
// the kernel runs (host impls check it; the OpenCL kernel reports it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

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
#include "quantize_linear_cl.hpp"

namespace {

using namespace dynrt;

const char* const kOp = "quantize_linear";
// Of input 0 (x) and output 0 (y), as ImplEntry::dtypes checks both.
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::u8, DataType::i8};

Error field_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, kOp, field));
}

bool is_quant_type(DataType t) { return t == DataType::u8 || t == DataType::i8; }

// ---- shape inference ---------------------------------------------------------

// scale: a scalar, or 1-D with one element (per tensor) or x's extent along
// `axis` (per axis); zero_point the same shape as scale.
void check_scale(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs[0];
    const Layout& s = ctx.inputs[1];
    if (s.dtype != DataType::f32 && s.dtype != x.dtype)
        throw field_error(ctx.node, "y_scale",
                          "y_scale " + s.to_string() + " must be f32 or x's type (x " + x.to_string() + ")");
    if (s.shape.rank() > 1)
        throw field_error(ctx.node, "y_scale",
                          "y_scale " + s.shape.to_string() + " must be a scalar or 1-D (per tensor or per axis)");
    if (s.shape.rank() == 1 && s.shape[0].is_static() && s.shape[0].get_length() != 1) {
        const int64_t rank = static_cast<int64_t>(x.shape.rank());
        if (rank == 0)
            throw field_error(ctx.node, "y_scale",
                              "a per-axis y_scale " + s.shape.to_string() + " needs x of rank >= 1");
        const auto axis = static_cast<size_t>(normalize_axis(ctx.attrs.get_int("axis"), rank, "axis"));
        const Dimension& d = x.shape[axis];
        if (d.is_static() && d.get_length() != s.shape[0].get_length())
            throw field_error(ctx.node, "y_scale",
                              "per-axis y_scale " + s.shape.to_string() + " has " +
                                  std::to_string(s.shape[0].get_length()) + " elements but x " + x.shape.to_string() +
                                  " has " + std::to_string(d.get_length()) + " along axis " + std::to_string(axis));
    }
    if (ctx.inputs.size() < 3) return;
    const Layout& z = ctx.inputs[2];
    if (!is_quant_type(z.dtype))
        throw field_error(ctx.node, "y_zero_point", "y_zero_point " + z.to_string() + " must be u8 or i8");
    bool same = z.shape.rank() == s.shape.rank();
    for (size_t d = 0; same && d < z.shape.rank(); ++d) same = z.shape[d].compatible(s.shape[d]);
    if (!same)
        throw field_error(ctx.node, "y_zero_point",
                          "y_zero_point " + z.shape.to_string() + " must have y_scale's shape " + s.shape.to_string());
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() < 2 || ctx.inputs.size() > 3)
        throw field_error(ctx.node, "inputs",
                          "quantize_linear takes 2 or 3 inputs (x, y_scale[, y_zero_point]), got " +
                              std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (x.dtype != DataType::f32 && x.dtype != DataType::f16)
        throw field_error(ctx.node, "x", "quantize_linear takes an f32 or f16 x, got " + x.to_string());
    check_scale(ctx);
    const DataType out = ctx.inputs.size() == 3 ? ctx.inputs[2].dtype : parse_data_type(ctx.attrs.get_string("to"));
    return {Layout(x.shape, out)};
}

// ---- the host impls --------------------------------------------------------------

std::vector<int32_t> zero_points(const HostCall& call, size_t n) {
    std::vector<int32_t> z(n, 0);
    if (call.num_inputs() > 2)
        for (size_t k = 0; k < n; ++k) z[k] = static_cast<int32_t>(call.get(2, k));
    return z;
}

void type_range(DataType t, float& lo, float& hi) {
    lo = t == DataType::u8 ? 0.0f : -128.0f;
    hi = t == DataType::u8 ? 255.0f : 127.0f;
}

void reference(HostCall& call) {
    const QuantChannels ch = quant_channels(call, kOp, "y_scale");
    const std::vector<float> scale = checked_quant_scales(call, kOp, "y_scale");
    const std::vector<int32_t> zp = zero_points(call, scale.size());
    float lo = 0, hi = 0;
    type_range(call.out_type(0), lo, hi);
    for (size_t i = 0; i < ch.count; ++i) {
        const size_t c = (i / ch.inner) % ch.channels;
        const float q = static_cast<float>(call.get(0, i)) / scale[c];
        double v = 0.0;
        if (!std::isnan(q)) v = std::clamp(static_cast<double>(std::nearbyint(q)) + zp[c], double{lo}, double{hi});
        call.set(0, i, v);
    }
}

// ---- cpu: vectorised f32 runs over the engine's threads -----------------------
//
// Rounding half to even by adding and subtracting 1.5 * 2^23 (exact for
// |q| < 2^22, which the clamp to just past the output range ensures); NaN
// selects 0 as in the reference. The loop has no branch and vectorises.
template <typename T>
__attribute__((always_inline)) inline void quantize_run(const float* x, T* y, size_t n, float scale, float zp, float lo,
                                                        float hi) {
    constexpr float kMagic = 12582912.0f;
    const float qlo = lo - zp - 1.0f, qhi = hi - zp + 1.0f;
    for (size_t j = 0; j < n; ++j) {
        float q = x[j] / scale;
        const bool nan = q != q;
        q = q < qlo ? qlo : q;
        q = q > qhi ? qhi : q;
        float v = (q + kMagic) - kMagic + zp;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        y[j] = static_cast<T>(nan ? 0.0f : v);
    }
}

DYNRT_CPU_CLONES void quantize_u8(const float* x, uint8_t* y, size_t n, float scale, float zp) {
    quantize_run(x, y, n, scale, zp, 0.0f, 255.0f);
}
DYNRT_CPU_CLONES void quantize_i8(const float* x, int8_t* y, size_t n, float scale, float zp) {
    quantize_run(x, y, n, scale, zp, -128.0f, 127.0f);
}
void quantize_any(const float* x, uint8_t* y, size_t n, float scale, float zp) { quantize_u8(x, y, n, scale, zp); }
void quantize_any(const float* x, int8_t* y, size_t n, float scale, float zp) { quantize_i8(x, y, n, scale, zp); }

template <typename T>
void fast_typed(HostCall& call) {
    const QuantChannels ch = quant_channels(call, kOp, "y_scale");
    if (ch.count == 0) return;
    const std::vector<float> scale = checked_quant_scales(call, kOp, "y_scale");
    const std::vector<int32_t> zp = zero_points(call, scale.size());
    const float* x = call.in<float>(0);
    T* y = call.out<T>(0);
    const CpuThreads threads(call.params().engine, checked_mul(ch.count, sizeof(float) + 1, "quantize_linear bytes"));
    parallel_for(threads, ch.count, 16384, [&](size_t begin, size_t end) {
        // Runs of one channel within [begin, end).
        for (size_t i = begin; i < end;) {
            const size_t row = i / ch.inner, stop = std::min(end, (row + 1) * ch.inner), c = row % ch.channels;
            quantize_any(x + i, y + i, stop - i, scale[c], static_cast<float>(zp[c]));
            i = stop;
        }
    });
}

void fast_kernel(HostCall& call) {
    if (call.out_type(0) == DataType::u8) fast_typed<uint8_t>(call);
    else fast_typed<int8_t>(call);
}

std::string fast_validate(const KernelParams& p) {
    return p.inputs.at(1).dtype == DataType::f32 ? "" : "y_scale is not f32";
}

// ---- OpenCL ----------------------------------------------------------------

// A scale that is not positive is reported: report[0] = its index + 1.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    throw field_error(p.node, "y_scale",
                      "y_scale[" + std::to_string(report[0] - 1) + "] is not positive; a quantization scale must be");
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = quantize_linear_cl;
    spec.kernel_name = "quantize_linear_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const bool per_axis = p.inputs.at(1).shape.rank() == 1 &&
                              !(p.inputs.at(1).shape[0].is_static() && p.inputs.at(1).shape[0].get_length() == 1);
        std::string channels = "1", inner = "1";
        if (per_axis) {
            const auto axis = static_cast<size_t>(normalize_axis(p.attrs->get_int("axis"), rank, "axis"));
            channels = jit_dims_product("INPUT0", rank, axis, axis + 1);
            inner = jit_dims_product("INPUT0", rank, axis + 1, rank);
        }
        const bool u8 = p.outputs.at(0).dtype == DataType::u8;
        return JitDefines{{"IN_F16", p.inputs[0].dtype == DataType::f16 ? "1" : "0"},
                          {"SCALE_F16", p.inputs[1].dtype == DataType::f16 ? "1" : "0"},
                          {"OUT_F16", "0"},
                          {"HAS_ZP", p.inputs.size() > 2 ? "1" : "0"},
                          {"PER_AXIS", per_axis ? "1" : "0"},
                          {"CHANNELS", channels},
                          {"INNER", inner},
                          {"QLO", u8 ? "0.0f" : "-128.0f"},
                          {"QHI", u8 ? "255.0f" : "127.0f"},
                          {"CONVERT_OUT(v)", u8 ? "convert_uchar_sat(v)" : "convert_char_sat(v)"}};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    spec.report_ints = 1;
    spec.report_check = check_report;
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_quantize(ImportContext& c) {
    if (!c.only_attrs({"axis", "saturate", "block_size", "output_dtype"})) return false;
    if (c.i("block_size", 0) != 0) return c.unsupported("blocked quantization (block_size): not implemented");
    if (c.has("output_dtype") && !c.present(2)) {
        const int64_t t = c.i("output_dtype", 0);
        if (t != 2 && t != 3) return c.unsupported("output_dtype " + std::to_string(t) + ": only UINT8 and INT8");
        c.set("to", std::string(t == 2 ? "u8" : "i8"));
    }
    if (c.present(2) && !is_quant_type(c.layout(2).dtype))
        return c.unsupported(std::string("y_zero_point of type ") + to_string(c.layout(2).dtype) +
                             ": only u8 and i8 outputs");
    // Opset 10 has no axis: its scale is a scalar.
    c.set("axis", c.opset() >= 13 ? c.i("axis", 1) : int64_t{1});
    if (const HostTensor* s = c.value(1))
        for (size_t k = 0; k < s->layout().get_shape().count(); ++k)
            if (!(s->get_as_double(k) > 0.0))
                throw field_error(c.node().name, "y_scale",
                                  "y_scale[" + std::to_string(k) + "] is " + std::to_string(s->get_as_double(k)) +
                                      "; a quantization scale must be positive");
    c.use_inputs({0, 1, 2});
    return true;
}

void register_quantize_linear(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "saturate(round_half_even(x / scale) + zero_point) to u8 or i8, per tensor or axis", 2, 3,
               {attr_int("axis", 1, "the axis of a per-axis scale (negative counts from the end)"),
                attr_string("to", std::string("u8"), {"u8", "i8"},
                            "the output type when there is no zero point (else the zero point's)")},
               infer);
    def.imports = {onnx_rule("QuantizeLinear", 2, 3, onnx_quantize,
                             "opset 10-19: per tensor and per axis (`axis`), u8/i8 (zero point's type or "
                             "`output_dtype`); `saturate` ignored (float8 only); block_size refused")};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options(kTypes));
    add_host_impls(reg, kOp, fast_kernel,
                   optimised_host_options({DataType::f32, DataType::u8, DataType::i8}, fast_validate));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(kTypes));
}

}   // namespace

DYNRT_MODULE("quantize_linear", register_quantize_linear)
