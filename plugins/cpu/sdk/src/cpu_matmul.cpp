#include "dynrt/cpu_matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "dynrt/cpu_dnnl.hpp"
#include "dynrt/cpu_padded.hpp"
#include "dynrt/error.hpp"

namespace dynrt {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::dim kRuntime = DNNL_RUNTIME_DIM_VAL;

// One operand of the product as oneDNN sees it: logical dims [..., rows, cols]
// (after the transpose), whether it is stored transposed (its last two dims
// swapped in memory), and which dims vary between runs of the node.
struct Operand {
    std::vector<int64_t> dims;
    std::vector<bool> varies;
    bool transposed = false;
    // Where not row-major: a padded output's (DnnlSpec::padded_outputs),
    // DNNL_RUNTIME_DIM_VAL but the innermost in a plan's descriptor.
    std::vector<int64_t> strides;
};

// The stored dims of input `i` with what the node's inferred layout says of
// them (every dim varies when it is unknown).
Operand stored(const KernelParams& p, size_t i) {
    Operand o;
    const Shape s = p.inputs.at(i).get_shape();
    o.dims.assign(s.begin(), s.end());
    o.varies.assign(o.dims.size(), true);
    if (p.node_inputs && i < p.node_inputs->size()) {
        const PartialShape& ps = (*p.node_inputs)[i].shape;
        if (ps.rank() == o.dims.size())
            for (size_t d = 0; d < o.dims.size(); ++d) o.varies[d] = !ps[d].is_static();
    }
    return o;
}

Operand padded(Operand o, size_t rank) {
    const size_t lead = rank - std::min(rank, o.dims.size());
    o.dims.insert(o.dims.begin(), lead, 1);
    o.varies.insert(o.varies.begin(), lead, false);
    return o;
}

Operand transposed(Operand o) {
    const size_t r = o.dims.size();
    std::swap(o.dims[r - 1], o.dims[r - 2]);
    std::vector<bool>::swap(o.varies[r - 1], o.varies[r - 2]);
    o.transposed = !o.transposed;
    return o;
}

// [d0, ..., dk, rows, cols] -> [d0 * ... * dk * rows, cols]
Operand rows_of(const Operand& o) {
    Operand r;
    int64_t rows = 1;
    bool varies = false;
    for (size_t d = 0; d + 1 < o.dims.size(); ++d) {
        rows *= o.dims[d];
        varies = varies || o.varies[d];
    }
    r.dims = {rows, o.dims.empty() ? 1 : o.dims.back()};
    r.varies = {varies, o.varies.empty() ? false : o.varies.back()};
    return r;
}

// The product src [..., M, K] x wei [..., K, N] (+ bias) = dst [..., M, N].
struct Product {
    Operand src, wei, dst, bias;
    bool has_bias = false;
};

Operand product_dst(const Operand& a, const Operand& b) {
    const size_t r = a.dims.size();
    Operand y;
    y.dims.resize(r);
    y.varies.resize(r);
    for (size_t i = 0; i + 2 < r; ++i) {
        y.dims[i] = std::max(a.dims[i], b.dims[i]);
        y.varies[i] = a.varies[i] || b.varies[i];
    }
    y.dims[r - 2] = a.dims[r - 2], y.varies[r - 2] = a.varies[r - 2];
    y.dims[r - 1] = b.dims[r - 1], y.varies[r - 1] = b.varies[r - 1];
    return y;
}

// True when every dim but the last two is a fixed 1.
bool no_batch(const Operand& o) {
    for (size_t d = 0; d + 2 < o.dims.size(); ++d)
        if (o.varies[d] || o.dims[d] != 1) return false;
    return true;
}

// How a product describes its output: dense (a shape-agnostic plan, which
// never serves a padded output), or a padded output's strides as they are
// (a run's memory descriptor) or given at run time (a plan's).
enum class DstStrides { dense, concrete, runtime };

// The element strides of output 0 where it is padded (and no dense block:
// the SDK strips those), else none.
std::vector<int64_t> padded_dst_strides(const KernelParams& p, DstStrides mode) {
    const Layout& y = p.outputs.at(0);
    if (y.padding.empty() || mode == DstStrides::dense) return {};
    const PaddedStrides s = padded_strides(y);
    std::vector<int64_t> st(s.strides.begin(), s.strides.end());
    if (mode == DstStrides::runtime)
        for (size_t d = 0; d + 1 < st.size(); ++d) st[d] = kRuntime;
    return st;
}

// fully_connected: x [..., K] as rows [R, K]; w [N, K] read transposed. A
// strided output keeps x's leading dims (its rows do not merge) and reads
// the weights broadcast over them.
Product fc_product(const KernelParams& p, std::vector<int64_t> dst_strides) {
    Product m;
    const size_t rank = dst_strides.empty() ? 2 : dst_strides.size();
    m.src = dst_strides.empty() ? rows_of(stored(p, 0)) : stored(p, 0);
    m.wei = padded(transposed(stored(p, 1)), rank);
    m.dst = product_dst(m.src, m.wei);
    m.dst.strides = std::move(dst_strides);
    if (p.inputs.size() > 2) {
        m.bias = padded(stored(p, 2), rank);
        m.has_bias = true;
    }
    return m;
}

// gemm: a and b left-padded to the output's rank. When b has no batch dims
// (a weight matrix) and a is not transposed, a's batch dims fold into its rows:
// one 2-D product, whatever the batch.
Product gemm_product(const KernelParams& p, const MatmulVariant& v, std::vector<int64_t> dst_strides) {
    const size_t rank = std::max<size_t>(2, p.outputs.at(0).shape.rank());
    Operand a = padded(stored(p, 0), rank), b = padded(stored(p, 1), rank);
    Product m;
    const bool has_c = p.inputs.size() > 2;
    Operand c = has_c ? padded(stored(p, 2), rank) : Operand{};
    const bool fold = rank > 2 && !v.ta && no_batch(b) && dst_strides.empty() &&
                      (!has_c || (no_batch(c) && !c.varies[rank - 2] && c.dims[rank - 2] == 1));
    if (fold) {
        a = rows_of(a);
        b = padded(rows_of(b), 2);
        if (has_c) c = rows_of(c);
    }
    m.src = v.ta ? transposed(a) : a;
    m.wei = v.tb ? transposed(b) : b;
    m.dst = product_dst(m.src, m.wei);
    m.dst.strides = std::move(dst_strides);
    if (has_c) {
        m.bias = c;
        m.has_bias = true;
    }
    return m;
}

// Concrete descriptor: row-major strides of the stored dims.
memory::desc concrete(const Operand& o) {
    const size_t r = o.dims.size();
    memory::dims d(o.dims.begin(), o.dims.end()), st(r, 1);
    if (!o.strides.empty())
        return memory::desc(d, memory::data_type::f32, memory::dims(o.strides.begin(), o.strides.end()));
    std::vector<int64_t> s = o.dims;   // stored order
    if (o.transposed) std::swap(s[r - 1], s[r - 2]);
    for (size_t i = r - 1; i-- > 0;) st[i] = st[i + 1] * s[i + 1];
    if (o.transposed) std::swap(st[r - 1], st[r - 2]);
    return memory::desc(d, memory::data_type::f32, st);
}

// The plain tag of rank r, its last two dims swapped when transposed.
std::optional<Tag> tag_of(size_t r, bool t) {
    switch (r) {
        case 2: return t ? Tag::ba : Tag::ab;
        case 3: return t ? Tag::acb : Tag::abc;
        case 4: return t ? Tag::abdc : Tag::abcd;
        case 5: return t ? Tag::abced : Tag::abcde;
        case 6: return t ? Tag::abcdfe : Tag::abcdef;
        default: return std::nullopt;
    }
}

// Runtime descriptor: the varying dims given per run. oneDNN's fast matmul
// takes runtime dims with a format tag (runtime strides fall back to its
// reference code), so ranks beyond the tags get no shape-agnostic plan.
std::optional<memory::desc> runtime(const Operand& o) {
    const std::optional<Tag> tag = tag_of(o.dims.size(), o.transposed);
    if (!tag) return std::nullopt;
    memory::dims d(o.dims.begin(), o.dims.end());
    for (size_t i = 0; i < d.size(); ++i)
        if (o.varies[i]) d[i] = kRuntime;
    return memory::desc(d, memory::data_type::f32, *tag);
}

Product product_of(const KernelParams& p, const MatmulVariant& v, DstStrides mode = DstStrides::dense) {
    std::vector<int64_t> strides = padded_dst_strides(p, mode);
    return v.fc ? fc_product(p, std::move(strides)) : gemm_product(p, v, std::move(strides));
}

std::vector<memory::desc> concrete_descs(const Product& m) {
    std::vector<memory::desc> d{concrete(m.src), concrete(m.wei), concrete(m.dst)};
    if (m.has_bias) d.push_back(concrete(m.bias));
    return d;
}

// With `blocked_weights` (constant weights of static dims) the weights take
// the layout oneDNN picks (format `any`) and are staged: reordered once per
// weights buffer (dnnl_stage_args). A 1-row product [1, 2048] x [2048, 8192]
// read its plain weights at 10 GB/s (the brgemm kernel walks 64-column
// strips down all of K, 32 KiB apart) and its blocked weights at 25 GB/s.
DnnlPlan make_plan(const KernelParams& p, const std::vector<memory::desc>& d, const MatmulVariant& v,
                   bool blocked_weights) {
    return dnnl_plan_with_post_ops(p, d[2], [&](const DnnlPostOps& post) {
        dnnl::primitive_attr attr = dnnl_attr(post);
        if (v.alpha != 1.0) attr.set_output_scales(0, {static_cast<float>(v.alpha)});
        const memory::desc w = blocked_weights ? memory::desc(d[1].dims(), memory::data_type::f32, Tag::any) : d[1];
        const dnnl::matmul::desc md =
            d.size() > 3 ? dnnl::matmul::desc(d[0], w, d[3], d[2]) : dnnl::matmul::desc(d[0], w, d[2]);
        const dnnl::matmul::primitive_desc pd(md, attr, dnnl_cpu_engine());
        std::vector<DnnlArgRef> args{{DNNL_ARG_SRC, false, 0}, {DNNL_ARG_WEIGHTS, false, 1}, {DNNL_ARG_DST, true, 0}};
        if (d.size() > 3) args.push_back({DNNL_ARG_BIAS, false, 2});
        DnnlPlan plan = dnnl_plan(dnnl::matmul(pd), pd.scratchpad_desc(), std::move(args), d, post);
        if (!blocked_weights) return plan;
        return dnnl_stage_args(std::move(plan), {d[0], pd.weights_desc()}, p);
    });
}

// Whether a batch dim that varies in either operand is equal in both, and a
// bias dim that varies equals the output's: a shape-agnostic plan takes them
// as runtime dims, which oneDNN cannot broadcast.
bool batch_dims_match(const Product& m) {
    for (size_t i = 0; i + 2 < m.src.dims.size(); ++i)
        if ((m.src.varies[i] || m.wei.varies[i]) && m.src.dims[i] != m.wei.dims[i]) return false;
    if (m.has_bias && m.bias.dims.size() == m.dst.dims.size())
        for (size_t i = 0; i < m.bias.dims.size(); ++i)
            if (m.bias.varies[i] && m.bias.dims[i] != m.dst.dims[i]) return false;
    return true;
}

bool varies(const Operand& o) { return std::find(o.varies.begin(), o.varies.end(), true) != o.varies.end(); }

// One primitive for every shape of the node: batch dims that vary are
// runtime dims of src, wei and dst, and the plan serves the runs where they
// are equal in src and wei (shape_agnostic_serves; a run where one
// broadcasts gets a plan of its shapes). Static batch dims must be equal
// and the ranks must have format tags.
std::optional<DnnlPlan> shape_agnostic(const KernelParams& p, const MatmulVariant& v) {
    Product m = product_of(p, v);
    if (!batch_dims_match(m)) return std::nullopt;
    // A node of static layouts with constant weights: its plan (spec.plan)
    // reads them in oneDNN's own layout.
    if (p.constant_weights && !varies(m.src) && !varies(m.wei)) return std::nullopt;
    for (size_t i = 0; i + 2 < m.src.dims.size(); ++i) {
        if (m.src.dims[i] != m.wei.dims[i]) return std::nullopt;
        if (m.src.varies[i] || m.wei.varies[i]) m.src.varies[i] = m.wei.varies[i] = m.dst.varies[i] = true;
    }
    std::vector<memory::desc> d;
    for (const Operand* o : {&m.src, &m.wei, &m.dst}) {
        std::optional<memory::desc> r = runtime(*o);
        if (!r) return std::nullopt;
        d.push_back(*r);
    }
    if (m.has_bias) {
        // A bias dim that varies broadcasts nowhere (checked above): runtime too.
        std::optional<memory::desc> r = runtime(m.bias);
        if (!r) return std::nullopt;
        d.push_back(*r);
    }
    try {
        // Constant weights that do not vary take oneDNN's layout here too: with
        // runtime rows oneDNN 2.6 multiplies through its jit gemm, which reads
        // fully_connected's [N, K] weights transposed at a third of the speed
        // of a [K, N] copy (1 x 1024 x 4096 on one AVX-512 core: 286 us against
        // 92; 16 rows 2385 against 1434). The copy is made once per weights
        // buffer and serves every shape.
        return make_plan(p, d, v, p.constant_weights && !varies(m.wei));
    } catch (const dnnl::error&) {
        return std::nullopt;   // oneDNN takes these runtime dims in no impl: one plan per shape
    }
}

// K, the dim the product sums over, when the layouts fix it (x's last dim for
// fully_connected, a's last or, transposed, second-to-last for gemm).
std::optional<int64_t> inner_dim(const KernelParams& p, const MatmulVariant& v) {
    const PartialShape& a = p.inputs.at(0).shape;
    if (a.rank() == 0 || (!v.fc && v.ta && a.rank() < 2)) return std::nullopt;
    const Dimension& k = a[a.rank() - (!v.fc && v.ta ? 2 : 1)];
    if (!k.is_static()) return std::nullopt;
    return k.get_length();
}

std::string validate(const KernelParams& p, const MatmulVariant& v) {
    const size_t rank = p.outputs.at(0).shape.rank();
    if (!v.fc && rank < 2) return "the output has rank < 2";
    if (rank > 8) return "the output has rank > 8";
    // A sum of no terms: oneDNN's matmul leaves dst unwritten (static plans)
    // or fails to execute (runtime dims), where the product is zeros plus the
    // bias; the reference impl writes that.
    if (inner_dim(p, v) == int64_t{0}) return "K is 0 (the output is the bias or zeros; oneDNN writes nothing)";
    for (const Layout& l : p.inputs)
        if (l.dtype != DataType::f32) return "input " + l.to_string() + " is not f32";
    if (p.inputs.size() > 2 && !v.fc) {
        if (v.beta != 1.0) return "beta is not 1 (oneDNN adds the bias unscaled)";
        if (v.alpha != 1.0) return "alpha is not 1 with c (oneDNN would scale the product only)";
    }
    return {};
}

}   // namespace

