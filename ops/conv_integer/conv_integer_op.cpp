// conv_integer: the integer 2-D convolutions of quantized models (ONNX
// ConvInteger and QLinearConv): x[N, C, H, W] (u8/i8) with weights
// w[M, C/groups, kH, kW] (u8/i8), strides, dilations, pads or auto_pad, groups.
//
//   acc[n, m, y, x] = sum (x - x_zero_point) * (w - w_zero_point[m])
//
// over the window's taps inside the input (padding holds the zero point, so it
// adds nothing); x_zero_point is a scalar, w_zero_point a scalar or one per
// output channel. Without `requantize` the output is acc as i32 (ConvInteger:
// inputs x, w, then the zero points the attributes x_zero_point /
// w_zero_point announce). With `requantize` (QLinearConv, inputs in ONNX's
// order x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point[, bias i32]) the output is
//
//   y = saturate(rint(f32(acc + bias[m]) * multiplier) + y_zero_point),
//   multiplier = f32(x_scale * w_scale[m]) / y_scale   (all in f32)
//
// in y_zero_point's type, ties to even (as matmul_integer). Scales that are
// not positive are errors naming the node and the field.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "conv_integer_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"

namespace {

using namespace dynrt;

const char* const kOp = "conv_integer";
const std::vector<DataType> kTypes = {DataType::u8, DataType::i8, DataType::i32};

Error field_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, kOp, field));
}

struct Slots {
    int x = 0, w = 1, x_zp = -1, w_zp = -1, x_scale = -1, w_scale = -1, y_scale = -1, y_zp = -1, bias = -1;
    size_t min = 2, max = 2;
};

Slots slots_of(const Attributes& a) {
    Slots s;
    if (a.get_bool("requantize")) {
        s.x_scale = 1, s.x_zp = 2, s.w = 3, s.w_scale = 4, s.w_zp = 5, s.y_scale = 6, s.y_zp = 7, s.bias = 8;
        s.min = 8, s.max = 9;
        return s;
    }
    int next = 2;
    if (a.get_bool("x_zero_point")) s.x_zp = next++;
    if (a.get_bool("w_zero_point")) s.w_zp = next++;
    s.min = s.max = static_cast<size_t>(next);
    return s;
}

bool is_quant_type(DataType t) { return t == DataType::u8 || t == DataType::i8; }

// The window of one spatial axis: output extent and begin pad.
struct Axis {
    int64_t in = 0, k = 1, s = 1, d = 1, pb = 0, out = 0;
};

Axis axis_of(const Attributes& a, size_t i, int64_t in, int64_t k, const std::string& node) {
    Axis r;
    r.in = in, r.k = k;
    r.s = per_axis_attr(a, "strides", 2, 1, 1, kOp, node)[i];
    r.d = per_axis_attr(a, "dilations", 2, 1, 1, kOp, node)[i];
    const AutoPad mode = auto_pad_of(kOp, a);
    const int64_t span = window_span(r.d, k, "conv_integer: dilations * (kernel extent - 1) + 1");
    if (is_same_pad(mode)) {
        const SamePads p = same_pads(in, r.s, span, mode, "conv_integer: auto_pad padding");
        r.out = p.out, r.pb = p.begin;
        return r;
    }
    int64_t pe = 0;
    if (mode == AutoPad::explicit_pads) {
        r.pb = per_axis_attr(a, "pads_begin", 2, 0, 0, kOp, node)[i];
        pe = per_axis_attr(a, "pads_end", 2, 0, 0, kOp, node)[i];
    }
    r.out = floor_div(checked_add(checked_add(in, r.pb, "conv_integer pads"), pe, "conv_integer pads") - span, r.s) + 1;
    if (r.out < 1)
        throw field_error(node, "pads_begin",
                          "output extent of spatial axis [" + std::to_string(i) + "] would be " +
                              std::to_string(r.out) + " (input extent " + std::to_string(in) + ", kernel " +
                              std::to_string(k) + ")");
    return r;
}

// ---- shape inference ---------------------------------------------------------

