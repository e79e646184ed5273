// topk: the k largest (or smallest) elements along an axis, k read from an input
// tensor when the kernel runs.
//
// k is data: the op declares OpTraits::data_dependent_output, shape inference
// gives the bound (the input's shape: k <= the axis length), and the kernel
// reads k and reports the actual shapes; a k outside [0, axis length] is an
// error on every device (as ONNX TopK and onnxruntime have it). Outputs:
// values (the input's dtype) and indices (i64 positions along the axis). Ties
// keep the lower index first; `sorted: false` returns the chosen elements in
// index order. The OpenCL impls (topk.cl) report k through the SDK's report
// buffer (dynrt/ocl_impl.hpp, data-dependent outputs).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "topk_cl.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_topk(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const Layout& k = ctx.inputs.at(1);
    if (x.shape.rank() == 0) throw Error("input 0 is a scalar; topk needs rank >= 1");
    normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(x.shape.rank()));
    if (k.dtype != DataType::i64 && k.dtype != DataType::i32)
        throw Error(std::string("k (input 1) must be i32 or i64, got ") + to_string(k.dtype));
    if (k.is_static() && k.count() != 1) throw Error("k (input 1) must hold one value, got " + k.to_string());
    Layout values(x.shape, x.dtype);
    Layout indices(x.shape, DataType::i64);
    return {values, indices};
}

size_t axis_of(const Attributes& a, size_t rank) {
    return static_cast<size_t>(normalize_axis(a.get_int("axis"), static_cast<int64_t>(rank)));
}

// k as the kernels read it, checked against the axis length `n` of input
// `x`: outside [0, n] it is an error naming the node, k and the axis, the
// same on every device.
size_t checked_k(int64_t k, const Shape& x, size_t axis, const std::string& node) {
    const int64_t n = x[axis];
    if (k < 0 || k > n)
        throw Error("k is " + std::to_string(k) + "; it must be in [0, " + std::to_string(n) +
                        "] (the length of axis " + std::to_string(axis) + " of input " + x.to_string() + ")",
                    node_context(node, "topk", "k"));
    return static_cast<size_t>(k);
}

void topk_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t axis = axis_of(call.attrs(), s.rank());
    const bool largest = call.attrs().get_bool("largest");
    const bool sorted = call.attrs().get_bool("sorted");
    const size_t n = static_cast<size_t>(s[axis]);
    const size_t k = checked_k(call.get_ints(1).at(0), s, axis, call.node());
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(s[d]);
    for (size_t d = axis + 1; d < s.rank(); ++d) inner *= static_cast<size_t>(s[d]);

    std::vector<size_t> idx(n);
    std::vector<double> v(n);
    auto* out_idx = call.out<int64_t>(1);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t in = 0; in < inner; ++in) {
            for (size_t i = 0; i < n; ++i) v[i] = call.get(0, (o * n + i) * inner + in);
            std::iota(idx.begin(), idx.end(), size_t(0));
            auto better = [&](size_t a, size_t b) {
                if (v[a] != v[b]) return largest ? v[a] > v[b] : v[a] < v[b];
                return a < b;
            };
            std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), better);
            if (!sorted) std::sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k));
            for (size_t j = 0; j < k; ++j) {
                const size_t dst = (o * k + j) * inner + in;
                call.set(0, dst, v[idx[j]]);
                out_idx[dst] = static_cast<int64_t>(idx[j]);
            }
        }
    }
    Shape out = s;
    out[axis] = static_cast<int64_t>(k);
    call.set_output_shape(0, out);
    call.set_output_shape(1, out);
}

// k as work-item 0 of topk.cl reports it: its low and high 32 bits.
int64_t reported_k(const std::vector<int32_t>& r) {
    return static_cast<int64_t>(uint64_t(uint32_t(r.at(1))) << 32 | uint32_t(r.at(0)));
}

