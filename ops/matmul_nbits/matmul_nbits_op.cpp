// matmul_nbits: y = a * dequant(b)^T (+ bias), b an [N, K] weight quantised
// per block of `block_size` elements along K to `bits`-bit unsigned codes:
// w[n, k] = (q[n, k] - zero_point[n, blk]) * scale[n, blk], blk = k / block_size.
// The 4-bit weight format of LLM exports by onnxruntime's quantisation tools
// (com.microsoft MatMulNBits).
//
// Inputs: a [..., K] (f32/f16); b u8 [N, n_blocks, blob_size] (blob_size =
// block_size * bits / 8, codes packed low bits first, the last block zero-
// padded up to block_size); scales (a's type, N * n_blocks); optional
// zero_points (the attribute `zero_points` says whether input 3 is one): u8
// packed like the codes, ceil(n_blocks * bits / 8) bytes per row, or a's type,
// one per block (absent: 2^(bits-1)); optional bias (a's type, N).
//
// The reference dequantises each weight in double. The cpu impl reads the
// packed codes as they are, one block of a column at a time (below).
// The OpenCL kernel gives each output element a work-item that dequantises
// its column on the fly.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "matmul_nbits_cl.hpp"

namespace {

using namespace dynrt;

// The weight geometry the attributes fix.
struct Geometry {
    size_t k = 0, n = 0, bits = 4, block = 16, blocks = 0, blob = 0, zp_row = 0;
    bool has_zp = false;
};

Geometry geometry_of(const Attributes& a) {
    Geometry g;
    g.k = static_cast<size_t>(a.get_int("K"));
    g.n = static_cast<size_t>(a.get_int("N"));
    g.bits = static_cast<size_t>(a.get_int("bits"));
    g.block = static_cast<size_t>(a.get_int("block_size"));
    g.blocks = g.block == 0 ? 0 : (g.k + g.block - 1) / g.block;
    g.blob = g.block * g.bits / 8;
    g.zp_row = (g.blocks * g.bits + 7) / 8;
    g.has_zp = a.get_bool("zero_points");
    return g;
}

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "matmul_nbits", field));
}

// Attribute checks (also the import rule's, which refuses rather than throws).
std::string attr_problem(const Attributes& a) {
    const int64_t k = a.get_int("K"), n = a.get_int("N"), bits = a.get_int("bits"), bs = a.get_int("block_size");
    if (k < 1 || n < 1) return "K " + std::to_string(k) + " and N " + std::to_string(n) + " must be >= 1";
    if (bits != 2 && bits != 4 && bits != 8)
        return "bits " + std::to_string(bits) +
               ": 2, 4 and 8 only (the codes onnxruntime packs whole into bytes; 3, 5, 6 and 7 would straddle "
               "bytes in a layout its kernels do not define)";
    if (bs < 16 || (bs & (bs - 1)) != 0 || bs > (int64_t{1} << 30))
        return "block_size " + std::to_string(bs) + " must be a power of two >= 16 (as onnxruntime requires)";
    return {};
}

