// gather: picks slices of `data` along `axis` at the positions given by
// `indices` (ONNX Gather). Negative indices count from the end of the axis.
//
// Output shape = data[:axis] + indices.shape + data[axis+1:]; rank-0 indices
// therefore drop the axis. The kernel moves whole inner slices as bytes, so every
// data type is served by the same loop.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "gather_cl.hpp"

namespace {

using namespace dynrt;

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

std::vector<Layout> infer_gather(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    if (!is_index_type(indices.dtype))
        throw Error(std::string("indices must be i32 or i64, got ") + to_string(indices.dtype));
    if (data.shape.rank() == 0) throw Error("data " + data.shape.to_string() + " is a scalar; gather needs rank >= 1");
    const size_t axis = axis_attr(ctx.attrs, data.shape.rank());

    std::vector<Dimension> out;
    for (size_t i = 0; i < axis; ++i) out.push_back(data.shape[i]);
    for (const Dimension& d : indices.shape) out.push_back(d);
    for (size_t i = axis + 1; i < data.shape.rank(); ++i) out.push_back(data.shape[i]);
    return {Layout(PartialShape(std::move(out)), data.dtype)};
}

// The gather of one call: data split as [outer, axis_len, inner], and the
// position along the axis of every index, each checked before anything is
// written, so a bad index leaves no half-written output behind.
struct GatherPlan {
    size_t outer = 0, inner = 0, axis_len = 0;
    std::vector<size_t> pos;
};

// The error of an index out of range, the same on every device: the index
// as given, its position in the indices tensor, the axis and its length.
Error index_error(const std::string& node, int64_t value, size_t at, size_t axis, const Shape& data) {
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     ") is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(data[axis]) +
                     " in data " + data.to_string(),
                 node_context(node, "gather", "indices"));
}

GatherPlan plan_gather(const HostCall& call) {
    const Shape& data = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), data.rank());
    GatherPlan g;
    g.outer = dims_product(data, 0, axis);
    g.inner = dims_product(data, axis + 1, data.rank());
    const int64_t axis_len = data[axis];
    g.axis_len = static_cast<size_t>(axis_len);
    const std::vector<int64_t> idx = call.get_ints(1);
    g.pos.resize(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
        const int64_t v = idx[j] < 0 ? idx[j] + axis_len : idx[j];
        if (v < 0 || v >= axis_len) throw index_error(call.node(), idx[j], j, axis, data);
        g.pos[j] = static_cast<size_t>(v);
    }
    return g;
}

void gather_kernel(HostCall& call) {
    const GatherPlan g = plan_gather(call);
    const size_t slice = g.inner * byte_size(call.in_type(0));
    if (g.outer == 0 || g.pos.empty() || slice == 0) return;   // empty output
    const auto* src = static_cast<const uint8_t*>(call.in_raw(0));
    auto* dst = static_cast<uint8_t*>(call.out_raw(0));
    for (size_t o = 0; o < g.outer; ++o) {
        const uint8_t* block = src + o * g.axis_len * slice;
        for (size_t j = 0; j < g.pos.size(); ++j) {
            std::memcpy(dst, block + g.pos[j] * slice, slice);
            dst += slice;
        }
    }
}

// ---- cpu: output rows over the engine's threads -----------------------------

// Output row r = (outer, j) of `inner` elements of type T: a typed loop for
// short rows (one element: a gather of scalars), memcpy for long ones.
template <typename T>
void copy_rows(const GatherPlan& g, const T* src, T* dst, size_t begin, size_t end) {
    const size_t count = g.pos.size(), inner = g.inner;
    for (size_t r = begin; r < end; ++r) {
        const T* from = src + ((r / count) * g.axis_len + g.pos[r % count]) * inner;
        T* to = dst + r * inner;
        if (inner < 16) {
            for (size_t k = 0; k < inner; ++k) to[k] = from[k];
        } else {
            std::memcpy(to, from, inner * sizeof(T));
        }
    }
}

template <typename T>
void fast_rows(const GatherPlan& g, HostCall& call) {
    const size_t rows = g.outer * g.pos.size();
    const CpuThreads threads(call.params().engine, 2 * rows * g.inner * sizeof(T));
    const T* src = call.in<T>(0);
    T* dst = call.out<T>(0);
    parallel_for(threads, rows, std::max<size_t>(1, 4096 / std::max<size_t>(g.inner, 1)),
                 [&](size_t begin, size_t end) { copy_rows(g, src, dst, begin, end); });
}

void fast_kernel(HostCall& call) {
    const GatherPlan g = plan_gather(call);
    if (g.outer == 0 || g.pos.empty() || g.inner == 0) return;   // empty output
    switch (byte_size(call.in_type(0))) {
        case 1: return fast_rows<uint8_t>(g, call);
        case 2: return fast_rows<uint16_t>(g, call);
        case 8: return fast_rows<uint64_t>(g, call);
        default: return fast_rows<uint32_t>(g, call);
    }
}

// ---- OpenCL ---------------------------------------------------------------

// The report of gather_ref (gather.cl): a bad index's position + 1 (0: none)
// and its low and high 32 bits; raised as the host impls' error.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    const Shape data = p.inputs.at(0).get_shape();
    throw index_error(p.node, given, uint32_t(report[0]) - 1, axis_attr(*p.attrs, data.rank()), data);
}

OclKernelSpec gather_ocl_spec() {
    OclKernelSpec spec;
    spec.source = gather_cl;
    spec.kernel_name = "gather_ref";
    // Axis and ranks are fixed per node, so both builds take them as constants;
    // the dims come from the INPUT0_DIMj constants.
    spec.defines = [](const KernelParams& p, bool) {
        const Layout& data = p.inputs.at(0);
        const size_t rank = data.shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        return JitDefines{{"ELEM_T", ocl_bits_type(data.dtype)},
                          {"AXIS_LEN", jit_dims_product("INPUT0", rank, axis, axis + 1)},
                          {"INNER", jit_dims_product("INPUT0", rank, axis + 1, rank)}};
    };
    // Grid-stride over the output's 4-element vectors (the last one partial).
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_grid_stride((p.outputs.at(0).count() + 3) / 4, limits);
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_gather(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.set("axis", c.i("axis", 0));
    c.use_inputs({0, 1});
    return true;
}

std::vector<ImportRule> onnx_rules() { return {onnx_rule("Gather", 2, 2, onnx_gather, "`axis`")}; }

void register_gather(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("gather", "Slices of data along axis at the given indices (ONNX Gather)", 2, 2,
               {attr_int("axis", 0, "axis of data to gather along; negative counts from the end")}, infer_gather);
    def.imports = onnx_rules();
    reg.add_op(def);
    const auto check_indices = [](const KernelParams& p) -> std::string {
        if (!is_index_type(p.inputs.at(1).dtype))
            return std::string("indices type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
        return {};
    };
    add_host_impls(reg, "gather", gather_kernel, host_options({}, check_indices));
    add_host_impls(reg, "gather", fast_kernel, optimised_host_options({}, check_indices));

    // OpenCL: an out-of-range index is reported by the kernel (gather.cl) and
    // raised by check_report. The report keeps the index's position in an
    // int: indices of 2^31 - 1 elements or more are left to the host impls.
    const auto check_ocl = [check_indices](const KernelParams& p) -> std::string {
        const Layout& indices = p.inputs.at(1);
        if (indices.is_static() && indices.count() >= uint64_t(INT32_MAX)) return "2^31 - 1 indices or more";
        return check_indices(p);
    };
    add_ocl_impls(reg, "gather", gather_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("gather", register_gather)
