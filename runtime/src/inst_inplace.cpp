// Runtime in-place concat (OpDefinition::inplace_axis): the producers of a
// target write straight into its buffer at their offsets along the axis.
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"
#include "inst_util.hpp"

namespace dynrt {

using inst_util::strip_padding;

// The first producer to run: infers every producer's and the target's shape
// (update_shape_done_by_other) and decides whether they write in place.
void PrimitiveInst::prepare_inplace() {
    bool producers_changed = false;
    for (PrimitiveInst* p : inplace_.producers) {
        if (!p->run_.update_shape_done_by_other) {
            p->update_shape();
            p->run_.update_shape_done_by_other = true;
        }
        producers_changed |= p->run_.shape_changed;
    }
    if (!run_.update_shape_done_by_other) {
        update_shape();
        run_.update_shape_done_by_other = true;
    }
    // Same shapes as last run: the decision and the paddings hold.
    if (inplace_.decided && !producers_changed && !run_.shape_changed) return;
    inplace_.decided = true;
    std::vector<Layout> padded(inplace_.producers.size());
    const bool ok = plan_inplace_paddings(padded);
    apply_inplace(ok, padded);
}

// Each producer's output padded to its slice of the target along the axis;
// false when some producer (or its impl) cannot write such a view.
bool PrimitiveInst::plan_inplace_paddings(std::vector<Layout>& padded) {
    const Layout& out = params_.outputs.at(0);
    if (!out.is_static() || !out.padding.empty() || is_blocked(out.format) || out.shape.rank() == 0) return false;
    const size_t rank = out.shape.rank();
    const int64_t a = node_.def->def.inplace_axis(node_.attrs, rank);
    if (a < 0 || static_cast<size_t>(a) >= rank) return false;
    const size_t axis = static_cast<size_t>(a);
    const int64_t total = out.get_shape()[axis];
    int64_t offset = 0;
    for (size_t i = 0; i < inplace_.producers.size(); ++i) {
        PrimitiveInst* p = inplace_.producers[i];
        const Layout l = strip_padding(p->params_.outputs.at(0));
        if (!l.is_static() || l.dtype != out.dtype || l.format != out.format || l.shape.rank() != rank) return false;
        const int64_t len = l.get_shape()[axis];
        Layout pl = l;
        const int64_t after = total - offset - len;
        if (offset > 0 || after > 0) {
            pl.padding.lower.assign(rank, 0);
            pl.padding.upper.assign(rank, 0);
            pl.padding.lower[axis] = offset;
            pl.padding.upper[axis] = after;
        }
        if (after < 0 || !(p->reads_assigned_state() || p->impl_accepts(pl))) return false;
        padded[i] = std::move(pl);
        offset += len;
    }
    return offset == total;
}

void PrimitiveInst::apply_inplace(bool ok, const std::vector<Layout>& padded) {
    for (size_t i = 0; i < inplace_.producers.size(); ++i) {
        PrimitiveInst* p = inplace_.producers[i];
        const Layout want = ok ? padded[i] : strip_padding(p->params_.outputs.at(0));
        if (p->params_.outputs[0] != want) {
            p->params_.outputs[0] = want;
            p->run_.shape_changed = true;
        }
    }
    if (ok != inplace_.active) {
        // Buffer and impl need another look; producers leaving the target's
        // buffer must not keep writing into it (it may be a variable's value now).
        run_.shape_changed = true;
        for (PrimitiveInst* p : inplace_.producers) {
            p->run_.shape_changed = true;
            if (!ok) {
                p->outputs_[0].reset();
                p->capacity_[0] = 0;
            }
        }
    }
    inplace_.active = ok;
    // A target in place has no impl; the next run without in-place picks one.
    if (ok) impl_.impl.reset();
}

bool PrimitiveInst::use_inplace_view(size_t i) {
    if (i != 0 || !inplace_.target || !inplace_.target->inplace_.active) return false;
    PrimitiveInst& t = *inplace_.target;
    // The first producer to get here sizes the target's buffer (through the
    // ShapePredictor, under the target's key); the others take it.
    if (!t.run_.allocation_done_by_other) {
        t.realloc_if_needed();
        t.run_.allocation_done_by_other = true;
    }
    const MemoryPtr& tm = t.outputs_.at(0);
    if (!outputs_[0] || outputs_[0]->buffer() != tm->buffer() ||
        !same_layout(outputs_[0]->layout(), params_.outputs[0]) || outputs_[0]->offset() != tm->offset()) {
        outputs_[0] = std::make_shared<Memory>(tm->buffer(), params_.outputs[0], tm->offset());
        run_.memory_changed = true;
    }
    capacity_[0] = t.capacity_[0];
    return true;
}

bool PrimitiveInst::impl_accepts(const Layout& padded_output) const {
    KernelParams plain = params_;
    plain.outputs.at(0) = strip_padding(padded_output);
    KernelParams padded = params_;
    padded.outputs.at(0) = padded_output;
    // The impl that would serve the dense layout must also take the padded one:
    // falling back to a slower impl only to save a copy does not pay.
    for (const RegisteredImpl* c : impl_candidates()) {
        if (!c->entry.check(plain).empty()) continue;
        return c->entry.check(padded).empty();
    }
    return false;
}

}   // namespace dynrt
