#include "dynrt/cpu_dnnl.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "cpu_transpose.hpp"
#include "dynrt/cpu_padded.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

const dnnl::engine& dnnl_cpu_engine() {
    static const dnnl::engine kEngine(dnnl::engine::kind::cpu, 0);
    return kEngine;
}

dnnl::primitive_attr dnnl_attr(const DnnlPostOps& post) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (post.applied) attr.set_post_ops(post.ops);
    return attr;
}

namespace {

dnnl::algorithm dnnl_algorithm(PostOp::Fn f) {
    using A = dnnl::algorithm;
    switch (f) {
        case PostOp::Fn::add: return A::binary_add;
        case PostOp::Fn::sub: return A::binary_sub;
        case PostOp::Fn::mul: return A::binary_mul;
        case PostOp::Fn::div: return A::binary_div;
        case PostOp::Fn::min: return A::binary_min;
        case PostOp::Fn::max: return A::binary_max;
        case PostOp::Fn::relu: return A::eltwise_relu;
        case PostOp::Fn::tanh: return A::eltwise_tanh;
        case PostOp::Fn::sigmoid: return A::eltwise_logistic;
        case PostOp::Fn::gelu_erf: return A::eltwise_gelu_erf;
        case PostOp::Fn::gelu_tanh: return A::eltwise_gelu_tanh;
        case PostOp::Fn::swish: return A::eltwise_swish;
        case PostOp::Fn::elu: return A::eltwise_elu;
        case PostOp::Fn::exp: return A::eltwise_exp;
        case PostOp::Fn::log: return A::eltwise_log;
        case PostOp::Fn::abs: return A::eltwise_abs;
        case PostOp::Fn::sqrt: return A::eltwise_sqrt;
        case PostOp::Fn::clip: return A::eltwise_clip;
        case PostOp::Fn::linear: return A::eltwise_linear;
        case PostOp::Fn::hardswish: return A::eltwise_hardswish;
    }
    return A::undef;
}

bool plain_f32(const Layout& l) {
    return l.dtype == DataType::f32 && l.format == Format::plain && l.padding.empty() && l.shape.is_static();
}

// The dims of a binary post-op's operand `y` on the primitive's output `dst`
// (the node's output has `out` dims); nullopt where oneDNN cannot read it so.
std::optional<dnnl::memory::dims> operand_dims(const Shape& y, const Shape& out, const dnnl::memory::dims& dst) {
    if (y.rank() > out.rank()) return std::nullopt;
    std::vector<int64_t> aligned(out.rank() - y.rank(), 1);
    aligned.insert(aligned.end(), y.begin(), y.end());
    dnnl::memory::dims dims;
    if (dst.size() == aligned.size()) {
        dims.assign(aligned.begin(), aligned.end());
    } else if (!dst.empty() && std::all_of(aligned.begin(), aligned.end() - (aligned.empty() ? 0 : 1),
                                           [](int64_t d) { return d == 1; })) {
        dims.assign(dst.size(), 1);   // at most the last dim: per channel of a merged output
        dims.back() = aligned.empty() ? 1 : aligned.back();
    } else if (aligned == std::vector<int64_t>(out.begin(), out.end())) {
        dims = dst;   // the output's whole shape: the merged output's, element for element
    } else {
        return std::nullopt;
    }
    for (size_t d = 0; d < dims.size(); ++d)
        if (dims[d] != 1 && (dst[d] == DNNL_RUNTIME_DIM_VAL || dims[d] != dst[d])) return std::nullopt;
    return dims;
}

}   // namespace

DnnlPostOps dnnl_post_ops(const KernelParams& p, const dnnl::memory::desc& dst) {
    DnnlPostOps post;
    if (p.fused_ops.empty()) return post;
    const dnnl::memory::dims dst_dims = dst.dims();
    size_t extra = 0;   // the fused ops' extra inputs before this one's
    for (const FusedOpDesc& f : p.fused_ops) {
        if (!f.op || !f.op->post_op || !f.attrs || !plain_f32(f.output)) return {};
        for (const Layout& l : f.inputs)
            if (!plain_f32(l)) return {};
        const std::optional<PostOp> op = f.op->post_op(*f.attrs, f.main_input, f.inputs.size());
        if (!op) return {};
        if (!op->binary()) {
            post.ops.append_eltwise(1.0f, dnnl_algorithm(op->fn), op->alpha, op->beta);
        } else {
            if (f.inputs.size() != 2) return {};
            const size_t other = 1 - f.main_input;
            const std::optional<dnnl::memory::dims> dims =
                operand_dims(f.inputs[other].get_shape(), f.output.get_shape(), dst_dims);
            if (!dims) return {};
            const dnnl::memory::desc md = dnnl_plain_desc(*dims, DataType::f32);
            const int position = post.ops.len();
            post.ops.append_binary(dnnl_algorithm(op->fn), md);
            post.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(position) | DNNL_ARG_SRC_1, false,
                                 extra + (other < f.main_input ? other : other - 1), true});
            post.descs.push_back(md);
        }
        extra += f.inputs.size() - 1;
    }
    post.applied = true;
    return post;
}