void check_param(const ShapeInferContext& ctx, int slot, const char* field, const Dimension& per_channel,
                 DataType type) {
    if (slot < 0 || static_cast<size_t>(slot) >= ctx.inputs.size()) return;
    const Layout& l = ctx.inputs[static_cast<size_t>(slot)];
    if (l.dtype != type)
        throw field_error(ctx.node, field, std::string(field) + " " + l.to_string() + " must be " + to_string(type));
    const bool one =
        l.shape.rank() == 0 || (l.shape.rank() == 1 && l.shape[0].is_static() && l.shape[0].get_length() == 1);
    const bool scalar_only = per_channel.is_static() && per_channel.get_length() == 1;
    const bool per =
        l.shape.rank() == 1 && !scalar_only &&
        (!l.shape[0].is_static() || !per_channel.is_static() || l.shape[0].get_length() == per_channel.get_length());
    if (!one && !per)
        throw field_error(
            ctx.node, field,
            std::string(field) + " " + l.shape.to_string() +
                (scalar_only ? " must be a scalar or [1]"
                             : " must be a scalar, [1] or one per output channel [" + per_channel.to_string() + "]"));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Slots s = slots_of(ctx.attrs);
    if (ctx.inputs.size() < s.min || ctx.inputs.size() > s.max)
        throw field_error(ctx.node, "inputs",
                          "conv_integer takes " + std::to_string(s.min) + (s.max > s.min ? " or 9" : "") +
                              " inputs with these attributes, got " + std::to_string(ctx.inputs.size()));
    const Layout& x = ctx.inputs[static_cast<size_t>(s.x)];
    const Layout& w = ctx.inputs[static_cast<size_t>(s.w)];
    if (!is_quant_type(x.dtype)) throw field_error(ctx.node, "x", "x must be u8 or i8, got " + x.to_string());
    if (!is_quant_type(w.dtype)) throw field_error(ctx.node, "w", "w must be u8 or i8, got " + w.to_string());
    const std::string shapes = "x " + x.shape.to_string() + ", w " + w.shape.to_string();
    if (x.shape.rank() != 4 || w.shape.rank() != 4)
        throw field_error(ctx.node, "inputs", "conv_integer needs x [N,C,H,W] and w [M,C/groups,kH,kW], got " + shapes);
    const int64_t g = ctx.attrs.get_int("groups");
    if (g < 1) throw field_error(ctx.node, "groups", "groups must be >= 1, got " + std::to_string(g));
    const Dimension &c = x.shape[1], &m = w.shape[0], &cg = w.shape[1];
    if ((c.is_static() && c.get_length() % g != 0) || (m.is_static() && m.get_length() % g != 0) ||
        (c.is_static() && cg.is_static() && c.get_length() / g != cg.get_length()))
        throw field_error(ctx.node, "groups", "channels do not fit groups=" + std::to_string(g) + " (" + shapes + ")");
    check_param(ctx, s.x_zp, "x_zero_point", Dimension(1), x.dtype);
    check_param(ctx, s.w_zp, "w_zero_point", m, w.dtype);
    check_param(ctx, s.x_scale, "x_scale", Dimension(1), DataType::f32);
    check_param(ctx, s.w_scale, "w_scale", m, DataType::f32);
    check_param(ctx, s.y_scale, "y_scale", Dimension(1), DataType::f32);
    DataType out = DataType::i32;
    if (s.y_zp >= 0) {
        out = ctx.inputs[7].dtype;
        if (!is_quant_type(out)) throw field_error(ctx.node, "y_zero_point", "y_zero_point must be u8 or i8");
        check_param(ctx, s.y_zp, "y_zero_point", Dimension(1), out);
        if (ctx.inputs.size() > 8) {
            const Layout& b = ctx.inputs[8];
            if (b.dtype != DataType::i32 || b.shape.rank() != 1 || !b.shape[0].compatible(m))
                throw field_error(ctx.node, "B", "bias " + b.to_string() + " must be i32[M] with M=" + m.to_string());
        }
    }
    std::vector<Dimension> dims = {x.shape[0], m};
    for (size_t i = 0; i < 2; ++i) {
        const Dimension &in = x.shape[2 + i], &k = w.shape[2 + i];
        dims.push_back(in.is_static() && k.is_static()
                           ? Dimension(axis_of(ctx.attrs, i, in.get_length(), k.get_length(), ctx.node).out)
                           : Dimension());
    }
    return {Layout(PartialShape(dims), out)};
}

// ---- the reference -------------------------------------------------------------

