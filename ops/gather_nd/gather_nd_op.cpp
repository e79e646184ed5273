// gather_nd: slices of `data` addressed by index tuples (ONNX GatherND). With
// data [B..., D...] (b = batch_dims leading dims shared with indices) and
// indices [B..., X..., k], each k-tuple indexes the first k dims of D within
// its batch, and the slice data[B, tuple, :] is copied:
//   out[B..., X..., rest...] = data[B..., indices[B..., X..., :], rest...]
// Output shape: indices.shape[:-1] + data.shape[b+k:]. Negative indices count
// from the end of their dim. Elements are copied bit for bit.
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
#include "gather_nd_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "gather_nd";

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

std::vector<Layout> infer_gather_nd(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    const std::string shapes = "data " + data.to_string() + " and indices " + indices.to_string();
    const auto fail = [&](const std::string& field, const std::string& why) {
        return Error(shapes + ": " + why, node_context(ctx.node, kOp, field));
    };
    if (!is_index_type(indices.dtype)) throw fail("indices", "indices must be i32 or i64");
    const size_t r = data.shape.rank(), q = indices.shape.rank();
    const int64_t b = ctx.attrs.get_int("batch_dims");
    if (r == 0 || q == 0) throw fail("indices", "data and indices need rank >= 1");
    if (b < 0 || static_cast<size_t>(b) >= std::min(r, q))
        throw fail("batch_dims", "batch_dims " + std::to_string(b) + " must be in [0, min(ranks))");
    const auto nb = static_cast<size_t>(b);
    // The tuple length sets the output rank: from the indices' last dim, or
    // from `tuple_length` while that dim is dynamic.
    const Dimension& last = indices.shape[q - 1];
    const int64_t fixed = ctx.attrs.get_int("tuple_length");
    if (fixed < 0) throw fail("tuple_length", "tuple_length " + std::to_string(fixed) + " is negative");
    if (fixed > 0 && !last.contains(fixed))
        throw fail("tuple_length", "the last dim of indices is not tuple_length " + std::to_string(fixed));
    if (fixed == 0 && !last.is_static())
        throw fail("tuple_length", "the last dim of indices (the tuple length) is dynamic and tuple_length is not set");
    const int64_t k = fixed > 0 ? fixed : last.get_length();
    if (k < 1 || static_cast<size_t>(k) > r - nb)
        throw fail("indices", "the tuple length " + std::to_string(k) + " must be in [1, data rank - batch_dims]");
    for (size_t d = 0; d < nb; ++d)
        if (!data.shape[d].compatible(indices.shape[d]))
            throw fail("batch_dims", "batch dim " + std::to_string(d) + " differs");
    std::vector<Dimension> out(indices.shape.begin(), indices.shape.end() - 1);
    for (size_t d = 0; d < nb; ++d)   // a batch dim known on either side is known
        if (!out[d].is_static()) out[d] = data.shape[d];
    for (size_t d = nb + static_cast<size_t>(k); d < r; ++d) out.push_back(data.shape[d]);
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.min());
    size_t count = 0;
    if (!count_fits(known, &count)) throw fail("indices", "the output has more than 2^60 elements");
    return {Layout(PartialShape(std::move(out)), data.dtype)};
}

// ---- reference ------------------------------------------------------------

struct Geometry {
    size_t batches, tuples, k, prefix, inner;   // tuples per batch; prefix = prod(data[b:b+k])
};

Geometry geometry_of(const Shape& data, const Shape& indices, size_t b) {
    const size_t q = indices.rank(), k = static_cast<size_t>(indices[q - 1]);
    return {dims_product(data, 0, b), dims_product(indices, b, q - 1), k, dims_product(data, b, b + k),
            dims_product(data, b + k, data.rank())};
}

// The error of an index out of range, the same from the host and the OpenCL
// impls.
Error index_error(const std::string& node, const Shape& data, int64_t value, size_t at, size_t dim) {
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     " of indices) is out of range for dim " + std::to_string(dim) + " of data " + data.to_string(),
                 node_context(node, kOp, "indices"));
}

