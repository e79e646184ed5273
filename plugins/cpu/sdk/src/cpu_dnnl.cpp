#include "dynrt/cpu_dnnl.hpp"

#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <unordered_map>

#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

const dnnl::engine& dnnl_cpu_engine() {
    static const dnnl::engine kEngine(dnnl::engine::kind::cpu, 0);
    return kEngine;
}

dnnl::primitive_attr dnnl_attr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
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
                   std::vector<dnnl::memory::desc> descs) {
    DnnlPlan plan;
    plan.primitive = std::move(primitive);
    plan.args = std::move(args);
    plan.descs = std::move(descs);
    plan.scratchpad_bytes = scratchpad.get_size();
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

// A 64-byte aligned block that only grows.
class Scratchpad {
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

// One request's state: its stream, scratchpad and, for the layouts of its
// last run, the memory objects and argument map (rebound to each run's
// buffers by pointer alone: creating them costs more than a small matmul)
// and, for a dynamic impl without a shape-agnostic plan, the plan itself.
class DnnlState final : public ImplState {
public:
    const void* owner = nullptr;
    dnnl::stream stream{dnnl_cpu_engine()};
    Scratchpad scratchpad;
    bool bound = false;   // inputs/outputs name the layouts of plan, mems and args
    std::vector<Layout> inputs, outputs;
    DnnlPlan plan;
    std::vector<dnnl::memory> mems;
    std::unordered_map<int, dnnl::memory> args;
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
    DnnlImpl(std::string name, std::shared_ptr<const DnnlSpec> spec, const KernelParams& p, bool dynamic)
        : name_(std::move(name)), spec_(std::move(spec)), dynamic_(dynamic) {
        // A static impl of a node that has a shape-agnostic plan runs that
        // plan too: one JIT kernel for all of the node's shapes (the static
        // builds cost no code), and the same bits as the dynamic impl.
        if (spec_->shape_agnostic_plan) {
            if (std::optional<DnnlPlan> plan = spec_->shape_agnostic_plan(p)) {
                plan_ = std::move(*plan);
                agnostic_ = true;
            }
        }
        if (!dynamic) {
            if (!agnostic_) plan_ = plan_for(p);
            inputs_ = p.inputs;
            outputs_ = p.outputs;
        }
    }

    std::string name() const override { return name_; }
    bool is_dynamic() const override { return dynamic_; }
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
        if (!s->bound || p.inputs != s->inputs || p.outputs != s->outputs) prepare(p, *s);
        const DnnlPlan& plan = own_plan() ? s->plan : plan_;
        {
            RunMappings maps;
            for (size_t a = 0; a < plan.args.size(); ++a) {
                const DnnlArgRef& r = plan.args[a];
                const auto& mems = r.output ? ctx.outputs : ctx.inputs;
                if (r.index >= mems.size() || !mems[r.index])
                    throw Error(name_ + ": " + (r.output ? "output " : "input ") + std::to_string(r.index) +
                                " is missing");
                s->mems[a].set_data_handle(maps.map(*mems[r.index], ctx.stream));
            }
            run(p, plan, *s);
        }
        if (!p.fused_ops.empty()) apply_fused_host_ops(ctx);
    }

private:
    static size_t io_bytes(const KernelParams& p) {
        size_t bytes = 0;
        for (const Layout& l : p.inputs) bytes += l.bytes();
        for (const Layout& l : p.outputs) bytes += l.bytes();
        return bytes;
    }

    // oneDNN fixes a primitive's parallel split from the threads at its
    // creation: a plan for one set of shapes is made with the share its runs
    // get, or a one-thread run would still wait on a second thread.
    DnnlPlan plan_for(const KernelParams& p) const {
        const CpuThreads threads(p.engine, io_bytes(p));
        return spec_->plan(p);
    }

    void run(const KernelParams& p, const DnnlPlan& plan, DnnlState& s) const {
        const CpuThreads threads(p.engine, io_bytes(p));
        try {
            plan.primitive.execute(s.stream, s.args);
            s.stream.wait();
        } catch (const dnnl::error& e) {
            throw Error(name_ + ": oneDNN failed (" + std::string(e.what()) + ")");
        }
    }

    // Whether each request plans its own layouts (a dynamic impl without a
    // shape-agnostic plan); else plan_ serves every run.
    bool own_plan() const { return dynamic_ && !agnostic_; }

    // The state for a run at new layouts: the plan when it is the request's
    // own, then memory objects for the plan's args (their buffers are set per
    // run; the argument map holds handles to the same objects), the plan's
    // fixed args and the scratchpad.
    void prepare(const KernelParams& p, DnnlState& s) const {
        s.bound = false;
        if (own_plan()) s.plan = plan_for(p);
        const DnnlPlan& plan = own_plan() ? s.plan : plan_;
        std::vector<dnnl::memory::desc> runtime;
        if (agnostic_) runtime = spec_->runtime_descs(p);
        const std::vector<dnnl::memory::desc>& descs = runtime.empty() ? plan.descs : runtime;
        s.mems.clear();
        s.args.clear();
        for (size_t a = 0; a < plan.args.size(); ++a) {
            s.mems.emplace_back(descs[a], dnnl_cpu_engine(), static_cast<void*>(nullptr));
            s.args[plan.args[a].arg] = s.mems.back();
        }
        for (const auto& [arg, mem] : plan.fixed) s.args[arg] = mem;
        if (plan.scratchpad_bytes) {
            const dnnl::memory::desc sd({static_cast<dnnl::memory::dim>(plan.scratchpad_bytes)},
                                        dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
            s.args[DNNL_ARG_SCRATCHPAD] =
                dnnl::memory(sd, dnnl_cpu_engine(), s.scratchpad.reserve(plan.scratchpad_bytes));
        }
        s.inputs = p.inputs;
        s.outputs = p.outputs;
        s.bound = true;
    }

    std::string name_;
    std::shared_ptr<const DnnlSpec> spec_;
    bool dynamic_;
    bool agnostic_ = false;   // plan_ serves every shape (runtime dims)
    DnnlPlan plan_;
    std::vector<Layout> inputs_, outputs_;
};

ImplEntry dnnl_entry(const std::string& op, const std::shared_ptr<const DnnlSpec>& spec, bool dynamic) {
    ImplEntry e;
    e.name = "cpu_" + spec->name + (dynamic ? "_dynamic" : "_static");
    e.impl_type = "cpu";
    e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
    e.dtypes = spec->dtypes;
    e.formats = {Format::plain};
    e.fused_ops = true;
    e.validate = [spec](const KernelParams& p) {
        std::string why = dnnl_check_dense(p);
        if (why.empty() && spec->validate) why = spec->validate(p);
        return why;
    };
    const std::string impl_name = op + "_" + e.name;
    e.create = [impl_name, spec, dynamic](const KernelParams& p) -> std::unique_ptr<Impl> {
        try {
            return std::make_unique<DnnlImpl>(impl_name, spec, p, dynamic);
        } catch (const dnnl::error& err) {
            throw Error(impl_name + ": oneDNN could not create the primitive for node '" + p.node + "' (" + err.what() +
                        ")");
        }
    };
    return e;
}

}   // namespace

void add_dnnl_impls(ModuleRegistrar& reg, const std::string& op, DnnlSpec spec) {
    if (!spec.plan) throw Error("add_dnnl_impls: op '" + op + "' gives no plan");
    if (spec.shape_agnostic_plan && !spec.runtime_descs)
        throw Error("add_dnnl_impls: op '" + op + "' gives a shape-agnostic plan without runtime descriptors");
    auto shared = std::make_shared<const DnnlSpec>(std::move(spec));
    if (shared->register_dynamic) reg.add_impl(op, dnnl_entry(op, shared, true));
    if (shared->register_static) reg.add_impl(op, dnnl_entry(op, shared, false));
}

}   // namespace dynrt