float checked_scale(const HostCall& call, int slot, size_t i, const char* field) {
    const Shape& s = call.in_shape(static_cast<size_t>(slot));
    const size_t idx = s.count() == 1 ? 0 : i;
    const auto v = static_cast<float>(call.get(static_cast<size_t>(slot), idx));
    if (!(v > 0.0f))
        throw field_error(call.node(), field,
                          std::string(field) + "[" + std::to_string(idx) + "] is " + std::to_string(v) +
                              "; a quantization scale must be positive");
    return v;
}

int64_t param(const HostCall& call, int slot, size_t i) {
    if (slot < 0) return 0;
    const Shape& s = call.in_shape(static_cast<size_t>(slot));
    return static_cast<int64_t>(call.get(static_cast<size_t>(slot), s.count() == 1 ? 0 : i));
}

void reference(HostCall& call) {
    const Slots s = slots_of(call.attrs());
    const Shape& xs = call.in_shape(static_cast<size_t>(s.x));
    const Shape& ws = call.in_shape(static_cast<size_t>(s.w));
    const auto xi = static_cast<size_t>(s.x), wi = static_cast<size_t>(s.w);
    const int64_t n = xs[0], c = xs[1], m = ws[0], cg = ws[1], g = call.attrs().get_int("groups");
    const Axis ah = axis_of(call.attrs(), 0, xs[2], ws[2], call.node());
    const Axis aw = axis_of(call.attrs(), 1, xs[3], ws[3], call.node());
    const int64_t xzp = param(call, s.x_zp, 0), mg = m / g;
    const DataType out = call.out_type(0);
    float ys = 1.0f, lo = 0.0f, hi = 0.0f;
    if (s.y_scale >= 0) {
        ys = checked_scale(call, s.y_scale, 0, "y_scale");
        lo = out == DataType::u8 ? 0.0f : -128.0f, hi = out == DataType::u8 ? 255.0f : 127.0f;
    }
    size_t o = 0;
    for (int64_t b = 0; b < n; ++b)
        for (int64_t oc = 0; oc < m; ++oc) {
            const int64_t wzp = param(call, s.w_zp, static_cast<size_t>(oc)), grp = oc / mg;
            for (int64_t oy = 0; oy < ah.out; ++oy)
                for (int64_t ox = 0; ox < aw.out; ++ox, ++o) {
                    int64_t acc = 0;
                    for (int64_t ic = 0; ic < cg; ++ic)
                        for (int64_t ky = 0; ky < ah.k; ++ky)
                            for (int64_t kx = 0; kx < aw.k; ++kx) {
                                const int64_t iy = oy * ah.s - ah.pb + ky * ah.d, ix = ox * aw.s - aw.pb + kx * aw.d;
                                if (iy < 0 || iy >= ah.in || ix < 0 || ix >= aw.in) continue;   // padding: x_zp
                                const auto xv = static_cast<int64_t>(call.get(
                                    xi, static_cast<size_t>(((b * c + grp * cg + ic) * ah.in + iy) * aw.in + ix)));
                                const auto wv = static_cast<int64_t>(
                                    call.get(wi, static_cast<size_t>(((oc * cg + ic) * ah.k + ky) * aw.k + kx)));
                                acc += (xv - xzp) * (wv - wzp);
                            }
                    if (s.y_scale < 0) {
                        call.out<int32_t>(0)[o] = static_cast<int32_t>(acc);
                        continue;
                    }
                    if (call.num_inputs() > 8) acc += param(call, s.bias, static_cast<size_t>(oc));
                    const float mult = (checked_scale(call, s.x_scale, 0, "x_scale") *
                                        checked_scale(call, s.w_scale, static_cast<size_t>(oc), "w_scale")) /
                                       ys;
                    const float v =
                        std::nearbyint(static_cast<float>(acc) * mult) + static_cast<float>(param(call, s.y_zp, 0));
                    call.set(0, o, std::clamp(v, lo, hi));
                }
        }
}

// ---- cpu: output planes over the engine's threads ---------------------------------
//
// The reference's sums with typed pointers and int32 accumulators (255 * 255
// * C/groups * kH * kW must stay below 2^31: larger windows go to the
// reference), one (image, output channel) plane per task, each tap's valid
// output rows and columns computed once instead of tested per element.
constexpr int64_t kMaxTaps = 33000;

