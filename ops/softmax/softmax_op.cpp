// softmax: exp(x - max) / sum(exp(x - max)) along one axis.
//
// Subtracting the row maximum keeps exp() from overflowing for large inputs
// without changing the result; the sum is kept in double so long rows (vocab
// sized) do not lose the small terms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"
#include "softmax_cl.hpp"

namespace {

using dynrt::DataType;

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& in = ctx.inputs.at(0);
    if (!dynrt::is_floating(in.dtype)) throw dynrt::Error("softmax takes floating-point input, got " + in.to_string());
    if (in.shape.rank() == 0) throw dynrt::Error("softmax needs an input of rank >= 1, got a scalar " + in.to_string());
    dynrt::normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(in.shape.rank()));
    return {dynrt::Layout(in.shape, in.dtype)};
}

void kernel(dynrt::HostCall& call) {
    const dynrt::Shape& s = call.in_shape(0);
    const size_t axis =
        static_cast<size_t>(dynrt::normalize_axis(call.attrs().get_int("axis"), static_cast<int64_t>(s.rank())));
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(s[d]);
    for (size_t d = axis + 1; d < s.rank(); ++d) inner *= static_cast<size_t>(s[d]);
    const size_t len = static_cast<size_t>(s[axis]);
    std::vector<double> row(len);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t i = 0; i < inner; ++i) {
            const size_t base = o * len * inner + i;
            double mx = -std::numeric_limits<double>::infinity();
            for (size_t k = 0; k < len; ++k) {
                row[k] = call.get(0, base + k * inner);
                mx = std::max(mx, row[k]);
            }
            double sum = 0.0;
            for (size_t k = 0; k < len; ++k) {
                row[k] = std::exp(row[k] - mx);
                sum += row[k];
            }
            for (size_t k = 0; k < len; ++k) call.set(0, base + k * inner, row[k] / sum);
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

using dynrt::JitDefines;
using dynrt::KernelParams;
using dynrt::kShapeInfoDims;
using dynrt::Shape;

size_t softmax_axis(const KernelParams& p) { return dynrt::axis_attr(*p.attrs, p.inputs.at(0).shape.rank()); }

dynrt::OclKernelSpec softmax_ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = softmax_cl;
    spec.kernel_name = "softmax_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const size_t axis = softmax_axis(p);
        JitDefines d = dynrt::jit_axis_lines("INPUT0", rank, axis);
        d.insert(d.begin(), {"ACC_T", "FLOAT_ACC"});
        d.push_back(dynrt::jit_data_f16(p.inputs.at(0).dtype));
        return d;
    };
    // One work-item per row; an empty axis means nothing to write.
    spec.dispatch = [](const KernelParams& p, const dynrt::OclDeviceLimits& limits) {
        return dynrt::dispatch_lines(p.inputs.at(0).get_shape(), softmax_axis(p), limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_softmax(dynrt::ImportContext& c) {
    if (!c.only_attrs({"axis"})) return false;
    const int64_t rank = static_cast<int64_t>(c.rank(0));
    if (c.opset() >= 13) {
        c.set("axis", c.i("axis", -1));
    } else {
        // Before opset 13 the input is coerced to 2-D at `axis` and normalised
        // over the flattened trailing dims: the same as this op only when
        // `axis` is the last dim.
        int64_t axis = c.i("axis", 1);
        if (axis < 0) axis += rank;
        if (axis != rank - 1)
            return c.unsupported("Softmax opset " + std::to_string(c.opset()) + " with axis " + std::to_string(axis) +
                                 " of rank " + std::to_string(rank) + " normalises over flattened dims");
        c.set("axis", int64_t{-1});
    }
    c.use_inputs({0});
    return true;
}

std::vector<dynrt::ImportRule> onnx_rules() {
    return {dynrt::onnx_rule("Softmax", 1, 1, onnx_softmax,
                             "opset >= 13: `axis` (default -1); older opsets' flattening semantics only when "
                             "`axis` is the last dim")};
}

void register_softmax(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def =
        dynrt::op_def("softmax", "Numerically stable softmax along `axis`", 1, 1,
                      {dynrt::attr_int("axis", -1, "axis to normalise over (negative counts from the end)")}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    dynrt::add_host_impls(reg, "softmax", kernel, dynrt::host_options(dtypes));
    dynrt::add_ocl_impls(reg, "softmax", softmax_ocl_spec(), dynrt::ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("softmax", register_softmax)