namespace {

// oneDNN's gemm-based impls (convolution through im2col, matmul with runtime
// dims) apply binary post-ops element by element in reference code: a 3x3
// convolution [1,8,32,32] -> [1,8,16,16] took 0.15 ms with a fused add and
// 0.035 ms without; a [256,64] x [64,64] matmul 37 us with a per-channel add
// and 18 us without, where the host impl's vectorised pass over the output
// costs a few microseconds. Such a plan leaves the fused ops to the host.
bool slow_binary_post_ops(const DnnlPlan& plan, const DnnlPostOps& post) {
    if (post.args.empty()) return false;
    const char* impl = nullptr;
    return dnnl_primitive_desc_query(plan.primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &impl) ==
               dnnl_success &&
           impl && std::strstr(impl, "gemm") != nullptr;
}

}   // namespace

DnnlPlan dnnl_plan_with_post_ops(const KernelParams& p, const dnnl::memory::desc& dst,
                                 const std::function<DnnlPlan(const DnnlPostOps&)>& make) {
    const DnnlPostOps post = dnnl_post_ops(p, dst);
    DnnlPlan plan;
    if (!post.applied) {
        plan = make({});
    } else {
        try {
            plan = make(post);
            if (slow_binary_post_ops(plan, post)) plan = make({});
        } catch (const dnnl::error&) {
            plan = make({});   // oneDNN has no impl with these post-ops: the host impls run them
        }
    }
    plan.post_ops_considered = true;
    plan.post_ops_expressible = post.applied;
    plan.post_op_descs = post.descs;
    return plan;
}

dnnl::memory::data_type dnnl_type(DataType t) {
    switch (t) {
        case DataType::f32: return dnnl::memory::data_type::f32;
        case DataType::f16: return dnnl::memory::data_type::f16;
        case DataType::i32: return dnnl::memory::data_type::s32;
        case DataType::i8: return dnnl::memory::data_type::s8;
        case DataType::u8: return dnnl::memory::data_type::u8;
        default: throw Error(std::string("oneDNN has no data type for ") + to_string(t));
    }
}

dnnl::memory::desc dnnl_plain_desc(const std::vector<int64_t>& dims, DataType t) {
    dnnl::memory::dims d(dims.begin(), dims.end());
    if (d.empty()) d.push_back(1);
    dnnl::memory::dims strides(d.size(), 1);
    for (size_t i = d.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * d[i + 1];
    return dnnl::memory::desc(d, dnnl_type(t), strides);
}

DnnlPlan dnnl_plan(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad, std::vector<DnnlArgRef> args,
                   std::vector<dnnl::memory::desc> descs, const DnnlPostOps& post) {
    DnnlPlan plan;
    plan.primitive = std::move(primitive);
    plan.args = std::move(args);
    plan.descs = std::move(descs);
    if (post.applied) {
        plan.args.insert(plan.args.end(), post.args.begin(), post.args.end());
        plan.descs.insert(plan.descs.end(), post.descs.begin(), post.descs.end());
        plan.fused_ops_applied = true;
    }
    plan.scratchpad_bytes = scratchpad.get_size();
    return plan;
}

namespace {

// Whether `inner` is `plain` (dense row-major f32 [N, C, S...]) with dim 1
// moved last: then st moves by transposes of C x S matrices.
void mark_channels_last(const dnnl::memory::desc& plain, const dnnl::memory::desc& inner, DnnlStaged& st) {
    const dnnl::memory::dims d = plain.dims();
    if (d.size() < 3 || plain.data_type() != dnnl::memory::data_type::f32) return;
    dnnl::memory::dims strides(d.size());
    dnnl::memory::dim step = d[1];
    strides[1] = 1;
    for (size_t i = d.size() - 1; i >= 2; --i) {
        strides[i] = step;
        step *= d[i];
    }
    strides[0] = step;
    if (inner != dnnl::memory::desc(d, dnnl::memory::data_type::f32, strides) ||
        plain != dnnl_plain_desc(std::vector<int64_t>(d.begin(), d.end()), DataType::f32))
        return;
    st.channels_last = true;
    st.batches = static_cast<size_t>(d[0]);
    st.channels = static_cast<size_t>(d[1]);
    st.spatial = d[1] ? static_cast<size_t>(step / d[1]) : 0;
}

}   // namespace

DnnlPlan dnnl_stage_args(DnnlPlan plan, const std::vector<dnnl::memory::desc>& inner, const KernelParams& p) {
    if (inner.size() > plan.args.size()) throw Error("dnnl_stage_args: more descriptors than arguments");
    for (size_t a = 0; a < inner.size(); ++a) {
        if (inner[a] == plan.descs[a]) continue;
        DnnlStaged st;
        st.arg = a;
        st.inner = inner[a];
        const DnnlArgRef& r = plan.args[a];
        st.constant = !r.output && !r.fused && p.constant_weights && p.op && r.index == p.op->weights_input;
        if (!st.constant) mark_channels_last(plan.descs[a], inner[a], st);
        const dnnl::engine& eng = dnnl_cpu_engine();
        st.reorder = plan.args[a].output
                         ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, inner[a], eng, plan.descs[a]))
                         : dnnl::reorder(dnnl::reorder::primitive_desc(eng, plan.descs[a], eng, inner[a]));
        plan.staged.push_back(std::move(st));
    }
    return plan;
}

