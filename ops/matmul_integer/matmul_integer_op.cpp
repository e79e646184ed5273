// matmul_integer: the integer matrix products of quantized models (ONNX
// MatMulInteger and QLinearMatMul), A[..., M, K] x B[..., K, N] with numpy
// batch broadcasting over the leading dims.
//
//   acc[m, n] = sum_k (A[m, k] - a_zero_point[m]) * (B[k, n] - b_zero_point[n])
//
// exact in integers; a_zero_point is a scalar or one per row of A (M), and
// b_zero_point a scalar or one per column of B (N). Without `requantize` the
// output is acc as i32 (MatMulInteger: inputs A, B and, as the attributes
// a_zero_point / b_zero_point say, the zero points, in that order). With
// `requantize` (QLinearMatMul: inputs A, a_scale, a_zero_point, B, b_scale,
// b_zero_point, y_scale, y_zero_point, the ONNX order) the output is
//
//   y = saturate(rint(f32(acc) * multiplier) + y_zero_point),
//   multiplier = f32(a_scale[m] * b_scale[n]) / y_scale   (all in f32)
//
// in y_zero_point's type, ties to even: every impl computes exactly that,
// so they agree bit for bit. Scales that are not positive are errors naming
// the node and the field.
#include <algorithm>
#include <cmath>
#include <cstdint>
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
#include "matmul_integer_cl.hpp"

namespace {

using namespace dynrt;

const char* const kOp = "matmul_integer";
const std::vector<DataType> kTypes = {DataType::u8, DataType::i8, DataType::i32};

Error field_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, kOp, field));
}

// Where each input sits in the node's input list (-1: absent).
struct Slots {
    int a = 0, b = 1, a_zp = -1, b_zp = -1, a_scale = -1, b_scale = -1, y_scale = -1, y_zp = -1;
    size_t count = 2;
};

Slots slots_of(const Attributes& attrs) {
    Slots s;
    if (attrs.get_bool("requantize")) {
        s.a_scale = 1, s.a_zp = 2, s.b = 3, s.b_scale = 4, s.b_zp = 5, s.y_scale = 6, s.y_zp = 7;
        s.count = 8;
        return s;
    }
    int next = 2;
    if (attrs.get_bool("a_zero_point")) s.a_zp = next++;
    if (attrs.get_bool("b_zero_point")) s.b_zp = next++;
    s.count = static_cast<size_t>(next);
    return s;
}

bool is_quant_type(DataType t) { return t == DataType::u8 || t == DataType::i8; }

// ---- shape inference ---------------------------------------------------------

