// sdpa: scaled-dot-product attention (the geometry and its rules:
// sdpa_call.hpp). This file holds the definition, shape inference, the
// reference impl and the ONNX import rules; the cpu engine's flash-attention
// loop is in sdpa_cpu.cpp, the OpenCL impls in sdpa_ocl.cpp.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "sdpa_call.hpp"
#include "sdpa_impls.hpp"

namespace {

using namespace dynrt;

const char* const kInputNames[] = {"q", "k", "v", "mask"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "sdpa", field));
}

// Two dims that must be equal: an error when both are static and differ.
void expect_same(const ShapeInferContext& ctx, size_t a, size_t da, size_t b, size_t db, const std::string& what) {
    const Dimension& x = ctx.inputs[a].shape[da];
    const Dimension& y = ctx.inputs[b].shape[db];
    if (x.is_static() && y.is_static() && x.get_length() != y.get_length())
        throw node_error(ctx, kInputNames[b],
                         std::string(kInputNames[b]) + " " + ctx.inputs[b].shape.to_string() + " and " +
                             kInputNames[a] + " " + ctx.inputs[a].shape.to_string() + ": " + what + " differs (" +
                             std::to_string(y.get_length()) + " and " + std::to_string(x.get_length()) + ")");
}

// The first static one of the dims, else the first.
Dimension known(std::initializer_list<Dimension> dims) {
    for (const Dimension& d : dims)
        if (d.is_static()) return d;
    return *dims.begin();
}

void check_attrs(const ShapeInferContext& ctx) {
    const int64_t causal = ctx.attrs.get_int("causal");
    if (causal < 0 || causal > 2)
        throw node_error(ctx, "causal",
                         "causal " + std::to_string(causal) + ": 0 (none), 1 (upper-left) or 2 (lower-right)");
    const int64_t zero = ctx.attrs.get_int("zero_masked_rows");
    if (zero != 0 && zero != 1)
        throw node_error(ctx, "zero_masked_rows", "zero_masked_rows " + std::to_string(zero) + ": 0 or 1");
}

// The mask broadcasts to the scores [B, Hq, Sq, Sk] (numpy rules, one way:
// each of its dims is 1 or the dim it lines up with).
void check_mask(const ShapeInferContext& ctx, const std::vector<Dimension>& scores) {
    const Layout& m = ctx.inputs[3];
    const DataType qt = ctx.inputs[0].dtype;
    if (m.dtype != DataType::boolean && m.dtype != DataType::u8 && m.dtype != qt)
        throw node_error(ctx, "mask",
                         "mask " + m.to_string() + " must be bool, u8 or the type of q (" + to_string(qt) + ")");
    const PartialShape target(scores);
    const std::string shapes = "mask " + m.shape.to_string() + " and the scores " + target.to_string();
    if (m.shape.rank() > 4) throw node_error(ctx, "mask", shapes + ": the mask has more than 4 dims");
    for (size_t d = 0; d < m.shape.rank(); ++d) {
        const Dimension& md = m.shape[d];
        const Dimension& td = scores[4 - m.shape.rank() + d];
        if (md.is_static() && td.is_static() && md.get_length() != 1 && md.get_length() != td.get_length())
            throw node_error(ctx, "mask",
                             shapes + " [B,Hq,Sq,Sk]: mask dim " + std::to_string(d) + " does not broadcast");
    }
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    check_attrs(ctx);
    if (ctx.inputs.size() < 3 || ctx.inputs.size() > 4)
        throw node_error(ctx, "inputs",
                         "sdpa takes 3 or 4 inputs (q, k, v[, mask]), got " + std::to_string(ctx.inputs.size()));
    const Layout& q = ctx.inputs[0];
    if (!is_floating(q.dtype)) throw node_error(ctx, "q", "sdpa takes a floating-point q, got " + q.to_string());
    for (size_t i = 0; i < 3; ++i) {
        const Layout& l = ctx.inputs[i];
        if (l.shape.rank() != 4)
            throw node_error(ctx, kInputNames[i],
                             std::string(kInputNames[i]) + " " + l.to_string() +
                                 " must have rank 4 ([B, heads, sequence, head size])");
        if (l.dtype != q.dtype)
            throw node_error(
                ctx, kInputNames[i],
                std::string(kInputNames[i]) + " " + l.to_string() + " must have the type of q " + q.to_string());
    }
    expect_same(ctx, 0, 0, 1, 0, "the batch B (dim 0)");
    expect_same(ctx, 0, 0, 2, 0, "the batch B (dim 0)");
    expect_same(ctx, 0, 3, 1, 3, "the head size D (dim 3)");
    expect_same(ctx, 1, 1, 2, 1, "the kv heads Hk (dim 1)");
    expect_same(ctx, 1, 2, 2, 2, "the key sequence Sk (dim 2)");
    const Dimension& hq = q.shape[1];
    const Dimension hk = known({ctx.inputs[1].shape[1], ctx.inputs[2].shape[1]});
    if (hq.is_static() && hk.is_static()) {
        const int64_t a = hq.get_length(), b = hk.get_length();
        if (b == 0 ? a != 0 : a % b != 0)
            throw node_error(ctx, "k",
                             "q " + q.shape.to_string() + " and k " + ctx.inputs[1].shape.to_string() + ": the " +
                                 std::to_string(a) + " query heads do not divide into " + std::to_string(b) +
                                 " kv heads (Hq % Hk must be 0)");
    }
    const Dimension batch = known({q.shape[0], ctx.inputs[1].shape[0], ctx.inputs[2].shape[0]});
    const Dimension sk = known({ctx.inputs[1].shape[2], ctx.inputs[2].shape[2]});
    if (ctx.inputs.size() == 4) check_mask(ctx, {batch, hq, q.shape[2], sk});
    return {Layout(PartialShape{batch, hq, q.shape[2], ctx.inputs[2].shape[3]}, q.dtype)};
}

