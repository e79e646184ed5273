// unique: the distinct slices of x along an axis (or the distinct elements of
// x flattened) with where each first occurs, which unique each slice is and
// how often each occurs (ONNX Unique).
//
// Outputs: y (the uniques, x's dtype), indices (i64, first occurrence of each
// unique), inverse_indices (i64, the unique of every slice) and counts (i64).
// The number of uniques depends on the data: the op declares
// OpTraits::data_dependent_output, shape inference gives the bound (every slice
// unique) and the kernels report the number. Slices compare lexicographically,
// element by element in row-major order; `sorted` orders the uniques
// ascending, else by first occurrence.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "unique_cl.hpp"

namespace {

using namespace dynrt;

// x as `outer` blocks of `n` slices of `inner` elements.
struct Slices {
    size_t axis = 0;   // of x (0 when flattened)
    size_t outer = 1, n = 0, inner = 1;
};

Slices slices_of(const Attributes& a, const Shape& s) {
    Slices sl;
    if (a.get_bool("flatten")) {
        sl.n = s.count();
        return sl;
    }
    sl.axis = static_cast<size_t>(normalize_axis(a.get_int("axis"), static_cast<int64_t>(s.rank())));
    sl.outer = dims_product(s, 0, sl.axis);
    sl.n = static_cast<size_t>(s[sl.axis]);
    sl.inner = dims_product(s, sl.axis + 1, s.rank());
    return sl;
}

// The four output shapes for `uniques` uniques of x (shape `s`).
std::vector<Shape> unique_shapes(const Attributes& a, const Shape& s, size_t uniques) {
    const Slices sl = slices_of(a, s);
    const auto u = static_cast<int64_t>(uniques);
    Shape y{u};
    if (!a.get_bool("flatten")) {
        y = s;
        y[sl.axis] = u;
    }
    return {y, Shape{u}, Shape{static_cast<int64_t>(sl.n)}, Shape{u}};
}

std::vector<Layout> infer_unique(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    PartialShape y = x.shape;
    Dimension n;
    if (ctx.attrs.get_bool("flatten")) {
        n = x.is_static() ? Dimension(static_cast<int64_t>(x.count())) : Dimension::dynamic();
        y = PartialShape{n};
    } else {
        if (x.shape.rank() == 0) throw Error("input 0 is a scalar; unique along `axis` needs rank >= 1");
        n = x.shape[static_cast<size_t>(
            normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(x.shape.rank()), "axis"))];
    }
    const Layout per_slice(PartialShape{n}, DataType::i64);
    return {Layout(y, x.dtype), per_slice, per_slice, per_slice};
}

void unique_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const Slices sl = slices_of(call.attrs(), s);
    auto element = [&](size_t slice, size_t o, size_t i) { return call.get(0, (o * sl.n + slice) * sl.inner + i); };
    auto compare = [&](size_t a, size_t b) {
        for (size_t o = 0; o < sl.outer; ++o)
            for (size_t i = 0; i < sl.inner; ++i) {
                const double va = element(a, o, i), vb = element(b, o, i);
                if (va < vb) return -1;
                if (va > vb) return 1;
            }
        return 0;
    };
    std::vector<size_t> first, count;   // per unique, in first-occurrence order
    std::vector<size_t> inverse(sl.n);
    for (size_t a = 0; a < sl.n; ++a) {
        size_t u = 0;
        while (u < first.size() && compare(first[u], a) != 0) ++u;
        if (u == first.size()) {
            first.push_back(a);
            count.push_back(0);
        }
        ++count[u];
        inverse[a] = u;
    }
    std::vector<size_t> order(first.size());   // order[r]: the unique at output place r
    std::iota(order.begin(), order.end(), size_t(0));
    if (call.attrs().get_bool("sorted"))
        std::sort(order.begin(), order.end(), [&](size_t u, size_t v) { return compare(first[u], first[v]) < 0; });
    std::vector<size_t> place(order.size());
    for (size_t r = 0; r < order.size(); ++r) place[order[r]] = r;

    const size_t slice_bytes = sl.inner * byte_size(call.in_type(0));
    const auto* x = static_cast<const char*>(call.in_raw(0));
    auto* y = static_cast<char*>(call.out_raw(0));
    for (size_t r = 0; r < order.size(); ++r) {
        const size_t src = first[order[r]];
        call.out<int64_t>(1)[r] = static_cast<int64_t>(src);
        call.out<int64_t>(3)[r] = static_cast<int64_t>(count[order[r]]);
        for (size_t o = 0; o < sl.outer; ++o)
            std::memcpy(y + (o * order.size() + r) * slice_bytes, x + (o * sl.n + src) * slice_bytes, slice_bytes);
    }
    for (size_t a = 0; a < sl.n; ++a) call.out<int64_t>(2)[a] = static_cast<int64_t>(place[inverse[a]]);
    const std::vector<Shape> shapes = unique_shapes(call.attrs(), s, order.size());
    for (size_t k = 0; k < shapes.size(); ++k) call.set_output_shape(k, shapes[k]);
}