struct Geometry {
    int64_t n = 0, c = 0, m = 0, cg = 0, mg = 1;
    Axis h, w;
};

Geometry geometry_of(const HostCall& call, const Slots& s) {
    const Shape& xs = call.in_shape(static_cast<size_t>(s.x));
    const Shape& ws = call.in_shape(static_cast<size_t>(s.w));
    Geometry g;
    g.n = xs[0], g.c = xs[1], g.m = ws[0], g.cg = ws[1], g.mg = g.m / call.attrs().get_int("groups");
    g.h = axis_of(call.attrs(), 0, xs[2], ws[2], call.node());
    g.w = axis_of(call.attrs(), 1, xs[3], ws[3], call.node());
    return g;
}

// The first output index o >= 0 whose input index o * s + off is >= 0, and
// the end of those whose input index is < in (off = tap offset - begin pad).
void valid_range(int64_t off, int64_t s, int64_t in, int64_t out, int64_t& lo, int64_t& hi) {
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    hi = in - off <= 0 ? 0 : (in - off - 1) / s + 1;
    lo = std::min(lo, out);
    hi = std::clamp(hi, lo, out);
}

// One output plane, tap by tap: for each (input channel, ky, kx) the rows of
// the plane accumulate (x - xzp) * (w - wzp) over the output columns whose
// input column lies inside x, a loop over contiguous input for stride 1
// that the compiler vectorises.
template <typename TX, typename TW>
__attribute__((always_inline)) inline void plane_body(const TX* x, const TW* w, int32_t* acc, const Geometry& g,
                                                      int64_t b, int64_t oc, int32_t xzp, int32_t wzp) {
    const int64_t grp = oc / g.mg;
    std::fill(acc, acc + g.h.out * g.w.out, 0);
    for (int64_t ic = 0; ic < g.cg; ++ic) {
        const TX* xp = x + (b * g.c + grp * g.cg + ic) * g.h.in * g.w.in;
        const TW* wp = w + (oc * g.cg + ic) * g.h.k * g.w.k;
        for (int64_t ky = 0; ky < g.h.k; ++ky) {
            int64_t y0 = 0, y1 = 0;
            valid_range(ky * g.h.d - g.h.pb, g.h.s, g.h.in, g.h.out, y0, y1);
            for (int64_t kx = 0; kx < g.w.k; ++kx) {
                const int32_t wv = static_cast<int32_t>(wp[ky * g.w.k + kx]) - wzp;
                const int64_t off = kx * g.w.d - g.w.pb;
                int64_t x0 = 0, x1 = 0;
                valid_range(off, g.w.s, g.w.in, g.w.out, x0, x1);
                for (int64_t oy = y0; oy < y1; ++oy) {
                    // Input index of output column 0 (may lie before the row: only
                    // columns x0.. are read).
                    const int64_t i0 = (oy * g.h.s + ky * g.h.d - g.h.pb) * g.w.in + off;
                    int32_t* ar = acc + oy * g.w.out;
                    if (g.w.s == 1) {
                        const TX* row = xp + i0 + x0;
                        for (int64_t j = 0; j < x1 - x0; ++j) ar[x0 + j] += (static_cast<int32_t>(row[j]) - xzp) * wv;
                    } else {
                        for (int64_t ox = x0; ox < x1; ++ox)
                            ar[ox] += (static_cast<int32_t>(xp[i0 + ox * g.w.s]) - xzp) * wv;
                    }
                }
            }
        }
    }
}

using Acc = int32_t;
DYNRT_CPU_CLONES void plane_uu(const uint8_t* x, const uint8_t* w, Acc* acc, const Geometry& g, int64_t b, int64_t oc,
                               int32_t xzp, int32_t wzp) {
    plane_body(x, w, acc, g, b, oc, xzp, wzp);
}
DYNRT_CPU_CLONES void plane_us(const uint8_t* x, const int8_t* w, Acc* acc, const Geometry& g, int64_t b, int64_t oc,
                               int32_t xzp, int32_t wzp) {
    plane_body(x, w, acc, g, b, oc, xzp, wzp);
}
DYNRT_CPU_CLONES void plane_su(const int8_t* x, const uint8_t* w, Acc* acc, const Geometry& g, int64_t b, int64_t oc,
                               int32_t xzp, int32_t wzp) {
    plane_body(x, w, acc, g, b, oc, xzp, wzp);
}
DYNRT_CPU_CLONES void plane_ss(const int8_t* x, const int8_t* w, Acc* acc, const Geometry& g, int64_t b, int64_t oc,
                               int32_t xzp, int32_t wzp) {
    plane_body(x, w, acc, g, b, oc, xzp, wzp);
}

