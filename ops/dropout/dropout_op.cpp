// dropout at inference (ONNX Dropout): the output is the input, unchanged.
//
// Two ops:
//   - `dropout`: y = x. Output 0 holds input 0's bytes, so the op is a view
//     (OpTraits::view): on plain, unpadded layouts the flow runs no kernel;
//     the impls are the shared byte copy for the other cases.
//   - `dropout_with_mask`: y = x and a boolean mask of x's shape, every
//     element true (nothing was dropped). A view cannot serve it: the mask
//     needs a kernel.
// Training-mode dropout (random) is not an op: the import rule refuses it
// unless its ratio is 0, where it is the identity too.
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "dropout_cl.hpp"
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_copy.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_copy.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

std::vector<Layout> infer_dropout(const ShapeInferContext& ctx) { return {ctx.inputs.at(0)}; }

std::vector<Layout> infer_with_mask(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    return {in, Layout(in.shape, DataType::boolean)};
}

void reference_with_mask(HostCall& call) {
    const size_t n = call.in_shape(0).count();
    if (n == 0) return;
    std::memcpy(call.out_raw(0), call.in_raw(0), n * byte_size(call.in_type(0)));
    std::memset(call.out_raw(1), 1, n);
}

// One work-item per element: the element's bits copied (f16 included, as
// ushort), the mask set.
OclKernelSpec ocl_with_mask_spec() {
    OclKernelSpec spec;
    spec.source = dropout_cl;
    spec.kernel_name = "dropout_with_mask";
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.inputs.at(0).dtype)}};
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// True when the scalar input k has a known value, put in `v`.
bool scalar_value(const ImportContext& c, size_t k, double& v) {
    const HostTensor* t = c.value(k);
    if (!t || t->count() != 1) return false;
    v = t->get_as_double(0);
    return true;
}

std::string format_ratio(double r) {
    std::ostringstream os;
    os << r;
    return os.str();
}

// Training mode (input 2 from opset 12, is_test = 0 before opset 7) drops
// random elements unless the ratio is 0.
bool refuse_training(ImportContext& c) {
    const bool old_training = c.opset() < 7 && c.i("is_test", 0) == 0;
    double training = old_training ? 1.0 : 0.0;
    if (c.present(2) && !scalar_value(c, 2, training))
        return c.unsupported("Dropout's training_mode input has no value known at import (training mode is random)");
    if (training == 0.0) return true;
    double ratio = c.opset() >= 12 ? 0.5 : c.f("ratio", 0.5);
    if (c.opset() >= 12 && c.present(1) && !scalar_value(c, 1, ratio))
        return c.unsupported("Dropout in training mode with a ratio unknown at import (random)");
    if (ratio != 0.0)
        return c.unsupported("Dropout in training mode with ratio " + format_ratio(ratio) +
                             " drops random elements, which dynrt does not do");
    return true;
}

bool onnx_dropout(ImportContext& c) {
    if (!c.only_attrs({"seed", "ratio", "is_test"})) return false;
    if (!refuse_training(c)) return false;
    if (c.node().outputs > 1) c.out.op = "dropout_with_mask";
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Dropout", 1, 3, onnx_dropout,
                      "inference: the identity (a view), the mask output (dropout_with_mask) all true; training mode "
                      "only with ratio 0",
                      2)};
}

void register_dropout(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("dropout", "Dropout at inference: the input unchanged (ONNX Dropout)", 1, 1, {}, infer_dropout);
    def.traits.view = true;   // plain, unpadded layouts: the output is a view of the input
    def.imports = onnx_rules();
    reg.add_op(def);
    add_copy_host_impls(reg, "dropout");
    add_copy_ocl_impls(reg, "dropout");

    OpDefinition mask =
        op_def("dropout_with_mask", "Dropout at inference with its mask: the input unchanged and an all-true mask", 1,
               1, {}, infer_with_mask);
    mask.num_outputs = 2;
    reg.add_op(mask);
    add_host_impls(reg, "dropout_with_mask", reference_with_mask);
    add_ocl_impls(reg, "dropout_with_mask", ocl_with_mask_spec());
}

}   // namespace

DYNRT_MODULE("dropout", register_dropout)
