// pooling: max, average and Lp pooling over 1, 2 or 3 spatial axes of an
// [N, C, spatial...] input (ONNX MaxPool, AveragePool, LpPool and their
// Global* forms).
//
// The window geometry (pooling_window.hpp) is a function of the attributes
// and the input extents only, so auto_pad same_* derives its pads from the
// runtime shape: shape inference computes the output extents from it (bounds
// for dynamic dims), the reference kernel and the OpenCL impls' pad scalars
// recompute it for each concrete shape. Max pooling may also give the flat
// input index of each maximum (output 1, i64; `indices`).
//
// The cpu engine also runs f32 max and average pooling on oneDNN's pooling_v2
// (cpu_dnnl_static, cpu_dnnl_dynamic: a primitive per shape, oneDNN's
// primitive cache serving revisits), the window of each runtime shape given
// as explicit pads: ceil_mode and same_* become an end pad that reaches the
// last window. Indices, Lp, other dtypes and the one average that oneDNN
// counts differently (count_include_pad with a ceil_mode window past the
// end pad) go to the reference.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/op_window.hpp"
#include "pooling_cl.hpp"
#include "pooling_window.hpp"

namespace {

using namespace dynrt;
using pooling::AxisWindow;
using pooling::Mode;
using pooling::PoolAttrs;

// ---- shape inference ---------------------------------------------------------

// Output extent of spatial axis i for a possibly dynamic input extent: the
// extent is non-decreasing in the input's, so bounds map to bounds; an input
// bound too small for the window gives a lower bound of 1 (that extent is an
// error when it arrives).
Dimension out_dim(const PoolAttrs& a, size_t i, const Dimension& in, const std::string& node) {
    if (in.is_static()) return Dimension(pooling::axis_window(a, i, in.get_length(), node).out);
    if (a.global) return Dimension(1);
    const int64_t hi =
        in.max() == Dimension::kUnbounded ? Dimension::kUnbounded : pooling::axis_window(a, i, in.max(), node).out;
    int64_t lo = 1;
    try {
        lo = pooling::axis_window(a, i, in.min(), node).out;
    } catch (const Error&) {
        lo = 1;
    }
    return Dimension(lo, hi);
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const size_t rank = x.shape.rank();
    if (rank < 3 || rank > 5)
        throw Error("pooling needs an input [N, C, spatial...] with 1 to 3 spatial axes, got " + x.to_string());
    const PoolAttrs a = pooling::read_attrs(ctx.attrs, rank - 2, ctx.node);
    const bool floating = is_floating(x.dtype);
    const bool small_int = x.dtype == DataType::u8 || x.dtype == DataType::i8;
    if (!floating && !(a.mode == Mode::max && small_int))
        throw Error("pooling mode " + ctx.attrs.get_string("mode") + " takes " +
                    (a.mode == Mode::max ? "f32, f16, f64, u8 or i8" : "f32, f16 or f64") + " input, got " +
                    x.to_string());
    std::vector<Dimension> out = {x.shape[0], x.shape[1]};
    for (size_t i = 0; i + 2 < rank; ++i) out.push_back(out_dim(a, i, x.shape[i + 2], ctx.node));
    std::vector<Layout> r = {Layout(PartialShape(out), x.dtype)};
    if (a.indices) r.emplace_back(PartialShape(out), DataType::i64);
    return r;
}

// ---- the reference -------------------------------------------------------------

// The windows of a static input, with leading spatial axes of extent 1 added
// so that every rank is walked as three axes (d, h, w).
std::array<AxisWindow, 3> windows3(const PoolAttrs& a, const Shape& x, const std::string& node) {
    const std::vector<AxisWindow> w = pooling::windows(a, x, node);
    AxisWindow unit;   // an axis the rank lacks: extent 1, one tap
    unit.in = 1;
    std::array<AxisWindow, 3> r = {unit, unit, unit};
    std::copy(w.begin(), w.end(), r.begin() + static_cast<std::ptrdiff_t>(3 - w.size()));
    return r;
}

struct Pooled {
    double value = 0;
    int64_t arg = -1;   // spatial index of the maximum within its (n, c) plane
};

// One output element: `o` its (d, h, w) position, `plane` the flat index of
// the first element of its (n, c) input plane.
Pooled pool_one(const HostCall& call, const PoolAttrs& a, const std::array<AxisWindow, 3>& w, size_t plane,
                const std::array<int64_t, 3>& o) {
    Pooled r;
    double acc = 0;
    int64_t inside = 0, in_padded = 0;
    for (int64_t kd = 0; kd < w[0].k; ++kd)
        for (int64_t kh = 0; kh < w[1].k; ++kh)
            for (int64_t kw = 0; kw < w[2].k; ++kw) {
                const std::array<int64_t, 3> tap = {kd, kh, kw};
                std::array<int64_t, 3> c{};
                bool in_input = true, in_pad = true;
                for (size_t j = 0; j < 3; ++j) {
                    c[j] = o[j] * w[j].s - w[j].pb + tap[j] * w[j].d;
                    in_input = in_input && c[j] >= 0 && c[j] < w[j].in;
                    in_pad = in_pad && c[j] >= -w[j].pb && c[j] < w[j].in + w[j].pe;
                }
                in_padded += in_pad ? 1 : 0;
                if (!in_input) continue;   // padding: never the maximum, adds zero
                const int64_t row_major = (c[0] * w[1].in + c[1]) * w[2].in + c[2];
                const double v = call.get(0, plane + static_cast<size_t>(row_major));
                if (a.mode == Mode::max) {
                    if (inside == 0 || v > r.value) {
                        r.value = v;
                        r.arg = a.column_major ? c[0] + w[0].in * (c[1] + w[1].in * c[2]) : row_major;
                    }
                } else {
                    acc += a.mode == Mode::avg ? v : std::pow(std::fabs(v), static_cast<double>(a.p));
                }
                ++inside;
            }
    if (a.mode == Mode::avg) r.value = acc / static_cast<double>(a.count_include_pad ? in_padded : inside);
    if (a.mode == Mode::lp) r.value = std::pow(acc, 1.0 / static_cast<double>(a.p));
    return r;
}

void reference(HostCall& call) {
    const Shape& x = call.in_shape(0);
    const PoolAttrs a = pooling::read_attrs(call.attrs(), x.rank() - 2, call.node());
    const std::array<AxisWindow, 3> w = windows3(a, x, call.node());
    const size_t planes = static_cast<size_t>(x[0] * x[1]);
    const size_t in_plane = static_cast<size_t>(w[0].in * w[1].in * w[2].in);
    int64_t* indices = a.indices ? call.out<int64_t>(1) : nullptr;
    size_t y = 0;
    for (size_t nc = 0; nc < planes; ++nc)
        for (int64_t od = 0; od < w[0].out; ++od)
            for (int64_t oh = 0; oh < w[1].out; ++oh)
                for (int64_t ow = 0; ow < w[2].out; ++ow, ++y) {
                    const Pooled r = pool_one(call, a, w, nc * in_plane, {od, oh, ow});
                    call.set(0, y, r.value);
                    if (indices) indices[y] = static_cast<int64_t>(nc * in_plane) + r.arg;
                }
}

// ---- cpu: oneDNN --------------------------------------------------------------------

// The end pad oneDNN needs to give `w.out` windows: its extent is
// (in + pb + pe - span) / s + 1 rounded down, so a ceil_mode window that
// starts inside the input but reaches past pads_end needs a larger end pad.
int64_t dnnl_pad_end(const AxisWindow& w) {
    const int64_t span = w.d * (w.k - 1) + 1;
    return std::max(w.pe, (w.out - 1) * w.s + span - w.in - w.pb);
}

dnnl::pooling_v2_forward::primitive_desc dnnl_pooling_pd(const KernelParams& p) {
    const Shape x = p.inputs.at(0).get_shape();
    const PoolAttrs a = pooling::read_attrs(*p.attrs, x.rank() - 2, p.node);
    const std::vector<AxisWindow> w = pooling::windows(a, x, p.node);
    dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
    for (const AxisWindow& aw : w) {
        strides.push_back(aw.s);
        kernel.push_back(aw.k);
        dilation.push_back(aw.d - 1);   // oneDNN counts the holes
        pad_l.push_back(aw.pb);
        pad_r.push_back(dnnl_pad_end(aw));
    }
    const Shape y = p.outputs.at(0).get_shape();
    const dnnl::algorithm alg = a.mode == Mode::max   ? dnnl::algorithm::pooling_max
                                : a.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                      : dnnl::algorithm::pooling_avg_exclude_padding;
    const dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg,
                                           dnnl_plain_desc(std::vector<int64_t>(x.begin(), x.end()), DataType::f32),
                                           dnnl_plain_desc(std::vector<int64_t>(y.begin(), y.end()), DataType::f32),
                                           strides, kernel, dilation, pad_l, pad_r);
    return dnnl::pooling_v2_forward::primitive_desc(d, dnnl_attr(), dnnl_cpu_engine());
}