// A zero point or scale: a scalar, [1] or [extent] (per row / column).
void check_param(const ShapeInferContext& ctx, int slot, const char* field, const Dimension& extent, const char* per,
                 bool scale, DataType type) {
    if (slot < 0) return;
    const Layout& l = ctx.inputs[static_cast<size_t>(slot)];
    if (scale ? l.dtype != DataType::f32 : l.dtype != type)
        throw field_error(ctx.node, field,
                          std::string(field) + " " + l.to_string() + " must be " + (scale ? "f32" : to_string(type)));
    const bool ok = l.shape.rank() == 0 ||
                    (l.shape.rank() == 1 && (!l.shape[0].is_static() || l.shape[0].get_length() == 1 ||
                                             !extent.is_static() || l.shape[0].get_length() == extent.get_length()));
    if (!ok)
        throw field_error(ctx.node, field,
                          std::string(field) + " " + l.shape.to_string() + " must be a scalar, [1] or one per " + per +
                              " [" + extent.to_string() + "]");
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Slots s = slots_of(ctx.attrs);
    if (ctx.inputs.size() != s.count)
        throw field_error(ctx.node, "inputs",
                          "matmul_integer takes " + std::to_string(s.count) + " inputs with these attributes, got " +
                              std::to_string(ctx.inputs.size()));
    const Layout& a = ctx.inputs[static_cast<size_t>(s.a)];
    const Layout& b = ctx.inputs[static_cast<size_t>(s.b)];
    if (!is_quant_type(a.dtype)) throw field_error(ctx.node, "A", "A must be u8 or i8, got " + a.to_string());
    if (!is_quant_type(b.dtype)) throw field_error(ctx.node, "B", "B must be u8 or i8, got " + b.to_string());
    const size_t ra = a.shape.rank(), rb = b.shape.rank();
    if (ra < 2 || rb < 2)
        throw field_error(ctx.node, "inputs",
                          "A " + a.shape.to_string() + " and B " + b.shape.to_string() + " must have rank >= 2");
    const Dimension &m = a.shape[ra - 2], &k = a.shape[ra - 1], &kb = b.shape[rb - 2], &n = b.shape[rb - 1];
    if (k.is_static() && kb.is_static() && k.get_length() != kb.get_length())
        throw field_error(ctx.node, "B",
                          "A " + a.shape.to_string() + " and B " + b.shape.to_string() + ": inner dims differ");
    check_param(ctx, s.a_zp, s.a_scale < 0 ? "a_zero_point" : "a_zero_point", m, "row of A", false, a.dtype);
    check_param(ctx, s.b_zp, "b_zero_point", n, "column of B", false, b.dtype);
    check_param(ctx, s.a_scale, "a_scale", m, "row of A", true, a.dtype);
    check_param(ctx, s.b_scale, "b_scale", n, "column of B", true, b.dtype);
    check_param(ctx, s.y_scale, "y_scale", Dimension(1), "tensor", true, a.dtype);
    DataType out = DataType::i32;
    if (s.y_zp >= 0) {
        out = ctx.inputs[7].dtype;
        if (!is_quant_type(out)) throw field_error(ctx.node, "y_zero_point", "y_zero_point must be u8 or i8");
        check_param(ctx, s.y_zp, "y_zero_point", Dimension(1), "tensor", false, out);
    }
    const std::vector<Dimension> ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
    std::vector<Dimension> dims =
        broadcast_inputs({PartialShape(ab), PartialShape(bb)},
                         "A " + a.shape.to_string() + " and B " + b.shape.to_string() + " (batch dims)",
                         node_context(ctx.node, kOp, "inputs"))
            .dims();
    dims.push_back(m);
    dims.push_back(n);
    return {Layout(PartialShape(dims), out)};
}

// ---- the host impls --------------------------------------------------------------

struct Problem {
    size_t batch = 1, m = 0, k = 0, n = 0;
    std::vector<size_t> a_mat, b_mat;   // per output matrix: the A and B matrix it reads
    std::vector<int32_t> a_zp, b_zp;    // one per row / column
    std::vector<float> mult;            // requantize: [m * n] multipliers
    int32_t y_zp = 0;
};

float scale_at(const HostCall& call, int slot, size_t i, const char* field) {
    const Shape& s = call.in_shape(static_cast<size_t>(slot));
    const size_t idx = s.count() == 1 ? 0 : i;
    const auto v = static_cast<float>(call.get(static_cast<size_t>(slot), idx));
    if (!(v > 0.0f))
        throw field_error(call.node(), field,
                          std::string(field) + "[" + std::to_string(idx) + "] is " + std::to_string(v) +
                              "; a quantization scale must be positive");
    return v;
}

std::vector<int32_t> per(const HostCall& call, int slot, size_t n, const char* field) {
    std::vector<int32_t> v(n, 0);
    if (slot < 0) return v;
    const Shape& s = call.in_shape(static_cast<size_t>(slot));
    if (s.count() != 1 && s.count() != n)
        throw field_error(
            call.node(), field,
            std::string(field) + " " + s.to_string() + " must have 1 or " + std::to_string(n) + " elements");
    for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<int32_t>(call.get(static_cast<size_t>(slot), s.count() == 1 ? 0 : i));
    return v;
}

