// Losses over class scores (nll_loss, softmax_cross_entropy): an input
// [N, C, d1..dk], a class per position in a target [N, d1..dk] (i32 or i64),
// optional per-class weights [C], the `reduction` none / sum / mean and the
// `ignore_index` a target may hold to contribute nothing. What the two ops
// share on the host: shape inference of the loss, the target check, the
// reduction and the ONNX attributes. The device side is dynrt/ocl_loss.cl
// (dynrt/ocl_snippets.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

enum class LossReduction { none, sum, mean };

// ignore_index when unset: no target is ignored.
constexpr int64_t kNoIgnoreIndex = std::numeric_limits<int64_t>::min();

// What a loss op calls its three inputs, in messages and error fields.
struct LossInputs {
    std::string input, target, weight;
};

// The `reduction` (default mean) and `ignore_index` attributes; `target`
// names the input ignore_index applies to.
std::vector<AttrSpec> loss_attrs(const std::string& target);
LossReduction loss_reduction_of(const std::string& op, const Attributes& a);

// The loss of input 0, target 1 and optional weight 2: [N, d1..dk] of the
// input's dtype with reduction none, else a scalar. Refuses an input that is
// not floating-point or has rank < 2, a target that is not i32/i64, has
// another rank or differs in a dim, and a weight that is not [C] of the
// input's dtype.
Layout infer_loss(const ShapeInferContext& ctx, const std::string& op, const LossInputs& names);

// Host: the targets (input 1), each checked to be ignore_index or in [0, C):
// an error names the value, its position, C and the input's shape.
std::vector<int64_t> loss_targets(const HostCall& call, const std::string& op, const LossInputs& names);

// Host: writes output 0 from the loss of every position j of `targets`,
// `loss_at(j, w)` (w: the weight of position j, 0 where ignored): each loss
// (none), their sum, or the sum over the sum of the weights (mean; 0 / 0
// gives NaN, as in ONNX's reference). `loss_at` is called once per position,
// in order.
void reduce_loss(HostCall& call, LossReduction red, const std::vector<int64_t>& targets,
                 const std::function<double(size_t j, double& w)>& loss_at);

// ONNX: `reduction` and `ignore_index` of NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, inputs 0 to 2.
bool onnx_loss(ImportContext& c);

}   // namespace dynrt