// The element count of a static input; false while its shape is not known.
bool static_count(const Layout& l, size_t* n) {
    if (!l.is_static()) return false;
    *n = l.get_shape().count();
    return true;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Attributes& attrs = ctx.attrs;
    if (const std::string why = attr_problem(attrs); !why.empty()) throw node_error(ctx, "attrs", why);
    const Geometry g = geometry_of(attrs);
    const size_t want_inputs = 3 + (g.has_zp ? 1 : 0);
    if (ctx.inputs.size() < want_inputs || ctx.inputs.size() > want_inputs + 1)
        throw node_error(ctx, "inputs",
                         "matmul_nbits takes a, b, scales" + std::string(g.has_zp ? ", zero_points" : "") +
                             " and an optional bias, got " + std::to_string(ctx.inputs.size()) + " inputs");
    const Layout& a = ctx.inputs[0];
    if (a.dtype != DataType::f32 && a.dtype != DataType::f16)
        throw node_error(ctx, "a", "a must be f32 or f16, got " + a.to_string());
    if (a.shape.rank() == 0) throw node_error(ctx, "a", "a " + a.to_string() + " is a scalar; it needs rank >= 1");
    const Dimension& last = a.shape[a.shape.rank() - 1];
    if (last.is_static() && static_cast<size_t>(last.get_length()) != g.k)
        throw node_error(ctx, "a", "a " + a.to_string() + ": its last dim is not K = " + std::to_string(g.k));
    auto expect = [&](size_t i, const char* name, bool u8, size_t count) {
        const Layout& l = ctx.inputs[i];
        if (u8 ? l.dtype != DataType::u8 : l.dtype != a.dtype)
            throw node_error(ctx, name,
                             std::string(name) + " " + l.to_string() + " must be " +
                                 (u8 ? std::string("u8") : "of a's type " + std::string(to_string(a.dtype))));
        size_t got = 0;
        if (static_count(l, &got) && got != count)
            throw node_error(ctx, name,
                             std::string(name) + " " + l.to_string() + " holds " + std::to_string(got) +
                                 " elements; N " + std::to_string(g.n) + ", K " + std::to_string(g.k) + ", bits " +
                                 std::to_string(g.bits) + " and block_size " + std::to_string(g.block) + " need " +
                                 std::to_string(count));
    };
    expect(1, "b", true, g.n * g.blocks * g.blob);
    expect(2, "scales", false, g.n * g.blocks);
    if (g.has_zp) {
        const bool packed = ctx.inputs[3].dtype == DataType::u8;
        expect(3, "zero_points", packed, packed ? g.n * g.zp_row : g.n * g.blocks);
    }
    if (ctx.inputs.size() > want_inputs) expect(want_inputs, "bias", false, g.n);
    std::vector<Dimension> dims(a.shape.begin(), a.shape.end());
    dims.back() = Dimension(static_cast<int64_t>(g.n));
    return {Layout(PartialShape(dims), a.dtype)};
}

// Where each input sits in a call.
struct Inputs {
    bool zp = false, zp_packed = false, bias = false;
    size_t bias_at = 0;
};

Inputs inputs_of(size_t count, DataType zp_type, const Geometry& g) {
    Inputs in;
    in.zp = g.has_zp;
    in.zp_packed = g.has_zp && zp_type == DataType::u8;
    in.bias_at = g.has_zp ? 4 : 3;
    in.bias = count > in.bias_at;
    return in;
}

// The code of element `within` of block `blk` of column n, and its zero point.
inline unsigned code_at(const uint8_t* b, const Geometry& g, size_t n, size_t blk, size_t within) {
    const size_t bit = within * g.bits;
    const uint8_t byte = b[(n * g.blocks + blk) * g.blob + bit / 8];
    return (byte >> (bit % 8)) & ((1u << g.bits) - 1u);
}

inline unsigned packed_zp_at(const uint8_t* zp, const Geometry& g, size_t n, size_t blk) {
    const size_t bit = blk * g.bits;
    return (zp[n * g.zp_row + bit / 8] >> (bit % 8)) & ((1u << g.bits) - 1u);
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Geometry g = geometry_of(call.attrs());
    const Inputs in = inputs_of(call.num_inputs(), g.has_zp ? call.in_type(3) : DataType::u8, g);
    const auto* b = call.in<uint8_t>(1);
    const auto* zp = in.zp_packed ? call.in<uint8_t>(3) : nullptr;
    const size_t rows = g.k == 0 ? 0 : call.in_shape(0).count() / g.k;
    std::vector<double> w(g.k);
    for (size_t n = 0; n < g.n; ++n) {
        for (size_t k = 0; k < g.k; ++k) {
            const size_t blk = k / g.block;
            const double zero = !in.zp         ? double(1u << (g.bits - 1))
                                : in.zp_packed ? double(packed_zp_at(zp, g, n, blk))
                                               : call.get(3, n * g.blocks + blk);
            w[k] = (double(code_at(b, g, n, blk, k % g.block)) - zero) * call.get(2, n * g.blocks + blk);
        }
        for (size_t m = 0; m < rows; ++m) {
            double acc = in.bias ? call.get(in.bias_at, n) : 0.0;
            for (size_t k = 0; k < g.k; ++k) acc += call.get(0, m * g.k + k) * w[k];
            call.set(0, m * g.n + n, acc);
        }
    }
}

