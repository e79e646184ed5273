// split: the input cut along `axis` into `outputs` consecutive parts (ONNX
// Split). The part sizes come from input 1 (a 1-D i32/i64 tensor read by
// value during shape inference) or the `split` attribute; with neither, the
// axis is cut into equal parts (it must divide), or with `uneven` into parts
// of ceil(dim / outputs) with a smaller last one (ONNX Split-18 num_outputs).
//
// The op has a variable number of outputs: `outputs` (OpDefinition::
// output_count). Kernels take each part's offset along the axis from the
// output layouts (the sizes of the parts before it), so they never read the
// sizes tensor. The optimised impl (cpu_opt_*) reads the input in its own
// order (per outer index, the parts' blocks one after another) in contiguous
// byte chunks over the engine's threads (dynrt/cpu_row_parts.hpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_row_parts.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "split_cl.hpp"

namespace {

using namespace dynrt;

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

Error split_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "split", field));
}

// Part sizes for an axis of static extent `dim` when none are given.
std::vector<int64_t> equal_parts(const std::string& node, int64_t dim, int64_t n, bool uneven) {
    if (!uneven) {
        if (dim % n != 0)
            throw split_error(
                node, "outputs",
                "axis extent " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
        return std::vector<int64_t>(static_cast<size_t>(n), dim / n);
    }
    const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
    std::vector<int64_t> sizes(static_cast<size_t>(n), chunk);
    sizes.back() = dim - chunk * (n - 1);
    if (sizes.back() < 0)
        throw split_error(node, "outputs",
                          "axis extent " + std::to_string(dim) + " in parts of " + std::to_string(chunk) +
                              " leaves nothing for the last of " + std::to_string(n) + " outputs");
    return sizes;
}

// Given sizes: one per output, none negative, summing to the extent when known.
void check_sizes(const std::string& node, const std::vector<int64_t>& sizes, int64_t n, const Dimension& dim,
                 const std::string& source) {
    const std::string what = source + " " + ints_to_string(sizes);
    if (static_cast<int64_t>(sizes.size()) != n)
        throw split_error(
            node, "split",
            what + " gives " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
        if (s < 0) throw split_error(node, "split", what + " has a negative size");
        sum = checked_add(sum, s, "split: sum of the sizes");
    }
    if (!dim.contains(sum))
        throw split_error(node, "split",
                          what + " sums to " + std::to_string(sum) + ", the axis extent is " + dim.to_string());
}

std::vector<Layout> infer_split(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const int64_t n = ctx.attrs.get_int("outputs");
    if (n < 1) throw split_error(ctx.node, "outputs", "outputs is " + std::to_string(n) + ", at least 1 is needed");
    // Checked before anything is sized from it: a node lists its outputs.
    constexpr int64_t kMaxOutputs = 4096;
    if (n > kMaxOutputs)
        throw split_error(ctx.node, "outputs",
                          "outputs is " + std::to_string(n) + ", more than " + std::to_string(kMaxOutputs));
    if (data.shape.rank() == 0)
        throw split_error(ctx.node, "axis", "input " + data.to_string() + " is a scalar; split needs rank >= 1");
    const size_t axis = axis_attr(ctx.attrs, data.shape.rank());
    const Dimension& dim = data.shape[axis];
    const std::vector<int64_t> attr = ctx.attrs.get_ints("split");
    std::optional<std::vector<int64_t>> sizes;
    if (ctx.inputs.size() > 1) {
        const Layout& s = ctx.inputs[1];
        if (!is_index_type(s.dtype) || s.shape.rank() != 1)
            throw split_error(ctx.node, "split",
                              "the sizes (input 1) must be a 1-D i32/i64 tensor, got " + s.to_string());
        if (!attr.empty())
            throw split_error(ctx.node, "split",
                              "sizes given both as input 1 and as the attribute " + ints_to_string(attr));
        if (const HostTensor* v = ctx.value(1)) {
            sizes = v->to_int64();
            check_sizes(ctx.node, *sizes, n, dim, "the sizes (input 1)");
        }
    } else if (!attr.empty()) {
        sizes = attr;
        check_sizes(ctx.node, *sizes, n, dim, "split");
    } else if (dim.is_static()) {
        sizes = equal_parts(ctx.node, dim.get_length(), n, ctx.attrs.get_bool("uneven"));
    }
    std::vector<Layout> out;
    for (int64_t k = 0; k < n; ++k) {
        PartialShape s = data.shape;
        s[axis] = sizes ? Dimension((*sizes)[static_cast<size_t>(k)]) : Dimension(0, dim.max());
        out.emplace_back(s, data.dtype);
    }
    return out;
}

void split_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), in.rank());
    const size_t outer = dims_product(in, 0, axis);
    const size_t width = byte_size(call.in_type(0));
    const size_t row = checked_mul(dims_product(in, axis + 1, in.rank()), width, "split: bytes of a row");
    const size_t in_block = static_cast<size_t>(in[axis]) * row;   // bytes of one outer index
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    size_t offset = 0;   // bytes into an input block where part k starts
    for (size_t k = 0; k < call.num_outputs(); ++k) {
        const size_t part = static_cast<size_t>(call.out_shape(k)[axis]) * row;
        if (part != 0 && outer != 0) {
            auto* dst = static_cast<unsigned char*>(call.out_raw(k));
            for (size_t o = 0; o < outer; ++o) std::memcpy(dst + o * part, src + o * in_block + offset, part);
        }
        offset += part;
    }
}

