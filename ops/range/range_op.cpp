// range: the sequence start, start + delta, ... up to limit, exclusive (ONNX
// Range). start, limit and delta are scalars of one numeric type, the output's;
// the output has max(ceil((limit - start) / delta), 0) elements, element i is
// start + i * delta.
//
// The length depends on the values, so the three inputs are value inputs:
// shape inference reads them when they are known (constants, or at run time
// once the producers ran) and gives a dynamic dim until then. delta 0, a
// length that is not finite (NaN or infinite inputs) and a length above 2^60
// elements are errors raised there, before any buffer is sized.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "range_cl.hpp"

namespace {

using namespace dynrt;

const char* const kNames[] = {"start", "limit", "delta"};

Error range_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "range", field));
}

bool is_integer(DataType t) { return !is_floating(t) && t != DataType::boolean; }

// ceil((limit - start) / delta), at least 0, of integers: exact for any int64
// inputs (the span and the step as unsigned magnitudes, which cannot overflow).
uint64_t integer_length(int64_t start, int64_t limit, int64_t delta) {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    if (delta > 0 ? limit <= start : limit >= start) return 0;
    const uint64_t span = delta > 0 ? u(limit) - u(start) : u(start) - u(limit);
    const uint64_t step = delta > 0 ? u(delta) : uint64_t{0} - u(delta);
    return span / step + (span % step != 0 ? 1 : 0);
}

int64_t range_length(const ShapeInferContext& ctx, DataType t, const HostTensor* const v[3]) {
    const std::string what = std::string("range(start ") + std::to_string(v[0]->get_as_double(0)) + ", limit " +
                             std::to_string(v[1]->get_as_double(0)) + ", delta " +
                             std::to_string(v[2]->get_as_double(0)) + ")";
    if (v[2]->get_as_double(0) == 0.0) throw range_error(ctx, "delta", what + ": delta is 0, the sequence never ends");
    if (is_integer(t)) {
        const uint64_t n = integer_length(v[0]->to_int64()[0], v[1]->to_int64()[0], v[2]->to_int64()[0]);
        if (n > kMaxElements) throw range_error(ctx, "limit", what + " has more than 2^60 elements");
        return static_cast<int64_t>(n);
    }
    const double n = std::ceil((v[1]->get_as_double(0) - v[0]->get_as_double(0)) / v[2]->get_as_double(0));
    if (std::isnan(n)) throw range_error(ctx, "limit", what + ": the length is not a number");
    if (n > static_cast<double>(kMaxElements)) throw range_error(ctx, "limit", what + " has more than 2^60 elements");
    return n <= 0 ? 0 : static_cast<int64_t>(n);
}

std::vector<Layout> infer_range(const ShapeInferContext& ctx) {
    const DataType t = ctx.inputs.at(0).dtype;
    for (size_t i = 0; i < 3; ++i) {
        const Layout& l = ctx.inputs.at(i);
        if (l.shape.rank() != 0)
            throw range_error(ctx, kNames[i], std::string(kNames[i]) + " must be a scalar, got " + l.to_string());
        if (l.dtype != t)
            throw range_error(ctx, kNames[i],
                              "start, limit and delta must have one data type, got start " + ctx.inputs[0].to_string() +
                                  " and " + kNames[i] + " " + l.to_string());
    }
    if (t == DataType::boolean) throw range_error(ctx, "start", "range takes numbers, got boolean inputs");
    const HostTensor* const v[3] = {ctx.value(0), ctx.value(1), ctx.value(2)};
    if (v[0] == nullptr || v[1] == nullptr || v[2] == nullptr)
        return {Layout(PartialShape{Dimension::dynamic()}, t)};   // known once the values are
    return {Layout(PartialShape{Dimension(range_length(ctx, t, v))}, t)};
}

// ---- reference ------------------------------------------------------------

void range_kernel(HostCall& call) {
    const size_t n = call.out_shape(0).count();
    if (is_integer(call.out_type(0))) {
        // start + i * delta lies between start and limit: it fits the type.
        const int64_t start = call.get_ints(0)[0], delta = call.get_ints(2)[0];
        auto* out64 = call.out_type(0) == DataType::i64 ? call.out<int64_t>(0) : nullptr;   // exact beyond 2^53
        for (size_t i = 0; i < n; ++i) {
            const int64_t v = start + static_cast<int64_t>(i) * delta;
            if (out64 != nullptr) out64[i] = v;
            else call.set(0, i, static_cast<double>(v));
        }
        return;
    }
    const double start = call.get(0, 0), delta = call.get(2, 0);
    for (size_t i = 0; i < n; ++i) call.set(0, i, start + static_cast<double>(i) * delta);
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec range_ocl_spec() {
    OclKernelSpec spec;
    spec.source = range_cl;
    spec.kernel_name = "range_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.outputs.at(0).dtype;
        return JitDefines{jit_data_f16(t), {"RANGE_INTEGER", is_integer(t) ? "1" : "0"}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Range", 3, 3, import_plain(), "start, limit, delta as inputs 0-2 (read by value)")};
}

void register_range(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("range", "start, start + delta, ... below limit (above it for a negative delta); scalar inputs", 3, 3,
               {}, infer_range);
    def.value_inputs = {0, 1, 2};
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                         DataType::i64, DataType::i8,  DataType::u8};
    add_host_impls(reg, "range", range_kernel, host_options(types));
    add_ocl_impls(reg, "range", range_ocl_spec(), ocl_options(types));
}

}   // namespace

DYNRT_MODULE("range", register_range)