// ---- cpu: packed codes, never unpacked as a whole -------------------------
//
// One or a few rows of 4-bit codes (decoding): sum_k a_k (q_k - z) s =
// s (sum_k a_k q_k - z sum_k a_k). Each row of a is first copied block by
// block with its even elements before its odd ones (zero-padded to whole
// blocks), so that byte i of a block's codes meets elements i (low nibble)
// and half + i (high nibble) of the copy: the loop over the packed bytes
// vectorises with no dequantised weight stored anywhere, and a's block sums
// are computed once per call, not per column. More rows, or other widths:
// each column is dequantised once into a column tile of K floats and
// multiplied with every row. Columns are split over the engine's threads.

// What the 4-bit column loop reads.
struct Columns4 {
    const Geometry* g;
    const float* split;   // rows x padded: a, each block's even elements first
    const float* sums;    // rows x blocks: a's block sums
    const uint8_t* codes;
    const float* scales;
    const uint8_t* zp8;   // packed zero points, or
    const float* zpf;     // float ones, or neither: `mid`
    float mid;
    const float* bias;
    float* y;
    size_t rows, padded;
};

// Columns [begin, end) of 4-bit codes: per column and row, the vector sum
// over blocks of scale * (even * lo + odd * hi), eight bytes of codes at a
// time widened to eight ints (GCC's and Clang's vector extensions: the
// compilers left the scalar form unvectorised), minus the scalar sum over
// blocks of scale * zero * block sum. One horizontal sum per output.
using V8f = float __attribute__((vector_size(32)));
using V8i = int32_t __attribute__((vector_size(32)));
using V8u8 = uint8_t __attribute__((vector_size(8)));

DYNRT_CPU_CLONES void columns_4bit(const Columns4& c, size_t begin, size_t end) {
    const Geometry& g = *c.g;
    const size_t half = g.block / 2;
    for (size_t n = begin; n < end; ++n) {
        for (size_t m = 0; m < c.rows; ++m) {
            const float* row = c.split + m * c.padded;
            V8f acc = {};
            float offset = 0.0f;
            for (size_t blk = 0; blk < g.blocks; ++blk) {
                const size_t at = n * g.blocks + blk;
                const float scale = c.scales[at];
                const float zero = c.zp8 ? float(packed_zp_at(c.zp8, g, n, blk)) : c.zpf ? c.zpf[at] : c.mid;
                offset += scale * zero * c.sums[m * g.blocks + blk];
                const uint8_t* q8 = c.codes + at * g.blob;
                const float* even = row + blk * g.block;
                const float* odd = even + half;
                V8f part = {};
                for (size_t i = 0; i < half; i += 8) {
                    V8u8 raw;
                    V8f e, o;
                    std::memcpy(&raw, q8 + i, sizeof raw);
                    std::memcpy(&e, even + i, sizeof e);
                    std::memcpy(&o, odd + i, sizeof o);
                    const V8i q = __builtin_convertvector(raw, V8i);
                    part += e * __builtin_convertvector(q & 15, V8f) + o * __builtin_convertvector(q >> 4, V8f);
                }
                acc += part * scale;
            }
            float sum = c.bias ? c.bias[n] : 0.0f;
            for (int l = 0; l < 8; ++l) sum += acc[l];
            c.y[m * g.n + n] = sum - offset;
        }
    }
}

