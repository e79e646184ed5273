// softmax: along one axis (or, with `coerce_2d`, over every dim from `axis`
// to the last, flattened), by `mode`:
//   softmax      exp(x - max) / sum(exp(x - max))
//   log_softmax  x - max - log(sum(exp(x - max)))
//   hardmax      1 at the first maximum of the row (a NaN counts as the
//                maximum, as numpy's argmax does), 0 elsewhere
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
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"
#include "softmax_cl.hpp"

namespace {

using dynrt::DataType;

enum class Mode { softmax, log_softmax, hardmax };
const std::vector<std::string> kModes = {"softmax", "log_softmax", "hardmax"};

Mode mode_of(const dynrt::Attributes& a) {
    return static_cast<Mode>(dynrt::mode_index("softmax", kModes, a.get_string("mode")));
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    mode_of(ctx.attrs);
    const dynrt::Layout& in = ctx.inputs.at(0);
    if (!dynrt::is_floating(in.dtype)) throw dynrt::Error("softmax takes floating-point input, got " + in.to_string());
    if (in.shape.rank() == 0) throw dynrt::Error("softmax needs an input of rank >= 1, got a scalar " + in.to_string());
    dynrt::normalize_axis(ctx.attrs.get_int("axis"), static_cast<int64_t>(in.shape.rank()));
    return {dynrt::Layout(in.shape, in.dtype)};
}

// The dims a row runs over: [begin, end) with end = begin + 1, or the rank
// under `coerce_2d`.
struct RowDims {
    size_t begin = 0, end = 0;
};

RowDims row_dims(const dynrt::Attributes& a, size_t rank) {
    const size_t axis = dynrt::axis_attr(a, rank);
    return {axis, a.get_bool("coerce_2d") ? rank : axis + 1};
}

// Index of the row's maximum: the first one, a NaN beating every number.
size_t argmax(const std::vector<double>& row) {
    size_t best = 0;
    for (size_t k = 1; k < row.size() && !std::isnan(row[best]); ++k)
        if (std::isnan(row[k]) || row[k] > row[best]) best = k;
    return best;
}

// Normalises one row in place.
void normalise(Mode mode, std::vector<double>& row) {
    if (row.empty()) return;
    if (mode == Mode::hardmax) {
        const size_t best = argmax(row);
        for (size_t k = 0; k < row.size(); ++k) row[k] = k == best ? 1.0 : 0.0;
        return;
    }
    const double mx = *std::max_element(row.begin(), row.end());
    double sum = 0.0;
    for (double v : row) sum += std::exp(v - mx);
    const double log_sum = std::log(sum);
    for (double& v : row) v = mode == Mode::softmax ? std::exp(v - mx) / sum : v - mx - log_sum;
}

void kernel(dynrt::HostCall& call) {
    const dynrt::Shape& s = call.in_shape(0);
    const Mode mode = mode_of(call.attrs());
    const RowDims r = row_dims(call.attrs(), s.rank());
    const size_t outer = dynrt::dims_product(s, 0, r.begin), len = dynrt::dims_product(s, r.begin, r.end);
    const size_t inner = dynrt::dims_product(s, r.end, s.rank());
    std::vector<double> row(len);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t i = 0; i < inner; ++i) {
            const size_t base = o * len * inner + i;
            for (size_t k = 0; k < len; ++k) row[k] = call.get(0, base + k * inner);
            normalise(mode, row);
            for (size_t k = 0; k < len; ++k) call.set(0, base + k * inner, row[k]);
        }
    }
}

// ---- cpu: vectorised f32 rows over the engine's threads ---------------------
//
// softmax and log_softmax over contiguous rows (the normalised dims are the
// last ones, as in attention), in float with dynrt/cpu_vec_math.hpp; other
// layouts, hardmax, f16 and f64 run on the reference impl.

// Sums in 16 lanes so the loop vectorises without reassociating a scalar sum.
constexpr size_t kLanes = 16;

DYNRT_CPU_CLONES void fast_row(Mode mode, const float* x, float* y, size_t n) {
    float mx = x[0];
    for (size_t k = 1; k < n; ++k) mx = x[k] > mx ? x[k] : mx;
    float lanes[kLanes] = {};
    size_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (size_t l = 0; l < kLanes; ++l) {
            const float e = dynrt::vec::exp(x[k + l] - mx);
            if (mode == Mode::softmax) y[k + l] = e;
            lanes[l] += e;
        }
    for (; k < n; ++k) {
        const float e = dynrt::vec::exp(x[k] - mx);
        if (mode == Mode::softmax) y[k] = e;
        lanes[0] += e;
    }
    float sum = 0.0f;
    for (float l : lanes) sum += l;
    if (mode == Mode::softmax) {
        const float inv = 1.0f / sum;
        for (size_t i = 0; i < n; ++i) y[i] *= inv;
    } else {
        const float shift = mx + dynrt::vec::log(sum);
        for (size_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    }
}

void fast_kernel(dynrt::HostCall& call) {
    const dynrt::Shape& s = call.in_shape(0);
    const Mode mode = mode_of(call.attrs());
    const RowDims r = row_dims(call.attrs(), s.rank());
    const size_t len = dynrt::dims_product(s, r.begin, r.end);
    if (len == 0) return;
    const size_t rows = s.count() / len;
    const float* x = call.in<float>(0);
    float* y = call.out<float>(0);
    const dynrt::CpuThreads threads(call.params().engine);
    dynrt::parallel_for(threads, rows, std::max<size_t>(1, 16384 / len), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) fast_row(mode, x + i * len, y + i * len, len);
    });
}

