// deconvolution: grouped transposed convolution (convolution backprop data)
// over 1, 2 or 3 spatial axes of an [N, C, spatial...] input (ONNX
// ConvTranspose).
//
// x [N, C, S...], weights [C, O/groups, k...] (input channels first, as
// inference runtimes store them), optional bias [O]. Per spatial axis the
// natural extent is (in - 1)*stride + dilation*(k - 1) + 1 + output_padding;
// the output is that minus pads_begin and pads_end, or a fixed output_shape,
// or in*stride (auto_pad same_*), the pads then derived from the input extent
// at every shape (so dynamic spatial dims work). The op is critical,
// weightable (its static host impl and the OpenCL kernel read osv16 weights,
// so the flow reorders them) and accepts fused post-ops.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "deconvolution_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/ocl_window.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"

namespace {

using dynrt::DataType;
using dynrt::Dimension;
using dynrt::PartialShape;
using dynrt::Shape;

using dynrt::AutoPad;

// The validated attributes, one value per spatial axis (defaults filled in);
// output_shape is empty unless the output extents are fixed.
struct DeconvAttrs {
    AutoPad auto_pad = AutoPad::explicit_pads;
    std::vector<int64_t> strides, dilations, pads_begin, pads_end, output_padding, output_shape;
    int64_t groups = 1;
    // Pads derived from the extents (output_shape or same_*), not the attributes.
    bool derived() const { return !output_shape.empty() || dynrt::is_same_pad(auto_pad); }
    // A derived odd pad goes to the begin (ONNX: every case but same_upper).
    bool lower_split() const { return auto_pad != AutoPad::same_upper; }
};

// One spatial axis for a known input extent: taps, step, tap distance, begin
// pad (rows cropped before; negative with a larger output_shape is not used:
// extra rows go to the end) and the output extent (may be <= 0).
struct AxisWindow {
    int64_t in = 1, k = 1, s = 1, d = 1, pb = 0, out = 1;
};

dynrt::Error attr_fault(const std::string& node, const std::string& attr, const std::string& message) {
    return dynrt::window_attr_error("deconvolution", node, attr, message);
}

std::vector<int64_t> per_axis(const dynrt::Attributes& a, const std::string& name, size_t rank, int64_t fill,
                              int64_t min, const std::string& node) {
    return dynrt::per_axis_attr(a, name, rank, fill, min, "deconvolution", node);
}

DeconvAttrs read_attrs(const dynrt::Attributes& a, size_t rank, const std::string& node) {
    DeconvAttrs r;
    r.auto_pad = dynrt::auto_pad_of("deconvolution", a);
    r.strides = per_axis(a, "strides", rank, 1, 1, node);
    r.dilations = per_axis(a, "dilations", rank, 1, 1, node);
    r.pads_begin = per_axis(a, "pads_begin", rank, 0, 0, node);
    r.pads_end = per_axis(a, "pads_end", rank, 0, 0, node);
    r.output_padding = per_axis(a, "output_padding", rank, 0, 0, node);
    if (!a.get_ints("output_shape").empty()) r.output_shape = per_axis(a, "output_shape", rank, 1, 1, node);
    for (size_t i = 0; i < rank; ++i)
        if (r.output_padding[i] >= std::max(r.strides[i], r.dilations[i]))
            throw attr_fault(node, "output_padding",
                             "output_padding " + dynrt::ints_to_string(r.output_padding) +
                                 " must be below max(stride, dilation) per axis");
    r.groups = a.get_int("groups");
    if (r.groups < 1)
        throw attr_fault(node, "groups", "attribute 'groups' must be >= 1, got " + std::to_string(r.groups));
    return r;
}

// The window of spatial axis `i` for input extent `in` (>= 1) and kernel
// extent `k` (>= 1): natural = (in - 1)*s + d*(k - 1) + 1 + output_padding;
// explicit/valid: out = natural - pads; output_shape or same_* (out = in*s):
// the pads total natural - out, split with the odd one at the end (same_upper)
// or the begin; a negative total (a longer output) adds zero-input rows at the
// end. deconvolution.cl recomputes the derived begin pad from the extents.
AxisWindow axis_window(const DeconvAttrs& a, size_t i, int64_t in, int64_t k) {
    const std::string at = "[" + std::to_string(i) + "]";
    AxisWindow w;
    w.in = in, w.k = k, w.s = a.strides[i], w.d = a.dilations[i];
    const std::string what = "deconvolution: (input extent - 1) * strides" + at + " + dilations" + at +
                             " * (kernel extent - 1) + 1 + output_padding" + at;
    const int64_t natural =
        dynrt::checked_add(dynrt::checked_add(dynrt::checked_mul(in - 1, w.s, what.c_str()),
                                              dynrt::checked_mul(w.d, k - 1, what.c_str()), what.c_str()),
                           1 + a.output_padding[i], what.c_str());   // op < max(s, d)
    if (!a.derived()) {
        const bool expl = a.auto_pad == AutoPad::explicit_pads;
        w.pb = expl ? a.pads_begin[i] : 0;
        const std::string pads_what = "deconvolution: pads_begin" + at + " + pads_end" + at;
        w.out = natural - (expl ? dynrt::checked_add(w.pb, a.pads_end[i], pads_what.c_str()) : 0);
        return w;
    }
    const std::string out_what = "deconvolution: input extent * strides" + at;
    w.out = !a.output_shape.empty() ? a.output_shape[i] : dynrt::checked_mul(in, w.s, out_what.c_str());
    const int64_t total = natural - w.out;   // both >= 1: no overflow
    w.pb = total <= 0 ? 0 : a.lower_split() ? total - total / 2 : total / 2;
    return w;
}

void expect_nonempty(const DeconvAttrs& a, const AxisWindow& w, size_t i, const std::string& node,
                     const std::string& shapes) {
    if (w.in >= 1 && w.out >= 1) return;
    throw attr_fault(node, a.derived() ? "output_shape" : "pads_begin",
                     "output extent of spatial axis [" + std::to_string(i) + "] would be " +
                         std::to_string(w.in >= 1 ? w.out : 0) + " (input extent " + std::to_string(w.in) +
                         ", kernel " + std::to_string(w.k) + ", stride " + std::to_string(w.s) + ", pads " +
                         dynrt::ints_to_string(a.pads_begin) + "/" + dynrt::ints_to_string(a.pads_end) + "; " + shapes +
                         ")");
}

// ---- shape inference ---------------------------------------------------------

// Output extent of spatial axis i: increasing in the input extent, so bounds
// map to bounds (fixed with output_shape).
Dimension out_dim(const DeconvAttrs& a, size_t i, const Dimension& in, int64_t k, const std::string& node,
                  const std::string& shapes) {
    if (!a.output_shape.empty()) return Dimension(a.output_shape[i]);
    if (in.is_static()) {
        const AxisWindow w = in.get_length() < 1 ? AxisWindow{0, k, 1, 1, 0, 0} : axis_window(a, i, in.get_length(), k);
        expect_nonempty(a, w, i, node, shapes);
        return Dimension(w.out);
    }
    int64_t hi = Dimension::kUnbounded;
    if (in.max() != Dimension::kUnbounded) {
        const AxisWindow w = in.max() < 1 ? AxisWindow{0, k, 1, 1, 0, 0} : axis_window(a, i, in.max(), k);
        expect_nonempty(a, w, i, node, shapes);   // no extent in the range fits
        hi = w.out;
    }
    return Dimension(std::max<int64_t>(axis_window(a, i, std::max<int64_t>(in.min(), 1), k).out, 1), hi);
}

// The output channels O = weights dim 1 * groups; checks C and the bias.
Dimension channels(const dynrt::ShapeInferContext& ctx, const DeconvAttrs& a, const std::string& shapes) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const Dimension& c = x.shape[1];
    const Dimension& cw = w.shape[0];
    if (c.is_static() && c.get_length() % a.groups != 0)
        throw attr_fault(ctx.node, "groups",
                         "channels C=" + c.to_string() + " not divisible by groups=" + std::to_string(a.groups) + " (" +
                             shapes + ")");
    if (!c.compatible(cw))
        throw dynrt::Error("deconvolution: input has C=" + c.to_string() + " but weights dim 0 is " + cw.to_string() +
                           " (" + shapes + ")");
    const Dimension o = w.shape[1].is_static()
                            ? Dimension(dynrt::checked_mul(w.shape[1].get_length(), a.groups,
                                                           "deconvolution: output channels (weights dim 1 * groups)"))
                            : Dimension();
    if (ctx.inputs.size() > 2) {
        const dynrt::Layout& b = ctx.inputs[2];
        if (b.shape.rank() != 1 || !b.shape[0].compatible(o) || b.dtype != x.dtype)
            throw dynrt::Error("deconvolution bias must be " + std::string(dynrt::to_string(x.dtype)) +
                               "[O] with O=" + o.to_string() + ", got " + b.to_string() + " (" + shapes + ")");
    }
    return o;
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const std::string shapes = "input " + x.shape.to_string() + ", weights " + w.shape.to_string();
    if (!dynrt::is_floating(x.dtype) || x.dtype != w.dtype)
        throw dynrt::Error("deconvolution needs floating-point input and weights of one data type, got " +
                           x.to_string() + " and " + w.to_string());
    const size_t rank = x.shape.rank();
    if (rank < 3 || rank > 5 || w.shape.rank() != rank)
        throw dynrt::Error(
            "deconvolution needs input [N,C,spatial...] with 1 to 3 spatial axes and weights "
            "[C,O/groups,kernel...] of the same rank, got " +
            shapes);
    const DeconvAttrs a = read_attrs(ctx.attrs, rank - 2, ctx.node);
    std::vector<Dimension> out = {x.shape[0], channels(ctx, a, shapes)};
    for (size_t i = 0; i + 2 < rank; ++i) {
        const Dimension& k = w.shape[2 + i];
        if (!k.is_static()) {
            out.push_back(a.output_shape.empty() ? Dimension() : Dimension(a.output_shape[i]));
            continue;
        }
        if (k.get_length() == 0)
            throw dynrt::Error("deconvolution: weights (input 1) " + w.shape.to_string() +
                               " have kernel extent 0 on spatial axis [" + std::to_string(i) +
                               "]; every kernel extent must be >= 1 (" + shapes + ")");
        out.push_back(out_dim(a, i, x.shape[2 + i], k.get_length(), ctx.node, shapes));
    }
    return {dynrt::Layout(PartialShape(out), x.dtype)};
}

