// depth_to_space: moves blocks of channels into the spatial dims (ONNX
// DepthToSpace). An NCHW input [N, C, H, W] with blocksize b becomes
// [N, C/(b*b), H*b, W*b]; the channel of out[n, c, h*b+i, w*b+j] is
//   DCR (depth, column, row): (i*b + j) * C/(b*b) + c
//   CRD (column, row, depth): c*b*b + i*b + j
// Elements are copied bit for bit, so every data type is served.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "depth_to_space_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_block.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "depth_to_space";
const std::vector<std::string> kModes = {"DCR", "CRD"};
enum Mode : size_t { kDcr, kCrd };

std::vector<Layout> infer_depth_to_space(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const ErrorContext where = node_context(ctx.node, kOp, "blocksize");
    if (x.shape.rank() != 4)
        throw Error("the input must be 4-D [N, C, H, W], got " + x.to_string(), node_context(ctx.node, kOp, "input"));
    const int64_t b = blocksize_attr(ctx.attrs, kOp, ctx.node);
    mode_index(kOp, kModes, ctx.attrs.get_string("mode"));
    const int64_t bb = checked_mul(b, b, "blocksize * blocksize");
    const Dimension& c = x.shape[1];
    if (c.is_static() && c.get_length() % bb != 0)
        throw Error("the channels of " + x.to_string() + " are not a multiple of blocksize^2 = " + std::to_string(bb),
                    where);
    const std::string what = "depth_to_space of " + x.to_string() + " by " + std::to_string(b);
    return {Layout(PartialShape({x.shape[0], dim_over(c, bb), dim_times(x.shape[2], b, where, what),
                                 dim_times(x.shape[3], b, where, what)}),
                   x.dtype)};
}

// ---- reference ------------------------------------------------------------

void depth_to_space_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const auto b = static_cast<size_t>(call.attrs().get_int("blocksize"));
    const bool crd = mode_index(kOp, kModes, call.attrs().get_string("mode")) == kCrd;
    const auto n_ = static_cast<size_t>(out[0]), c_ = static_cast<size_t>(out[1]);
    const auto h_ = static_cast<size_t>(out[2]) / b, w_ = static_cast<size_t>(out[3]) / b;
    const size_t width = byte_size(call.in_type(0));
    if (out.count() == 0) return;
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    size_t o = 0;
    for (size_t n = 0; n < n_; ++n)
        for (size_t c = 0; c < c_; ++c)
            for (size_t oh = 0; oh < h_ * b; ++oh)
                for (size_t ow = 0; ow < w_ * b; ++ow, ++o) {
                    const size_t i = oh % b, j = ow % b;
                    const size_t ic = crd ? (c * b + i) * b + j : (i * b + j) * c_ + c;
                    const size_t from = ((n * c_ * b * b + ic) * h_ + oh / b) * w_ + ow / b;
                    std::memcpy(dst + o * width, src + from * width, width);
                }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec depth_to_space_ocl_spec() {
    OclKernelSpec spec;
    spec.source = depth_to_space_cl;
    spec.kernel_name = "depth_to_space_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const bool crd = mode_index(kOp, kModes, p.attrs->get_string("mode")) == kCrd;
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)},
                          {"BLOCK", std::to_string(p.attrs->get_int("blocksize"))},
                          {"MODE_CRD", crd ? "1" : "0"}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_depth_to_space(ImportContext& c) {
    if (!c.only_attrs({"blocksize", "mode"})) return false;
    if (!c.has("blocksize")) return c.unsupported("DepthToSpace without blocksize");
    c.set("blocksize", c.i("blocksize", 1));
    c.set("mode", c.s("mode", "DCR"));   // DepthToSpace-1 has no mode: DCR
    c.use_inputs({0});
    return true;
}

void register_depth_to_space(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp, "Blocks of channels moved into the spatial dims (ONNX DepthToSpace)", 1, 1,
                              {attr_int("blocksize", std::nullopt, "side of the square block, >= 1"),
                               attr_string("mode", std::string("DCR"), kModes,
                                           "DCR: channel blocks outermost; CRD: channel blocks innermost")},
                              infer_depth_to_space);
    def.imports = {onnx_rule("DepthToSpace", 1, 1, onnx_depth_to_space, "`blocksize`, `mode` (DCR before opset 11)")};
    reg.add_op(def);
    add_host_impls(reg, kOp, depth_to_space_kernel);
    add_ocl_impls(reg, kOp, depth_to_space_ocl_spec());
}

}   // namespace

DYNRT_MODULE("depth_to_space", register_depth_to_space)