DnnlPlan dnnl_pooling_plan(const KernelParams& p) {
    const auto pd = dnnl_pooling_pd(p);
    return dnnl_plan(dnnl::pooling_v2_forward(pd), pd.scratchpad_desc(),
                     {{DNNL_ARG_SRC, false, 0}, {DNNL_ARG_DST, true, 0}}, {pd.src_desc(), pd.dst_desc()});
}

std::string dnnl_pooling_validate(const KernelParams& p) {
    const Shape x = p.inputs.at(0).get_shape();
    const PoolAttrs a = pooling::read_attrs(*p.attrs, x.rank() - 2, p.node);
    if (a.indices) return "the indices output (oneDNN gives no indices in inference)";
    if (a.mode == Mode::lp) return "Lp pooling (oneDNN pools max and average)";
    if (a.mode == Mode::avg && a.count_include_pad)
        for (const AxisWindow& w : pooling::windows(a, x, p.node))
            if (dnnl_pad_end(w) > w.pe)
                return "count_include_pad with a ceil_mode window past pads_end (oneDNN would count the taps "
                       "beyond the padding)";
    try {
        dnnl_pooling_pd(p);
    } catch (const dnnl::error& e) {
        return std::string("oneDNN has no pooling for this window (") + e.what() + ")";
    }
    return {};
}

