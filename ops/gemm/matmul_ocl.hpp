// OpenCL impls of the matrix-product kernels (gemm.cl) shared by the gemm and
// fully_connected modules: the tile configuration for a device, the JIT
// constants, the dispatch, and the two impls ("ocl_static", "ocl_dynamic").
// gemm.cl has skinny kernels for M <= kSkinnyMaxM (decode shapes), one entry
// point per row bucket (matmul_skinny_1, _2, _4, _8, _16), and matmul_tiled. A
// static impl builds the one its M needs (a skinny kernel compiled for exactly
// its M); the shape-agnostic impl builds every entry point of its one program
// (one compile: the program cache serves the other names) and picks the
// kernel by the runtime M on every execution (its update_dispatch_data): the
// smallest bucket >= M, so the row loops have constant trip counts and at most
// one bucket's worth of rows is wasted. Header-only: each module compiles its own copy, so
// neither links the other.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt::matmul_ocl {

// Rows up to which the skinny (decode) path runs; it keeps one partial sum per
// row in registers.
inline constexpr int64_t kSkinnyMaxM = 16;

struct Config {
    int wg_m = 8, wg_n = 8;    // tiled work-group (WG_N along N is dim 0)
    int rm = 4, rn = 4;        // register block per work-item (multiples of 4)
    int tk = 8;                // depth of a local-memory slab
    int sk_wg = 64;            // skinny work-group size
    int skn_cols4 = 16;        // skinny with b [K, N]: float4 columns per work-group (rest: K slices)
    int tm() const { return wg_m * rm; }
    int tn() const { return wg_n * rn; }
    int lda() const { return tm() + 4; }   // +4 keeps float4 alignment and spreads banks
    int ldb() const { return tn() + 4; }
};

// Two configurations, by the device's preferred work-group size: 16x16
// work-items with 8x8 blocks (128x128 tiles) on GPUs, 8x8 with 4x4 blocks on
// CPUs (PoCL), where small tiles waste less on tails. Only these local sizes are
// ever used, so PoCL compiles few work-group functions.
inline Config config_for(const OclDeviceLimits& lim) {
    Config c;
    const size_t wg = std::min(lim.preferred_local_size ? lim.preferred_local_size : 64, lim.max_work_group_size);
    const size_t lmem_gpu = size_t(2) * 16 * (128 + 4) * sizeof(float);
    if (wg >= 256 && lim.local_mem_bytes >= lmem_gpu) {
        c.wg_m = c.wg_n = 16;
        c.rm = c.rn = 8;
        c.tk = 16;
        c.sk_wg = 256;
        // 16 columns x 64 K-slices: 4096 columns give 256 work-groups of
        // 256, enough to fill the GPU with weight reads; a warp reads 64
        // contiguous bytes from each of 8 rows.
        c.skn_cols4 = 4;
    } else if (wg < 64) {
        c.wg_m = c.wg_n = 4;
        c.rm = c.rn = 4;
        c.tk = 4;
        c.sk_wg = 16;
        c.skn_cols4 = 4;
    }
    return c;
}

inline std::string float_literal(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "((float)(%.17g))", v);
    return buf;
}

// Row buckets of the skinny kernels (entry point matmul_skinny_<bucket>).
inline constexpr int64_t kSkinnyBuckets[] = {1, 2, 4, 8, 16};
inline int64_t skinny_bucket(size_t M) {
    for (int64_t b : kSkinnyBuckets)
        if (M <= size_t(b)) return b;
    return kSkinnyMaxM;
}

// `sk_max_m`: the largest skinny bucket the build holds (kSkinnyMaxM for the
// shape-agnostic build, the exact M for a static one).
inline JitDefines defines(const Config& c, bool fc, bool ta, bool tb, double alpha, double beta, int64_t sk_max_m) {
    (void)tb;   // b [N, K] uses SK_SLICES/SK_COLS, b [K, N] SKN_SLICES/SKN_COLS4
    const int sk_slices = std::min(32, c.sk_wg);
    const int sk_cols = c.sk_wg / sk_slices;
    return {
        {"FC", fc ? "1" : "0"},
        {"TA", ta ? "1" : "0"},
        {"TB", tb ? "1" : "0"},
        {"ALPHA", float_literal(alpha)},
        {"BETA", float_literal(beta)},
        {"WG_M", std::to_string(c.wg_m)},
        {"WG_N", std::to_string(c.wg_n)},
        {"RM", std::to_string(c.rm)},
        {"RN", std::to_string(c.rn)},
        {"TK", std::to_string(c.tk)},
        {"LDA", std::to_string(c.lda())},
        {"LDB", std::to_string(c.ldb())},
        {"SK_MAX_M", std::to_string(sk_max_m)},
        {"SK_WG", std::to_string(c.sk_wg)},
        {"SK_SLICES", std::to_string(sk_slices)},
        {"SK_COLS", std::to_string(sk_cols)},
        {"SKN_COLS4", std::to_string(c.skn_cols4)},
        {"SKN_SLICES", std::to_string(c.sk_wg / c.skn_cols4)},
    };
}