Problem problem_of(const HostCall& call) {
    const Slots s = slots_of(call.attrs());
    const Shape& a = call.in_shape(static_cast<size_t>(s.a));
    const Shape& b = call.in_shape(static_cast<size_t>(s.b));
    const Shape& y = call.out_shape(0);
    Problem p;
    p.m = static_cast<size_t>(a[a.rank() - 2]), p.k = static_cast<size_t>(a[a.rank() - 1]);
    p.n = static_cast<size_t>(b[b.rank() - 1]);
    const Shape yb(std::vector<int64_t>(y.begin(), y.end() - 2));
    p.batch = yb.count();
    BroadcastIndex ix(
        yb, {Shape(std::vector<int64_t>(a.begin(), a.end() - 2)), Shape(std::vector<int64_t>(b.begin(), b.end() - 2))});
    for (size_t i = 0; i < p.batch; ++i, ix.next()) {
        p.a_mat.push_back(ix.in(0));
        p.b_mat.push_back(ix.in(1));
    }
    p.a_zp = per(call, s.a_zp, p.m, "a_zero_point");
    p.b_zp = per(call, s.b_zp, p.n, "b_zero_point");
    if (s.y_scale >= 0) {
        const float ys = scale_at(call, s.y_scale, 0, "y_scale");
        p.mult.resize(p.m * p.n);
        for (size_t i = 0; i < p.m; ++i)
            for (size_t j = 0; j < p.n; ++j)
                p.mult[i * p.n + j] =
                    (scale_at(call, s.a_scale, i, "a_scale") * scale_at(call, s.b_scale, j, "b_scale")) / ys;
        p.y_zp = per(call, s.y_zp, 1, "y_zero_point")[0];
    }
    return p;
}

template <typename T>
void store(T* y, size_t i, int64_t acc, const Problem& p, size_t mn, float lo, float hi) {
    if (p.mult.empty()) {
        y[i] = static_cast<T>(acc);
        return;
    }
    const float v = std::nearbyint(static_cast<float>(acc) * p.mult[mn]) + static_cast<float>(p.y_zp);
    y[i] = static_cast<T>(std::clamp(v, lo, hi));
}

void reference(HostCall& call) {
    const Slots s = slots_of(call.attrs());
    const Problem p = problem_of(call);
    const auto as = static_cast<size_t>(s.a), bs = static_cast<size_t>(s.b);
    const DataType out = call.out_type(0);
    const float lo = out == DataType::u8 ? 0.0f : -128.0f, hi = out == DataType::u8 ? 255.0f : 127.0f;
    for (size_t t = 0; t < p.batch; ++t)
        for (size_t i = 0; i < p.m; ++i)
            for (size_t j = 0; j < p.n; ++j) {
                int64_t acc = 0;
                for (size_t q = 0; q < p.k; ++q) {
                    const auto av = static_cast<int64_t>(call.get(as, (p.a_mat[t] * p.m + i) * p.k + q)) - p.a_zp[i];
                    const auto bv = static_cast<int64_t>(call.get(bs, (p.b_mat[t] * p.k + q) * p.n + j)) - p.b_zp[j];
                    acc += av * bv;
                }
                const size_t o = (t * p.m + i) * p.n + j;
                if (out == DataType::i32) store(call.out<int32_t>(0), o, acc, p, i * p.n + j, lo, hi);
                if (out == DataType::u8) store(call.out<uint8_t>(0), o, acc, p, i * p.n + j, lo, hi);
                if (out == DataType::i8) store(call.out<int8_t>(0), o, acc, p, i * p.n + j, lo, hi);
            }
}

// ---- cpu: rows over the engine's threads, int32 lanes over N ---------------------
//
// One output row at a time: acc[0..N) += (a[k] - azp) * (B[k, 0..N) - bzp[..]),
// a loop over N the compiler vectorises in int32 lanes. K is limited so that
// int32 cannot overflow (255 * 255 * K < 2^31); larger K goes to the reference.
constexpr size_t kMaxK = 33000;