// ---- OpenCL ----------------------------------------------------------------------

// The JIT name of spatial axis j (0: d, 1: h, 2: w) of tensor `t` of `rank`
// dims, or "1" for the axes a lower rank lacks (dims are right-aligned over 8).
std::string spatial_dim(const std::string& t, size_t rank, size_t j) {
    const size_t spatial = rank - 2;
    if (j + spatial < 3) return "1";
    return "((long)" + t + "_DIM" + std::to_string(8 - 3 + j) + ")";
}

JitDefines ocl_defines(const KernelParams& p, bool) {
    const size_t rank = p.inputs.at(0).shape.rank();
    const PoolAttrs a = pooling::read_attrs(*p.attrs, rank - 2, p.node);
    const DataType t = p.inputs.at(0).dtype;
    JitDefines d = {jit_data_f16(t),
                    {"POOL_MODE", std::to_string(static_cast<int>(a.mode))},
                    {"ACC_T", a.mode != Mode::max ? "FLOAT_ACC"
                              : is_floating(t)    ? "float"
                                                  : "int"},
                    {"LP_P", std::to_string(a.p)},
                    {"COUNT_PAD", a.count_include_pad ? "1" : "0"},
                    {"WITH_INDICES", a.indices ? "1" : "0"},
                    {"COLUMN_MAJOR", a.column_major ? "1" : "0"}};
    const char* axes[3] = {"D", "H", "W"};
    const size_t lead = 3 - (rank - 2);
    for (size_t j = 0; j < 3; ++j) {
        const std::string in = spatial_dim("INPUT0", rank, j);
        d.emplace_back(std::string("IN_") + axes[j], in);
        d.emplace_back(std::string("OUT_") + axes[j], spatial_dim("OUTPUT0", rank, j));
        const bool real = j >= lead;
        const auto attr = [&](const std::vector<int64_t>& v) { return real ? std::to_string(v[j - lead]) : "1"; };
        d.emplace_back(std::string("K_") + axes[j], a.global ? in : attr(a.kernel));
        d.emplace_back(std::string("S_") + axes[j], a.global ? "1" : attr(a.strides));
        d.emplace_back(std::string("DIL_") + axes[j], a.global ? "1" : attr(a.dilations));
    }
    return d;
}