size_t slice_count(const KernelParams& p) { return slices_of(*p.attrs, p.inputs[0].get_shape()).n; }

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = unique_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.inputs[0].dtype;
        const size_t rank = p.inputs[0].shape.rank();
        JitDefines d{{"AXIS_LEN", "INPUT0_LENGTH"}, {"INNER", "1"}, {"OUTER", "1"}};
        if (!p.attrs->get_bool("flatten")) {
            const auto axis = static_cast<size_t>(normalize_axis(p.attrs->get_int("axis"), static_cast<int64_t>(rank)));
            d = {{"AXIS_LEN", jit_dims_product("INPUT0", rank, axis, axis + 1)},
                 {"INNER", jit_dims_product("INPUT0", rank, axis + 1, rank)},
                 {"OUTER", jit_dims_product("INPUT0", rank, 0, axis)}};
        }
        d.emplace_back("BITS_TYPE", ocl_bits_type(t));
        d.emplace_back("KEY_TYPE", t == DataType::f16 ? "float" : ocl_type_name(t));
        d.emplace_back("SORTED", p.attrs->get_bool("sorted") ? "1" : "0");
        d.push_back(jit_data_f16(t));
        return d;
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{{"unique_single",
                                      {OclArgRef::input(0), OclArgRef::outputs(), OclArgRef::scratch(0),
                                       OclArgRef::scratch(1), OclArgRef::scratch(2), OclArgRef::report()}}};
    };
    // No slice: nothing runs and the zeroed report gives no unique.
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = dispatch_1d(slice_count(p) ? 1 : 0, l);
    };
    spec.scratch_bytes = [](const KernelParams& p) {
        const size_t bytes = checked_mul(slice_count(p), sizeof(int32_t), "unique scratch bytes");
        return std::vector<size_t>{bytes, bytes, bytes};
    };
    spec.report_ints = 1;
    spec.report_shapes = [](const KernelParams& p, const std::vector<int32_t>& r) {
        return unique_shapes(*p.attrs, p.inputs[0].get_shape(), static_cast<size_t>(r[0]));
    };
    return spec;
}

// Slice numbers and counts are ints; OpenCL C 1.2 has no double without
// cl_khr_fp64.
std::string check_ocl(const KernelParams& p) {
    const Layout& x = p.inputs[0];
    if (x.dtype == DataType::f64) return "f64 needs cl_khr_fp64";
    if (x.is_static() && x.count() > 0x7fffffffu) return "input 0 has more than 2^31-1 elements";
    return {};
}

// ONNX Unique (opset 11): `axis` absent means flattened; outputs Y, indices,
// inverse_indices, counts (a node may list fewer).
bool onnx_unique(ImportContext& c) {
    if (!c.only_attrs({"axis", "sorted"})) return false;
    c.set("flatten", !c.has("axis"));
    c.set("axis", c.i("axis", 0));
    c.set("sorted", c.i("sorted", 1) != 0);
    c.use_inputs({0});
    return true;
}

void register_unique(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "unique", "distinct slices along axis (or elements, flattened), their first indices, inverse and counts", 1, 1,
        {attr_int("axis", 0, "axis of the slices; negative counts from the end (unused when flatten)"),
         attr_bool("flatten", true, "true: distinct elements of the flattened input (ONNX: no axis)"),
         attr_bool("sorted", true, "true: uniques ascending; false: in order of first occurrence")},
        infer_unique);
    def.num_outputs = 4;
    def.traits.data_dependent_output = true;
    def.imports = {onnx_rule("Unique", 1, 1, onnx_unique,
                             "`axis` (absent: flattened), `sorted`; outputs Y, indices, inverse_indices, counts", 4)};
    reg.add_op(def);
    // Static impls are keyed on the input layout; the kernels report the
    // output shapes, so networks built with static impls run them too.
    add_host_impls(reg, "unique", unique_kernel);
    add_ocl_multi_impls(reg, "unique", ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("unique", register_unique)
