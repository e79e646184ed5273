// reduce: a reduction over some axes (ONNX ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp). The axes come from the `axes` attribute or from input 1,
// a 1-D i32/i64 tensor read by value during shape inference. Empty axes reduce
// every dim, unless `noop_with_empty_axes`: then no dim is reduced and each
// element goes through the mode's own math alone (sum_square squares it).
//
// A reduction over no element gives the mode's identity: 0 for the sums, 1 for
// prod, -inf / +inf for max / min (the type's lowest / highest for integers),
// log(0) = -inf for log_sum and log_sum_exp, NaN for a float mean (0 for an
// integer one). Floats accumulate in double; integers in int64 with two's-
// complement wrap-around, the result truncated to the tensor type the way
// numpy's cast does. NaN propagates through max and min.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_axes.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "reduce_cl.hpp"

namespace {

using namespace dynrt;

enum class Mode { sum, mean, max, min, prod, l1, l2, sum_square, log_sum, log_sum_exp };

const std::vector<std::string> kModes = {"sum", "mean", "max",        "min",     "prod",
                                         "l1",  "l2",   "sum_square", "log_sum", "log_sum_exp"};
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64, DataType::i32,
                                      DataType::i64, DataType::u8,  DataType::i8};

Mode parse_mode(const std::string& s) { return static_cast<Mode>(mode_index("reduce", kModes, s)); }

bool is_log_mode(Mode m) { return m == Mode::log_sum || m == Mode::log_sum_exp; }

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "reduce", field));
}

// Which dims of a rank-`rank` input are reduced, for axes already checked
// (positions in [0, rank)): every dim for empty axes, none with
// noop_with_empty_axes.
std::vector<bool> reduced_dims(const std::vector<size_t>& positions, size_t rank, bool noop) {
    std::vector<bool> reduced(rank, positions.empty() && !noop);
    for (const size_t k : positions) reduced[k] = true;
    return reduced;
}

// Output shape when input 1's values are not known yet: only the rank is.
PartialShape unknown_axes_shape(const ShapeInferContext& ctx, const OpAxes& axes, bool keepdims) {
    const PartialShape& in = ctx.inputs[0].shape;
    if (keepdims) {
        std::vector<Dimension> dims;
        for (size_t d = 0; d < in.rank(); ++d)
            dims.push_back(in[d].is_static() && in[d].get_length() == 1 ? Dimension(1) : Dimension());
        return PartialShape(std::move(dims));
    }
    if (axes.count > in.rank())
        throw axes_error(ctx.node, "reduce",
                         "the axes (input 1) " + ctx.inputs[1].to_string() + " name " + std::to_string(axes.count) +
                             " dims of input " + in.to_string() + " (rank " + std::to_string(in.rank()) + ")");
    return PartialShape::dynamic_of_rank(in.rank() - axes.count);
}

std::vector<Layout> infer_reduce(const ShapeInferContext& ctx) {
    const Mode mode = parse_mode(ctx.attrs.get_string("mode"));
    const Layout& in = ctx.inputs.at(0);
    if (std::find(kTypes.begin(), kTypes.end(), in.dtype) == kTypes.end())
        throw node_error(ctx.node, "inputs", "reduce does not take input " + in.to_string());
    if (is_log_mode(mode) && !is_floating(in.dtype))
        throw node_error(
            ctx.node, "mode",
            "mode '" + ctx.attrs.get_string("mode") + "' takes a floating-point input, got " + in.to_string());
    const bool keepdims = ctx.attrs.get_bool("keepdims");
    const OpAxes axes = read_axes(ctx, "reduce");
    if (!axes.known) return {Layout(unknown_axes_shape(ctx, axes, keepdims), in.dtype)};
    const size_t rank = in.shape.rank();
    const std::vector<bool> reduced =
        reduced_dims(normalize_axes(ctx.node, "reduce", axes, rank, AxesOf::input, in.shape), rank,
                     ctx.attrs.get_bool("noop_with_empty_axes"));
    std::vector<Dimension> out;
    for (size_t d = 0; d < rank; ++d) {
        if (!reduced[d]) out.push_back(in.shape[d]);
        else if (keepdims) out.emplace_back(1);
    }
    return {Layout(PartialShape(std::move(out)), in.dtype)};
}

