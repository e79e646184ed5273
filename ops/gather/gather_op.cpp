// gather: picks slices of `data` along `axis` at the positions given by
// `indices` (ONNX Gather). Negative indices count from the end of the axis.
//
// Output shape = data[:axis] + indices.shape + data[axis+1:]; rank-0 indices
// therefore drop the axis. The kernel moves whole inner slices as bytes, so every
// data type is served by the same loop.
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

void gather_kernel(HostCall& call) {
    const Shape& data = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), data.rank());
    const size_t outer = dims_product(data, 0, axis), inner = dims_product(data, axis + 1, data.rank());
    const int64_t axis_len = data[axis];

    const std::vector<int64_t> idx = call.get_ints(1);
    // Validate every index before writing anything, so a bad index leaves no
    // half-written output behind.
    std::vector<size_t> pos(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
        const int64_t v = idx[j] < 0 ? idx[j] + axis_len : idx[j];
        if (v < 0 || v >= axis_len) {
            ErrorContext where;
            where.node = call.node();
            where.op = "gather";
            throw Error("index " + std::to_string(idx[j]) + " (at position " + std::to_string(j) +
                            ") is out of range for axis " + std::to_string(axis) + " of size " +
                            std::to_string(axis_len) + " in data " + data.to_string(),
                        where);
        }
        pos[j] = static_cast<size_t>(v);
    }

    const size_t esize = byte_size(call.in_type(0));
    const size_t slice = inner * esize;
    if (outer == 0 || pos.empty() || slice == 0) return;   // empty output
    const auto* src = static_cast<const uint8_t*>(call.in_raw(0));
    auto* dst = static_cast<uint8_t*>(call.out_raw(0));
    for (size_t o = 0; o < outer; ++o) {
        const uint8_t* block = src + o * static_cast<size_t>(axis_len) * slice;
        for (size_t j = 0; j < pos.size(); ++j) {
            std::memcpy(dst, block + pos[j] * slice, slice);
            dst += slice;
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

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
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(p.outputs.at(0).count(), limits);
    };
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

    // OpenCL: an out-of-range index writes 0 there instead of raising (see
    // gather.cl); the host impl is the one that reports it.
    add_ocl_impls(reg, "gather", gather_ocl_spec(), ocl_options({}, check_indices));
}

}   // namespace

DYNRT_MODULE("gather", register_gather)
