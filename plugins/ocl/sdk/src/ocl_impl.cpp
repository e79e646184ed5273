// Generic single-kernel OpenCL impls (see ocl_impl.hpp).
#include "dynrt/ocl_impl.hpp"

#include <algorithm>
#include <cstring>

#include "dynrt/error.hpp"
#include "dynrt/ocl_fused_ops.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt {

namespace {

Layout all_dynamic(const Layout& l) {
    return Layout(PartialShape::dynamic_of_rank(l.shape.rank()), l.dtype, l.format);
}

class OclKernelImpl final : public Impl {
public:
    OclKernelImpl(const KernelParams& p, const OclKernelSpec& spec, bool dynamic)
        : spec_(spec), dynamic_(dynamic), op_(p.op ? p.op->name : std::string("?")) {
        device_ = OclDevice::from(*p.engine);
        if (!device_) throw Error("ocl impl created on a non-ocl engine");
        JitDefines defs = shape_agnostic_defines(dynamic);
        std::vector<Layout> ins = p.inputs, outs = p.outputs;
        // Other inputs of fused post-ops: shape_info slots after the inputs.
        std::vector<Layout> extras = fused_extra_layouts(p);
        fused_ = !p.fused_ops.empty();
        if (dynamic) {
            for (auto& l : ins) l = all_dynamic(l);
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
        if (spec_.fused_ops) {
            const std::vector<int> slots(plan_.input_slots.begin() + static_cast<std::ptrdiff_t>(ins.size()),
                                         plan_.input_slots.end());
            auto d = fused_ops_defines(p, extras, slots);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        if (spec_.defines) {
            auto d = spec_.defines(p, dynamic);
            defs.insert(defs.end(), d.begin(), d.end());
        }
        kernel_ = device_->build_kernel(spec_.source, spec_.kernel_name, defs);
        if (dynamic) shape_info_ = OclShapeInfo(plan_.bytes());
        if (!dynamic) {
            bound_inputs_ = p.inputs;
            bound_outputs_ = p.outputs;
        }
    }

    // Per-run host work is kept to comparisons: when the layouts equal the
    // last run's (the common case, shape unchanged), the dispatch, the scalars
    // and shape_info of that run are reused without recomputing or repacking
    // them, and the argument list is rebuilt in place in a member vector (no
    // allocation). The device's launch() then skips the clSetKernelArg calls
    // whose values did not change.
    void execute(ExecContext& ctx) override {
        const KernelParams& p = ctx.params;
        // Fused ops' other inputs may change shape alone: no shortcut then.
        const bool same = have_last_ && !fused_ && !shape_info_.needs_region(ctx.stream) &&
                          same_layouts(p.inputs, last_inputs_) && same_layouts(p.outputs, last_outputs_);
        if (!same) {
            if (!dynamic_ && (p.inputs != bound_inputs_ || p.outputs != bound_outputs_))
                throw Error("static ocl impl of '" + op_ + "' executed with other layouts than it was built for");
            dispatch_ = spec_.dispatch(p, device_->limits());
            scalars_.clear();
            if (spec_.scalars) scalars_ = spec_.scalars(p);
            if (!shape_info_.empty()) {
                pack_shape_info_fused(plan_, p, packed_);   // fused ops' other inputs follow the inputs
                // Ordered on the in-order queue after the previous run's kernels.
                shape_info_.update(*device_, ctx.stream, packed_);
            }
            last_inputs_ = p.inputs;
            last_outputs_ = p.outputs;
            have_last_ = true;
        }
        const OclDispatch& d = dispatch_;
        if (d.gws[0] == 0 || d.gws[1] == 0 || d.gws[2] == 0) return;   // nothing to do for this shape

        args_.clear();
        shape_info_.push_args(args_);
        for (const auto& m : ctx.inputs) args_.push_back(OclArg::mem(*m));
        for (const auto& m : ctx.outputs) args_.push_back(OclArg::mem(*m));
        if (fused_ && ctx.fused_inputs)
            for (const auto& m : *ctx.fused_inputs) args_.push_back(OclArg::mem(*m));
        args_.insert(args_.end(), scalars_.begin(), scalars_.end());
        device_->launch(ctx.stream, *kernel_, args_, d);
    }

    std::string name() const override { return op_ + (dynamic_ ? "_ocl_dynamic" : "_ocl_static"); }
    bool is_dynamic() const override { return dynamic_; }
    Format weights_format() const override { return weights_format_; }
    void set_weights_format(Format f) { weights_format_ = f; }

private:
    OclKernelSpec spec_;
    bool dynamic_;
    bool fused_ = false;   // built with fused post-ops
    std::string op_;
    OclDevice* device_ = nullptr;
    std::shared_ptr<OclKernel> kernel_;
    ShapeInfoPlan plan_;
    OclShapeInfo shape_info_;
    std::vector<int32_t> packed_;
    std::vector<Layout> bound_inputs_, bound_outputs_;
    // Last run's layouts and what was derived from them.
    bool have_last_ = false;
    std::vector<Layout> last_inputs_, last_outputs_;
    OclDispatch dispatch_;
    std::vector<OclArg> scalars_;
    std::vector<OclArg> args_;   // reused every run
    Format weights_format_ = Format::plain;
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

}  // namespace

void add_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclKernelSpec spec, OclImplOptions options) {
    if (!spec.source || spec.kernel_name.empty() || !spec.dispatch)
        throw Error("add_ocl_impls('" + op + "'): source, kernel_name and dispatch are required");
    for (bool dynamic : {true, false}) {
        if (dynamic && !options.register_dynamic) continue;
        if (!dynamic && !options.register_static) continue;
        ImplEntry e;
        e.name = dynamic ? "ocl_dynamic" : "ocl_static";
        e.impl_type = "ocl";
        e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
        e.dtypes = options.dtypes;
        e.fused_ops = spec.fused_ops;
        e.weights_format = options.weights_format;
        auto extra = options.validate;
        const bool padded_outputs = spec.padded_outputs;
        e.validate = [extra, padded_outputs](const KernelParams& p) {
            std::string why = check_plain(p, padded_outputs);
            if (why.empty() && !p.fused_ops.empty()) why = check_ocl_fused_ops(p);
            if (why.empty() && extra) why = extra(p);
            return why;
        };
        const Format wf = options.weights_format;
        e.create = [spec, dynamic, wf](const KernelParams& p) -> std::unique_ptr<Impl> {
            auto impl = std::make_unique<OclKernelImpl>(p, spec, dynamic);
            impl->set_weights_format(wf);
            return impl;
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

}  // namespace dynrt