void plane_any(const HostCall& call, const Slots& s, int32_t* acc, const Geometry& g, int64_t b, int64_t oc,
               int32_t xzp, int32_t wzp) {
    const void* x = call.in_raw(static_cast<size_t>(s.x));
    const void* w = call.in_raw(static_cast<size_t>(s.w));
    const bool xu = call.in_type(static_cast<size_t>(s.x)) == DataType::u8;
    const bool wu = call.in_type(static_cast<size_t>(s.w)) == DataType::u8;
    if (xu && wu) plane_uu(static_cast<const uint8_t*>(x), static_cast<const uint8_t*>(w), acc, g, b, oc, xzp, wzp);
    if (xu && !wu) plane_us(static_cast<const uint8_t*>(x), static_cast<const int8_t*>(w), acc, g, b, oc, xzp, wzp);
    if (!xu && wu) plane_su(static_cast<const int8_t*>(x), static_cast<const uint8_t*>(w), acc, g, b, oc, xzp, wzp);
    if (!xu && !wu) plane_ss(static_cast<const int8_t*>(x), static_cast<const int8_t*>(w), acc, g, b, oc, xzp, wzp);
}

void fast_kernel(HostCall& call) {
    const Slots s = slots_of(call.attrs());
    const Geometry g = geometry_of(call, s);
    const int64_t planes = g.n * g.m, area = g.h.out * g.w.out;
    if (planes == 0 || area == 0) return;
    const auto xzp = static_cast<int32_t>(param(call, s.x_zp, 0));
    const DataType out = call.out_type(0);
    const float lo = out == DataType::i8 ? -128.0f : 0.0f, hi = out == DataType::i8 ? 127.0f : 255.0f;
    float ys = 1.0f, xs = 1.0f;
    if (s.y_scale >= 0) {
        ys = checked_scale(call, s.y_scale, 0, "y_scale");
        xs = checked_scale(call, s.x_scale, 0, "x_scale");
    }
    std::vector<float> mult(static_cast<size_t>(g.m), 1.0f);
    if (s.y_scale >= 0)
        for (int64_t oc = 0; oc < g.m; ++oc)
            mult[static_cast<size_t>(oc)] =
                (xs * checked_scale(call, s.w_scale, static_cast<size_t>(oc), "w_scale")) / ys;
    const CpuThreads threads(call.params().engine,
                             checked_mul(static_cast<size_t>(planes * area), static_cast<size_t>(g.cg * g.h.k * g.w.k),
                                         "conv_integer work"));
    parallel_for(threads, static_cast<size_t>(planes), 1, [&](size_t begin, size_t end) {
        std::vector<int32_t> acc(static_cast<size_t>(area));
        for (size_t p = begin; p < end; ++p) {
            const auto b = static_cast<int64_t>(p) / g.m, oc = static_cast<int64_t>(p) % g.m;
            plane_any(call, s, acc.data(), g, b, oc, xzp,
                      static_cast<int32_t>(param(call, s.w_zp, static_cast<size_t>(oc))));
            const size_t base = p * static_cast<size_t>(area);
            if (s.y_scale < 0) {
                std::copy(acc.begin(), acc.end(), call.out<int32_t>(0) + base);
                continue;
            }
            const int64_t bias = call.num_inputs() > 8 ? param(call, s.bias, static_cast<size_t>(oc)) : 0;
            const auto yzp = static_cast<float>(param(call, s.y_zp, 0));
            const float k = mult[static_cast<size_t>(oc)];
            for (size_t i = 0; i < acc.size(); ++i) {
                const float v = std::clamp(std::nearbyint(static_cast<float>(acc[i] + bias) * k) + yzp, lo, hi);
                if (out == DataType::u8) call.out<uint8_t>(0)[base + i] = static_cast<uint8_t>(v);
                else call.out<int8_t>(0)[base + i] = static_cast<int8_t>(v);
            }
        }
    });
}

