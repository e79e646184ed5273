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
#include <type_traits>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "scatter_nd_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "scatter_nd";
const std::vector<std::string> kReductions = {"none", "add", "mul", "max", "min"};
enum Reduction : size_t { kNone, kAdd, kMul, kMax, kMin };

Reduction reduction_of(const Attributes& a) {
    return static_cast<Reduction>(mode_index(kOp, kReductions, a.get_string("reduction")));
}

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

// The tuple length, from the ranks: rank(updates) = rank(indices) - 1 + rank(data) - k.
int64_t tuple_length(size_t r, size_t q, size_t u) {
    return static_cast<int64_t>(q) - 1 + static_cast<int64_t>(r) - static_cast<int64_t>(u);
}

std::vector<Layout> infer_scatter_nd(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& indices = ctx.inputs.at(1);
    const Layout& updates = ctx.inputs.at(2);
    const std::string shapes =
        "data " + data.to_string() + ", indices " + indices.to_string() + " and updates " + updates.to_string();
    const auto fail = [&](const std::string& field, const std::string& why) {
        return Error(shapes + ": " + why, node_context(ctx.node, kOp, field));
    };
    if (!is_index_type(indices.dtype)) throw fail("indices", "indices must be i32 or i64");
    if (updates.dtype != data.dtype) throw fail("updates", "updates must have the type of data");
    if (data.dtype == DataType::boolean && reduction_of(ctx.attrs) != kNone)
        throw fail("reduction", "reduction '" + ctx.attrs.get_string("reduction") + "' is not defined on boolean data");
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

// Add and mul run unsigned for integers, so they wrap (two's complement).
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
    using type = T;
};
template <typename T>
struct Wrapping<T, true> {
    using type = std::make_unsigned_t<T>;
};

template <typename T>
T combine(Reduction r, T a, T b) {
    using U = typename Wrapping<T>::type;
    switch (r) {
        case kAdd: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
        case kMul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
        case kMax: return b > a ? b : a;
        case kMin: return b < a ? b : a;
        default: return b;
    }
}

// Combines `n` elements of `src` into `dst`; f16 computes in float and rounds
// once per update, as the device does.
template <typename T>
void combine_run(unsigned char* dst, const unsigned char* src, size_t n, Reduction r) {
    for (size_t e = 0; e < n; ++e) {
        T a, b;
        std::memcpy(&a, dst + e * sizeof(T), sizeof(T));
        std::memcpy(&b, src + e * sizeof(T), sizeof(T));
        if constexpr (std::is_same_v<T, uint16_t>) a = float_to_half(combine(r, half_to_float(a), half_to_float(b)));
        else a = combine(r, a, b);
        std::memcpy(dst + e * sizeof(T), &a, sizeof(T));
    }
}

using CombineRun = void (*)(unsigned char*, const unsigned char*, size_t, Reduction);

CombineRun combine_for(DataType t) {
    switch (t) {
        case DataType::f32: return combine_run<float>;
        case DataType::f64: return combine_run<double>;
        case DataType::f16: return combine_run<uint16_t>;
        case DataType::i32: return combine_run<int32_t>;
        case DataType::i64: return combine_run<int64_t>;
        case DataType::u8: return combine_run<uint8_t>;
        case DataType::i8: return combine_run<int8_t>;
        default: return nullptr;   // boolean: no reduction (shape inference refuses it)
    }
}

