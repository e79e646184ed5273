#include "dynrt/op_loss.hpp"

#include "dynrt/error.hpp"
#include "dynrt/op_index.hpp"

namespace dynrt {

namespace {

const std::vector<std::string> kLossReductions = {"none", "sum", "mean"};

// One element of the targets in messages: their name without a plural s
// ("labels 3" would read as a count).
std::string one_target(const std::string& target) {
    return !target.empty() && target.back() == 's' ? target.substr(0, target.size() - 1) : target;
}

}   // namespace

std::vector<AttrSpec> loss_attrs(const std::string& target) {
    return {
        attr_string("reduction", std::string("mean"), kLossReductions, "none, sum or mean (weighted)"),
        attr_int("ignore_index", kNoIgnoreIndex, target + " value that contributes nothing; the int64 minimum: none")};
}

LossReduction loss_reduction_of(const std::string& op, const Attributes& a) {
    return static_cast<LossReduction>(mode_index(op, kLossReductions, a.get_string("reduction")));
}

Layout infer_loss(const ShapeInferContext& ctx, const std::string& op, const LossInputs& names) {
    const auto fail = [&](const std::string& field, const std::string& why) {
        return Error(why, node_context(ctx.node, op, field));
    };
    const Layout& in = ctx.inputs.at(0);
    const Layout& target = ctx.inputs.at(1);
    const std::string shapes = names.input + " " + in.to_string() + " and " + names.target + " " + target.to_string();
    if (!is_floating(in.dtype)) throw fail(names.input, names.input + " must be floating-point, got " + in.to_string());
    if (!is_index_type(target.dtype))
        throw fail(names.target, names.target + " must be i32 or i64, got " + target.to_string());
    const size_t rank = in.shape.rank();
    if (rank < 2) throw fail(names.input, names.input + " " + in.to_string() + " needs rank >= 2 ([N, C, ...])");
    if (target.shape.rank() != rank - 1)
        throw fail(names.target, shapes + ": " + names.target + " must have rank " + std::to_string(rank - 1));
    std::vector<Dimension> out;
    for (size_t d = 0; d + 1 < rank; ++d) {
        const Dimension& a = in.shape[d == 0 ? 0 : d + 1];
        const Dimension& b = target.shape[d];
        if (a.is_static() && b.is_static() && a.get_length() != b.get_length())
            throw fail(names.target, shapes + ": " + names.target + " dim " + std::to_string(d) + " differs from the " +
                                         names.input + "'s");
        out.push_back(b.is_static() ? b : a);
    }
    if (ctx.inputs.size() > 2) {
        const Layout& w = ctx.inputs.at(2);
        const bool bad_len = w.shape.rank() == 1 && w.shape[0].is_static() && in.shape[1].is_static() &&
                             w.shape[0].get_length() != in.shape[1].get_length();
        if (w.dtype != in.dtype || w.shape.rank() != 1 || bad_len)
            throw fail(names.weight, names.weight + " " + w.to_string() + " must be [C] of the dtype of " +
                                         names.input + " " + in.to_string());
    }
    if (loss_reduction_of(op, ctx.attrs) != LossReduction::none) return Layout(PartialShape(), in.dtype);
    return Layout(PartialShape(std::move(out)), in.dtype);
}

std::vector<int64_t> loss_targets(const HostCall& call, const std::string& op, const LossInputs& names) {
    const Shape& s = call.in_shape(0);
    const auto c_len = static_cast<int64_t>(s[1]);
    const int64_t ignore = call.attrs().get_int("ignore_index");
    std::vector<int64_t> t = call.get_ints(1);
    for (size_t j = 0; j < t.size(); ++j) {
        if (t[j] == ignore || (t[j] >= 0 && t[j] < c_len)) continue;
        ErrorContext where;
        where.node = call.node();
        where.op = op;
        throw Error(one_target(names.target) + " " + std::to_string(t[j]) + " (at position " + std::to_string(j) +
                        ") is out of range [0, " + std::to_string(c_len) + ") of " + names.input + " " + s.to_string(),
                    where);
    }
    return t;
}

void reduce_loss(HostCall& call, LossReduction red, const std::vector<int64_t>& targets,
                 const std::function<double(size_t j, double& w)>& loss_at) {
    double sum = 0.0, wsum = 0.0;
    for (size_t j = 0; j < targets.size(); ++j) {
        double w = 0.0;
        const double loss = loss_at(j, w);
        if (red == LossReduction::none) call.set(0, j, loss);
        sum += loss;
        wsum += w;
    }
    if (red == LossReduction::sum) call.set(0, 0, sum);
    if (red == LossReduction::mean) call.set(0, 0, sum / wsum);
}

bool onnx_loss(ImportContext& c) {
    if (!c.only_attrs({"reduction", "ignore_index"})) return false;
    c.set("reduction", c.s("reduction", "mean"));
    c.set("ignore_index", c.i("ignore_index", kNoIgnoreIndex));
    c.use_inputs({0, 1, 2});
    return true;
}

}   // namespace dynrt
