// eltwise: an elementwise operation over two or more inputs with numpy
// broadcasting, selected by `mode`. Modes add, mul, min, max and mean fold
// over any number of inputs, left to right (mean divides the sum by the input
// count); the others take exactly two.
//
// Floating-point inputs are computed in double and rounded once on store.
// Integer inputs are computed in int64 with two's-complement wrap-around (so
// overflow is defined, as on every device): division truncates toward zero,
// mod takes the sign of the divisor and fmod that of the dividend (a zero
// divisor is an error), a shift by the type's width or more gives 0, and pow
// goes through double and truncates, saturating to the int64 range.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_broadcast_rows.hpp"
#include "dynrt/cpu_padded.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"
#include "eltwise_cl.hpp"

namespace {

using dynrt::DataType;
using dynrt::Shape;

enum class Mode {
    add,
    sub,
    mul,
    div,
    min,
    max,
    pow,
    squared_diff,
    mod,
    fmod,
    bitshift_left,
    bitshift_right,
    prelu,
    mean
};

const std::vector<std::string> kModes = {"add",   "sub",          "mul", "div",  "min",           "max",
                                         "pow",   "squared_diff", "mod", "fmod", "bitshift_left", "bitshift_right",
                                         "prelu", "mean"};

Mode parse_mode(const std::string& s) { return static_cast<Mode>(dynrt::mode_index("eltwise", kModes, s)); }
Mode mode_of(const dynrt::Attributes& a) { return parse_mode(a.get_string("mode")); }

// Modes that fold over any number of inputs.
bool variadic(Mode m) {
    return m == Mode::add || m == Mode::mul || m == Mode::min || m == Mode::max || m == Mode::mean;
}

bool is_integer_type(DataType t) {
    return t == DataType::i32 || t == DataType::i64 || t == DataType::i8 || t == DataType::u8;
}
bool is_unsigned_type(DataType t) { return t == DataType::u8; }

const std::vector<DataType> kDtypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                       DataType::i64, DataType::i8,  DataType::u8};

// ---- shape inference --------------------------------------------------------

dynrt::Error node_error(const dynrt::ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return dynrt::Error(message, dynrt::node_context(ctx.node, "eltwise", field));
}

std::string described(const std::vector<dynrt::Layout>& inputs) {
    std::string s = "inputs ";
    for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i].shape.to_string();
    return s;
}

// Every input has input 0's type, except pow's exponent (input 1), which may
// be of any supported type; some modes take only some types.
void check_types(const dynrt::ShapeInferContext& ctx, Mode m) {
    const auto& in = ctx.inputs;
    for (size_t i = 0; i < in.size(); ++i) {
        const bool own_type = m == Mode::pow && i == 1;
        if (!own_type && in[i].dtype != in[0].dtype)
            throw node_error(ctx, "inputs",
                             "eltwise inputs must have the same data type, got " + in[0].to_string() + " and " +
                                 in[i].to_string() + (m == Mode::pow ? "" : " (only pow's exponent may differ)"));
        if (std::find(kDtypes.begin(), kDtypes.end(), in[i].dtype) == kDtypes.end())
            throw node_error(ctx, "inputs",
                             std::string("eltwise does not support data type ") + dynrt::to_string(in[i].dtype) +
                                 " (input " + std::to_string(i) + " " + in[i].to_string() + ")");
    }
    const DataType t = in[0].dtype;
    if (m == Mode::mean && !dynrt::is_floating(t))
        throw node_error(ctx, "mode", "eltwise mode mean takes floating-point inputs, got " + in[0].to_string());
    if ((m == Mode::bitshift_left || m == Mode::bitshift_right) && !is_unsigned_type(t))
        throw node_error(ctx, "mode",
                         "eltwise bitshift modes take unsigned integer inputs (u8), got " + in[0].to_string());
}