// ---- the reference -------------------------------------------------------------

// The windows of a static input, weights and output, leading axes a lower
// rank lacks as extent 1, so every rank is walked as (d, h, w).
std::array<AxisWindow, 3> windows3(const DeconvAttrs& a, const Shape& x, const Shape& w) {
    std::array<AxisWindow, 3> r{};
    const size_t spatial = x.rank() - 2;
    for (size_t i = 0; i < spatial; ++i) r[3 - spatial + i] = axis_window(a, i, x[2 + i], w[2 + i]);
    return r;
}

// Scatter form (independent of the OpenCL kernel's gather form): input element
// (ic, i) adds x * w[ic, ocg, tap] to output (oc, i*s - pb + tap*d) of every
// output channel of its group, when that lies inside the output.
void scatter(const std::vector<double>& w, const std::array<AxisWindow, 3>& win, int64_t og, double xv, int64_t ic,
             const std::array<int64_t, 3>& i, int64_t y_base, std::vector<double>& y) {
    const int64_t taps = win[0].k * win[1].k * win[2].k, out_plane = win[0].out * win[1].out * win[2].out;
    for (int64_t ocg = 0; ocg < og; ++ocg)
        for (int64_t t = 0; t < taps; ++t) {
            const std::array<int64_t, 3> tap = {t / (win[1].k * win[2].k), (t / win[2].k) % win[1].k, t % win[2].k};
            std::array<int64_t, 3> o{};
            bool inside = true;
            for (size_t j = 0; j < 3; ++j) {
                o[j] = i[j] * win[j].s - win[j].pb + tap[j] * win[j].d;
                inside = inside && o[j] >= 0 && o[j] < win[j].out;
            }
            if (!inside) continue;
            y[static_cast<size_t>(y_base + ocg * out_plane + (o[0] * win[1].out + o[1]) * win[2].out + o[2])] +=
                xv * w[static_cast<size_t>((ic * og + ocg) * taps + t)];
        }
}

