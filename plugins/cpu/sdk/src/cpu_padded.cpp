#include "dynrt/cpu_padded.hpp"

#include <memory>
#include <utility>

#include "dynrt/error.hpp"

namespace dynrt {

PaddedStrides padded_strides(const Layout& l) {
    const Shape s = l.get_shape();
    PaddedStrides p;
    if (l.padding.empty()) {
        p.strides = strides_of(s);
        return p;
    }
    const Shape padded = l.padded_shape();
    p.strides = strides_of(padded);
    for (size_t d = 0; d < s.rank() && !l.padding.lower.empty(); ++d)
        p.first += static_cast<size_t>(l.padding.lower[d]) * p.strides[d];
    p.dense = dense_block_in_padding(l);
    return p;
}

size_t contiguous_from(const Shape& shape, const std::vector<size_t>& strides) {
    size_t from = shape.rank();
    size_t run = 1;   // elements of dims [from, rank)
    while (from > 0) {
        const size_t d = from - 1;
        if (shape[d] != 1 && strides.at(d) != run) break;
        run *= static_cast<size_t>(shape[d]);
        from = d;
    }
    return from;
}

namespace {

std::string check_strided(const KernelParams& p, const HostImplOptions& options) {
    for (size_t i = 0; i < p.inputs.size(); ++i)
        if (!p.inputs[i].padding.empty())
            return "input " + std::to_string(i) + " is padded (" + p.inputs[i].to_string() +
                   "); the optimised loops read dense inputs";
    for (size_t i = 0; i < p.outputs.size(); ++i) {
        const Layout& l = p.outputs[i];
        if (l.padding.empty()) continue;
        const size_t rank = l.shape.rank();
        if ((!l.padding.lower.empty() && l.padding.lower.size() != rank) ||
            (!l.padding.upper.empty() && l.padding.upper.size() != rank))
            return "output " + std::to_string(i) + " has a padding of another rank (" + l.to_string() + ")";
        if (i > 0 && !dense_block_in_padding(l))
            return "output " + std::to_string(i) + " is padded (" + l.to_string() +
                   "); only output 0 is written through strides";
        if (!p.fused_ops.empty())
            return "output " + std::to_string(i) + " is padded (" + l.to_string() +
                   ") and fused ops would run on it as a dense tensor";
    }
    return options.validate ? options.validate(p) : std::string();
}

class StridedOutputImpl final : public Impl {
public:
    StridedOutputImpl(std::string name, StridedOutputKernel kernel, bool dynamic, const KernelParams* built_for)
        : name_(std::move(name)), kernel_(std::move(kernel)), dynamic_(dynamic) {
        if (built_for) {
            inputs_ = built_for->inputs;
            outputs_ = built_for->outputs;
        }
    }

    std::string name() const override { return name_; }
    bool is_dynamic() const override { return dynamic_; }

    void execute(ExecContext& ctx) override {
        const KernelParams& p = ctx.params;
        if (!dynamic_ && (!same_layouts(p.inputs, inputs_) || !same_layouts(p.outputs, outputs_))) {
            ErrorContext ec;
            ec.node = p.node;
            throw Error(name_ + " was built for other layouts than it was executed with", ec);
        }
        const Layout& out = p.outputs.at(0);
        if (out.padding.empty()) {
            HostCall call(ctx);
            StridedOutput o{call.out_raw(0), strides_of(call.out_shape(0)), true};
            kernel_(call, o);
        } else {
            // The kernel's HostCall sees output 0 dense: it maps the buffer from
            // its start, and `o` says where the logical elements lie in it.
            KernelParams dense = p;
            dense.outputs[0] = out.with_shape(out.get_shape());
            ExecContext dctx{ctx.stream,       dense,     ctx.inputs, ctx.outputs, ctx.actual_outputs,
                             ctx.fused_inputs, ctx.state, ctx.scratch};
            HostCall call(dctx);
            PaddedStrides s = padded_strides(out);
            StridedOutput o{static_cast<char*>(call.out_raw(0)) + s.first * byte_size(out.dtype), std::move(s.strides),
                            s.dense};
            kernel_(call, o);
        }
        if (!p.fused_ops.empty()) apply_fused_host_ops(ctx);
    }

private:
    std::string name_;
    StridedOutputKernel kernel_;
    bool dynamic_;
    std::vector<Layout> inputs_, outputs_;
};

ImplEntry strided_entry(const std::string& op, const StridedOutputKernel& kernel, const HostImplOptions& options,
                        bool dynamic) {
    ImplEntry e;
    e.name = "cpu_" + options.name + (dynamic ? "_dynamic" : "_static");
    e.reference = options.reference;
    e.impl_type = "cpu";
    e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
    e.dtypes = options.dtypes;
    e.formats = {Format::plain};
    e.validate = [options](const KernelParams& p) { return check_strided(p, options); };
    e.fused_ops = true;
    e.fake_align_rows = options.fake_align_rows;
    const std::string impl_name = op + "_" + e.name;
    e.create = [impl_name, kernel, dynamic](const KernelParams& p) -> std::unique_ptr<Impl> {
        return std::make_unique<StridedOutputImpl>(impl_name, kernel, dynamic, dynamic ? nullptr : &p);
    };
    return e;
}

}   // namespace

void add_strided_output_impls(ModuleRegistrar& reg, const std::string& op, StridedOutputKernel kernel,
                              HostImplOptions options) {
    if (!kernel) throw Error("add_strided_output_impls: op '" + op + "' has no kernel");
    if (options.static_weights_format != Format::plain)
        throw Error("add_strided_output_impls: op '" + op + "': the loops read plain weights");
    if (options.register_dynamic) reg.add_impl(op, strided_entry(op, kernel, options, true));
    if (options.register_static) reg.add_impl(op, strided_entry(op, kernel, options, false));
}

}   // namespace dynrt