// One work-item per line (topk.cl); at least one, which reports k.
OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = topk_cl;
    spec.kernel_name = "topk_lines";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs[0].dtype;
        const size_t rank = p.inputs[0].shape.rank();
        JitDefines d = jit_axis_lines("INPUT0", rank, axis_of(*p.attrs, rank));
        d.emplace_back("BITS_TYPE", ocl_bits_type(t));
        d.emplace_back("KEY_TYPE", t == DataType::f16 ? "float" : ocl_type_name(t));
        d.emplace_back("LARGEST", p.attrs->get_bool("largest") ? "1" : "0");
        d.emplace_back("SORTED", p.attrs->get_bool("sorted") ? "1" : "0");
        d.push_back(jit_data_f16(t));
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        const Shape s = p.inputs[0].get_shape();
        const size_t axis = axis_of(*p.attrs, s.rank());
        return dispatch_1d(std::max<size_t>(dims_product(s, 0, axis) * dims_product(s, axis + 1, s.rank()), 1), l);
    };
    // k's low and high 32 bits, checked on the host (an error there) before
    // they give the shapes.
    spec.report_ints = 2;
    spec.report_check = [](const KernelParams& p, const std::vector<int32_t>& r) {
        const Shape s = p.inputs[0].get_shape();
        checked_k(reported_k(r), s, axis_of(*p.attrs, s.rank()), p.node);
    };
    spec.report_shapes = [](const KernelParams& p, const std::vector<int32_t>& r) {
        Shape s = p.inputs[0].get_shape();
        s[axis_of(*p.attrs, s.rank())] = reported_k(r);
        return std::vector<Shape>{s, s};
    };
    return spec;
}

// The indices are computed in longs, k comes back whole: only the element
// count is held to an int.
std::string check_ocl(const KernelParams& p) {
    const Layout& x = p.inputs[0];
    if (x.is_static() && x.count() > 0x7fffffffu) return "the input has more than 2^31-1 elements";
    return {};
}

// ONNX ops this op implements (dynrt/op_import.hpp). TopK-1 carries k as an
// attribute; from opset 10 k is input 1, as here; opset 11 adds `largest` and
// `sorted` (before it: the largest, sorted).
bool onnx_topk(ImportContext& c) {
    if (!c.only_attrs({"axis", "largest", "sorted"})) return false;
    if (c.opset() < 10 || c.inputs() < 2)
        return c.unsupported("TopK with k as an attribute (opset " + std::to_string(c.opset()) +
                             "); dynrt reads k from input 1 (opset 10 and later)");
    c.set("axis", c.i("axis", -1));
    c.set("largest", c.i("largest", 1) != 0);
    c.set("sorted", c.i("sorted", 1) != 0);
    c.use_inputs({0, 1});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("TopK", 1, 2, onnx_topk, "k as input 1 (opset 10+); `axis`, `largest`, `sorted`", 2)};
}

void register_topk(ModuleRegistrar& reg) {
    OpDefinition def = op_def("topk", "k largest/smallest elements along axis (k read from input 1 at run time)", 2, 2,
                              {attr_int("axis", -1, "axis to select along; negative counts from the end"),
                               attr_bool("largest", true, "true: the k largest; false: the k smallest"),
                               attr_bool("sorted", true, "true: best first; false: in index order")},
                              infer_topk);
    def.num_outputs = 2;
    def.traits.data_dependent_output = true;
    def.imports = onnx_rules();
    reg.add_op(def);
    HostImplOptions o;
    // The output layout changes with k: the kernel reports it, so the static
    // impl (keyed on the input layouts) serves networks built with static impls.
    o.dtypes = {DataType::f32, DataType::f16, DataType::i32, DataType::i64};
    add_host_impls(reg, "topk", topk_kernel, o);
    add_ocl_impls(reg, "topk", ocl_spec(), ocl_options(o.dtypes, check_ocl));
}

}   // namespace

DYNRT_MODULE("topk", register_topk)
