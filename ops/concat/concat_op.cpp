// concat: joins its inputs along `axis`. All inputs share dtype and rank; every
// other dim must agree (a dynamic dim merges with a static one into the static
// value). The output's axis dim is the sum of the inputs' (dynamic if any is).
//
// The kernel copies each input's contiguous block per outer index as bytes, so
// every data type is served by the same loop. The optimised impl (cpu_opt_*)
// walks the output in its own order (per outer index, the inputs' blocks one
// after another) in contiguous byte chunks over the engine's threads
// (dynrt/cpu_row_parts.hpp), so a concat along axis 0 (one block per input)
// is spread as well as one with many outer indices.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "concat_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_row_parts.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

// Intersection of two dims' ranges; throws when they cannot be the same value.
Dimension merge_dims(const Dimension& a, const Dimension& b, size_t input, size_t dim, const PartialShape& shape) {
    if (!a.compatible(b))
        throw Error("input " + std::to_string(input) + " has shape " + shape.to_string() + ", expected dim " +
                    std::to_string(dim) + " to be " + a.to_string() + " like the inputs before it" +
                    " (only the axis dim may differ)");
    const int64_t lo = std::max(a.min(), b.min());
    int64_t hi = Dimension::kUnbounded;
    if (a.max() == Dimension::kUnbounded) hi = b.max();
    else if (b.max() == Dimension::kUnbounded) hi = a.max();
    else hi = std::min(a.max(), b.max());
    return hi == lo ? Dimension(lo) : Dimension(lo, hi);
}

std::vector<Layout> infer_concat(const ShapeInferContext& ctx) {
    const Layout& first = ctx.inputs.at(0);
    const size_t rank = first.shape.rank();
    if (rank == 0) throw Error("input 0 is a scalar " + first.shape.to_string() + "; concat needs rank >= 1");
    const size_t axis = axis_attr(ctx.attrs, rank);

    std::vector<Dimension> out(first.shape.dims());
    int64_t axis_min = first.shape[axis].min();
    int64_t axis_max = first.shape[axis].max();
    for (size_t i = 1; i < ctx.inputs.size(); ++i) {
        const Layout& in = ctx.inputs[i];
        if (in.dtype != first.dtype)
            throw Error("input " + std::to_string(i) + " has type " + to_string(in.dtype) + ", input 0 has " +
                        to_string(first.dtype));
        if (in.shape.rank() != rank)
            throw Error("input " + std::to_string(i) + " has shape " + in.shape.to_string() + " of rank " +
                        std::to_string(in.shape.rank()) + ", input 0 " + first.shape.to_string() + " has rank " +
                        std::to_string(rank));
        for (size_t d = 0; d < rank; ++d) {
            if (d == axis) continue;
            out[d] = merge_dims(out[d], in.shape[d], i, d, in.shape);
        }
        // The axis dim is a sum of dims: checked, so hostile inputs give an
        // error naming the input instead of a wrapped extent.
        const Dimension& ad = in.shape[axis];
        const std::string what = "the axis " + std::to_string(axis) + " dim of inputs 0.." + std::to_string(i) +
                                 " (input " + std::to_string(i) + " has shape " + in.shape.to_string() + ")";
        axis_min = checked_add(axis_min, ad.min(), what.c_str());
        axis_max = (axis_max == Dimension::kUnbounded || ad.max() == Dimension::kUnbounded)
                       ? Dimension::kUnbounded
                       : checked_add(axis_max, ad.max(), what.c_str());
    }
    out[axis] = axis_min == axis_max ? Dimension(axis_min) : Dimension(axis_min, axis_max);
    return {Layout(PartialShape(std::move(out)), first.dtype)};
}

void concat_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t axis = axis_attr(call.attrs(), out.rank());
    const size_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.rank());
    const size_t esize = byte_size(call.out_type(0));
    const size_t out_row = static_cast<size_t>(out[axis]) * inner * esize;

    auto* dst = static_cast<uint8_t*>(call.out_raw(0));
    size_t offset = 0;   // bytes into each output row where the current input starts
    for (size_t i = 0; i < call.num_inputs(); ++i) {
        const size_t row = static_cast<size_t>(call.in_shape(i)[axis]) * inner * esize;
        if (row == 0) continue;
        const auto* src = static_cast<const uint8_t*>(call.in_raw(i));
        for (size_t o = 0; o < outer; ++o) std::memcpy(dst + o * out_row + offset, src + o * row, row);
        offset += row;
    }
}

