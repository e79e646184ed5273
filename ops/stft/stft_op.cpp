// stft: the short-time Fourier transform (ONNX STFT, opset 17). The signal
// [batch, length, 1 or 2] (real, or real and imaginary) is cut into frames of
// L samples every frame_step samples; frame f, bin k of the output
// [batch, frames, bins, 2] is
//   y[b, f, k] = sum_{n<L} w[n] x[b, f * frame_step + n] exp(-2 pi i k n / L)
// with w the window (ones when absent), frames = 1 + (length - L) / frame_step
// and bins = L / 2 + 1 when onesided (the default), L otherwise. L is the
// frame_length input, else the window's length, else the signal's.
//
// ONNX's inputs are positional with optional window and frame_length; the
// op takes the present ones in order and the attributes with_window and
// with_frame_length say which are there. frame_step and frame_length are
// value inputs (the output's dims follow them, dynamic until known); so is
// the window, whose length must be L.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_fft.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "stft_cl.hpp"

namespace {

using namespace dynrt;

constexpr double kPi = 3.14159265358979323846;

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "stft", field));
}

// Input positions: signal 0, frame_step 1, then the window and frame_length when present.
struct Inputs {
    bool window = false, frame_length = false;
    size_t window_at = 0, length_at = 0, count = 2;
};

Inputs inputs_of(const Attributes& a) {
    Inputs in;
    in.window = a.get_bool("with_window");
    in.frame_length = a.get_bool("with_frame_length");
    in.window_at = 2;
    in.length_at = in.window ? 3 : 2;
    in.count = 2 + (in.window ? 1 : 0) + (in.frame_length ? 1 : 0);
    return in;
}

void check_int_scalar(const std::string& node, const Layout& l, const char* field) {
    if (is_floating(l.dtype) || l.dtype == DataType::boolean || l.shape.rank() > 1 ||
        (l.shape.rank() == 1 && l.shape[0].is_static() && l.shape[0].get_length() != 1))
        throw node_error(node, field, std::string(field) + " must be an integer scalar, got " + l.to_string());
}

int64_t positive(const std::string& node, const std::vector<int64_t>& v, const char* field) {
    if (v.size() != 1) throw node_error(node, field, std::string(field) + " must hold one value");
    if (v[0] < 1)
        throw node_error(node, field, std::string(field) + " is " + std::to_string(v[0]) + ", it must be >= 1");
    return v[0];
}

