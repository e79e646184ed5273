// convolution: grouped convolution (cross-correlation) over 1, 2 or 3 spatial
// axes of an [N, C, spatial...] input (ONNX Conv).
//
// x [N, C, S...], weights [O, C/groups, k...], optional bias [O]. The window
// geometry (conv_window.hpp) is a function of the attributes, the input extent
// and the kernel extent, so auto_pad same_* derives its pads from the runtime
// shape: shape inference computes the output extents from it (bounds for
// dynamic dims), the reference recomputes it for each concrete shape and the
// OpenCL kernel from its dims. The op is critical, weightable (the static host
// impl reads osv16 weights) and accepts fused post-ops.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conv_window.hpp"
#include "convolution_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_conv.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/ocl_window.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using conv::AutoPad;
using conv::AxisWindow;
using conv::ConvAttrs;
using dynrt::DataType;
using dynrt::Dimension;
using dynrt::PartialShape;
using dynrt::Shape;

// Output columns per work-item of the OpenCL kernel.
constexpr size_t kOclOwBlock = 4;

// ---- shape inference ---------------------------------------------------------

// Output extent of spatial axis i for a possibly dynamic input extent and a
// static kernel extent: non-decreasing in the input extent, so bounds map to
// bounds; a lower bound too small for the window gives 1 (that extent is an
// error when it arrives).
Dimension out_dim(const ConvAttrs& a, size_t i, const Dimension& in, int64_t k, const std::string& node,
                  const std::string& shapes) {
    if (in.is_static()) {
        const AxisWindow w = conv::axis_window(a, i, in.get_length(), k);
        conv::expect_nonempty(a, w, i, node, shapes);
        return Dimension(w.out);
    }
    int64_t hi = Dimension::kUnbounded;
    if (in.max() != Dimension::kUnbounded) {
        const AxisWindow w = conv::axis_window(a, i, in.max(), k);
        conv::expect_nonempty(a, w, i, node, shapes);   // no extent in the range fits
        hi = w.out;
    }
    return Dimension(std::max<int64_t>(conv::axis_window(a, i, in.min(), k).out, 1), hi);
}

void check_channels(const dynrt::ShapeInferContext& ctx, const ConvAttrs& a, const std::string& shapes) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const Dimension& c = x.shape[1];
    const Dimension& o = w.shape[0];
    const Dimension& cg = w.shape[1];
    const std::string g = std::to_string(a.groups);
    if (c.is_static() && c.get_length() % a.groups != 0)
        throw conv::attr_fault(ctx.node, "groups",
                               "channels C=" + c.to_string() + " not divisible by groups=" + g + " (" + shapes + ")");
    if (o.is_static() && o.get_length() % a.groups != 0)
        throw conv::attr_fault(
            ctx.node, "groups",
            "output channels O=" + o.to_string() + " not divisible by groups=" + g + " (" + shapes + ")");
    // C is divisible by groups here; dividing cannot wrap where C/groups * groups could.
    if (c.is_static() && cg.is_static() && c.get_length() / a.groups != cg.get_length())
        throw conv::attr_fault(ctx.node, "groups",
                               "input has C=" + c.to_string() + " but weights expect C/groups=" + cg.to_string() +
                                   " with groups=" + g + " (" + shapes + ")");
    if (ctx.inputs.size() > 2) {
        const dynrt::Layout& b = ctx.inputs[2];
        if (b.shape.rank() != 1 || !b.shape[0].compatible(o) || b.dtype != x.dtype)
            throw dynrt::Error("convolution bias must be " + std::string(dynrt::to_string(x.dtype)) +
                               "[O] with O=" + o.to_string() + ", got " + b.to_string() + " (" + shapes + ")");
    }
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const std::string shapes = "input " + x.shape.to_string() + ", weights " + w.shape.to_string();
    if (!dynrt::is_floating(x.dtype) || x.dtype != w.dtype)
        throw dynrt::Error("convolution needs floating-point input and weights of one data type, got " + x.to_string() +
                           " and " + w.to_string());
    const size_t rank = x.shape.rank();
    if (rank < 3 || rank > 5 || w.shape.rank() != rank)
        throw dynrt::Error(
            "convolution needs input [N,C,spatial...] with 1 to 3 spatial axes and weights "
            "[O,C/groups,kernel...] of the same rank, got " +
            shapes);
    const ConvAttrs a = conv::read_attrs(ctx.attrs, rank - 2, ctx.node);
    check_channels(ctx, a, shapes);
    std::vector<Dimension> out = {x.shape[0], w.shape[0]};
    for (size_t i = 0; i + 2 < rank; ++i) {
        const Dimension& k = w.shape[2 + i];
        if (!k.is_static()) {
            out.emplace_back();
            continue;
        }
        if (k.get_length() == 0)
            throw dynrt::Error("convolution: weights (input 1) " + w.shape.to_string() + " have kernel extent 0 on " +
                               "spatial axis [" + std::to_string(i) + "]; every kernel extent must be >= 1 (" + shapes +
                               ")");
        out.push_back(out_dim(a, i, x.shape[2 + i], k.get_length(), ctx.node, shapes));
    }
    return {dynrt::Layout(PartialShape(out), x.dtype)};
}