// PRelu's slope broadcasts to x (unidirectional): the output is x's shape.
void check_unidirectional(const dynrt::ShapeInferContext& ctx, const dynrt::PartialShape& out) {
    const dynrt::PartialShape& x = ctx.inputs[0].shape;
    bool fits = out.rank() == x.rank();
    for (size_t d = 0; fits && d < x.rank(); ++d)
        fits = !x[d].is_static() || !out[d].is_static() || x[d].get_length() == out[d].get_length();
    if (!fits)
        throw node_error(ctx, "inputs",
                         "prelu slope " + ctx.inputs[1].shape.to_string() + " does not broadcast to x " +
                             x.to_string() + " (the output must keep x's shape)");
}

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const Mode m = mode_of(ctx.attrs);
    if (!variadic(m) && ctx.inputs.size() != 2)
        throw node_error(ctx, "inputs",
                         "eltwise mode " + kModes[static_cast<size_t>(m)] + " takes 2 inputs, got " +
                             std::to_string(ctx.inputs.size()));
    check_types(ctx, m);
    std::vector<dynrt::PartialShape> shapes;
    for (const dynrt::Layout& l : ctx.inputs) shapes.push_back(l.shape);
    const dynrt::PartialShape out =
        dynrt::broadcast_inputs(shapes, described(ctx.inputs), dynrt::node_context(ctx.node, "eltwise", "inputs"));
    if (m == Mode::prelu) check_unidirectional(ctx, out);
    return {dynrt::Layout(out, ctx.inputs[0].dtype)};
}

// ---- reference --------------------------------------------------------------

