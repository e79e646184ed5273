// convolution: 2-D grouped convolution (cross-correlation) over NCHW input.
//
// x [N, C, H, W], weights [O, C/groups, kH, kW], optional bias [O]. Output
// spatial size per axis: (in + pad_begin + pad_end - dilation*(k-1) - 1)/stride + 1.
// With a dynamic input extent the output extent is a range computed from the
// input's bounds (the formula is monotonic). The op is critical, weightable
// (the static host impl reads osv16 weights) and accepts fused post-ops.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "convolution_cl.hpp"
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

// Output columns per work-item of the OpenCL kernel.
constexpr size_t kOclOwBlock = 4;

using ConvAttrs = dynrt::WindowAttrs;
using dynrt::ints_to_string;

ConvAttrs read_attrs(const dynrt::Attributes& a) { return dynrt::read_window_attrs(a, "convolution"); }

int64_t floor_div(int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// (in + pad_begin + pad_end - dilation*(k-1) - 1)/stride + 1 for axis i (0: H,
// 1: W), k >= 1. Sums and products go through checked arithmetic: hostile pads
// or dilations are errors naming the attribute and the values, never a wrapped
// extent. What remains cannot overflow: padded >= 0 and span >= 1.
int64_t out_extent(int64_t in, int64_t k, const ConvAttrs& a, size_t i) {
    const std::string axis = i == 0 ? "height" : "width";
    const std::string at = "[" + std::to_string(i) + "]";
    const std::string padded_what = "convolution: input " + axis + " + pads_begin" + at + " + pads_end" + at;
    const int64_t padded = dynrt::checked_add(dynrt::checked_add(in, a.pads_begin[i], padded_what.c_str()),
                                              a.pads_end[i], padded_what.c_str());
    const std::string span_what = "convolution: dilations" + at + " * (kernel " + axis + " - 1) + 1";
    const int64_t span =
        dynrt::checked_add(dynrt::checked_mul(a.dilations[i], k - 1, span_what.c_str()), int64_t{1}, span_what.c_str());
    return floor_div(padded - span, a.strides[i]) + 1;
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    const std::string shapes = "input " + x.shape.to_string() + ", weights " + w.shape.to_string();
    if (!dynrt::is_floating(x.dtype) || x.dtype != w.dtype)
        throw dynrt::Error("convolution needs floating-point input and weights of one data type, got " + x.to_string() +
                           " and " + w.to_string());
    if (x.shape.rank() != 4 || w.shape.rank() != 4)
        throw dynrt::Error("convolution needs input [N,C,H,W] and weights [O,C/groups,kH,kW], got " + shapes);
    const ConvAttrs a = read_attrs(ctx.attrs);
    const Dimension& c = x.shape[1];
    const Dimension& o = w.shape[0];
    const Dimension& cg = w.shape[1];
    const std::string g = std::to_string(a.groups);
    if (c.is_static() && c.get_length() % a.groups != 0)
        throw dynrt::Error("convolution: channels C=" + c.to_string() + " not divisible by groups=" + g + " (" +
                           shapes + ")");
    if (o.is_static() && o.get_length() % a.groups != 0)
        throw dynrt::Error("convolution: output channels O=" + o.to_string() + " not divisible by groups=" + g + " (" +
                           shapes + ")");
    // C is divisible by groups here; dividing cannot wrap where C/groups * groups could.
    if (c.is_static() && cg.is_static() && c.get_length() / a.groups != cg.get_length())
        throw dynrt::Error("convolution: input has C=" + c.to_string() + " but weights expect C/groups=" +
                           cg.to_string() + " with groups=" + g + " (" + shapes + ")");
    if (ctx.inputs.size() > 2) {
        const dynrt::Layout& b = ctx.inputs[2];
        if (b.shape.rank() != 1 || !b.shape[0].compatible(o) || b.dtype != x.dtype)
            throw dynrt::Error("convolution bias must be " + std::string(dynrt::to_string(x.dtype)) +
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
        const int64_t kl = k.get_length();
        if (kl == 0)
            throw dynrt::Error("convolution: weights (input 1) " + w.shape.to_string() + " have kernel " +
                               std::string(i == 0 ? "height" : "width") + " 0; every kernel extent must be >= 1 (" +
                               shapes + ")");
        auto f = [&](int64_t v) { return out_extent(v, kl, a, i); };
        if (in.is_static()) {
            const int64_t e = f(in.get_length());
            if (e <= 0)
                throw dynrt::Error("convolution: output " + std::string(i == 0 ? "height" : "width") + " would be " +
                                   std::to_string(e) + " (" + shapes + ", strides " + ints_to_string(a.strides) +
                                   ", pads " + ints_to_string(a.pads_begin) + "/" + ints_to_string(a.pads_end) +
                                   ", dilations " + ints_to_string(a.dilations) + ")");
            out.emplace_back(e);
            continue;
        }
        // The formula is non-decreasing in the input extent, so bounds map to
        // bounds; extents that would give an empty output are errors at run time.
        const int64_t hi = in.max() == Dimension::kUnbounded ? Dimension::kUnbounded : f(in.max());
        if (hi != Dimension::kUnbounded && hi <= 0)
            throw dynrt::Error("convolution: output " + std::string(i == 0 ? "height" : "width") +
                               " would be <= 0 for every input extent in " + in.to_string() + " (" + shapes + ")");
        out.emplace_back(std::max<int64_t>(f(in.min()), 1), hi);
    }
    return {dynrt::Layout(PartialShape(out), x.dtype)};
}

std::vector<double> load(const dynrt::HostCall& call, size_t input) {
    std::vector<double> v(call.in_shape(input).count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = call.get(input, i);
    return v;
}

void kernel(dynrt::HostCall& call) {
    const ConvAttrs a = read_attrs(call.attrs());
    const Shape& xs = call.in_shape(0);
    const Shape& ws = call.in_shape(1);
    const Shape& ys = call.out_shape(0);
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    const int64_t O = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
    const int64_t OH = ys[2], OW = ys[3];
    if (CG * a.groups != C || O % a.groups != 0)
        throw dynrt::Error("convolution: input " + xs.to_string() + " and weights " + ws.to_string() +
                           " do not match groups=" + std::to_string(a.groups));
    const int64_t OG = O / a.groups;
    const std::vector<double> x = load(call, 0);
    const std::vector<double> w = load(call, 1);
    const std::vector<double> bias = call.num_inputs() > 2 ? load(call, 2) : std::vector<double>();
    for (int64_t n = 0; n < N; ++n)
        for (int64_t oc = 0; oc < O; ++oc) {
            const int64_t grp = oc / OG;
            for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                    double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
                    for (int64_t ci = 0; ci < CG; ++ci) {
                        const int64_t ic = grp * CG + ci;
                        for (int64_t kh = 0; kh < KH; ++kh) {
                            const int64_t ih = oh * a.strides[0] - a.pads_begin[0] + kh * a.dilations[0];
                            if (ih < 0 || ih >= H) continue;   // zero padding
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                const int64_t iw = ow * a.strides[1] - a.pads_begin[1] + kw * a.dilations[1];
                                if (iw < 0 || iw >= W) continue;
                                acc += x[static_cast<size_t>(((n * C + ic) * H + ih) * W + iw)] *
                                       w[static_cast<size_t>(((oc * CG + ci) * KH + kh) * KW + kw)];
                            }
                        }
                    }
                    call.set(0, static_cast<size_t>(((n * O + oc) * OH + oh) * OW + ow), acc);
                }
        }
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_conv(dynrt::ImportContext& c) {
    if (!c.only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})) return false;
    const dynrt::PartialShape& x = c.layout(0).shape;
    const dynrt::PartialShape& w = c.layout(1).shape;
    if (x.rank() != 4 || w.rank() != 4)
        return c.unsupported("only 2-D convolution (4-D input and weights) is supported, the input has rank " +
                             std::to_string(x.rank()));
    const std::vector<int64_t> strides = c.has("strides") ? c.ints("strides") : std::vector<int64_t>{1, 1};
    const std::vector<int64_t> dil = c.has("dilations") ? c.ints("dilations") : std::vector<int64_t>{1, 1};
    if (strides.size() != 2 || dil.size() != 2) return c.unsupported("strides/dilations not of length 2");
    if (c.has("kernel_shape")) {
        const auto ks = c.ints("kernel_shape");
        if (ks.size() != 2 || !w[2].is_static() || !w[3].is_static() || ks[0] != w[2].get_length() ||
            ks[1] != w[3].get_length())
            return c.unsupported("kernel_shape differs from the weights' spatial dims");
    }
    std::vector<int64_t> begin{0, 0}, end{0, 0};
    const std::string auto_pad = c.s("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
        if (c.has("pads")) {
            const auto p = c.ints("pads");
            if (p.size() != 4) return c.unsupported("pads not of length 4");
            begin = {p[0], p[1]};
            end = {p[2], p[3]};
        }
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        // The pads depend on the input's spatial dims: computed from the static
        // shape the node is imported with (fixed for that shape).
        for (size_t a = 0; a < 2; ++a) {
            if (!x[2 + a].is_static() || !w[2 + a].is_static())
                return c.unsupported("auto_pad " + auto_pad + " needs static spatial dims");
            const int64_t in = x[2 + a].get_length(), k = w[2 + a].get_length();
            const int64_t out = (in + strides[a] - 1) / strides[a];
            const int64_t total = std::max<int64_t>(0, (out - 1) * strides[a] + (k - 1) * dil[a] + 1 - in);
            const int64_t small = total / 2, big = total - small;
            begin[a] = auto_pad == "SAME_UPPER" ? small : big;
            end[a] = auto_pad == "SAME_UPPER" ? big : small;
        }
    } else if (auto_pad != "VALID") {
        return c.unsupported("auto_pad '" + auto_pad + "' is not supported");
    }
    c.set("strides", strides);
    c.set("dilations", dil);
    c.set("pads_begin", begin);
    c.set("pads_end", end);
    c.set("groups", c.i("group", 1));
    c.use_inputs({0, 1, 2});
    return true;
}