// The reduced dims of one execution: the attribute's axes or input 1's values
// (checked by shape inference, which ran on these values).
std::vector<bool> reduced_dims_of(const HostCall& call) {
    const size_t rank = call.in_shape(0).rank();
    std::vector<int64_t> axes = call.attrs().get_ints("axes");
    if (call.num_inputs() > 1) axes = call.get_ints(1);
    std::vector<size_t> positions;
    for (const int64_t a : axes) {
        const int64_t k = normalize_axis(a, static_cast<int64_t>(rank), "axes");
        positions.push_back(static_cast<size_t>(k));
    }
    return reduced_dims(positions, rank, call.attrs().get_bool("noop_with_empty_axes"));
}

// The reduced dims of the `axes` attribute (the impls that decide by the axes
// before any run: input 1's values are not known then).
std::vector<bool> attr_reduced_dims(const Attributes& attrs, size_t rank) {
    std::vector<size_t> positions;
    for (const int64_t a : attrs.get_ints("axes"))
        positions.push_back(static_cast<size_t>(normalize_axis(a, static_cast<int64_t>(rank), "axes")));
    return reduced_dims(positions, rank, attrs.get_bool("noop_with_empty_axes"));
}

// ---- reference ------------------------------------------------------------

// The input walked in order against the output seen with its reduced dims
// kept as 1: numpy broadcasting holds those at 0, so BroadcastIndex gives the
// output element each input element feeds.
struct Walk {
    Shape in, kept;
    size_t out_count = 1, extent = 1;   // output elements; input elements per output element
};

Walk walk_of(const HostCall& call) {
    Walk w;
    w.in = call.in_shape(0);
    w.kept = w.in;
    const std::vector<bool> reduced = reduced_dims_of(call);
    for (size_t d = 0; d < w.in.rank(); ++d) {
        const auto n = static_cast<size_t>(w.in[d]);
        if (reduced[d]) {
            w.kept[d] = 1;
            w.extent = checked_mul(w.extent, n, "reduced extent");
        } else {
            w.out_count = checked_mul(w.out_count, n, "output elements");
        }
    }
    return w;
}

// Floats: double accumulators. `mx` holds each output's maximum (log_sum_exp).
double float_init(Mode m) {
    if (m == Mode::prod) return 1;
    if (m == Mode::max) return -std::numeric_limits<double>::infinity();
    if (m == Mode::min) return std::numeric_limits<double>::infinity();
    return 0;
}

double float_step(Mode m, double a, double x, double mx) {
    switch (m) {
        case Mode::max: return x > a || std::isnan(x) ? x : a;
        case Mode::min: return x < a || std::isnan(x) ? x : a;
        case Mode::prod: return a * x;
        case Mode::l1: return a + std::fabs(x);
        case Mode::l2:
        case Mode::sum_square: return a + x * x;
        case Mode::log_sum_exp: return std::isfinite(mx) ? a + std::exp(x - mx) : a;
        default: return a + x;   // sum, mean, log_sum
    }
}

double float_finish(Mode m, double a, size_t n, double mx) {
    switch (m) {
        case Mode::mean: return a / static_cast<double>(n);   // 0 / 0: NaN
        case Mode::l2: return std::sqrt(a);
        case Mode::log_sum: return std::log(a);
        case Mode::log_sum_exp:
            if (std::isfinite(mx)) return mx + std::log(a);
            return n == 0 ? -std::numeric_limits<double>::infinity() : mx;   // all -inf, an inf, or a NaN
        default: return a;
    }
}