void add_dnnl_matmul_impls(ModuleRegistrar& reg, const std::string& op,
                           std::function<MatmulVariant(const KernelParams&)> variant) {
    DnnlSpec spec;
    spec.padded_outputs = true;   // a dst descriptor of runtime strides (product_of)
    spec.validate = [variant](const KernelParams& p) { return validate(p, variant(p)); };
    spec.plan = [variant](const KernelParams& p) {
        const MatmulVariant v = variant(p);
        // A padded output's strides change whenever the concat it writes into
        // grows: one plan takes them at run time (oneDNN's gemm-based matmul,
        // plain weights). [2, 1, 64] x [64, 64] on one thread: 7 us a run,
        // memory object included, where a plan per padding took 33 us to make.
        const bool strided = !p.outputs.at(0).padding.empty();
        return make_plan(p, concrete_descs(product_of(p, v, strided ? DstStrides::runtime : DstStrides::dense)), v,
                         p.constant_weights && !strided);
    };
    spec.shape_agnostic_plan = [variant](const KernelParams& p) { return shape_agnostic(p, variant(p)); };
    spec.runtime_descs = [variant](const KernelParams& p) {
        return concrete_descs(product_of(p, variant(p), DstStrides::concrete));
    };
    spec.shape_agnostic_serves = [variant](const KernelParams& p) {
        return batch_dims_match(product_of(p, variant(p)));
    };
    add_dnnl_impls(reg, op, std::move(spec));
}

}   // namespace dynrt
