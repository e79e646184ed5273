// arg_reduce: the index of the largest (`max`) or smallest (`min`) element
// along `axis` (ONNX ArgMax, ArgMin), as i64. Ties give the first index, or the
// last one with `select_last_index`. A NaN counts as beyond every number (the
// first NaN wins, the last one with `select_last_index`), as numpy's argmax
// and argmin have it. An empty axis has no answer and is refused.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "arg_reduce_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const std::vector<std::string> kModes = {"max", "min"};
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                      DataType::i64, DataType::u8,  DataType::i8};

bool is_max(const Attributes& a) { return mode_index("arg_reduce", kModes, a.get_string("mode")) == 0; }

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "arg_reduce", field));
}

std::vector<Layout> infer_arg_reduce(const ShapeInferContext& ctx) {
    is_max(ctx.attrs);   // checks the mode
    const Layout& in = ctx.inputs.at(0);
    if (std::find(kTypes.begin(), kTypes.end(), in.dtype) == kTypes.end())
        throw node_error(ctx.node, "inputs", "arg_reduce does not take input " + in.to_string());
    const auto rank = static_cast<int64_t>(in.shape.rank());
    if (rank == 0) throw node_error(ctx.node, "inputs", "input " + in.to_string() + " is a scalar; it has no axis");
    const auto axis = static_cast<size_t>(normalize_axis(ctx.attrs.get_int("axis"), rank));
    if (in.shape[axis].is_static() && in.shape[axis].get_length() == 0)
        throw node_error(
            ctx.node, "axis",
            "axis " + std::to_string(axis) + " of input " + in.to_string() + " is empty: there is no element to pick");
    std::vector<Dimension> out;
    for (size_t d = 0; d < in.shape.rank(); ++d) {
        if (d != axis) out.push_back(in.shape[d]);
        else if (ctx.attrs.get_bool("keepdims")) out.emplace_back(1);
    }
    return {Layout(PartialShape(std::move(out)), DataType::i64)};
}

// ---- reference ------------------------------------------------------------

// Whether x replaces the best so far: strictly beyond it, or equal (last
// index), a NaN beating every number.
bool replaces(double x, double best, bool max, bool last) {
    if (std::isnan(x)) return last || !std::isnan(best);
    if (std::isnan(best)) return false;
    if (x == best) return last;
    return max ? x > best : x < best;
}

// Integers compare as int64: exact past 2^53.
int64_t load_int(const HostCall& call, size_t i) {
    switch (call.in_type(0)) {
        case DataType::i32: return call.in<int32_t>(0)[i];
        case DataType::i64: return call.in<int64_t>(0)[i];
        case DataType::u8: return call.in<uint8_t>(0)[i];
        default: return call.in<int8_t>(0)[i];
    }
}

bool replaces_int(int64_t x, int64_t best, bool max, bool last) {
    if (x == best) return last;
    return max ? x > best : x < best;
}

void reference(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t axis = axis_attr(call.attrs(), s.rank());
    const bool max = is_max(call.attrs());
    const bool last = call.attrs().get_bool("select_last_index");
    const bool floating = is_floating(call.in_type(0));
    const size_t inner = dims_product(s, axis + 1, s.rank());
    const size_t outer = dims_product(s, 0, axis);
    const auto len = static_cast<size_t>(s[axis]);
    if (len == 0) throw Error("axis " + std::to_string(axis) + " of input " + s.to_string() + " is empty");
    int64_t* y = call.out<int64_t>(0);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t in = 0; in < inner; ++in) {
            const size_t base = o * len * inner + in;
            size_t best = 0;
            for (size_t k = 1; k < len; ++k) {
                const size_t i = base + k * inner, b = base + best * inner;
                if (floating ? replaces(call.get(0, i), call.get(0, b), max, last)
                             : replaces_int(load_int(call, i), load_int(call, b), max, last))
                    best = k;
            }
            y[o * inner + in] = static_cast<int64_t>(best);
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

size_t arg_axis(const KernelParams& p) { return axis_attr(*p.attrs, p.inputs.at(0).shape.rank()); }

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = arg_reduce_cl;
    spec.kernel_name = "arg_reduce_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        JitDefines d = jit_axis_lines("INPUT0", p.inputs.at(0).shape.rank(), arg_axis(p));
        d.emplace_back("IS_MAX", is_max(*p.attrs) ? "1" : "0");
        d.emplace_back("SELECT_LAST", p.attrs->get_bool("select_last_index") ? "1" : "0");
        d.emplace_back("IS_INT", is_floating(t) ? "0" : "1");
        d.emplace_back("IN_F16", t == DataType::f16 ? "1" : "0");
        d.emplace_back("OUT_F16", "0");
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_lines(p.inputs.at(0).get_shape(), arg_axis(p), limits);
    };
    return spec;
}

// The JIT dims cover 8 right-aligned dims.
std::string validate_ocl(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kShapeInfoDims)
        return "input rank " + std::to_string(p.inputs[0].shape.rank()) + " is above 8";
    return {};
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_arg(ImportContext& c, const std::string& mode) {
    if (!c.only_attrs({"axis", "keepdims", "select_last_index"})) return false;
    c.set("mode", mode);
    c.set("axis", c.i("axis", 0));
    c.set("keepdims", c.i("keepdims", 1) != 0);
    c.set("select_last_index", c.i("select_last_index", 0) != 0);
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    const std::string doc = "; `axis`, `keepdims`, `select_last_index`";
    return {onnx_rule(
                "ArgMax", 1, 1, [](ImportContext& c) { return onnx_arg(c, "max"); }, "`mode` max" + doc),
            onnx_rule(
                "ArgMin", 1, 1, [](ImportContext& c) { return onnx_arg(c, "min"); }, "`mode` min" + doc)};
}

void register_arg_reduce(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("arg_reduce", "Index (i64) of the largest or smallest element along an axis (ONNX ArgMax, ArgMin)", 1, 1,
               {attr_string("mode", std::nullopt, kModes, "max: the largest element; min: the smallest"),
                attr_int("axis", 0, "axis to search along; negative counts from the end"),
                attr_bool("keepdims", true, "keep the axis with extent 1"),
                attr_bool("select_last_index", false, "ties give the last index instead of the first")},
               infer_arg_reduce);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "arg_reduce", reference, host_options(kTypes));
    add_ocl_impls(reg, "arg_reduce", ocl_spec(), ocl_options(kTypes, validate_ocl));
}

}   // namespace

DYNRT_MODULE("arg_reduce", register_arg_reduce)
