// The per-primitive execution flow (see primitive_inst.hpp for the outline).
#include "dynrt/primitive_inst.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <variant>

#include "dynrt/compilation_context.hpp"
#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "dynrt/memory_pool.hpp"
#include "dynrt/shape_predictor.hpp"

namespace dynrt {

namespace {

Layout strip_padding(const Layout& l) {
    Layout out = l;
    out.padding = Padding{};
    return out;
}

// Byte address of element 0 and byte strides of a (static) view.
struct Addressing {
    size_t base = 0;
    std::vector<size_t> strides;
};

Addressing addressing(const Memory& m) {
    const Layout& l = m.layout();
    const Shape padded = l.padded_shape();
    Addressing a;
    a.strides.assign(padded.rank(), byte_size(l.dtype));
    for (size_t d = padded.rank(); d-- > 1;) a.strides[d - 1] = a.strides[d] * static_cast<size_t>(padded[d]);
    a.base = m.offset();
    for (size_t d = 0; d < l.padding.lower.size() && d < a.strides.size(); ++d)
        a.base += static_cast<size_t>(l.padding.lower[d]) * a.strides[d];
    return a;
}

// True when two views of one buffer put every element at the same address (a
// copy between them would be a no-op).
bool same_elements(const Memory& a, const Memory& b) {
    if (a.buffer() != b.buffer() || a.layout().dtype != b.layout().dtype) return false;
    const Shape sa = a.layout().get_shape();
    if (sa != b.layout().get_shape()) return false;
    if (sa.count() == 0) return true;
    const Addressing x = addressing(a), y = addressing(b);
    if (x.base != y.base) return false;
    for (size_t d = 0; d < sa.rank(); ++d)
        if (sa[d] > 1 && x.strides[d] != y.strides[d]) return false;
    return true;
}

// Copies the elements of `src` into `dst` (same dtype and logical shape; either
// may be padded). Goes through a host staging copy, so the two may overlap in
// one buffer. Returns the bytes copied.
size_t copy_elements(Stream& stream, const Memory& src, const Memory& dst) {
    const Shape shape = src.layout().get_shape();
    const size_t esize = byte_size(src.layout().dtype);
    const size_t n = shape.count();
    if (n == 0) return 0;
    const size_t row = shape.rank() ? static_cast<size_t>(shape[shape.rank() - 1]) : 1;
    const size_t rows = n / row;
    // Byte offset of row r for a view with addressing a.
    auto row_offset = [&](const Addressing& a, size_t r) {
        size_t off = a.base;
        for (size_t d = shape.rank() >= 1 ? shape.rank() - 1 : 0; d-- > 0;) {
            const size_t ext = static_cast<size_t>(shape[d]);
            off += (r % ext) * a.strides[d];
            r /= ext;
        }
        return off;
    };
    const Addressing as = addressing(src), ad = addressing(dst);
    std::vector<uint8_t> staging(n * esize);
    {
        auto* p = static_cast<const uint8_t*>(src.buffer()->map(stream));
        for (size_t r = 0; r < rows; ++r) std::memcpy(staging.data() + r * row * esize, p + row_offset(as, r), row * esize);
        src.buffer()->unmap(stream);
    }
    {
        auto* p = static_cast<uint8_t*>(dst.buffer()->map(stream));
        for (size_t r = 0; r < rows; ++r) std::memcpy(p + row_offset(ad, r), staging.data() + r * row * esize, row * esize);
        dst.buffer()->unmap(stream);
    }
    return n * esize;
}

std::string layouts_to_string(const std::vector<Layout>& ls) {
    std::string s;
    for (size_t i = 0; i < ls.size(); ++i) s += (i ? ", " : "") + ls[i].to_string();
    return s;
}

// ShapePredictor key of output i: the node name, "_out<i>" appended for i > 0.
std::string predictor_key(const std::string& node, size_t i) {
    return i == 0 ? node : node + "_out" + std::to_string(i);
}

// Two dense layouts whose storage puts every element at the same place (same
// format, or a blocked format over a dim 0 its blocks divide with nothing
// inside): a buffer of one can be reinterpreted as the other, no copy.
bool storage_compatible(const Layout& a, const Layout& b) {
    if (a.shape != b.shape || a.dtype != b.dtype || !a.padding.empty() || !b.padding.empty() || !a.is_static())
        return false;
    if (a.format == b.format) return true;
    const Shape s = a.get_shape();
    if (s.rank() == 0 || s.count() == 0) return false;
    const size_t d0 = static_cast<size_t>(s[0]);
    return s.count() / d0 == 1 && d0 % block_size(a.format) == 0 && d0 % block_size(b.format) == 0;
}

// What a shape-agnostic impl is specialised on besides the entry: the fused
// post-ops' ops, attributes and input ranks and types (device impls generate
// code for them).
std::string fused_signature(const KernelParams& p) {
    std::string s;
    for (const auto& f : p.fused_ops) {
        s += f.op ? f.op->name : std::string("?");
        s += f.attrs ? f.attrs->to_string() : std::string("{}");
        s += '#' + std::to_string(f.main_input);
        for (const auto& l : f.inputs) s += std::string(":") + to_string(l.dtype) + std::to_string(l.shape.rank());
        s += ';';
    }
    return s;
}

// True when every output is static and holds no element. Checks the dims
// directly: Layout::count() builds a Shape, and this runs on every execution.
bool all_empty(const std::vector<Layout>& outputs) {
    if (outputs.empty()) return false;
    for (const Layout& l : outputs) {
        if (!l.is_static()) return false;
        bool zero = false;
        for (const Dimension& d : l.shape) zero |= d.min() == 0;
        if (!zero) return false;
    }
    return true;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

}  // namespace

PrimitiveInst::PrimitiveInst(InferRequest& request, size_t node_index)
    : request_(request), network_(request.network()), predictor_(request.shape_predictor()),
      stream_(request.stream()), pool_(request.memory_pool()), index_(node_index),
      node_(network_.program().nodes()[node_index]) {
    Network& network = network_;
    params_.node = node_.name;
    params_.op = &node_.def->def;
    params_.attrs = &node_.attrs;
    params_.engine = &network.engine();
    {
        auto node_inputs = std::make_shared<std::vector<Layout>>();
        for (const NodeInput& in : node_.inputs)
            node_inputs->push_back(network.program().nodes().at(in.node).out_layouts.at(in.output));
        params_.node_inputs = std::move(node_inputs);
    }
    const OpTraits& traits = node_.def->def.traits;
    if (traits.reads_state || traits.writes_state) {
        const auto& vals = node_.attrs.values();
        auto it = vals.find("variable");
        if (it == vals.end() || !std::holds_alternative<std::string>(it->second) ||
            std::get<std::string>(it->second).empty())
            throw Error("op '" + node_.op + "' reads or writes request state but the node has no String attribute "
                        "'variable' naming the variable", ctx());
        variable_ = std::get<std::string>(it->second);
    }
    params_.outputs = node_.out_layouts;
    outputs_.resize(node_.out_layouts.size());
    capacity_.assign(node_.out_layouts.size(), 0);
    if (node_.def->def.traits.is_constant) {
        outputs_[0] = network.constant_memory(node_index);
        capacity_[0] = outputs_[0]->capacity();
        initialized_ = true;
        has_run_ = true;
    }
}

ErrorContext PrimitiveInst::ctx() const {
    ErrorContext c = node_.where;
    c.node = node_.name;
    c.op = node_.op;
    return c;
}

void PrimitiveInst::begin_run() {
    counters_ = Counters{};
    shape_changed_ = false;
    executed_ = false;
    update_shape_done_by_other_ = false;
    impl_changed_ = false;
    memory_changed_ = false;
    allocation_done_by_other_ = false;
}

void PrimitiveInst::on_state_reset() {
    if (!node_.def->def.traits.reads_state) return;
    // The output may alias the forgotten value: start again from the initial value.
    for (auto& o : outputs_) o.reset();
    capacity_.assign(capacity_.size(), 0);
    initialized_ = false;
}

bool PrimitiveInst::reads_assigned_state() const {
    return node_.def->def.traits.reads_state && request_.variable(variable_) != nullptr;
}

MemoryPtr PrimitiveInst::input_memory(size_t i) const {
    return deps_[i]->output_memory(node_.inputs[i].output);
}

void PrimitiveInst::set_input_data(const HostTensor& value) {
    const Layout& declared = node_.declared;
    if (value.dtype() != declared.dtype)
        throw Error(std::string("input has data type ") + to_string(value.dtype()) + ", declared " +
                        to_string(declared.dtype),
                    ctx());
    if (!declared.shape.compatible(value.shape()))
        throw Error("input has shape " + value.shape().to_string() + ", declared " + declared.shape.to_string(),
                    ctx());
    Layout l(PartialShape(value.shape()), declared.dtype, declared.format);
    if (!initialized_ || l != params_.outputs[0]) {
        shape_changed_ = true;
        ++counters_.shape_changes;
        params_.outputs[0] = l;
        realloc_if_needed();
    }
    if (value.bytes() > 0) outputs_[0]->buffer()->write(stream_, value.data(), outputs_[0]->offset(), value.bytes());
    initialized_ = true;
    executed_ = true;   // new values this run (value-input consumers re-read them)
}

void PrimitiveInst::execute() {
    const OpTraits& t = node_.def->def.traits;
    if (t.is_input || t.is_constant) return;

    // The first producer of an in-place target to run decides for all of them.
    if (inplace_target_ && !update_shape_done_by_other_) inplace_target_->prepare_inplace();

    // A fused node whose producer ran it as a post-op: only its view changes.
    if (fused_away()) {
        take_fused_output();
        return;
    }

    // A shape_of subgraph whose shape_of roots saw no new shape computes the same
    // values again: keep the last ones.
    if (node_.in_shape_of_subgraph && has_run_ && !roots_.empty()) {
        bool unchanged = true;
        for (const PrimitiveInst* r : roots_) unchanged &= !r->shape_changed();
        if (unchanged) {
            ++counters_.skip_shape_of_subgraph;
            return;
        }
    }

    update_shape();
    if (!fused_.empty()) prepare_fusion();

    // shape_of-like ops produce the same values while their input shape holds.
    if (t.shape_of_like && has_run_ && !shape_changed_) return;

    // A data-dependent output is sized for the bound again each run (the last
    // run's actual shape says nothing about this one's).
    if (t.data_dependent_output && !upper_outputs_.empty()) params_.outputs = upper_outputs_;

    if (reads_assigned_state()) {
        read_state();
        return;
    }
    if (t.writes_state) {
        write_state();
        return;
    }

    if (all_empty(params_.outputs)) {
        if (shape_changed_ || !outputs_[0]) realloc_if_needed();
        ++counters_.skip_empty_output;
        return;
    }

    if (inplace_active_) {
        // The producers wrote their outputs into this buffer: nothing to run.
        if (shape_changed_ || !outputs_[0]) realloc_if_needed();
        ++counters_.concat_inplace;
        executed_ = true;
        has_run_ = true;
        return;
    }

    if (shape_changed_ || !impl_) {
        try {
            update_impl();
        } catch (const Error& e) {
            // A fused node running on its own (its producer's impl could not
            // take it) without an impl of its own: nothing can run it.
            if (!fused_into_) throw;
            throw Error("fused into '" + fused_into_->name() + "' and cannot run unfused either: " + e.message(),
                        ctx());
        }
        if (impl_changed_ || !weights_mem_) update_weights();
        realloc_if_needed();
    } else if (waiting_async_) {
        // Another run of the same shapes: time to queue a deferred build?
        if (deferred_build_ && count_visit(impl_key_) >= network_.options().async_compile_after) {
            queue_static_build(*deferred_build_->impl, deferred_build_->params, impl_key_);
            deferred_build_.reset();
        }
        // A background static build for the current shapes may have finished.
        if (ImplPtr built = network_.impl_cache().get(impl_key_)) {
            impl_ = std::move(built);
            waiting_async_ = false;
            impl_changed_ = true;
            ++counters_.async_builds_picked;
            ++counters_.impl_changes;
            update_weights();
        }
    }
    // Fake alignment reads rows past the input's logical end: if the input's
    // buffer no longer holds them (its producer took another buffer since the
    // impl was chosen), choose again on the real rows.
    if (aligned_ && input_memory(0)->capacity() < exec_params_.inputs[0].bytes()) {
        update_impl();
        if (impl_changed_) update_weights();
        realloc_if_needed();
    }
    if (impl_changed_ || memory_changed_) ++counters_.set_arguments;

    // The input views live in a member vector (no allocation per execution)
    // and are released when this execution ends, as a local vector's would be:
    // a view kept alive holds its buffer in the memory pool.
    struct ReleaseViews {
        std::vector<MemoryPtr>& views;
        ~ReleaseViews() {
            for (MemoryPtr& m : views) m.reset();
        }
    };
    std::vector<MemoryPtr>& inputs = exec_inputs_;
    inputs.resize(deps_.size());
    const ReleaseViews release{inputs};
    for (size_t i = 0; i < deps_.size(); ++i) inputs[i] = input_memory(i);
    if (weights_mem_) inputs.at(node_.def->def.weights_input) = weights_mem_;
    // An output buffer that an input also lives in (a variable still holding the
    // buffer this node wrote last run) is replaced: the kernel must not overwrite
    // what it reads.
    fused_inputs_.clear();
    if (fused_active_) {
        // The fused ops' other inputs, in order (their producers ran already).
        for (size_t j = 0; j < fused_.size(); ++j)
            for (size_t k = 0; k < fused_[j]->deps_.size(); ++k)
                if (k != fused_main_[j]) fused_inputs_.push_back(fused_[j]->input_memory(k));
    }
    const bool inplace_view = inplace_target_ && inplace_target_->inplace_active_;
    auto reads_buffer = [&](const MemoryPtr& out) {
        for (const MemoryPtr& in : inputs)
            if (in && in->buffer() == out->buffer()) return true;
        for (const MemoryPtr& in : fused_inputs_)
            if (in && in->buffer() == out->buffer()) return true;
        return false;
    };
    for (size_t o = 0; o < outputs_.size() && !inplace_view; ++o) {
        // Same capacity as the buffer it replaces, so that the two buffers
        // alternate through the pool instead of growing.
        if (outputs_[o] && reads_buffer(outputs_[o])) allocate_output(o, params_.outputs[o], capacity_[o]);
    }
    // Fake alignment: the kernel sees the rows rounded up (both buffers were
    // sized for them); consumers keep the logical layout.
    std::vector<MemoryPtr> aligned_outputs;
    if (aligned_) {
        inputs[0] = inputs[0]->reinterpret(exec_params_.inputs[0]);
        aligned_outputs = outputs_;
        aligned_outputs[0] = outputs_[0]->reinterpret(exec_params_.outputs[0]);
        ++counters_.fake_aligned;
    }
    ExecContext ec{stream_, exec_special_ ? exec_params_ : params_, inputs, aligned_ ? aligned_outputs : outputs_};
    ec.fused_inputs = &fused_inputs_;
    if (t.data_dependent_output) {
        actual_outputs_ = params_.outputs;
        ec.actual_outputs = &actual_outputs_;
    }
    try {
        impl_->execute(ec);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    } catch (const std::exception& e) {
        throw Error(std::string("execution failed: ") + e.what(), ctx());
    }
    if (t.data_dependent_output) {
        for (size_t i = 0; i < outputs_.size(); ++i) {
            if (actual_outputs_[i] != params_.outputs[i]) {
                if (actual_outputs_[i].bytes() > capacity_[i])
                    throw Error("impl reported an output larger than its buffer: " + actual_outputs_[i].to_string(),
                                ctx());
                params_.outputs[i] = actual_outputs_[i];
                outputs_[i] = outputs_[i]->reinterpret(actual_outputs_[i]);
                shape_changed_ = true;
            }
        }
    }
    ++counters_.executions;
    if (impl_->is_dynamic()) ++counters_.dynamic_impl_runs;
    if (!fused_.empty()) ++(fused_active_ ? counters_.fused_runs : counters_.unfused_runs);
    // An in-place target that runs its kernel copies every byte of its output.
    if (node_.def->def.inplace_axis)
        for (const auto& l : params_.outputs) counters_.concat_bytes_copied += l.count() * byte_size(l.dtype);
    executed_ = true;
    has_run_ = true;
}

// ---- state -------------------------------------------------------------------

void PrimitiveInst::read_state() {
    MemoryPtr value = request_.variable(variable_);
    if (inplace_target_ && inplace_target_->inplace_active_) {
        // The output is a view into the target's buffer; the value is usually
        // there already (the variable is last run's target output).
        if (shape_changed_ || !outputs_[0]) realloc_if_needed();
        if (!same_elements(*value, *outputs_[0])) {
            try {
                counters_.state_bytes_copied += copy_elements(stream_, *value, *outputs_[0]);
            } catch (const Error& e) {
                throw e.with_context(ctx());
            }
        }
    } else if (outputs_[0] != value) {
        outputs_[0] = value;
        capacity_[0] = value->capacity();
        memory_changed_ = true;
    }
    executed_ = true;
    has_run_ = true;
}

void PrimitiveInst::write_state() {
    // The output aliases the input (no kernel); the value is committed at the end
    // of the run.
    MemoryPtr in = input_memory(0);
    if (!in) throw Error("state writer has no input value", ctx());
    if (outputs_[0] != in) {
        outputs_[0] = in;
        capacity_[0] = in->capacity();
        memory_changed_ = true;
    }
    request_.stage_assign(variable_, in, ctx());
    executed_ = true;
    has_run_ = true;
}

// ---- in-place targets ----------------------------------------------------------

void PrimitiveInst::prepare_inplace() {
    bool producers_changed = false;
    for (PrimitiveInst* p : inplace_producers_) {
        if (!p->update_shape_done_by_other_) {
            p->update_shape();
            p->update_shape_done_by_other_ = true;
        }
        producers_changed |= p->shape_changed_;
    }
    if (!update_shape_done_by_other_) {
        update_shape();
        update_shape_done_by_other_ = true;
    }
    // Same shapes as last run: the decision and the paddings hold.
    if (inplace_decided_ && !producers_changed && !shape_changed_) return;
    inplace_decided_ = true;

    const Layout& out = params_.outputs.at(0);
    bool ok = out.is_static() && out.padding.empty() && !is_blocked(out.format) && out.shape.rank() > 0;
    const size_t rank = out.shape.rank();
    size_t axis = 0;
    if (ok) {
        const int64_t a = node_.def->def.inplace_axis(node_.attrs, rank);
        ok = a >= 0 && static_cast<size_t>(a) < rank;
        axis = static_cast<size_t>(a);
    }
    std::vector<Layout> padded(inplace_producers_.size());
    const int64_t total = ok ? out.get_shape()[axis] : 0;
    int64_t offset = 0;
    for (size_t i = 0; ok && i < inplace_producers_.size(); ++i) {
        PrimitiveInst* p = inplace_producers_[i];
        const Layout l = strip_padding(p->params_.outputs.at(0));
        ok = l.is_static() && l.dtype == out.dtype && l.format == out.format && l.shape.rank() == rank;
        if (!ok) break;
        const int64_t len = l.get_shape()[axis];
        Layout pl = l;
        const int64_t after = total - offset - len;
        if (offset > 0 || after > 0) {
            pl.padding.lower.assign(rank, 0);
            pl.padding.upper.assign(rank, 0);
            pl.padding.lower[axis] = offset;
            pl.padding.upper[axis] = after;
        }
        ok = after >= 0 && (p->reads_assigned_state() || p->impl_accepts(pl));
        padded[i] = std::move(pl);
        offset += len;
    }
    ok = ok && offset == total;

    for (size_t i = 0; i < inplace_producers_.size(); ++i) {
        PrimitiveInst* p = inplace_producers_[i];
        const Layout want = ok ? padded[i] : strip_padding(p->params_.outputs.at(0));
        if (p->params_.outputs[0] != want) {
            p->params_.outputs[0] = want;
            p->shape_changed_ = true;
        }
    }
    if (ok != inplace_active_) {
        // Buffer and impl need another look; producers leaving the target's
        // buffer must not keep writing into it (it may be a variable's value now).
        shape_changed_ = true;
        for (PrimitiveInst* p : inplace_producers_) {
            p->shape_changed_ = true;
            if (!ok) {
                p->outputs_[0].reset();
                p->capacity_[0] = 0;
            }
        }
    }
    inplace_active_ = ok;
    // A target in place has no impl; the next run without in-place picks one.
    if (ok) impl_.reset();
}

bool PrimitiveInst::use_inplace_view(size_t i) {
    if (i != 0 || !inplace_target_ || !inplace_target_->inplace_active_) return false;
    PrimitiveInst& t = *inplace_target_;
    // The first producer to get here sizes the target's buffer (through the
    // ShapePredictor, under the target's key); the others take it.
    if (!t.allocation_done_by_other_) {
        t.realloc_if_needed();
        t.allocation_done_by_other_ = true;
    }
    const MemoryPtr& tm = t.outputs_.at(0);
    if (!outputs_[0] || outputs_[0]->buffer() != tm->buffer() ||
        !same_layout(outputs_[0]->layout(), params_.outputs[0]) || outputs_[0]->offset() != tm->offset()) {
        outputs_[0] = std::make_shared<Memory>(tm->buffer(), params_.outputs[0], tm->offset());
        memory_changed_ = true;
    }
    capacity_[0] = t.capacity_[0];
    return true;
}

std::vector<const RegisteredImpl*> PrimitiveInst::impl_candidates() const {
    const Registry& reg = *network_.program().registry();
    const std::string& type = network_.engine().info().type;
    // Device impls first, host impls as the fallback; shape_of subgraphs (small
    // integer tensors read back by shape inference) prefer the host.
    std::vector<const RegisteredImpl*> candidates = reg.impls(node_.op, type);
    if (type != "cpu") {
        std::vector<const RegisteredImpl*> host = reg.impls(node_.op, "cpu");
        const bool host_first = node_.in_shape_of_subgraph || node_.def->def.traits.shape_of_like;
        candidates.insert(host_first ? candidates.begin() : candidates.end(), host.begin(), host.end());
    }
    return candidates;
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

std::vector<const HostTensor*> PrimitiveInst::read_value_inputs() {
    const auto& vin = node_.def->def.value_inputs;
    std::vector<const HostTensor*> values(deps_.size(), nullptr);
    if (vin.empty()) return values;
    if (last_values_.size() != deps_.size()) last_values_.resize(deps_.size());
    for (size_t v : vin) {
        if (v >= deps_.size()) continue;
        // A producer that did not run this time still holds the values read last time.
        if (initialized_ && !deps_[v]->executed() && last_values_[v].shape() == deps_[v]->output_layout(node_.inputs[v].output).get_shape() &&
            deps_[v]->initialized()) {
            values[v] = &last_values_[v];
            continue;
        }
        const MemoryPtr& mem = input_memory(v);
        const Layout& l = mem->layout();
        HostTensor value(l.dtype, l.get_shape());
        if (value.bytes() > 0) {
            // Waits for the producer: the value is needed on the host now.
            mem->buffer()->read(stream_, value.data(), mem->offset(), value.bytes());
        }
        last_values_[v] = std::move(value);
        values[v] = &last_values_[v];
    }
    return values;
}

void PrimitiveInst::update_shape() {
    if (update_shape_done_by_other_) {
        ++counters_.skip_done_by_other;
        return;
    }
    const OpDefinition& def = node_.def->def;

    // A reader whose variable has a value: the output is that value's layout.
    if (reads_assigned_state()) {
        const Layout value = strip_padding(request_.variable(variable_)->layout());
        if (!initialized_ || strip_padding(params_.outputs.at(0)) != value) {
            params_.outputs[0] = value;
            shape_changed_ = true;
            ++counters_.shape_changes;
        } else {
            ++counters_.skip_shape_unchanged;
        }
        initialized_ = true;
        return;
    }

    bool inputs_changed = !initialized_ || params_.inputs.size() != deps_.size();
    if (params_.inputs.size() != deps_.size()) params_.inputs.resize(deps_.size());
    for (size_t i = 0; i < deps_.size(); ++i) {
        const Layout& l = deps_[i]->output_layout(node_.inputs[i].output);
        if (!same_layout(params_.inputs[i], l)) {
            params_.inputs[i] = l;
            inputs_changed = true;
        }
    }

    if (def.traits.shape_of_like && !inputs_changed) {
        ++counters_.skip_shape_of;
        return;
    }

    // Values of the inputs shape inference reads (e.g. a reshape target computed
    // by a shape_of subgraph): a change of value is a change of input. Ops
    // without value inputs skip this (no vector built on the unchanged path).
    std::vector<const HostTensor*> values;
    if (!def.value_inputs.empty()) {
        const std::vector<HostTensor> previous = last_values_;
        values = read_value_inputs();
        for (size_t v : def.value_inputs) {
            if (v >= deps_.size()) continue;
            if (v >= previous.size() || !same_bytes(previous[v], last_values_[v])) inputs_changed = true;
        }
    }

    if (!inputs_changed) {
        ++counters_.skip_shape_unchanged;
        return;
    }
    // Shape inference sees one entry per input (nullptr: no value).
    if (values.empty()) values.assign(deps_.size(), nullptr);
    shape_changed_ = true;
    ++counters_.shape_changes;
    if (def.traits.data_dependent_output) ++counters_.skip_data_dependent;

    ShapeInferContext sctx{node_.name, params_.inputs, node_.attrs, values};
    sctx.run_time = true;
    std::vector<Layout> outs;
    try {
        outs = def.infer(sctx);
    } catch (const Error& e) {
        throw Error(e.message() + " (input layouts: " + layouts_to_string(params_.inputs) + ")", ctx())
            .with_context(e.context());
    }
    ++counters_.update_shape_runs;
    if (outs.size() != params_.outputs.size())
        throw Error("shape inference returned " + std::to_string(outs.size()) + " outputs, expected " +
                        std::to_string(params_.outputs.size()),
                    ctx());
    for (size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i].is_static())
            throw Error("shape inference left output " + std::to_string(i) + " dynamic: " + outs[i].to_string() +
                            " (input layouts: " + layouts_to_string(params_.inputs) + ")",
                        ctx());
    }
    if (def.traits.data_dependent_output) upper_outputs_ = outs;
    params_.outputs = std::move(outs);
    initialized_ = true;
}

void PrimitiveInst::update_impl() {
    const NetworkOptions& opt = network_.options();
    ImplCache& cache = network_.impl_cache();
    // The params the impl is chosen, keyed and created with: params_ plus the
    // fused ops and the fake alignment. Impls reading reordered weights are
    // created with the weights' new layout, so the key says whether the
    // weights can be reordered (constant) at all.
    const KernelParams req = request_params();
    const bool reorder_weights = weights_reorderable();
    const size_t w_in = node_.def->def.weights_input;
    auto params_for = [&](const ImplEntry& e) {
        KernelParams p = req;
        if (reorder_weights && w_in < p.inputs.size()) p.inputs[w_in].format = e.weights_format;
        return p;
    };
    const std::string key = ImplCache::make_key(req) + (reorder_weights ? "|reordered-weights" : "");
    const ImplPtr previous = impl_;

    if (ImplPtr cached = cache.get(key)) {
        ++counters_.impl_cache_hits;
        impl_ = std::move(cached);
        waiting_async_ = false;
        deferred_build_.reset();
    } else {
        ++counters_.impl_cache_misses;
        const std::string& type = network_.engine().info().type;
        const RegisteredImpl* dyn = nullptr;
        const RegisteredImpl* stat = nullptr;
        std::string reasons;
        const std::vector<const RegisteredImpl*> candidates = impl_candidates();
        for (const RegisteredImpl* c : candidates) {
            std::string why = c->entry.check(req);
            if (why.empty()) {
                if (c->entry.shape_type == ShapeType::dynamic_shape) {
                    if (!dyn) dyn = c;
                } else if (!stat) {
                    stat = c;
                }
            } else {
                reasons += "\n  " + c->entry.name + ": " + why;
            }
        }
        if (opt.verbose && !reasons.empty())
            std::fprintf(stderr, "[dynrt] %s (%s): impls skipped:%s\n", node_.name.c_str(), node_.op.c_str(),
                         reasons.c_str());

        // A producer writing into an in-place target gets a new padding whenever
        // the target grows: like a dynamic node it takes the shape-agnostic impl,
        // and a static build for one padding would not be reused.
        const bool inplace_view = inplace_target_ && inplace_target_->inplace_active_;
        const bool critical = node_.def->def.traits.critical && !inplace_view;
        const bool use_dynamic = dyn && opt.use_dynamic_impls && (node_.is_dynamic || inplace_view) &&
                                 !(critical && stat && !opt.async_compile);
        if (use_dynamic) {
            // One shape-agnostic impl per entry and fused-op set.
            const std::string sig = dyn->entry.name + "|" + fused_signature(req);
            if (!dynamic_impl_ || sig != dynamic_sig_) {
                try {
                    dynamic_impl_ = Registry::hold(dyn->entry.create(params_for(dyn->entry)), dyn->library);
                } catch (const Error& e) {
                    throw e.with_context(ctx());
                }
                dynamic_sig_ = sig;
            }
            impl_ = dynamic_impl_;
            waiting_async_ = false;
            deferred_build_.reset();
            if (critical && stat && opt.async_compile && network_.compilation_context()) {
                if (count_visit(key) >= opt.async_compile_after)
                    queue_static_build(*stat, params_for(stat->entry), key);
                else
                    deferred_build_ = DeferredBuild{stat, params_for(stat->entry)};   // key: impl_key_, set below
                waiting_async_ = true;
            }
        } else if (stat) {
            try {
                impl_ = Registry::hold(stat->entry.create(params_for(stat->entry)), stat->library);
            } catch (const Error& e) {
                throw e.with_context(ctx());
            }
            cache.put(key, impl_);
            ++counters_.static_builds;
            waiting_async_ = false;
            deferred_build_.reset();
        } else {
            throw Error("no implementation of op '" + node_.op + "' on device '" + type + "' for " +
                            layouts_to_string(params_.inputs) + " -> " + layouts_to_string(params_.outputs) +
                            (reasons.empty() ? std::string(" (none registered)") : ":" + reasons),
                        ctx());
        }
    }
    impl_key_ = key;
    exec_params_ = req;
    exec_special_ = aligned_ || !req.fused_ops.empty() || reorder_weights;
    if (impl_ != previous) {
        impl_changed_ = true;
        ++counters_.impl_changes;
    }
}

uint32_t PrimitiveInst::count_visit(const std::string& key) {
    // Bounded: a sequence of ever new shapes forgets the oldest counts at once.
    if (key_visits_.size() >= 4096) key_visits_.clear();
    return ++key_visits_[key];
}

void PrimitiveInst::queue_static_build(const RegisteredImpl& impl, const KernelParams& params,
                                       const std::string& key) {
    ImplCache* cache = &network_.impl_cache();
    std::shared_ptr<void> lib = impl.library;
    const ImplEntry* entry = &impl.entry;
    const bool queued = network_.compilation_context()->push(key, [params, cache, lib, entry, key] {
        if (cache->contains(key)) return;   // built meanwhile
        cache->put(key, Registry::hold(entry->create(params), lib));
    });
    if (queued) ++counters_.async_builds_queued;
}

// ---- fake alignment ------------------------------------------------------------

KernelParams PrimitiveInst::request_params() {
    aligned_ = false;
    const OpDefinition& def = node_.def->def;
    const NetworkOptions& opt = network_.options();
    // A producer of an in-place target writes a view of the target's buffer:
    // no room for extra rows there.
    if (!def.fake_align || !opt.fake_alignment || deps_.empty() || params_.inputs.empty() ||
        params_.outputs.empty() || inplace_target_)
        return params_;
    const Layout& in0 = params_.inputs[0];
    const Layout& out0 = params_.outputs[0];
    if (!in0.padding.empty() || !out0.padding.empty() || !in0.is_static() || !out0.is_static()) return params_;
    // Post-ops with inputs of their own would read those at the aligned rows.
    for (const auto& f : params_.fused_ops)
        if (f.inputs.size() > 1) return params_;
    size_t tile = opt.fake_align_rows;
    if (!tile) {
        for (const RegisteredImpl* c : impl_candidates()) {
            if (!c->entry.check(params_).empty()) continue;
            tile = c->entry.fake_align_rows;
            break;
        }
    }
    align_tile_ = tile;
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
    aligned_ = true;
    return a;
}

size_t PrimitiveInst::fake_align_tile_hint() const {
    const NetworkOptions& opt = network_.options();
    if (!node_.def->def.fake_align || !opt.fake_alignment) return 0;
    if (opt.fake_align_rows) return opt.fake_align_rows;
    if (align_tile_) return align_tile_;
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

// ---- weights -------------------------------------------------------------------

bool PrimitiveInst::weights_reorderable() const {
    const OpDefinition& def = node_.def->def;
    const std::string& op = network_.options().weights_reorder_op;
    if (!def.traits.weightable || op.empty() || def.weights_input >= deps_.size()) return false;
    return deps_[def.weights_input]->node().def->def.traits.is_constant &&
           network_.program().registry()->find_op(op) != nullptr;
}

MemoryPtr PrimitiveInst::weights_cache_get(const Layout& l) {
    for (auto it = weights_cache_.begin(); it != weights_cache_.end(); ++it) {
        if (it->first != l) continue;
        weights_cache_.splice(weights_cache_.begin(), weights_cache_, it);
        return weights_cache_.front().second;
    }
    return nullptr;
}

void PrimitiveInst::weights_cache_put(const Layout& l, MemoryPtr m) {
    for (auto it = weights_cache_.begin(); it != weights_cache_.end(); ++it)
        if (it->first == l) {
            weights_cache_.erase(it);
            break;
        }
    weights_cache_.emplace_front(l, std::move(m));
    const size_t cap = std::max<size_t>(1, network_.options().weights_cache_capacity);
    while (weights_cache_.size() > cap) weights_cache_.pop_back();
}

ImplPtr PrimitiveInst::reorder_impl(const KernelParams& rp) {
    ImplCache& cache = network_.impl_cache();
    const std::string key = ImplCache::make_key(rp);
    if (ImplPtr hit = cache.get(key)) return hit;
    const Registry& reg = *network_.program().registry();
    const std::string& type = network_.engine().info().type;
    std::vector<const RegisteredImpl*> candidates = reg.impls(rp.op->name, type);
    if (type != "cpu") {
        const std::vector<const RegisteredImpl*> host = reg.impls(rp.op->name, "cpu");
        candidates.insert(candidates.end(), host.begin(), host.end());
    }
    // A static impl for these exact layouts first (weights do not change shape).
    const RegisteredImpl* pick = nullptr;
    std::string reasons;
    for (int pass = 0; pass < 2 && !pick; ++pass) {
        for (const RegisteredImpl* c : candidates) {
            if ((c->entry.shape_type == ShapeType::static_shape) != (pass == 0)) continue;
            const std::string why = c->entry.check(rp);
            if (why.empty()) {
                pick = c;
                break;
            }
            if (pass == 0) reasons += "\n  " + c->entry.name + ": " + why;
        }
    }
    if (!pick)
        throw Error("no implementation of the weights-reorder op '" + rp.op->name + "' for " +
                        rp.inputs.at(0).to_string() + " -> " + rp.outputs.at(0).to_string() + reasons,
                    ctx());
    ImplPtr impl;
    try {
        impl = Registry::hold(pick->entry.create(rp), pick->library);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    cache.put(key, impl);
    return impl;
}

// Called when the impl changed: the weights go into the format the new impl
// reads, from the cache when they were reordered before.
void PrimitiveInst::update_weights() {
    if (!impl_ || !weights_reorderable()) {
        weights_mem_.reset();
        return;
    }
    const size_t w = node_.def->def.weights_input;
    const MemoryPtr original = input_memory(w);
    const Layout& orig = original->layout();
    Layout expected = orig;
    expected.format = impl_->weights_format();
    if (w < exec_params_.inputs.size()) exec_params_.inputs[w] = expected;
    if (expected.format == orig.format) {
        // Recorded too, so that a small cache drops stale reordered buffers.
        weights_cache_put(orig, original);
        weights_mem_ = original;
        return;
    }
    if (MemoryPtr hit = weights_cache_get(expected)) {
        ++counters_.weights_cache_hits;
        weights_mem_ = hit;
        return;
    }
    if (storage_compatible(orig, expected)) {
        weights_mem_ = original->reinterpret(expected);
        weights_cache_put(expected, weights_mem_);
        return;
    }
    const RegisteredOp& rop = network_.program().registry()->op(network_.options().weights_reorder_op);
    Attributes raw;
    raw.set("format", std::string(to_string(expected.format)));
    try {
        reorder_attrs_ = Attributes::validate(rop.def.attrs, raw);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    KernelParams rp;
    rp.node = node_.name + "/weights";
    rp.op = &rop.def;
    rp.attrs = &reorder_attrs_;
    rp.inputs = {orig};
    rp.outputs = {expected};
    rp.engine = &network_.engine();
    ImplPtr reorder = reorder_impl(rp);

    // A full cache hands its least recently used buffer over when it is large
    // enough (never the original weights).
    std::shared_ptr<Buffer> buffer;
    const size_t cap = std::max<size_t>(1, network_.options().weights_cache_capacity);
    if (weights_cache_.size() >= cap) {
        const MemoryPtr& victim = weights_cache_.back().second;
        if (victim->buffer() != original->buffer() && victim->offset() == 0 &&
            victim->buffer()->size() >= expected.bytes())
            buffer = victim->buffer();
        weights_cache_.pop_back();
    }
    if (!buffer) {
        try {
            buffer = network_.engine().allocate(expected.bytes());
        } catch (const Error& e) {
            throw e.with_context(ctx());
        }
    }
    MemoryPtr dst = std::make_shared<Memory>(std::move(buffer), expected);
    std::vector<MemoryPtr> ins{original}, outs{dst};
    ExecContext ec{stream_, rp, ins, outs};
    try {
        reorder->execute(ec);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    ++counters_.weights_reorders;
    weights_cache_put(expected, dst);
    weights_mem_ = dst;
}

// ---- fusion --------------------------------------------------------------------

// The producer of a fused chain, right after its own update_shape: infers the
// chain's shapes (each fused node is then marked done) and decides whether its
// impl runs the post-ops this time. The decision holds while no shape changes.
void PrimitiveInst::prepare_fusion() {
    bool changed = shape_changed_ || !fusion_decided_;
    for (PrimitiveInst* f : fused_) {
        if (!f->update_shape_done_by_other_) {
            f->update_shape();
            f->update_shape_done_by_other_ = true;
        }
        changed |= f->shape_changed_;
    }
    if (!changed) return;
    fusion_decided_ = true;
    params_.fused_ops.clear();
    std::vector<FusedOpDesc> descs;
    const std::string why = fusion_blocker(descs);
    const bool ok = why.empty();
    if (!ok && network_.options().verbose)
        std::fprintf(stderr, "[dynrt] %s (%s): runs unfused: %s\n", node_.name.c_str(), node_.op.c_str(),
                     why.c_str());
    if (ok) params_.fused_ops = std::move(descs);
    // The impl key holds the fused ops: choose again. Fused nodes leaving the
    // producer's buffer need buffers (and impls) of their own.
    shape_changed_ = true;
    if (ok != fused_active_) {
        for (PrimitiveInst* f : fused_) {
            f->shape_changed_ = true;
            if (!ok) {
                f->outputs_[0].reset();
                f->capacity_[0] = 0;
            }
        }
    }
    fused_active_ = ok;
}

std::string PrimitiveInst::fusion_blocker(std::vector<FusedOpDesc>& descs) {
    const Layout* running = &params_.outputs.at(0);
    if (!running->is_static()) return "output is not static";
    for (size_t j = 0; j < fused_.size(); ++j) {
        PrimitiveInst* f = fused_[j];
        const Layout& out = f->params_.outputs.at(0);
        // The other inputs must broadcast into the running result without
        // growing it: the post-op writes where the result is.
        if (out.shape != running->shape || out.dtype != running->dtype)
            return "'" + f->name() + "' makes " + out.to_string() + " from " + running->to_string() +
                   ": its other inputs do not broadcast into the result";
        for (size_t k = 0; k < f->params_.inputs.size(); ++k)
            if (k != fused_main_[j] && !f->params_.inputs[k].padding.empty())
                return "input " + std::to_string(k) + " of '" + f->name() + "' is padded";
        ImplPtr host = f->fused_host_impl();
        if (!host) return "'" + f->name() + "' has no host impl to run as a post-op";
        FusedOpDesc d;
        d.node = f->name();
        d.op = &f->node_.def->def;
        d.attrs = &f->node_.attrs;
        d.inputs = f->params_.inputs;
        d.main_input = fused_main_[j];
        d.output = out;
        d.host_impl = std::move(host);
        descs.push_back(std::move(d));
        running = &out;
    }
    // The impl that would serve this primitive alone must take the post-ops
    // too: a slower impl only to fuse does not pay.
    KernelParams fused = params_;
    fused.fused_ops = descs;
    for (const RegisteredImpl* c : impl_candidates()) {
        if (!c->entry.check(params_).empty()) continue;
        const std::string why = c->entry.check(fused);
        return why.empty() ? std::string() : c->entry.name + ": " + why;
    }
    return "no impl serves '" + node_.name + "'";
}

ImplPtr PrimitiveInst::fused_host_impl() {
    if (fused_host_impl_) return fused_host_impl_;
    const Registry& reg = *network_.program().registry();
    for (const RegisteredImpl* c : reg.impls(node_.op, "cpu")) {
        if (c->entry.shape_type != ShapeType::dynamic_shape || !c->entry.check(params_).empty()) continue;
        try {
            fused_host_impl_ = Registry::hold(c->entry.create(params_), c->library);
        } catch (const Error& e) {
            throw e.with_context(ctx());
        }
        break;
    }
    return fused_host_impl_;
}

void PrimitiveInst::take_fused_output() {
    update_shape();   // done by the producer
    const MemoryPtr& m = fused_into_->outputs_.at(0);
    if (m && (!outputs_[0] || outputs_[0]->buffer() != m->buffer() || outputs_[0]->offset() != m->offset() ||
              !same_layout(outputs_[0]->layout(), params_.outputs[0]))) {
        outputs_[0] = std::make_shared<Memory>(m->buffer(), params_.outputs[0], m->offset());
        memory_changed_ = true;
    }
    capacity_[0] = fused_into_->capacity_[0];
    initialized_ = true;
    executed_ = true;
    has_run_ = true;
}

void PrimitiveInst::realloc_if_needed() {
    // An in-place target whose buffer a producer already sized this run.
    if (allocation_done_by_other_) return;
    for (size_t i = 0; i < params_.outputs.size(); ++i) {
        if (use_inplace_view(i)) continue;
        const Layout& l = params_.outputs[i];
        size_t need = l.bytes();
        // Fake alignment: this op's kernel writes the rounded-up rows, and a
        // user with a fake_align hook reads them from this buffer.
        if (i == 0 && aligned_ && !exec_params_.outputs.empty()) need = std::max(need, exec_params_.outputs[0].bytes());
        for (PrimitiveInst* u : users_)
            if (!u->deps_.empty() && u->deps_[0] == this && u->node_.inputs[0].output == i)
                need = std::max(need, u->aligned_input_bytes(l));
        const bool fits = outputs_[i] && need <= capacity_[i];
        // Release a buffer far larger than the need (reclaim rule: need * 10 < capacity).
        const bool reclaim = fits && need > 0 && need * 10 < capacity_[i];
        if (fits && !reclaim) {
            predictor_.predict_preallocation_shape(predictor_key(node_.name, i), l.get_shape(), bitwidth(l.dtype), true, l.format);
            if (outputs_[i]->layout() != l) {
                outputs_[i] = outputs_[i]->reinterpret(l);
                memory_changed_ = true;
            }
            ++counters_.reuses;
        } else {
            if (reclaim) ++counters_.reclaims;
            allocate_output(i, l, 0, need);
        }
    }
}

void PrimitiveInst::allocate_output(size_t i, const Layout& l, size_t same_as, size_t min_bytes) {
    const std::string id = predictor_key(node_.name, i);
    const size_t need = std::max(l.bytes(), min_bytes);
    size_t size = std::max(need, same_as);
    auto prediction = same_as ? std::pair<bool, Shape>{false, {}}
                              : predictor_.predict_preallocation_shape(id, l.get_shape(), bitwidth(l.dtype), false,
                                                                       l.format);
    if (prediction.first) {
        const size_t predicted = (prediction.second.count() * bitwidth(l.dtype) + 7) / 8;
        if (predicted > need && predictor_.can_preallocate(predicted)) size = predicted;
    }
    outputs_[i].reset();   // the old buffer can go back before the new one is taken
    MemoryPool::Grant grant;
    try {
        grant = pool_.acquire(size, index_, node_.is_dynamic);
    } catch (const Error& e) {
        throw e.with_context(ctx());
    }
    outputs_[i] = std::make_shared<Memory>(std::move(grant.buffer), l);
    // The node may use `size` bytes; the pool's record may be larger (size class).
    capacity_[i] = size;
    memory_changed_ = true;
    ++counters_.allocations;
    ++(grant.hit ? counters_.pool_hits : counters_.pool_misses);
    counters_.bytes_allocated += size;
}

}  // namespace dynrt