void reduce_floats(HostCall& call, Mode m, const Walk& w) {
    std::vector<double> mx(w.out_count, -std::numeric_limits<double>::infinity());
    if (m == Mode::log_sum_exp) {
        BroadcastIndex ix(w.in, {w.kept});
        for (size_t i = 0; i < w.in.count(); ++i, ix.next())
            mx[ix.in(0)] = float_step(Mode::max, mx[ix.in(0)], call.get(0, i), 0);
    }
    std::vector<double> acc(w.out_count, float_init(m));
    BroadcastIndex ix(w.in, {w.kept});
    for (size_t i = 0; i < w.in.count(); ++i, ix.next()) {
        const size_t o = ix.in(0);
        acc[o] = float_step(m, acc[o], call.get(0, i), mx[o]);
    }
    for (size_t o = 0; o < w.out_count; ++o) call.set(0, o, float_finish(m, acc[o], w.extent, mx[o]));
}

// Integers: int64 accumulators, sums and products wrapping like two's complement.
int64_t wrap_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

template <typename T>
int64_t int_init(Mode m) {
    if (m == Mode::prod) return 1;
    if (m == Mode::max) return std::numeric_limits<T>::lowest();
    if (m == Mode::min) return std::numeric_limits<T>::max();
    return 0;
}

int64_t int_step(Mode m, int64_t a, int64_t x) {
    switch (m) {
        case Mode::max: return std::max(a, x);
        case Mode::min: return std::min(a, x);
        case Mode::prod: return wrap_mul(a, x);
        case Mode::l1: return wrap_add(a, x < 0 ? wrap_mul(x, -1) : x);
        case Mode::l2:
        case Mode::sum_square: return wrap_add(a, wrap_mul(x, x));
        default: return wrap_add(a, x);   // sum, mean
    }
}

int64_t int_finish(Mode m, int64_t a, size_t n) {
    if (m == Mode::mean) return n == 0 ? 0 : a / static_cast<int64_t>(n);   // truncated toward zero
    if (m == Mode::l2) return a < 0 ? 0 : static_cast<int64_t>(std::sqrt(static_cast<double>(a)));
    return a;
}

template <typename T>
void reduce_ints(HostCall& call, Mode m, const Walk& w) {
    const T* x = call.in<T>(0);
    std::vector<int64_t> acc(w.out_count, int_init<T>(m));
    BroadcastIndex ix(w.in, {w.kept});
    for (size_t i = 0; i < w.in.count(); ++i, ix.next()) acc[ix.in(0)] = int_step(m, acc[ix.in(0)], x[i]);
    T* y = call.out<T>(0);
    using U = std::make_unsigned_t<T>;
    for (size_t o = 0; o < w.out_count; ++o)
        y[o] = static_cast<T>(static_cast<U>(static_cast<uint64_t>(int_finish(m, acc[o], w.extent))));
}

void reference(HostCall& call) {
    const Mode m = parse_mode(call.attrs().get_string("mode"));
    const Walk w = walk_of(call);
    switch (call.in_type(0)) {
        case DataType::i32: return reduce_ints<int32_t>(call, m, w);
        case DataType::i64: return reduce_ints<int64_t>(call, m, w);
        case DataType::u8: return reduce_ints<uint8_t>(call, m, w);
        case DataType::i8: return reduce_ints<int8_t>(call, m, w);
        default: return reduce_floats(call, m, w);
    }
}

// ---- optimised cpu impl (f32) ----------------------------------------------
//
// The reduced dims as one block: the input seen as [outer, len, inner], each
// output element (o, j) reducing x[o, :, j]. inner == 1 (trailing axes)
// reduces contiguous rows in independent lanes that vectorise; inner > 1 (a
// middle or leading block) walks the len rows of a column strip, the strip's
// accumulators vectorising along inner. Accumulators are double as in the
// reference; log_sum_exp's exponentials use dynrt/cpu_vec_math.hpp.

struct Block {
    size_t outer = 1, len = 1, inner = 1;
};

Block block_of(const Shape& in, const std::vector<bool>& reduced) {
    Block b;
    bool seen = false;
    for (size_t d = 0; d < in.rank(); ++d) {
        const auto n = static_cast<size_t>(in[d]);
        if (reduced[d]) {
            seen = true;
            b.len *= n;
        } else {
            (seen ? b.inner : b.outer) *= n;
        }
    }
    return b;
}