// ---- the reference -------------------------------------------------------------

// The windows of a static input and weights, with leading spatial axes of
// extent 1 added so that every rank is walked as three axes (d, h, w).
std::array<AxisWindow, 3> windows3(const ConvAttrs& a, const Shape& x, const Shape& w) {
    std::array<AxisWindow, 3> r{};
    const size_t spatial = x.rank() - 2;
    for (size_t i = 0; i < spatial; ++i) r[3 - spatial + i] = conv::axis_window(a, i, x[2 + i], w[2 + i]);
    return r;
}

std::vector<double> load(const dynrt::HostCall& call, size_t input) {
    std::vector<double> v(call.in_shape(input).count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = call.get(input, i);
    return v;
}

// One output element: sum over the group's channels and the kernel taps that
// fall inside the input (padding reads as zero).
double conv_one(const std::vector<double>& x, const std::vector<double>& w, const std::array<AxisWindow, 3>& win,
                int64_t x_base, int64_t w_base, int64_t cg, const std::array<int64_t, 3>& o) {
    const int64_t in_plane = win[0].in * win[1].in * win[2].in, taps = win[0].k * win[1].k * win[2].k;
    double acc = 0;
    for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t kd = 0; kd < win[0].k; ++kd)
            for (int64_t kh = 0; kh < win[1].k; ++kh)
                for (int64_t kw = 0; kw < win[2].k; ++kw) {
                    const std::array<int64_t, 3> tap = {kd, kh, kw};
                    std::array<int64_t, 3> c{};
                    bool inside = true;
                    for (size_t j = 0; j < 3; ++j) {
                        c[j] = o[j] * win[j].s - win[j].pb + tap[j] * win[j].d;
                        inside = inside && c[j] >= 0 && c[j] < win[j].in;
                    }
                    if (!inside) continue;
                    const int64_t xi = x_base + ci * in_plane + (c[0] * win[1].in + c[1]) * win[2].in + c[2];
                    const int64_t wi = w_base + ci * taps + (kd * win[1].k + kh) * win[2].k + kw;
                    acc += x[static_cast<size_t>(xi)] * w[static_cast<size_t>(wi)];
                }
    return acc;
}

void reference(dynrt::HostCall& call) {
    const Shape& xs = call.in_shape(0);
    const Shape& ws = call.in_shape(1);
    const ConvAttrs a = conv::read_attrs(call.attrs(), xs.rank() - 2, call.node());
    const int64_t N = xs[0], C = xs[1], O = ws[0], CG = ws[1];
    if (CG * a.groups != C || O % a.groups != 0)
        throw dynrt::Error("convolution: input " + xs.to_string() + " and weights " + ws.to_string() +
                           " do not match groups=" + std::to_string(a.groups));
    const std::array<AxisWindow, 3> win = windows3(a, xs, ws);
    const int64_t OG = O / a.groups, in_plane = win[0].in * win[1].in * win[2].in;
    const int64_t taps = win[0].k * win[1].k * win[2].k;
    const std::vector<double> x = load(call, 0);
    const std::vector<double> w = load(call, 1);
    const std::vector<double> bias = call.num_inputs() > 2 ? load(call, 2) : std::vector<double>();
    size_t y = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oc = 0; oc < O; ++oc) {
            const int64_t x_base = (n * C + (oc / OG) * CG) * in_plane, w_base = oc * CG * taps;
            const double b = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
            for (int64_t od = 0; od < win[0].out; ++od)
                for (int64_t oh = 0; oh < win[1].out; ++oh)
                    for (int64_t ow = 0; ow < win[2].out; ++ow)
                        call.set(0, y++, b + conv_one(x, w, win, x_base, w_base, CG, {od, oh, ow}));
        }
}

// ---- OpenCL ----------------------------------------------------------------------

