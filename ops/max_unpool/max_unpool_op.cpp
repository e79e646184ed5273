// max_unpool: the partial inverse of max pooling (ONNX MaxUnpool). The
// unpooled tensor, [N, C, spatial...] with per spatial axis (in - 1) * stride
// + kernel - pad_begin - pad_end, is zero except where `indices` (a flat index
// into the unpooled tensor for each input element, as max pooling's indices
// output gives) puts an element of the input: u.flat[indices[j]] = x[j], in
// row-major order of j, so of two elements sent to one place the later one
// stays. With output_shape (input 2) the pads are ignored (the given shape
// settles the ambiguity they resolve), the output has that shape, no dim
// below the unpooled one, and holds the unpooled tensor at its start, zeros
// elsewhere (as the ONNX reference does). Elements move bit for bit, so every
// data type is served.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"
#include "max_unpool_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "max_unpool";

struct Window {
    std::vector<int64_t> kernel, strides, pads_begin, pads_end;
};

Window read_window(const Attributes& a, size_t spatial, const std::string& node) {
    return {per_axis_attr(a, "kernel", spatial, 0, 1, kOp, node), per_axis_attr(a, "strides", spatial, 1, 1, kOp, node),
            per_axis_attr(a, "pads_begin", spatial, 0, 0, kOp, node),
            per_axis_attr(a, "pads_end", spatial, 0, 0, kOp, node)};
}

// The unpooled extent of spatial axis i for input extent `in` (0 for an empty
// axis); `padded` false when output_shape is given, which sets the pads aside.
int64_t unpooled_extent(const Window& w, size_t i, int64_t in, bool padded, const std::string& node) {
    const int64_t stretched = checked_mul(std::max<int64_t>(in - 1, 0), w.strides[i], "max_unpool output extent");
    const int64_t pads = padded ? w.pads_begin[i] + w.pads_end[i] : 0;
    const int64_t out = in == 0 ? 0 : stretched + w.kernel[i] - pads;
    if (out < 0)
        throw Error("spatial axis " + std::to_string(i) + ": input extent " + std::to_string(in) +
                        " with kernel, strides and pads gives a negative output extent " + std::to_string(out),
                    node_context(node, kOp, "pads_begin"));
    return out;
}

// The unpooled dims: N, C, then each spatial extent (dynamic for a dynamic input extent).
std::vector<Dimension> unpooled_dims(const Window& w, const PartialShape& x, bool padded, const std::string& node) {
    std::vector<Dimension> out = {x[0], x[1]};
    for (size_t i = 0; i + 2 < x.rank(); ++i) {
        const Dimension& in = x[i + 2];
        out.push_back(in.is_static() ? Dimension(unpooled_extent(w, i, in.get_length(), padded, node)) : Dimension());
    }
    return out;
}

// The output dims output_shape gives: none below the unpooled dims.
std::vector<Dimension> given_dims(const std::vector<Dimension>& unpooled, const std::vector<int64_t>& dims,
                                  const std::string& node) {
    const auto fail = [&](const std::string& why) {
        return Error("output_shape " + ints_to_string(dims) + " " + why, node_context(node, kOp, "output_shape"));
    };
    size_t count = 0;
    if (!count_fits(dims, &count)) throw fail("has a negative dim or more than 2^60 elements");
    for (size_t d = 0; d < dims.size(); ++d)
        if (unpooled[d].is_static() && dims[d] < unpooled[d].get_length())
            throw fail("is below the unpooled shape " + PartialShape(unpooled).to_string() + " in dim " +
                       std::to_string(d));
    return std::vector<Dimension>(dims.begin(), dims.end());
}