int64_t taps_of(const KernelParams& p) {
    const Slots s = slots_of(*p.attrs);
    const PartialShape& w = p.inputs.at(static_cast<size_t>(s.w)).shape;
    int64_t t = 1;
    for (size_t i = 1; i < 4; ++i) {
        if (!w[i].is_static()) return -1;
        t *= w[i].get_length();
    }
    return t;
}

std::string taps_validate(const KernelParams& p) {
    const int64_t t = taps_of(p);
    if (t < 0) return "w's dims are dynamic (the int32 accumulator's bound is unknown)";
    if (t > kMaxTaps) return "C/groups * kH * kW > 33000 could overflow int32";
    return "";
}

// ---- OpenCL ----------------------------------------------------------------------

// The runtime begin pads (auto_pad same_* takes them from the input extent).
std::vector<OclArg> ocl_pads(const KernelParams& p) {
    const Slots s = slots_of(*p.attrs);
    const Shape x = p.inputs.at(static_cast<size_t>(s.x)).get_shape();
    const Shape w = p.inputs.at(static_cast<size_t>(s.w)).get_shape();
    const Axis h = axis_of(*p.attrs, 0, x[2], w[2], p.node), v = axis_of(*p.attrs, 1, x[3], w[3], p.node);
    return {OclArg::i32(static_cast<int32_t>(h.pb)), OclArg::i32(static_cast<int32_t>(v.pb))};
}

void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) != 0)
        throw field_error(p.node, "x_scale", "x_scale is not positive; a quantization scale must be");
    if (report.at(1) != 0)
        throw field_error(p.node, "w_scale", "w_scale is not positive; a quantization scale must be");
    if (report.at(2) != 0)
        throw field_error(p.node, "y_scale", "y_scale is not positive; a quantization scale must be");
}

std::string dim(int slot, size_t i) { return jit_dims_product("INPUT" + std::to_string(slot), 4, i, i + 1); }

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = conv_integer_cl;
    spec.kernel_name = "conv_integer_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const Slots s = slots_of(*p.attrs);
        const Attributes& a = *p.attrs;
        const DataType out = p.outputs.at(0).dtype;
        const std::vector<int64_t> st = per_axis_attr(a, "strides", 2, 1, 1, kOp, p.node);
        const std::vector<int64_t> dl = per_axis_attr(a, "dilations", 2, 1, 1, kOp, p.node);
        JitDefines d{{"X", "input" + std::to_string(s.x)},
                     {"W", "input" + std::to_string(s.w)},
                     {"W_TYPE", "INPUT" + std::to_string(s.w) + "_TYPE"},
                     {"NUM_INPUTS", std::to_string(p.inputs.size())},
                     {"C", dim(s.x, 1)},
                     {"IH", dim(s.x, 2)},
                     {"IW", dim(s.x, 3)},
                     {"M", dim(s.w, 0)},
                     {"CG", dim(s.w, 1)},
                     {"KH", dim(s.w, 2)},
                     {"KW", dim(s.w, 3)},
                     {"OH", jit_dims_product("OUTPUT0", 4, 2, 3)},
                     {"OW", jit_dims_product("OUTPUT0", 4, 3, 4)},
                     {"SH", std::to_string(st[0])},
                     {"SW", std::to_string(st[1])},
                     {"DH", std::to_string(dl[0])},
                     {"DW", std::to_string(dl[1])},
                     {"GROUPS", std::to_string(a.get_int("groups"))},
                     {"REQUANT", s.y_scale >= 0 ? "1" : "0"},
                     {"HAS_BIAS", p.inputs.size() > 8 ? "1" : "0"},
                     {"QLO", out == DataType::i8 ? "-128.0f" : "0.0f"},
                     {"QHI", out == DataType::i8 ? "127.0f" : "255.0f"},
                     {"CONVERT_OUT(v)", out == DataType::i8 ? "convert_char_sat(v)" : "convert_uchar_sat(v)"}};
        auto param = [&](const char* name, int slot) {
            d.emplace_back(std::string("HAS_") + name, slot >= 0 ? "1" : "0");
            if (slot < 0) return;
            d.emplace_back(std::string(name), "input" + std::to_string(slot));
            d.emplace_back(std::string(name) + "_LEN", "INPUT" + std::to_string(slot) + "_LENGTH");
        };
        param("XZP", s.x_zp);
        param("WZP", s.w_zp);
        param("XS", s.x_scale);
        param("WS", s.w_scale);
        param("YS", s.y_scale);
        param("YZP", s.y_zp);
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    spec.scalars = ocl_pads;
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