void reference(dynrt::HostCall& call) {
    const Shape& xs = call.in_shape(0);
    const Shape& ws = call.in_shape(1);
    const Shape& ys = call.out_shape(0);
    const DeconvAttrs a = read_attrs(call.attrs(), xs.rank() - 2, call.node());
    const int64_t N = xs[0], C = xs[1], OG = ws[1], O = ys[1];
    if (ws[0] != C || O != OG * a.groups || C % a.groups != 0)
        throw dynrt::Error("deconvolution: input " + xs.to_string() + " and weights " + ws.to_string() +
                           " do not match groups=" + std::to_string(a.groups));
    const std::array<AxisWindow, 3> win = windows3(a, xs, ws);
    const int64_t CG = C / a.groups, out_plane = win[0].out * win[1].out * win[2].out;
    // Weights through get(): a reordered (blocked) weights input reads the same.
    std::vector<double> w(ws.count());
    for (size_t i = 0; i < w.size(); ++i) w[i] = call.get(1, i);
    std::vector<double> y(ys.count(), 0.0);
    size_t xi = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t ic = 0; ic < C; ++ic) {
            const int64_t y_base = (n * O + (ic / CG) * OG) * out_plane;
            for (int64_t id = 0; id < win[0].in; ++id)
                for (int64_t ih = 0; ih < win[1].in; ++ih)
                    for (int64_t iw = 0; iw < win[2].in; ++iw)
                        scatter(w, win, OG, call.get(0, xi++), ic, {id, ih, iw}, y_base, y);
        }
    const bool has_bias = call.num_inputs() > 2;
    for (size_t i = 0; i < y.size(); ++i) {
        const size_t oc = (i / static_cast<size_t>(out_plane)) % static_cast<size_t>(O);
        call.set(0, i, y[i] + (has_bias ? call.get(2, oc) : 0.0));
    }
}

