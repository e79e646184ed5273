// recurrent on OpenCL (ocl_dynamic, ocl_static; f32, f16): recurrent.cl's
// two kernels, the input projection of every step into a float scratch
// buffer, then one work-group of up to kGroup work-items per (batch entry,
// direction) walking the steps with the state in local memory. Every dim is
// a kernel argument, so the static and the shape-agnostic builds run the same
// code; the attributes and which optional inputs are present are JIT
// constants. A sequence length out of range is reported by the kernel and
// raised here as the host impls' error.
#include <algorithm>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"
#include "recurrent_call.hpp"
#include "recurrent_cl.hpp"
#include "recurrent_impls.hpp"

namespace recurrent {

namespace {

using namespace dynrt;

constexpr size_t kGroup = 64;   // work-items per group at most (one local size: PoCL compiles one per size)

// Local floats of recurrent_steps: h twice, c, a GRU's z and r . h.
size_t local_floats(size_t hidden) { return 5 * hidden; }

// The activation as an OpenCL C expression of x.
std::string act_expr(const Activation& a) {
    const std::string A = "(" + jit_float_literal(a.alpha) + ")", B = "(" + jit_float_literal(a.beta) + ")";
    switch (a.f) {
        case Act::relu: return "fmax((x), 0.0f)";
        case Act::tanh: return "tanh(x)";
        case Act::sigmoid: return "(1.0f / (1.0f + exp(-(x))))";
        case Act::affine: return "(" + A + " * (x) + " + B + ")";
        case Act::leaky_relu: return "((x) >= 0.0f ? (x) : " + A + " * (x))";
        case Act::thresholded_relu: return "((x) >= " + A + " ? (x) : 0.0f)";
        case Act::scaled_tanh: return "(" + A + " * tanh(" + B + " * (x)))";
        case Act::hard_sigmoid: return "clamp(" + A + " * (x) + " + B + ", 0.0f, 1.0f)";
        case Act::elu: return "((x) >= 0.0f ? (x) : " + A + " * (exp(x) - 1.0f))";
        case Act::softsign: return "((x) / (1.0f + fabs(x)))";
        case Act::softplus: return "((x) > 20.0f ? (x) : log1p(exp(x)))";
    }
    return "(x)";
}

Config config(const KernelParams& p) { return config_of(*p.attrs, p.inputs.size()); }

JitDefines defines(const KernelParams& p, bool) {
    const Config c = config(p);
    JitDefines d = {
        {"CELL_RNN", c.kind == Kind::rnn ? "1" : "0"},
        {"CELL_GRU", c.kind == Kind::gru ? "1" : "0"},
        {"CELL_LSTM", c.kind == Kind::lstm ? "1" : "0"},
        {"GATES", std::to_string(c.gates)},
        {"DIRS", std::to_string(c.dirs)},
        {"REVERSE", c.reverse ? "1" : "0"},
        {"LBR", c.linear_before_reset ? "1" : "0"},
        {"INPUT_FORGET", c.input_forget ? "1" : "0"},
        {"HAS_CLIP", c.clip > 0.0 ? "1" : "0"},
        {"CLIP", jit_float_literal(c.clip)},
        {"LAYOUT", std::to_string(c.layout)},
        {"HAS_B", c.in_b >= 0 ? "1" : "0"},
        {"HAS_SEQ", c.in_seq >= 0 ? "1" : "0"},
        {"HAS_H0", c.in_h0 >= 0 ? "1" : "0"},
        {"HAS_C0", c.in_c0 >= 0 ? "1" : "0"},
        {"HAS_P", c.in_p >= 0 ? "1" : "0"},
        {"SEQ_TYPE", c.in_seq >= 0 && p.inputs[static_cast<size_t>(c.in_seq)].dtype == DataType::i64 ? "long" : "int"},
        jit_data_f16(p.inputs.at(0).dtype)};
    const char* names[] = {"F", "G", "H"};
    for (size_t dir = 0; dir < 2; ++dir)
        for (size_t k = 0; k < 3; ++k) {
            // A cell with fewer functions, or one direction: the names it
            // does not use repeat ones it does (never called).
            const size_t dd = std::min(dir, c.dirs - 1), kk = std::min(k, c.per_dir - 1);
            d.emplace_back("ACT_" + std::string(names[k]) + std::to_string(dir) + "(x)", act_expr(c.act(dd, kk)));
        }
    return d;
}

std::vector<OclStage> stages(const KernelParams& p, bool) {
    const Config c = config(p);
    OclStage project;
    project.kernel_name = "recurrent_project";
    project.args = {OclArgRef::input(0), OclArgRef::input(1)};
    if (c.in_b >= 0) project.args.push_back(OclArgRef::input(static_cast<size_t>(c.in_b)));
    project.args.push_back(OclArgRef::scratch(0));
    project.args.push_back(OclArgRef::scalars());
    OclStage steps;
    steps.kernel_name = "recurrent_steps";
    steps.args = {OclArgRef::input(2)};
    for (int index : {c.in_b, c.in_seq, c.in_h0, c.in_c0, c.in_p})
        if (index >= 0) steps.args.push_back(OclArgRef::input(static_cast<size_t>(index)));
    steps.args.push_back(OclArgRef::scratch(0));
    for (size_t o = 0; o < c.outputs(); ++o) steps.args.push_back(OclArgRef::output(o));
    steps.args.push_back(OclArgRef::report());
    steps.args.push_back(OclArgRef::scalars());
    return {project, steps};
}

Dims dims(const KernelParams& p) { return dims_of(config(p), p.inputs.at(0).get_shape(), p.inputs.at(2).get_shape()); }

void update(const KernelParams& p, const OclDeviceLimits& limits, std::vector<OclStageRun>& runs) {
    const Dims g = dims(p);
    for (OclStageRun& run : runs) {
        run.scalars.clear();
        run.dispatch = OclDispatch{};
    }
    const size_t rows = g.seq * g.batch;
    OclStageRun& project = runs.at(0);
    if (rows * g.gh() == 0) project.dispatch.gws[0] = 0;
    else project.dispatch = dispatch_nd({g.gh(), rows, g.dirs}, 3, limits);
    auto i32 = [](size_t v) { return OclArg::i32(static_cast<int32_t>(v)); };
    project.scalars = {i32(rows), i32(g.input), i32(g.gh()), i32(g.hidden)};
    OclStageRun& steps = runs.at(1);
    if (g.batch * g.hidden == 0) {
        steps.dispatch.gws[0] = 0;
        return;
    }
    const size_t bytes = local_floats(g.hidden) * sizeof(float);
    if (limits.local_mem_bytes != 0 && bytes > limits.local_mem_bytes)
        throw Error("recurrent on OpenCL: hidden_size " + std::to_string(g.hidden) + " needs " + std::to_string(bytes) +
                    " bytes of local memory, the device has " + std::to_string(limits.local_mem_bytes));
    size_t group = kGroup;
    while (group > 1 && limits.max_work_group_size != 0 && group > limits.max_work_group_size) group /= 2;
    steps.dispatch.gws = {g.batch * group, g.dirs, 1};
    steps.dispatch.lws = {group, 1, 1};
    steps.dispatch.dims = 2;
    steps.scalars = {OclArg::local(bytes), i32(g.seq), i32(g.batch), i32(g.hidden)};
}

// The report of recurrent_steps: a bad length's batch entry + 1 (0: none)
// and its low and high 32 bits.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    throw length_error(p.node, given, static_cast<size_t>(report[0] - 1), dims(p).seq);
}

// Declines a hidden size known (static in the node) to need more local
// memory than the device has, and dims past int: the host impls serve them.
std::string validate(const KernelParams& p) {
    const Config c = config(p);
    for (size_t i = 0; i < p.inputs.size(); ++i) {
        if (static_cast<int>(i) == c.in_seq) continue;
        if (p.inputs[i].dtype != p.inputs[0].dtype) return "input " + std::to_string(i) + " is not of X's type";
        if (p.inputs[i].shape.is_static() && p.inputs[i].get_shape().count() > size_t{0x7fffffff})
            return "input " + std::to_string(i) + " has more than 2^31-1 elements";
    }
    const Dimension& h = p.inputs.at(2).shape[2];
    OclDevice* device = p.engine ? OclDevice::from(*p.engine) : nullptr;
    if (!device || !h.is_static()) return {};
    const size_t have = device->limits().local_mem_bytes;
    const size_t need = local_floats(static_cast<size_t>(h.get_length())) * sizeof(float);
    if (have == 0 || need <= have) return {};
    return "hidden_size " + std::to_string(h.get_length()) + " needs " + std::to_string(need) +
           " bytes of local memory, the device has " + std::to_string(have);
}

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = recurrent_cl;
    spec.defines = defines;
    spec.stages = stages;
    spec.update = update;
    spec.scratch_bytes = [](const KernelParams& p) {
        const Dims g = dims(p);
        return std::vector<size_t>{std::max<size_t>(1, g.dirs * g.seq * g.batch * g.gh()) * sizeof(float)};
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

}   // namespace

void register_ocl_impls(ModuleRegistrar& reg) {
    add_ocl_multi_impls(reg, "recurrent", ocl_spec(), ocl_options({DataType::f32, DataType::f16}, validate));
}

}   // namespace recurrent