std::string dnnl_check_dense(const KernelParams& p) {
    auto check = [](const std::vector<Layout>& ls, const char* what) -> std::string {
        for (size_t i = 0; i < ls.size(); ++i)
            if (!ls[i].padding.empty() || ls[i].format != Format::plain)
                return std::string(what) + " " + std::to_string(i) + " is " + ls[i].to_string() +
                       "; the oneDNN impls bind dense plain tensors";
        return {};
    };
    std::string why = check(p.inputs, "input");
    return why.empty() ? check(p.outputs, "output") : why;
}

namespace {

// Padded outputs (dynrt/cpu_padded.hpp). A dense block inside the padding is
// bound as the dense layout at an offset: the plans see it stripped, and a
// run whose block only moved keeps its plan and memory objects. Another
// padding (strided) is planned with runtime strides (DnnlSpec::padded_outputs):
// a run whose padding only changed keeps the plan and gets a memory object
// of its strides (DnnlSpec::runtime_descs).
bool strided_padding(const Layout& l) { return !l.padding.empty() && !dense_block_in_padding(l); }

Layout binding_layout(const Layout& l) {
    return strided_padding(l) || l.padding.empty() ? l : l.with_shape(l.get_shape());
}

// `p` as the plans see it: dense blocks' padding stripped.
KernelParams binding_params(const KernelParams& p) {
    KernelParams b = p;
    for (Layout& l : b.outputs) l = binding_layout(l);
    return b;
}

// Whether a run's output `run` binds under the plan of `bound` (a
// binding_layout): the same layout, a dense block that moved, or a strided
// padding that changed (its memory object is rebound).
bool same_binding(const Layout& run, const Layout& bound) {
    if (same_layout(run, bound)) return true;
    if (run.dtype != bound.dtype || run.format != bound.format || run.shape != bound.shape) return false;
    if (bound.padding.empty()) return !run.padding.empty() && dense_block_in_padding(run);
    return strided_padding(run) && strided_padding(bound);
}

bool same_bindings(const std::vector<Layout>& run, const std::vector<Layout>& bound) {
    if (run.size() != bound.size()) return false;
    for (size_t i = 0; i < run.size(); ++i)
        if (!same_binding(run[i], bound[i])) return false;
    return true;
}

// Bytes from a padded output's buffer start to its first logical element.
size_t first_element_bytes(const Layout& l) {
    if (l.padding.empty()) return 0;
    size_t offset = 0;
    if (!dense_block_in_padding(l, &offset)) offset = padded_strides(l).first;
    return offset * byte_size(l.dtype);
}

// Inputs dense; outputs plain, padded only as the spec's plans bind them.
std::string check_bindable(const KernelParams& p, bool padded_outputs) {
    for (size_t i = 0; i < p.inputs.size(); ++i)
        if (!p.inputs[i].padding.empty() || p.inputs[i].format != Format::plain)
            return "input " + std::to_string(i) + " is " + p.inputs[i].to_string() +
                   "; the oneDNN impls bind dense plain inputs";
    for (size_t i = 0; i < p.outputs.size(); ++i) {
        const Layout& l = p.outputs[i];
        if (l.format != Format::plain)
            return "output " + std::to_string(i) + " is " + l.to_string() + "; the oneDNN impls bind plain outputs";
        if (l.padding.empty()) continue;
        if (!p.fused_ops.empty())
            return "output " + std::to_string(i) + " is padded (" + l.to_string() +
                   ") and has fused ops, which run on dense outputs";
        if (!l.is_static()) return "output " + std::to_string(i) + " is padded with dynamic dims";
        const size_t rank = l.shape.rank();
        if ((!l.padding.lower.empty() && l.padding.lower.size() != rank) ||
            (!l.padding.upper.empty() && l.padding.upper.size() != rank))
            return "output " + std::to_string(i) + " has a padding of another rank (" + l.to_string() + ")";
        if (strided_padding(l) && !(padded_outputs && i == 0))
            return "output " + std::to_string(i) + " is padded (" + l.to_string() +
                   ") and not one dense block; this op's plans bind no strided output";
    }
    return {};
}

}   // namespace