template <Mode M>
inline double fast_step(double a, double x, double mx) {
    if constexpr (M == Mode::max) return x > a || x != x ? x : a;
    else if constexpr (M == Mode::min) return x < a || x != x ? x : a;
    else if constexpr (M == Mode::prod) return a * x;
    else if constexpr (M == Mode::l1) return a + std::fabs(x);
    else if constexpr (M == Mode::l2 || M == Mode::sum_square) return a + x * x;
    else if constexpr (M == Mode::log_sum_exp) return a + vec::exp(static_cast<float>(x - mx));
    else return a + x;
}

// Two partial results of one output element.
template <Mode M>
inline double fast_combine(double a, double b) {
    if constexpr (M == Mode::max || M == Mode::min) return fast_step<M>(a, b, 0);
    else if constexpr (M == Mode::prod) return a * b;
    else return a + b;
}

// One contiguous row of n elements, in kLanes independent accumulators.
template <Mode M>
double fast_row(const float* x, size_t n, double mx) {
    constexpr size_t kLanes = 8;
    double lanes[kLanes];
    for (double& l : lanes) l = float_init(M);
    size_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (size_t l = 0; l < kLanes; ++l) lanes[l] = fast_step<M>(lanes[l], x[k + l], mx);
    for (; k < n; ++k) lanes[0] = fast_step<M>(lanes[0], x[k], mx);
    double a = lanes[0];
    for (size_t l = 1; l < kLanes; ++l) a = fast_combine<M>(a, lanes[l]);
    return a;
}

template <Mode M>
void fast_rows(const CpuThreads& threads, const float* x, float* y, const Block& b) {
    parallel_for(
        threads, b.outer, std::max<size_t>(1, 16384 / std::max<size_t>(b.len, 1)), [&](size_t begin, size_t end) {
            for (size_t o = begin; o < end; ++o) {
                const float* row = x + o * b.len;
                const double mx = M == Mode::log_sum_exp ? fast_row<Mode::max>(row, b.len, 0) : 0;
                const bool sum_exp = M != Mode::log_sum_exp || std::isfinite(mx);   // else the result is mx itself
                const double a = sum_exp ? fast_row<M>(row, b.len, mx) : 0;
                y[o] = static_cast<float>(float_finish(M, a, b.len, mx));
            }
        });
}

// Columns [j0, j0 + n) of output row o: the len input rows of the strip,
// accumulated along inner.
template <Mode M>
void fast_strip(const float* x, float* y, const Block& b, size_t o, size_t j0, size_t n) {
    constexpr size_t kStrip = 256;
    double acc[kStrip], mx[kStrip];
    const float* first = x + o * b.len * b.inner + j0;
    for (size_t j = 0; j < n; ++j) mx[j] = M == Mode::log_sum_exp ? float_init(Mode::max) : 0;
    if constexpr (M == Mode::log_sum_exp)
        for (size_t r = 0; r < b.len; ++r)
            for (size_t j = 0; j < n; ++j) mx[j] = fast_step<Mode::max>(mx[j], first[r * b.inner + j], 0);
    for (size_t j = 0; j < n; ++j) acc[j] = float_init(M);
    for (size_t r = 0; r < b.len; ++r) {
        const float* row = first + r * b.inner;
        for (size_t j = 0; j < n; ++j) acc[j] = fast_step<M>(acc[j], row[j], mx[j]);
    }
    float* out = y + o * b.inner + j0;
    for (size_t j = 0; j < n; ++j) {
        // log_sum_exp of a column whose maximum is not finite is that maximum (float_finish ignores acc).
        out[j] = static_cast<float>(float_finish(M, acc[j], b.len, mx[j]));
    }
}