std::string fast_supported(const dynrt::KernelParams& p) {
    const Mode mode = mode_of(*p.attrs);
    if (mode == Mode::hardmax) return "no vectorised loop for hardmax";
    const size_t rank = p.inputs.at(0).shape.rank();
    if (rank == 0) return "a scalar input";
    if (row_dims(*p.attrs, rank).end != rank) return "the rows are not contiguous (axis is not the last)";
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

using dynrt::JitDefines;
using dynrt::KernelParams;

RowDims ocl_rows(const KernelParams& p) { return row_dims(*p.attrs, p.inputs.at(0).shape.rank()); }

dynrt::OclKernelSpec softmax_ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = softmax_cl;
    spec.kernel_name = "softmax_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const RowDims r = ocl_rows(p);
        const std::string inner = dynrt::jit_dims_product("INPUT0", rank, r.end, rank);
        const DataType t = p.inputs.at(0).dtype;
        JitDefines d = {{"ACC_T", "FLOAT_ACC"},
                        {"REAL", t == DataType::f64 ? "double" : "float"},
                        {"MODE", std::to_string(static_cast<int>(mode_of(*p.attrs)))},
                        {"AXIS_LEN", dynrt::jit_dims_product("INPUT0", rank, r.begin, r.end)},
                        {"INNER", inner},
                        {"OUTER_INNER", "(" + dynrt::jit_dims_product("INPUT0", rank, 0, r.begin) + "*" + inner + ")"}};
        d.push_back(dynrt::jit_data_f16(t));
        return d;
    };
    // One work-item per row; an empty row means nothing to write.
    spec.dispatch = [](const KernelParams& p, const dynrt::OclDeviceLimits& limits) {
        const dynrt::Shape s = p.inputs.at(0).get_shape();
        const RowDims r = ocl_rows(p);
        if (dynrt::dims_product(s, r.begin, r.end) == 0) return dynrt::dispatch_1d(0, limits);
        return dynrt::dispatch_1d(dynrt::dims_product(s, 0, r.begin) * dynrt::dims_product(s, r.end, s.rank()), limits);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// Opset 13 on: one axis, default -1. Before: the input is coerced to 2-D at
// `axis` (default 1) and each row of the flattened trailing dims normalised.
dynrt::ImportFn onnx_mode(const std::string& mode) {
    return [mode](dynrt::ImportContext& c) {
        if (!c.only_attrs({"axis"})) return false;
        const bool coerce = c.opset() < 13;
        c.set("mode", mode);
        c.set("axis", c.i("axis", coerce ? 1 : -1));
        c.set("coerce_2d", coerce);
        c.use_inputs({0});
        return true;
    };
}

std::vector<dynrt::ImportRule> onnx_rules() {
    const std::string doc = " `axis`: opset >= 13 one axis (default -1); older opsets `coerce_2d` (default axis 1)";
    return {dynrt::onnx_rule("Softmax", 1, 1, onnx_mode("softmax"), "`mode` softmax;" + doc),
            dynrt::onnx_rule("LogSoftmax", 1, 1, onnx_mode("log_softmax"), "`mode` log_softmax;" + doc),
            dynrt::onnx_rule("Hardmax", 1, 1, onnx_mode("hardmax"), "`mode` hardmax;" + doc)};
}

void register_softmax(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "softmax", "Numerically stable softmax, log-softmax or hardmax along `axis`", 1, 1,
        {dynrt::attr_int("axis", -1, "axis to normalise over (negative counts from the end)"),
         dynrt::attr_string("mode", std::string("softmax"), kModes, "softmax, log_softmax or hardmax"),
         dynrt::attr_bool("coerce_2d", false, "normalise over every dim from `axis` on, flattened (ONNX opset < 13)")},
        infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::f64};
    dynrt::add_host_impls(reg, "softmax", kernel, dynrt::host_options(dtypes));
    dynrt::add_host_impls(reg, "softmax", fast_kernel, dynrt::optimised_host_options({DataType::f32}, fast_supported));
    dynrt::add_ocl_impls(reg, "softmax", softmax_ocl_spec(), dynrt::ocl_options(dtypes));
}

}   // namespace

DYNRT_MODULE("softmax", register_softmax)