// Pads of the runtime shape (auto_pad may derive them from it): begin d, h,
// w, then end d, h, w.
std::vector<OclArg> ocl_pads(const KernelParams& p) {
    const Shape x = p.inputs.at(0).get_shape();
    const PoolAttrs a = pooling::read_attrs(*p.attrs, x.rank() - 2, p.node);
    const std::array<AxisWindow, 3> w = windows3(a, x, p.node);
    std::vector<OclArg> s;
    for (const AxisWindow& aw : w) s.push_back(OclArg::i64(aw.pb));
    for (const AxisWindow& aw : w) s.push_back(OclArg::i64(aw.pe));
    return s;
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = pooling_cl;
    spec.kernel_name = "pooling";
    spec.defines = ocl_defines;
    spec.scalars = ocl_pads;
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ---- ONNX ----------------------------------------------------------------------

// The window attributes shared by MaxPool, AveragePool and LpPool.
bool onnx_window(ImportContext& c, const std::string& mode) {
    const size_t rank = c.rank(0);
    if (rank < 3 || rank > 5)
        return c.unsupported("dynrt pools over 1 to 3 spatial axes; the input has rank " + std::to_string(rank));
    const size_t spatial = rank - 2;
    if (!c.has("kernel_shape")) return c.unsupported("kernel_shape is missing");
    const std::vector<int64_t> k = c.ints("kernel_shape");
    if (k.size() != spatial) return c.unsupported("kernel_shape " + ints_to_string(k) + " does not fit the input rank");
    c.set("mode", mode);
    c.set("kernel", k);
    if (c.has("strides")) c.set("strides", c.ints("strides"));
    if (c.has("dilations")) c.set("dilations", c.ints("dilations"));
    if (!onnx_window_pads(c, spatial)) return false;
    c.set("ceil_mode", c.i("ceil_mode", 0) != 0);
    c.use_inputs({0});
    return true;
}

bool onnx_max_pool(ImportContext& c) {
    if (!c.only_attrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}))
        return false;
    if (!onnx_window(c, "max")) return false;
    c.set("indices", c.node().outputs > 1);
    c.set("storage_order", std::string(c.i("storage_order", 0) != 0 ? "column_major" : "row_major"));
    return true;
}