template <typename TA, typename TB>
__attribute__((always_inline)) inline void row_acc(const TA* a, const TB* b, const int32_t* bzp, int32_t azp,
                                                   int32_t* acc, size_t k, size_t n) {
    for (size_t j = 0; j < n; ++j) acc[j] = 0;
    for (size_t q = 0; q < k; ++q) {
        const int32_t av = static_cast<int32_t>(a[q]) - azp;
        const TB* br = b + q * n;
        for (size_t j = 0; j < n; ++j) acc[j] += av * (static_cast<int32_t>(br[j]) - bzp[j]);
    }
}
DYNRT_CPU_CLONES void row_uu(const uint8_t* a, const uint8_t* b, const int32_t* bz, int32_t az, int32_t* acc, size_t k,
                             size_t n) {
    row_acc(a, b, bz, az, acc, k, n);
}
DYNRT_CPU_CLONES void row_us(const uint8_t* a, const int8_t* b, const int32_t* bz, int32_t az, int32_t* acc, size_t k,
                             size_t n) {
    row_acc(a, b, bz, az, acc, k, n);
}
DYNRT_CPU_CLONES void row_su(const int8_t* a, const uint8_t* b, const int32_t* bz, int32_t az, int32_t* acc, size_t k,
                             size_t n) {
    row_acc(a, b, bz, az, acc, k, n);
}
DYNRT_CPU_CLONES void row_ss(const int8_t* a, const int8_t* b, const int32_t* bz, int32_t az, int32_t* acc, size_t k,
                             size_t n) {
    row_acc(a, b, bz, az, acc, k, n);
}

void row_any(const HostCall& call, const Slots& s, const Problem& p, size_t a_off, size_t b_off, size_t i,
             int32_t* acc) {
    const bool au = call.in_type(static_cast<size_t>(s.a)) == DataType::u8;
    const bool bu = call.in_type(static_cast<size_t>(s.b)) == DataType::u8;
    const auto* a = static_cast<const uint8_t*>(call.in_raw(static_cast<size_t>(s.a))) + a_off;
    const auto* b = static_cast<const uint8_t*>(call.in_raw(static_cast<size_t>(s.b))) + b_off;
    const auto* as = reinterpret_cast<const int8_t*>(a);
    const auto* bs = reinterpret_cast<const int8_t*>(b);
    if (au && bu) row_uu(a, b, p.b_zp.data(), p.a_zp[i], acc, p.k, p.n);
    if (au && !bu) row_us(a, bs, p.b_zp.data(), p.a_zp[i], acc, p.k, p.n);
    if (!au && bu) row_su(as, b, p.b_zp.data(), p.a_zp[i], acc, p.k, p.n);
    if (!au && !bu) row_ss(as, bs, p.b_zp.data(), p.a_zp[i], acc, p.k, p.n);
}

void fast_kernel(HostCall& call) {
    const Slots s = slots_of(call.attrs());
    const Problem p = problem_of(call);
    const size_t rows = p.batch * p.m;
    if (rows == 0 || p.n == 0) return;
    const DataType out = call.out_type(0);
    const float lo = out == DataType::u8 ? 0.0f : -128.0f, hi = out == DataType::u8 ? 255.0f : 127.0f;
    const CpuThreads threads(call.params().engine, checked_mul(rows, p.k * p.n, "matmul_integer work"));
    parallel_for(threads, rows, std::max<size_t>(1, 4096 / std::max<size_t>(p.k * p.n / 64, 1)),
                 [&](size_t begin, size_t end) {
                     std::vector<int32_t> acc(p.n);
                     for (size_t r = begin; r < end; ++r) {
                         const size_t t = r / p.m, i = r % p.m;
                         row_any(call, s, p, (p.a_mat[t] * p.m + i) * p.k, p.b_mat[t] * p.k * p.n, i, acc.data());
                         for (size_t j = 0; j < p.n; ++j) {
                             const size_t o = r * p.n + j;
                             if (out == DataType::i32) store(call.out<int32_t>(0), o, acc[j], p, i * p.n + j, lo, hi);
                             if (out == DataType::u8) store(call.out<uint8_t>(0), o, acc[j], p, i * p.n + j, lo, hi);
                             if (out == DataType::i8) store(call.out<int8_t>(0), o, acc[j], p, i * p.n + j, lo, hi);
                         }
                     }
                 });
}

