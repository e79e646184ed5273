// space_to_depth: moves square blocks of the spatial dims into the channels
// (ONNX SpaceToDepth), the inverse of depth_to_space in DCR mode. An NCHW
// input [N, C, H, W] with blocksize b becomes [N, C*b*b, H/b, W/b] and
//   out[n, (i*b + j)*C + c, h, w] = x[n, c, h*b + i, w*b + j].
// Elements are copied bit for bit, so every data type is served.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_block.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "space_to_depth_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "space_to_depth";

std::vector<Layout> infer_space_to_depth(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const ErrorContext where = node_context(ctx.node, kOp, "blocksize");
    if (x.shape.rank() != 4)
        throw Error("the input must be 4-D [N, C, H, W], got " + x.to_string(), node_context(ctx.node, kOp, "input"));
    const int64_t b = blocksize_attr(ctx.attrs, kOp, ctx.node);
    for (size_t d : {2, 3})
        if (x.shape[d].is_static() && x.shape[d].get_length() % b != 0)
            throw Error("spatial dim " + std::to_string(d) + " of " + x.to_string() +
                            " is not a multiple of blocksize " + std::to_string(b),
                        where);
    const int64_t bb = checked_mul(b, b, "blocksize * blocksize");
    const std::string what = "space_to_depth of " + x.to_string() + " by " + std::to_string(b);
    return {Layout(PartialShape({x.shape[0], dim_times(x.shape[1], bb, where, what), dim_over(x.shape[2], b),
                                 dim_over(x.shape[3], b)}),
                   x.dtype)};
}

// ---- reference ------------------------------------------------------------

void space_to_depth_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const auto b = static_cast<size_t>(call.attrs().get_int("blocksize"));
    const auto n_ = static_cast<size_t>(in[0]), c_ = static_cast<size_t>(in[1]);
    const auto h_ = static_cast<size_t>(in[2]) / b, w_ = static_cast<size_t>(in[3]) / b;
    const size_t width = byte_size(call.in_type(0));
    if (in.count() == 0) return;
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    size_t o = 0;
    for (size_t n = 0; n < n_; ++n)
        for (size_t oc = 0; oc < c_ * b * b; ++oc)
            for (size_t h = 0; h < h_; ++h)
                for (size_t w = 0; w < w_; ++w, ++o) {
                    const size_t c = oc % c_, i = oc / c_ / b, j = oc / c_ % b;
                    const size_t from = ((n * c_ + c) * h_ * b + h * b + i) * w_ * b + w * b + j;
                    std::memcpy(dst + o * width, src + from * width, width);
                }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec space_to_depth_ocl_spec() {
    OclKernelSpec spec;
    spec.source = space_to_depth_cl;
    spec.kernel_name = "space_to_depth_ref";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)},
                          {"BLOCK", std::to_string(p.attrs->get_int("blocksize"))}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_space_to_depth(ImportContext& c) {
    if (!c.only_attrs({"blocksize"})) return false;
    if (!c.has("blocksize")) return c.unsupported("SpaceToDepth without blocksize");
    c.set("blocksize", c.i("blocksize", 1));
    c.use_inputs({0});
    return true;
}

void register_space_to_depth(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "Square spatial blocks moved into the channels (ONNX SpaceToDepth)", 1, 1,
               {attr_int("blocksize", std::nullopt, "side of the square block, >= 1")}, infer_space_to_depth);
    def.imports = {onnx_rule("SpaceToDepth", 1, 1, onnx_space_to_depth, "`blocksize`")};
    reg.add_op(def);
    add_host_impls(reg, kOp, space_to_depth_kernel);
    add_ocl_impls(reg, kOp, space_to_depth_ocl_spec());
}

}   // namespace

DYNRT_MODULE("space_to_depth", register_space_to_depth)