bool onnx_average_pool(ImportContext& c) {
    if (!c.only_attrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"}))
        return false;
    if (!onnx_window(c, "avg")) return false;
    c.set("count_include_pad", c.i("count_include_pad", 0) != 0);
    return true;
}

// LpPool-1 has a float p; later versions an int.
bool read_p(ImportContext& c) {
    const ImportAttr* p = c.attr("p");
    if (p == nullptr) return true;
    const double v = p->kind == ImportAttr::Kind::Float ? p->f : static_cast<double>(p->i);
    if (v != std::floor(v) || v < 1) return c.unsupported("p = " + std::to_string(v) + " is not an integer >= 1");
    c.set("p", static_cast<int64_t>(v));
    return true;
}

bool onnx_lp_pool(ImportContext& c) {
    if (!c.only_attrs({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "p", "pads", "strides"})) return false;
    return onnx_window(c, "lp") && read_p(c);
}

ImportFn onnx_global(const std::string& mode) {
    return [mode](ImportContext& c) {
        if (!c.only_attrs(mode == "lp" ? std::initializer_list<const char*>{"p"}
                                       : std::initializer_list<const char*>{}))
            return false;
        const size_t rank = c.rank(0);
        if (rank < 3 || rank > 5)
            return c.unsupported("dynrt pools over 1 to 3 spatial axes; the input has rank " + std::to_string(rank));
        c.set("mode", mode);
        c.set("global", true);
        c.use_inputs({0});
        return read_p(c);
    };
}

std::vector<ImportRule> onnx_rules() {
    const std::string window =
        "`kernel_shape` -> `kernel`, `strides`, `dilations`, `pads` [b..., e...] -> "
        "`pads_begin`/`pads_end`, `auto_pad` (SAME_* pads from the runtime shape), "
        "`ceil_mode`; 1 to 3 spatial axes";
    return {onnx_rule("MaxPool", 1, 1, onnx_max_pool,
                      "`mode` max; " + window + "; the Indices output -> `indices`, `storage_order`", 2),
            onnx_rule("AveragePool", 1, 1, onnx_average_pool, "`mode` avg; " + window + "; `count_include_pad`"),
            onnx_rule("LpPool", 1, 1, onnx_lp_pool, "`mode` lp; " + window + "; `p` (integer)"),
            onnx_rule("GlobalMaxPool", 1, 1, onnx_global("max"), "`mode` max, `global`"),
            onnx_rule("GlobalAveragePool", 1, 1, onnx_global("avg"), "`mode` avg, `global`"),
            onnx_rule("GlobalLpPool", 1, 1, onnx_global("lp"), "`mode` lp, `global`, `p`")};
}

// ---- registration ------------------------------------------------------------------

std::vector<AttrSpec> pooling_attrs() {
    const std::vector<int64_t> none;
    return {attr_string("mode", std::string("max"), pooling::mode_names(), "max, avg (mean) or lp (Lp norm)"),
            attr_ints("kernel", none, "window taps per spatial axis (empty only with global)"),
            attr_ints("strides", none, "window step per spatial axis (empty: 1)"),
            attr_ints("dilations", none, "distance between taps per spatial axis (empty: 1)"),
            attr_ints("pads_begin", none, "padding before each spatial axis (empty: 0; auto_pad explicit)"),
            attr_ints("pads_end", none, "padding after each spatial axis (empty: 0; auto_pad explicit)"),
            attr_string("auto_pad", std::string("explicit"), pooling::auto_pad_names(),
                        "explicit (pads_*), valid (none) or same_upper/same_lower (output = ceil(in/stride), pads "
                        "from the input extent, the odd one at the end/begin)"),
            attr_bool("ceil_mode", false, "round the output extent up (explicit pads)"),
            attr_bool("count_include_pad", false, "avg: divide by the taps inside the padded input, not the input"),
            attr_int("p", 2, "lp: the norm's exponent (>= 1)"),
            attr_bool("global", false, "one window over every spatial axis (kernel empty)"),
            attr_bool("indices", false, "max: output 1 is the flat input index (i64) of each maximum"),
            attr_string("storage_order", std::string("row_major"), {"row_major", "column_major"},
                        "indices: spatial axes row-major or column-major (first axis fastest)")};
}

void register_pooling(ModuleRegistrar& reg) {
    OpDefinition def = op_def("pooling", "max / avg / Lp pooling over 1-3 spatial axes of [N, C, spatial...]", 1, 1,
                              pooling_attrs(), infer);
    def.num_outputs = 2;
    def.output_count = [](const Attributes& a) -> size_t { return a.get_bool("indices") ? 2 : 1; };
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "pooling", reference,
                   host_options({DataType::f32, DataType::f16, DataType::f64, DataType::u8, DataType::i8}));
    DnnlSpec dnnl;
    dnnl.validate = dnnl_pooling_validate;
    dnnl.plan = dnnl_pooling_plan;
    add_dnnl_impls(reg, "pooling", std::move(dnnl));
    add_ocl_impls(reg, "pooling", ocl_spec(), ocl_options({DataType::f32, DataType::f16, DataType::u8, DataType::i8}));
}

}   // namespace

DYNRT_MODULE("pooling", register_pooling)