void gather_nd_kernel(HostCall& call) {
    const Shape& data = call.in_shape(0);
    const auto b = static_cast<size_t>(call.attrs().get_int("batch_dims"));
    const Geometry g = geometry_of(data, call.in_shape(1), b);
    const std::vector<int64_t> idx = call.get_ints(1);
    // Every tuple resolved (and checked) before anything is written.
    std::vector<size_t> offset(g.batches * g.tuples);
    for (size_t t = 0; t < offset.size(); ++t) {
        size_t at = 0;
        for (size_t i = 0; i < g.k; ++i) {
            const int64_t len = data[b + i], raw = idx[t * g.k + i];
            const int64_t v = raw < 0 ? raw + len : raw;
            if (v < 0 || v >= len) throw index_error(call.node(), data, raw, t * g.k + i, b + i);
            at = at * static_cast<size_t>(len) + static_cast<size_t>(v);
        }
        offset[t] = (t / std::max<size_t>(g.tuples, 1) * g.prefix + at) * g.inner;
    }
    const size_t slice = g.inner * byte_size(call.in_type(0));
    if (offset.empty() || slice == 0) return;
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t t = 0; t < offset.size(); ++t)
        std::memcpy(dst + t * slice, src + offset[t] * byte_size(call.in_type(0)), slice);
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// The report of gather_nd_ref (gather_nd.cl): a bad index's position in
// indices + 1 (0: none) and its low and high 32 bits.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    const Shape indices = p.inputs.at(1).get_shape();
    const auto b = static_cast<size_t>(p.attrs->get_int("batch_dims"));
    const size_t at = uint32_t(report[0]) - 1, k = static_cast<size_t>(indices[indices.rank() - 1]);
    throw index_error(p.node, p.inputs.at(0).get_shape(), given, at, b + at % k);
}

OclKernelSpec gather_nd_ocl_spec() {
    OclKernelSpec spec;
    spec.source = gather_nd_cl;
    spec.kernel_name = "gather_nd_ref";
    // Ranks are fixed per node, and with them the tuple length k.
    spec.defines = [](const KernelParams& p, bool) {
        const size_t r = p.inputs.at(0).shape.rank(), q = p.inputs.at(1).shape.rank();
        const auto b = static_cast<size_t>(p.attrs->get_int("batch_dims"));
        const size_t k = q - 1 + r - b - p.outputs.at(0).shape.rank();
        return JitDefines{
            {"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)},     {"TUPLE_LEN", std::to_string(k)},
            {"FIRST_DIM", std::to_string(kOclMaxRank - r + b)},  {"TUPLES", jit_dims_product("INPUT1", q, b, q - 1)},
            {"PREFIX", jit_dims_product("INPUT0", r, b, b + k)}, {"INNER", jit_dims_product("INPUT0", r, b + k, r)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

std::string check_inputs(const KernelParams& p) {
    if (!is_index_type(p.inputs.at(1).dtype))
        return std::string("indices type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
    return {};
}

// The report holds a position + 1 in an int: indices of 2^31 - 1 elements or
// more are left to the host impls.
std::string check_ocl(const KernelParams& p) {
    const PartialShape& indices = p.inputs.at(1).shape;
    if (indices.is_static() && indices.to_shape().count() >= uint64_t(INT32_MAX)) return "2^31 - 1 indices or more";
    for (const Layout& l : {p.inputs.at(0), p.inputs.at(1), p.outputs.at(0)})
        if (l.shape.rank() > kOclMaxRank)
            return "rank " + std::to_string(l.shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return check_inputs(p);
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_gather_nd(ImportContext& c) {
    if (!c.only_attrs({"batch_dims"})) return false;
    c.set("batch_dims", c.i("batch_dims", 0));
    // The model's type of indices fixes the tuple length (and with it the
    // output rank) even where the network later takes any shape.
    const Dimension& last = c.layout(1).shape.rank() > 0 ? c.layout(1).shape[c.rank(1) - 1] : Dimension(0);
    if (!last.is_static()) return c.unsupported("GatherND whose indices have no static last dim (the tuple length)");
    c.set("tuple_length", last.get_length());
    c.use_inputs({0, 1});
    return true;
}

void register_gather_nd(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Slices of data addressed by index tuples (ONNX GatherND)", 2, 2,
        {attr_int("batch_dims", 0, "leading dims shared by data and indices, gathered per batch"),
         attr_int("tuple_length", 0,
                  "length of an index tuple (the last dim of indices) where that dim is dynamic; 0: from the shape")},
        infer_gather_nd);
    def.imports = {onnx_rule("GatherND", 2, 2, onnx_gather_nd,
                             "`batch_dims` (0 before opset 12); `tuple_length` from the type of indices")};
    reg.add_op(def);
    add_host_impls(reg, kOp, gather_nd_kernel, host_options({}, check_inputs));
    // OpenCL: an out-of-range index is reported by the kernel and raised by check_report.
    add_ocl_impls(reg, kOp, gather_nd_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("gather_nd", register_gather_nd)