// Floor modulo (the sign of the divisor), as numpy's mod.
double floor_mod(double a, double b) {
    const double r = std::fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

double apply_float(Mode m, double a, double b) {
    switch (m) {
        case Mode::add:
        case Mode::mean: return a + b;
        case Mode::sub: return a - b;
        case Mode::mul: return a * b;
        case Mode::div: return a / b;
        case Mode::min: return std::min(a, b);
        case Mode::max: return std::max(a, b);
        case Mode::pow: return std::pow(a, b);
        case Mode::squared_diff: return (a - b) * (a - b);
        case Mode::mod: return floor_mod(a, b);
        case Mode::fmod: return std::fmod(a, b);
        case Mode::prelu: return a < 0 ? a * b : a;
        case Mode::bitshift_left:
        case Mode::bitshift_right: break;   // integers only (shape inference)
    }
    return 0.0;
}

// Wrapping arithmetic through uint64: signed overflow would be undefined.
int64_t wrap_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_sub(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// What integer math needs besides the operands: the node (division by zero
// names it) and the width of the type (shifts).
struct IntCall {
    const std::string& node;
    int64_t bits;
};

[[noreturn]] void division_by_zero(const IntCall& c, Mode m, int64_t a) {
    dynrt::ErrorContext ctx;
    ctx.node = c.node;
    ctx.op = "eltwise";
    const std::string sign = m == Mode::div ? " / 0)" : " % 0)";
    throw dynrt::Error("eltwise node '" + c.node + "': integer division by zero (" + std::to_string(a) + sign, ctx);
}

// Truncated (fmod) or floor (mod) remainder; x % -1 is 0 (INT64_MIN % -1 would trap).
int64_t int_mod(int64_t a, int64_t b, bool floor) {
    if (b == -1) return 0;
    const int64_t r = a % b;
    return floor && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

int64_t int_shift(int64_t a, int64_t b, int64_t bits, bool left) {
    if (b < 0 || b >= bits) return 0;
    return left ? static_cast<int64_t>(static_cast<uint64_t>(a) << b) : a >> b;
}

// Casting an out-of-range double to an integer is undefined: saturate.
int64_t saturate(double p) {
    if (std::isnan(p)) return 0;
    if (p >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (p <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(p);
}

int64_t apply_int(Mode m, int64_t a, int64_t b, const IntCall& c) {
    switch (m) {
        case Mode::add:
        case Mode::mean: return wrap_add(a, b);
        case Mode::sub: return wrap_sub(a, b);
        case Mode::mul: return wrap_mul(a, b);
        case Mode::div:
            if (b == 0) division_by_zero(c, m, a);
            if (b == -1) return wrap_sub(0, a);   // INT64_MIN / -1 wraps instead of trapping
            return a / b;                         // C++ truncates toward zero
        case Mode::mod:
        case Mode::fmod:
            if (b == 0) division_by_zero(c, m, a);
            return int_mod(a, b, m == Mode::mod);
        case Mode::min: return std::min(a, b);
        case Mode::max: return std::max(a, b);
        case Mode::pow: return saturate(std::trunc(std::pow(static_cast<double>(a), static_cast<double>(b))));
        case Mode::squared_diff: {
            const int64_t d = wrap_sub(a, b);
            return wrap_mul(d, d);
        }
        case Mode::bitshift_left: return int_shift(a, b, c.bits, true);
        case Mode::bitshift_right: return int_shift(a, b, c.bits, false);
        case Mode::prelu: return a < 0 ? wrap_mul(a, b) : a;
    }
    return 0;
}

int64_t load_int(const dynrt::HostCall& call, size_t input, size_t i) {
    switch (call.in_type(input)) {
        case DataType::i32: return call.in<int32_t>(input)[i];
        case DataType::i64: return call.in<int64_t>(input)[i];
        default: return static_cast<int64_t>(call.get(input, i));
    }
}

void store_int(const dynrt::HostCall& call, size_t i, int64_t v) {
    switch (call.out_type(0)) {
        case DataType::i32: call.out<int32_t>(0)[i] = static_cast<int32_t>(v); break;
        case DataType::i64: call.out<int64_t>(0)[i] = v; break;
        case DataType::i8: call.set(0, i, static_cast<int8_t>(v)); break;
        case DataType::u8: call.set(0, i, static_cast<uint8_t>(v)); break;
        default: call.set(0, i, static_cast<double>(v)); break;
    }
}

// Integer result of output element o: a fold over the inputs, except pow,
// whose exponent may be a float (both through double, as apply_int's pow).
int64_t int_element(const dynrt::HostCall& call, Mode m, const dynrt::BroadcastIndex& ix, const IntCall& c) {
    if (m == Mode::pow) return saturate(std::trunc(std::pow(call.get(0, ix.in(0)), call.get(1, ix.in(1)))));
    int64_t acc = load_int(call, 0, ix.in(0));
    for (size_t i = 1; i < call.num_inputs(); ++i) acc = apply_int(m, acc, load_int(call, i, ix.in(i)), c);
    return acc;
}

double float_element(const dynrt::HostCall& call, Mode m, const dynrt::BroadcastIndex& ix) {
    double acc = call.get(0, ix.in(0));
    for (size_t i = 1; i < call.num_inputs(); ++i) acc = apply_float(m, acc, call.get(i, ix.in(i)));
    return m == Mode::mean ? acc / static_cast<double>(call.num_inputs()) : acc;
}

void kernel(dynrt::HostCall& call) {
    const Mode m = mode_of(call.attrs());
    const Shape& out = call.out_shape(0);
    std::vector<Shape> shapes;
    for (size_t i = 0; i < call.num_inputs(); ++i) shapes.push_back(call.in_shape(i));
    dynrt::BroadcastIndex ix(out, shapes);
    const DataType t = call.out_type(0);
    if (is_integer_type(t)) {
        const IntCall c{call.node(), static_cast<int64_t>(dynrt::bitwidth(t))};
        for (size_t o = 0; o < out.count(); ++o, ix.next()) store_int(call, o, int_element(call, m, ix, c));
    } else {
        for (size_t o = 0; o < out.count(); ++o, ix.next()) call.set(0, o, float_element(call, m, ix));
    }
}

// ---- cpu: vectorised f32 loops over the engine's threads -------------------
//
// Two f32 inputs in the modes models use (pow through double, as the
// reference), broadcast as rows
// (dynrt/cpu_broadcast_rows.hpp): the output is split into rows over the
// longest run of trailing dims along which each input either follows the
// output element by element or holds one value, so every row is a contiguous
// loop (vector against vector, or against a scalar).
// Everything else runs on the reference impl.

bool has_fast_loop(Mode m) {
    switch (m) {
        case Mode::add:
        case Mode::sub:
        case Mode::mul:
        case Mode::div:
        case Mode::min:
        case Mode::max:
        case Mode::squared_diff:
        case Mode::pow:
        case Mode::prelu: return true;
        default: return false;
    }
}

// y[i] = op(a[i or 0], b[i or 0]) for one row; inlined into each build of row_loop.
template <class Op>
[[gnu::always_inline]] inline void row(Op op, const float* a, bool a_one, const float* b, bool b_one, float* y,
                                       size_t n) {
    if (!a_one && !b_one) {
        for (size_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
    } else if (!a_one) {
        const float bv = b[0];
        for (size_t i = 0; i < n; ++i) y[i] = op(a[i], bv);
    } else if (!b_one) {
        const float av = a[0];
        for (size_t i = 0; i < n; ++i) y[i] = op(av, b[i]);
    } else {
        const float v = op(a[0], b[0]);
        for (size_t i = 0; i < n; ++i) y[i] = v;
    }
}

DYNRT_CPU_CLONES void row_loop(Mode m, const float* a, bool a_one, const float* b, bool b_one, float* y, size_t n) {
    switch (m) {
        case Mode::add: return row([](float x, float z) { return x + z; }, a, a_one, b, b_one, y, n);
        case Mode::sub: return row([](float x, float z) { return x - z; }, a, a_one, b, b_one, y, n);
        case Mode::mul: return row([](float x, float z) { return x * z; }, a, a_one, b, b_one, y, n);
        case Mode::div: return row([](float x, float z) { return x / z; }, a, a_one, b, b_one, y, n);
        case Mode::min: return row([](float x, float z) { return z < x ? z : x; }, a, a_one, b, b_one, y, n);
        case Mode::max: return row([](float x, float z) { return z > x ? z : x; }, a, a_one, b, b_one, y, n);
        case Mode::squared_diff:
            return row([](float x, float z) { return (x - z) * (x - z); }, a, a_one, b, b_one, y, n);
        case Mode::pow:
            // Through double, as the reference. A scalar exponent of 2 or 3
            // (GELU's x^3, squares) is products: exact in double but the last
            // rounding, and a loop the compiler vectorises.
            if (b_one && b[0] == 2.0f)
                return row([](float x, float) { return static_cast<float>(double{x} * double{x}); }, a, a_one, b, b_one,
                           y, n);
            if (b_one && b[0] == 3.0f)
                return row([](float x, float) { return static_cast<float>(double{x} * double{x} * double{x}); }, a,
                           a_one, b, b_one, y, n);
            return row([](float x, float z) { return static_cast<float>(std::pow(double{x}, double{z})); }, a, a_one, b,
                       b_one, y, n);
        default: return row([](float x, float z) { return x < 0.0f ? x * z : x; }, a, a_one, b, b_one, y, n);
    }
}

// A padded output (a slice of an in-place concat, dynrt/cpu_padded.hpp)
// keeps the rows within the dims it stores contiguously, and its rows'
// offsets come with the inputs' (a third set of strides over the leading dims).
void fast_kernel(dynrt::HostCall& call, const dynrt::StridedOutput& out) {
    const Mode m = mode_of(call.attrs());
    const dynrt::Shape& shape = call.out_shape(0);
    const size_t from = out.dense ? 0 : dynrt::contiguous_from(shape, out.strides);
    dynrt::BroadcastRows rows = dynrt::plan_broadcast_rows(shape, {&call.in_shape(0), &call.in_shape(1)}, from);
    if (!out.dense) {
        rows.strides.emplace_back(out.strides.begin(),
                                  out.strides.begin() + static_cast<std::ptrdiff_t>(rows.lead.size()));
        rows.one.push_back(false);
    }
    const float* a = call.in<float>(0);
    const float* b = call.in<float>(1);
    auto* y = static_cast<float*>(out.data);
    const size_t n_rows = shape.count() / std::max<size_t>(1, rows.inner);
    const dynrt::CpuThreads threads(call.params().engine);
    const size_t grain = std::max<size_t>(1, 16384 / std::max<size_t>(1, rows.inner));
    dynrt::parallel_for(threads, n_rows, grain, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            std::array<size_t, 3> at{};   // element offsets of the row in a, b and (padded) y
            dynrt::broadcast_row_offsets(rows, r, at.data());
            float* yr = y + (out.dense ? r * rows.inner : at[2]);
            row_loop(m, a + at[0], rows.one[0], b + at[1], rows.one[1], yr, rows.inner);
        }
    });
}

std::string fast_supported(const dynrt::KernelParams& p) {
    if (p.inputs.size() != 2) return "the vectorised loops take 2 inputs";
    for (const dynrt::Layout& l : p.inputs)
        if (l.dtype != DataType::f32) return "the vectorised loops take f32 inputs";
    if (!has_fast_loop(mode_of(*p.attrs))) return "no vectorised loop for mode " + p.attrs->get_string("mode");
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

// The operation as an OpenCL C expression of two values `a` and `b`; nullptr
// where it stays on the host. Floats: float (double for f64) math. Integers:
// long, add/sub/mul through ulong so overflow wraps (the host's int64
// two's-complement result truncated to the type has the same low bits).
// Integer div, mod, fmod (a zero divisor must raise an error and INT_MIN / -1
// must wrap, which a kernel cannot promise) and pow (saturating double math)
// stay on the host impl.
const char* ocl_op(Mode m, bool integer) {
    switch (m) {
        case Mode::add:
        case Mode::mean: return integer ? "((long)((ulong)(a) + (ulong)(b)))" : "((a) + (b))";
        case Mode::sub: return integer ? "((long)((ulong)(a) - (ulong)(b)))" : "((a) - (b))";
        case Mode::mul: return integer ? "((long)((ulong)(a) * (ulong)(b)))" : "((a) * (b))";
        case Mode::min: return integer ? "min((a), (b))" : "fmin((a), (b))";
        case Mode::max: return integer ? "max((a), (b))" : "fmax((a), (b))";
        case Mode::squared_diff:
            return integer ? "((long)(((ulong)(a) - (ulong)(b)) * ((ulong)(a) - (ulong)(b))))"
                           : "(((a) - (b)) * ((a) - (b)))";
        case Mode::prelu:
            return integer ? "((a) < 0 ? (long)((ulong)(a) * (ulong)(b)) : (a))" : "((a) < 0 ? (a) * (b) : (a))";
        case Mode::bitshift_left:
            return integer ? "((b) < 0 || (b) >= ELT_BITS ? 0L : (long)((ulong)(a) << (b)))" : nullptr;
        case Mode::bitshift_right: return integer ? "((b) < 0 || (b) >= ELT_BITS ? 0L : ((a) >> (b)))" : nullptr;
        case Mode::div: return integer ? nullptr : "((a) / (b))";
        case Mode::pow: return integer ? nullptr : "pow((a), (b))";
        case Mode::fmod: return integer ? nullptr : "fmod((a), (b))";
        case Mode::mod:   // floor_mod() of the host, as one expression (fused post-ops inline it)
            return integer
                       ? nullptr
                       : "(fmod((a), (b)) + ((fmod((a), (b)) != 0 && ((fmod((a), (b)) < 0) != ((b) < 0))) ? (b) : 0))";
    }
    return nullptr;
}

// The mode as a fused post-op: an f32 expression folding `args` left to right.
std::string ocl_post_op(const dynrt::Attributes& attrs, const std::vector<std::string>& args) {
    const Mode m = mode_of(attrs);
    const char* op = ocl_op(m, false);
    if (op == nullptr) throw dynrt::Error("eltwise mode " + kModes[static_cast<size_t>(m)] + " has no f32 post-op");
    std::string e = args.at(0);
    for (size_t i = 1; i < args.size(); ++i)
        e = dynrt::replace_identifier(dynrt::replace_identifier(op, "a", "(" + e + ")"), "b", "(" + args[i] + ")");
    if (m == Mode::mean) e = "((" + e + ") / " + std::to_string(args.size()) + ".0f)";
    return e;
}

// Two-input arithmetic as a standard post-op; sub and div only with the
// running result on the left.
std::optional<dynrt::PostOp> post_op(const dynrt::Attributes& attrs, size_t main_input, size_t num_inputs) {
    using Fn = dynrt::PostOp::Fn;
    if (num_inputs != 2) return std::nullopt;
    const auto op = [](Fn f) { return std::optional<dynrt::PostOp>(dynrt::PostOp{f}); };
    switch (mode_of(attrs)) {
        case Mode::add: return op(Fn::add);
        case Mode::mul: return op(Fn::mul);
        case Mode::min: return op(Fn::min);
        case Mode::max: return op(Fn::max);
        case Mode::sub: return main_input == 0 ? op(Fn::sub) : std::nullopt;
        case Mode::div: return main_input == 0 ? op(Fn::div) : std::nullopt;
        default: return std::nullopt;
    }
}

const char* compute_type(DataType t) {
    if (is_integer_type(t)) return "long";
    return t == DataType::f64 ? "double" : "float";
}

// The kernel's argument list, per-input constants and the fold, for any
// number of inputs (eltwise.cl says how they are used).
dynrt::JitDefines ocl_defines(const dynrt::KernelParams& p, bool) {
    const Mode m = mode_of(*p.attrs);
    const DataType t = p.outputs.at(0).dtype;
    const bool integer = is_integer_type(t);
    dynrt::JitDefines d{{"COMPUTE_T", compute_type(t)},
                        {"OP_EXPR", ocl_op(m, integer)},
                        {"ELT_BITS", std::to_string(dynrt::bitwidth(t))}};
    std::string args, same = "(1", vloads;
    std::vector<std::string> gets;
    bool one_type = true, f64 = t == DataType::f64;
    for (size_t k = 0; k < p.inputs.size(); ++k) {
        const std::string ks = std::to_string(k);
        const DataType tk = p.inputs[k].dtype;
        args += "__global const INPUT" + ks + "_TYPE* input" + ks + ", ";
        same += " & BCAST_SAME(" + ks + ")";
        vloads += "ELT_VLOAD(" + ks + ") ";
        gets.push_back("GET(" + ks + ")");
        d.emplace_back("IN" + ks + "_HALF", tk == DataType::f16 ? "1" : "0");
        one_type = one_type && tk == t;
        f64 = f64 || tk == DataType::f64;
    }
    std::string fold = gets[0];
    for (size_t k = 1; k < gets.size(); ++k) fold = "op(" + fold + ", " + gets[k] + ")";
    if (m == Mode::mean) fold = "(" + fold + " / (COMPUTE_T)" + std::to_string(gets.size()) + ")";
    d.insert(d.end(), {{"ELT_INPUT_ARGS", args},
                       {"ELT_ALL_SAME", same + ")"},
                       {"ELT_VEC", one_type ? "1" : "0"},
                       {"ELT_VLOADS", one_type ? vloads : ""},
                       {"ELT_COMBINE(GET)", fold},
                       {"USES_F64", f64 ? "1" : "0"}});
    d.push_back(dynrt::jit_data_f16(t));
    return d;
}

dynrt::OclKernelSpec ocl_spec() {
    dynrt::OclKernelSpec spec;
    spec.source = eltwise_cl;
    spec.kernel_name = "eltwise_ref";
    spec.padded_outputs = true;   // stores through OUTPUT0_PHYS
    spec.fused_ops = true;        // FUSED_OPS before each store (STORE_F)
    spec.defines = ocl_defines;
    // The kernel's test, on the runtime layouts: same element counts (no
    // broadcast) -> grid-stride over 4-element vectors, at least one
    // work-item per tail element; else one work-item per output element.
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& limits) {
        const size_t n = p.outputs.at(0).count();
        bool same = n != 0;
        for (const dynrt::Layout& l : p.inputs) same = same && l.count() == n;
        if (same) return dynrt::dispatch_grid_stride(std::max<size_t>(n / 4, n % 4), limits);
        return dynrt::dispatch_1d(n, limits);
    };
    return spec;
}

// Kernel arguments are bounded (CL_DEVICE_MAX_PARAMETER_SIZE is at least 1 KiB).
constexpr size_t kMaxOclInputs = 64;

std::string ocl_supported(const dynrt::KernelParams& p) {
    if (ocl_op(mode_of(*p.attrs), is_integer_type(p.outputs.at(0).dtype)) == nullptr)
        return "integer div, mod, fmod and pow run on the host impl";
    if (p.inputs.size() > kMaxOclInputs)
        return std::to_string(p.inputs.size()) + " inputs run on the host impl (the kernel takes at most " +
               std::to_string(kMaxOclInputs) + ")";
    return dynrt::validate_broadcast_rank(p);
}

// ---- ONNX import rules ------------------------------------------------------

std::string type_list(const dynrt::ImportContext& c) {
    std::string s;
    for (size_t k = 0; k < c.inputs(); ++k) s += std::string(k ? ", " : "") + to_string(c.layout(k).dtype);
    return s;
}

// The node's inputs as eltwise `mode` (one input: the identity).
bool import_as(dynrt::ImportContext& c, const std::string& mode) {
    const size_t n = c.count_present();
    if (n != c.inputs()) return c.unsupported("an input left out");
    for (size_t k = 1; k < n; ++k)
        if (c.layout(k).dtype != c.layout(0).dtype && !(mode == "pow" && k == 1))
            return c.unsupported("inputs of different types (" + type_list(c) + ")");
    if (n == 1) {
        c.out.op = "activation";
        c.set("func", std::string("identity"));
    } else {
        c.set("mode", mode);
    }
    c.use_all_inputs();
    return true;
}

// Add, Sub ... and the variadic Min, Max, Sum, Mean.
dynrt::ImportFn onnx_plain(const std::string& mode) {
    return [mode](dynrt::ImportContext& c) {
        if (c.has("broadcast") || c.has("axis"))
            return c.unsupported("legacy broadcast attributes (opset < 7) are not supported");
        if (!c.only_attrs({})) return false;
        return import_as(c, mode);
    };
}

bool onnx_mod(dynrt::ImportContext& c) {
    if (!c.only_attrs({"fmod"})) return false;
    const bool fmod = c.i("fmod", 0) != 0;
    if (!fmod && dynrt::is_floating(c.layout(0).dtype))
        return c.unsupported("Mod of floating-point inputs needs fmod=1 (the ONNX spec)");
    return import_as(c, fmod ? "fmod" : "mod");
}

bool onnx_bitshift(dynrt::ImportContext& c) {
    if (!c.only_attrs({"direction"})) return false;
    const std::string dir = c.s("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") return c.unsupported("BitShift direction '" + dir + "' (LEFT or RIGHT)");
    if (!is_unsigned_type(c.layout(0).dtype))
        return c.unsupported(std::string("BitShift of ") + to_string(c.layout(0).dtype) + " (dynrt shifts u8)");
    return import_as(c, dir == "LEFT" ? "bitshift_left" : "bitshift_right");
}

// PRelu before opset 7 broadcasts a 1-D slope along the channel axis (1), not
// numpy-style along the last: that form is refused, naming the opset.
bool onnx_prelu(dynrt::ImportContext& c) {
    if (c.opset() < 7)
        return c.unsupported("PRelu opset " + std::to_string(c.opset()) +
                             " (before 7) broadcasts the slope per channel, not numpy-style");
    return onnx_plain("prelu")(c);
}

std::vector<dynrt::ImportRule> onnx_rules() {
    using dynrt::onnx_rule;
    std::vector<dynrt::ImportRule> rules;
    for (const auto& [onnx, mode] : std::vector<std::pair<std::string, std::string>>{
             {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"}})
        rules.push_back(onnx_rule(onnx, 2, 2, onnx_plain(mode), "`mode` " + mode));
    rules.push_back(onnx_rule("PRelu", 2, 2, onnx_prelu, "`mode` prelu (opset >= 7: numpy broadcasting of the slope)"));
    for (const auto& [onnx, mode] : std::vector<std::pair<std::string, std::string>>{
             {"Max", "max"}, {"Min", "min"}, {"Sum", "add"}, {"Mean", "mean"}})
        rules.push_back(onnx_rule(onnx, 1, dynrt::kAnyInputs, onnx_plain(mode),
                                  "`mode` " + mode + " over every input; one input -> activation identity"));
    rules.push_back(onnx_rule("Mod", 2, 2, onnx_mod, "`mode` mod (fmod=0, integers) or fmod (fmod=1)"));
    rules.push_back(onnx_rule("BitShift", 2, 2, onnx_bitshift, "`mode` bitshift_left / bitshift_right by `direction`"));
    return rules;
}

void register_eltwise(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "eltwise", "Elementwise operation over broadcast inputs, selected by `mode`", 2, dynrt::kAnyInputs,
        {dynrt::attr_string("mode", std::nullopt, kModes, "operation to apply")}, infer);
    // Fusion (docs/architecture.md): an eltwise is fused into its producer
    // (its other inputs broadcast into the result) and takes post-ops itself.
    def.traits.fusable = true;
    def.traits.accepts_fused_ops = true;
    def.ocl_post_op = ocl_post_op;
    def.post_op = post_op;
    def.imports = onnx_rules();
    reg.add_op(def);
    dynrt::add_host_impls(reg, "eltwise", kernel, dynrt::host_options(kDtypes));
    dynrt::add_strided_output_impls(reg, "eltwise", fast_kernel,
                                    dynrt::optimised_host_options({DataType::f32}, fast_supported));
    dynrt::add_ocl_impls(reg, "eltwise", ocl_spec(), dynrt::ocl_options(kDtypes, ocl_supported));
}

}   // namespace

DYNRT_MODULE("eltwise", register_eltwise)