void split_fast(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), in.rank());
    const size_t outer = dims_product(in, 0, axis);
    const size_t inner =
        checked_mul(dims_product(in, axis + 1, in.rank()), byte_size(call.in_type(0)), "split: bytes of a row");
    std::vector<RowPartCopy> parts(call.num_outputs());
    size_t row = 0;   // bytes of an input row; in the loop, where part k starts in it
    for (size_t k = 0; k < parts.size(); ++k) {
        parts[k].bytes =
            checked_mul(static_cast<size_t>(call.out_shape(k)[axis]), inner, "split: bytes of a part's row");
        parts[k].dst_stride = parts[k].bytes;
        parts[k].src_stride = row;   // the offset until the row is known
        // Mapped here, not on the worker threads; an empty output is never written.
        if (parts[k].bytes != 0 && outer != 0) parts[k].dst = static_cast<unsigned char*>(call.out_raw(k));
        row = checked_add(row, parts[k].bytes, "split: bytes of an input row");
    }
    const size_t total = checked_mul(outer, row, "split: bytes of the input");
    if (total == 0) return;
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    for (RowPartCopy& p : parts) {
        p.src = src + p.src_stride;
        p.src_stride = row;
    }
    const CpuThreads threads(call.params().engine, checked_mul(total, size_t{2}, "split: bytes moved"));
    copy_row_parts(threads, outer, parts);
}

// ---- OpenCL ---------------------------------------------------------------

// One stage per output: stage k copies part k, whose offset and extent along
// the axis are scalars taken from the output layouts.
OclMultiKernelSpec split_ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = split_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        JitDefines d = jit_axis_lines("INPUT0", rank, axis_attr(*p.attrs, rank));
        d.emplace_back("ELEM_T", ocl_bits_type(p.inputs.at(0).dtype));
        return d;
    };
    spec.stages = [](const KernelParams& p, bool) {
        std::vector<OclStage> stages;
        for (size_t k = 0; k < p.outputs.size(); ++k)
            stages.push_back({"split_part", {OclArgRef::input(0), OclArgRef::output(k), OclArgRef::scalars()}});
        return stages;
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& limits, std::vector<OclStageRun>& runs) {
        const Shape in = p.inputs.at(0).get_shape();
        const size_t axis = axis_attr(*p.attrs, in.rank());
        const size_t lines = dims_product(in, 0, axis) * dims_product(in, axis + 1, in.rank());
        int64_t offset = 0;
        for (size_t k = 0; k < runs.size(); ++k) {
            const int64_t len = p.outputs.at(k).get_shape()[axis];
            runs[k].dispatch = dispatch_1d(lines * static_cast<size_t>(len), limits);
            runs[k].scalars = {OclArg::i64(offset), OclArg::i64(len)};
            offset += len;
        }
    };
    return spec;
}

std::string ocl_check(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > 8) return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above 8";
    return {};
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_split(ImportContext& c) {
    if (!c.only_attrs({"axis", "split", "num_outputs"})) return false;
    const auto n = static_cast<int64_t>(c.node().outputs);
    c.set("axis", c.i("axis", 0));
    c.set("outputs", n);
    if (c.has("split")) {
        if (c.opset() >= 13) return c.unsupported("Split `split` attribute at opset " + std::to_string(c.opset()));
        c.set("split", c.ints("split"));
    }
    if (c.has("num_outputs")) {
        if (c.present(1)) return c.unsupported("Split with both num_outputs and the split input");
        if (c.i("num_outputs", n) != n)
            return c.unsupported("Split num_outputs " + std::to_string(c.i("num_outputs", n)) + " with " +
                                 std::to_string(n) + " node outputs");
        c.set("uneven", true);
    }
    c.use_inputs({0, 1});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Split", 1, 2, onnx_split,
                      "`axis`; sizes as attribute (opset < 13) or input 1, else equal parts by the node's outputs; "
                      "`num_outputs` (opset 18, smaller last part)",
                      kAnyInputs /* any number of outputs */)};
}

void register_split(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "split", "Cuts the input along axis into consecutive parts, one per output (ONNX Split)", 1, 2,
        {attr_int("axis", 0, "axis to cut; negative counts from the end"),
         attr_int("outputs", 1, "number of outputs (parts)"),
         attr_ints("split", std::vector<int64_t>{}, "part sizes (used when input 1 is absent); empty: equal parts"),
         attr_bool("uneven", false,
                   "without sizes: parts of ceil(extent / outputs), the last smaller (else the parts must be equal)")},
        infer_split);
    def.value_inputs = {1};
    def.output_count = [](const Attributes& a) {
        return static_cast<size_t>(std::max<int64_t>(a.get_int("outputs"), 1));
    };
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "split", split_kernel);
    add_host_impls(reg, "split", split_fast, optimised_host_options({}));
    add_ocl_multi_impls(reg, "split", split_ocl_spec(), ocl_options({}, ocl_check));
}

}   // namespace

DYNRT_MODULE("split", register_split)
