// The matrix-product kernel family (see ocl_matmul.hpp): tile configuration
// per device, JIT constants, kernel choice by M and dispatch, on the SDK's
// multi-kernel impl.
#include "dynrt/ocl_matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>

#include "dynrt/error.hpp"
#include "dynrt/ocl_impl.hpp"
#include "matmul_cl.hpp"

namespace dynrt {

namespace {

// Rows up to which the skinny (decode) path runs; it keeps one partial sum per
// row in registers.
constexpr int64_t kSkinnyMaxM = 16;
// Row buckets of the skinny kernels (entry point matmul_skinny_<bucket>); the
// shape-agnostic impl's stages are these, then matmul_tiled.
constexpr int64_t kSkinnyBuckets[] = {1, 2, 4, 8, 16};
constexpr size_t kBuckets = std::size(kSkinnyBuckets);

struct Config {
    int wg_m = 8, wg_n = 8;   // tiled work-group (WG_N along N is dim 0)
    int rm = 4, rn = 4;       // register block per work-item (multiples of 4)
    int tk = 8;               // depth of a local-memory slab
    int sk_wg = 64;           // skinny work-group size
    int skn_cols4 = 16;       // skinny with b [K, N]: float4 columns per work-group (rest: K slices)
    int tm() const { return wg_m * rm; }
    int tn() const { return wg_n * rn; }
    int lda() const { return tm() + 4; }   // +4 keeps float4 alignment and spreads banks
    int ldb() const { return tn() + 4; }
};

// Two configurations, by the device's preferred work-group size: 16x16
// work-items with 8x8 blocks (128x128 tiles) on GPUs, 8x8 with 4x4 blocks on
// CPUs (PoCL), where small tiles waste less on tails. Only these local sizes are
// ever used, so PoCL compiles few work-group functions.
Config config_for(const OclDeviceLimits& lim) {
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

// The tile a static build of an M x N product (`batches` of them) uses on a
// GPU: the largest of 128x128 (16x16 work-items, 8x8 blocks), 64x64 (16x16,
// 4x4) and 32x32 (8x8, 4x4) that gives at least one work-group per compute
// unit. A 128x128 tile reuses each slab most, but a 64 x 768 product makes 6
// of them for a GPU of 132 compute units; 32x32 tiles make 48. Other devices
// keep config_for's tile. DYNRT_OCL_MATMUL_TILE (32, 64 or 128) forces the
// tile on every device (tests run each on PoCL; tuning).
int forced_tile() {
    const char* env = std::getenv("DYNRT_OCL_MATMUL_TILE");
    if (!env || !*env) return 0;
    const std::string v(env);
    if (v == "32" || v == "64" || v == "128") return std::stoi(v);
    throw Error("DYNRT_OCL_MATMUL_TILE is '" + v + "': give 32, 64 or 128 (the tiled product's tile)");
}

Config with_tile(Config c, int tile) {
    c.wg_m = c.wg_n = tile == 32 ? 8 : 16;
    c.rm = c.rn = tile == 128 ? 8 : 4;
    c.tk = tile == 32 ? 8 : 16;
    return c;
}

Config config_for_size(const OclDeviceLimits& lim, size_t M, size_t N, size_t batches) {
    const Config c = config_for(lim);
    if (const int tile = forced_tile()) return with_tile(c, tile);
    if (c.tm() != 128 || !lim.is_gpu) return c;
    const auto tiles = [&](int t) { return (M + t - 1) / t * ((N + t - 1) / t) * batches; };
    for (int t : {128, 64})
        if (tiles(t) >= lim.compute_units) return with_tile(c, t);
    return with_tile(c, 32);
}

const OclDeviceLimits& limits_of(const KernelParams& p) {
    OclDevice* dev = p.engine ? OclDevice::from(*p.engine) : nullptr;
    if (!dev) throw Error("ocl matmul impl created on a non-ocl engine");
    return dev->limits();
}

Config config_of(const KernelParams& p) { return config_for(limits_of(p)); }

// `sk_max_m`: the largest skinny bucket the build holds (kSkinnyMaxM for the
// shape-agnostic build, the exact M for a static one).
JitDefines config_defines(const Config& c, const OclMatmulVariant& v, int64_t sk_max_m) {
    // b [N, K] uses SK_SLICES/SK_COLS, b [K, N] SKN_SLICES/SKN_COLS4
    const int sk_slices = std::min(32, c.sk_wg);
    const int sk_cols = c.sk_wg / sk_slices;
    return {
        {"FC", v.fc ? "1" : "0"},
        {"TA", v.ta ? "1" : "0"},
        {"TB", v.tb ? "1" : "0"},
        {"ALPHA", jit_float_literal(v.alpha)},
        {"BETA", jit_float_literal(v.beta)},
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
OclDispatch matmul_dispatch(const Config& c, bool tb, size_t M, size_t N, size_t batches) {
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
std::string check_int_range(const KernelParams& p) {
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

// The layout the shape-agnostic build compiles input `i` for: dynamic dims,
// except those the node's inferred layout holds static (KernelParams::
// node_inputs): they are the same on every run, so they become literals (K
// and N of a product with constant weights, as in a static build). With
// `rows_dynamic`, only the last dim of the input may be kept: fake alignment
// changes the leading (row) dims of fully_connected's input at run time.
// Outputs always stay dynamic: their padding (an in-place concat view)
// changes at run time and travels in shape_info.
Layout agnostic_input(const KernelParams& p, size_t i, bool rows_dynamic) {
    const Layout& rt = p.inputs.at(i);
    Layout l(PartialShape::dynamic_of_rank(rt.shape.rank()), rt.dtype, rt.format);
    if (!p.node_inputs || i >= p.node_inputs->size()) return l;
    const PartialShape& ns = (*p.node_inputs)[i].shape;
    if (ns.rank() != rt.shape.rank()) return l;
    const size_t first = rows_dynamic && ns.rank() > 0 ? ns.rank() - 1 : 0;
    for (size_t d = first; d < ns.rank(); ++d)
        if (ns[d].is_static() && rt.shape[d].is_static() && ns[d].get_length() == rt.shape[d].get_length())
            l.shape[d] = ns[d];
    return l;
}

}   // namespace

void add_ocl_matmul_impls(ModuleRegistrar& reg, const std::string& op, OclMatmulHooks hooks) {
    if (!hooks.variant || !hooks.sizes)
        throw Error("add_ocl_matmul_impls('" + op + "'): variant and sizes are required");
    const bool rows_dynamic = hooks.fake_align_rows > 0;
    OclMultiKernelSpec spec;
    spec.source = matmul_cl;
    spec.fused_ops = true;        // activation / eltwise post-ops before each store (STORE_Y)
    spec.padded_outputs = true;   // stores through OUTPUT0_PHYS; inputs are read dense
    spec.dynamic_input = [rows_dynamic](const KernelParams& p, size_t i) {
        return agnostic_input(p, i, i == 0 && rows_dynamic);
    };
    spec.defines = [hooks, rows_dynamic](const KernelParams& p, bool dynamic) {
        // A static impl knows its M, so it builds a skinny kernel for exactly
        // that M; the shape-agnostic one holds every bucket.
        const OclMatmulSizes sz = hooks.sizes(p);
        const size_t m = dynamic ? 0 : sz.M;
        const int64_t sk_max_m = dynamic                    ? kSkinnyMaxM
                                 : m <= size_t(kSkinnyMaxM) ? std::max<int64_t>(int64_t(m), 1)
                                                            : 1;
        const Config c = dynamic ? config_of(p) : config_for_size(limits_of(p), sz.M, sz.N, sz.batches);
        JitDefines d = config_defines(c, hooks.variant(p), sk_max_m);
        // K (the last dim of a when not transposed) not a literal: the skinny
        // float4 loop of b [N, K] reads two float4s per row address (matmul.cl).
        const PartialShape a = dynamic ? agnostic_input(p, 0, rows_dynamic).shape : p.inputs.at(0).shape;
        const bool k_dynamic = a.rank() == 0 || a[a.rank() - 1].is_dynamic();
        d.emplace_back("SKINNY_PAIRS", k_dynamic ? "1" : "0");
        return d;
    };
    spec.stages = [hooks](const KernelParams& p, bool dynamic) {
        std::vector<OclStage> s;
        if (dynamic) {
            for (int64_t b : kSkinnyBuckets) s.push_back(OclStage{"matmul_skinny_" + std::to_string(b)});
            s.push_back(OclStage{"matmul_tiled"});
            return s;
        }
        const size_t m = hooks.sizes(p).M;
        s.push_back(OclStage{m <= size_t(kSkinnyMaxM) ? "matmul_skinny_" + std::to_string(std::max<size_t>(m, 1))
                                                      : std::string("matmul_tiled")});
        return s;
    };
    // One stage runs per execution: a static impl's only kernel, or the
    // shape-agnostic impl's bucket for the runtime M (stages 0..4) or the
    // tiled kernel (stage 5).
    spec.update = [hooks](const KernelParams& p, const OclDeviceLimits& lim, std::vector<OclStageRun>& runs) {
        const OclMatmulSizes sz = hooks.sizes(p);
        // A static impl (one stage) was built for its size's tile.
        const Config c = runs.size() == 1 ? config_for_size(lim, sz.M, sz.N, sz.batches) : config_for(lim);
        const OclDispatch d = matmul_dispatch(c, hooks.variant(p).tb, sz.M, sz.N, sz.batches);
        if (runs.size() == 1) {
            runs[0].dispatch = d;
            return;
        }
        size_t pick = kBuckets;   // tiled
        if (sz.M <= size_t(kSkinnyMaxM)) {
            pick = 0;
            while (kSkinnyBuckets[pick] < int64_t(sz.M)) ++pick;
        }
        for (size_t k = 0; k < runs.size(); ++k) {
            runs[k].dispatch = d;
            if (k != pick) runs[k].dispatch.gws = {0, 0, 0};
        }
    };
    OclImplOptions opts;
    opts.dtypes = {DataType::f32};
    opts.fake_align_rows = hooks.fake_align_rows;
    opts.validate = [](const KernelParams& p) {
        for (const Layout& l : p.inputs)
            if (l.dtype != DataType::f32) return std::string("every tensor must be f32");
        for (const Layout& l : p.outputs)
            if (l.dtype != DataType::f32) return std::string("every tensor must be f32");
        return check_int_range(p);
    };
    add_ocl_multi_impls(reg, op, std::move(spec), std::move(opts));
}

}   // namespace dynrt