namespace {

// A 64-byte aligned block that only grows.
class GrowingBlock {
public:
    void* reserve(size_t bytes) {
        if (bytes > size_) {
            const size_t rounded = (bytes + 63) / 64 * 64;
            void* p = std::aligned_alloc(64, rounded);
            if (!p) throw std::bad_alloc();
            data_.reset(p);
            size_ = rounded;
        }
        return data_.get();
    }

private:
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<void, Free> data_;
    size_t size_ = 0;
};

// The memory a run works in besides its buffers: the copies of its staged
// arguments (DnnlPlan::staged, but constant weights) and the primitive's
// scratchpad. They live only while one impl runs (reorders in, primitive,
// reorders out), so every oneDNN impl that runs on a thread shares one block
// of that thread's: a run at new layouts, or a request's switch from the
// dynamic impl to a static one, finds memory already touched, where copies
// owned by each impl's state were allocated, and first written (page
// faults), on every such change (1-2 ms of a 72 px run of the 64-channel
// convolution workload). The block only grows: a thread keeps the most its
// runs needed at once.
GrowingBlock& run_block() {
    thread_local GrowingBlock block;
    return block;
}

// oneDNN generates its gemm kernels (matmul with runtime dims, im2col
// convolution) once per process, on the first gemm it executes: 30 ms on
// the corpus's KV decode, which fell on whichever run first reached such a
// primitive (the second shape there). The first oneDNN impl created pays it.
void warm_up_gemm() {
    static std::once_flag once;
    std::call_once(once, [] {
        constexpr dnnl_dim_t kSize = 64;   // large enough for the jit path (small products take another)
        const std::vector<float> a(kSize * kSize, 0.0f), b(kSize * kSize, 0.0f);
        std::vector<float> c(kSize * kSize);
        (void)dnnl_sgemm('N', 'N', kSize, kSize, kSize, 1.0f, a.data(), kSize, b.data(), kSize, 0.0f, c.data(), kSize);
    });
}

// Copies of constant weights in a primitive's layout (DnnlStaged::constant),
// made once per weights buffer and layout and shared by every request of
// the op's oneDNN impls, dynamic and static. A buffer is held weakly: its
// copy goes once the network that owns it is gone.
class ConstantCopies {
public:
    // The copy of `weights` (mapped as `plain`, the plan's descriptor of it)
    // in st.inner, reordered now if there is none yet.
    dnnl::memory get(const Memory& weights, dnnl::memory& plain, const DnnlStaged& st, dnnl::stream& stream,
                     const std::string& what) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = entries_.begin(); it != entries_.end();) {
            if (it->buffer.expired()) {
                it = entries_.erase(it);
                continue;
            }
            if (same_owner(it->buffer, weights.buffer()) && it->offset == weights.offset() &&
                it->copy.get_desc() == st.inner)
                return it->copy;
            ++it;
        }
        dnnl::memory copy;
        try {
            copy = dnnl::memory(st.inner, dnnl_cpu_engine());
        } catch (const dnnl::error& e) {
            throw Error(what + ": cannot allocate " + std::to_string(st.inner.get_size()) +
                        " bytes for oneDNN's layout of the constant weights " + weights.layout().to_string() + " (" +
                        e.what() + ")");
        }
        st.reorder.execute(stream, plain, copy);
        stream.wait();
        entries_.push_back({weights.buffer(), weights.offset(), copy});
        return copy;
    }

    static bool same_owner(const std::weak_ptr<Buffer>& a, const std::shared_ptr<Buffer>& b) {
        return !a.owner_before(b) && !b.owner_before(a);
    }

private:
    struct Entry {
        std::weak_ptr<Buffer> buffer;
        size_t offset = 0;
        dnnl::memory copy;
    };
    std::mutex mutex_;
    std::vector<Entry> entries_;
};

// One request's state: its stream, scratchpad and, for the layouts of its
// last run, the memory objects and argument list (rebound to each run's
// buffers by pointer alone: creating them costs more than a small matmul)
// and, for a dynamic impl without a shape-agnostic plan, the plan itself.
class DnnlState final : public ImplState {
public:
    const void* owner = nullptr;
    dnnl::stream stream{dnnl_cpu_engine()};
    bool bound = false;   // inputs/outputs name the layouts of plan, mems and args
    std::vector<Layout> inputs, outputs;
    size_t io_bytes = 0;                // their bytes: the run's share of the engine's threads
    std::vector<Layout> fused_inputs;   // every fused op's inputs, in order
    bool own = false;                   // runs `plan`, else the impl's
    bool own_agnostic = false;          // `plan` is shape-agnostic (runtime descriptors)
    DnnlPlan plan;
    std::vector<dnnl::memory> mems;
    // Each DnnlPlan::staged arg's copy, and the scratchpad: pointed at the
    // thread's run block (run_block) before each run, at the shared copy for
    // constant weights.
    std::vector<dnnl::memory> staged;
    dnnl::memory scratchpad_memory;
    // The primitive's arguments as oneDNN's C API takes them: the handles of
    // mems, staged, the plan's fixed args and the scratchpad (the C++ API
    // turns its argument map into such a vector, allocating, on every call).
    std::vector<dnnl_exec_arg_t> exec_args;
    // Outputs with a strided padding: (index into mems and the plan's args,
    // position in exec_args); their memory objects follow each run's strides.
    std::vector<std::pair<size_t, size_t>> strided;
    // Per DnnlPlan::staged arg that is constant: the weights buffer and offset
    // its staged memory reads the shared copy of (ConstantCopies), and that copy.
    struct ConstantBinding {
        std::weak_ptr<Buffer> buffer;
        size_t offset = 0;
        dnnl::memory copy;
    };
    std::vector<ConstantBinding> constants;
};

// The host mappings of one run's buffers (no heap allocation per run).
class RunMappings {
public:
    static constexpr size_t kMax = 16;
    void* map(const Memory& mem, Stream& stream) {
        if (used_ == kMax) throw Error("a oneDNN plan binds more than 16 buffers");
        return maps_[used_++].emplace(mem, stream).data();
    }

private:
    std::optional<MappedMemory> maps_[kMax];
    size_t used_ = 0;
};

