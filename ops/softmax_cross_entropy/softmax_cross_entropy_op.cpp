// softmax_cross_entropy: softmax cross-entropy loss (ONNX
// SoftmaxCrossEntropyLoss). scores [N, C, d1..dk], labels [N, d1..dk] (a
// class in [0, C) per position), optional weights [C]:
//   log_prob[n, :, d] = log_softmax(scores[n, :, d])           (output 1)
//   loss[n, d] = -log_prob[n, labels[n, d], d] * weights[labels[n, d]]
// and 0 (with weight 0) where the label equals ignore_index. `reduction` none
// keeps the per-position losses, sum adds them, mean divides the sum by the
// sum of the weights of the positions not ignored (0 / 0 gives NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_loss.hpp"
#include "dynrt/op_loss.hpp"
#include "dynrt/op_sdk.hpp"
#include "softmax_cross_entropy_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "softmax_cross_entropy";
const LossInputs kNames = {"scores", "labels", "weights"};

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    return {infer_loss(ctx, kOp, kNames), Layout(in.shape, in.dtype)};
}

// ---- reference ------------------------------------------------------------

// Writes log_softmax over the classes of position j (output 1) into `row` too.
void log_softmax_at(HostCall& call, size_t j, size_t c_len, size_t inner, std::vector<double>& row) {
    const size_t base = j / inner * c_len * inner + j % inner;
    for (size_t c = 0; c < c_len; ++c) row[c] = call.get(0, base + c * inner);
    const double mx = *std::max_element(row.begin(), row.end());
    double sum = 0.0;
    for (double v : row) sum += std::exp(v - mx);
    const double log_sum = std::log(sum);
    for (size_t c = 0; c < c_len; ++c) {
        row[c] = row[c] - mx - log_sum;
        call.set(1, base + c * inner, row[c]);
    }
}

void kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const int64_t ignore = call.attrs().get_int("ignore_index");
    const size_t c_len = s[1], inner = dims_product(s, 2, s.rank());
    const std::vector<int64_t> t = loss_targets(call, kOp, kNames);
    const bool has_w = call.num_inputs() > 2;
    std::vector<double> row(c_len);
    reduce_loss(call, loss_reduction_of(kOp, call.attrs()), t, [&](size_t j, double& w) {
        if (c_len > 0) log_softmax_at(call, j, c_len, inner, row);
        if (t[j] == ignore) return 0.0;
        const auto c = static_cast<size_t>(t[j]);
        w = has_w ? call.get(2, c) : 1.0;
        return -row[c] * w;
    });
}

// ---- registration ---------------------------------------------------------

void register_sce(ModuleRegistrar& reg) {
    OpDefinition def = op_def(kOp,
                              "Softmax cross-entropy loss of scores at label classes, and the log-probabilities (ONNX "
                              "SoftmaxCrossEntropyLoss)",
                              2, 3, loss_attrs("label"), infer);
    def.num_outputs = 2;
    def.imports = {
        onnx_rule("SoftmaxCrossEntropyLoss", 2, 3, onnx_loss, "`reduction`, `ignore_index`; output log_prob", 2)};
    reg.add_op(def);
    // OpenCL: dynrt/ocl_loss.cl, then softmax_cross_entropy.cl.
    static const std::string kSource = ocl_loss_source(softmax_cross_entropy_cl);
    add_loss_impls(reg, kOp, kernel, kSource.c_str(), "softmax_cross_entropy_ref", "labels");
}

}   // namespace

DYNRT_MODULE("softmax_cross_entropy", register_sce)
