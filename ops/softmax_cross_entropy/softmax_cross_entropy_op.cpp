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
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"
#include "softmax_cross_entropy_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "softmax_cross_entropy";
constexpr int64_t kNoIgnore = std::numeric_limits<int64_t>::min();   // ignore_index unset
const std::vector<std::string> kReductions = {"none", "sum", "mean"};
enum class Reduction { none, sum, mean };

Reduction reduction_of(const Attributes& a) {
    return static_cast<Reduction>(mode_index(kOp, kReductions, a.get_string("reduction")));
}

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

Error shape_error(const ShapeInferContext& ctx, const std::string& what, const char* field) {
    return Error(what, node_context(ctx.node, kOp, field));
}

// The loss's dims when `reduction` is none: [N, d1..dk], each checked against
// the labels'.
std::vector<Dimension> position_dims(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const Layout& labels = ctx.inputs.at(1);
    const std::string shapes = "scores " + in.to_string() + " and labels " + labels.to_string();
    const size_t rank = in.shape.rank();
    if (labels.shape.rank() != rank - 1)
        throw shape_error(ctx, shapes + ": labels must have rank " + std::to_string(rank - 1), "labels");
    std::vector<Dimension> out;
    for (size_t d = 0; d + 1 < rank; ++d) {
        const Dimension& a = in.shape[d == 0 ? 0 : d + 1];
        const Dimension& b = labels.shape[d];
        if (a.is_static() && b.is_static() && a.get_length() != b.get_length())
            throw shape_error(ctx, shapes + ": labels dim " + std::to_string(d) + " differs from the scores'",
                              "labels");
        out.push_back(b.is_static() ? b : a);
    }
    return out;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Reduction red = reduction_of(ctx.attrs);
    const Layout& in = ctx.inputs.at(0);
    if (!is_floating(in.dtype))
        throw shape_error(ctx, "scores must be floating-point, got " + in.to_string(), "scores");
    if (!is_index_type(ctx.inputs.at(1).dtype))
        throw shape_error(ctx, "labels must be i32 or i64, got " + ctx.inputs.at(1).to_string(), "labels");
    if (in.shape.rank() < 2)
        throw shape_error(ctx, "scores " + in.to_string() + " needs rank >= 2 ([N, C, ...])", "scores");
    std::vector<Dimension> out = position_dims(ctx);
    if (ctx.inputs.size() > 2) {
        const Layout& w = ctx.inputs.at(2);
        const bool bad_len = w.shape.rank() == 1 && w.shape[0].is_static() && in.shape[1].is_static() &&
                             w.shape[0].get_length() != in.shape[1].get_length();
        if (w.dtype != in.dtype || w.shape.rank() != 1 || bad_len)
            throw shape_error(ctx,
                              "weights " + w.to_string() + " must be [C] of the scores' type, scores " + in.to_string(),
                              "weights");
    }
    const Layout loss =
        red == Reduction::none ? Layout(PartialShape(std::move(out)), in.dtype) : Layout(PartialShape(), in.dtype);
    return {loss, Layout(in.shape, in.dtype)};
}

// ---- reference ------------------------------------------------------------

Error label_error(const HostCall& call, int64_t value, size_t at) {
    ErrorContext where;
    where.node = call.node();
    where.op = kOp;
    return Error("label " + std::to_string(value) + " (at position " + std::to_string(at) + ") is out of range [0, " +
                     std::to_string(call.in_shape(0)[1]) + ") of scores " + call.in_shape(0).to_string(),
                 where);
}

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
    const Reduction red = reduction_of(call.attrs());
    const int64_t ignore = call.attrs().get_int("ignore_index");
    const size_t c_len = s[1], inner = dims_product(s, 2, s.rank());
    const std::vector<int64_t> t = call.get_ints(1);
    const bool has_w = call.num_inputs() > 2;
    for (size_t j = 0; j < t.size(); ++j)
        if (t[j] != ignore && (t[j] < 0 || t[j] >= static_cast<int64_t>(c_len))) throw label_error(call, t[j], j);
    std::vector<double> row(c_len);
    double sum = 0.0, wsum = 0.0;
    for (size_t j = 0; j < t.size(); ++j) {
        if (c_len > 0) log_softmax_at(call, j, c_len, inner, row);
        double loss = 0.0, w = 0.0;
        if (t[j] != ignore) {
            const auto c = static_cast<size_t>(t[j]);
            w = has_w ? call.get(2, c) : 1.0;
            loss = -row[c] * w;
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
    spec.source = softmax_cross_entropy_cl;
    spec.kernel_name = "softmax_cross_entropy_ref";
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
        return std::string("labels type ") + to_string(p.inputs.at(1).dtype) + " is not i32 or i64";
    return {};
}

constexpr size_t kOclMaxRank = 8;

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kOclMaxRank)
        return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return check_inputs(p);
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_sce(ImportContext& c) {
    if (!c.only_attrs({"reduction", "ignore_index"})) return false;
    c.set("reduction", c.s("reduction", "mean"));
    c.set("ignore_index", c.i("ignore_index", kNoIgnore));
    c.use_inputs({0, 1, 2});
    return true;
}

void register_sce(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def(kOp,
               "Softmax cross-entropy loss of scores at label classes, and the log-probabilities (ONNX "
               "SoftmaxCrossEntropyLoss)",
               2, 3,
               {attr_string("reduction", std::string("mean"), kReductions, "none, sum or mean (weighted)"),
                attr_int("ignore_index", kNoIgnore, "label value that contributes nothing; the int64 minimum: none")},
               infer);
    def.num_outputs = 2;
    def.imports = {
        onnx_rule("SoftmaxCrossEntropyLoss", 2, 3, onnx_sce, "`reduction`, `ignore_index`; output log_prob", 2)};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, kOp, kernel, host_options(dtypes, check_inputs));
    // OpenCL: a label out of range contributes 0 with weight 0 (softmax_cross_entropy.cl); the host impls report it.
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(dtypes, check_ocl));
}

}   // namespace

DYNRT_MODULE("softmax_cross_entropy", register_sce)