std::vector<dynrt::ImportRule> onnx_rules() {
    return {dynrt::onnx_rule("Conv", 2, 3, onnx_conv,
                             "2-D only; `pads` [b0,b1,e0,e1] -> `pads_begin`/`pads_end`; `group` -> `groups`; "
                             "`auto_pad` VALID, SAME_UPPER/SAME_LOWER (pads computed from the imported static "
                             "shape); `kernel_shape` must match the weights")};
}

void register_convolution(dynrt::ModuleRegistrar& reg) {
    dynrt::WindowAttrDocs docs;
    docs.strides = "step per spatial axis (H, W)";
    docs.pads_begin = "zero padding before (top, left)";
    docs.pads_end = "zero padding after (bottom, right)";
    docs.groups = "channel groups; C and O must be divisible by it";
    dynrt::OpDefinition def =
        dynrt::op_def("convolution", "2-D grouped convolution: x[N,C,H,W] * w[O,C/groups,kH,kW] + bias[O]", 2, 3,
                      dynrt::window_attrs(docs), infer);
    def.traits.critical = true;
    def.traits.weightable = true;
    def.traits.accepts_fused_ops = true;
    def.weights_input = 1;
    // A multiply-add per output element and weight of its group (w[1] * kH * kW);
    // every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes&) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape w = in.at(1).get_shape();
        if (w.size() == 4)
            c.flops = 2.0 * static_cast<double>(out.at(0).get_shape().count()) * static_cast<double>(w[1]) *
                      static_cast<double>(w[2]) * static_cast<double>(w[3]);
        return c;
    };
    def.imports = onnx_rules();
    reg.add_op(def);

    dynrt::HostImplOptions opts;
    opts.dtypes = {DataType::f32, DataType::f16};
    // The static flavour reads osv16 weights (reordered once by the flow).
    opts.static_weights_format = dynrt::Format::osv16;
    dynrt::add_host_impls(reg, "convolution", kernel, opts);

    // OpenCL: a direct kernel (convolution.cl), attributes as JIT constants in
    // both builds; f16 falls back to the host impls.
    dynrt::OclKernelSpec spec;
    spec.source = convolution_cl;
    spec.kernel_name = "convolution";
    spec.fused_ops = true;   // FUSED_OPS before each store
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        dynrt::JitDefines d = dynrt::jit_window_defines(read_attrs(*p.attrs));
        d.insert(d.begin(), {"OW_BLOCK", std::to_string(kOclOwBlock)});
        return d;
    };
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& lim) {
        // Runtime layouts are static here; no Shape is built (runs every execution).
        const dynrt::PartialShape& ys = p.outputs[0].shape;
        const size_t n = static_cast<size_t>(ys[0].get_length()), o = static_cast<size_t>(ys[1].get_length());
        const size_t oh = static_cast<size_t>(ys[2].get_length()), ow = static_cast<size_t>(ys[3].get_length());
        return dynrt::dispatch_nd({(ow + kOclOwBlock - 1) / kOclOwBlock, oh, n * o}, 3, lim);
    };
    dynrt::OclImplOptions ocl;
    ocl.dtypes = {DataType::f32};
    // The kernel indexes with int.
    ocl.validate = [](const dynrt::KernelParams& p) {
        return dynrt::check_dtype_and_int_range(p, DataType::f32, false);
    };
    dynrt::add_ocl_impls(reg, "convolution", spec, ocl);
}

}   // namespace

DYNRT_MODULE("convolution", register_convolution)