std::vector<Layout> infer_max_unpool(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const Layout& ind = ctx.inputs.at(1);
    const auto fail = [&](const std::string& field, const std::string& why) {
        return Error(why, node_context(ctx.node, kOp, field));
    };
    const size_t rank = x.shape.rank();
    if (rank < 3) throw fail("input", "input " + x.to_string() + " must be [N, C, spatial...] (rank >= 3)");
    const Window w = read_window(ctx.attrs, rank - 2, ctx.node);
    if (!is_index_type(ind.dtype) || ind.shape.rank() != rank)
        throw fail("indices",
                   "indices " + ind.to_string() + " must be i32 or i64 of the shape of input " + x.to_string());
    for (size_t d = 0; d < rank; ++d)
        if (!ind.shape[d].compatible(x.shape[d]))
            throw fail("indices", "indices " + ind.to_string() + " must have the shape of input " + x.to_string());
    const bool given = ctx.inputs.size() > 2;
    const std::vector<Dimension> unpooled = unpooled_dims(w, x.shape, !given, ctx.node);
    if (!given) return {Layout(PartialShape(unpooled), x.dtype)};
    const Layout& os = ctx.inputs[2];
    if (!is_index_type(os.dtype) || os.shape.rank() != 1 || !os.shape[0].contains(static_cast<int64_t>(rank)))
        throw fail("output_shape", "output_shape " + os.to_string() + " must be a 1-D i32 or i64 tensor of " +
                                       std::to_string(rank) + " values (the rank of input " + x.to_string() + ")");
    const HostTensor* value = ctx.value(2);
    if (value == nullptr) return {Layout(PartialShape::dynamic_of_rank(rank), x.dtype)};
    return {Layout(PartialShape(given_dims(unpooled, value->to_int64(), ctx.node)), x.dtype)};
}

// The unpooled shape of a run.
Shape unpooled_shape(const Attributes& a, const Shape& x, bool given, const std::string& node) {
    const Window w = read_window(a, x.rank() - 2, node);
    std::vector<int64_t> dims;
    for (const Dimension& d : unpooled_dims(w, PartialShape(std::vector<Dimension>(x.begin(), x.end())), !given, node))
        dims.push_back(d.get_length());
    return Shape(std::move(dims));
}

// ---- reference ------------------------------------------------------------

// The error of an index outside the unpooled tensor, the same on every device.
Error index_error(const std::string& node, int64_t value, size_t at, const Shape& unpooled) {
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     " of indices) is outside the unpooled shape " + unpooled.to_string() + " of " +
                     std::to_string(unpooled.count()) + " elements",
                 node_context(node, kOp, "indices"));
}

// The output position of unpooled element `u`: the same coordinates in `out`.
size_t place(size_t u, const Shape& unpooled, const Shape& out) {
    size_t at = 0, pitch = 1;
    for (size_t d = unpooled.rank(); d-- > 0;) {
        const auto n = static_cast<size_t>(unpooled[d]);
        at += u % n * pitch;
        u /= n;
        pitch *= static_cast<size_t>(out[d]);
    }
    return at;
}

void max_unpool_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const Shape unpooled = unpooled_shape(call.attrs(), call.in_shape(0), call.num_inputs() > 2, call.node());
    const size_t width = byte_size(call.out_type(0)), places = unpooled.count();
    const std::vector<int64_t> idx = call.get_ints(1);
    // Every index checked before anything is written.
    for (size_t j = 0; j < idx.size(); ++j)
        if (idx[j] < 0 || static_cast<uint64_t>(idx[j]) >= places) throw index_error(call.node(), idx[j], j, unpooled);
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    if (out.count() > 0) std::memset(dst, 0, out.count() * width);
    if (idx.empty()) return;
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    for (size_t j = 0; j < idx.size(); ++j)
        std::memcpy(dst + place(static_cast<size_t>(idx[j]), unpooled, out) * width, src + j * width, width);
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// One claim per output element: the 1-based position of the input element
// that writes it (atomic_max on uint, so at most 2^32 - 2 input elements).
std::vector<size_t> claims_bytes(const KernelParams& p) {
    return {checked_mul(std::max<size_t>(p.outputs.at(0).count(), 1), sizeof(uint32_t), "max_unpool scratch bytes")};
}

// UNPOOLED_DIMS: the unpooled dims over 8 right-aligned positions, as
// expressions of the input's JIT dims (N, C and leading ones as they are).
JitDefines unpool_defines(const KernelParams& p, bool) {
    const size_t rank = p.inputs.at(0).shape.rank();
    const bool given = p.inputs.size() > 2;
    const Window w = read_window(*p.attrs, rank - 2, p.node);
    std::string dims = "{";
    for (size_t j = 0; j < kOclMaxRank; ++j) {
        const std::string in = "(ulong)(INPUT0_DIM" + std::to_string(j) + ")";
        const size_t lead = kOclMaxRank - rank;
        std::string d = in;
        if (j >= lead + 2) {
            const size_t i = j - lead - 2;
            const int64_t shift = w.kernel[i] - (given ? 0 : w.pads_begin[i] + w.pads_end[i]);
            d = "(" + in + " == 0 ? 0 : (" + in + " - 1) * " + std::to_string(w.strides[i]) + " + (" +
                std::to_string(shift) + "))";
        }
        dims += (j ? ", " : "") + d;
    }
    return JitDefines{{"BITS_T", ocl_bits_type(p.inputs.at(0).dtype)}, {"UNPOOLED_DIMS", dims + "}"}};
}

