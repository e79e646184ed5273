// gather_elements: each output element picks one element of `data` along
// `axis`, at the position the matching element of `indices` names (ONNX
// GatherElements): out[c] = data[c with c[axis] replaced by indices[c]].
// The output has the shape of `indices`; negative indices count from the end
// of the axis. Elements are copied bit for bit, so every data type is served.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "gather_elements_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "gather_elements";

std::vector<Layout> infer_gather_elements(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    const std::string shapes = "data " + data.to_string() + " and indices " + indices.to_string();
    if (!is_index_type(indices.dtype))
        throw Error("indices must be i32 or i64, got " + indices.to_string(), node_context(ctx.node, kOp, "indices"));
    const size_t rank = data.shape.rank();
    if (rank == 0)
        throw Error("data " + data.to_string() + " is a scalar; gather_elements needs rank >= 1",
                    node_context(ctx.node, kOp, "data"));
    if (indices.shape.rank() != rank)
        throw Error(shapes + " must have the same rank", node_context(ctx.node, kOp, "indices"));
    const size_t axis = axis_attr(ctx.attrs, rank);
    // Off the axis an index dim walks the data dim itself: it may not be longer.
    for (size_t d = 0; d < rank; ++d) {
        if (d == axis || !data.shape[d].is_static() || !indices.shape[d].is_static()) continue;
        if (indices.shape[d].get_length() > data.shape[d].get_length())
            throw Error(shapes + ": indices dim " + std::to_string(d) + " is longer than the data dim",
                        node_context(ctx.node, kOp, "indices"));
    }
    return {Layout(indices.shape, data.dtype)};
}

// ---- reference ------------------------------------------------------------

void gather_elements_kernel(HostCall& call) {
    // Every index checked before anything is written.
    const std::vector<size_t> from = axis_index_positions(call, kOp);
    if (from.empty()) return;
    const size_t width = byte_size(call.in_type(0));
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < from.size(); ++o) std::memcpy(dst + o * width, src + from[o] * width, width);
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// The report of gather_elements_ref (gather_elements.cl): a bad index's
// position + 1 (0: none) and its low and high 32 bits. The error is the host
// impls' (axis_index_positions), naming the indices input.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    const Shape data = p.inputs.at(0).get_shape();
    const size_t axis = axis_attr(*p.attrs, data.rank());
    throw Error("index " + std::to_string(given) + " (at position " + std::to_string(uint32_t(report[0]) - 1) +
                    ") is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(data[axis]) +
                    " in data " + data.to_string(),
                node_context(p.node, kOp, "indices"));
}

OclKernelSpec gather_elements_ocl_spec() {
    OclKernelSpec spec;
    spec.source = gather_elements_cl;
    spec.kernel_name = "gather_elements_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)},
                          {"AXIS_POS", std::to_string(kOclMaxRank - rank + axis)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

std::string check_inputs(const KernelParams& p) { return check_index_input(p, 1, "indices"); }

// The report holds a position + 1 in an int: indices of 2^31 - 1 elements or
// more are left to the host impls.
std::string check_ocl(const KernelParams& p) {
    const PartialShape& indices = p.inputs.at(1).shape;
    if (indices.is_static() && indices.to_shape().count() >= uint64_t(INT32_MAX)) return "2^31 - 1 indices or more";
    return check_index_input(p, 1, "indices", kOclMaxRank);
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_gather_elements(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.set("axis", c.i("axis", 0));
    c.use_inputs({0, 1});
    return true;
}

void register_gather_elements(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp, "Elements of data along axis at per-element indices (ONNX GatherElements)", 2, 2,
                              {attr_int("axis", 0, "axis of data to gather along; negative counts from the end")},
                              infer_gather_elements);
    def.imports = {onnx_rule("GatherElements", 2, 2, onnx_gather_elements, "`axis`")};
    reg.add_op(def);
    add_host_impls(reg, kOp, gather_elements_kernel, host_options({}, check_inputs));
    // OpenCL: an out-of-range index is reported by the kernel and raised by check_report.
    add_ocl_impls(reg, kOp, gather_elements_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("gather_elements", register_gather_elements)
