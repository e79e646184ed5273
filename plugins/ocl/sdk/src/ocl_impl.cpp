// Generic OpenCL impls of one or several kernels (see ocl_impl.hpp).
#include "dynrt/ocl_impl.hpp"

#include <algorithm>
#include <memory>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/op_registry.hpp"
#include "ocl_common_cl.hpp"

namespace dynrt {

namespace {

Layout all_dynamic(const Layout& l) { return Layout(PartialShape::dynamic_of_rank(l.shape.rank()), l.dtype, l.format); }

// Everything one request derives from a run of one impl and reuses on the
// next: the impl itself stays read-only after construction.
class OclImplState final : public ImplState {
public:
    const void* owner = nullptr;   // the impl that made it (catches a state handed to another impl)
    bool have_last = false;
    std::vector<Layout> last_inputs, last_outputs;
    std::vector<OclStageRun> runs;   // one per stage
    OclShapeInfo shape_info;
    std::vector<int32_t> packed;
    std::vector<OclArg> args;   // rebuilt in place for every launch
    std::vector<size_t> scratch_sizes;
    std::vector<MemoryPtr> own_scratch;   // when the caller passes no scratch
    // Report buffer (data-dependent outputs, checks of data): the buffer, its
    // zeros and what was read back.
    MemoryPtr report;
    std::vector<int32_t> report_zeros, report_values;
};

// The spec with its full source (ocl_common.cl + the op's), shared by every
// impl created from one registration.
struct BuiltSpec {
    OclMultiKernelSpec spec;
    std::string source;
};

class OclMultiImpl final : public Impl {
public:
    OclMultiImpl(const KernelParams& p, std::shared_ptr<const BuiltSpec> built, bool dynamic, Format wf)
        : built_(std::move(built)), dynamic_(dynamic), op_(p.op ? p.op->name : std::string("?")), weights_format_(wf) {
        const OclMultiKernelSpec& spec = built_->spec;
        device_ = OclDevice::from(*p.engine);
        if (!device_) throw Error("ocl impl created on a non-ocl engine");
        JitDefines defs = shape_agnostic_defines(dynamic);
        std::vector<Layout> ins = p.inputs, outs = p.outputs;
        // Other inputs of fused post-ops: shape_info slots after the inputs.
        std::vector<Layout> extras = fused_extra_layouts(p);
        fused_ = !p.fused_ops.empty();
        if (dynamic) {
            for (size_t i = 0; i < ins.size(); ++i)
                ins[i] = spec.dynamic_input ? spec.dynamic_input(p, i) : all_dynamic(ins[i]);
            for (auto& l : outs) l = all_dynamic(l);
            for (auto& l : extras) l = all_dynamic(l);
        }
        std::vector<Layout> planned = ins;
        planned.insert(planned.end(), extras.begin(), extras.end());
        plan_ = plan_shape_info(planned, outs);
        for (size_t i = 0; i < ins.size(); ++i) {
            auto d = tensor_jit_defines("INPUT" + std::to_string(i), ins[i], plan_.input_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        for (size_t i = 0; i < outs.size(); ++i) {
            auto d = tensor_jit_defines("OUTPUT" + std::to_string(i), outs[i], plan_.output_slots[i]);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        defs.emplace_back("INPUTS_COUNT", std::to_string(ins.size()));
        if (spec.fused_ops) {
            const std::vector<int> slots(plan_.input_slots.begin() + static_cast<std::ptrdiff_t>(ins.size()),
                                         plan_.input_slots.end());
            auto d = fused_ops_defines(p, extras, slots);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        if (spec.defines) {
            auto d = spec.defines(p, dynamic);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        stages_ = spec.stages(p, dynamic);
        if (stages_.empty()) throw Error("ocl impl of '" + op_ + "' has no kernel");
        check_report_spec(spec);
        // Every entry point comes from one program: the first build compiles
        // it, the others hit the device's program cache.
        for (const OclStage& s : stages_) {
            kernels_.push_back(device_->build_kernel(built_->source, s.kernel_name, defs));
            for (const OclArgRef& a : s.args)
                if (a.kind == OclArgRef::Kind::scratch) scratch_count_ = std::max(scratch_count_, a.index + 1);
        }
        if (scratch_count_ && !spec.scratch_bytes)
            throw Error("ocl impl of '" + op_ + "' binds scratch buffers but declares no scratch_bytes");
        if (!dynamic) {
            bound_inputs_ = p.inputs;
            bound_outputs_ = p.outputs;
        }
    }

    std::unique_ptr<ImplState> create_state() const override { return make_state(); }

    std::vector<size_t> scratch_bytes(const KernelParams& p) const override {
        return built_->spec.scratch_bytes ? built_->spec.scratch_bytes(p) : std::vector<size_t>{};
    }

    // Per-run host work is kept to comparisons: when the layouts equal the
    // state's last run (the common case, shape unchanged), the dispatch, the
    // scalars and shape_info of that run stand, and each stage's argument
    // list is rebuilt in the state's vector (no allocation). The device's
    // launch() then skips the clSetKernelArg calls whose values did not change.
    void execute(ExecContext& ctx) override {
        std::unique_ptr<OclImplState> local;
        OclImplState* s = static_cast<OclImplState*>(ctx.state);
        if (!s) {
            local = make_state();   // the caller keeps no state: correct, slower
            s = local.get();
        } else if (s->owner != this) {
            throw Error("ocl impl '" + name() + "' executed with another impl's state");
        }
        const KernelParams& p = ctx.params;
        // Fused ops' other inputs may change shape alone: no shortcut then.
        const bool same = s->have_last && !fused_ && !s->shape_info.needs_region(ctx.stream) &&
                          same_layouts(p.inputs, s->last_inputs) && same_layouts(p.outputs, s->last_outputs);
        if (!same) update(ctx, *s);

        const std::vector<MemoryPtr>* scratch = scratch_count_ ? scratch_for(ctx, *s) : nullptr;
        if (reports_) reset_report(ctx, *s);
        for (size_t k = 0; k < stages_.size(); ++k) {
            const OclStageRun& run = s->runs[k];
            if (dispatch_empty(run.dispatch)) continue;   // nothing to do for this shape
            std::vector<OclArg>& args = s->args;
            args.clear();
            s->shape_info.push_args(args);
            for (const OclArgRef& a : stages_[k].args) push_args(a, ctx, *s, run, scratch, args);
            device_->launch(ctx.stream, *kernels_[k], args, run.dispatch);
        }
        if (reports_) read_report(ctx, *s);
    }

    std::string name() const override { return op_ + (dynamic_ ? "_ocl_dynamic" : "_ocl_static"); }
    bool is_dynamic() const override { return dynamic_; }
    Format weights_format() const override { return weights_format_; }

private:
    std::unique_ptr<OclImplState> make_state() const {
        auto s = std::make_unique<OclImplState>();
        s->owner = this;
        s->runs.resize(stages_.size());
        s->report_zeros.assign(built_->spec.report_ints, 0);
        s->report_values.resize(built_->spec.report_ints);
        if (dynamic_) s->shape_info = OclShapeInfo(plan_.bytes());
        return s;
    }

    // update_dispatch_data and shape_info, for new runtime layouts.
    void update(ExecContext& ctx, OclImplState& s) const {
        const KernelParams& p = ctx.params;
        if (!dynamic_ && (p.inputs != bound_inputs_ || p.outputs != bound_outputs_))
            throw Error("static ocl impl of '" + op_ + "' executed with other layouts than it was built for");
        built_->spec.update(p, device_->limits(), s.runs);
        if (!s.shape_info.empty()) {
            pack_shape_info_fused(plan_, p, s.packed);   // fused ops' other inputs follow the inputs
            // Ordered on the in-order queue after the previous run's kernels.
            s.shape_info.update(*device_, ctx.stream, s.packed);
        }
        if (scratch_count_) s.scratch_sizes = built_->spec.scratch_bytes(p);
        s.last_inputs = p.inputs;
        s.last_outputs = p.outputs;
        s.have_last = true;
    }

    // The caller's scratch buffers when it passes them (they must be large
    // enough), else the state's own, grown to the current sizes.
    const std::vector<MemoryPtr>* scratch_for(ExecContext& ctx, OclImplState& s) const {
        const std::vector<size_t>& want = s.scratch_sizes;
        if (want.size() < scratch_count_)
            throw Error("ocl impl '" + name() + "': scratch_bytes gives " + std::to_string(want.size()) +
                        " buffers, its kernels bind " + std::to_string(scratch_count_));
        if (ctx.scratch) {
            const std::vector<MemoryPtr>& got = *ctx.scratch;
            for (size_t i = 0; i < want.size(); ++i)
                if (i >= got.size() || !got[i] || got[i]->capacity() < want[i])
                    throw Error("ocl impl '" + name() + "': scratch buffer " + std::to_string(i) + " needs " +
                                std::to_string(want[i]) + " bytes, got " +
                                (i < got.size() && got[i] ? std::to_string(got[i]->capacity()) : "none"));
            return ctx.scratch;
        }
        s.own_scratch.resize(want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            MemoryPtr& m = s.own_scratch[i];
            if (!m || m->capacity() < want[i]) {
                const size_t bytes = std::max<size_t>(want[i], 1);
                m = std::make_shared<Memory>(ctx.params.engine->allocate(bytes),
                                             Layout(PartialShape{Dimension(int64_t(bytes))}, DataType::u8));
            }
        }
        return &s.own_scratch;
    }

    // A report spec comes whole (report_ints with report_shapes, report_check
    // or both), bound by a stage; data-dependent outputs are plain.
    void check_report_spec(const OclMultiKernelSpec& spec) {
        bool bound = false;
        for (const OclStage& st : stages_)
            for (const OclArgRef& a : st.args) bound = bound || a.kind == OclArgRef::Kind::report;
        reports_ = spec.report_ints > 0;
        if (reports_ != (spec.report_shapes || spec.report_check))
            throw Error("ocl impl of '" + op_ + "': report_ints goes with report_shapes or report_check");
        if (reports_ && !bound) throw Error("ocl impl of '" + op_ + "' declares report_ints but no stage binds report");
        if (!reports_ && bound) throw Error("ocl impl of '" + op_ + "' binds report but declares no report_ints");
        if (spec.report_shapes && spec.padded_outputs)
            throw Error("ocl impl of '" + op_ + "': data-dependent outputs cannot be padded");
    }

    // Zeros into the state's report buffer (made at the first run), ordered
    // on the stream before the stages that write it.
    void reset_report(ExecContext& ctx, OclImplState& s) const {
        const size_t bytes = s.report_zeros.size() * sizeof(int32_t);
        if (!s.report)
            s.report = std::make_shared<Memory>(
                ctx.params.engine->allocate(bytes),
                Layout(PartialShape{Dimension(int64_t(s.report_zeros.size()))}, DataType::i32));
        device_->write_async(ctx.stream, *s.report->buffer(), 0, s.report_zeros.data(), bytes);
    }

    // Reads the report back (blocking: the host needs the verdict and the
    // shapes now), checks it, then writes the actual output layouts.
    void read_report(ExecContext& ctx, OclImplState& s) const {
        const OclMultiKernelSpec& spec = built_->spec;
        if (spec.report_shapes && !ctx.actual_outputs)
            throw Error("ocl impl '" + name() + "' reports its output shapes, but op '" + op_ +
                        "' does not declare data_dependent_output");
        s.report->buffer()->read(ctx.stream, s.report_values.data(), 0, s.report_values.size() * sizeof(int32_t));
        if (spec.report_check) spec.report_check(ctx.params, s.report_values);
        if (spec.report_shapes) report_actual_outputs(ctx, s);
    }

    // The actual output layouts from the report, each within its bound.
    void report_actual_outputs(ExecContext& ctx, const OclImplState& s) const {
        const KernelParams& p = ctx.params;
        const std::vector<Shape> shapes = built_->spec.report_shapes(p, s.report_values);
        if (shapes.size() != p.outputs.size() || ctx.actual_outputs->size() != p.outputs.size())
            throw Error("ocl impl '" + name() + "' reported " + std::to_string(shapes.size()) + " output shapes for " +
                        std::to_string(p.outputs.size()) + " outputs");
        for (size_t i = 0; i < shapes.size(); ++i) {
            const Layout& bound = p.outputs[i];
            size_t count = 0;
            const bool fits =
                count_fits(shapes[i].dims(), &count) && count <= bound.count() &&
                checked_mul(count, byte_size(bound.dtype), "reported output bytes") <= ctx.outputs.at(i)->capacity();
            if (!fits)
                throw Error("ocl impl '" + name() + "' reported output " + std::to_string(i) + " shape " +
                            shapes[i].to_string() + ", beyond its bound " + bound.to_string() + " (buffer of " +
                            std::to_string(ctx.outputs.at(i)->capacity()) + " bytes)");
            (*ctx.actual_outputs)[i] = bound.with_shape(shapes[i]);
        }
    }

    void push_args(const OclArgRef& a, const ExecContext& ctx, const OclImplState& s, const OclStageRun& run,
                   const std::vector<MemoryPtr>* scratch, std::vector<OclArg>& args) const {
        switch (a.kind) {
            case OclArgRef::Kind::input: args.push_back(OclArg::mem(*ctx.inputs.at(a.index))); break;
            case OclArgRef::Kind::output: args.push_back(OclArg::mem(*ctx.outputs.at(a.index))); break;
            case OclArgRef::Kind::scratch: args.push_back(OclArg::mem(*scratch->at(a.index))); break;
            case OclArgRef::Kind::inputs:
                for (const auto& m : ctx.inputs) args.push_back(OclArg::mem(*m));
                break;
            case OclArgRef::Kind::outputs:
                for (const auto& m : ctx.outputs) args.push_back(OclArg::mem(*m));
                break;
            case OclArgRef::Kind::fused_inputs:
                if (fused_ && ctx.fused_inputs)
                    for (const auto& m : *ctx.fused_inputs) args.push_back(OclArg::mem(*m));
                break;
            case OclArgRef::Kind::scalars: args.insert(args.end(), run.scalars.begin(), run.scalars.end()); break;
            case OclArgRef::Kind::report: args.push_back(OclArg::mem(*s.report)); break;
        }
    }

    std::shared_ptr<const BuiltSpec> built_;
    bool dynamic_;
    bool fused_ = false;   // built with fused post-ops
    std::string op_;
    Format weights_format_;
    OclDevice* device_ = nullptr;
    std::vector<OclStage> stages_;
    std::vector<std::shared_ptr<OclKernel>> kernels_;   // one per stage
    size_t scratch_count_ = 0;                          // scratch buffers the stages bind
    bool reports_ = false;                              // report_ints: a report buffer to read back
    ShapeInfoPlan plan_;
    std::vector<Layout> bound_inputs_, bound_outputs_;   // static impls
};

std::string check_plain(const KernelParams& p, bool padded_outputs) {
    for (const auto& l : p.inputs)
        if (!l.padding.empty()) return "padded inputs are not supported";
    if (!padded_outputs)
        for (const auto& l : p.outputs)
            if (!l.padding.empty()) return "padded outputs are not supported";
    for (const auto& l : p.inputs)
        if (l.shape.rank() > kShapeInfoDims) return "rank above 8";
    for (const auto& l : p.outputs)
        if (l.shape.rank() > kShapeInfoDims) return "rank above 8";
    return {};
}

std::shared_ptr<const BuiltSpec> build_spec(OclMultiKernelSpec spec) {
    auto b = std::make_shared<BuiltSpec>();
    b->source = ocl_full_source(spec.source);
    b->spec = std::move(spec);
    return b;
}

}   // namespace

const char* ocl_common_source() { return ocl_common_cl; }

std::string ocl_full_source(const char* source) {
    // `#line 1` restarts the numbering, so build logs give the op's .cl lines.
    return std::string(ocl_common_cl) + "\n#line 1\n" + source;
}

OclMultiKernelSpec to_multi_kernel_spec(OclKernelSpec spec) {
    if (!spec.source || spec.kernel_name.empty() || !spec.dispatch)
        throw Error("ocl kernel spec: source, kernel_name and dispatch are required");
    OclMultiKernelSpec m;
    m.source = spec.source;
    m.defines = spec.defines;
    m.fused_ops = spec.fused_ops;
    m.padded_outputs = spec.padded_outputs;
    m.report_ints = spec.report_ints;
    m.report_shapes = spec.report_shapes;
    m.report_check = spec.report_check;
    const std::string name = spec.kernel_name;
    OclStage stage{name};
    if (spec.report_ints)   // the report buffer right after the outputs
        stage.args = {OclArgRef::inputs(), OclArgRef::outputs(), OclArgRef::report(), OclArgRef::fused_inputs(),
                      OclArgRef::scalars()};
    m.stages = [stage](const KernelParams&, bool) { return std::vector<OclStage>{stage}; };
    auto dispatch = spec.dispatch;
    auto scalars = spec.scalars;
    m.update = [dispatch, scalars](const KernelParams& p, const OclDeviceLimits& lim, std::vector<OclStageRun>& runs) {
        runs[0].dispatch = dispatch(p, lim);
        if (scalars) runs[0].scalars = scalars(p);
    };
    return m;
}

std::unique_ptr<Impl> create_ocl_impl(const KernelParams& p, const OclMultiKernelSpec& spec, bool dynamic,
                                      Format weights_format) {
    return std::make_unique<OclMultiImpl>(p, build_spec(spec), dynamic, weights_format);
}

void add_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclKernelSpec spec, OclImplOptions options) {
    if (!spec.source || spec.kernel_name.empty() || !spec.dispatch)
        throw Error("add_ocl_impls('" + op + "'): source, kernel_name and dispatch are required");
    add_ocl_multi_impls(reg, op, to_multi_kernel_spec(std::move(spec)), std::move(options));
}

void add_ocl_multi_impls(ModuleRegistrar& reg, const std::string& op, OclMultiKernelSpec spec, OclImplOptions options) {
    if (!spec.source || !spec.stages || !spec.update)
        throw Error("add_ocl_multi_impls('" + op + "'): source, stages and update are required");
    if (options.formats.empty())
        throw Error("add_ocl_multi_impls('" + op + "'): an OpenCL impl must list the formats it takes");
    std::vector<Format> formats = options.formats;
    if (std::find(formats.begin(), formats.end(), options.weights_format) == formats.end())
        formats.push_back(options.weights_format);
    const bool padded_outputs = spec.padded_outputs;
    const std::shared_ptr<const BuiltSpec> built = build_spec(std::move(spec));
    for (bool dynamic : {true, false}) {
        if (dynamic && !options.register_dynamic) continue;
        if (!dynamic && !options.register_static) continue;
        ImplEntry e;
        e.name = dynamic ? "ocl_dynamic" : "ocl_static";
        e.impl_type = "ocl";
        e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
        e.dtypes = options.dtypes;
        e.formats = formats;
        e.fused_ops = built->spec.fused_ops;
        e.weights_format = options.weights_format;
        e.fake_align_rows = options.fake_align_rows;
        auto extra = options.validate;
        e.validate = [extra, padded_outputs](const KernelParams& p) {
            std::string why = check_plain(p, padded_outputs);
            if (why.empty() && !p.fused_ops.empty()) why = check_ocl_fused_ops(p);
            if (why.empty() && extra) why = extra(p);
            return why;
        };
        const Format wf = options.weights_format;
        e.create = [built, dynamic, wf](const KernelParams& p) -> std::unique_ptr<Impl> {
            return std::make_unique<OclMultiImpl>(p, built, dynamic, wf);
        };
        reg.add_impl(op, std::move(e));
    }
}

OclDispatch dispatch_1d(size_t n, const OclDeviceLimits& limits) {
    const size_t work[3] = {n, 1, 1};
    return dispatch_for(work, 1, limits);
}

OclDispatch dispatch_nd(std::array<size_t, 3> work, size_t dims, const OclDeviceLimits& limits) {
    return dispatch_for(work.data(), dims, limits);
}

OclDispatch dispatch_grid_stride(size_t n, const OclDeviceLimits& limits) {
    // GPUs: enough work-items for a full wave of resident threads, each then
    // looping over n / global-size items; consecutive work-items touch
    // consecutive items on every trip (coalesced). CPUs (PoCL) run the
    // work-items of a group one after another (or a vector's width at a time),
    // so there a strided loop would walk memory with a large stride and reread
    // every cache line several times: one item per work-item instead.
    if (!limits.is_gpu) return dispatch_1d(n, limits);
    const size_t local = pick_local_size(std::array<size_t, 3>{size_t{2}, 1, 1}.data(), 1, limits)[0];
    const size_t cap = std::max<size_t>(limits.compute_units, 1) * local * 8;
    return dispatch_1d(std::min(n, cap), limits);
}

const char* ocl_bits_type(DataType t) {
    switch (byte_size(t)) {
        case 1: return "uchar";
        case 2: return "ushort";
        case 8: return "ulong";
        default: return "uint";
    }
}

std::string check_dtype_and_int_range(const KernelParams& p, DataType dtype, bool storage) {
    for (const Layout& l : p.inputs)
        if (l.dtype != dtype) return std::string("inputs must all be ") + to_string(dtype);
    for (const auto* side : {&p.inputs, &p.outputs})
        for (const Layout& l : *side)
            if (l.shape.is_static() && (storage ? l.storage_count() : l.shape.to_shape().count()) > 0x7fffffffu)
                return std::string("a tensor has more than 2^31-1 elements");
    return std::string();
}

JitDefines jit_window_defines(const WindowAttrs& a) {
    return JitDefines{
        {"STRIDE_H", std::to_string(a.strides[0])},     {"STRIDE_W", std::to_string(a.strides[1])},
        {"PAD_H", std::to_string(a.pads_begin[0])},     {"PAD_W", std::to_string(a.pads_begin[1])},
        {"DILATION_H", std::to_string(a.dilations[0])}, {"DILATION_W", std::to_string(a.dilations[1])},
        {"GROUPS", std::to_string(a.groups)},
    };
}

JitDefines jit_axis_lines(const std::string& prefix, size_t rank, size_t axis) {
    return JitDefines{{"AXIS_LEN", jit_dims_product(prefix, rank, axis, axis + 1)},
                      {"INNER", jit_dims_product(prefix, rank, axis + 1, rank)},
                      {"OUTER_INNER", "(" + jit_dims_product(prefix, rank, 0, axis) + "*" +
                                          jit_dims_product(prefix, rank, axis + 1, rank) + ")"}};
}

OclDispatch dispatch_lines(const Shape& s, size_t axis, const OclDeviceLimits& limits) {
    if (s[axis] == 0) return dispatch_1d(0, limits);
    return dispatch_1d(dims_product(s, 0, axis) * dims_product(s, axis + 1, s.rank()), limits);
}

OclDispatch dispatch_vec4(size_t n, const OclDeviceLimits& limits) {
    if (n == 0) return dispatch_1d(0, limits);
    return dispatch_grid_stride(std::max<size_t>(n / 4, n % 4), limits);
}

}   // namespace dynrt
