// OpenCL impls of the matrix-product kernels (gemm.cl) shared by the gemm and
// fully_connected modules: the tile configuration for a device, the JIT
// constants, the dispatch, and the two impls ("ocl_static", "ocl_dynamic").
// gemm.cl has two kernels, matmul_skinny (M <= kSkinnyMaxM, decode shapes) and
// matmul_tiled; a static impl builds the one its M needs, the shape-agnostic
// impl builds both and picks one by the runtime M on every execution (its
// update_dispatch_data). Header-only: each module compiles its own copy, so
// neither links the other.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
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
    } else if (wg < 64) {
        c.wg_m = c.wg_n = 4;
        c.rm = c.rn = 4;
        c.tk = 4;
        c.sk_wg = 16;
    }
    return c;
}

inline std::string float_literal(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "((float)(%.17g))", v);
    return buf;
}

inline JitDefines defines(const Config& c, bool fc, bool ta, bool tb, double alpha, double beta) {
    const int sk_slices = tb ? std::min(32, c.sk_wg) : c.sk_wg / std::min(32, c.sk_wg);
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
        {"SK_MAX_M", std::to_string(kSkinnyMaxM)},
        {"SK_WG", std::to_string(c.sk_wg)},
        {"SK_SLICES", std::to_string(sk_slices)},
        {"SK_COLS", std::to_string(sk_cols)},
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
        const int sk_slices = tb ? std::min(32, c.sk_wg) : c.sk_wg / std::min(32, c.sk_wg);
        const size_t cols = size_t(c.sk_wg / sk_slices);
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
};

inline Layout all_dynamic(const Layout& l) {
    return Layout(PartialShape::dynamic_of_rank(l.shape.rank()), l.dtype, l.format);
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
        if (dynamic) {
            for (auto& l : ins) l = all_dynamic(l);
            for (auto& l : outs) l = all_dynamic(l);
        }
        plan_ = plan_shape_info(ins, outs);
        for (size_t i = 0; i < ins.size(); ++i) {
            auto d = tensor_jit_defines("INPUT" + std::to_string(i), ins[i], plan_.input_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        for (size_t i = 0; i < outs.size(); ++i) {
            auto d = tensor_jit_defines("OUTPUT" + std::to_string(i), outs[i], plan_.output_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        defs.emplace_back("INPUTS_COUNT", std::to_string(ins.size()));
        auto d = defines(config_, variant_.fc, variant_.ta, variant_.tb, variant_.alpha, variant_.beta);
        defs.insert(defs.end(), d.begin(), d.end());
        // A static impl knows its M, so it builds only the kernel it runs.
        const bool need_skinny = dynamic || hooks_.sizes(p).M <= size_t(kSkinnyMaxM);
        const bool need_tiled = dynamic || !need_skinny;
        if (need_skinny) skinny_ = device_->build_kernel(source, "matmul_skinny", defs);
        if (need_tiled) tiled_ = device_->build_kernel(source, "matmul_tiled", defs);
        if (dynamic && plan_.slots > 0) shape_info_ = p.engine->allocate(plan_.bytes());
        if (!dynamic) {
            bound_inputs_ = p.inputs;
            bound_outputs_ = p.outputs;
        }
    }

    void execute(ExecContext& ctx) override {
        const KernelParams& p = ctx.params;
        if (!dynamic_ && (p.inputs != bound_inputs_ || p.outputs != bound_outputs_))
            throw Error("static ocl impl of '" + op_ + "' executed with other layouts than it was built for");
        // update_dispatch_data: sizes, kernel and work sizes for these shapes.
        const Sizes sz = hooks_.sizes(p);
        const OclDispatch disp = dispatch(config_, variant_.tb, sz.M, sz.N, sz.batches);
        if (disp.gws[0] == 0 || disp.gws[1] == 0 || disp.gws[2] == 0) return;   // empty output
        const OclKernel& kernel = sz.M <= size_t(kSkinnyMaxM) ? *skinny_ : *tiled_;

        args_.clear();
        if (shape_info_) {
            pack_shape_info(plan_, p.inputs, p.outputs, packed_);
            if (packed_ != last_packed_) {
                // Ordered on the in-order queue after the previous run's kernels.
                device_->write_async(ctx.stream, *shape_info_, 0, packed_.data(), packed_.size() * sizeof(int32_t));
                last_packed_ = packed_;
            }
            args_.push_back(OclArg::buf(*shape_info_));
        }
        for (const auto& m : ctx.inputs) args_.push_back(OclArg::mem(*m));
        for (const auto& m : ctx.outputs) args_.push_back(OclArg::mem(*m));
        device_->launch(ctx.stream, kernel, args_, disp);
    }

    std::string name() const override { return op_ + (dynamic_ ? "_ocl_dynamic" : "_ocl_static"); }
    bool is_dynamic() const override { return dynamic_; }

private:
    OpHooks hooks_;
    bool dynamic_;
    std::string op_;
    OclDevice* device_ = nullptr;
    Config config_;
    Variant variant_;
    std::shared_ptr<OclKernel> skinny_, tiled_;
    ShapeInfoPlan plan_;
    std::shared_ptr<Buffer> shape_info_;
    std::vector<int32_t> packed_, last_packed_;
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
        e.validate = [](const KernelParams& p) {
            std::vector<Layout> all = p.inputs;
            all.insert(all.end(), p.outputs.begin(), p.outputs.end());
            for (const Layout& l : all) {
                if (l.dtype != DataType::f32) return std::string("every tensor must be f32");
                if (!l.padding.empty()) return std::string("padded tensors are not supported");
                if (l.shape.rank() > kShapeInfoDims) return std::string("rank above 8");
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