// Attributes as JIT constants in both builds; dims are literals in the static
// build and shape_info reads in the dynamic one. Pads that auto_pad same_*
// derives from the extents are an expression of them (folded to a literal in
// the static build).
dynrt::JitDefines ocl_defines(const dynrt::KernelParams& p, bool) {
    const size_t rank = p.inputs.at(0).shape.rank();
    const ConvAttrs a = conv::read_attrs(*p.attrs, rank - 2, p.node);
    const std::string lead = std::to_string(8 - rank), second = std::to_string(9 - rank);
    dynrt::JitDefines d = {{"OW_BLOCK", std::to_string(kOclOwBlock)},
                           {"GROUPS", std::to_string(a.groups)},
                           {"N_DIM", "INPUT0_DIM" + lead},
                           {"C_DIM", "INPUT0_DIM" + second},
                           {"O_DIM", "INPUT1_DIM" + lead},
                           {"CG_DIM", "INPUT1_DIM" + second}};
    const std::vector<int64_t> pads = a.auto_pad == AutoPad::explicit_pads ? a.pads_begin : std::vector<int64_t>();
    const auto same_pad = [&](const std::string& x, size_t) -> std::string {
        if (!dynrt::is_same_pad(a.auto_pad)) return {};
        return "SAME_PAD_BEGIN(IN_" + x + ", OUT_" + x + ", K_" + x + ", STRIDE_" + x + ", DILATION_" + x + ", " +
               (a.auto_pad == AutoPad::same_lower ? "1" : "0") + ")";
    };
    const dynrt::JitDefines axes = dynrt::jit_window_axes(rank, a.strides, a.dilations, pads, same_pad);
    d.insert(d.end(), axes.begin(), axes.end());
    return d;
}

// The kernel indexes with int: tensors and window attributes must fit.
std::string ocl_validate(const dynrt::KernelParams& p) {
    return dynrt::check_window_int_range(p, false, {"strides", "dilations", "pads_begin", "pads_end"});
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = convolution_cl;
    spec.kernel_name = "convolution";
    spec.fused_ops = true;   // FUSED_OPS before each store
    spec.defines = ocl_defines;
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& lim) {
        // Runtime layouts are static here; no Shape is built (runs every execution).
        const dynrt::PartialShape& ys = p.outputs[0].shape;
        const size_t rank = ys.rank();
        const auto dim = [&](size_t i) { return static_cast<size_t>(ys[i].get_length()); };
        const size_t ow = dim(rank - 1), oh = rank > 3 ? dim(rank - 2) : 1, od = rank > 4 ? dim(rank - 3) : 1;
        return dynrt::dispatch_nd({(ow + kOclOwBlock - 1) / kOclOwBlock, oh, dim(0) * dim(1) * od}, 3, lim);
    };
    return spec;
}

// ---- ONNX ----------------------------------------------------------------------

bool onnx_conv(dynrt::ImportContext& c) {
    if (!c.only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})) return false;
    if (!dynrt::onnx_weighted_window(c, "convolves")) return false;
    c.use_inputs({0, 1, 2});
    return true;
}

std::vector<dynrt::ImportRule> onnx_rules() {
    return {dynrt::onnx_rule("Conv", 2, 3, onnx_conv,
                             "1 to 3 spatial axes; `pads` [b..., e...] -> `pads_begin`/`pads_end`; `group` -> "
                             "`groups`; `auto_pad` VALID, SAME_UPPER/SAME_LOWER (pads from the runtime shape); "
                             "`kernel_shape` must match the weights")};
}

// ---- affine folding ------------------------------------------------------------------

// An affine y * scale[o] + shift[o] of the output folds into constant
// weights and bias: w[o, ...] * scale[o], bias[o] * scale[o] + shift[o] (a
// bias of zeros when the node has none; every output channel o has its own
// weights whatever the groups).
std::vector<std::optional<dynrt::HostTensor>> absorb_channel_affine(const dynrt::Attributes&,
                                                                    const dynrt::ConstantInputs& k,
                                                                    const dynrt::ChannelAffine& f) {
    const dynrt::HostTensor* w = k.at(1);
    const dynrt::HostTensor* bias = k.size() > 2 ? k[2] : nullptr;
    if (!w || (k.size() > 2 && !bias) || w->shape().rank() < 1 || !dynrt::is_floating(w->dtype())) return {};
    const auto out = static_cast<size_t>(w->shape()[0]);
    if (out != f.scale.size() || (bias && bias->count() != out)) return {};
    const size_t per_channel = out ? w->count() / out : 0;
    dynrt::HostTensor nw(w->dtype(), w->shape());
    for (size_t i = 0; i < nw.count(); ++i) nw.set_from_double(i, w->get_as_double(i) * f.scale[i / per_channel]);
    dynrt::HostTensor nb(w->dtype(), Shape{static_cast<int64_t>(out)});
    for (size_t o = 0; o < out; ++o)
        nb.set_from_double(o, (bias ? bias->get_as_double(o) : 0.0) * f.scale[o] + f.shift[o]);
    return {std::nullopt, std::move(nw), std::move(nb)};
}