void concat_fast(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t axis = axis_attr(call.attrs(), out.rank());
    const size_t outer = dims_product(out, 0, axis);
    const size_t inner = checked_mul(dims_product(out, axis + 1, out.rank()), byte_size(call.out_type(0)),
                                     "concat: bytes of an output row");
    std::vector<RowPartCopy> parts(call.num_inputs());
    size_t row = 0;   // bytes of an output row; in the loop, where input i starts in it
    for (size_t i = 0; i < parts.size(); ++i) {
        parts[i].bytes = checked_mul(static_cast<size_t>(call.in_shape(i)[axis]), inner, "concat: bytes of a row");
        parts[i].src_stride = parts[i].bytes;
        parts[i].dst_stride = row;   // the offset until the row is known
        // Mapped here, not on the worker threads; an empty input is never read.
        if (parts[i].bytes != 0 && outer != 0) parts[i].src = static_cast<const unsigned char*>(call.in_raw(i));
        row = checked_add(row, parts[i].bytes, "concat: bytes of an output row");
    }
    const size_t total = checked_mul(outer, row, "concat: bytes of the output");
    if (total == 0) return;
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (RowPartCopy& p : parts) {
        p.dst = dst + p.dst_stride;
        p.dst_stride = row;
    }
    const CpuThreads threads(call.params().engine, checked_mul(total, size_t{2}, "concat: bytes moved"));
    copy_row_parts(threads, outer, parts);
}

// ---- OpenCL ---------------------------------------------------------------

// OpenCL kernels take at most a few hundred bytes of arguments on some
// devices; more inputs than this run on the host impl.
constexpr size_t kMaxOclInputs = 64;

OclKernelSpec concat_ocl_spec() {
    OclKernelSpec spec;
    spec.source = concat_cl;
    spec.kernel_name = "concat_ref";
    // One kernel for every input: the argument list and the per-input steps
    // are generated here (the input count and axis are fixed per node).
    spec.defines = [](const KernelParams& p, bool) {
        const Layout& out = p.outputs.at(0);
        const size_t rank = out.shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        std::string args, picks;
        std::string copies;
        JitDefines d{{"ELEM_T", ocl_bits_type(out.dtype)},
                     {"OUT_AXIS_LEN", jit_dims_product("OUTPUT0", rank, axis, axis + 1)},
                     {"INNER", jit_dims_product("OUTPUT0", rank, axis + 1, rank)},
                     {"OUTER", jit_dims_product("OUTPUT0", rank, 0, axis)}};
        for (size_t k = 0; k < p.inputs.size(); ++k) {
            const std::string ks = std::to_string(k);
            args += "__global const ELEM_T* input" + ks + ", ";
            picks += "CONCAT_PICK(" + ks + ") ";
            copies += "CONCAT_COPY(" + ks + ") ";
            d.emplace_back("IN_AXIS_LEN_" + ks, jit_dims_product("INPUT" + ks, rank, axis, axis + 1));
        }
        d.emplace_back("CONCAT_INPUT_ARGS", args);
        d.emplace_back("CONCAT_PICKS", picks);
        d.emplace_back("CONCAT_COPIES", copies);
        return d;
    };
    // The kernel's test on the runtime layouts: nothing before the axis (each
    // input one contiguous block) -> grid-stride over 4-element vectors of the
    // largest input, at least one work-item per tail element; else one
    // work-item per output element.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        const Layout& out = p.outputs.at(0);
        const size_t rank = out.shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        size_t outer = 1;
        for (size_t i = 0; i < axis; ++i) outer *= static_cast<size_t>(out.shape[i].get_length());
        const size_t n = out.count();
        if (n == 0 || outer != 1) return dispatch_1d(n, limits);
        size_t items = 0;
        for (const Layout& l : p.inputs) {
            const size_t len = l.count();
            items = std::max(items, std::max(len / 4, len % 4));
        }
        return dispatch_grid_stride(items, limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_concat(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    if (!c.has("axis")) return c.unsupported("Concat without axis");
    c.set("axis", c.i("axis", 0));
    c.use_all_inputs();
    return true;
}

std::vector<ImportRule> onnx_rules() { return {onnx_rule("Concat", 1, kAnyInputs, onnx_concat, "`axis`")}; }

void register_concat(ModuleRegistrar& reg) {
    OpDefinition def = op_def("concat", "Joins the inputs along axis", 1, SIZE_MAX,
                              {attr_int("axis", 0, "axis to join along; negative counts from the end")}, infer_concat);
    // In-place target: the inputs lie one after another along `axis` in the output.
    def.inplace_axis = [](const Attributes& attrs, size_t rank) {
        return normalize_axis(attrs.get_int("axis"), static_cast<int64_t>(rank));
    };
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "concat", concat_kernel);
    add_host_impls(reg, "concat", concat_fast, optimised_host_options({}));

    const auto ocl_supported = [](const KernelParams& p) -> std::string {
        if (p.inputs.size() > kMaxOclInputs)
            return std::to_string(p.inputs.size()) + " inputs (the OpenCL kernel takes up to " +
                   std::to_string(kMaxOclInputs) + ")";
        return {};
    };
    add_ocl_impls(reg, "concat", concat_ocl_spec(), ocl_options({}, ocl_supported));
}

}   // namespace

DYNRT_MODULE("concat", register_concat)