template <Mode M>
void fast_columns(const CpuThreads& threads, const float* x, float* y, const Block& b) {
    constexpr size_t kStrip = 256;
    const size_t strips = (b.inner + kStrip - 1) / kStrip;
    const size_t grain = std::max<size_t>(1, 16384 / std::max<size_t>(b.len * kStrip, 1));
    parallel_for(threads, b.outer * strips, grain, [&](size_t begin, size_t end) {
        for (size_t item = begin; item < end; ++item) {
            const size_t o = item / strips, j0 = item % strips * kStrip;
            fast_strip<M>(x, y, b, o, j0, std::min(kStrip, b.inner - j0));
        }
    });
}

template <Mode M>
void fast_mode(const CpuThreads& threads, const float* x, float* y, const Block& b) {
    if (b.inner == 1) fast_rows<M>(threads, x, y, b);
    else fast_columns<M>(threads, x, y, b);
}

void fast_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Block b = block_of(in, reduced_dims_of(call));
    if (b.outer * b.inner == 0) return;
    const CpuThreads threads(call.params().engine, (in.count() + b.outer * b.inner) * sizeof(float));
    const float* x = call.in<float>(0);
    float* y = call.out<float>(0);
    switch (parse_mode(call.attrs().get_string("mode"))) {
        case Mode::sum: return fast_mode<Mode::sum>(threads, x, y, b);
        case Mode::mean: return fast_mode<Mode::mean>(threads, x, y, b);
        case Mode::max: return fast_mode<Mode::max>(threads, x, y, b);
        case Mode::min: return fast_mode<Mode::min>(threads, x, y, b);
        case Mode::prod: return fast_mode<Mode::prod>(threads, x, y, b);
        case Mode::l1: return fast_mode<Mode::l1>(threads, x, y, b);
        case Mode::l2: return fast_mode<Mode::l2>(threads, x, y, b);
        case Mode::sum_square: return fast_mode<Mode::sum_square>(threads, x, y, b);
        case Mode::log_sum: return fast_mode<Mode::log_sum>(threads, x, y, b);
        case Mode::log_sum_exp: return fast_mode<Mode::log_sum_exp>(threads, x, y, b);
    }
}