// 2 FLOPs per multiply-add: the scores (D each) and the weighted sum (Dv each).
OpCost cost(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs, const Attributes&) {
    OpCost c = io_bytes_cost(inputs, outputs);
    const Shape q = inputs.at(0).get_shape(), k = inputs.at(1).get_shape(), v = inputs.at(2).get_shape();
    c.flops =
        2.0 * static_cast<double>(q[0] * q[1] * q[2]) * static_cast<double>(k[2]) * static_cast<double>(q[3] + v[3]);
    return c;
}

// ---- reference ------------------------------------------------------------
//
// Row by row as the definition reads: every score in double, the softmax
// over the row's scores shifted by their maximum, the weighted sum of v.
void reference(HostCall& call) {
    const Shape* mask = call.num_inputs() > 3 ? &call.in_shape(3) : nullptr;
    const sdpa::Dims g = sdpa::dims_of(call.in_shape(0), call.in_shape(1), call.in_shape(2), mask,
                                       mask ? call.in_type(3) : DataType::f32);
    const double scale = sdpa::scale_of(call.attrs(), g.d);
    const sdpa::Causal causal = sdpa::causal_of(call.attrs());
    const double masked_row = sdpa::zero_masked_rows(call.attrs()) ? 0.0 : std::nan("");
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> p(g.sk);
    for (size_t b = 0; b < g.b; ++b) {
        for (size_t h = 0; h < g.hq; ++h) {
            for (size_t i = 0; i < g.sq; ++i) {
                const size_t end = sdpa::visible_end(causal, i, g.sq, g.sk);
                double mx = -inf;
                for (size_t j = 0; j < g.sk; ++j) {
                    double s = -inf;
                    if (j < end) {
                        double dot = 0.0;
                        for (size_t t = 0; t < g.d; ++t)
                            dot += call.get(0, g.q_row(b, h, i) + t) * call.get(1, g.k_row(b, h, j) + t);
                        s = scale * dot;
                        if (g.has_mask) {
                            const double m = call.get(3, g.mask_row(b, h, i) + j * g.mask_stride[3]);
                            s = g.mask_bool ? (m != 0.0 ? s : -inf) : s + m;
                        }
                    }
                    p[j] = s;
                    mx = std::max(mx, s);
                }
                const size_t out = g.out_row(b, h, i);
                if (mx == -inf) {   // every key masked (or none at all)
                    for (size_t t = 0; t < g.dv; ++t) call.set(0, out + t, masked_row);
                    continue;
                }
                double sum = 0.0;
                for (size_t j = 0; j < g.sk; ++j) sum += p[j] = std::exp(p[j] - mx);
                for (size_t t = 0; t < g.dv; ++t) {
                    double y = 0.0;
                    for (size_t j = 0; j < g.sk; ++j) y += p[j] * call.get(2, g.v_row(b, h, j) + t);
                    call.set(0, out + t, y / sum);
                }
            }
        }
    }
}

// ---- ONNX -----------------------------------------------------------------

// TensorProto data types a softmax in float is at least as precise as:
// FLOAT, FLOAT16, BFLOAT16.
bool float_precision(int64_t type) { return type == 1 || type == 10 || type == 16; }

