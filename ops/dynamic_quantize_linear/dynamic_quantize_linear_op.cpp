// dynamic_quantize_linear: x (f32) to u8 with a scale and zero point taken
// from x's range (ONNX DynamicQuantizeLinear). Three outputs: y, y_scale (f32
// scalar), y_zero_point (u8 scalar).
//
//   lo = min(0, min(x)), hi = max(0, max(x)), y_scale = (hi - lo) / 255
//   y_zero_point = rint(saturate(-lo / y_scale)),
//   y = saturate(rint(x / y_scale) + y_zero_point)
//
// every step in f32, ties to even, as ONNX's definition; every impl computes
// exactly that. An x of zeros only (or none) has no range: y_scale is 0, the
// zero point 0 and y zeros (ONNX's formula would divide by zero). A NaN in x
// is ignored by min/max and quantizes to 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynamic_quantize_linear_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

const char* const kOp = "dynamic_quantize_linear";
const std::vector<DataType> kTypes = {DataType::f32, DataType::u8};

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    if (x.dtype != DataType::f32)
        throw Error("dynamic_quantize_linear takes an f32 x, got " + x.to_string(), node_context(ctx.node, kOp, "x"));
    return {Layout(x.shape, DataType::u8), Layout(PartialShape{}, DataType::f32), Layout(PartialShape{}, DataType::u8)};
}

// The scale and zero point of the range [lo, hi] (lo <= 0 <= hi).
void params_of(float lo, float hi, float& scale, float& zp) {
    scale = (hi - lo) / 255.0f;
    zp = scale > 0.0f ? std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)) : 0.0f;
}

uint8_t quantize_one(float x, float scale, float zp) {
    if (!(scale > 0.0f)) return 0;
    const float q = x / scale;
    if (std::isnan(q)) return 0;
    return static_cast<uint8_t>(std::clamp(std::nearbyint(q) + zp, 0.0f, 255.0f));
}

void write_params(HostCall& call, float scale, float zp) {
    call.out<float>(1)[0] = scale;
    call.out<uint8_t>(2)[0] = static_cast<uint8_t>(zp);
}

void reference(HostCall& call) {
    const float* x = call.in<float>(0);
    const size_t n = call.in_shape(0).count();
    float lo = 0.0f, hi = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    float scale = 0, zp = 0;
    params_of(lo, hi, scale, zp);
    write_params(call, scale, zp);
    for (size_t i = 0; i < n; ++i) call.out<uint8_t>(0)[i] = quantize_one(x[i], scale, zp);
}

// ---- cpu: two passes over the engine's threads -------------------------------
//
// Per-chunk min/max (branch-free, vectorised), then the quantize loop of
// quantize_linear: clamp just past [0, 255], round half to even by adding and
// subtracting 1.5 * 2^23, NaN selects 0.
DYNRT_CPU_CLONES void min_max(const float* x, size_t n, float& lo, float& hi) {
    float l = 0.0f, h = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    lo = l, hi = h;
}

DYNRT_CPU_CLONES void quantize_run(const float* x, uint8_t* y, size_t n, float scale, float zp) {
    constexpr float kMagic = 12582912.0f;
    const float qlo = -zp - 1.0f, qhi = 255.0f - zp + 1.0f;
    for (size_t j = 0; j < n; ++j) {
        float q = x[j] / scale;
        const bool nan = q != q;
        q = q < qlo ? qlo : q;
        q = q > qhi ? qhi : q;
        float v = (q + kMagic) - kMagic + zp;
        v = v < 0.0f ? 0.0f : v;
        v = v > 255.0f ? 255.0f : v;
        y[j] = static_cast<uint8_t>(nan ? 0.0f : v);
    }
}

void fast_kernel(HostCall& call) {
    const float* x = call.in<float>(0);
    const size_t n = call.in_shape(0).count();
    const CpuThreads threads(call.params().engine, checked_mul(n, 2 * sizeof(float), "dynamic_quantize_linear bytes"));
    constexpr size_t kGrain = 16384;
    const size_t chunks = (n + kGrain - 1) / kGrain;
    std::vector<float> los(chunks, 0.0f), his(chunks, 0.0f);
    parallel_for(threads, chunks, 1, [&](size_t begin, size_t end) {
        for (size_t c = begin; c < end; ++c) min_max(x + c * kGrain, std::min(kGrain, n - c * kGrain), los[c], his[c]);
    });
    const float lo = chunks == 0 ? 0.0f : *std::min_element(los.begin(), los.end());
    const float hi = chunks == 0 ? 0.0f : *std::max_element(his.begin(), his.end());
    float scale = 0, zp = 0;
    params_of(lo, hi, scale, zp);
    write_params(call, scale, zp);
    uint8_t* y = call.out<uint8_t>(0);
    if (!(scale > 0.0f)) {
        std::fill(y, y + n, uint8_t{0});
        return;
    }
    parallel_for(threads, n, kGrain,
                 [&](size_t begin, size_t end) { quantize_run(x + begin, y + begin, end - begin, scale, zp); });
}

// ---- OpenCL ----------------------------------------------------------------

// Two stages: one work-group of up to 64 items (1 below 256 elements) reduces min/max and writes
// y_scale and y_zero_point; then one work-item per element quantizes.
constexpr size_t kGroup = 64;

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = dynamic_quantize_linear_cl;
    spec.defines = [](const KernelParams&, bool) { return JitDefines{{"GROUP_MAX", std::to_string(kGroup)}}; };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{{"dql_range", {OclArgRef::inputs(), OclArgRef::outputs()}},
                                     {"dql_quantize", {OclArgRef::inputs(), OclArgRef::outputs()}}};
    };
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        // One work-item for short x: PoCL crashed running a 64-item group
        // over an x whose length is a small literal (rms_norm saw the same).
        size_t g = p.inputs[0].count() >= 256 ? kGroup : 1;
        while (g > 1 && l.max_work_group_size != 0 && g > l.max_work_group_size) g /= 2;
        runs[0].dispatch = OclDispatch{};
        runs[0].dispatch.gws[0] = g;
        runs[0].dispatch.lws[0] = g;
        runs[1].dispatch = dispatch_1d(p.inputs[0].count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

void register_dynamic_quantize_linear(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp, "x (f32) to u8 with y_scale and y_zero_point from x's range", 1, 1, {}, infer);
    def.num_outputs = 3;
    def.imports = {onnx_rule("DynamicQuantizeLinear", 1, 1, import_plain(), "x f32 to u8, y_scale, y_zero_point", 3)};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options(kTypes));
    add_host_impls(reg, kOp, fast_kernel, optimised_host_options(kTypes));
    add_ocl_multi_impls(reg, kOp, ocl_spec(), ocl_options(kTypes));
}

}   // namespace

DYNRT_MODULE("dynamic_quantize_linear", register_dynamic_quantize_linear)