// The loops above cover axes from the attribute that form one run of
// adjacent dims: trailing (rows) or a middle/leading block (columns).
std::string fast_supported(const KernelParams& p) {
    if (p.inputs.size() > 1) return "the axes are input 1, known only when the kernel runs";
    const size_t rank = p.inputs.at(0).shape.rank();
    const std::vector<bool> reduced = attr_reduced_dims(*p.attrs, rank);
    size_t runs = 0;
    for (size_t d = 0; d < rank; ++d) runs += reduced[d] && (d == 0 || !reduced[d - 1]);
    if (runs > 1)
        return "axes " + ints_to_string(p.attrs->get_ints("axes")) + " are not one run of adjacent dims of rank " +
               std::to_string(rank);
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

// LOWEST / HIGHEST: the max / min identity of the input type.
std::pair<const char*, const char*> type_bounds(DataType t) {
    switch (t) {
        case DataType::i32: return {"INT_MIN", "INT_MAX"};
        case DataType::i64: return {"LONG_MIN", "LONG_MAX"};
        case DataType::u8: return {"0", "UCHAR_MAX"};
        case DataType::i8: return {"CHAR_MIN", "CHAR_MAX"};
        default: return {"(-INFINITY)", "INFINITY"};
    }
}

std::vector<bool> attr_reduced(const KernelParams& p) {
    return attr_reduced_dims(*p.attrs, p.inputs.at(0).shape.rank());
}

// AXES_MASK: the reduced dims of the attribute's axes over the kernel's 8
// right-aligned dims (bit j: dim j of INPUT0_DIM0..7). Unused when the axes
// come from input 1 (AXES_INPUT 1): the kernel reads them itself.
std::string attr_axes_mask(const KernelParams& p) {
    const size_t rank = p.inputs.at(0).shape.rank();
    const std::vector<bool> reduced = attr_reduced(p);
    uint32_t mask = 0;
    for (size_t d = 0; d < rank; ++d)
        if (reduced[d]) mask |= 1u << (kShapeInfoDims - rank + d);
    return std::to_string(mask) + "u";
}

// Whether each output element reduces one contiguous run of the input: the
// reduced dims are the innermost ones (trailing axes, or every dim). Axes
// from input 1 are known only on the device: no. The static impl ignores
// size-1 dims (they are on either side); the shape-agnostic one decides by
// the axes alone, so its kernel holds for every shape.
bool reduces_rows(const KernelParams& p, bool dynamic) {
    if (p.inputs.size() > 1) return false;
    const PartialShape& in = p.inputs.at(0).shape;
    const std::vector<bool> reduced = attr_reduced(p);
    bool seen_reduced = false;
    for (size_t d = 0; d < in.rank(); ++d) {
        if (!dynamic && in[d].get_length() == 1) continue;
        if (reduced[d]) seen_reduced = true;
        else if (seen_reduced) return false;
    }
    return true;
}

// The product of the input dims `reduced` selects (or does not) as a JIT
// expression: a literal in the static build, shape_info dims in the
// shape-agnostic one.
std::string dims_product_expr(const KernelParams& p, bool dynamic, bool of_reduced) {
    const PartialShape& in = p.inputs.at(0).shape;
    const std::vector<bool> reduced = attr_reduced(p);
    size_t n = 1;
    std::string e = "((ulong)1";
    for (size_t d = 0; d < in.rank(); ++d) {
        if (reduced[d] != of_reduced) continue;
        if (dynamic) e += "*(ulong)INPUT0_DIM" + std::to_string(kShapeInfoDims - in.rank() + d);
        else n *= static_cast<size_t>(in[d].get_length());
    }
    return dynamic ? e + ")" : "((ulong)" + std::to_string(n) + ")";
}

// The work-group size of reduce_rows: the device's preferred size.
size_t rows_group_size(const OclDeviceLimits& l) {
    const size_t work[3] = {2, 1, 1};
    return pick_local_size(work, 1, l)[0];
}

size_t pow2_at_least(size_t n) {
    size_t p = 1;
    while (p < n) p *= 2;
    return p;
}

// reduce_rows: `lanes` work-items per row (enough for its 4-element vectors,
// at most the group), group / lanes rows per work-group; on a GPU a few waves
// of groups loop over the rows, on a CPU one group per row block.
void rows_update(const KernelParams& p, const OclDeviceLimits& l, OclStageRun& run) {
    const size_t outer = p.outputs.at(0).count(), group = rows_group_size(l);
    const size_t len = outer ? p.inputs.at(0).count() / outer : 0;
    const size_t lanes = std::min(group, pow2_at_least((len + 3) / 4));
    size_t groups = (outer + group / lanes - 1) / (group / lanes);
    if (l.is_gpu) groups = std::min(groups, std::max<size_t>(l.compute_units, 1) * 16);
    run.dispatch.dims = 1;
    run.dispatch.lws = {group, 1, 1};
    run.dispatch.gws = {groups * group, 1, 1};
    run.scalars = {OclArg::i32(static_cast<int32_t>(lanes))};
}

OclMultiKernelSpec ocl_spec(bool dynamic) {
    OclMultiKernelSpec spec;
    spec.source = reduce_cl;
    spec.defines = [dynamic](const KernelParams& p, bool) {
        const DataType t = p.inputs.at(0).dtype;
        const auto [lowest, highest] = type_bounds(t);
        const bool axes_input = p.inputs.size() > 1;
        JitDefines d = {{"MODE", std::to_string(static_cast<int>(parse_mode(p.attrs->get_string("mode"))))},
                        {"IS_INT", is_floating(t) ? "0" : "1"},
                        {"LOWEST", lowest},
                        {"HIGHEST", highest},
                        {"AXES_INPUT", axes_input ? "1" : "0"},
                        {"AXES_MASK", axes_input ? "0u" : attr_axes_mask(p)},
                        {"NOOP_EMPTY", p.attrs->get_bool("noop_with_empty_axes") ? "1" : "0"},
                        jit_data_f16(t)};
        if (reduces_rows(p, dynamic))
            d.insert(d.end(), {{"ROW_LEN", dims_product_expr(p, dynamic, true)},
                               {"ROW_COUNT", dims_product_expr(p, dynamic, false)},
                               {"ROW_GROUP", std::to_string(rows_group_size(OclDevice::from(*p.engine)->limits()))}});
        return d;
    };
    spec.stages = [dynamic](const KernelParams& p, bool) {
        return std::vector<OclStage>{{reduces_rows(p, dynamic) ? "reduce_rows" : "reduce_ref"}};
    };
    spec.update = [dynamic](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        if (reduces_rows(p, dynamic)) return rows_update(p, l, runs[0]);
        runs[0].dispatch = dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// The kernel splits indices over 8 right-aligned dims.
std::string validate_ocl(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kShapeInfoDims)
        return "input rank " + std::to_string(p.inputs[0].shape.rank()) + " is above 8";
    return {};
}

// ---- ONNX -----------------------------------------------------------------

// axes: the attribute (ReduceSum before opset 13, the others before 18) or input 1.
bool onnx_reduce(ImportContext& c, const std::string& mode) {
    if (!c.only_attrs({"axes", "keepdims", "noop_with_empty_axes"})) return false;
    c.set("mode", mode);
    c.set("keepdims", c.i("keepdims", 1) != 0);
    c.set("noop_with_empty_axes", c.i("noop_with_empty_axes", 0) != 0);
    if (c.has("axes")) {
        if (c.present(1)) return c.unsupported("the axes are given both as the attribute and as input 1");
        c.set("axes", c.ints("axes"));
        c.use_inputs({0});
    } else {
        c.use_inputs({0, 1});
    }
    return true;
}

std::vector<ImportRule> onnx_rules() {
    const std::vector<std::pair<std::string, std::string>> ops = {
        {"ReduceSum", "sum"},        {"ReduceMean", "mean"},
        {"ReduceMax", "max"},        {"ReduceMin", "min"},
        {"ReduceProd", "prod"},      {"ReduceL1", "l1"},
        {"ReduceL2", "l2"},          {"ReduceSumSquare", "sum_square"},
        {"ReduceLogSum", "log_sum"}, {"ReduceLogSumExp", "log_sum_exp"}};
    std::vector<ImportRule> rules;
    for (const auto& [onnx, mode] : ops)
        rules.push_back(onnx_rule(
            onnx, 1, 2, [m = mode](ImportContext& c) { return onnx_reduce(c, m); },
            "`mode` " + mode + "; `axes` attribute or input 1; `keepdims`; `noop_with_empty_axes`"));
    return rules;
}

void register_reduce(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "reduce", "Reduction over axes: sum, mean, max, min, prod, l1, l2, sum_square, log_sum, log_sum_exp", 1, 2,
        {attr_string("mode", std::nullopt, kModes, "the reduction"),
         attr_ints("axes", std::vector<int64_t>{}, "dims to reduce, negative counts from the end; empty: every dim"),
         attr_bool("keepdims", true, "keep each reduced dim with extent 1"),
         attr_bool("noop_with_empty_axes", false, "empty axes reduce no dim instead of every dim")},
        infer_reduce);
    def.value_inputs = {1};
    // Memory bound: every input element is read once, every output written once.
    def.cost = [](const std::vector<Layout>& in, const std::vector<Layout>& out, const Attributes&) {
        OpCost c = io_bytes_cost({in.at(0)}, out);
        c.flops = static_cast<double>(in.at(0).get_shape().count());
        return c;
    };
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "reduce", reference, host_options(kTypes));
    add_host_impls(reg, "reduce", fast_kernel, optimised_host_options({DataType::f32}, fast_supported));
    // Registered apart: the static impl's kernel choice follows its shape.
    for (const bool dynamic : {true, false}) {
        OclImplOptions o = ocl_options(kTypes, validate_ocl);
        o.register_dynamic = dynamic;
        o.register_static = !dynamic;
        add_ocl_multi_impls(reg, "reduce", ocl_spec(dynamic), o);
    }
}

}   // namespace

DYNRT_MODULE("reduce", register_reduce)