// ---- registration ------------------------------------------------------------------

std::vector<dynrt::AttrSpec> conv_attrs() {
    const std::vector<int64_t> none;
    return {dynrt::attr_ints("strides", none, "step per spatial axis (empty: 1)"),
            dynrt::attr_ints("pads_begin", none, "zero padding before each spatial axis (empty: 0; auto_pad explicit)"),
            dynrt::attr_ints("pads_end", none, "zero padding after each spatial axis (empty: 0; auto_pad explicit)"),
            dynrt::attr_ints("dilations", none, "kernel tap spacing per spatial axis (empty: 1)"),
            dynrt::attr_int("groups", 1, "channel groups; C and O must be divisible by it"),
            dynrt::attr_string("auto_pad", std::string("explicit"), conv::auto_pad_names(),
                               "explicit (pads_*), valid (none) or same_upper/same_lower (output = ceil(in/stride), "
                               "pads from the input extent, the odd one at the end/begin)")};
}

// The window of the runtime shapes (auto_pad resolved) for the cpu's oneDNN
// and direct impls. A dynamic extent (the direct impl's validate on the
// node's layouts) takes the kernel's: its same_* pads are within the span.
dynrt::ConvGeometry cpu_geometry(const dynrt::KernelParams& p) {
    const PartialShape& x = p.inputs.at(0).shape;
    const Shape w = p.inputs.at(1).get_shape();
    const size_t spatial = x.rank() - 2;
    const conv::ConvAttrs a = conv::read_attrs(*p.attrs, spatial, p.node);
    dynrt::ConvGeometry g;
    g.groups = a.groups;
    for (size_t i = 0; i < spatial; ++i) {
        const int64_t in = x[2 + i].is_static() ? x[2 + i].get_length() : w[2 + i];
        const conv::AxisWindow win = conv::axis_window(a, i, in, w[2 + i]);
        g.strides.push_back(win.s);
        g.dilations.push_back(win.d);
        g.pads_begin.push_back(win.pb);
        g.pads_end.push_back(win.pe);
    }
    return g;
}

void register_convolution(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "convolution", "grouped convolution over 1-3 spatial axes: x[N,C,S...] * w[O,C/groups,k...] + bias[O]", 2, 3,
        conv_attrs(), infer);
    def.traits.critical = true;
    def.traits.weightable = true;
    def.traits.accepts_fused_ops = true;
    def.weights_input = 1;
    def.absorb_channel_affine = absorb_channel_affine;
    // A multiply-add per output element and weight of its group (w[1] * taps);
    // every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes&) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape w = in.at(1).get_shape();
        if (w.size() >= 3)
            c.flops = 2.0 * static_cast<double>(out.at(0).get_shape().count()) *
                      static_cast<double>(dynrt::dims_product(w, 1, w.size()));
        return c;
    };
    def.imports = onnx_rules();
    reg.add_op(def);

    dynrt::HostImplOptions opts;
    opts.dtypes = {DataType::f32, DataType::f16, DataType::f64};
    // The static flavour reads osv16 weights (reordered once by the flow).
    opts.static_weights_format = dynrt::Format::osv16;
    dynrt::add_host_impls(reg, "convolution", reference, opts);
    // cpu: oneDNN's convolution, and the SDK's direct loop for few channels
    // (dynrt/cpu_conv.hpp), f32.
    dynrt::add_dnnl_convolution_impls(reg, "convolution", cpu_geometry);
    dynrt::add_direct_convolution_impl(reg, "convolution", cpu_geometry);

    // OpenCL: a direct kernel (convolution.cl), f32; f16 and f64 run on the host impls.
    dynrt::OclImplOptions ocl;
    ocl.dtypes = {DataType::f32};
    ocl.validate = ocl_validate;
    dynrt::add_ocl_impls(reg, "convolution", ocl_spec(), ocl);
}

}   // namespace

DYNRT_MODULE("convolution", register_convolution)
