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
#include <type_traits>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "scatter_elements_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "scatter_elements";
const std::vector<std::string> kReductions = {"none", "add", "mul", "max", "min"};
enum Reduction : size_t { kNone, kAdd, kMul, kMax, kMin };

Reduction reduction_of(const Attributes& a) {
    return static_cast<Reduction>(mode_index(kOp, kReductions, a.get_string("reduction")));
}

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

std::vector<Layout> infer_scatter_elements(const ShapeInferContext& ctx) {
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

// The type add and mul run in: unsigned for integers, so they wrap (two's complement).
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
    using type = T;
};
template <typename T>
struct Wrapping<T, true> {
    using type = std::make_unsigned_t<T>;
};

// f(a, b) of one reduction.
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

template <typename T>
void combine_at(unsigned char* dst, const unsigned char* src, Reduction r) {
    T a, b;
    std::memcpy(&a, dst, sizeof(T));
    std::memcpy(&b, src, sizeof(T));
    const T c = combine(r, a, b);
    std::memcpy(dst, &c, sizeof(T));
}

// f16 combines in float and rounds once per update, as the device does.
void combine_half(unsigned char* dst, const unsigned char* src, Reduction r) {
    uint16_t a, b;
    std::memcpy(&a, dst, 2);
    std::memcpy(&b, src, 2);
    const uint16_t c = float_to_half(combine(r, half_to_float(a), half_to_float(b)));
    std::memcpy(dst, &c, 2);
}

using Combine = void (*)(unsigned char*, const unsigned char*, Reduction);

Combine combine_for(DataType t) {
    switch (t) {
        case DataType::f32: return combine_at<float>;
        case DataType::f64: return combine_at<double>;
        case DataType::f16: return combine_half;
        case DataType::i32: return combine_at<int32_t>;
        case DataType::i64: return combine_at<int64_t>;
        case DataType::u8: return combine_at<uint8_t>;
        case DataType::i8: return combine_at<int8_t>;
        default: return nullptr;   // boolean: no reduction (shape inference refuses it)
    }
}

Error index_error(const HostCall& call, int64_t value, size_t at, size_t axis) {
    ErrorContext where;
    where.node = call.node();
    where.op = kOp;
    return Error("index " + std::to_string(value) + " (at position " + std::to_string(at) +
                     ") is out of range for axis " + std::to_string(axis) + " of size " +
                     std::to_string(call.in_shape(0)[axis]) + " in data " + call.in_shape(0).to_string(),
                 where);
}

void scatter_elements_kernel(HostCall& call) {
    const Shape& data = call.in_shape(0);
    const Shape& ind = call.in_shape(1);
    const size_t rank = data.rank(), axis = axis_attr(call.attrs(), rank);
    const Reduction r = reduction_of(call.attrs());
    const int64_t len = data[axis];
    const std::vector<int64_t> idx = call.get_ints(1);
    // Every target computed (and checked) before anything is written.
    const std::vector<size_t> ds = strides_of(data), is = strides_of(ind);
    std::vector<size_t> target(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
        const int64_t v = idx[j] < 0 ? idx[j] + len : idx[j];
        if (v < 0 || v >= len) throw index_error(call, idx[j], j, axis);
        size_t at = 0;
        for (size_t d = 0; d < rank; ++d)
            at += (d == axis ? static_cast<size_t>(v) : j / is[d] % static_cast<size_t>(ind[d])) * ds[d];
        target[j] = at;
    }
    const size_t width = byte_size(call.in_type(0)), bytes = data.count() * width;
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    if (bytes > 0) std::memcpy(dst, call.in_raw(0), bytes);
    if (target.empty()) return;
    const auto* upd = static_cast<const unsigned char*>(call.in_raw(2));
    const Combine f = combine_for(call.in_type(0));
    for (size_t j = 0; j < target.size(); ++j) {
        if (r == kNone) std::memcpy(dst + target[j] * width, upd + j * width, width);
        else f(dst + target[j] * width, upd + j * width, r);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclMultiKernelSpec scatter_elements_ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = scatter_elements_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = axis_attr(*p.attrs, rank);
        const Reduction r = reduction_of(*p.attrs);
        // Without a reduction elements move as bits; with one, as values.
        const bool half = t == DataType::f16 && r != kNone;
        const std::string elem = r == kNone ? ocl_bits_type(t) : ocl_type_name(t);
        return JitDefines{{"BITS_T", ocl_bits_type(t)},
                          {"ELEM_T", elem},
                          {"VALUE_T", half ? "float" : elem},
                          {"DATA_F16", half ? "1" : "0"},
                          {"IS_INTEGER", is_floating(t) ? "0" : "1"},
                          {"UVALUE_T", is_floating(t) ? elem : ocl_bits_type(t)},
                          {"REDUCTION", std::to_string(static_cast<size_t>(r))},
                          {"USES_F64", t == DataType::f64 && r != kNone ? "1" : "0"},
                          {"AXIS_POS", std::to_string(kOclMaxRank - rank + axis)}};
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{
            {"scatter_elements_copy", {OclArgRef::input(0), OclArgRef::output(0)}},
            {"scatter_elements_apply", {OclArgRef::input(1), OclArgRef::input(2), OclArgRef::output(0)}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const Shape ind = p.inputs.at(1).get_shape();
        const size_t axis = axis_attr(*p.attrs, ind.rank());
        runs[0].dispatch = dispatch_1d(p.outputs.at(0).count(), l);
        // One work-item per line of indices along the axis (none when the axis is empty).
        runs[1].dispatch = ind[axis] == 0 ? dispatch_1d(0, l) : dispatch_1d(ind.count() / ind[axis], l);
    };
    return spec;
}

std::string check_inputs(const KernelParams& p) {
    if (!is_index_type(p.inputs.at(1).dtype))
        return std::string("indices type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
    return {};
}

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kOclMaxRank)
        return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return check_inputs(p);
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
         attr_string("reduction", std::string("none"), kReductions,
                     "how an update combines with the element it lands on: none replaces it")},
        infer_scatter_elements);
    def.imports = {onnx_rule("ScatterElements", 3, 3, onnx_scatter_elements, "`axis`, `reduction`"),
                   onnx_rule("Scatter", 3, 3, onnx_scatter_elements, "`axis` (deprecated Scatter, opsets 9-10)")};
    reg.add_op(def);
    add_host_impls(reg, kOp, scatter_elements_kernel, host_options({}, check_inputs));
    // OpenCL: an update with an out-of-range index is dropped (scatter_elements.cl);
    // the host impls report it.
    add_ocl_multi_impls(reg, kOp, scatter_elements_ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("scatter_elements", register_scatter_elements)
