// deconvolution: 2-D grouped transposed convolution (convolution backprop data)
// over NCHW input.
//
// x [N, C, H, W], weights [C, O/groups, kH, kW] (input channels first, as
// inference runtimes store them), optional bias [O]. Output spatial size per
// axis: (in - 1)*stride - pad_begin - pad_end + dilation*(k - 1) + 1 +
// output_padding. The op is critical, weightable (its static host impl reads
// the weights in osv16, so the flow reorders them) and accepts fused post-ops.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "deconvolution_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using dynrt::DataType;
using dynrt::Dimension;
using dynrt::PartialShape;
using dynrt::Shape;

using DeconvAttrs = dynrt::WindowAttrs;
using dynrt::ints_to_string;

DeconvAttrs read_attrs(const dynrt::Attributes& a) { return dynrt::read_window_attrs(a, "deconvolution", true); }

// (in - 1)*stride - pad_begin - pad_end + dilation*(k - 1) + 1 + output_padding
// for axis i (0: H, 1: W), in >= 1 and k >= 1. Products and sums go through
// checked arithmetic: hostile strides, dilations or pads are errors naming the
// attribute and the values, never a wrapped extent. The final difference
// cannot overflow: grown >= 1 and pads >= 0.
int64_t out_extent(int64_t in, int64_t k, const DeconvAttrs& a, size_t i) {
    const std::string axis = i == 0 ? "height" : "width";
    const std::string at = "[" + std::to_string(i) + "]";
    const std::string strided_what = "deconvolution: (input " + axis + " - 1) * strides" + at;
    const std::string span_what = "deconvolution: dilations" + at + " * (kernel " + axis + " - 1)";
    const std::string grown_what = "deconvolution: (input " + axis + " - 1) * strides" + at + " + dilations" + at +
                                   " * (kernel " + axis + " - 1) + 1 + output_padding" + at;
    const std::string pads_what = "deconvolution: pads_begin" + at + " + pads_end" + at;
    const int64_t strided = dynrt::checked_mul(in - 1, a.strides[i], strided_what.c_str());
    const int64_t span = dynrt::checked_mul(a.dilations[i], k - 1, span_what.c_str());
    // output_padding < max(stride, dilation), so 1 + output_padding fits.
    const int64_t grown = dynrt::checked_add(dynrt::checked_add(strided, span, grown_what.c_str()),
                                             1 + a.output_padding[i], grown_what.c_str());
    return grown - dynrt::checked_add(a.pads_begin[i], a.pads_end[i], pads_what.c_str());
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const std::string shapes = "input " + x.shape.to_string() + ", weights " + w.shape.to_string();
    if (!dynrt::is_floating(x.dtype) || x.dtype != w.dtype)
        throw dynrt::Error("deconvolution needs floating-point input and weights of one data type, got " +
                           x.to_string() + " and " + w.to_string());
    if (x.shape.rank() != 4 || w.shape.rank() != 4)
        throw dynrt::Error("deconvolution needs input [N,C,H,W] and weights [C,O/groups,kH,kW], got " + shapes);
    const DeconvAttrs a = read_attrs(ctx.attrs);
    const Dimension& c = x.shape[1];
    const Dimension& cw = w.shape[0];
    const std::string g = std::to_string(a.groups);
    if (c.is_static() && c.get_length() % a.groups != 0)
        throw dynrt::Error("deconvolution: channels C=" + c.to_string() + " not divisible by groups=" + g + " (" +
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
    std::vector<Dimension> out = {x.shape[0], o};
    for (size_t i = 0; i < 2; ++i) {
        const Dimension& in = x.shape[2 + i];
        const Dimension& k = w.shape[2 + i];
        if (!k.is_static()) {
            out.emplace_back();
            continue;
        }
        if (k.get_length() == 0)
            throw dynrt::Error("deconvolution: weights (input 1) " + w.shape.to_string() + " have kernel " +
                               std::string(i == 0 ? "height" : "width") + " 0; every kernel extent must be >= 1 (" +
                               shapes + ")");
        auto f = [&](int64_t v) { return out_extent(v, k.get_length(), a, i); };
        if (in.is_static()) {
            const int64_t e = in.get_length() < 1 ? 0 : f(in.get_length());
            if (e <= 0)
                throw dynrt::Error("deconvolution: output " + std::string(i == 0 ? "height" : "width") + " would be " +
                                   std::to_string(e) + " (" + shapes + ", strides " + ints_to_string(a.strides) +
                                   ", pads " + ints_to_string(a.pads_begin) + "/" + ints_to_string(a.pads_end) + ")");
            out.emplace_back(e);
            continue;
        }
        // Increasing in the input extent: bounds map to bounds.
        const int64_t lo = std::max<int64_t>(f(std::max<int64_t>(in.min(), 1)), 1);
        const int64_t hi = in.max() == Dimension::kUnbounded ? Dimension::kUnbounded : f(in.max());
        if (hi != Dimension::kUnbounded && hi <= 0)
            throw dynrt::Error("deconvolution: output " + std::string(i == 0 ? "height" : "width") +
                               " would be <= 0 for every input extent in " + in.to_string() + " (" + shapes + ")");
        out.emplace_back(lo, hi);
    }
    return {dynrt::Layout(PartialShape(out), x.dtype)};
}

void kernel(dynrt::HostCall& call) {
    const DeconvAttrs a = read_attrs(call.attrs());
    const Shape& xs = call.in_shape(0);
    const Shape& ws = call.in_shape(1);
    const Shape& ys = call.out_shape(0);
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    const int64_t OG = ws[1], KH = ws[2], KW = ws[3];
    const int64_t O = ys[1], OH = ys[2], OW = ys[3];
    if (ws[0] != C || O != OG * a.groups || C % a.groups != 0)
        throw dynrt::Error("deconvolution: input " + xs.to_string() + " and weights " + ws.to_string() +
                           " do not match groups=" + std::to_string(a.groups));
    const int64_t CG = C / a.groups;
    // Weights through get(): a reordered (blocked) weights input reads the same.
    std::vector<double> w(ws.count());
    for (size_t i = 0; i < w.size(); ++i) w[i] = call.get(1, i);
    std::vector<double> y(ys.count(), 0.0);
    // Scatter form (independent of the OpenCL kernel's gather form): every
    // input element adds its taps to the outputs it reaches.
    for (int64_t n = 0; n < N; ++n)
        for (int64_t ic = 0; ic < C; ++ic) {
            const int64_t grp = ic / CG;
            for (int64_t ih = 0; ih < H; ++ih)
                for (int64_t iw = 0; iw < W; ++iw) {
                    const double xv = call.get(0, static_cast<size_t>(((n * C + ic) * H + ih) * W + iw));
                    for (int64_t ocg = 0; ocg < OG; ++ocg) {
                        const int64_t oc = grp * OG + ocg;
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            const int64_t oh = ih * a.strides[0] - a.pads_begin[0] + kh * a.dilations[0];
                            if (oh < 0 || oh >= OH) continue;
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                const int64_t ow = iw * a.strides[1] - a.pads_begin[1] + kw * a.dilations[1];
                                if (ow < 0 || ow >= OW) continue;
                                y[static_cast<size_t>(((n * O + oc) * OH + oh) * OW + ow)] +=
                                    xv * w[static_cast<size_t>(((ic * OG + ocg) * KH + kh) * KW + kw)];
                            }
                        }
                    }
                }
        }
    const bool has_bias = call.num_inputs() > 2;
    for (size_t i = 0; i < y.size(); ++i) {
        const size_t oc = (i / static_cast<size_t>(OH * OW)) % static_cast<size_t>(O);
        call.set(0, i, y[i] + (has_bias ? call.get(2, oc) : 0.0));
    }
}

