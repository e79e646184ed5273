// nonzero: indices of the non-zero elements (ONNX NonZero).
//
// Output [rank, count] i64: column j holds the coordinates of the j-th non-zero
// element in row-major order. count depends on the data, so the op declares
// OpTraits::data_dependent_output: shape inference gives the bound
// [rank, element count], the buffer is sized for it, and the kernel reports the
// actual shape; consumers infer their shapes after it ran. The OpenCL impls
// (nonzero.cl) count per chunk, scan the counts and write the coordinates,
// reporting the count through the SDK's report buffer (dynrt/ocl_impl.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "nonzero_cl.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_nonzero(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const size_t rank = in.shape.rank();
    if (rank == 0) throw Error("input is a scalar " + in.shape.to_string() + "; nonzero needs rank >= 1");
    const auto r = static_cast<int64_t>(rank);
    if (!in.is_static()) return {Layout(PartialShape{Dimension(r), Dimension::dynamic()}, DataType::i64)};
    return {Layout(PartialShape{Dimension(r), Dimension(static_cast<int64_t>(in.count()))}, DataType::i64)};
}

void nonzero_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const size_t n = s.count(), rank = s.rank();
    std::vector<size_t> hits;
    for (size_t i = 0; i < n; ++i)
        if (call.get(0, i) != 0.0) hits.push_back(i);
    const size_t k = hits.size();
    auto* out = call.out<int64_t>(0);
    const std::vector<size_t> strides = strides_of(s);
    for (size_t j = 0; j < k; ++j) {
        size_t rest = hits[j];
        for (size_t d = 0; d < rank; ++d) {
            out[d * k + j] = static_cast<int64_t>(rest / strides[d]);
            rest %= strides[d];
        }
    }
    call.set_output_shape(0, Shape{static_cast<int64_t>(rank), static_cast<int64_t>(k)});
}

// Elements per chunk of nonzero.cl: one work-item counts and writes a chunk.
constexpr size_t kChunk = 256;

size_t chunks_of(const KernelParams& p) { return (p.inputs[0].count() + kChunk - 1) / kChunk; }

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = nonzero_cl;
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"CHUNK", std::to_string(kChunk) + "UL"}, jit_data_f16(p.inputs[0].dtype)};
    };
    spec.stages = [](const KernelParams&, bool) {
        return std::vector<OclStage>{
            {"nonzero_count", {OclArgRef::input(0), OclArgRef::scratch(0)}},
            {"nonzero_scan", {OclArgRef::scratch(0), OclArgRef::report()}},
            {"nonzero_write", {OclArgRef::input(0), OclArgRef::scratch(0), OclArgRef::output(0)}}};
    };
    // An empty input runs nothing: the zeroed report gives [rank, 0].
    spec.update = [](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const size_t chunks = chunks_of(p);
        runs[0].dispatch = dispatch_1d(chunks, l);
        runs[1].dispatch = dispatch_1d(chunks ? 1 : 0, l);
        runs[2].dispatch = dispatch_1d(chunks, l);
    };
    spec.scratch_bytes = [](const KernelParams& p) {
        return std::vector<size_t>{(chunks_of(p) + 1) * sizeof(int32_t)};
    };
    spec.report_ints = 1;
    spec.report_shapes = [](const KernelParams& p, const std::vector<int32_t>& r) {
        return std::vector<Shape>{{static_cast<int64_t>(p.inputs[0].shape.rank()), r[0]}};
    };
    return spec;
}

// The count and the positions are ints: at most 2^31-1 elements.
std::string check_ocl(const KernelParams& p) { return check_dtype_and_int_range(p, p.inputs[0].dtype, false); }

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("NonZero", 1, 1, import_plain(), "output i64 [rank, count]")};
}

void register_nonzero(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("nonzero", "Indices of the non-zero elements, [rank, count] i64", 1, 1, {}, infer_nonzero);
    def.traits.data_dependent_output = true;
    def.imports = onnx_rules();
    reg.add_op(def);
    // The output layout changes with the data; the static impl is keyed on the
    // input layout only (the kernel reports the actual output shape), so a
    // network built with static impls runs it too.
    add_host_impls(reg, "nonzero", nonzero_kernel, HostImplOptions{});
    // Every dtype but f64 (OpenCL C 1.2 has no double without cl_khr_fp64).
    add_ocl_multi_impls(reg, "nonzero", ocl_spec(),
                        ocl_options({DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8,
                                     DataType::i8, DataType::boolean},
                                    check_ocl));
}

}   // namespace

DYNRT_MODULE("nonzero", register_nonzero)
