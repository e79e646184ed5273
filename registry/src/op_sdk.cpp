// Op SDK helpers: HostCall, the cpu reference impls and shape utilities.
//
// These live in libdynrt_core (not in a header) so that every op module shares
// one copy and modules stay small.
#include "dynrt/op_sdk.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "dynrt/checked_math.hpp"
#include "dynrt/host_tensor.hpp"

namespace dynrt {

// ---- HostCall -------------------------------------------------------------

HostCall::HostCall(ExecContext& ctx) : ctx_(ctx) {
    const KernelParams& p = ctx.params;
    // Layouts come from the params (the current, static shapes); nothing is
    // mapped here (see map_input / map_output).
    in_shapes_.reserve(p.inputs.size());
    for (const Layout& l : p.inputs) in_shapes_.push_back(l.get_shape());
    in_ptrs_.assign(p.inputs.size(), nullptr);
    out_shapes_.reserve(p.outputs.size());
    out_offsets_.assign(p.outputs.size(), 0);
    for (size_t i = 0; i < p.outputs.size(); ++i) {
        out_shapes_.push_back(p.outputs[i].get_shape());
        // A padded output whose elements form one dense block (validated by the
        // impl entry) is addressed from its first element.
        size_t offset = 0;
        if (!p.outputs[i].padding.empty() && !dense_block_in_padding(p.outputs[i], &offset))
            throw Error("output " + std::to_string(i) + " is padded (" + p.outputs[i].to_string() +
                        "); the host reference takes dense blocks only");
        out_offsets_[i] = offset * byte_size(p.outputs[i].dtype);
    }
    out_ptrs_.assign(p.outputs.size(), nullptr);
}

const void* HostCall::map_input(size_t i) const {
    if (i >= in_ptrs_.size())
        throw Error("HostCall: input " + std::to_string(i) + " of " + std::to_string(in_ptrs_.size()) +
                    " requested (node '" + ctx_.params.node + "')");
    const MemoryPtr mem = i < ctx_.inputs.size() ? ctx_.inputs[i] : nullptr;
    if (!mem) return nullptr;   // an absent optional input
    maps_.push_back(std::make_unique<MappedMemory>(*mem, ctx_.stream));
    in_ptrs_[i] = maps_.back()->data();
    return in_ptrs_[i];
}

void* HostCall::map_output(size_t i) const {
    if (i >= out_ptrs_.size())
        throw Error("HostCall: output " + std::to_string(i) + " of " + std::to_string(out_ptrs_.size()) +
                    " requested (node '" + ctx_.params.node + "')");
    const MemoryPtr mem = i < ctx_.outputs.size() ? ctx_.outputs[i] : nullptr;
    if (!mem) return nullptr;
    maps_.push_back(std::make_unique<MappedMemory>(*mem, ctx_.stream));
    out_ptrs_[i] = static_cast<char*>(maps_.back()->data()) + out_offsets_[i];
    return out_ptrs_[i];
}

void HostCall::set_output_shape(size_t output, const Shape& shape) {
    if (!ctx_.actual_outputs || output >= ctx_.actual_outputs->size())
        throw Error("set_output_shape: output " + std::to_string(output) +
                    " is not data-dependent (the op does not declare data_dependent_output)");
    if (shape.count() > out_shapes_.at(output).count())
        throw Error("set_output_shape: " + shape.to_string() + " is larger than the bound " +
                    out_shapes_.at(output).to_string() + " the output buffer was sized for");
    Layout l = ctx_.params.outputs.at(output).with_shape(shape);
    (*ctx_.actual_outputs)[output] = l;
}

bool dense_block_in_padding(const Layout& l, size_t* offset) {
    if (!l.is_static()) return false;
    const Shape s = l.get_shape();
    const size_t rank = s.rank();
    if ((!l.padding.lower.empty() && l.padding.lower.size() != rank) ||
        (!l.padding.upper.empty() && l.padding.upper.size() != rank))
        return false;
    auto pad = [](const std::vector<int64_t>& v, size_t d) { return v.empty() ? int64_t(0) : v[d]; };
    size_t axis = rank;
    for (size_t d = 0; d < rank; ++d) {
        if (pad(l.padding.lower, d) == 0 && pad(l.padding.upper, d) == 0) continue;
        if (axis != rank) return false;   // padded along two axes
        axis = d;
    }
    size_t off = 0;
    if (axis != rank) {
        for (size_t d = 0; d < axis; ++d)
            if (s[d] != 1) return false;
        size_t inner = 1;
        for (size_t d = axis + 1; d < rank; ++d) inner *= static_cast<size_t>(s[d]);
        off = static_cast<size_t>(pad(l.padding.lower, axis)) * inner;
    }
    if (offset) *offset = off;
    return true;
}

HostCall::~HostCall() = default;

namespace {

double load(DataType t, const void* base, size_t i) {
    switch (t) {
        case DataType::f32: return static_cast<const float*>(base)[i];
        case DataType::f16: return half_to_float(static_cast<const uint16_t*>(base)[i]);
        case DataType::i32: return static_cast<const int32_t*>(base)[i];
        case DataType::i64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
        case DataType::u8: return static_cast<const uint8_t*>(base)[i];
        case DataType::i8: return static_cast<const int8_t*>(base)[i];
        case DataType::boolean: return static_cast<const uint8_t*>(base)[i] != 0 ? 1.0 : 0.0;
        case DataType::f64: return static_cast<const double*>(base)[i];
    }
    throw Error("unsupported dtype");
}

// Integers take the value truncated toward zero (C conversion), saturated to
// the type's range (an out-of-range cast would be undefined) and NaN -> 0, the
// same rule as HostTensor::set_from_double.
template <typename T>
T to_int(double v) {
    if (std::isnan(v)) return 0;
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

void store(DataType t, void* base, size_t i, double v) {
    switch (t) {
        case DataType::f32: static_cast<float*>(base)[i] = static_cast<float>(v); return;
        case DataType::f16: static_cast<uint16_t*>(base)[i] = float_to_half(static_cast<float>(v)); return;
        case DataType::i32: static_cast<int32_t*>(base)[i] = to_int<int32_t>(v); return;
        case DataType::i64: static_cast<int64_t*>(base)[i] = to_int<int64_t>(v); return;
        case DataType::u8: static_cast<uint8_t*>(base)[i] = to_int<uint8_t>(v); return;
        case DataType::i8: static_cast<int8_t*>(base)[i] = to_int<int8_t>(v); return;
        case DataType::boolean: static_cast<uint8_t*>(base)[i] = v != 0.0 ? 1 : 0; return;
        case DataType::f64: static_cast<double*>(base)[i] = v; return;
    }
    throw Error("unsupported dtype");
}

}   // namespace

double HostCall::get(size_t input, size_t flat_index) const {
    const Layout& l = ctx_.params.inputs[input];
    // Blocked inputs (reordered weights) are read through their storage index.
    if (l.format != Format::plain) flat_index = storage_index(in_shapes_[input], l.format, flat_index);
    return load(in_type(input), in_raw(input), flat_index);
}

void HostCall::set(size_t output, size_t flat_index, double value) const {
    store(out_type(output), out_raw(output), flat_index, value);
}

std::vector<int64_t> HostCall::get_ints(size_t input) const {
    const size_t n = in_shape(input).count();
    std::vector<int64_t> out(n);
    const DataType t = in_type(input);
    const void* p = in_raw(input);
    for (size_t i = 0; i < n; ++i) {
        // i64 read directly: exact beyond 2^53.
        out[i] = t == DataType::i64 ? static_cast<const int64_t*>(p)[i] : static_cast<int64_t>(load(t, p, i));
    }
    return out;
}

void apply_fused_host_ops(ExecContext& ctx) {
    const MemoryPtr& out = ctx.outputs.at(0);
    size_t extra = 0;
    for (const FusedOpDesc& f : ctx.params.fused_ops) {
        if (!f.host_impl) throw Error("fused op '" + f.node + "' has no host impl");
        KernelParams p;
        p.node = f.node;
        p.op = f.op;
        p.attrs = f.attrs;
        p.inputs = f.inputs;
        p.outputs = {f.output};
        p.engine = ctx.params.engine;
        std::vector<MemoryPtr> ins(f.inputs.size());
        for (size_t i = 0; i < f.inputs.size(); ++i) {
            if (i == f.main_input) {
                ins[i] = out->reinterpret(f.inputs[i]);
            } else {
                if (!ctx.fused_inputs || extra >= ctx.fused_inputs->size())
                    throw Error("fused op '" + f.node + "': missing input " + std::to_string(i));
                ins[i] = (*ctx.fused_inputs)[extra++];
            }
        }
        std::vector<MemoryPtr> outs{out->reinterpret(f.output)};
        ExecContext fc{ctx.stream, p, ins, outs};
        f.host_impl->execute(fc);
    }
}

// ---- cpu reference impls ----------------------------------------------------

namespace {

class HostImpl : public Impl {
public:
    HostImpl(std::string name, HostKernel kernel, bool dynamic, const KernelParams* built_for, Format weights_format)
        : name_(std::move(name)), kernel_(std::move(kernel)), dynamic_(dynamic), weights_format_(weights_format) {
        if (built_for) {
            in_layouts_ = built_for->inputs;
            out_layouts_ = built_for->outputs;
        }
    }