// The frame count, checked: L <= length.
int64_t frames_of(const std::string& node, int64_t length, int64_t frame_length, int64_t step) {
    if (frame_length > length)
        throw node_error(node, "frame_length",
                         "frame_length " + std::to_string(frame_length) + " is larger than the signal (" +
                             std::to_string(length) + " samples)");
    return 1 + (length - frame_length) / step;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Inputs in = inputs_of(ctx.attrs);
    if (ctx.inputs.size() != in.count)
        throw node_error(ctx.node, "inputs",
                         "stft takes " + std::to_string(in.count) + " inputs for with_window " +
                             (in.window ? "true" : "false") + " and with_frame_length " +
                             (in.frame_length ? "true" : "false") + ", got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[0];
    if (!is_floating(x.dtype))
        throw node_error(ctx.node, "signal", "stft takes a floating-point signal, got " + x.to_string());
    if (x.shape.rank() != 3)
        throw node_error(ctx.node, "signal", "signal " + x.to_string() + " must be [batch, length, 1 or 2]");
    if (x.shape[2].is_static() && x.shape[2].get_length() != 1 && x.shape[2].get_length() != 2)
        throw node_error(ctx.node, "signal",
                         "signal " + x.to_string() + ": the last dim must be 1 (real) or 2 (complex)");
    check_int_scalar(ctx.node, ctx.inputs[1], "frame_step");
    Dimension step, len = x.shape[1];
    if (ctx.value(1)) step = Dimension(positive(ctx.node, ctx.value(1)->to_int64(), "frame_step"));
    if (in.window) {
        const Layout& w = ctx.inputs[in.window_at];
        if (w.shape.rank() != 1 || w.dtype != x.dtype)
            throw node_error(ctx.node, "window",
                             "window " + w.to_string() + " must be 1-D of the signal's type " + to_string(x.dtype));
        len = w.shape[0];
    }
    if (in.frame_length) {
        check_int_scalar(ctx.node, ctx.inputs[in.length_at], "frame_length");
        const HostTensor* v = ctx.value(in.length_at);
        const Dimension fl = v ? Dimension(positive(ctx.node, v->to_int64(), "frame_length")) : Dimension();
        if (in.window && fl.is_static() && len.is_static() && fl.get_length() != len.get_length())
            throw node_error(ctx.node, "window",
                             "window " + ctx.inputs[in.window_at].to_string() + " has not frame_length " +
                                 std::to_string(fl.get_length()) + " elements");
        len = fl;
    }
    if (len.is_static() && len.get_length() < 1)
        throw node_error(ctx.node, "frame_length", "the frame length is 0, it must be >= 1");
    Dimension frames, bins;
    if (len.is_static() && step.is_static() && x.shape[1].is_static())
        frames = Dimension(frames_of(ctx.node, x.shape[1].get_length(), len.get_length(), step.get_length()));
    if (len.is_static()) bins = Dimension(ctx.attrs.get_bool("onesided") ? len.get_length() / 2 + 1 : len.get_length());
    return {Layout(PartialShape{x.shape[0], frames, bins, Dimension(2)}, x.dtype)};
}

// The geometry of one call.
struct Frames {
    size_t batch = 0, length = 0, parts = 1, step = 1, len = 0, frames = 0, bins = 0;
    bool window = false;
    size_t window_at = 0;
};

Frames geometry_of(const HostCall& call) {
    const Inputs in = inputs_of(call.attrs());
    const Shape& x = call.in_shape(0);
    Frames g;
    g.batch = static_cast<size_t>(x[0]);
    g.length = static_cast<size_t>(x[1]);
    g.parts = static_cast<size_t>(x[2]);
    g.step = static_cast<size_t>(positive(call.node(), call.get_ints(1), "frame_step"));
    g.len = in.frame_length ? static_cast<size_t>(positive(call.node(), call.get_ints(in.length_at), "frame_length"))
            : in.window     ? static_cast<size_t>(call.in_shape(in.window_at)[0])
                            : g.length;
    g.frames = static_cast<size_t>(call.out_shape(0)[1]);
    g.bins = static_cast<size_t>(call.out_shape(0)[2]);
    g.window = in.window;
    g.window_at = in.window_at;
    return g;
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Frames g = geometry_of(call);
    for (size_t b = 0; b < g.batch; ++b)
        for (size_t f = 0; f < g.frames; ++f)
            for (size_t k = 0; k < g.bins; ++k) {
                double re = 0, im = 0;
                for (size_t n = 0; n < g.len; ++n) {
                    const size_t at = (b * g.length + f * g.step + n) * g.parts;
                    const double w = g.window ? call.get(g.window_at, n) : 1.0;
                    const double xr = w * call.get(0, at), xi = g.parts == 2 ? w * call.get(0, at + 1) : 0.0;
                    const double a = -2.0 * kPi * static_cast<double>((k * n) % g.len) / static_cast<double>(g.len);
                    re += xr * std::cos(a) - xi * std::sin(a);
                    im += xr * std::sin(a) + xi * std::cos(a);
                }
                const size_t y = ((b * g.frames + f) * g.bins + k) * 2;
                call.set(0, y, re);
                call.set(0, y + 1, im);
            }
}

// ---- cpu: an FFT per frame over the engine's threads ----------------------------

void fft_kernel(HostCall& call) {
    const Frames g = geometry_of(call);
    const size_t count = g.batch * g.frames;
    if (count == 0 || g.bins == 0) return;
    const cpu_fft::Plan plan(g.len);
    const float* x = call.in<float>(0);
    const float* w = g.window ? call.in<float>(g.window_at) : nullptr;
    float* y = call.out<float>(0);
    const CpuThreads threads(call.params().engine, checked_mul(count, g.len * 32, "stft work"));
    parallel_for(threads, count, std::max<size_t>(1, 4096 / g.len), [&](size_t begin, size_t end) {
        std::vector<cpu_fft::cplx> a(g.len), s(g.len), scratch(plan.scratch_size());
        for (size_t frame = begin; frame < end; ++frame) {
            const size_t b = frame / g.frames, f = frame % g.frames;
            const float* p = x + (b * g.length + f * g.step) * g.parts;
            for (size_t n = 0; n < g.len; ++n) {
                const double wn = w ? static_cast<double>(w[n]) : 1.0;
                a[n] = cpu_fft::cplx(wn * p[n * g.parts], g.parts == 2 ? wn * p[n * g.parts + 1] : 0.0);
            }
            plan.transform(a.data(), s.data(), scratch.data());
            float* q = y + frame * g.bins * 2;
            for (size_t k = 0; k < g.bins; ++k) {
                q[2 * k] = static_cast<float>(s[k].real());
                q[2 * k + 1] = static_cast<float>(s[k].imag());
            }
        }
    });
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = stft_cl;
    spec.kernel_name = "stft_direct";
    spec.defines = [](const KernelParams& p, bool) {
        const Inputs in = inputs_of(*p.attrs);
        return JitDefines{{"HAS_WINDOW", in.window ? "1" : "0"},
                          {"HAS_LENGTH", in.frame_length ? "1" : "0"},
                          {"LENGTH_INPUT", in.window ? "input3" : "input2"},
                          {"BATCH", jit_dims_product("OUTPUT0", 4, 0, 1)},
                          {"FRAMES", jit_dims_product("OUTPUT0", 4, 1, 2)},
                          {"BINS", jit_dims_product("OUTPUT0", 4, 2, 3)},
                          {"SIGNAL_LEN", jit_dims_product("INPUT0", 3, 1, 2)},
                          {"PARTS", jit_dims_product("INPUT0", 3, 2, 3)},
                          {"WINDOW_LEN", in.window ? jit_dims_product("INPUT2", 1, 0, 1) : "(0)"},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count() / 2, l);
    };
    return spec;
}

// frame_step and frame_length as kernel inputs: i32 or i64.
std::string ocl_validate(const KernelParams& p) {
    const Inputs in = inputs_of(*p.attrs);
    for (size_t i : {size_t{1}, in.length_at}) {
        if (i == in.length_at && !in.frame_length) continue;
        const DataType t = p.inputs.at(i).dtype;
        if (t != DataType::i64 && t != DataType::i32)
            return std::string("frame_step and frame_length must be i32 or i64 here, got ") + to_string(t);
    }
    return "";
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_stft(ImportContext& c) {
    if (!c.only_attrs({"onesided"})) return false;
    c.set("onesided", c.i("onesided", 1) != 0);
    c.set("with_window", c.present(2));
    c.set("with_frame_length", c.present(3));
    c.use_inputs({0, 1, 2, 3});
    return true;
}

void register_stft(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("stft", "short-time Fourier transform of [batch, length, 1 or 2] frames, optional window", 2, 4,
               {attr_bool("onesided", true, "keep bins 0 .. L/2 only"),
                attr_bool("with_window", false, "a window [L] follows frame_step"),
                attr_bool("with_frame_length", false, "frame_length is the last input")},
               infer);
    def.value_inputs = {1, 2, 3};
    def.imports = {onnx_rule("STFT", 2, 4, onnx_stft,
                             "`onesided`; frame_step, window and frame_length as inputs (steps and lengths read by "
                             "value)")};
    reg.add_op(def);
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, "stft", reference, host_options(types));
    add_host_impls(reg, "stft", fft_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, "stft", ocl_spec(), ocl_options({DataType::f32, DataType::f16}, ocl_validate));
}

}   // namespace

DYNRT_MODULE("stft", register_stft)