class DnnlImpl final : public Impl {
public:
    DnnlImpl(std::string name, std::shared_ptr<const DnnlSpec> spec, std::shared_ptr<ConstantCopies> constants,
             const KernelParams& p, bool dynamic)
        : name_(std::move(name)), spec_(std::move(spec)), constants_(std::move(constants)), dynamic_(dynamic) {
        warm_up_gemm();
        const KernelParams bp = binding_params(p);
        // A static impl of a node that has a shape-agnostic plan runs that
        // plan too: one JIT kernel for all of the node's shapes (the static
        // builds cost no code), and the same bits as the dynamic impl.
        if (spec_->shape_agnostic_plan) {
            if (std::optional<DnnlPlan> plan = agnostic_plan_for(bp)) {
                plan_ = std::move(*plan);
                agnostic_ = true;
            }
        }
        if (agnostic_ &&
            std::any_of(plan_.staged.begin(), plan_.staged.end(), [](const DnnlStaged& st) { return !st.constant; }))
            throw Error(name_ +
                        ": a shape-agnostic oneDNN plan cannot stage arguments but constant weights (their layouts "
                        "change per run)");
        if (!dynamic) {
            // A shape the shape-agnostic plan cannot serve (see prepare()).
            if (agnostic_ && !agnostic_serves(bp)) agnostic_ = false;
            if (!agnostic_) plan_ = plan_for(bp);
            inputs_ = p.inputs;
            outputs_ = p.outputs;
        }
    }

    std::string name() const override { return name_; }
    bool is_dynamic() const override { return dynamic_; }
    std::string info() const {
        if (!plan_.primitive) return {};
        const char* impl = nullptr;
        std::string out;
        if (dnnl_primitive_desc_query(plan_.primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &impl) ==
                dnnl_success &&
            impl)
            out = impl;
        if (!plan_.staged.empty()) out += " staged";
        for (const DnnlStaged& st : plan_.staged) {
            const int arg = plan_.args[st.arg].arg;
            out += " " + std::string(arg == DNNL_ARG_SRC       ? "src"
                                     : arg == DNNL_ARG_WEIGHTS ? "weights"
                                     : arg == DNNL_ARG_DST     ? "dst"
                                                               : std::to_string(arg));
            if (st.constant) out += "(once)";
            if (st.channels_last) out += "(transposed)";
        }
        return out;
    }
    // A static impl would run the same shape-agnostic plan.
    bool static_builds_redundant() const override { return dynamic_ && agnostic_; }
    std::unique_ptr<ImplState> create_state() const override {
        auto s = std::make_unique<DnnlState>();
        s->owner = this;
        return s;
    }

    void execute(ExecContext& ctx) override {
        const KernelParams& p = ctx.params;
        std::unique_ptr<ImplState> local;
        auto* s = static_cast<DnnlState*>(ctx.state);
        if (!s) {
            local = create_state();
            s = static_cast<DnnlState*>(local.get());
        } else if (s->owner != this) {
            throw Error("cpu impl '" + name_ + "' executed with another impl's state");
        }
        if (!dynamic_ && (p.inputs != inputs_ || p.outputs != outputs_))
            throw Error(name_ + " was built for other layouts than it was executed with");
        if (!s->bound || !same_layouts(p.inputs, s->inputs) || !same_bindings(p.outputs, s->outputs) ||
            fused_layouts_changed(p, *s))
            prepare(p, *s);
        else if (!s->strided.empty()) rebind_strided(p, *s);
        const DnnlPlan& plan = s->own ? s->plan : plan_;
        {
            RunMappings maps;
            for (size_t a = 0; a < plan.args.size(); ++a) {
                const DnnlArgRef& r = plan.args[a];
                char* data = static_cast<char*>(maps.map(buffer(ctx, r), ctx.stream));
                // A padded output is bound at its first element.
                if (r.output && !r.fused) data += first_element_bytes(p.outputs.at(r.index));
                s->mems[a].set_data_handle(data);
            }
            run(ctx, plan, *s);
        }
        if (!p.fused_ops.empty() && !plan.fused_ops_applied) apply_fused_host_ops(ctx);
    }

private:
    // The bytes a run moves (a padded output's elements, not its buffer's).
    static size_t io_bytes(const KernelParams& p) {
        size_t bytes = 0;
        for (const Layout& l : p.inputs) bytes += l.bytes();
        for (const Layout& l : p.outputs) bytes += l.padding.empty() ? l.bytes() : l.count() * byte_size(l.dtype);
        return bytes;
    }

