// scatter_elements: a copy of `data` into which each element of `updates` is
// written (or combined, by `reduction`) at the position of the matching
// element of `indices` along `axis` (ONNX ScatterElements, and the older
// Scatter): for every position c of indices,
//   out[c with c[axis] replaced by indices[c]] = f(out[...], updates[c])
// applied in row-major order of c, so duplicates combine in that order (the
// last one wins without a reduction). Negative indices count from the end.
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
#include "scatter_elements_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "scatter_elements";

std::vector<Layout> infer_scatter_elements(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    const Layout& updates = ctx.inputs.at(2);
    const auto fail = [&](const std::string& field, const std::string& why) {
        return scatter_error(ctx, kOp, field, why);
    };
    check_scatter_types(ctx, kOp);
    const size_t rank = data.shape.rank();
    if (rank == 0) throw fail("data", "data must have rank >= 1");
    if (indices.shape.rank() != rank || updates.shape.rank() != rank)
        throw fail("indices", "the three must have the same rank");
    const size_t axis = axis_attr(ctx.attrs, rank);
    for (size_t d = 0; d < rank; ++d) {
        if (!indices.shape[d].compatible(updates.shape[d]))
            throw fail("updates", "updates must have the shape of indices");
        const Dimension& i = indices.shape[d];
        // Off the axis an index position is a data position: it may not run past it.
        if (d != axis && i.is_static() && data.shape[d].is_static() && i.get_length() > data.shape[d].get_length())
            throw fail("indices", "indices dim " + std::to_string(d) + " is longer than the data dim");
    }
    return {data};
}

// ---- reference ------------------------------------------------------------

void scatter_elements_kernel(HostCall& call) {
    const Shape& data = call.in_shape(0);
    const ScatterReduction r = scatter_reduction_of(kOp, call.attrs());
    // Every target computed (and checked) before anything is written.
    const std::vector<size_t> target = axis_index_positions(call, kOp);
    const size_t width = byte_size(call.in_type(0)), bytes = data.count() * width;
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    if (bytes > 0) std::memcpy(dst, call.in_raw(0), bytes);
    if (target.empty()) return;
    const auto* upd = static_cast<const unsigned char*>(call.in_raw(2));
    const ScatterCombine f = scatter_combine_for(call.in_type(0));
    for (size_t j = 0; j < target.size(); ++j) {
        if (r == ScatterReduction::none) std::memcpy(dst + target[j] * width, upd + j * width, width);
        else f(dst + target[j] * width, upd + j * width, 1, r);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// An index the apply kernel reported: the host impls' error
// (axis_index_positions), naming the indices input.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    ScatterBadIndex bad;
    if (!scatter_bad_index(report, &bad)) return;
    const Shape data = p.inputs.at(0).get_shape();
    const size_t axis = axis_attr(*p.attrs, data.rank());
    throw Error("index " + std::to_string(bad.value) + " (at position " + std::to_string(bad.position) +
                    ") is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(data[axis]) +
                    " in data " + data.to_string(),
                node_context(p.node, kOp, "indices"));
}

OclMultiKernelSpec scatter_elements_ocl_spec() {
    static const std::string kSource = ocl_scatter_source(scatter_elements_cl);
    OclMultiKernelSpec spec;
    spec.source = kSource.c_str();
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        JitDefines d = jit_scatter_defines(p.inputs.at(0).dtype, scatter_reduction_of(kOp, *p.attrs));
        d.push_back({"AXIS_POS", std::to_string(kOclMaxRank - rank + axis_attr(*p.attrs, rank))});
        return d;
    };
    spec.stages = [](const KernelParams&, bool) { return scatter_stages("scatter_elements_apply"); };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const Shape ind = p.inputs.at(1).get_shape();
        const size_t axis = axis_attr(*p.attrs, ind.rank());
        runs[0].dispatch = dispatch_scatter_copy(p, l);
        // One work-item per line of indices along the axis (none when the axis is empty).
        runs[1].dispatch = ind[axis] == 0 ? dispatch_1d(0, l) : dispatch_1d(ind.count() / ind[axis], l);
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
bool onnx_scatter_elements(ImportContext& c) {
    if (!c.only_attrs({"axis", "reduction"})) return false;
    c.set("axis", c.i("axis", 0));
    c.set("reduction", c.s("reduction", "none"));   // before opset 16: none
    c.use_inputs({0, 1, 2});
    return true;
}

void register_scatter_elements(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Updates written into a copy of data at per-element indices along axis (ONNX ScatterElements)", 3, 3,
        {attr_int("axis", 0, "axis of data the indices address; negative counts from the end"),
         scatter_reduction_attr()},
        infer_scatter_elements);
    def.imports = {onnx_rule("ScatterElements", 3, 3, onnx_scatter_elements, "`axis`, `reduction`"),
                   onnx_rule("Scatter", 3, 3, onnx_scatter_elements, "`axis` (deprecated Scatter, opsets 9-10)")};
    reg.add_op(def);
    add_host_impls(reg, kOp, scatter_elements_kernel, host_options({}, check_inputs));
    // OpenCL: an out-of-range index is reported by the apply kernel and raised by check_report.
    add_ocl_multi_impls(reg, kOp, scatter_elements_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("scatter_elements", register_scatter_elements)