// Work sizes for an [batches] x M x N product. The kernel tests M the same way.
inline OclDispatch dispatch(const Config& c, bool tb, size_t M, size_t N, size_t batches) {
    OclDispatch d;
    if (M == 0 || N == 0 || batches == 0) {
        d.gws = {0, 0, 0};
        return d;
    }
    if (M <= size_t(kSkinnyMaxM)) {
        const size_t cols = tb ? size_t(c.sk_wg / std::min(32, c.sk_wg)) : size_t(c.skn_cols4) * 4;
        d.dims = 2;
        d.gws = {(N + cols - 1) / cols * size_t(c.sk_wg), batches, 1};
        d.lws = {size_t(c.sk_wg), 1, 1};
        return d;
    }
    d.dims = 3;
    d.gws = {(N + c.tn() - 1) / c.tn() * size_t(c.wg_n), (M + c.tm() - 1) / c.tm() * size_t(c.wg_m), batches};
    d.lws = {size_t(c.wg_n), size_t(c.wg_m), 1};
    return d;
}

// Empty when every tensor's element count fits the kernel's int indexing.
inline std::string check_int_range(const KernelParams& p) {
    const auto fits = [](const Layout& l) {
        return !l.shape.is_static() ||
               l.shape.to_shape().count() <= static_cast<size_t>(std::numeric_limits<int32_t>::max());
    };
    for (const Layout& l : p.inputs)
        if (!fits(l)) return "a tensor has more than 2^31-1 elements";
    for (const Layout& l : p.outputs)
        if (!fits(l)) return "a tensor has more than 2^31-1 elements";
    return {};
}

// What an op makes of the kernels: its mode (from attributes) and its sizes
// (from runtime layouts).
struct Variant {
    bool fc = false, ta = false, tb = false;
    double alpha = 1.0, beta = 1.0;
};
struct Sizes {
    size_t M = 0, N = 0, batches = 0;
};
struct OpHooks {
    std::function<Variant(const KernelParams&)> variant;
    std::function<Sizes(const KernelParams&)> sizes;   // runtime layouts; every execution
    size_t fake_align_rows = 0;   // ImplEntry::fake_align_rows (fully_connected)
};

inline Layout all_dynamic(const Layout& l) {
    return Layout(PartialShape::dynamic_of_rank(l.shape.rank()), l.dtype, l.format);
}

// The layout the shape-agnostic build compiles input `i` for: dynamic dims,
// except those the node's inferred layout holds static (KernelParams::
// node_inputs): they are the same on every run, so they become literals (K
// and N of a product with constant weights, as in a static build). With
// `rows_dynamic`, only the last dim of the input may be kept: fake alignment
// changes the leading (row) dims of fully_connected's input at run time.
// Outputs always stay dynamic: their padding (an in-place concat view)
// changes at run time and travels in shape_info.
inline Layout agnostic_input(const KernelParams& p, size_t i, bool rows_dynamic) {
    const Layout& rt = p.inputs.at(i);
    Layout l = all_dynamic(rt);
    if (!p.node_inputs || i >= p.node_inputs->size()) return l;
    const PartialShape& ns = (*p.node_inputs)[i].shape;
    if (ns.rank() != rt.shape.rank()) return l;
    const size_t first = rows_dynamic && ns.rank() > 0 ? ns.rank() - 1 : 0;
    for (size_t d = first; d < ns.rank(); ++d)
        if (ns[d].is_static() && rt.shape[d].is_static() && ns[d].get_length() == rt.shape[d].get_length())
            l.shape[d] = ns[d];
    return l;
}

