// dft: the discrete Fourier transform of a signal along one axis (ONNX DFT,
// opset 17; opset 20 when its axis input is a constant). The input's last dim
// is 1 (real samples) or 2 (real, imaginary); the output's is 2. With L the
// transform length (the dft_length input, else the axis dim), the signal is
// cut or zero-padded to L samples and bin k of the output is
//   y[k] = s * sum_{n<L} x[n] exp(-+2 pi i k n / L)
// with the minus sign and s = 1 forward, the plus sign and s = 1/L inverse.
// onesided keeps bins 0 .. L/2 (L/2 + 1 of them), forward only: onesided
// with inverse is an error (ONNX's reference reads it as an inverse real
// FFT, a real signal out of a half spectrum, which this op is not).
//
// dft_length is a value input: the output's axis dim follows it, dynamic
// until it is known. The reference sums in double with the angle reduced
// exactly (k n mod L); the cpu impl runs an FFT per line (dynrt/cpu_fft.hpp); the
// OpenCL kernels a direct sum per output bin.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dft_cl.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_fft.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

constexpr double kPi = 3.14159265358979323846;

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "dft", field));
}

// The signal axis of x (rank r): axis in [-r, r-2], the last dim holds the
// complex parts.
size_t signal_axis(const std::string& node, int64_t axis, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    const int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r - 1)
        throw node_error(node, "axis",
                         "axis " + std::to_string(axis) + " is out of range for an input of rank " +
                             std::to_string(rank) + " (the last dim holds the real and imaginary parts)");
    return static_cast<size_t>(a);
}

int64_t length_of(const std::string& node, const std::vector<int64_t>& v) {
    if (v.size() != 1)
        throw node_error(node, "dft_length",
                         "dft_length must hold one value, got " + std::to_string(v.size()) + " elements");
    const int64_t n = v[0];
    if (n < 1) throw node_error(node, "dft_length", "dft_length is " + std::to_string(n) + ", it must be >= 1");
    if (static_cast<uint64_t>(n) > (uint64_t{1} << 31))
        throw node_error(node, "dft_length", "dft_length " + std::to_string(n) + " is above 2^31");
    return n;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    if (!is_floating(x.dtype))
        throw node_error(ctx.node, "input", "dft takes a floating-point input, got " + x.to_string());
    if (x.shape.rank() < 2)
        throw node_error(ctx.node, "input", "input " + x.to_string() + " needs rank >= 2 ([..., signal, ..., 1 or 2])");
    const size_t rank = x.shape.rank();
    const Dimension& parts = x.shape[rank - 1];
    if (parts.is_static() && parts.get_length() != 1 && parts.get_length() != 2)
        throw node_error(ctx.node, "input",
                         "input " + x.to_string() + ": the last dim must be 1 (real) or 2 (complex), got " +
                             std::to_string(parts.get_length()));
    const size_t axis = signal_axis(ctx.node, ctx.attrs.get_int("axis"), rank);
    if (ctx.attrs.get_bool("inverse") && ctx.attrs.get_bool("onesided"))
        throw node_error(ctx.node, "onesided",
                         "onesided with inverse is not supported (the inverse of a onesided spectrum is a real "
                         "signal: an inverse real FFT, not this op)");
    Dimension len = x.shape[axis];
    if (ctx.inputs.size() > 1) {
        const Layout& l = ctx.inputs[1];
        if (is_floating(l.dtype) || l.dtype == DataType::boolean || l.shape.rank() > 1)
            throw node_error(ctx.node, "dft_length", "dft_length must be an integer scalar, got " + l.to_string());
        len = ctx.value(1) ? Dimension(length_of(ctx.node, ctx.value(1)->to_int64())) : Dimension();
    } else if (len.is_static() && len.get_length() < 1) {
        throw node_error(ctx.node, "input",
                         "input " + x.to_string() + " has no samples along axis " + std::to_string(axis) +
                             " (the dft length must be >= 1)");
    }
    PartialShape out = x.shape;
    out[rank - 1] = Dimension(2);
    if (ctx.attrs.get_bool("onesided")) out[axis] = len.is_static() ? Dimension(len.get_length() / 2 + 1) : Dimension();
    else out[axis] = len;
    return {Layout(out, x.dtype)};
}

