// The cpu engine's own direct convolution for few channels
// (add_direct_convolution_impl, dynrt/cpu_conv.hpp).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cpu_conv_direct_kernel.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_conv.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

namespace {

// One kernel row of 8 output channels reads x once per tap and keeps its 8
// accumulators in registers: the loop does what oneDNN's JIT kernels do for
// few channels, without a kernel to generate per shape. Past these sizes
// (the multiply-adds per output element and the output channels) oneDNN's
// blocked kernels are the faster ones.
constexpr int64_t kMaxTaps = 144;   // C * kH * kW, e.g. 16 channels of 3x3
constexpr int64_t kMaxOutputs = 16;
// And up to this many output elements a run: measured on AVX2 (cpu_bench,
// one thread), the loop ran 3 -> 8 channels at 2x64x64 (65536 outputs) in 0.92x
// the time of oneDNN's static impl, 3 -> 16 at 1x112x112 (200704) in 1.3x.
constexpr int64_t kMaxOutputElements = int64_t{1} << 17;
// Window attributes past these go to oneDNN: the padded copy of x holds up
// to 7 strides more than x per row (each phase is a whole number of 8-column
// vectors). 8 takes the waveform stems of speech models (kernel 10, stride 5),
// which oneDNN compiled a kernel for at every new length.
constexpr int64_t kMaxStep = 8;

using RowsFn = void (*)(const DirectConvRows&, size_t, size_t);
struct Kernels {
    RowsFn prep, rows;
};

void direct_conv_prep_baseline(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_prep(a, begin, end); }
void direct_conv_rows_baseline(const DirectConvRows& a, size_t begin, size_t end) { direct_conv_rows(a, begin, end); }

const Kernels& kernels() {
    static const Kernels kForThisCpu =
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")
            ? Kernels{direct_conv_prep_avx512, direct_conv_rows_avx512}
        : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
            ? Kernels{direct_conv_prep_avx2, direct_conv_rows_avx2}
            : Kernels{direct_conv_prep_baseline, direct_conv_rows_baseline};
    return kForThisCpu;
}

// One spatial axis as the loops see it (a 1-D convolution has H = 1).
struct Axis {
    int64_t in = 1, k = 1, s = 1, d = 1, pb = 0, pe = 0;
};

std::vector<Axis> axes_of(const ConvGeometry& g, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
    std::vector<Axis> r(2);
    const size_t spatial = g.strides.size();
    for (size_t i = 0; i < spatial; ++i)
        r[2 - spatial + i] = {x[2 + i], w[2 + i], g.strides[i], g.dilations[i], g.pads_begin[i], g.pads_end[i]};
    return r;
}

std::vector<int64_t> dims_or_empty(const Layout& l) {
    if (!l.shape.is_static()) return {};
    const Shape s = l.get_shape();
    return std::vector<int64_t>(s.begin(), s.end());
}

// Per request: the padded, phase-split x and the packed weights.
struct DirectConvState final : ImplState {
    std::vector<float> prep, wpack;
    std::vector<int64_t> kw_offset;
};

class DirectConvImpl final : public Impl {
public:
    DirectConvImpl(std::string name, std::function<ConvGeometry(const KernelParams&)> geometry)
        : name_(std::move(name)), geometry_(std::move(geometry)) {}

    std::string name() const override { return name_; }
    bool is_dynamic() const override { return true; }
    // One loop for every shape, with nothing to build: a static oneDNN
    // primitive per shape would compile a JIT kernel to run no faster.
    bool static_builds_redundant() const override { return true; }
    std::unique_ptr<ImplState> create_state() const override { return std::make_unique<DirectConvState>(); }