Error index_error(const HostCall& call, int64_t value, size_t at, size_t dim) {
    ErrorContext where;
    where.node = call.node();
    where.op = kOp;
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     " of indices) is out of range for dim " + std::to_string(dim) + " of data " +
                     call.in_shape(0).to_string(),
                 where);
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
            if (v < 0 || v >= len) throw index_error(call, raw, t * k + i, i);
            at = at * static_cast<size_t>(len) + static_cast<size_t>(v);
        }
        slice[t] = at;
    }
    const size_t width = byte_size(call.in_type(0)), bytes = data.count() * width, run = inner * width;
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    if (bytes > 0) std::memcpy(dst, call.in_raw(0), bytes);
    if (tuples == 0 || run == 0) return;
    const auto* upd = static_cast<const unsigned char*>(call.in_raw(2));
    const Reduction r = reduction_of(call.attrs());
    const CombineRun f = combine_for(call.in_type(0));
    for (size_t t = 0; t < tuples; ++t) {
        if (r == kNone) std::memcpy(dst + slice[t] * run, upd + t * run, run);
        else f(dst + slice[t] * run, upd + t * run, inner, r);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclMultiKernelSpec scatter_nd_ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = scatter_nd_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        const size_t r = p.inputs.at(0).shape.rank(), q = p.inputs.at(1).shape.rank();
        const auto k = static_cast<size_t>(tuple_length(r, q, p.inputs.at(2).shape.rank()));
        const Reduction red = reduction_of(*p.attrs);
        // Without a reduction elements move as bits; with one, as values.
        const bool half = t == DataType::f16 && red != kNone;
        const std::string elem = red == kNone ? ocl_bits_type(t) : ocl_type_name(t);
        return JitDefines{{"BITS_T", ocl_bits_type(t)},
                          {"ELEM_T", elem},
                          {"VALUE_T", half ? "float" : elem},
                          {"DATA_F16", half ? "1" : "0"},
                          {"IS_INTEGER", is_floating(t) ? "0" : "1"},
                          {"UVALUE_T", is_floating(t) ? elem : ocl_bits_type(t)},
                          {"REDUCTION", std::to_string(static_cast<size_t>(red))},
                          {"USES_F64", t == DataType::f64 && red != kNone ? "1" : "0"},
                          {"TUPLE_LEN", std::to_string(k)},
                          {"FIRST_DIM", std::to_string(kOclMaxRank - r)},
                          {"TUPLES", jit_dims_product("INPUT1", q, 0, q - 1)},
                          {"INNER", jit_dims_product("INPUT0", r, k, r)}};
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{
            {"scatter_nd_copy", {OclArgRef::input(0), OclArgRef::output(0)}},
            {"scatter_nd_apply", {OclArgRef::input(1), OclArgRef::input(2), OclArgRef::output(0)}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const Shape data = p.inputs.at(0).get_shape(), ind = p.inputs.at(1).get_shape();
        const auto k = static_cast<size_t>(ind[ind.rank() - 1]);
        const size_t tuples = dims_product(ind, 0, ind.rank() - 1);
        runs[0].dispatch = dispatch_1d(data.count(), l);
        // One work-item per element of a slice; none when there is no tuple.
        runs[1].dispatch = dispatch_1d(tuples == 0 ? 0 : dims_product(data, k, data.rank()), l);
    };
    return spec;
}

std::string check_inputs(const KernelParams& p) {
    if (!is_index_type(p.inputs.at(1).dtype))
        return std::string("indices type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
    return {};
}

std::string check_ocl(const KernelParams& p) {
    for (const Layout& l : p.inputs)
        if (l.shape.rank() > kOclMaxRank)
            return "rank " + std::to_string(l.shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return check_inputs(p);
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_scatter_nd(ImportContext& c) {
    if (!c.only_attrs({"reduction"})) return false;
    c.set("reduction", c.s("reduction", "none"));   // before opset 16: none
    c.use_inputs({0, 1, 2});
    return true;
}

void register_scatter_nd(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp, "Slices of updates written into a copy of data at index tuples (ONNX ScatterND)", 3, 3,
               {attr_string("reduction", std::string("none"), kReductions,
                            "how an update combines with the element it lands on: none replaces it")},
               infer_scatter_nd);
    def.imports = {onnx_rule("ScatterND", 3, 3, onnx_scatter_nd, "`reduction`")};
    reg.add_op(def);
    add_host_impls(reg, kOp, scatter_nd_kernel, host_options({}, check_inputs));
    // OpenCL: an update whose tuple is out of range is dropped (scatter_nd.cl);
    // the host impls report it.
    add_ocl_multi_impls(reg, kOp, scatter_nd_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("scatter_nd", register_scatter_nd)
