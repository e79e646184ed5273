#include "dynrt/cpu_conv.hpp"

#include <string>
#include <vector>

#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/error.hpp"

namespace dynrt {

namespace {

using dnnl::memory;

std::vector<int64_t> dims_of(const Layout& l) {
    const Shape s = l.get_shape();
    return std::vector<int64_t>(s.begin(), s.end());
}

memory::dims to_dims(const std::vector<int64_t>& v) { return memory::dims(v.begin(), v.end()); }

memory::desc any_format(const memory::desc& d) {
    return memory::desc(d.dims(), d.data_type(), memory::format_tag::any);
}

bool gemm_based(const dnnl::convolution_forward::primitive_desc& pd) {
    return std::string(pd.impl_info_str()).find("gemm") != std::string::npos;
}

// With the plain layouts oneDNN convolves through im2col + gemm; its direct
// (brgemm / jit) convolutions want blocked activations and weights. Measured
// on this project's benchmark shapes, one thread: 3x3 64 -> 64 channels at
// 56 px 3.9 ms plain, 1.9 ms blocked counting the reorders of x, weights and
// y; 3 -> 8 channels at 64 px, batch 2: 0.33 ms against 0.12 ms. So the plan
// takes the layouts oneDNN picks (format `any`) and stages the arguments
// whose layout differs (dnnl_stage_args), unless oneDNN picks a gemm impl
// there too: then the plain layouts, with nothing to reorder.
DnnlPlan conv_plan(const KernelParams& p, const ConvGeometry& g) {
    const std::vector<int64_t> x = dims_of(p.inputs.at(0)), y = dims_of(p.outputs.at(0));
    std::vector<int64_t> w = dims_of(p.inputs.at(1));
    const memory::desc src = dnnl_plain_desc(x, DataType::f32), dst = dnnl_plain_desc(y, DataType::f32);
    // Grouped weights [O, C/G, k...] are the same bytes as [G, O/G, C/G, k...].
    if (g.groups > 1) {
        w[0] /= g.groups;
        w.insert(w.begin(), g.groups);
    }
    const memory::desc wei = dnnl_plain_desc(w, DataType::f32);
    memory::dims dilates;
    for (int64_t d : g.dilations) dilates.push_back(d - 1);   // oneDNN counts the holes
    const bool has_bias = p.inputs.size() > 2;
    const memory::desc bias = has_bias ? dnnl_plain_desc(dims_of(p.inputs[2]), DataType::f32) : memory::desc();
    const auto conv_desc = [&](bool blocked) {
        const auto pick = [blocked](const memory::desc& d) { return blocked ? any_format(d) : d; };
        return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               pick(src), pick(wei), bias, pick(dst), to_dims(g.strides), dilates,
                                               to_dims(g.pads_begin), to_dims(g.pads_end));
    };
    return dnnl_plan_with_post_ops(p, dst, [&](const DnnlPostOps& post) {
        dnnl::convolution_forward::primitive_desc pd(conv_desc(true), dnnl_attr(post), dnnl_cpu_engine());
        const bool blocked = !gemm_based(pd);
        if (!blocked)
            pd = dnnl::convolution_forward::primitive_desc(conv_desc(false), dnnl_attr(post), dnnl_cpu_engine());
        std::vector<DnnlArgRef> args{{DNNL_ARG_SRC, false, 0}, {DNNL_ARG_WEIGHTS, false, 1}, {DNNL_ARG_DST, true, 0}};
        std::vector<memory::desc> descs{src, wei, dst};
        if (has_bias) {
            args.push_back({DNNL_ARG_BIAS, false, 2});
            descs.push_back(bias);
        }
        DnnlPlan plan =
            dnnl_plan(dnnl::convolution_forward(pd), pd.scratchpad_desc(), std::move(args), std::move(descs), post);
        if (!blocked) return plan;
        return dnnl_stage_args(std::move(plan), {pd.src_desc(), pd.weights_desc(), pd.dst_desc()}, p);
    });
}

std::string validate(const KernelParams& p) {
    for (const Layout& l : p.inputs)
        if (l.dtype != DataType::f32) return "input " + l.to_string() + " is not f32";
    const size_t rank = p.inputs.at(0).shape.rank();
    if (rank < 3 || rank > 5) return "oneDNN convolves 1-3 spatial dims";
    return {};
}

}   // namespace

void add_dnnl_convolution_impls(ModuleRegistrar& reg, const std::string& op,
                                std::function<ConvGeometry(const KernelParams&)> geometry) {
    DnnlSpec spec;
    spec.validate = validate;
    spec.plan = [geometry](const KernelParams& p) { return conv_plan(p, geometry(p)); };
    add_dnnl_impls(reg, op, std::move(spec));
}

}   // namespace dynrt