// The standard Attention (opset 23 on) in its 4-D form: q [B, Hq, Sq, D],
// k and v [B, Hk, Sk, .], an optional attn_mask; is_causal is upper-left
// aligned (no past); a fully masked row is 0. What sdpa cannot express is
// unsupported, with the reason.
bool onnx_attention(ImportContext& c) {
    if (c.opset() < 23) return c.unsupported("Attention is an ai.onnx op from opset 23 on");
    if (!c.only_attrs({"scale", "is_causal", "q_num_heads", "kv_num_heads", "softcap", "qk_matmul_output_mode",
                       "softmax_precision"}))
        return false;
    if (c.present(4) || c.present(5))
        return c.unsupported("past_key / past_value (a KV cache concatenated inside the node): not expressed by sdpa");
    if (c.present(6)) return c.unsupported("nonpad_kv_seqlen (per-batch key lengths): not expressed by sdpa");
    if (c.f("softcap", 0.0) != 0.0)
        return c.unsupported("softcap " + std::to_string(c.f("softcap", 0.0)) + " (tanh-capped scores)");
    if (c.i("qk_matmul_output_mode", 0) != 0)
        return c.unsupported("qk_matmul_output_mode " + std::to_string(c.i("qk_matmul_output_mode", 0)) +
                             " (the scores as an output)");
    if (c.has("softmax_precision") && !float_precision(c.i("softmax_precision", 1)))
        return c.unsupported("softmax_precision " + std::to_string(c.i("softmax_precision", 1)) +
                             ": sdpa's softmax runs in float");
    for (size_t k = 0; k < 3; ++k)
        if (c.rank(k) != 4)
            return c.unsupported("input " + std::to_string(k) + " " + c.layout(k).shape.to_string() +
                                 " is not 4-D (3-D inputs split heads by q_num_heads / kv_num_heads): sdpa takes "
                                 "[B, heads, sequence, head size]");
    // With 4-D inputs the head counts are dims 1 of q and k: attributes that
    // say otherwise, or cannot be checked at import, are not dropped silently.
    const char* const heads[] = {"q_num_heads", "kv_num_heads"};
    for (size_t k = 0; k < 2; ++k) {
        if (!c.has(heads[k])) continue;
        const Dimension& d = c.layout(k).shape[1];
        const int64_t n = c.i(heads[k], 0);
        if (!d.is_static() || d.get_length() != n)
            return c.unsupported(std::string(heads[k]) + " " + std::to_string(n) + " with 4-D input " +
                                 std::to_string(k) + " " + c.layout(k).shape.to_string() +
                                 ": dim 1 is not known to be that");
    }
    if (c.has("scale") && c.f("scale", 0.0) == 0.0)
        return c.unsupported("scale 0 (every score 0): sdpa's scale 0 means 1/sqrt(D)");
    if (c.present(3)) {
        // ONNX pads a shorter mask with masked keys; sdpa's mask broadcasts.
        const PartialShape& m = c.layout(3).shape;
        const Dimension& sk = c.layout(1).shape[2];
        if (m.rank() > 0 && m[m.rank() - 1].is_static() && sk.is_static()) {
            const int64_t last = m[m.rank() - 1].get_length();
            if (last != 1 && last < sk.get_length())
                return c.unsupported("attn_mask " + m.to_string() + " is shorter than the " +
                                     std::to_string(sk.get_length()) + " keys (ONNX pads it with masked keys)");
        }
    }
    c.set("scale", c.f("scale", 0.0));
    c.set("causal", c.i("is_causal", 0) != 0 ? int64_t{1} : int64_t{0});
    // ONNX's reference (onnx >= 1.20, for opsets 23 and 24: the node tests
    // test_attention_23_boolmask_fullymasked_row_nan_robustness and
    // test_attention_causal_boolmask_nan_robustness) gives 0 for a row whose
    // every key is masked.
    c.set("zero_masked_rows", int64_t{1});
    c.use_inputs({0, 1, 2, 3});
    return true;
}

// DynrtSdpa: the op itself, as dynrt's own graph patterns emit it (internal).
bool onnx_dynrt_sdpa(ImportContext& c) {
    if (!c.only_attrs({"scale", "causal", "zero_masked_rows"})) return false;
    c.set("scale", c.f("scale", 0.0));
    c.set("causal", c.i("causal", 0));
    c.set("zero_masked_rows", c.i("zero_masked_rows", 0));
    c.use_inputs({0, 1, 2, 3});
    return true;
}

void register_sdpa(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("sdpa", "Scaled-dot-product attention softmax(scale * q k^T + mask) v, grouped heads, causal", 3, 4,
               {attr_float("scale", 0.0, "factor of q . k (0: 1/sqrt(D))"),
                attr_int("causal", 0, "0 none, 1 query i sees keys j <= i, 2 keys j <= i + Sk - Sq"),
                attr_int("zero_masked_rows", 0, "1: a query whose every key is masked gives 0 (0: NaN)")},
               infer);
    def.cost = cost;
    def.imports = {
        onnx_rule("Attention", 3, 7, onnx_attention,
                  "opset >= 23, 4-D q/k/v, optional attn_mask; `scale`, `is_causal` (upper-left); fully masked rows 0; "
                  "no past, softcap, qk_matmul_output_mode or nonpad_kv_seqlen"),
        onnx_rule("DynrtSdpa", 3, 4, onnx_dynrt_sdpa,
                  "internal (dynrt's graph patterns): q, k, v, mask; `scale`, `causal`, `zero_masked_rows`")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, "sdpa", reference, host_options(dtypes));
    sdpa::register_cpu_impls(reg);
    sdpa::register_ocl_impls(reg);
}

}   // namespace

DYNRT_MODULE("sdpa", register_sdpa)
