// cumsum: running sums along `axis` (ONNX CumSum). `exclusive` leaves the
// current element out of its own sum; `reverse` sums from the end of the axis.
//
// Floats accumulate in double and integers in int64, whatever the tensor type,
// so the reference is exact for integers and as accurate as possible for f16.
#include <cstdint>
#include <string>
#include <vector>

#include "cumsum_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_cumsum(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    if (in.shape.rank() == 0) throw Error("input " + in.shape.to_string() + " is a scalar; cumsum needs rank >= 1");
    normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(in.shape.rank()));
    return {Layout(in.shape, in.dtype)};
}

// Walks every line along the axis in the requested direction and hands each
// element's flat index to `step`, with `first` set at the start of a line.
template <typename Step>
void for_each_line(const Shape& s, size_t axis, bool reverse, Step step) {
    size_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= static_cast<size_t>(s[i]);
    for (size_t i = axis + 1; i < s.rank(); ++i) inner *= static_cast<size_t>(s[i]);
    const auto len = static_cast<size_t>(s[axis]);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t in = 0; in < inner; ++in) {
            const size_t base = o * len * inner + in;
            for (size_t k = 0; k < len; ++k) {
                const size_t pos = reverse ? len - 1 - k : k;
                step(base + pos * inner, k == 0);
            }
        }
    }
}

template <typename Acc, typename Get, typename Set>
void cumsum_lines(const Shape& s, size_t axis, bool exclusive, bool reverse, Get get, Set set) {
    Acc acc = 0;
    for_each_line(s, axis, reverse, [&](size_t idx, bool first) {
        if (first) acc = 0;
        const Acc v = get(idx);
        if (exclusive) {
            set(idx, acc);
            acc += v;
        } else {
            acc += v;
            set(idx, acc);
        }
    });
}

void cumsum_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const auto axis = static_cast<size_t>(normalize_axis(call.attrs().get_int("axis"), static_cast<int64_t>(s.rank())));
    const bool exclusive = call.attrs().get_bool("exclusive");
    const bool reverse = call.attrs().get_bool("reverse");
    const DataType t = call.in_type(0);

    if (is_floating(t)) {
        cumsum_lines<double>(
            s, axis, exclusive, reverse, [&](size_t i) { return call.get(0, i); },
            [&](size_t i, double v) { call.set(0, i, v); });
    } else if (t == DataType::i64) {
        const int64_t* in = call.in<int64_t>(0);
        int64_t* out = call.out<int64_t>(0);
        cumsum_lines<int64_t>(
            s, axis, exclusive, reverse, [&](size_t i) { return in[i]; }, [&](size_t i, int64_t v) { out[i] = v; });
    } else if (t == DataType::i32) {
        const int32_t* in = call.in<int32_t>(0);
        int32_t* out = call.out<int32_t>(0);
        // Wrap-around on overflow, like the int64 sum truncated to the type.
        cumsum_lines<int64_t>(
            s, axis, exclusive, reverse, [&](size_t i) { return static_cast<int64_t>(in[i]); },
            [&](size_t i, int64_t v) { out[i] = static_cast<int32_t>(static_cast<uint32_t>(v)); });
    } else {
        ErrorContext where;
        where.node = call.node();
        where.op = "cumsum";
        throw Error(std::string("unsupported data type ") + to_string(t), where);
    }
}

// ---- OpenCL ---------------------------------------------------------------

size_t cumsum_axis(const KernelParams& p) { return axis_attr(*p.attrs, p.inputs.at(0).shape.rank()); }

// f64 data sums in double; other floats in FLOAT_ACC (double where the
// device has fp64); integers in unsigned types so overflow wraps.
const char* acc_type(DataType t) {
    if (t == DataType::i32) return "uint";
    if (t == DataType::i64) return "ulong";
    return t == DataType::f64 ? "double" : "FLOAT_ACC";
}

OclKernelSpec cumsum_ocl_spec() {
    OclKernelSpec spec;
    spec.source = cumsum_cl;
    spec.kernel_name = "cumsum_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = cumsum_axis(p);
        JitDefines d = jit_axis_lines("INPUT0", rank, axis);
        d.insert(d.begin(), {"ACC_T", acc_type(t)});
        d.emplace_back("EXCLUSIVE", p.attrs->get_bool("exclusive") ? "1" : "0");
        d.emplace_back("REVERSE", p.attrs->get_bool("reverse") ? "1" : "0");
        d.push_back(jit_data_f16(t));
        return d;
    };
    // One work-item per line; a shape with an empty axis still has lines but
    // nothing to write, so it is skipped.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_lines(p.inputs.at(0).get_shape(), cumsum_axis(p), limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_cumsum(ImportContext& c) {
    if (!c.only_attrs({"exclusive", "reverse"})) return false;
    if (!c.value(1))
        return c.unsupported("CumSum's axis input has no known value (dynrt takes the axis as an attribute)");
    const auto axis = c.value(1)->to_int64();
    if (axis.size() != 1) return c.unsupported("CumSum's axis input is not a single value");
    c.set("axis", axis[0]);
    c.set("exclusive", c.i("exclusive", 0) != 0);
    c.set("reverse", c.i("reverse", 0) != 0);
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("CumSum", 2, 2, onnx_cumsum, "the axis input's value -> `axis`; `exclusive`, `reverse`")};
}

void register_cumsum(ModuleRegistrar& reg) {
    OpDefinition def = op_def("cumsum", "Running sums along axis (ONNX CumSum)", 1, 1,
                              {attr_int("axis", 0, "axis to sum along; negative counts from the end"),
                               attr_bool("exclusive", false, "leave each element out of its own sum"),
                               attr_bool("reverse", false, "sum from the end of the axis")},
                              infer_cumsum);
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64};
    add_host_impls(reg, "cumsum", cumsum_kernel, host_options(dtypes));
    add_ocl_impls(reg, "cumsum", cumsum_ocl_spec(), ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("cumsum", register_cumsum)
