// scatter_nd: a copy of `data` into which slices of `updates` are written, or
// combined by `reduction`, at positions given by index tuples (ONNX
// ScatterND). With data of rank r and indices [X..., k], each k-tuple
// addresses a slice data[tuple, :] of shape data.shape[k:], and
//   out[indices[x], :] = f(out[indices[x], :], updates[x, :])
// for every x in row-major order, so duplicate tuples combine in that order
// (the last one wins without a reduction). Negative indices count from the
// end of their dim. updates has shape indices.shape[:-1] + data.shape[k:].
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_scatter.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_reduction.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "scatter_nd_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "scatter_nd";

// The tuple length, from the ranks: rank(updates) = rank(indices) - 1 + rank(data) - k.
int64_t tuple_length(size_t r, size_t q, size_t u) {
    return static_cast<int64_t>(q) - 1 + static_cast<int64_t>(r) - static_cast<int64_t>(u);
}

std::vector<Layout> infer_scatter_nd(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    const Layout& updates = ctx.inputs.at(2);
    const auto fail = [&](const std::string& field, const std::string& why) {
        return scatter_error(ctx, kOp, field, why);
    };
    check_scatter_types(ctx, kOp);
    const size_t r = data.shape.rank(), q = indices.shape.rank();
    if (r == 0 || q == 0) throw fail("indices", "data and indices need rank >= 1");
    const int64_t k = tuple_length(r, q, updates.shape.rank());
    if (k < 1 || k > static_cast<int64_t>(r) || !indices.shape[q - 1].contains(k))
        throw fail("updates",
                   "updates must have shape indices.shape[:-1] + data.shape[k:], k the last dim of indices "
                   "in [1, rank(data)]");
    std::vector<Dimension> want(indices.shape.begin(), indices.shape.end() - 1);
    for (size_t d = static_cast<size_t>(k); d < r; ++d) want.push_back(data.shape[d]);
    for (size_t d = 0; d < want.size(); ++d)
        if (!want[d].compatible(updates.shape[d]))
            throw fail("updates", "updates dim " + std::to_string(d) + " must be " + want[d].to_string());
    return {data};
}

// ---- reference ------------------------------------------------------------

// The error of an index out of range, the same from the host and the OpenCL
// impls.
Error index_error(const std::string& node, const Shape& data, int64_t value, size_t at, size_t dim) {
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     " of indices) is out of range for dim " + std::to_string(dim) + " of data " + data.to_string(),
                 node_context(node, kOp, "indices"));
}

void scatter_nd_kernel(HostCall& call) {
    const Shape& data = call.in_shape(0);
    const Shape& ind = call.in_shape(1);
    const auto k = static_cast<size_t>(ind[ind.rank() - 1]);
    const size_t tuples = dims_product(ind, 0, ind.rank() - 1), inner = dims_product(data, k, data.rank());
    const std::vector<int64_t> idx = call.get_ints(1);
    // Every tuple resolved (and checked) before anything is written.
    std::vector<size_t> slice(tuples);
    for (size_t t = 0; t < tuples; ++t) {
        size_t at = 0;
        for (size_t i = 0; i < k; ++i) {
            const int64_t len = data[i], raw = idx[t * k + i];
            const int64_t v = raw < 0 ? raw + len : raw;
            if (v < 0 || v >= len) throw index_error(call.node(), data, raw, t * k + i, i);
            at = at * static_cast<size_t>(len) + static_cast<size_t>(v);
        }
        slice[t] = at;
    }
    const size_t width = byte_size(call.in_type(0)), bytes = data.count() * width, run = inner * width;
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    if (bytes > 0) std::memcpy(dst, call.in_raw(0), bytes);
    if (tuples == 0 || run == 0) return;
    const auto* upd = static_cast<const unsigned char*>(call.in_raw(2));
    const ScatterReduction r = scatter_reduction_of(kOp, call.attrs());
    const ScatterCombine f = scatter_combine_for(call.in_type(0));
    for (size_t t = 0; t < tuples; ++t) {
        if (r == ScatterReduction::none) std::memcpy(dst + slice[t] * run, upd + t * run, run);
        else f(dst + slice[t] * run, upd + t * run, inner, r);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// An index the apply kernel reported: the host impls' error.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    ScatterBadIndex bad;
    if (!scatter_bad_index(report, &bad)) return;
    const Shape indices = p.inputs.at(1).get_shape();
    const auto k = static_cast<size_t>(indices[indices.rank() - 1]);
    throw index_error(p.node, p.inputs.at(0).get_shape(), bad.value, bad.position, bad.position % k);
}

OclMultiKernelSpec scatter_nd_ocl_spec() {
    static const std::string kSource = ocl_scatter_source(scatter_nd_cl);
    OclMultiKernelSpec spec;
    spec.source = kSource.c_str();
    spec.defines = [](const KernelParams& p, bool) {
        const size_t r = p.inputs.at(0).shape.rank(), q = p.inputs.at(1).shape.rank();
        const auto k = static_cast<size_t>(tuple_length(r, q, p.inputs.at(2).shape.rank()));
        JitDefines d = jit_scatter_defines(p.inputs.at(0).dtype, scatter_reduction_of(kOp, *p.attrs));
        d.insert(d.end(), {{"TUPLE_LEN", std::to_string(k)},
                           {"FIRST_DIM", std::to_string(kOclMaxRank - r)},
                           {"TUPLES", jit_dims_product("INPUT1", q, 0, q - 1)},
                           {"INNER", jit_dims_product("INPUT0", r, k, r)}});
        return d;
    };
    spec.stages = [](const KernelParams&, bool) { return scatter_stages("scatter_nd_apply"); };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const Shape data = p.inputs.at(0).get_shape(), ind = p.inputs.at(1).get_shape();
        const auto k = static_cast<size_t>(ind[ind.rank() - 1]);
        const size_t tuples = dims_product(ind, 0, ind.rank() - 1);
        runs[0].dispatch = dispatch_scatter_copy(p, l);
        // One work-item per element of a slice; none when there is no tuple.
        runs[1].dispatch = dispatch_1d(tuples == 0 ? 0 : dims_product(data, k, data.rank()), l);
    };
    spec.report_ints = kScatterReportInts;
    spec.report_check = check_report;
    return spec;
}

std::string check_inputs(const KernelParams& p) { return check_index_input(p, 1, "indices"); }

std::string check_ocl(const KernelParams& p) {
    const std::string why = check_scatter_report_fits(p, 1);
    return why.empty() ? check_index_input(p, 1, "indices", kOclMaxRank) : why;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_scatter_nd(ImportContext& c) {
    if (!c.only_attrs({"reduction"})) return false;
    c.set("reduction", c.s("reduction", "none"));   // before opset 16: none
    c.use_inputs({0, 1, 2});
    return true;
}

void register_scatter_nd(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp, "Slices of updates written into a copy of data at index tuples (ONNX ScatterND)", 3,
                              3, {scatter_reduction_attr()}, infer_scatter_nd);
    def.imports = {onnx_rule("ScatterND", 3, 3, onnx_scatter_nd, "`reduction`")};
    reg.add_op(def);
    add_host_impls(reg, kOp, scatter_nd_kernel, host_options({}, check_inputs));
    // OpenCL: an out-of-range index is reported by the apply kernel and raised by check_report.
    add_ocl_multi_impls(reg, kOp, scatter_nd_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("scatter_nd", register_scatter_nd)