// ---- cpu: oneDNN --------------------------------------------------------------------

// oneDNN's output extent is (in - 1)*s + d*(k - 1) + 1 - pad_l - pad_r: the
// end pad is what the reference's window leaves after its begin pad
// (negative when the output is longer than the natural extent).
int64_t dnnl_pad_end(const AxisWindow& w) { return (w.in - 1) * w.s + w.d * (w.k - 1) + 1 - w.pb - w.out; }

dnnl::deconvolution_forward::primitive_desc dnnl_deconv_pd(const dynrt::KernelParams& p) {
    const Shape xs = p.inputs.at(0).get_shape(), ws = p.inputs.at(1).get_shape(), ys = p.outputs.at(0).get_shape();
    const size_t spatial = xs.rank() - 2;
    const DeconvAttrs a = read_attrs(*p.attrs, spatial, p.node);
    dnnl::memory::dims strides, dilates, pad_l, pad_r;
    for (size_t i = 0; i < spatial; ++i) {
        const AxisWindow w = axis_window(a, i, xs[2 + i], ws[2 + i]);
        strides.push_back(w.s);
        dilates.push_back(w.d - 1);   // oneDNN counts the holes
        pad_l.push_back(w.pb);
        pad_r.push_back(dnnl_pad_end(w));
    }
    // Weights [C, OG, k...] = [G, CG, OG, k...] as oneDNN's [G, OG, CG, k...].
    const int64_t G = a.groups, CG = ws[0] / G, OG = ws[1];
    const auto taps = static_cast<int64_t>(dynrt::dims_product(ws, 2, ws.rank()));
    dnnl::memory::dims wd = {G, OG, CG}, wst = {CG * OG * taps, taps, OG * taps};
    dnnl::memory::dims k_strides(spatial, 1);
    for (size_t i = spatial; i-- > 1;) k_strides[i - 1] = k_strides[i] * ws[2 + i];
    for (size_t i = 0; i < spatial; ++i) {
        wd.push_back(ws[2 + i]);
        wst.push_back(k_strides[i]);
    }
    if (G == 1) {
        wd.erase(wd.begin());
        wst.erase(wst.begin());
    }
    const auto plain = [](const Shape& sh) {
        return dynrt::dnnl_plain_desc(std::vector<int64_t>(sh.begin(), sh.end()), DataType::f32);
    };
    const dnnl::memory::desc bias = p.inputs.size() > 2 ? plain(p.inputs[2].get_shape()) : dnnl::memory::desc();
    const dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                              plain(xs), dnnl::memory::desc(wd, dnnl::memory::data_type::f32, wst),
                                              bias, plain(ys), strides, dilates, pad_l, pad_r);
    return dnnl::deconvolution_forward::primitive_desc(d, dynrt::dnnl_attr(), dynrt::dnnl_cpu_engine());
}