// The report of max_unpool_claim (max_unpool.cl): a bad index's position + 1
// as a uint (0: none) and its low and high 32 bits; raised as the host impls'
// error.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    const Shape unpooled = unpooled_shape(*p.attrs, p.inputs.at(0).get_shape(), p.inputs.size() > 2, p.node);
    throw index_error(p.node, given, uint32_t(report[0]) - 1, unpooled);
}

OclMultiKernelSpec max_unpool_ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = max_unpool_cl;
    spec.defines = unpool_defines;
    spec.stages = [](const KernelParams&, bool) {
        const OclArgRef claims = OclArgRef::scratch(0);
        return std::vector<OclStage>{
            {"max_unpool_fill", {OclArgRef::output(0), claims}},
            {"max_unpool_claim", {OclArgRef::input(1), claims, OclArgRef::report()}},
            {"max_unpool_write", {OclArgRef::input(0), OclArgRef::input(1), OclArgRef::output(0), claims}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const size_t in = p.inputs.at(0).count();
        runs[0].dispatch = dispatch_1d(p.outputs.at(0).count(), l);
        runs[1].dispatch = dispatch_1d(in, l);
        runs[2].dispatch = dispatch_1d(in, l);
    };
    spec.scratch_bytes = claims_bytes;
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

constexpr size_t kOclMaxInputs = UINT32_MAX - 1;   // claims are 1-based uints

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.at(0).is_static() && p.inputs.at(0).count() > kOclMaxInputs)
        return "more than 2^32 - 2 input elements";
    return check_index_input(p, 1, "indices", kOclMaxRank);   // the output has the input's rank
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_max_unpool(ImportContext& c) {
    if (!c.only_attrs({"kernel_shape", "pads", "strides"})) return false;
    const size_t spatial = c.rank(0) < 2 ? 0 : c.rank(0) - 2;
    c.set("kernel", c.ints("kernel_shape"));
    if (c.has("strides")) c.set("strides", c.ints("strides"));
    const std::vector<int64_t> pads = c.ints("pads");
    if (!pads.empty()) {
        if (pads.size() != 2 * spatial) return c.unsupported("pads " + ints_to_string(pads) + " not of length 2R");
        const auto mid = pads.begin() + static_cast<std::ptrdiff_t>(spatial);
        c.set("pads_begin", std::vector<int64_t>(pads.begin(), mid));
        c.set("pads_end", std::vector<int64_t>(mid, pads.end()));
    }
    c.use_inputs({0, 1, 2});
    return true;
}

void register_max_unpool(ModuleRegistrar& reg) {
    const std::vector<int64_t> none;
    OpDefinition def = op_def(kOp, "Zeros with input elements scattered to flat indices (ONNX MaxUnpool)", 2, 3,
                              {attr_ints("kernel", std::nullopt, "window taps per spatial axis"),
                               attr_ints("strides", none, "window step per spatial axis (empty: 1)"),
                               attr_ints("pads_begin", none, "padding before each spatial axis (empty: 0)"),
                               attr_ints("pads_end", none, "padding after each spatial axis (empty: 0)")},
                              infer_max_unpool);
    def.value_inputs = {2};
    def.imports = {onnx_rule("MaxUnpool", 2, 3, onnx_max_unpool,
                             "`kernel_shape` -> `kernel`, `strides`, `pads` [b..., e...] -> `pads_begin`/`pads_end`; "
                             "output_shape as input 2 (read by value)")};
    reg.add_op(def);
    add_host_impls(reg, kOp, max_unpool_kernel,
                   host_options({}, [](const KernelParams& p) { return check_index_input(p, 1, "indices"); }));
    // OpenCL: an index out of range is reported by max_unpool_claim and raised
    // by check_report.
    add_ocl_multi_impls(reg, kOp, max_unpool_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("max_unpool", register_max_unpool)
