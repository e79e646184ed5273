// nll_loss: negative log-likelihood loss (ONNX NegativeLogLikelihoodLoss).
// input [N, C, d1..dk] holds log-probabilities, target [N, d1..dk] a class
// in [0, C) per position, the optional weight [C] a weight per class:
//   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
// and 0 (with weight 0) where target equals ignore_index. `reduction` none
// keeps the per-position losses, sum adds them, mean divides the sum by the
// sum of the weights of the positions not ignored (0 / 0 gives NaN, as in
// ONNX's reference).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"
#include "nll_loss_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "nll_loss";
constexpr int64_t kNoIgnore = std::numeric_limits<int64_t>::min();   // ignore_index unset
const std::vector<std::string> kReductions = {"none", "sum", "mean"};
enum class Reduction { none, sum, mean };

Reduction reduction_of(const Attributes& a) {
    return static_cast<Reduction>(mode_index(kOp, kReductions, a.get_string("reduction")));
}

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

void check_dim(const Dimension& a, const Dimension& b, const std::string& what, const ShapeInferContext& ctx,
               const char* field) {
    if (a.is_static() && b.is_static() && a.get_length() != b.get_length())
        throw Error(what, node_context(ctx.node, kOp, field));
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Reduction red = reduction_of(ctx.attrs);
    const Layout& in = ctx.inputs.at(0);
    const Layout& target = ctx.inputs.at(1);
    const std::string shapes = "input " + in.to_string() + " and target " + target.to_string();
    if (!is_floating(in.dtype))
        throw Error("input must be floating-point, got " + in.to_string(), node_context(ctx.node, kOp, "input"));
    if (!is_index_type(target.dtype))
        throw Error("target must be i32 or i64, got " + target.to_string(), node_context(ctx.node, kOp, "target"));
    const size_t rank = in.shape.rank();
    if (rank < 2)
        throw Error("input " + in.to_string() + " needs rank >= 2 ([N, C, ...])", node_context(ctx.node, kOp, "input"));
    if (target.shape.rank() != rank - 1)
        throw Error(shapes + ": target must have rank " + std::to_string(rank - 1),
                    node_context(ctx.node, kOp, "target"));
    std::vector<Dimension> out;
    for (size_t d = 0; d + 1 < rank; ++d) {
        const Dimension& a = in.shape[d == 0 ? 0 : d + 1];
        const Dimension& b = target.shape[d];
        check_dim(a, b, shapes + ": target dim " + std::to_string(d) + " differs from the input's", ctx, "target");
        out.push_back(b.is_static() ? b : a);
    }
    if (ctx.inputs.size() > 2) {
        const Layout& w = ctx.inputs.at(2);
        if (w.dtype != in.dtype || w.shape.rank() != 1)
            throw Error("weight " + w.to_string() + " must be 1-D of the input's type, input " + in.to_string(),
                        node_context(ctx.node, kOp, "weight"));
        check_dim(w.shape[0], in.shape[1],
                  "weight " + w.to_string() + " must have C = dim 1 of input " + in.to_string(), ctx, "weight");
    }
    if (red != Reduction::none) return {Layout(PartialShape(), in.dtype)};
    return {Layout(PartialShape(std::move(out)), in.dtype)};
}

// ---- reference ------------------------------------------------------------

Error target_error(const HostCall& call, int64_t value, size_t at) {
    ErrorContext where;
    where.node = call.node();
    where.op = kOp;
    return Error("target " + std::to_string(value) + " (at position " + std::to_string(at) + ") is out of range [0, " +
                     std::to_string(call.in_shape(0)[1]) + ") of input " + call.in_shape(0).to_string(),
                 where);
}

void kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const Reduction red = reduction_of(call.attrs());
    const int64_t ignore = call.attrs().get_int("ignore_index");
    const size_t c_len = s[1], inner = dims_product(s, 2, s.rank());
    const std::vector<int64_t> t = call.get_ints(1);
    const bool has_w = call.num_inputs() > 2;
    double sum = 0.0, wsum = 0.0;
    for (size_t j = 0; j < t.size(); ++j) {
        double loss = 0.0, w = 0.0;
        if (t[j] != ignore) {
            if (t[j] < 0 || t[j] >= static_cast<int64_t>(c_len)) throw target_error(call, t[j], j);
            const auto c = static_cast<size_t>(t[j]);
            w = has_w ? call.get(2, c) : 1.0;
            loss = -call.get(0, (j / inner * c_len + c) * inner + j % inner) * w;
        }
        if (red == Reduction::none) call.set(0, j, loss);
        sum += loss;
        wsum += w;
    }
    if (red == Reduction::sum) call.set(0, 0, sum);
    if (red == Reduction::mean) call.set(0, 0, sum / wsum);
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = nll_loss_cl;
    spec.kernel_name = "nll_loss_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const DataType t = p.inputs.at(0).dtype;
        JitDefines d = {{"ACC_T", "FLOAT_ACC"},
                        {"REAL", t == DataType::f64 ? "double" : "float"},
                        {"REDUCTION", std::to_string(static_cast<int>(reduction_of(*p.attrs)))},
                        {"HAS_WEIGHT", p.inputs.size() > 2 ? "1" : "0"},
                        {"IGNORE_INDEX", std::to_string(p.attrs->get_int("ignore_index")) + "L"},
                        {"C_LEN", jit_dims_product("INPUT0", rank, 1, 2)},
                        {"INNER", jit_dims_product("INPUT0", rank, 2, rank)},
                        {"POSITIONS", "(" + jit_dims_product("INPUT0", rank, 0, 1) + "*" +
                                          jit_dims_product("INPUT0", rank, 2, rank) + ")"}};
        d.push_back(jit_data_f16(t));
        return d;
    };
    // 'none': one work-item per position; sum and mean: one work-item in all.
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        if (reduction_of(*p.attrs) != Reduction::none) return dispatch_1d(1, l);
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

std::string check_inputs(const KernelParams& p) {
    if (!is_index_type(p.inputs.at(1).dtype))
        return std::string("target type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
    return {};
}

constexpr size_t kOclMaxRank = 8;

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kOclMaxRank)
        return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return check_inputs(p);
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_nll_loss(ImportContext& c) {
    if (!c.only_attrs({"reduction", "ignore_index"})) return false;
    c.set("reduction", c.s("reduction", "mean"));
    c.set("ignore_index", c.i("ignore_index", kNoIgnore));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_nll_loss(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Negative log-likelihood loss of log-probabilities at target classes (ONNX NegativeLogLikelihoodLoss)", 2,
        3,
        {attr_string("reduction", std::string("mean"), kReductions, "none, sum or mean (weighted)"),
         attr_int("ignore_index", kNoIgnore, "target value that contributes nothing; the int64 minimum: none")},
        infer);
    def.imports = {onnx_rule("NegativeLogLikelihoodLoss", 2, 3, onnx_nll_loss, "`reduction`, `ignore_index`")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, kOp, kernel, host_options(dtypes, check_inputs));
    // OpenCL: a target out of range contributes 0 with weight 0 (nll_loss.cl); the host impls report it.
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(dtypes, check_ocl));
}

}   // namespace

DYNRT_MODULE("nll_loss", register_nll_loss)