// The geometry of one call: outer x signal x inner lines of the input.
struct Lines {
    size_t outer = 1, inner = 1, n_in = 0, parts = 1, bins = 0, len = 0;
    bool inverse = false;
};

Lines lines_of(const HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    const size_t rank = in.rank();
    const size_t axis = signal_axis(call.node(), call.attrs().get_int("axis"), rank);
    Lines g;
    g.outer = dims_product(in, 0, axis);
    g.inner = dims_product(in, axis + 1, rank - 1);
    g.n_in = static_cast<size_t>(in[axis]);
    g.parts = static_cast<size_t>(in[rank - 1]);
    g.bins = static_cast<size_t>(out[axis]);
    g.len = call.num_inputs() > 1 ? static_cast<size_t>(length_of(call.node(), call.get_ints(1))) : g.n_in;
    g.inverse = call.attrs().get_bool("inverse");
    return g;
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Lines g = lines_of(call);
    const size_t used = std::min(g.n_in, g.len);
    const double sign = g.inverse ? 1.0 : -1.0, scale = g.inverse ? 1.0 / static_cast<double>(g.len) : 1.0;
    for (size_t o = 0; o < g.outer; ++o)
        for (size_t i = 0; i < g.inner; ++i)
            for (size_t k = 0; k < g.bins; ++k) {
                double re = 0, im = 0;
                for (size_t n = 0; n < used; ++n) {
                    const size_t at = ((o * g.n_in + n) * g.inner + i) * g.parts;
                    const double xr = call.get(0, at), xi = g.parts == 2 ? call.get(0, at + 1) : 0.0;
                    const double a =
                        sign * 2.0 * kPi * static_cast<double>((k * n) % g.len) / static_cast<double>(g.len);
                    re += xr * std::cos(a) - xi * std::sin(a);
                    im += xr * std::sin(a) + xi * std::cos(a);
                }
                const size_t y = ((o * g.bins + k) * g.inner + i) * 2;
                call.set(0, y, re * scale);
                call.set(0, y + 1, im * scale);
            }
}

// ---- cpu: an FFT per line over the engine's threads ---------------------------
//
// Lines are gathered into complex doubles (zero-padded to L), transformed by
// one plan for the call, and the first `bins` written back. The inverse is
// the forward transform of the conjugate, conjugated and scaled by 1/L.
void fft_kernel(HostCall& call) {
    const Lines g = lines_of(call);
    const size_t lines = g.outer * g.inner;
    if (lines == 0 || g.bins == 0) return;
    const cpu_fft::Plan plan(g.len);
    const float* x = call.in<float>(0);
    float* y = call.out<float>(0);
    const size_t used = std::min(g.n_in, g.len);
    const double scale = g.inverse ? 1.0 / static_cast<double>(g.len) : 1.0, conj = g.inverse ? -1.0 : 1.0;
    const CpuThreads threads(call.params().engine, checked_mul(lines, g.len * 32, "dft work"));
    parallel_for(threads, lines, std::max<size_t>(1, 4096 / g.len), [&](size_t begin, size_t end) {
        std::vector<cpu_fft::cplx> a(g.len), f(g.len), scratch(plan.scratch_size());
        for (size_t line = begin; line < end; ++line) {
            const size_t o = line / g.inner, i = line % g.inner;
            for (size_t n = 0; n < used; ++n) {
                const float* p = x + ((o * g.n_in + n) * g.inner + i) * g.parts;
                a[n] = cpu_fft::cplx(p[0], g.parts == 2 ? conj * static_cast<double>(p[1]) : 0.0);
            }
            std::fill(a.begin() + static_cast<std::ptrdiff_t>(used), a.end(), cpu_fft::cplx(0, 0));
            plan.transform(a.data(), f.data(), scratch.data());
            for (size_t k = 0; k < g.bins; ++k) {
                float* q = y + ((o * g.bins + k) * g.inner + i) * 2;
                q[0] = static_cast<float>(f[k].real() * scale);
                q[1] = static_cast<float>(conj * f[k].imag() * scale);
            }
        }
    });
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = dft_cl;
    spec.kernel_name = "dft_direct";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = signal_axis(p.node, p.attrs->get_int("axis"), rank);
        return JitDefines{{"OUTER", jit_dims_product("INPUT0", rank, 0, axis)},
                          {"INNER", jit_dims_product("INPUT0", rank, axis + 1, rank - 1)},
                          {"N_IN", jit_dims_product("INPUT0", rank, axis, axis + 1)},
                          {"PARTS", jit_dims_product("INPUT0", rank, rank - 1, rank)},
                          {"BINS", jit_dims_product("OUTPUT0", rank, axis, axis + 1)},
                          {"HAS_LENGTH", p.inputs.size() > 1 ? "1" : "0"},
                          {"INVERSE", p.attrs->get_bool("inverse") ? "1" : "0"},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count() / 2, l);
    };
    return spec;
}