class MatmulImpl final : public Impl {
public:
    MatmulImpl(const KernelParams& p, const char* source, const OpHooks& hooks, bool dynamic)
        : hooks_(hooks), dynamic_(dynamic), op_(p.op ? p.op->name : std::string("?")) {
        device_ = OclDevice::from(*p.engine);
        if (!device_) throw Error("ocl impl created on a non-ocl engine");
        config_ = config_for(device_->limits());
        variant_ = hooks_.variant(p);
        JitDefines defs = shape_agnostic_defines(dynamic);
        std::vector<Layout> ins = p.inputs, outs = p.outputs;
        // Other inputs of fused post-ops: shape_info slots after the inputs.
        std::vector<Layout> extras = fused_extra_layouts(p);
        fused_ = !p.fused_ops.empty();
        if (dynamic) {
            for (size_t i = 0; i < ins.size(); ++i) ins[i] = agnostic_input(p, i, i == 0 && hooks_.fake_align_rows > 0);
            for (auto& l : outs) l = all_dynamic(l);
            for (auto& l : extras) l = all_dynamic(l);
        }
        std::vector<Layout> planned = ins;
        planned.insert(planned.end(), extras.begin(), extras.end());
        plan_ = plan_shape_info(planned, outs);
        for (size_t i = 0; i < ins.size(); ++i) {
            auto d = tensor_jit_defines("INPUT" + std::to_string(i), ins[i], plan_.input_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        for (size_t i = 0; i < outs.size(); ++i) {
            auto d = tensor_jit_defines("OUTPUT" + std::to_string(i), outs[i], plan_.output_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        defs.emplace_back("INPUTS_COUNT", std::to_string(ins.size()));
        {
            const std::vector<int> slots(plan_.input_slots.begin() + static_cast<std::ptrdiff_t>(ins.size()),
                                         plan_.input_slots.end());
            auto f = fused_ops_defines(p, extras, slots);
            defs.insert(defs.end(), f.begin(), f.end());
        }
        // A static impl knows its M, so it builds only the kernel it runs, a
        // skinny one for exactly that M.
        const size_t static_m = dynamic ? 0 : hooks_.sizes(p).M;
        const bool need_skinny = dynamic || static_m <= size_t(kSkinnyMaxM);
        const bool need_tiled = dynamic || !need_skinny;
        const int64_t sk_max_m = dynamic ? kSkinnyMaxM : (need_skinny ? std::max<int64_t>(int64_t(static_m), 1) : 1);
        auto d = defines(config_, variant_.fc, variant_.ta, variant_.tb, variant_.alpha, variant_.beta, sk_max_m);
        defs.insert(defs.end(), d.begin(), d.end());
        // K (the last dim of a when not transposed) not a literal: the skinny
        // float4 loop of b [N, K] reads two float4s per row address (gemm.cl).
        const PartialShape& a_shape = ins.at(0).shape;
        const bool k_dynamic = a_shape.rank() == 0 || a_shape[a_shape.rank() - 1].is_dynamic();
        defs.emplace_back("SKINNY_PAIRS", k_dynamic ? "1" : "0");
        // Every entry point of one build comes from the same program: the
        // first build_kernel compiles it, the others hit the program cache.
        if (dynamic) {
            for (size_t i = 0; i < std::size(kSkinnyBuckets); ++i)
                skinny_[i] = device_->build_kernel(source, "matmul_skinny_" + std::to_string(kSkinnyBuckets[i]), defs);
        } else if (need_skinny) {
            skinny_[0] = device_->build_kernel(source, "matmul_skinny_" + std::to_string(sk_max_m), defs);
        }
        if (need_tiled) tiled_ = device_->build_kernel(source, "matmul_tiled", defs);
        if (dynamic) shape_info_ = OclShapeInfo(plan_.bytes());
        if (!dynamic) {
            bound_inputs_ = p.inputs;
            bound_outputs_ = p.outputs;
        }
    }

    // update_dispatch_data runs only when the layouts differ from the last
    // run's (sizes, kernel, work sizes, shape_info); with the same shapes a run
    // is the argument list (a reused member) and the launch. Fused ops' other
    // inputs may change shape alone: no shortcut then.
    void execute(ExecContext& ctx) override {
        const KernelParams& p = ctx.params;
        if (!have_last_ || fused_ || shape_info_.needs_region(ctx.stream) || !same_layouts(p.inputs, last_inputs_) ||
            !same_layouts(p.outputs, last_outputs_)) {
            if (!dynamic_ && (p.inputs != bound_inputs_ || p.outputs != bound_outputs_))
                throw Error("static ocl impl of '" + op_ + "' executed with other layouts than it was built for");
            const Sizes sz = hooks_.sizes(p);
            disp_ = dispatch(config_, variant_.tb, sz.M, sz.N, sz.batches);
            if (sz.M > size_t(kSkinnyMaxM)) {
                kernel_ = tiled_.get();
            } else if (dynamic_) {
                size_t i = 0;
                while (kSkinnyBuckets[i] < int64_t(sz.M)) ++i;
                kernel_ = skinny_[i].get();
            } else {
                kernel_ = skinny_[0].get();
            }
            if (!shape_info_.empty()) {
                pack_shape_info_fused(plan_, p, packed_);
                // Ordered on the in-order queue after the previous run's kernels.
                shape_info_.update(*device_, ctx.stream, packed_);
            }
            last_inputs_ = p.inputs;
            last_outputs_ = p.outputs;
            have_last_ = true;
        }
        if (disp_.gws[0] == 0 || disp_.gws[1] == 0 || disp_.gws[2] == 0) return;   // empty output

        args_.clear();
        shape_info_.push_args(args_);
        for (const auto& m : ctx.inputs) args_.push_back(OclArg::mem(*m));
        for (const auto& m : ctx.outputs) args_.push_back(OclArg::mem(*m));
        if (fused_ && ctx.fused_inputs)
            for (const auto& m : *ctx.fused_inputs) args_.push_back(OclArg::mem(*m));
        device_->launch(ctx.stream, *kernel_, args_, disp_);
    }

    std::string name() const override { return op_ + (dynamic_ ? "_ocl_dynamic" : "_ocl_static"); }
    bool is_dynamic() const override { return dynamic_; }

private:
    OpHooks hooks_;
    bool dynamic_;
    bool fused_ = false;   // built with fused post-ops
    std::string op_;
    OclDevice* device_ = nullptr;
    Config config_;
    Variant variant_;
    std::shared_ptr<OclKernel> skinny_[std::size(kSkinnyBuckets)];   // static: [0] only
    std::shared_ptr<OclKernel> tiled_;
    const OclKernel* kernel_ = nullptr;   // picked for the last layouts
    OclDispatch disp_;
    bool have_last_ = false;
    std::vector<Layout> last_inputs_, last_outputs_;
    ShapeInfoPlan plan_;
    OclShapeInfo shape_info_;
    std::vector<int32_t> packed_;
    std::vector<OclArg> args_;
    std::vector<Layout> bound_inputs_, bound_outputs_;
};

// Registers "ocl_dynamic" and "ocl_static" for `op` (f32 only; other types fall
// back to the host impls).
inline void register_impls(ModuleRegistrar& reg, const std::string& op, const char* source, const OpHooks& hooks) {
    for (bool dynamic : {true, false}) {
        ImplEntry e;
        e.name = dynamic ? "ocl_dynamic" : "ocl_static";
        e.impl_type = "ocl";
        e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
        e.dtypes = {DataType::f32};
        e.fake_align_rows = hooks.fake_align_rows;
        e.fused_ops = true;   // activation / eltwise post-ops before each store (STORE_Y)
        e.validate = [](const KernelParams& p) {
            // The kernels store through OUTPUT0_PHYS (gemm.cl's STORE_Y), so
            // the output may be padded (a slice of an in-place concat); the
            // inputs are read dense.
            std::vector<Layout> all = p.inputs;
            all.insert(all.end(), p.outputs.begin(), p.outputs.end());
            for (size_t i = 0; i < all.size(); ++i) {
                const Layout& l = all[i];
                if (l.dtype != DataType::f32) return std::string("every tensor must be f32");
                if (i < p.inputs.size() && !l.padding.empty()) return std::string("padded inputs are not supported");
                if (l.shape.rank() > kShapeInfoDims) return std::string("rank above 8");
            }
            if (!p.fused_ops.empty()) {
                std::string why = check_ocl_fused_ops(p);
                if (!why.empty()) return why;
            }
            return check_int_range(p);
        };
        e.create = [source, hooks, dynamic](const KernelParams& p) -> std::unique_ptr<Impl> {
            return std::make_unique<MatmulImpl>(p, source, hooks, dynamic);
        };
        reg.add_impl(op, std::move(e));
    }
}

}  // namespace dynrt::matmul_ocl