    // oneDNN fixes a primitive's parallel split from the threads at its
    // creation: a plan for one set of shapes is made with the threads a run
    // of that size gets alone (a one-thread run would still wait on a second
    // thread; a plan made on a build thread while a request runs would split
    // for one). Requests running at once then each run the plan's split.
    DnnlPlan plan_for(const KernelParams& p) const {
        const CpuThreads threads(p.engine, io_bytes(p), CpuThreads::Share::alone);
        return spec_->plan(p);
    }
    // A shape-agnostic plan binds dense runtime descriptors: never a strided output.
    bool agnostic_serves(const KernelParams& p) const {
        for (const Layout& l : p.outputs)
            if (strided_padding(l)) return false;
        return !spec_->shape_agnostic_serves || spec_->shape_agnostic_serves(p);
    }
    // A shape-agnostic plan serves runs of any size: made with the engine's
    // whole budget (one thread under --threads 1, not the process's cores).
    std::optional<DnnlPlan> agnostic_plan_for(const KernelParams& p) const {
        const CpuThreads threads(p.engine, SIZE_MAX, CpuThreads::Share::alone);
        return spec_->shape_agnostic_plan(p);
    }

    static size_t round_up_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

    // Points the staged copies and the scratchpad at this thread's run block:
    // the copies one after another, then the scratchpad, each 64-byte aligned.
    void bind_run_block(const ExecContext& ctx, const DnnlPlan& plan, DnnlState& s) const {
        size_t bytes = 0;
        for (const DnnlStaged& st : plan.staged)
            if (!st.constant) bytes += round_up_64(st.inner.get_size());
        const size_t scratchpad_at = bytes;
        if (s.scratchpad_memory) bytes += round_up_64(plan.scratchpad_bytes);
        if (!bytes) return;
        char* base = nullptr;
        try {
            base = static_cast<char*>(run_block().reserve(bytes));
        } catch (const std::bad_alloc&) {
            std::string what;
            for (const DnnlStaged& st : plan.staged) {
                if (st.constant) continue;
                const DnnlArgRef& r = plan.args[st.arg];
                const Layout& l = r.output ? ctx.params.outputs.at(r.index) : ctx.params.inputs.at(r.index);
                what += std::string(what.empty() ? "" : ", ") + (r.output ? "output " : "input ") +
                        std::to_string(r.index) + " " + l.to_string();
            }
            throw Error(name_ + " of node '" + ctx.params.node + "': cannot allocate " + std::to_string(bytes) +
                        " bytes for oneDNN's layouts of " + (what.empty() ? "nothing" : what) + " and its scratchpad");
        }
        size_t offset = 0;
        for (size_t k = 0; k < plan.staged.size(); ++k) {
            if (plan.staged[k].constant) continue;
            s.staged[k].set_data_handle(base + offset);
            offset += round_up_64(plan.staged[k].inner.get_size());
        }
        if (s.scratchpad_memory) s.scratchpad_memory.set_data_handle(base + scratchpad_at);
    }

    void run(const ExecContext& ctx, const DnnlPlan& plan, DnnlState& s) const {
        const CpuThreads threads(ctx.params.engine, s.io_bytes);
        bind_run_block(ctx, plan, s);
        try {
            for (size_t k = 0; k < plan.staged.size(); ++k) {
                const DnnlStaged& st = plan.staged[k];
                if (st.constant) bind_constant(ctx, plan, k, s);
                else if (!plan.args[st.arg].output) stage(threads, st, s.stream, s.mems[st.arg], s.staged[k], false);
            }
            execute(plan.primitive, s.stream, s.exec_args);
            for (size_t k = 0; k < plan.staged.size(); ++k) {
                const DnnlStaged& st = plan.staged[k];
                if (plan.args[st.arg].output) stage(threads, st, s.stream, s.staged[k], s.mems[st.arg], true);
            }
            s.stream.wait();
        } catch (const dnnl::error& e) {
            throw Error(name_ + ": oneDNN failed (" + std::string(e.what()) + ")");
        }
    }

