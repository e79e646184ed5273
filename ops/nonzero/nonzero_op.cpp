// nonzero: indices of the non-zero elements (ONNX NonZero).
//
// Output [rank, count] i64: column j holds the coordinates of the j-th non-zero
// element in row-major order. count depends on the data, so the op declares
// OpTraits::data_dependent_output: shape inference gives the bound
// [rank, element count], the buffer is sized for it, and the kernel reports the
// actual shape; consumers infer their shapes after it ran.
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

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
}

}   // namespace

DYNRT_MODULE("nonzero", register_nonzero)
