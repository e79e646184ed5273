// compress: the slices of x along an axis (or the elements of x flattened)
// whose condition entry is true (ONNX Compress).
//
// The kept count depends on the data: the op declares
// OpTraits::data_dependent_output, shape inference gives the bound (x's
// shape; flattened: x's element count) and the kernels report the count. A
// condition shorter than the axis drops the slices past its end (the spec
// allows it); a longer one is refused.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compress_cl.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

size_t axis_of(const Attributes& a, const Shape& s) {
    return static_cast<size_t>(normalize_axis(a.get_int("axis"), static_cast<int64_t>(s.rank())));
}

// x as [outer, n, inner] around the axis: n slices of inner elements, outer
// times (flattened: one slice per element).
std::array<size_t, 3> blocks_of(const Attributes& a, const Shape& s) {
    if (a.get_bool("flatten")) return {1, s.count(), 1};
    const size_t axis = axis_of(a, s);
    return {dims_product(s, 0, axis), static_cast<size_t>(s[axis]), dims_product(s, axis + 1, s.rank())};
}

// The output shape for `kept` slices.
Shape compressed_shape(const Attributes& a, const Shape& s, size_t kept) {
    if (a.get_bool("flatten")) return Shape{static_cast<int64_t>(kept)};
    Shape out = s;
    out[axis_of(a, s)] = static_cast<int64_t>(kept);
    return out;
}

std::vector<Layout> infer_compress(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const Layout& cond = ctx.inputs.at(1);
    const bool flatten = ctx.attrs.get_bool("flatten");
    if (cond.dtype != DataType::boolean)
        throw Error(std::string("condition (input 1) must be bool, got ") + cond.to_string());
    expect_rank(cond, 1, "condition (input 1)");
    if (!flatten && x.shape.rank() == 0) throw Error("input 0 is a scalar; compress along `axis` needs rank >= 1");
    Dimension n;
    PartialShape bound = x.shape;
    if (flatten) {
        n = x.is_static() ? Dimension(static_cast<int64_t>(x.count())) : Dimension::dynamic();
        bound = PartialShape{n};
    } else {
        const auto axis = normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(x.shape.rank()), "axis");
        n = x.shape[static_cast<size_t>(axis)];
    }
    if (n.is_static() && cond.shape[0].is_static() && cond.shape[0].get_length() > n.get_length())
        throw Error("condition (input 1) " + cond.shape.to_string() + " is longer than the " +
                    (flatten ? "element count " : "axis dim ") + std::to_string(n.get_length()) + " of input 0 " +
                    x.shape.to_string());
    return {Layout(bound, x.dtype)};
}

void compress_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const auto [outer, n, inner] = blocks_of(call.attrs(), s);
    const size_t len = std::min<size_t>(call.in_shape(1).count(), n);
    const auto* cond = call.in<uint8_t>(1);
    std::vector<size_t> kept;
    for (size_t a = 0; a < len; ++a)
        if (cond[a]) kept.push_back(a);
    const size_t elem = byte_size(call.in_type(0));
    const auto* in = static_cast<const char*>(call.in_raw(0));
    auto* out = static_cast<char*>(call.out_raw(0));
    const size_t slice_bytes = inner * elem;
    for (size_t o = 0; o < outer; ++o)
        for (size_t j = 0; j < kept.size(); ++j)
            std::memcpy(out + (o * kept.size() + j) * slice_bytes, in + (o * n + kept[j]) * slice_bytes, slice_bytes);
    call.set_output_shape(0, compressed_shape(call.attrs(), s, kept.size()));
}

size_t slice_count(const KernelParams& p) { return blocks_of(*p.attrs, p.inputs[0].get_shape())[1]; }

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = compress_cl;
    spec.defines = [](const KernelParams& p, bool) {
        const bool flatten = p.attrs->get_bool("flatten");
        const size_t rank = p.inputs[0].shape.rank();
        JitDefines d =
            flatten ? JitDefines{}
                    : jit_axis_lines(
                          "INPUT0", rank,
                          static_cast<size_t>(normalize_axis(p.attrs->get_int("axis"), static_cast<int64_t>(rank))));
        d.emplace_back("FLATTEN", flatten ? "1" : "0");
        d.emplace_back("BITS_TYPE", ocl_bits_type(p.inputs[0].dtype));
        return d;
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{
            {"compress_scan", {OclArgRef::input(1), OclArgRef::scratch(0), OclArgRef::report()}},
            {"compress_copy", {OclArgRef::input(0), OclArgRef::scratch(0), OclArgRef::report(), OclArgRef::output(0)}}};
    };
    // No slice: nothing runs and the zeroed report keeps none.
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = dispatch_1d(slice_count(p) ? 1 : 0, l);
        runs[1].dispatch = dispatch_1d(p.inputs[0].count(), l);
    };
    spec.scratch_bytes = [](const KernelParams& p) {
        return std::vector<size_t>{checked_mul(slice_count(p), sizeof(int32_t), "compress scratch bytes")};
    };
    spec.report_ints = 1;
    spec.report_shapes = [](const KernelParams& p, const std::vector<int32_t>& r) {
        return std::vector<Shape>{compressed_shape(*p.attrs, p.inputs[0].get_shape(), static_cast<size_t>(r[0]))};
    };
    return spec;
}

// Positions and the count are ints.
std::string check_ocl(const KernelParams& p) {
    const Layout& x = p.inputs[0];
    if (x.is_static() && x.count() > 0x7fffffffu) return "input 0 has more than 2^31-1 elements";
    return {};
}

// ONNX Compress (opset 9, 11): `axis` absent means flattened.
bool onnx_compress(ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    c.set("flatten", !c.has("axis"));
    c.set("axis", c.i("axis", 0));
    c.use_inputs({0, 1});
    return true;
}

void register_compress(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "compress", "slices along axis (or elements, flattened) where condition is true; count known at run time", 2, 2,
        {attr_int("axis", 0, "axis of the slices; negative counts from the end (unused when flatten)"),
         attr_bool("flatten", true, "true: select elements of the flattened input (ONNX: no axis)")},
        infer_compress);
    def.traits.data_dependent_output = true;
    def.imports = {onnx_rule("Compress", 2, 2, onnx_compress, "`axis`; no axis: flattened (`flatten`)")};
    reg.add_op(def);
    // The static impls are keyed on the input layouts; the kernels report the
    // output shape, so networks built with static impls run them too.
    add_host_impls(reg, "compress", compress_kernel);
    add_ocl_multi_impls(reg, "compress", ocl_spec(), ocl_options({}, check_ocl));
}

}   // namespace

DYNRT_MODULE("compress", register_compress)