void register_deconvolution(dynrt::ModuleRegistrar& reg) {
    dynrt::WindowAttrDocs docs;
    docs.strides = "upsampling step per spatial axis (H, W)";
    docs.pads_begin = "rows/columns cropped before (top, left)";
    docs.pads_end = "rows/columns cropped after (bottom, right)";
    docs.groups = "channel groups; C must be divisible by it";
    docs.output_padding = true;
    dynrt::OpDefinition def =
        dynrt::op_def("deconvolution", "2-D grouped transposed convolution: x[N,C,H,W], w[C,O/groups,kH,kW], bias[O]",
                      2, 3, dynrt::window_attrs(docs), infer);
    def.traits.critical = true;
    def.traits.weightable = true;
    def.traits.accepts_fused_ops = true;
    def.weights_input = 1;
    // A multiply-add per input element and weight it scatters through
    // (w[1] * kH * kW); every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes&) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape w = in.at(1).get_shape();
        if (w.size() == 4)
            c.flops = 2.0 * static_cast<double>(in.at(0).get_shape().count()) * static_cast<double>(w[1]) *
                      static_cast<double>(w[2]) * static_cast<double>(w[3]);
        return c;
    };
    reg.add_op(def);

    dynrt::HostImplOptions opts;
    opts.dtypes = {DataType::f32, DataType::f16};
    // The static flavour reads osv16 weights, like a device's tuned kernel.
    opts.static_weights_format = dynrt::Format::osv16;
    dynrt::add_host_impls(reg, "deconvolution", kernel, opts);

    // OpenCL: deconvolution.cl, f32; f16 falls back to the host impls.
    dynrt::OclKernelSpec spec;
    spec.source = deconvolution_cl;
    spec.kernel_name = "deconvolution";
    spec.fused_ops = true;   // FUSED_OPS before each store
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        dynrt::JitDefines d = dynrt::jit_window_defines(read_attrs(*p.attrs));
        d.emplace_back("WEIGHTS_BLOCK", std::to_string(dynrt::block_size(p.inputs.at(1).format)));
        return d;
    };
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& lim) {
        const dynrt::PartialShape& ys = p.outputs[0].shape;
        const size_t n = static_cast<size_t>(ys[0].get_length()), o = static_cast<size_t>(ys[1].get_length());
        const size_t oh = static_cast<size_t>(ys[2].get_length()), ow = static_cast<size_t>(ys[3].get_length());
        return dynrt::dispatch_nd({ow, oh, n * o}, 3, lim);
    };
    dynrt::OclImplOptions ocl;
    ocl.dtypes = {DataType::f32};
    ocl.weights_format = dynrt::Format::osv16;   // 16 input channels' taps side by side
    ocl.validate = [](const dynrt::KernelParams& p) {
        return dynrt::check_dtype_and_int_range(p, DataType::f32, true);
    };
    dynrt::add_ocl_impls(reg, "deconvolution", spec, ocl);
}

}   // namespace

DYNRT_MODULE("deconvolution", register_deconvolution)