dynrt::DnnlPlan dnnl_deconv_plan(const dynrt::KernelParams& p) {
    const auto pd = dnnl_deconv_pd(p);
    std::vector<dynrt::DnnlArgRef> args{
        {DNNL_ARG_SRC, false, 0}, {DNNL_ARG_WEIGHTS, false, 1}, {DNNL_ARG_DST, true, 0}};
    std::vector<dnnl::memory::desc> descs{pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
    if (p.inputs.size() > 2) {
        args.push_back({DNNL_ARG_BIAS, false, 2});
        descs.push_back(pd.bias_desc());
    }
    return dynrt::dnnl_plan(dnnl::deconvolution_forward(pd), pd.scratchpad_desc(), std::move(args), std::move(descs));
}

std::string dnnl_deconv_validate(const dynrt::KernelParams& p) {
    try {
        dnnl_deconv_pd(p);
    } catch (const dnnl::error& e) {
        return std::string("oneDNN has no deconvolution for these shapes (") + e.what() + ")";
    }
    return {};
}

// ---- OpenCL ----------------------------------------------------------------------

// Attributes as JIT constants in both builds; derived begin pads are an
// expression of the dims (a literal once folded in the static build).
dynrt::JitDefines ocl_defines(const dynrt::KernelParams& p, bool) {
    const size_t rank = p.inputs.at(0).shape.rank();
    const DeconvAttrs a = read_attrs(*p.attrs, rank - 2, p.node);
    const std::string lead = std::to_string(8 - rank), second = std::to_string(9 - rank);
    dynrt::JitDefines d = {{"GROUPS", std::to_string(a.groups)},
                           {"WEIGHTS_BLOCK", std::to_string(dynrt::block_size(p.inputs.at(1).format))},
                           {"N_DIM", "INPUT0_DIM" + lead},
                           {"C_DIM", "INPUT0_DIM" + second},
                           {"O_DIM", "OUTPUT0_DIM" + second},
                           {"OG_DIM", "INPUT1_DIM" + second}};
    const std::vector<int64_t> pads = a.auto_pad == AutoPad::explicit_pads ? a.pads_begin : std::vector<int64_t>();
    const auto derived_pad = [&](const std::string& x, size_t i) -> std::string {
        if (!a.derived()) return {};
        return "DERIVED_PAD_BEGIN(IN_" + x + ", OUT_" + x + ", K_" + x + ", STRIDE_" + x + ", DILATION_" + x + ", " +
               std::to_string(a.output_padding[i]) + ", " + (a.lower_split() ? "1" : "0") + ")";
    };
    const dynrt::JitDefines axes = dynrt::jit_window_axes(rank, a.strides, a.dilations, pads, derived_pad);
    d.insert(d.end(), axes.begin(), axes.end());
    return d;
}

// The kernel indexes with int: tensors (weights in storage) and window
// attributes must fit.
std::string ocl_validate(const dynrt::KernelParams& p) {
    return dynrt::check_window_int_range(p, true, {"strides", "dilations", "pads_begin", "pads_end", "output_shape"});
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = deconvolution_cl;
    spec.kernel_name = "deconvolution";
    spec.fused_ops = true;   // FUSED_OPS before each store
    spec.defines = ocl_defines;
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& lim) {
        const dynrt::PartialShape& ys = p.outputs[0].shape;
        const size_t rank = ys.rank();
        const auto dim = [&](size_t i) { return static_cast<size_t>(ys[i].get_length()); };
        const size_t ow = dim(rank - 1), oh = rank > 3 ? dim(rank - 2) : 1, od = rank > 4 ? dim(rank - 3) : 1;
        return dynrt::dispatch_nd({ow, oh, dim(0) * dim(1) * od}, 3, lim);
    };
    return spec;
}

// ---- ONNX ----------------------------------------------------------------------

// A per-axis list of the node, or its trailing `spatial` values when it also
// lists N and C (output_shape may).
std::vector<int64_t> spatial_tail(const std::vector<int64_t>& v, size_t spatial) {
    if (v.size() != spatial + 2) return v;
    return std::vector<int64_t>(v.begin() + 2, v.end());
}

