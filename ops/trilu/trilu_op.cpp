// trilu: the upper or lower triangle of each matrix in the last two dims
// (ONNX Trilu). Element [..., i, j] is kept when j - i >= k (upper) or
// j - i <= k (lower, `upper` false) and is zero otherwise. k, the diagonal
// offset, is the optional scalar i64 input 1 (0 without it); kernels read it
// from the tensor on each run, so shape inference never needs its value.
// Kept elements are copied bit for bit; zeros are all-zero bits in every type.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "trilu_cl.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_trilu(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    if (in.shape.rank() < 2)
        throw Error("input " + in.to_string() + " has rank " + std::to_string(in.shape.rank()) +
                        "; trilu needs rank >= 2 (matrices in the last two dims)",
                    node_context(ctx.node, "trilu", "inputs"));
    if (ctx.inputs.size() > 1) {
        const Layout& k = ctx.inputs[1];
        if (k.dtype != DataType::i64 || k.shape.rank() != 0)
            throw Error("k (input 1) must be an i64 scalar, got " + k.to_string(),
                        node_context(ctx.node, "trilu", "k"));
    }
    return {in};
}

// ---- reference ------------------------------------------------------------

void trilu_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t count = s.count();
    if (count == 0) return;
    const int64_t k = call.num_inputs() > 1 ? call.get_ints(1).at(0) : 0;
    const bool upper = call.attrs().get_bool("upper");
    const auto rows = static_cast<size_t>(s[s.rank() - 2]), cols = static_cast<size_t>(s[s.rank() - 1]);
    const size_t width = byte_size(call.out_type(0));
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < count; ++o) {
        const auto i = static_cast<int64_t>(o / cols % rows), j = static_cast<int64_t>(o % cols);
        // j - i lies in [-(rows-1), cols-1]: compared with any int64 k, no overflow.
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (keep) std::memcpy(dst + o * width, src + o * width, width);
        else std::memset(dst + o * width, 0, width);
    }
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec trilu_ocl_spec() {
    OclKernelSpec spec;
    spec.source = trilu_cl;
    spec.kernel_name = "trilu_ref";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.outputs.at(0).dtype)},
                          {"UPPER", p.attrs->get_bool("upper") ? "1" : "0"},
                          {"HAS_K", p.inputs.size() > 1 ? "1" : "0"}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_trilu(ImportContext& c) {
    if (!c.only_attrs({"upper"})) return false;
    c.set("upper", c.i("upper", 1) != 0);
    c.use_inputs({0, 1});   // k, when present, is read on each run
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Trilu", 1, 2, onnx_trilu, "`upper`; k as input 1 (read by the kernels)")};
}

void register_trilu(ModuleRegistrar& reg) {
    OpDefinition def = op_def("trilu", "Upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims", 1, 2,
                              {attr_bool("upper", true, "keep the upper triangle; false: the lower one")}, infer_trilu);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "trilu", trilu_kernel);                                                // every dtype, any rank
    add_ocl_impls(reg, "trilu", trilu_ocl_spec(), ocl_options({}, validate_broadcast_rank));   // ranks up to 8
}

}   // namespace

DYNRT_MODULE("trilu", register_trilu)