    void execute(ExecContext& ctx) override {
        if (!dynamic_ && (ctx.params.inputs != in_layouts_ || ctx.params.outputs != out_layouts_)) {
            ErrorContext ec;
            ec.node = ctx.params.node;
            throw Error(name_ + " was built for " + describe(in_layouts_, out_layouts_) + " but executed with " +
                            describe(ctx.params.inputs, ctx.params.outputs),
                        ec);
        }
        {
            HostCall call(ctx);
            kernel_(call);
        }
        if (!ctx.params.fused_ops.empty()) apply_fused_host_ops(ctx);
    }
    std::string name() const override { return name_; }
    bool is_dynamic() const override { return dynamic_; }
    Format weights_format() const override { return weights_format_; }

private:
    static std::string describe(const std::vector<Layout>& in, const std::vector<Layout>& out) {
        std::string s = "(";
        for (size_t i = 0; i < in.size(); ++i) s += (i ? ", " : "") + in[i].to_string();
        s += ") -> (";
        for (size_t i = 0; i < out.size(); ++i) s += (i ? ", " : "") + out[i].to_string();
        return s + ")";
    }

    std::string name_;
    HostKernel kernel_;
    bool dynamic_;
    Format weights_format_;
    std::vector<Layout> in_layouts_, out_layouts_;
};

std::string host_validate(const KernelParams& p, const HostImplOptions& options) {
    for (size_t i = 0; i < p.inputs.size(); ++i)
        if (!p.inputs[i].padding.empty())
            return "input " + std::to_string(i) + " is padded (" + p.inputs[i].to_string() +
                   "); the host reference takes dense layouts only";
    for (size_t i = 0; i < p.outputs.size(); ++i)
        if (!p.outputs[i].padding.empty() && !dense_block_in_padding(p.outputs[i]))
            return "output " + std::to_string(i) + " is padded (" + p.outputs[i].to_string() +
                   "); the host reference takes dense outputs, or a dense block inside the padding";
    if (options.validate) return options.validate(p);
    return {};
}

ImplEntry host_entry(const std::string& op, const HostKernel& kernel, const HostImplOptions& options, bool dynamic) {
    ImplEntry e;
    e.name = "cpu_" + options.name + (dynamic ? "_dynamic" : "_static");
    e.reference = options.reference;
    e.impl_type = "cpu";
    e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
    e.dtypes = options.dtypes;
    e.formats = {Format::plain};
    e.validate = [options](const KernelParams& p) { return host_validate(p, options); };
    e.fused_ops = true;
    e.fake_align_rows = options.fake_align_rows;
    const Format wf = dynamic ? Format::plain : options.static_weights_format;
    e.weights_format = wf;
    const std::string impl_name = op + "_" + e.name;
    e.create = [impl_name, kernel, dynamic, wf](const KernelParams& p) -> std::unique_ptr<Impl> {
        return std::make_unique<HostImpl>(impl_name, kernel, dynamic, dynamic ? nullptr : &p, wf);
    };
    return e;
}

}   // namespace

HostImplOptions optimised_host_options(std::vector<DataType> dtypes,
                                       std::function<std::string(const KernelParams&)> validate) {
    HostImplOptions o;
    o.dtypes = std::move(dtypes);
    o.validate = std::move(validate);
    o.name = "opt";
    o.reference = false;
    return o;
}

void add_host_impls(ModuleRegistrar& reg, const std::string& op, HostKernel kernel, HostImplOptions options) {
    if (!kernel) throw Error("add_host_impls: op '" + op + "' has no host kernel");
    if (options.register_dynamic) reg.add_impl(op, host_entry(op, kernel, options, true));
    if (options.register_static) reg.add_impl(op, host_entry(op, kernel, options, false));
}

// ---- shape utilities ------------------------------------------------------------

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& field) {
    if (axis < -rank || axis >= rank) {
        ErrorContext ctx;
        ctx.field = field;
        throw Error(field + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                        (rank > 0 ? " (allowed " + std::to_string(-rank) + ".." + std::to_string(rank - 1) + ")"
                                  : std::string(" (a scalar has no axes)")),
                    ctx);
    }
    return axis < 0 ? axis + rank : axis;
}

PartialShape broadcast_shapes(const PartialShape& a, const PartialShape& b) {
    const size_t rank = std::max(a.rank(), b.rank());
    std::vector<Dimension> out(rank);
    auto fail = [&]() -> void { throw Error("cannot broadcast " + a.to_string() + " and " + b.to_string()); };
    for (size_t i = 0; i < rank; ++i) {
        // Align from the right; a missing leading dim acts as 1.
        const bool has_a = i + a.rank() >= rank;
        const bool has_b = i + b.rank() >= rank;
        const Dimension da = has_a ? a[i + a.rank() - rank] : Dimension(1);
        const Dimension db = has_b ? b[i + b.rank() - rank] : Dimension(1);
        if (da.is_static() && db.is_static()) {
            const int64_t x = da.get_length(), y = db.get_length();
            if (x == y || y == 1) out[i] = da;
            else if (x == 1) out[i] = db;
            else fail();
        } else if (da.is_static() || db.is_static()) {
            const Dimension& s = da.is_static() ? da : db;
            const Dimension& d = da.is_static() ? db : da;
            const int64_t n = s.get_length();
            if (n == 1) {
                out[i] = d;   // ? vs 1 -> ?
            } else {
                // ? vs N -> N, valid when the dynamic dim may be N (or 1).
                if (!d.contains(n) && !d.contains(1)) fail();
                out[i] = s;
            }
        } else {
            // Both dynamic: either may be 1, so nothing is known.
            out[i] = Dimension::dynamic();
        }
    }
    return PartialShape(std::move(out));
}

size_t mode_index(const std::string& op, const std::vector<std::string>& modes, const std::string& mode) {
    for (size_t i = 0; i < modes.size(); ++i)
        if (mode == modes[i]) return i;
    ErrorContext where;
    where.field = "mode";
    throw Error("unknown " + op + " mode '" + mode + "'", where);
}

PartialShape broadcast_shapes_bounded(const std::vector<PartialShape>& shapes) {
    PartialShape out = shapes.at(0);
    for (size_t k = 1; k < shapes.size(); ++k) {
        const PartialShape a = out;
        const PartialShape& b = shapes[k];
        out = broadcast_shapes(a, b);
        const size_t rank = out.rank();
        for (size_t d = 0; d < rank; ++d) {
            if (out[d] != Dimension::dynamic()) continue;
            const Dimension da = d + a.rank() >= rank ? a[d + a.rank() - rank] : Dimension(1);
            const Dimension db = d + b.rank() >= rank ? b[d + b.rank() - rank] : Dimension(1);
            const int64_t lo = std::min(da.min(), db.min());
            const bool bounded = da.max() != Dimension::kUnbounded && db.max() != Dimension::kUnbounded;
            if (bounded) out[d] = Dimension(lo, std::max(da.max(), db.max()));
            else if (lo > 0) out[d] = Dimension(lo, Dimension::kUnbounded);
        }
    }
    return out;
}

PartialShape broadcast_inputs(const std::vector<PartialShape>& shapes, const std::string& described,
                              const ErrorContext& where) {
    PartialShape out;
    try {
        out = broadcast_shapes_bounded(shapes);
    } catch (const Error& e) {
        throw Error("inputs " + described + " cannot be broadcast (" + e.message() + ")", where);
    }
    std::vector<int64_t> known;
    for (const Dimension& d : out) known.push_back(d.is_static() ? d.get_length() : d.min());
    size_t count = 0;
    if (!count_fits(known, &count))
        throw Error("the broadcast shape " + out.to_string() + " of " + described + " has more than 2^60 elements",
                    where);
    return out;
}

std::string validate_broadcast_rank(const KernelParams& p) {
    const size_t rank = p.outputs.at(0).shape.rank();
    if (rank > 8) return "rank " + std::to_string(rank) + " is above the kernel's 8 dims";
    return {};
}

ErrorContext node_context(const std::string& node, const std::string& op, const std::string& field) {
    ErrorContext where;
    where.node = node;
    where.op = op;
    where.field = field;
    return where;
}

BroadcastIndex::BroadcastIndex(const Shape& out, const std::vector<Shape>& inputs)
    : coord_(out.rank(), 0), index_(inputs.size(), 0) {
    const size_t rank = out.rank(), n = inputs.size();
    for (size_t d = 0; d < rank; ++d) extent_.push_back(static_cast<size_t>(out[d]));
    step_.assign(rank * n, 0);
    rewind_.assign(rank * n, 0);
    for (size_t i = 0; i < n; ++i) {
        const Shape& in = inputs[i];
        const size_t lead = rank - in.rank();
        size_t stride = 1;
        for (size_t d = in.rank(); d-- > 0;) {
            const auto extent = static_cast<size_t>(in[d]);
            if (extent != 1) {
                step_[(d + lead) * n + i] = stride;
                rewind_[(d + lead) * n + i] = stride * (extent_[d + lead] - 1);
            }
            stride *= extent;
        }
    }
}

std::vector<size_t> strides_of(const Shape& s) {
    std::vector<size_t> st(s.rank(), 1);
    for (size_t i = s.rank(); i-- > 1;) st[i - 1] = st[i] * static_cast<size_t>(s[i]);
    return st;
}

void expect_rank(const Layout& l, size_t rank, const std::string& what) {
    if (l.shape.rank() != rank)
        throw Error(what + ": expected " + std::to_string(rank) + " dims, got " + l.shape.to_string());
}

OpCost io_bytes_cost(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs) {
    OpCost c;
    for (const auto* side : {&inputs, &outputs})
        for (const Layout& l : *side) c.bytes += static_cast<double>(l.bytes());
    return c;
}

size_t axis_attr(const Attributes& attrs, size_t rank, const std::string& name) {
    return static_cast<size_t>(normalize_axis(attrs.get_int(name), static_cast<int64_t>(rank), name));
}

size_t dims_product(const Shape& s, size_t begin, size_t end) {
    size_t n = 1;
    for (size_t d = begin; d < end; ++d) n *= static_cast<size_t>(s[d]);
    return n;
}

std::string ints_to_string(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

Error attr_error(const std::string& field, const std::string& message) {
    ErrorContext ctx;
    ctx.field = field;
    return Error(message, ctx);
}

std::vector<AttrSpec> window_attrs(const WindowAttrDocs& docs) {
    std::vector<AttrSpec> a = {
        attr_ints("strides", std::vector<int64_t>{1, 1}, docs.strides),
        attr_ints("pads_begin", std::vector<int64_t>{0, 0}, docs.pads_begin),
        attr_ints("pads_end", std::vector<int64_t>{0, 0}, docs.pads_end),
        attr_ints("dilations", std::vector<int64_t>{1, 1}, "kernel element spacing (H, W)"),
    };
    if (docs.output_padding)
        a.push_back(attr_ints("output_padding", std::vector<int64_t>{0, 0}, "extra rows/columns at the end (H, W)"));
    a.push_back(attr_int("groups", 1, docs.groups));
    return a;
}

WindowAttrs read_window_attrs(const Attributes& a, const std::string& op, bool output_padding) {
    WindowAttrs c;
    c.strides = a.get_ints("strides");
    c.pads_begin = a.get_ints("pads_begin");
    c.pads_end = a.get_ints("pads_end");
    c.dilations = a.get_ints("dilations");
    if (output_padding) c.output_padding = a.get_ints("output_padding");
    c.groups = a.get_int("groups");
    std::vector<std::pair<const char*, const std::vector<int64_t>*>> lists = {
        {"strides", &c.strides}, {"pads_begin", &c.pads_begin}, {"pads_end", &c.pads_end}, {"dilations", &c.dilations}};
    if (output_padding) lists.emplace_back("output_padding", &c.output_padding);
    for (const auto& l : lists) {
        if (l.second->size() != 2)
            throw attr_error(
                l.first, op + " attribute '" + l.first + "' needs 2 values (H, W), got " + ints_to_string(*l.second));
        const bool non_negative = l.first[0] == 'p' || l.first[0] == 'o';
        for (int64_t v : *l.second)
            if (non_negative ? v < 0 : v <= 0)
                throw attr_error(l.first, op + " attribute '" + l.first + "' must be " +
                                              (non_negative ? ">= 0" : "> 0") + ", got " + ints_to_string(*l.second));
    }
    if (output_padding)
        for (size_t i = 0; i < 2; ++i)
            if (c.output_padding[i] >= std::max(c.strides[i], c.dilations[i]))
                throw attr_error("output_padding", op + " output_padding " + ints_to_string(c.output_padding) +
                                                       " must be below max(stride, dilation) per axis");
    if (c.groups < 1)
        throw attr_error("groups", op + " attribute 'groups' must be >= 1, got " + std::to_string(c.groups));
    return c;
}

}   // namespace dynrt