bool onnx_conv_transpose(dynrt::ImportContext& c) {
    if (!c.only_attrs(
            {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}))
        return false;
    if (!dynrt::onnx_weighted_window(c, "transposes convolutions")) return false;
    const size_t spatial = c.rank(0) - 2;
    if (c.has("output_padding")) c.set("output_padding", c.ints("output_padding"));
    if (c.has("output_shape")) c.set("output_shape", spatial_tail(c.ints("output_shape"), spatial));
    c.use_inputs({0, 1, 2});
    return true;
}

std::vector<dynrt::ImportRule> onnx_rules() {
    return {dynrt::onnx_rule("ConvTranspose", 2, 3, onnx_conv_transpose,
                             "1 to 3 spatial axes; `pads` [b..., e...] -> `pads_begin`/`pads_end`; `group` -> "
                             "`groups`; `strides`, `dilations`, `output_padding`, `output_shape` (spatial extents; "
                             "pads derived from the runtime shape), `auto_pad` VALID, SAME_UPPER/SAME_LOWER; "
                             "`kernel_shape` must match the weights")};
}

// ---- registration ------------------------------------------------------------------

std::vector<dynrt::AttrSpec> deconv_attrs() {
    const std::vector<int64_t> none;
    return {dynrt::attr_ints("strides", none, "upsampling step per spatial axis (empty: 1)"),
            dynrt::attr_ints("pads_begin", none, "rows cropped before each spatial axis (empty: 0; auto_pad explicit)"),
            dynrt::attr_ints("pads_end", none, "rows cropped after each spatial axis (empty: 0; auto_pad explicit)"),
            dynrt::attr_ints("dilations", none, "kernel tap spacing per spatial axis (empty: 1)"),
            dynrt::attr_ints("output_padding", none, "extra rows at the end of each spatial axis (empty: 0)"),
            dynrt::attr_ints("output_shape", none,
                             "fixed output extent per spatial axis (empty: none); pads derived from the input extent"),
            dynrt::attr_int("groups", 1, "channel groups; C must be divisible by it"),
            dynrt::attr_string("auto_pad", std::string("explicit"), dynrt::auto_pad_names(),
                               "explicit (pads_*), valid (none) or same_upper/same_lower (output = in*stride, pads "
                               "derived, the odd one at the end/begin)")};
}

void register_deconvolution(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def =
        dynrt::op_def("deconvolution",
                      "grouped transposed convolution over 1-3 spatial axes: x[N,C,S...], w[C,O/groups,k...], bias[O]",
                      2, 3, deconv_attrs(), infer);
    def.traits.critical = true;
    def.traits.weightable = true;
    def.traits.accepts_fused_ops = true;
    def.weights_input = 1;
    // A multiply-add per input element and weight it scatters through
    // (w[1] * taps); every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes&) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape w = in.at(1).get_shape();
        if (w.size() >= 3)
            c.flops = 2.0 * static_cast<double>(in.at(0).get_shape().count()) *
                      static_cast<double>(dynrt::dims_product(w, 1, w.size()));
        return c;
    };
    def.imports = onnx_rules();
    reg.add_op(def);

    dynrt::HostImplOptions opts;
    opts.dtypes = {DataType::f32, DataType::f16, DataType::f64};
    // The static flavour reads osv16 weights, like a device's tuned kernel.
    opts.static_weights_format = dynrt::Format::osv16;
    dynrt::add_host_impls(reg, "deconvolution", reference, opts);

    dynrt::DnnlSpec dnnl;
    dnnl.validate = dnnl_deconv_validate;
    dnnl.plan = dnnl_deconv_plan;
    dynrt::add_dnnl_impls(reg, "deconvolution", std::move(dnnl));

    // OpenCL: deconvolution.cl, f32; f16 and f64 run on the host impls.
    dynrt::OclImplOptions ocl;
    ocl.dtypes = {DataType::f32};
    ocl.weights_format = dynrt::Format::osv16;   // 16 input channels' taps side by side
    ocl.validate = ocl_validate;
    dynrt::add_ocl_impls(reg, "deconvolution", ocl_spec(), ocl);
}

}   // namespace

DYNRT_MODULE("deconvolution", register_deconvolution)