    static void execute(const dnnl::primitive& primitive, dnnl::stream& stream, const dnnl_exec_arg_t* args,
                        size_t count) {
        const dnnl_status_t status =
            dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(count), args);
        if (status != dnnl_success) throw dnnl::error(status, "could not execute a primitive");
    }
    static void execute(const dnnl::primitive& primitive, dnnl::stream& stream,
                        const std::vector<dnnl_exec_arg_t>& args) {
        execute(primitive, stream, args.data(), args.size());
    }
    // A staged argument into the primitive's layout (an input) or out of it
    // (`output`): the SDK's transposes for channels-last, else the reorder.
    static void stage(const CpuThreads& threads, const DnnlStaged& st, dnnl::stream& stream, const dnnl::memory& from,
                      const dnnl::memory& to, bool output) {
        if (!st.channels_last) return reorder(st.reorder, stream, from, to);
        const auto* x = static_cast<const float*>(from.get_data_handle());
        auto* y = static_cast<float*>(to.get_data_handle());
        if (output) transpose_f32(threads, x, y, st.batches, st.spatial, st.channels);
        else transpose_f32(threads, x, y, st.batches, st.channels, st.spatial);
    }
    static void reorder(const dnnl::reorder& r, dnnl::stream& stream, const dnnl::memory& from,
                        const dnnl::memory& to) {
        const std::array<dnnl_exec_arg_t, 2> args{{{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}}};
        execute(r, stream, args.data(), args.size());
    }

    // Staged arg k reads the shared copy of the constant weights bound to it
    // this run: kept from the last run while the same buffer is bound.
    void bind_constant(const ExecContext& ctx, const DnnlPlan& plan, size_t k, DnnlState& s) const {
        const DnnlStaged& st = plan.staged[k];
        const Memory& w = buffer(ctx, plan.args[st.arg]);
        DnnlState::ConstantBinding& b = s.constants[k];
        if (b.copy && ConstantCopies::same_owner(b.buffer, w.buffer()) && b.offset == w.offset()) return;
        b.copy = constants_->get(w, s.mems[st.arg], st, s.stream, name_ + " of node '" + ctx.params.node + "'");
        b.buffer = w.buffer();
        b.offset = w.offset();
        s.staged[k].set_data_handle(b.copy.get_data_handle());
    }

    const Memory& buffer(const ExecContext& ctx, const DnnlArgRef& r) const {
        const std::vector<MemoryPtr>* mems = r.output ? &ctx.outputs : &ctx.inputs;
        if (r.fused) mems = ctx.fused_inputs;
        if (!mems || r.index >= mems->size() || !(*mems)[r.index])
            throw Error(name_ + ": " +
                        (r.fused    ? "fused input "
                         : r.output ? "output "
                                    : "input ") +
                        std::to_string(r.index) + " is missing");
        return *(*mems)[r.index];
    }

    // Post-op operands are bound by layout too: a shape-agnostic plan's
    // operands may change while the node's own layouts stay.
    static bool fused_layouts_changed(const KernelParams& p, const DnnlState& s) {
        if (p.fused_ops.empty()) return false;
        size_t k = 0;
        for (const FusedOpDesc& f : p.fused_ops)
            for (const Layout& l : f.inputs)
                if (k >= s.fused_inputs.size() || s.fused_inputs[k++] != l) return true;
        return k != s.fused_inputs.size();
    }

    // The state for a run at new layouts: the plan when it is the request's
    // own, then memory objects for the plan's args (their buffers are set per
    // run; the argument list holds handles to the same objects), the plan's
    // fixed args and the scratchpad. A request plans its own layouts in a
    // dynamic impl without a shape-agnostic plan, and for a run the
    // shape-agnostic plan cannot serve (DnnlSpec::shape_agnostic_serves: a
    // batch dim it took as a runtime dim of both operands broadcasts); it
    // plans its own shape-agnostic plan where this run's post-ops differ from
    // the impl's (an operand that broadcast at the first run and no longer
    // does, or the other way round). Which plan a run gets thus depends on
    // its layouts alone, never on the runs before it or on which impl serves
    // it: the same bits for the same inputs.
    void prepare(const KernelParams& run, DnnlState& s) const {
        const KernelParams p = binding_params(run);
        s.bound = false;
        s.own = dynamic_ && !agnostic_;
        s.own_agnostic = false;
        if (agnostic_ && !agnostic_serves(p)) {
            s.own = true;
        } else if (agnostic_ && !same_post_ops(p)) {
            std::optional<DnnlPlan> own = agnostic_plan_for(p);
            if (!own) throw Error(name_ + ": no shape-agnostic plan for " + p.inputs.at(0).to_string());
            s.plan = std::move(*own);
            s.own = s.own_agnostic = true;
        }
        if (s.own && !s.own_agnostic) s.plan = plan_for(p);
        const DnnlPlan& plan = s.own ? s.plan : plan_;
        std::vector<dnnl::memory::desc> descs = plan.descs;
        if (agnostic_ && (!s.own || s.own_agnostic)) {
            const std::vector<dnnl::memory::desc> runtime = spec_->runtime_descs(p);
            std::copy(runtime.begin(), runtime.end(), descs.begin());
        }
        // A strided output's plan takes its strides at run time: its memory
        // object has this run's.
        std::vector<size_t> strided;
        for (size_t a = 0; a < plan.args.size(); ++a)
            if (plan.args[a].output && !plan.args[a].fused && strided_padding(p.outputs.at(plan.args[a].index)))
                strided.push_back(a);
        if (!strided.empty()) {
            const std::vector<dnnl::memory::desc> runtime = spec_->runtime_descs(p);
            for (size_t a : strided) descs[a] = runtime.at(a);
        }
        s.mems.clear();
        std::map<int, dnnl_memory_t> args;   // a staged arg's copy replaces its plain memory
        for (size_t a = 0; a < plan.args.size(); ++a) {
            s.mems.emplace_back(descs[a], dnnl_cpu_engine(), static_cast<void*>(nullptr));
            args[plan.args[a].arg] = s.mems.back().get();
        }
        for (const auto& [arg, mem] : plan.fixed) args[arg] = mem.get();
        s.staged.clear();
        s.constants.assign(plan.staged.size(), {});
        for (const DnnlStaged& st : plan.staged) {
            s.staged.emplace_back(st.inner, dnnl_cpu_engine(), static_cast<void*>(nullptr));
            args[plan.args[st.arg].arg] = s.staged.back().get();
        }
        s.scratchpad_memory = {};
        if (plan.scratchpad_bytes) {
            const dnnl::memory::desc sd({static_cast<dnnl::memory::dim>(plan.scratchpad_bytes)},
                                        dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
            s.scratchpad_memory = dnnl::memory(sd, dnnl_cpu_engine(), static_cast<void*>(nullptr));
            args[DNNL_ARG_SCRATCHPAD] = s.scratchpad_memory.get();
        }
        s.exec_args.clear();
        for (const auto& [arg, mem] : args) s.exec_args.push_back({arg, mem});
        s.strided.clear();
        for (size_t a : strided)
            for (size_t pos = 0; pos < s.exec_args.size(); ++pos)
                if (s.exec_args[pos].arg == plan.args[a].arg) s.strided.emplace_back(a, pos);
        s.inputs = p.inputs;
        s.outputs = p.outputs;
        s.io_bytes = io_bytes(p);
        s.fused_inputs.clear();
        for (const FusedOpDesc& f : p.fused_ops)
            s.fused_inputs.insert(s.fused_inputs.end(), f.inputs.begin(), f.inputs.end());
        s.bound = true;
    }

    // Memory objects of this run's strides for the strided outputs whose
    // padding changed since the last run (the concat grew): the plan stays.
    void rebind_strided(const KernelParams& run, DnnlState& s) const {
        const DnnlPlan& plan = s.own ? s.plan : plan_;
        std::vector<dnnl::memory::desc> descs;
        for (const auto& [a, pos] : s.strided) {
            const size_t i = plan.args[a].index;
            if (same_layout(run.outputs.at(i), s.outputs.at(i))) continue;
            if (descs.empty()) descs = spec_->runtime_descs(binding_params(run));
            s.mems[a] = dnnl::memory(descs.at(a), dnnl_cpu_engine(), static_cast<void*>(nullptr));
            s.exec_args[pos].memory = s.mems[a].get();
            s.outputs[i] = run.outputs[i];
        }
    }

    // Whether the fused ops of this run ask the shape-agnostic plan's
    // post-ops (the same operand descriptors, or none expressible where it
    // had none): then the plan made for them would be plan_.
    bool same_post_ops(const KernelParams& p) const {
        if (!plan_.post_ops_considered) return true;
        for (size_t a = 0; a < plan_.args.size(); ++a) {
            if (plan_.args[a].arg != DNNL_ARG_DST || plan_.args[a].fused) continue;
            const DnnlPostOps post = dnnl_post_ops(p, plan_.descs[a]);
            if (post.applied != plan_.post_ops_expressible || post.descs.size() != plan_.post_op_descs.size())
                return false;
            for (size_t i = 0; i < post.descs.size(); ++i)
                if (post.descs[i] != plan_.post_op_descs[i]) return false;
            return true;
        }
        return false;
    }

    std::string name_;
    std::shared_ptr<const DnnlSpec> spec_;
    // Shared by the op's dynamic impl and every static impl: a request that
    // moves from one to another at a shape finds the weights in the layout
    // already (a shape-agnostic plan stages none).
    std::shared_ptr<ConstantCopies> constants_;
    bool dynamic_;
    bool agnostic_ = false;   // plan_ serves every shape (runtime dims)
    DnnlPlan plan_;
    std::vector<Layout> inputs_, outputs_;
};

