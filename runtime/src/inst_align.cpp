// Fake alignment: ops with a fake_align hook run on rows rounded up to the
// impl's tile; the input's producer sizes its buffer to fit.
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// The row tile for the current params: the option, or the first impl that
// would serve them.
size_t PrimitiveInst::align_tile() const {
    if (const size_t forced = network_.options().fake_align_rows) return forced;
    for (const RegisteredImpl* c : impl_candidates())
        if (c->entry.check(params_).empty()) return c->entry.fake_align_rows;
    return 0;
}

// params_ plus the alignment the impl is chosen, keyed and run with.
KernelParams PrimitiveInst::request_params() {
    align_.aligned = false;
    const OpDefinition& def = node_.def->def;
    // A producer of an in-place target writes a view of the target's buffer:
    // no room for extra rows there.
    if (!def.fake_align || !network_.options().fake_alignment || deps_.empty() || params_.inputs.empty() ||
        params_.outputs.empty() || inplace_.target)
        return params_;
    const Layout& in0 = params_.inputs[0];
    const Layout& out0 = params_.outputs[0];
    if (!in0.padding.empty() || !out0.padding.empty() || !in0.is_static() || !out0.is_static()) return params_;
    // Post-ops with inputs of their own would read those at the aligned rows.
    for (const auto& f : params_.fused_ops)
        if (f.inputs.size() > 1) return params_;
    const size_t tile = align_tile();
    align_.tile = tile;
    if (tile <= 1) return params_;
    KernelParams a = params_;
    if (!def.fake_align(a.inputs, a.outputs, tile)) return params_;
    // The producer sized its buffer from fake_align_tile_hint(); if it could
    // not (first run, another tile), run on the real rows.
    const MemoryPtr in = input_memory(0);
    if (!in || in->capacity() < a.inputs[0].bytes()) return params_;
    for (auto& f : a.fused_ops) {
        f.inputs[f.main_input] = a.outputs[0];
        f.output = a.outputs[0];
    }
    align_.aligned = true;
    return a;
}

// Fake alignment reads rows past the input's logical end: if the input's
// buffer no longer holds them (its producer took another buffer since the
// impl was chosen), choose again on the real rows.
void PrimitiveInst::recheck_alignment() {
    if (!align_.aligned || input_memory(0)->capacity() >= impl_.exec_params.inputs[0].bytes()) return;
    update_impl();
    if (run_.impl_changed) update_weights();
    realloc_if_needed();
}

size_t PrimitiveInst::fake_align_tile_hint() const {
    const NetworkOptions& opt = network_.options();
    if (!node_.def->def.fake_align || !opt.fake_alignment) return 0;
    if (opt.fake_align_rows) return opt.fake_align_rows;
    if (align_.tile) return align_.tile;
    const std::vector<const RegisteredImpl*> c = impl_candidates();
    return c.empty() ? 0 : c.front()->entry.fake_align_rows;
}

size_t PrimitiveInst::aligned_input_bytes(const Layout& input0) const {
    const size_t tile = fake_align_tile_hint();
    if (tile <= 1 || !input0.is_static() || !input0.padding.empty()) return 0;
    std::vector<Layout> ins{input0}, outs{input0};
    if (!node_.def->def.fake_align(ins, outs, tile)) return 0;
    return ins[0].bytes();
}

}   // namespace dynrt
