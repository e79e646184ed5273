// nll_loss: negative log-likelihood loss (ONNX NegativeLogLikelihoodLoss).
// input [N, C, d1..dk] holds log-probabilities, target [N, d1..dk] a class
// in [0, C) per position, the optional weight [C] a weight per class:
//   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
// and 0 (with weight 0) where target equals ignore_index. `reduction` none
// keeps the per-position losses, sum adds them, mean divides the sum by the
// sum of the weights of the positions not ignored (0 / 0 gives NaN, as in
// ONNX's reference).
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_loss.hpp"
#include "dynrt/op_loss.hpp"
#include "dynrt/op_sdk.hpp"
#include "nll_loss_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "nll_loss";
const LossInputs kNames = {"input", "target", "weight"};

std::vector<Layout> infer(const ShapeInferContext& ctx) { return {infer_loss(ctx, kOp, kNames)}; }

// ---- reference ------------------------------------------------------------

void kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const int64_t ignore = call.attrs().get_int("ignore_index");
    const size_t c_len = s[1], inner = dims_product(s, 2, s.rank());
    const std::vector<int64_t> t = loss_targets(call, kOp, kNames);
    const bool has_w = call.num_inputs() > 2;
    reduce_loss(call, loss_reduction_of(kOp, call.attrs()), t, [&](size_t j, double& w) {
        if (t[j] == ignore) return 0.0;
        const auto c = static_cast<size_t>(t[j]);
        w = has_w ? call.get(2, c) : 1.0;
        return -call.get(0, (j / inner * c_len + c) * inner + j % inner) * w;
    });
}

// ---- registration ---------------------------------------------------------

void register_nll_loss(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Negative log-likelihood loss of log-probabilities at target classes (ONNX NegativeLogLikelihoodLoss)", 2,
        3, loss_attrs("target"), infer);
    def.imports = {onnx_rule("NegativeLogLikelihoodLoss", 2, 3, onnx_loss, "`reduction`, `ignore_index`")};
    reg.add_op(def);
    // OpenCL: dynrt/ocl_loss.cl, then nll_loss.cl.
    static const std::string kSource = ocl_loss_source(nll_loss_cl);
    add_loss_impls(reg, kOp, kernel, kSource.c_str(), "nll_loss_ref", "target");
}

}   // namespace

DYNRT_MODULE("nll_loss", register_nll_loss)