std::string fast_validate(const KernelParams& p) {
    const Slots s = slots_of(*p.attrs);
    const Dimension& k =
        p.inputs.at(static_cast<size_t>(s.a)).shape[p.inputs[static_cast<size_t>(s.a)].shape.rank() - 1];
    if (k.is_static() && static_cast<size_t>(k.get_length()) > kMaxK) return "K > 33000 could overflow int32";
    if (!k.is_static() && (k.max() < 0 || static_cast<size_t>(k.max()) > kMaxK))
        return "K unbounded (int32 accumulation)";
    return "";
}

// ---- OpenCL ----------------------------------------------------------------

// One work-item per output element, int accumulation. The batch of A and of
// B is either the output's (same dims) or a single matrix; other broadcasts
// go to the host impls.
std::string ocl_validate(const KernelParams& p) {
    const Slots s = slots_of(*p.attrs);
    const Shape a = p.inputs.at(static_cast<size_t>(s.a)).shape.is_static()
                        ? p.inputs[static_cast<size_t>(s.a)].get_shape()
                        : Shape{};
    const Shape b = p.inputs.at(static_cast<size_t>(s.b)).shape.is_static()
                        ? p.inputs[static_cast<size_t>(s.b)].get_shape()
                        : Shape{};
    if (!p.outputs.at(0).shape.is_static() || a.rank() == 0 || b.rank() == 0) return "";
    const Shape y = p.outputs[0].get_shape();
    const size_t yb = dims_product(y, 0, y.rank() - 2);
    const size_t ab = dims_product(a, 0, a.rank() - 2), bb = dims_product(b, 0, b.rank() - 2);
    if ((ab != yb && ab != 1) || (bb != yb && bb != 1)) return "batch broadcast other than one matrix against all";
    if (static_cast<size_t>(a[a.rank() - 1]) > kMaxK) return "K > 33000 could overflow int32";
    return "";
}

void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) != 0)
        throw field_error(p.node, "a_scale", "a_scale is not positive; a quantization scale must be");
    if (report.at(1) != 0)
        throw field_error(p.node, "b_scale", "b_scale is not positive; a quantization scale must be");
    if (report.at(2) != 0)
        throw field_error(p.node, "y_scale", "y_scale is not positive; a quantization scale must be");
}

std::string in(int slot) { return "INPUT" + std::to_string(slot); }

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = matmul_integer_cl;
    spec.kernel_name = "matmul_integer_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const Slots s = slots_of(*p.attrs);
        const size_t ra = p.inputs.at(static_cast<size_t>(s.a)).shape.rank();
        const size_t rb = p.inputs.at(static_cast<size_t>(s.b)).shape.rank();
        const size_t ry = p.outputs.at(0).shape.rank();
        const DataType out = p.outputs[0].dtype;
        JitDefines d{{"A", "input" + std::to_string(s.a)},
                     {"B", "input" + std::to_string(s.b)},
                     {"B_TYPE", in(s.b) + "_TYPE"},
                     {"M", jit_dims_product(in(s.a), ra, ra - 2, ra - 1)},
                     {"K", jit_dims_product(in(s.a), ra, ra - 1, ra)},
                     {"N", jit_dims_product(in(s.b), rb, rb - 1, rb)},
                     {"A_BATCH", jit_dims_product(in(s.a), ra, 0, ra - 2)},
                     {"B_BATCH", jit_dims_product(in(s.b), rb, 0, rb - 2)},
                     {"Y_BATCH", jit_dims_product("OUTPUT0", ry, 0, ry - 2)},
                     {"REQUANT", s.y_scale >= 0 ? "1" : "0"},
                     {"NUM_INPUTS", std::to_string(s.count)},
                     {"QLO", out == DataType::i8 ? "-128.0f" : "0.0f"},
                     {"QHI", out == DataType::i8 ? "127.0f" : "255.0f"},
                     {"CONVERT_OUT(v)", out == DataType::i8 ? "convert_char_sat(v)" : "convert_uchar_sat(v)"}};
        auto param = [&](const char* name, int slot) {
            d.emplace_back(std::string("HAS_") + name, slot >= 0 ? "1" : "0");
            if (slot < 0) return;
            d.emplace_back(std::string(name), "input" + std::to_string(slot));
            d.emplace_back(std::string(name) + "_LEN", in(slot) + "_LENGTH");
        };
        param("AZP", s.a_zp);
        param("BZP", s.b_zp);
        param("AS", s.a_scale);
        param("BS", s.b_scale);
        param("YS", s.y_scale);
        param("YZP", s.y_zp);
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