ImplEntry dnnl_entry(const std::string& op, const std::shared_ptr<const DnnlSpec>& spec,
                     const std::shared_ptr<ConstantCopies>& constants, bool dynamic) {
    ImplEntry e;
    e.name = "cpu_" + spec->name + (dynamic ? "_dynamic" : "_static");
    e.impl_type = "cpu";
    e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
    e.dtypes = spec->dtypes;
    e.formats = {Format::plain};
    e.fused_ops = true;
    e.validate = [spec](const KernelParams& p) {
        std::string why = check_bindable(p, spec->padded_outputs);
        if (why.empty() && spec->validate) why = spec->validate(p);
        return why;
    };
    const std::string impl_name = op + "_" + e.name;
    e.create = [impl_name, spec, constants, dynamic](const KernelParams& p) -> std::unique_ptr<Impl> {
        try {
            return std::make_unique<DnnlImpl>(impl_name, spec, constants, p, dynamic);
        } catch (const dnnl::error& err) {
            throw Error(impl_name + ": oneDNN could not create the primitive for node '" + p.node + "' (" + err.what() +
                        ")");
        }
    };
    return e;
}

}   // namespace

std::string dnnl_impl_info(const Impl& impl) {
    const auto* d = dynamic_cast<const DnnlImpl*>(&impl);
    return d ? d->info() : std::string();
}

void add_dnnl_impls(ModuleRegistrar& reg, const std::string& op, DnnlSpec spec) {
    if (!spec.plan) throw Error("add_dnnl_impls: op '" + op + "' gives no plan");
    if (spec.shape_agnostic_plan && !spec.runtime_descs)
        throw Error("add_dnnl_impls: op '" + op + "' gives a shape-agnostic plan without runtime descriptors");
    if (spec.padded_outputs && !spec.runtime_descs)
        throw Error("add_dnnl_impls: op '" + op + "' takes strided outputs without runtime descriptors");
    auto shared = std::make_shared<const DnnlSpec>(std::move(spec));
    auto constants = std::make_shared<ConstantCopies>();
    if (shared->register_dynamic) reg.add_impl(op, dnnl_entry(op, shared, constants, true));
    if (shared->register_static) reg.add_impl(op, dnnl_entry(op, shared, constants, false));
}

}   // namespace dynrt
