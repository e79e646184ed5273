// transpose: the input's dims permuted (ONNX Transpose): output dim i is input
// dim perm[i], and out[c0, ..., cn-1] = in[x] with x[perm[i]] = ci. An empty
// `perm` reverses the dims.
//
// The reference walks the output in order with an odometer over its
// coordinates and copies each element's bytes from its input position, so it
// serves every data type and any rank.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "transpose_cl.hpp"

namespace {

using namespace dynrt;

// The permutation for an input of rank `rank`: the attribute, or the reversed
// dims when it is empty. Anything but a permutation of 0..rank-1 is an error
// naming the node, the attribute and the input shape.
std::vector<size_t> resolve_perm(const std::string& node, const Attributes& attrs, const PartialShape& in) {
    const size_t rank = in.rank();
    const std::vector<int64_t> perm = attrs.get_ints("perm");
    std::vector<size_t> out;
    if (perm.empty()) {
        for (size_t i = 0; i < rank; ++i) out.push_back(rank - 1 - i);
        return out;
    }
    ErrorContext where;
    where.node = node;
    where.op = "transpose";
    where.field = "perm";
    const std::string what = "perm " + ints_to_string(perm) + " is not a permutation of the " + std::to_string(rank) +
                             " dims of input " + in.to_string();
    if (perm.size() != rank) throw Error(what + ": it has " + std::to_string(perm.size()) + " entries", where);
    std::vector<bool> seen(rank, false);
    for (const int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank))
            throw Error(what + ": " + std::to_string(p) + " is not in [0, " + std::to_string(rank) + ")", where);
        if (seen[static_cast<size_t>(p)]) throw Error(what + ": " + std::to_string(p) + " appears twice", where);
        seen[static_cast<size_t>(p)] = true;
        out.push_back(static_cast<size_t>(p));
    }
    return out;
}

std::vector<Layout> infer_transpose(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const std::vector<size_t> perm = resolve_perm(ctx.node, ctx.attrs, in.shape);
    std::vector<Dimension> out;
    for (const size_t p : perm) out.push_back(in.shape[p]);
    return {Layout(PartialShape(std::move(out)), in.dtype)};
}

void transpose_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    const std::vector<size_t> perm = resolve_perm(call.node(), call.attrs(), PartialShape(in));
    const size_t rank = in.rank();
    const size_t count = out.count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "transpose: bytes of the output");
    const std::vector<size_t> in_strides = strides_of(in);
    // Input stride of each output dim: moving one step along output dim i moves
    // one step along input dim perm[i].
    std::vector<size_t> step(rank);
    for (size_t i = 0; i < rank; ++i) step[i] = in_strides[perm[i]];
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    std::vector<int64_t> coord(rank, 0);
    size_t from = 0;   // input element of the output element `o`
    for (size_t o = 0; o < count; ++o) {
        std::memcpy(dst + o * width, src + from * width, width);
        // Next output coordinate (innermost first), keeping `from` in step.
        for (size_t i = rank; i-- > 0;) {
            if (++coord[i] < out[i]) {
                from += step[i];
                break;
            }
            from -= static_cast<size_t>(coord[i] - 1) * step[i];
            coord[i] = 0;
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclKernelSpec transpose_ocl_spec() {
    OclKernelSpec spec;
    spec.source = transpose_cl;
    spec.kernel_name = "transpose_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const PartialShape& in = p.inputs.at(0).shape;
        const size_t rank = in.rank();
        const std::vector<size_t> perm = resolve_perm(p.node, *p.attrs, in);
        JitDefines d = {{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)}, {"TRANSPOSE_RANK", std::to_string(rank)}};
        // Right-aligned positions: output position j = lead + i reads input
        // position lead + perm[i]; the leading positions map to themselves.
        const size_t lead = kOclMaxRank - rank;
        for (size_t j = 0; j < kOclMaxRank; ++j) {
            const size_t from = j < lead ? j : lead + perm[j - lead];
            d.emplace_back("PERM" + std::to_string(j), std::to_string(from));
        }
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(p.outputs.at(0).count(), limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_transpose(ImportContext& c) {
    if (!c.only_attrs({"perm"})) return false;
    if (c.has("perm")) c.set("perm", c.ints("perm"));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Transpose", 1, 1, onnx_transpose, "`perm` (default: the dims reversed)")};
}

void register_transpose(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("transpose", "Permutes the dims: output dim i is input dim perm[i] (ONNX Transpose)", 1, 1,
               {attr_ints("perm", std::vector<int64_t>{}, "a permutation of 0..rank-1; empty: the dims reversed")},
               infer_transpose);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "transpose", transpose_kernel);
    const auto rank_fits = [](const KernelParams& p) -> std::string {
        if (p.inputs.at(0).shape.rank() > kOclMaxRank)
            return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
        return {};
    };
    add_ocl_impls(reg, "transpose", transpose_ocl_spec(), ocl_options({}, rank_fits));
}

}   // namespace

DYNRT_MODULE("transpose", register_transpose)