bool check_constant_scale(ImportContext& c, size_t k, const char* field) {
    if (const HostTensor* v = c.value(k))
        for (size_t i = 0; i < v->layout().get_shape().count(); ++i)
            if (!(v->get_as_double(i) > 0.0))
                throw field_error(c.node().name, field,
                                  std::string(field) + "[" + std::to_string(i) + "] is " +
                                      std::to_string(v->get_as_double(i)) + "; a quantization scale must be positive");
    return true;
}

bool ranks_ok(ImportContext& c, size_t a, size_t b) {
    if (c.rank(a) < 2 || c.rank(b) < 2)
        return c.unsupported("A " + c.layout(a).shape.to_string() + " or B " + c.layout(b).shape.to_string() +
                             " of rank 1: matmul_integer takes matrices (rank >= 2)");
    return true;
}

bool onnx_matmul_integer(ImportContext& c) {
    if (!c.only_attrs({})) return false;
    if (!ranks_ok(c, 0, 1)) return false;
    c.set("a_zero_point", c.present(2));
    c.set("b_zero_point", c.present(3));
    c.use_inputs({0, 1, 2, 3});
    return true;
}

bool onnx_qlinear_matmul(ImportContext& c) {
    if (!c.only_attrs({})) return false;
    if (!ranks_ok(c, 0, 3)) return false;
    check_constant_scale(c, 1, "a_scale");
    check_constant_scale(c, 4, "b_scale");
    check_constant_scale(c, 6, "y_scale");
    c.set("requantize", true);
    c.use_inputs({0, 1, 2, 3, 4, 5, 6, 7});
    return true;
}

void register_matmul_integer(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp,
        "integer matrix product of u8/i8 with zero points, i32 or requantized to u8/i8 (MatMulInteger, QLinearMatMul)",
        2, 8,
        {attr_bool("a_zero_point", false, "without requantize: input 2 is A's zero point"),
         attr_bool("b_zero_point", false, "without requantize: the next input is B's zero point"),
         attr_bool("requantize", false,
                   "inputs A, a_scale, a_zero_point, B, b_scale, b_zero_point, y_scale, y_zero_point; output u8/i8")},
        infer);
    def.imports = {onnx_rule("MatMulInteger", 2, 4, onnx_matmul_integer,
                             "A and B of rank >= 2, zero points per tensor or per row (A) / column (B)"),
                   onnx_rule("QLinearMatMul", 8, 8, onnx_qlinear_matmul,
                             "rank >= 2; scales and zero points per tensor or per row (a) / column (b); u8/i8")};
    reg.add_op(def);
    add_host_impls(reg, kOp, reference, host_options(kTypes));
    add_host_impls(reg, kOp, fast_kernel, optimised_host_options(kTypes, fast_validate));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(kTypes, ocl_validate));
}

}   // namespace

DYNRT_MODULE("matmul_integer", register_matmul_integer)