// ---- ONNX ----------------------------------------------------------------------

// The window attributes of a node whose x is input `x` and weights input `w`
// (onnx_weighted_window reads the weights as input 1; QLinearConv's are 3).
bool window(ImportContext& c, size_t x, size_t w) {
    if (!c.only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})) return false;
    if (c.rank(x) != 4 || c.rank(w) != 4)
        return c.unsupported("x " + c.layout(x).shape.to_string() + ", w " + c.layout(w).shape.to_string() +
                             ": conv_integer convolves over 2 spatial axes only");
    const std::vector<int64_t> ks = c.ints("kernel_shape");
    const PartialShape& ws = c.layout(w).shape;
    if (!ks.empty() && (ks.size() != 2 || (ws[2].is_static() && ws[2].get_length() != ks[0]) ||
                        (ws[3].is_static() && ws[3].get_length() != ks[1])))
        return c.unsupported("kernel_shape " + ints_to_string(ks) + " differs from the weights " + ws.to_string());
    for (const char* name : {"strides", "dilations"})
        if (c.has(name)) c.set(name, c.ints(name));
    if (!onnx_window_pads(c, 2)) return false;
    c.set("groups", c.i("group", 1));
    return true;
}

bool onnx_conv_integer(ImportContext& c) {
    if (!window(c, 0, 1)) return false;
    c.set("x_zero_point", c.present(2));
    c.set("w_zero_point", c.present(3));
    c.use_inputs({0, 1, 2, 3});
    return true;
}

bool onnx_qlinear_conv(ImportContext& c) {
    if (!window(c, 0, 3)) return false;
    for (const auto& [k, field] :
         std::vector<std::pair<size_t, const char*>>{{1, "x_scale"}, {4, "w_scale"}, {6, "y_scale"}})
        if (const HostTensor* v = c.value(k))
            for (size_t i = 0; i < v->layout().get_shape().count(); ++i)
                if (!(v->get_as_double(i) > 0.0))
                    throw field_error(c.node().name, field,
                                      std::string(field) + "[" + std::to_string(i) + "] is " +
                                          std::to_string(v->get_as_double(i)) +
                                          "; a quantization scale must be positive");
    c.set("requantize", true);
    c.use_inputs({0, 1, 2, 3, 4, 5, 6, 7, 8});
    return true;
}

std::vector<AttrSpec> attrs() {
    const std::vector<int64_t> none;
    return {attr_ints("strides", none, "step per spatial axis (empty: 1)"),
            attr_ints("pads_begin", none, "padding before each spatial axis (empty: 0; auto_pad explicit)"),
            attr_ints("pads_end", none, "padding after each spatial axis (empty: 0; auto_pad explicit)"),
            attr_ints("dilations", none, "kernel tap spacing per spatial axis (empty: 1)"),
            attr_int("groups", 1, "channel groups; C and M must be divisible by it"),
            attr_string("auto_pad", std::string("explicit"), auto_pad_names(),
                        "explicit (pads_*), valid or same_upper/same_lower"),
            attr_bool("x_zero_point", false, "without requantize: input 2 is x's zero point"),
            attr_bool("w_zero_point", false, "without requantize: the next input is w's zero point"),
            attr_bool("requantize", false,
                      "inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point[, bias]")};
}

void register_conv_integer(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "integer 2-D convolution of u8/i8 with zero points, i32 or requantized (ConvInteger, QLinearConv)",
               2, 9, attrs(), infer);
    def.imports = {
        onnx_rule("ConvInteger", 2, 4, onnx_conv_integer,
                  "2 spatial axes; pads/auto_pad/strides/dilations/group; w zero point per tensor or channel"),
        onnx_rule("QLinearConv", 8, 9, onnx_qlinear_conv,
                  "2 spatial axes; w scale and zero point per tensor or output channel; optional i32 bias")};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options(kTypes));
    add_host_impls(reg, kOp, fast_kernel, optimised_host_options(kTypes, taps_validate));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(kTypes, taps_validate));
}

}   // namespace

DYNRT_MODULE("conv_integer", register_conv_integer)