// One block's `len` weights (code - zero) * scale into w; 4 bits a byte at a time.
DYNRT_CPU_CLONES void dequantise_block(const Geometry& g, const uint8_t* codes, float scale, float zero, float* w,
                                       size_t len) {
    if (g.bits == 4) {
        for (size_t i = 0; i + 1 < len; i += 2) {
            const uint8_t c = codes[i / 2];
            w[i] = (float(c & 15u) - zero) * scale;
            w[i + 1] = (float(c >> 4) - zero) * scale;
        }
        if (len % 2) w[len - 1] = (float(codes[len / 2] & 15u) - zero) * scale;
        return;
    }
    const unsigned mask = (1u << g.bits) - 1u;
    for (size_t i = 0; i < len; ++i) {
        const size_t bit = i * g.bits;
        w[i] = (float((codes[bit / 8] >> (bit % 8)) & mask) - zero) * scale;
    }
}

// x . w over `len` floats, eight lanes at a time.
DYNRT_CPU_CLONES float dot(const float* x, const float* w, size_t len) {
    V8f acc = {};
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        V8f xv, wv;
        std::memcpy(&xv, x + i, sizeof xv);
        std::memcpy(&wv, w + i, sizeof wv);
        acc += xv * wv;
    }
    float sum = 0.0f;
    for (int l = 0; l < 8; ++l) sum += acc[l];
    for (; i < len; ++i) sum += x[i] * w[i];
    return sum;
}

