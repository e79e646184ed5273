// fully_connected: y[..., n] = sum_k x[..., k] * w[n, k] + bias[n].
//
// Weights are stored [N, K] (one output feature per row), as inference
// runtimes keep them, so the inner loop walks both x and w contiguously. Every
// leading dim of x is a batch dim; the op is critical (worth a background static
// build) and weightable (device impls may reorder w).
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_matmul.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_matmul.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using dynrt::DataType;
using dynrt::Dimension;

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& x = ctx.inputs.at(0);
    const dynrt::Layout& w = ctx.inputs.at(1);
    if (!dynrt::is_floating(x.dtype))
        throw dynrt::Error("fully_connected takes floating-point input, got " + x.to_string());
    if (x.shape.rank() < 1)
        throw dynrt::Error("fully_connected input 0 must have rank >= 1, got " + x.shape.to_string());
    if (w.shape.rank() != 2)
        throw dynrt::Error("fully_connected weights (input 1) must be [N, K], got " + w.shape.to_string());
    const Dimension& k_x = x.shape[x.shape.rank() - 1];
    const Dimension& k_w = w.shape[1];
    if (!k_x.compatible(k_w))
        throw dynrt::Error("fully_connected: input 0 has shape " + x.shape.to_string() + " and weights " +
                           w.shape.to_string() + ": last dim of input (K=" + k_x.to_string() +
                           ") must equal weights dim 1 (K=" + k_w.to_string() + ")");
    const Dimension& n = w.shape[0];
    if (ctx.inputs.size() > 2) {
        const dynrt::Layout& b = ctx.inputs[2];
        if (b.shape.rank() != 1 || !b.shape[0].compatible(n))
            throw dynrt::Error("fully_connected bias (input 2) must be [N] with N=" + n.to_string() + " (weights " +
                               w.shape.to_string() + "), got " + b.shape.to_string());
    }
    std::vector<Dimension> out(x.shape.begin(), x.shape.end());
    out.back() = n;
    return {dynrt::Layout(dynrt::PartialShape(out), x.dtype)};
}

void kernel(dynrt::HostCall& call) {
    const dynrt::Shape& xs = call.in_shape(0);
    const dynrt::Shape& ws = call.in_shape(1);
    const size_t k_len = static_cast<size_t>(xs[xs.rank() - 1]);
    if (static_cast<size_t>(ws[1]) != k_len)
        throw dynrt::Error("fully_connected: input 0 has shape " + xs.to_string() + " but weights have shape " +
                           ws.to_string());
    const size_t n_len = static_cast<size_t>(ws[0]);
    size_t rows = 1;
    for (size_t d = 0; d + 1 < xs.rank(); ++d) rows *= static_cast<size_t>(xs[d]);
    const bool has_bias = call.num_inputs() > 2;
    for (size_t r = 0; r < rows; ++r) {
        for (size_t n = 0; n < n_len; ++n) {
            double acc = has_bias ? call.get(2, n) : 0.0;
            for (size_t k = 0; k < k_len; ++k) acc += call.get(0, r * k_len + k) * call.get(1, n * k_len + k);
            call.set(0, r * n_len + n, acc);
        }
    }
}

// Fake alignment (docs/architecture.md): the leading dims collapse into M
// rows, rounded up to the kernel's tile; never for one row (a matrix-vector
// product has one shape to share anyway, and the decode kernels have a one-row
// entry point, so padded rows would be pure waste), nor when nothing would
// change.
bool fake_align(std::vector<dynrt::Layout>& in, std::vector<dynrt::Layout>& out, size_t tile) {
    const dynrt::Shape xs = in.at(0).get_shape();
    const int64_t k = xs.rank() ? xs[xs.rank() - 1] : 1;
    if (tile <= 1) return false;
    // Rows counted from the leading dims, not count / K: with K = 0 the
    // product still has rows (each the bias), and it must take the [M, K]
    // layouts of the other runs, since the shape-agnostic impl built for
    // them reads its dims by that rank.
    size_t rows = 1;
    for (size_t d = 0; d + 1 < xs.rank(); ++d) rows *= static_cast<size_t>(xs[d]);
    if (rows <= 1) return false;
    const size_t aligned = (rows + tile - 1) / tile * tile;
    if (aligned == rows && xs.rank() == 2) return false;
    const dynrt::Shape ys = out.at(0).get_shape();
    const int64_t n = ys.rank() ? ys[ys.rank() - 1] : 1;
    in[0] = in[0].with_shape(dynrt::Shape{static_cast<int64_t>(aligned), k});
    out[0] = out[0].with_shape(dynrt::Shape{static_cast<int64_t>(aligned), n});
    return true;
}

// The product fully_connected is: rows of x times w [N, K] transposed, plus the bias.
dynrt::MatmulVariant variant(const dynrt::KernelParams&) {
    dynrt::MatmulVariant v;
    v.fc = true;
    v.tb = true;
    return v;
}

void register_fully_connected(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def =
        dynrt::op_def("fully_connected", "y[..., N] = x[..., K] * w[N, K]^T + bias[N]", 2, 3, {}, infer);
    def.traits.critical = true;
    def.traits.weightable = true;
    def.traits.accepts_fused_ops = true;
    def.weights_input = 1;
    def.fake_align = fake_align;
    // A multiply-add per output element and element of K; every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes&) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape x = in.at(0).get_shape();
        if (!x.empty())
            c.flops = 2.0 * static_cast<double>(out.at(0).get_shape().count()) * static_cast<double>(x[x.size() - 1]);
        return c;
    };
    reg.add_op(def);

    dynrt::add_host_impls(reg, "fully_connected", kernel, dynrt::host_options({DataType::f32, DataType::f16}));
    // cpu: oneDNN's matmul (dynrt/cpu_matmul.hpp), one primitive for every M.
    dynrt::add_dnnl_matmul_impls(reg, "fully_connected", variant);

    // OpenCL: the SDK's matrix-product kernels (dynrt/ocl_matmul.hpp) with
    // FC=1: the leading dims of x collapse into M, w [N, K] is op(b)
    // transposed, the bias is c broadcast over rows; M <= 16 (decode) runs a
    // skinny kernel.
    dynrt::OclMatmulHooks hooks;
    hooks.fake_align_rows = 8;   // rows rounded up to 8 (fake alignment)
    hooks.variant = variant;
    hooks.sizes = [](const dynrt::KernelParams& p) {
        // Reads the dims without building Shapes.
        const dynrt::PartialShape& xs = p.inputs[0].shape;
        dynrt::OclMatmulSizes s;
        s.M = 1;
        for (size_t d = 0; d + 1 < xs.rank(); ++d) s.M *= static_cast<size_t>(xs[d].get_length());
        s.N = static_cast<size_t>(p.inputs[1].shape[0].get_length());
        s.batches = 1;
        return s;
    };
    dynrt::add_ocl_matmul_impls(reg, "fully_connected", hooks);
}

}   // namespace

DYNRT_MODULE("fully_connected", register_fully_connected)