    void execute(ExecContext& ctx) override {
        std::unique_ptr<ImplState> local;
        auto* s = dynamic_cast<DirectConvState*>(ctx.state);
        if (!s) {
            local = create_state();
            s = static_cast<DirectConvState*>(local.get());
        }
        {
            HostCall call(ctx);
            run(call, *s);
        }
        if (!ctx.params.fused_ops.empty()) apply_fused_host_ops(ctx);
    }

private:
    void run(HostCall& call, DirectConvState& s) const {
        const KernelParams& p = call.params();
        const Shape& xs = call.in_shape(0);
        const Shape& ws = call.in_shape(1);
        const Shape& ys = call.out_shape(0);
        const std::vector<Axis> ax = axes_of(geometry_(p), std::vector<int64_t>(xs.begin(), xs.end()),
                                             std::vector<int64_t>(ws.begin(), ws.end()));
        const int64_t N = xs[0], C = xs[1], O = ws[0];
        DirectConvRows a;
        a.C = C, a.O = O, a.H = ax[0].in, a.KH = ax[0].k, a.KW = ax[1].k;
        a.OH = ys.rank() > 3 ? ys[2] : 1, a.OW = ys[ys.rank() - 1];
        a.sh = ax[0].s, a.sw = ax[1].s, a.dh = ax[0].d, a.dw = ax[1].d, a.ph = ax[0].pb;
        if (N == 0 || O == 0 || a.OH == 0 || a.OW == 0) return;
        const int64_t W = ax[1].in, pw = ax[1].pb;
        const int64_t ow_padded = (a.OW + kDirectLanes - 1) / kDirectLanes * kDirectLanes;
        a.row_len = ow_padded + (a.KW - 1) * a.dw / a.sw + 1;
        const std::string what = name_ + " of node '" + p.node + "': scratch";
        const size_t in_rows = checked_mul(static_cast<size_t>(N * C), static_cast<size_t>(a.H), what.c_str());
        const size_t row_floats = static_cast<size_t>(a.sw * a.row_len);
        s.prep.resize(checked_mul(in_rows, row_floats, what.c_str()));
        const int64_t blocks = (O + kDirectLanes - 1) / kDirectLanes, taps = C * a.KH * a.KW;
        s.wpack.assign(static_cast<size_t>(blocks * taps * kDirectLanes), 0.0f);

        const float* x = call.in<float>(0);
        const float* w = call.in<float>(1);
        for (int64_t o = 0; o < O; ++o)
            for (int64_t t = 0; t < taps; ++t)
                s.wpack[static_cast<size_t>(((o / kDirectLanes) * taps + t) * kDirectLanes + o % kDirectLanes)] =
                    w[o * taps + t];
        s.kw_offset.resize(static_cast<size_t>(a.KW));
        for (int64_t kw = 0; kw < a.KW; ++kw)
            s.kw_offset[static_cast<size_t>(kw)] = (kw * a.dw % a.sw) * a.row_len + kw * a.dw / a.sw;
        a.kw_offset = s.kw_offset.data();
        a.prep = s.prep.data();
        a.wpack = s.wpack.data();
        a.bias = call.num_inputs() > 2 ? call.in<float>(2) : nullptr;
        a.y = call.out<float>(0);

        size_t io_bytes = 0;
        for (const Layout& l : p.inputs) io_bytes += l.bytes();
        for (const Layout& l : p.outputs) io_bytes += l.bytes();
        const CpuThreads threads(p.engine, io_bytes);
        a.x = x, a.W = W, a.pw = pw;
        const Kernels& k = kernels();
        parallel_for(threads, in_rows, 16, [&](size_t begin, size_t end) { k.prep(a, begin, end); });
        parallel_for(threads, static_cast<size_t>(N * a.OH), 1,
                     [&](size_t begin, size_t end) { k.rows(a, begin, end); });
    }

    std::string name_;
    std::function<ConvGeometry(const KernelParams&)> geometry_;
};

std::string validate(const KernelParams& p, const std::function<ConvGeometry(const KernelParams&)>& geometry) {
    for (const Layout& l : p.inputs)
        if (l.dtype != DataType::f32) return "input " + l.to_string() + " is not f32";
    for (const std::vector<Layout>* ls : {&p.inputs, &p.outputs})
        for (const Layout& l : *ls)
            if (!l.padding.empty() || l.format != Format::plain)
                return l.to_string() + " is padded or blocked; the direct loop reads dense plain tensors";
    const size_t rank = p.inputs.at(0).shape.rank();
    if (rank < 3 || rank > 4) return "the direct loop convolves 1 or 2 spatial dims";
    const std::vector<int64_t> w = dims_or_empty(p.inputs.at(1));
    if (w.size() != rank) return "the weights' shape is not static";
    const ConvGeometry g = geometry(p);
    if (g.groups != 1) return "groups " + std::to_string(g.groups) + ": the direct loop takes groups = 1";
    int64_t taps = w[1];
    for (size_t i = 2; i < rank; ++i) taps *= w[i];
    if (taps > kMaxTaps || w[0] > kMaxOutputs)
        return "C * kernel = " + std::to_string(taps) + " and " + std::to_string(w[0]) +
               " outputs: the direct loop takes at most " + std::to_string(kMaxTaps) + " and " +
               std::to_string(kMaxOutputs) + " (oneDNN's kernels are faster past them)";
    const Layout& y = p.outputs.at(0);
    if (y.shape.is_static() && y.count() > static_cast<size_t>(kMaxOutputElements))
        return "output " + y.to_string() + " has over " + std::to_string(kMaxOutputElements) +
               " elements: oneDNN's blocked kernels are faster there";
    for (size_t i = 0; i + 2 < rank; ++i) {
        const int64_t span = g.dilations[i] * (w[2 + i] - 1);
        if (g.strides[i] > kMaxStep || g.dilations[i] > kMaxStep || g.pads_begin[i] > span || g.pads_end[i] > span)
            return "strides and dilations over " + std::to_string(kMaxStep) +
                   " or pads over the kernel's span: the direct loop's padded copy of x would outgrow x";
    }
    return {};
}

}   // namespace

void add_direct_convolution_impl(ModuleRegistrar& reg, const std::string& op,
                                 std::function<ConvGeometry(const KernelParams&)> geometry) {
    ImplEntry e;
    e.name = "cpu_direct_dynamic";
    e.priority = kPriorityDirectConvolution;
    e.impl_type = "cpu";
    e.shape_type = ShapeType::dynamic_shape;
    e.dtypes = {DataType::f32};
    e.formats = {Format::plain};
    e.fused_ops = true;
    e.validate = [geometry](const KernelParams& p) { return validate(p, geometry); };
    const std::string impl_name = op + "_" + e.name;
    e.create = [impl_name, geometry](const KernelParams&) -> std::unique_ptr<Impl> {
        return std::make_unique<DirectConvImpl>(impl_name, geometry);
    };
    reg.add_impl(op, e);
}

}   // namespace dynrt