// dft_length as a kernel input: an integer scalar of at most 2^31 - 1.
std::string ocl_validate(const KernelParams& p) {
    if (p.inputs.size() > 1 && p.inputs[1].dtype != DataType::i64 && p.inputs[1].dtype != DataType::i32)
        return std::string("dft_length must be i32 or i64 here, got ") + to_string(p.inputs[1].dtype);
    return "";
}

// ---- ONNX -----------------------------------------------------------------

// Opset 17 takes axis as an attribute; opset 20 as input 2, which must be
// constant here (it decides the output's layout).
bool onnx_dft(ImportContext& c) {
    if (!c.only_attrs({"axis", "inverse", "onesided"})) return false;
    int64_t axis = c.i("axis", 1);
    if (c.opset() >= 20) {
        if (c.has("axis")) return c.unsupported("DFT opset " + std::to_string(c.opset()) + " has no axis attribute");
        axis = -2;
        if (c.present(2)) {
            const HostTensor* v = c.value(2);
            if (v == nullptr || v->count() != 1)
                return c.unsupported("DFT's axis input has no known single value (it decides the output's layout)");
            axis = v->to_int64().at(0);
        }
    }
    if (c.i("inverse", 0) != 0 && c.i("onesided", 0) != 0)
        return c.unsupported(
            "DFT with inverse and onesided: the ONNX reference takes it as an inverse real FFT (a "
            "real output of dft_length samples), which dynrt does not implement");
    c.set("axis", axis);
    c.set("inverse", c.i("inverse", 0) != 0);
    c.set("onesided", c.i("onesided", 0) != 0);
    c.use_inputs({0, 1});
    return true;
}

void register_dft(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "dft", "discrete Fourier transform along one axis; real [..., 1] or complex [..., 2] in, complex out", 1, 2,
        {attr_int("axis", 1, "the signal axis (not the last, which holds the complex parts)"),
         attr_bool("inverse", false, "the inverse transform (plus sign, scaled by 1/L)"),
         attr_bool("onesided", false, "keep bins 0 .. L/2 only")},
        infer);
    def.value_inputs = {1};
    def.imports = {onnx_rule("DFT", 1, 3, onnx_dft,
                             "opset 17: `axis`, `inverse`, `onesided`, dft_length as input 1; opset 20: axis input "
                             "2 when constant")};
    reg.add_op(def);
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, "dft", reference, host_options(types));
    add_host_impls(reg, "dft", fft_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, "dft", ocl_spec(), ocl_options({DataType::f32, DataType::f16}, ocl_validate));
}

}   // namespace

DYNRT_MODULE("dft", register_dft)