void fast_kernel(HostCall& call) {
    const Geometry g = geometry_of(call.attrs());
    const Inputs in = inputs_of(call.num_inputs(), g.has_zp ? call.in_type(3) : DataType::u8, g);
    const size_t rows = call.in_shape(0).count() / g.k;
    const auto* a = call.in<float>(0);
    const auto* b = call.in<uint8_t>(1);
    const auto* scales = call.in<float>(2);
    const auto* zp8 = in.zp_packed ? call.in<uint8_t>(3) : nullptr;
    const float* zpf = in.zp && !in.zp_packed ? call.in<float>(3) : nullptr;
    const float* bias = in.bias ? call.in<float>(in.bias_at) : nullptr;
    float* y = call.out<float>(0);
    if (rows == 0) return;
    const float mid = float(1u << (g.bits - 1));
    auto zero_of = [&](size_t n, size_t blk) {
        return zp8 ? float(packed_zp_at(zp8, g, n, blk)) : zpf ? zpf[n * g.blocks + blk] : mid;
    };
    const size_t padded = g.blocks * g.block, half = g.block / 2;
    std::vector<float> split, sums;
    const bool by_nibbles = g.bits == 4 && rows < 4;
    if (by_nibbles) {
        split.assign(rows * padded, 0.0f);
        sums.assign(rows * g.blocks, 0.0f);
        for (size_t m = 0; m < rows; ++m)
            for (size_t k = 0; k < g.k; ++k) {
                const size_t blk = k / g.block, j = k % g.block;
                split[m * padded + blk * g.block + (j % 2) * half + j / 2] = a[m * g.k + k];
                sums[m * g.blocks + blk] += a[m * g.k + k];
            }
    }
    const CpuThreads threads(call.params().engine,
                             checked_mul(g.n, g.blocks * g.blob + rows * sizeof(float), "matmul_nbits bytes"));
    // Enough columns per chunk for ~64K multiply-adds.
    const size_t grain = std::max<size_t>(1, (size_t{1} << 16) / std::max<size_t>(1, g.k * rows));
    if (by_nibbles) {
        const Columns4 c{&g, split.data(), sums.data(), b, scales, zp8, zpf, mid, bias, y, rows, padded};
        parallel_for(threads, g.n, grain, [&](size_t begin, size_t end) { columns_4bit(c, begin, end); });
        return;
    }
    // Several rows: each column's K weights dequantised once into a column
    // tile (K floats on the thread's heap, never the whole weight), then one
    // dot product per row.
    parallel_for(threads, g.n, grain, [&](size_t begin, size_t end) {
        std::vector<float> column(g.k);
        for (size_t n = begin; n < end; ++n) {
            for (size_t blk = 0; blk < g.blocks; ++blk) {
                const size_t k0 = blk * g.block;
                dequantise_block(g, b + (n * g.blocks + blk) * g.blob, scales[n * g.blocks + blk], zero_of(n, blk),
                                 column.data() + k0, std::min(g.block, g.k - k0));
            }
            for (size_t m = 0; m < rows; ++m)
                y[m * g.n + n] = (bias ? bias[n] : 0.0f) + dot(a + m * g.k, column.data(), g.k);
        }
    });
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = matmul_nbits_cl;
    spec.kernel_name = "matmul_nbits_cols";
    spec.defines = [](const KernelParams& p, bool) {
        const Geometry g = geometry_of(*p.attrs);
        const Inputs in = inputs_of(p.inputs.size(), g.has_zp ? p.inputs[3].dtype : DataType::u8, g);
        const std::string bias_param =
            in.bias ? ", __global const INPUT" + std::to_string(in.bias_at) + "_TYPE* bias" : std::string();
        return JitDefines{{"K_DIM", std::to_string(g.k)},
                          {"N_DIM", std::to_string(g.n)},
                          {"BITS", std::to_string(g.bits)},
                          {"BLOCK", std::to_string(g.block)},
                          {"BLOCKS", std::to_string(g.blocks)},
                          {"BLOB", std::to_string(g.blob)},
                          {"ZP_ROW", std::to_string(g.zp_row)},
                          {"HAS_ZP", in.zp ? "1" : "0"},
                          {"ZP_PACKED", in.zp_packed ? "1" : "0"},
                          {"HAS_BIAS", in.bias ? "1" : "0"},
                          {"BIAS_PARAM", bias_param},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs[0].count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// com.microsoft MatMulNBits: A, B, scales, zero_points, g_idx, bias.
bool onnx_matmul_nbits(ImportContext& c) {
    if (!c.only_attrs({"K", "N", "bits", "block_size", "accuracy_level"})) return false;
    // accuracy_level picks onnxruntime's internal compute type (int8 products
    // at 4): dynrt computes in f32 whatever it says, so it changes nothing here.
    if (c.present(4))
        return c.unsupported(
            "g_idx (input 4, act-order GPTQ: blocks chosen per element of K) is not supported; export without it");
    if (c.layout(1).dtype != DataType::u8)
        return c.unsupported("B of type " + std::string(to_string(c.layout(1).dtype)) + ": packed uint8 only");
    for (const char* a : {"K", "N", "block_size"})
        if (!c.has(a)) return c.unsupported(std::string("attribute '") + a + "' is required");
    c.set("K", c.i("K", 0));
    c.set("N", c.i("N", 0));
    c.set("bits", c.i("bits", 4));
    c.set("block_size", c.i("block_size", 0));
    c.set("zero_points", c.present(3));
    if (const std::string why = attr_problem(c.out.attrs); !why.empty()) return c.unsupported(why);
    c.use_inputs({0, 1, 2, 3, 5});
    return true;
}

void register_matmul_nbits(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "matmul_nbits", "a x dequant(b)^T (+ bias), b quantised per block along K to 2, 4 or 8 bits (MatMulNBits)", 3,
        5,
        {attr_int("K", std::nullopt, "the reduction size: a's last dim, b's rows' length"),
         attr_int("N", std::nullopt, "output columns: b's rows"), attr_int("bits", 4, "code width: 2, 4 or 8"),
         attr_int("block_size", std::nullopt, "elements of K sharing one scale and zero point (a power of two >= 16)"),
         attr_bool("zero_points", false, "input 3 holds the zero points (else 2^(bits-1))")},
        infer);
    def.imports = {onnx_rule("com.microsoft.MatMulNBits", 3, 6, onnx_matmul_nbits,
                             "`K`, `N`, `bits` 2/4/8, `block_size`; `accuracy_level` ignored; zero_points u8 or "
                             "float; g_idx unsupported; bias")};
    reg.add_op(def);
    add_host_impls(reg, "matmul_nbits", reference, host_options({DataType::f32, DataType::f16}));
    add_host_impls(reg, "matmul_nbits", fast_kernel, optimised_host_options({DataType::f32}));
    add_ocl_impls(reg, "matmul_nbits", ocl_spec(), ocl_options({DataType::f32, DataType::f16}));
}

}   // namespace

DYNRT_MODULE("matmul_nbits", register_matmul_nbits)
