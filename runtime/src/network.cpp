// Network (shared, compiled program) and InferRequest (one stream of inferences).
#include "dynrt/network.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include "dynrt/compilation_context.hpp"
#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

namespace {

// A failed allocation anywhere in a node's flow (shape inference, value reads,
// impl creation, execution) becomes a dynrt::Error naming the node, what its
// outputs need and the limits in force.
void execute_node(PrimitiveInst& inst) {
    try {
        inst.execute();
    } catch (const std::bad_alloc&) {
        throw inst.out_of_memory_error("while running the node");
    }
}

// Nodes whose output may be another node's buffer: a layout-only op
// (OpTraits::view) views input 0's buffer, a fused node aliases its
// producer's. The buffer then lives as long as every alias, and an alias of
// an alias (a view of a fused node's output, a view of a view) carries the
// lifetime back to the node that owns the buffer: every alias extends its
// owner's lifetime, not only its direct input's. Extending a lifetime is
// always safe, so an alias counts whether or not it aliases in a given run.
void extend_to_buffer_owners(const Network& network, const std::vector<size_t>& order,
                             std::vector<MemoryPool::Lifetime>& lt) {
    const std::vector<Node>& nodes = network.program().nodes();
    std::vector<size_t> owner(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) owner[i] = i;
    for (const size_t i : order) {   // producers before their users
        const Node& n = nodes[i];
        if (!n.is_op()) continue;
        if (network.fused_into(i) != Network::kNotFused) owner[i] = owner[network.fused_into(i)];
        else if (n.def->def.traits.view && !n.inputs.empty()) owner[i] = owner[n.inputs[0].node];
    }
    for (const size_t i : order) {
        if (owner[i] == i) continue;
        MemoryPool::Lifetime& o = lt[owner[i]];
        o.first = std::min(o.first, lt[i].first);
        o.last = std::max(o.last, lt[i].last);
        o.pinned = o.pinned || lt[i].pinned;
    }
}

// A dense row-major copy of a static layout's value held by `m` (read
// through the lower/upper padding of a view, or a blocked format).
HostTensor read_dense(Stream& stream, const Memory& m) {
    const Layout& l = m.layout();
    const Shape s = l.get_shape();
    HostTensor out(l.dtype, s);
    if (out.bytes() == 0) return out;
    if (l.padding.empty() && !is_blocked(l.format)) {
        m.buffer()->read(stream, out.data(), m.offset(), out.bytes());
        return out;
    }
    std::vector<uint8_t> storage(l.bytes());
    m.buffer()->read(stream, storage.data(), m.offset(), storage.size());
    const size_t esize = byte_size(l.dtype);
    auto* dst = static_cast<uint8_t*>(out.data());
    if (l.padding.empty()) {   // blocked
        for (size_t i = 0; i < s.count(); ++i)
            std::memcpy(dst + i * esize, storage.data() + storage_index(s, l.format, i) * esize, esize);
        return out;
    }
    if (is_blocked(l.format)) throw Error("cannot read a padded blocked layout " + l.to_string());
    const Shape padded = l.padded_shape();
    const size_t rank = s.rank();
    std::vector<size_t> stride(rank, 1);
    for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * static_cast<size_t>(padded[d]);
    for (size_t i = 0; i < s.count(); ++i) {
        size_t rest = i, at = 0;
        for (size_t d = rank; d-- > 0;) {
            const size_t extent = static_cast<size_t>(s[d]);
            const size_t lower = l.padding.lower.empty() ? 0 : static_cast<size_t>(l.padding.lower[d]);
            at += (rest % extent + lower) * stride[d];
            rest /= extent;
        }
        std::memcpy(dst + i * esize, storage.data() + at * esize, esize);
    }
    return out;
}

}   // namespace

std::shared_ptr<Network> Network::create(std::shared_ptr<const Program> program, EnginePtr engine,
                                         NetworkOptions options) {
    if (!program || !program->built()) throw Error("Network::create needs a built program");
    if (!engine) throw Error("Network::create needs an engine");
    return std::shared_ptr<Network>(new Network(std::move(program), std::move(engine), options));
}

Network::Network(std::shared_ptr<const Program> program, EnginePtr engine, NetworkOptions options)
    : program_(std::move(program)), engine_(std::move(engine)), options_(options),
      impl_cache_(std::make_unique<ImplCache>(options_.impl_cache_capacity)) {
    if (options_.async_compile) compile_ctx_ = std::make_unique<CompilationContext>(options_.compile_threads);
    upload_constants();
    if (options_.verbose)
        for (const FoldedNode& f : program_->folded())
            std::fprintf(stderr, "[dynrt] %s (%s): folded into '%s' at build (%s)\n", f.node.c_str(), f.op.c_str(),
                         f.into.c_str(), f.pass.c_str());
    plan_fusion();
    if (options_.reorder_weights) {
        const Registry& reg = *program_->registry();
        for (const std::string& name : reg.op_names()) {
            const RegisteredOp* op = reg.find_op(name);
            if (op && op->def.convert_format) {
                format_converter_ = op;
                break;
            }
        }
    }
}

// Fusion pass: starting at a node whose op accepts fused post-ops, follow the
// single-user chain while the user is a fusable elementwise op. A link needs:
// the current node has one output, exactly one user, is not a network output
// (its value must survive), and the user reads it through exactly one input;
// nodes of shape_of subgraphs, state readers/writers, inputs, constants and
// data-dependent ops never take part. Whether the fused kernel can serve the
// current shapes is decided per run (PrimitiveInst::prepare_fusion). A chain
// takes at most kMaxFusedOps nodes (oneDNN's own limit on post-ops is 32); the
// node after a full chain starts a chain of its own where it can.
void Network::plan_fusion() {
    const auto& nodes = program_->nodes();
    fused_chain_.assign(nodes.size(), {});
    fused_into_.assign(nodes.size(), kNotFused);
    fused_main_.assign(nodes.size(), 0);
    if (!options_.fusion) return;
    auto plain_node = [](const Node& n) {
        if (!n.is_op()) return false;
        const OpTraits& t = n.def->def.traits;
        return !t.shape_of_like && !t.data_dependent_output && !t.reads_state && !t.writes_state &&
               !n.in_shape_of_subgraph && n.out_layouts.size() == 1;
    };
    for (size_t idx : program_->order()) {
        const Node& p = nodes[idx];
        if (fused_into_[idx] != kNotFused || !plain_node(p) || !p.def->def.traits.accepts_fused_ops) continue;
        size_t cur = idx;
        for (;;) {
            const Node& c = nodes[cur];
            if (c.users.size() != 1 || c.is_output || fused_chain_[idx].size() >= kMaxFusedOps) break;
            const size_t u = c.users[0];
            const Node& un = nodes[u];
            if (!plain_node(un) || !un.def->def.traits.fusable || fused_into_[u] != kNotFused) break;
            size_t reads = 0, main = 0;
            for (size_t i = 0; i < un.inputs.size(); ++i)
                if (un.inputs[i].node == cur) {
                    ++reads;
                    main = i;
                }
            if (reads != 1 || un.out_layouts[0].dtype != p.out_layouts[0].dtype) break;
            fused_into_[u] = idx;
            fused_main_[u] = main;
            fused_chain_[idx].push_back(u);
            cur = u;
        }
    }
}

Network::~Network() {
    // Background builds write into the impl cache: stop them first.
    compile_ctx_.reset();
}

void Network::upload_constants() {
    const auto& nodes = program_->nodes();
    constants_.assign(nodes.size(), nullptr);
    auto stream = engine_->create_stream();
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].constant) continue;
        const HostTensor& value = *nodes[i].constant;
        std::shared_ptr<Buffer> buffer;
        try {
            buffer = engine_->allocate(value.bytes());
        } catch (const Error& e) {
            ErrorContext c = nodes[i].where;
            c.node = nodes[i].name;
            throw e.with_context(c);
        }
        if (value.bytes() > 0) buffer->write(*stream, value.data(), 0, value.bytes());
        constants_[i] = std::make_shared<Memory>(std::move(buffer), value.layout());
    }
    stream->finish();
}

MemoryPtr Network::constant_memory(size_t node) const { return node < constants_.size() ? constants_[node] : nullptr; }

void Network::wait_for_background_builds() const {
    if (compile_ctx_) compile_ctx_->wait_all();
}

// ---------------------------------------------------------------------------

InferRequest::InferRequest(std::shared_ptr<Network> network) : network_(std::move(network)) {
    Engine& engine = network_->engine();
    const NetworkOptions& opt = network_->options();
    stream_ = engine.create_stream();
    MemoryPool::Options pool_opt;
    pool_opt.reuse = opt.memory_pool;
    pool_opt.budget_bytes = opt.memory_budget_bytes;
    pool_ = std::make_unique<MemoryPool>(network_->engine_ptr(), pool_opt);

    // can_preallocate sees the device's bytes in use; under a budget it sees the
    // request's pool against the budget instead.
    ShapePredictor::DeviceLimits limits;
    limits.max_alloc_bytes = engine.info().max_alloc_bytes;
    limits.global_mem_bytes = engine.info().global_mem_bytes;
    EnginePtr eng = network_->engine_ptr();
    limits.used_bytes = [eng] { return eng->used_bytes(); };
    if (opt.memory_budget_bytes) {
        limits.global_mem_bytes = opt.memory_budget_bytes;
        MemoryPool* pool = pool_.get();
        limits.used_bytes = [pool] { return pool->used_bytes(); };
    }
    predictor_ = std::make_unique<ShapePredictor>(opt.prealloc, limits);

    const Program& program = network_->program();
    const auto& nodes = program.nodes();
    insts_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) insts_[i] = std::make_unique<PrimitiveInst>(*this, i);
    for (size_t i = 0; i < nodes.size(); ++i) {
        std::vector<PrimitiveInst*> deps, roots;
        for (const auto& in : nodes[i].inputs) deps.push_back(insts_[in.node].get());
        for (size_t r : nodes[i].shape_of_roots) roots.push_back(insts_[r].get());
        insts_[i]->set_dependencies(std::move(deps), std::move(roots));
        std::vector<PrimitiveInst*> users;
        for (size_t u : nodes[i].users) users.push_back(insts_[u].get());
        insts_[i]->set_users(std::move(users));
    }
    for (size_t idx : program.inputs()) input_index_[nodes[idx].name] = idx;
    outputs_host_.resize(program.outputs().size());
    plan();
}

// In-place targets whose producers can all write into them, the execution order
// (such producers moved right before their target, so that the first of them can
// infer every producer's shape) and the lifetimes the memory pool shares by.
void InferRequest::plan() {
    const std::vector<std::vector<size_t>> producers_of = plan_inplace_targets();
    plan_order(producers_of);
    wire_fusion();
    wire_inplace(producers_of);
    plan_lifetimes(producers_of);
}

// For each in-place target, the producers that write into it (empty: none).
std::vector<std::vector<size_t>> InferRequest::plan_inplace_targets() const {
    const auto& nodes = network_->program().nodes();
    std::vector<std::vector<size_t>> producers_of(nodes.size());
    if (!network_->options().inplace_concat) return producers_of;
    for (size_t c = 0; c < nodes.size(); ++c) {
        const Node& n = nodes[c];
        if (!n.is_op() || !n.def->def.inplace_axis || !n.is_dynamic || n.in_shape_of_subgraph ||
            n.out_layouts.size() != 1 || n.out_layouts[0].shape.rank() == 0)
            continue;
        bool ok = !n.inputs.empty();
        std::vector<size_t> prods;
        for (const NodeInput& in : n.inputs) {
            ok = ok && in.output == 0 && can_write_in_place(in.node, n) &&
                 std::find(prods.begin(), prods.end(), in.node) == prods.end();
            prods.push_back(in.node);
        }
        if (ok) producers_of[c] = std::move(prods);
    }
    return producers_of;
}

// A producer writes into the target only when nobody else reads its output,
// its output size is known before it runs, and it is not a target itself (no
// cascades).
bool InferRequest::can_write_in_place(size_t producer, const Node& target) const {
    const Node& p = network_->program().nodes()[producer];
    if (!p.is_op()) return false;
    const OpTraits& t = p.def->def.traits;
    return p.out_layouts.size() == 1 && p.users.size() == 1 && !p.is_output && !t.data_dependent_output &&
           !t.shape_of_like && !t.view && !t.writes_state && !p.in_shape_of_subgraph && !p.def->def.inplace_axis &&
           network_->fused_into(producer) == Network::kNotFused && network_->fused_chain(producer).empty() &&
           p.out_layouts[0].dtype == target.out_layouts[0].dtype;
}

// The program order, with in-place producers right before their target. A
// fused chain runs as one block right before its last node: the producer
// applies the post-ops, so their other inputs must be ready when it runs (they
// are: each came before its fused op in the program order).
void InferRequest::plan_order(const std::vector<std::vector<size_t>>& producers_of) {
    const Program& program = network_->program();
    const size_t count = program.nodes().size();
    std::vector<bool> moved(count, false);
    for (const auto& prods : producers_of)
        for (size_t p : prods) moved[p] = true;
    std::vector<std::vector<size_t>> chain_before(count);
    for (size_t p = 0; p < count; ++p) {
        const std::vector<size_t>& chain = network_->fused_chain(p);
        if (chain.empty()) continue;
        std::vector<size_t> block{p};
        block.insert(block.end(), chain.begin(), chain.end() - 1);
        for (size_t m : block) moved[m] = true;
        chain_before[chain.back()] = std::move(block);
    }
    exec_order_.clear();
    for (size_t idx : program.order()) {
        if (moved[idx]) continue;
        for (size_t p : chain_before[idx]) exec_order_.push_back(p);
        for (size_t p : producers_of[idx]) exec_order_.push_back(p);
        exec_order_.push_back(idx);
    }
}

void InferRequest::wire_fusion() {
    for (size_t p = 0; p < insts_.size(); ++p) {
        const std::vector<size_t>& chain = network_->fused_chain(p);
        if (chain.empty()) continue;
        std::vector<PrimitiveInst*> fused;
        std::vector<size_t> mains;
        for (size_t f : chain) {
            fused.push_back(insts_[f].get());
            mains.push_back(network_->fused_main_input(f));
            insts_[f]->set_fused_into(insts_[p].get());
        }
        insts_[p]->set_fused(std::move(fused), std::move(mains));
    }
}

void InferRequest::wire_inplace(const std::vector<std::vector<size_t>>& producers_of) {
    const auto& nodes = network_->program().nodes();
    for (size_t c = 0; c < nodes.size(); ++c) {
        if (producers_of[c].empty()) continue;
        std::vector<PrimitiveInst*> prods;
        for (size_t p : producers_of[c]) {
            prods.push_back(insts_[p].get());
            insts_[p]->set_inplace_target(insts_[c].get());
        }
        const size_t rank = nodes[c].out_layouts[0].shape.rank();
        insts_[c]->set_inplace_producers(std::move(prods), nodes[c].def->def.inplace_axis(nodes[c].attrs, rank));
    }
}

// Lifetimes: from the node's position to its last user's. Values that must
// outlive the run (outputs, inputs, constants, state, shape_of values kept
// across runs) are pinned.
void InferRequest::plan_lifetimes(const std::vector<std::vector<size_t>>& producers_of) {
    const auto& nodes = network_->program().nodes();
    std::vector<size_t> pos(nodes.size(), 0);
    for (size_t k = 0; k < exec_order_.size(); ++k) pos[exec_order_[k]] = k;
    auto writes_state = [&](size_t u) { return nodes[u].def->def.traits.writes_state; };
    std::vector<MemoryPool::Lifetime> lt(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        MemoryPool::Lifetime& l = lt[i];
        l.first = pos[i];
        l.last = pos[i];
        for (size_t u : n.users) l.last = std::max(l.last, pos[u]);
        for (size_t p : producers_of[i]) l.first = std::min(l.first, pos[p]);
        bool pinned = n.is_output || !n.is_op() || n.in_shape_of_subgraph;
        if (n.is_op()) {
            const OpTraits& t = n.def->def.traits;
            pinned = pinned || t.shape_of_like || t.reads_state || t.writes_state;
        }
        for (size_t u : n.users) pinned = pinned || writes_state(u);
        l.pinned = pinned;
    }
    // A producer running its fused chain holds the chain's result, and a view
    // holds its input's buffer: each such buffer lives as long as the
    // aliases reading it.
    extend_to_buffer_owners(*network_, exec_order_, lt);
    pool_->set_lifetimes(std::move(lt));
}

InferRequest::~InferRequest() {
    if (stream_) stream_->finish();
}

void InferRequest::set_input(const std::string& name, const HostTensor& value) {
    auto it = input_index_.find(name);
    if (it == input_index_.end()) {
        std::string known;
        for (const auto& kv : input_index_) known += (known.empty() ? "" : ", ") + kv.first;
        throw Error("unknown input '" + name + "' (inputs: " + known + ")", ErrorContext{});
    }
    insts_[it->second]->set_input_data(value);
}

void InferRequest::set_profiling(bool on) {
    profiling_ = on;
    for (auto& inst : insts_) inst->set_profiling(on);
}

namespace {

uint64_t ns_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

}   // namespace

void InferRequest::infer() {
    const auto t0 = std::chrono::steady_clock::now();
    run_start_ = t0;
    const Program& program = network_->program();
    Engine& engine = network_->engine();
    for (const auto& kv : input_index_) {
        if (!insts_[kv.second]->initialized()) {
            ErrorContext c = program.nodes()[kv.second].where;
            c.node = kv.first;
            throw Error("input '" + kv.first + "' was not set", c);
        }
    }
    engine.reset_peak();
    pool_->reset_peak();
    staged_.clear();
    std::chrono::steady_clock::time_point nodes_start, submit_end, finished, copied;
    try {
        const bool device_clock = profiling_ && device_clock_;
        uint64_t device_ns = device_clock ? device_clock_() : 0;
        nodes_start = std::chrono::steady_clock::now();
        for (size_t idx : exec_order_) {
            PrimitiveInst& inst = *insts_[idx];
            execute_node(inst);
            if (profiling_) inst.wait_profiled();
            if (device_clock) {
                const uint64_t now = device_clock_();
                inst.set_device_ns(now - device_ns);
                device_ns = now;
            }
            if (observer_) observe(idx);
        }
        submit_end = std::chrono::steady_clock::now();
        stream_->finish();
        finished = std::chrono::steady_clock::now();
        copy_outputs();
        copied = std::chrono::steady_clock::now();
    } catch (...) {
        // The variables keep their values: a failed run assigns nothing.
        staged_.clear();
        for (auto& inst : insts_) inst->begin_run();
        throw;
    }
    const uint64_t live = tensor_bytes();
    for (auto& kv : staged_) variables_[kv.first] = std::move(kv.second);
    staged_.clear();

    update_report();
    last_.peak_bytes = engine.peak_bytes();
    last_.used_bytes = engine.used_bytes();
    last_.pool_peak_bytes = pool_->peak_bytes();
    last_.tensor_bytes = live;
    last_.folded_nodes = network_->program().folded().size();
    pool_->end_run();
    last_.pool_bytes = pool_->used_bytes();
    cumulative_ += last_.totals;
    ++run_index_;
    for (auto& inst : insts_) inst->begin_run();
    const auto end = std::chrono::steady_clock::now();
    if (profiling_) {
        last_.profile.on = true;
        last_.profile.inputs_ns = ns_between(t0, nodes_start);
        last_.profile.finish_ns = ns_between(submit_end, finished);
        last_.profile.outputs_ns = ns_between(finished, copied);
        last_.profile.report_ns = ns_between(copied, end);
    }
    last_.host_ms = std::chrono::duration<double, std::milli>(end - t0).count();
    last_.submit_ms = std::chrono::duration<double, std::milli>(submit_end - t0).count();
}

// The report is rebuilt in place: one entry per node in program order, whose
// node and op names are set once and whose impl name is asked for only when
// the node's impl changed (no strings built per node and run).
void InferRequest::update_report() {
    std::vector<NodeStats> nodes = std::move(last_.nodes);
    last_ = RunStats{};
    const std::vector<size_t>& order = network_->program().order();
    if (nodes.size() != order.size()) {
        nodes.assign(order.size(), NodeStats{});
        report_impls_.assign(order.size(), nullptr);
        for (size_t k = 0; k < order.size(); ++k) {
            nodes[k].node = insts_[order[k]]->name();
            nodes[k].op = insts_[order[k]]->node().op;
        }
    }
    for (size_t k = 0; k < order.size(); ++k) {
        const PrimitiveInst& inst = *insts_[order[k]];
        NodeStats& ns = nodes[k];
        if (!inst.fused_away() && inst.impl() && inst.executed()) {
            if (report_impls_[k] != inst.impl()) {
                ns.impl = inst.impl()->name();
                ns.dynamic_impl = inst.impl()->is_dynamic();
                report_impls_[k] = inst.impl();
            }
        } else {
            report_impls_[k].reset();
            // "fused": ran inside its producer's impl; "view": its output viewed its input.
            ns.impl = inst.fused_away() ? "fused" : inst.viewing() && inst.executed() ? "view" : "";
            ns.dynamic_impl = false;
        }
        ns.counters = inst.counters();
        ns.times = inst.times();
        last_.totals += ns.counters;
        last_.profile.nodes_ns += ns.times.total();   // 0 unless profiled
    }
    last_.nodes = std::move(nodes);
}

// The outputs of node `idx` right after its step (set_observer). The
// producer of an active fused chain and every fused node but the last hold
// the chain's result, not their own value.
void InferRequest::observe(size_t idx) {
    const PrimitiveInst& inst = *insts_[idx];
    const auto& nodes = network_->program().nodes();
    const Node& n = inst.node();
    std::string absorbed;
    if (inst.fused_active()) {
        absorbed = "fusion: computed inside '" + n.name + "' with its fused chain up to '" +
                   nodes[network_->fused_chain(idx).back()].name + "'";
    } else if (inst.fused_away()) {
        const size_t p = network_->fused_into(idx);
        const size_t last = network_->fused_chain(p).back();
        if (last != idx)
            absorbed = "fusion: fused into '" + nodes[p].name + "', whose kernel computes the chain up to '" +
                       nodes[last].name + "'";
    }
    stream_->finish();
    ObservedOutput o;
    o.node = idx;
    o.name = n.name;
    o.op = n.op;
    for (size_t i = 0; i < n.out_layouts.size(); ++i) {
        const MemoryPtr& m = inst.output_memory(i);
        o.output = i;
        o.layout = m ? m->layout() : inst.output_layout(i);
        o.absorbed = absorbed;
        o.value = nullptr;
        HostTensor value;
        if (absorbed.empty()) {
            if (o.layout.is_static() && (m || o.layout.count() == 0)) {
                value = m ? read_dense(*stream_, *m) : HostTensor(o.layout.dtype, o.layout.get_shape());
                o.value = &value;
            } else {
                o.absorbed = "no value: the node has no buffer this run";
            }
        }
        observer_(o);
    }
}

uint64_t InferRequest::tensor_bytes() const {
    // The buffers counted matter only to tell which variables they already
    // cover: collected only when there are variables (this runs every infer).
    const bool track = !variables_.empty();
    std::vector<const Buffer*> counted;
    uint64_t sum = 0;
    // Elements of a static layout from its dims (Layout::count() builds a Shape).
    auto logical = [](const Layout& l) {
        uint64_t n = byte_size(l.dtype);
        for (const Dimension& d : l.shape) n *= static_cast<uint64_t>(d.min());
        return n;
    };
    for (const auto& inst : insts_) {
        // Views of someone else's data: state readers and writers alias the
        // variable / their input, in-place producers the target's buffer.
        const Node& n = inst->node();
        if (n.is_op() && (n.def->def.traits.reads_state || n.def->def.traits.writes_state)) continue;
        if (inst->fused_away() || inst->viewing()) continue;   // its output is its producer's buffer
        if (inst->node().users.size() == 1 && insts_[inst->node().users[0]]->inplace_active()) continue;
        for (size_t i = 0; i < inst->node().out_layouts.size(); ++i) {
            const MemoryPtr& m = inst->output_memory(i);
            if (!m || !inst->output_layout(i).is_static()) continue;
            sum += logical(inst->output_layout(i));
            if (track) counted.push_back(m->buffer().get());
        }
    }
    std::sort(counted.begin(), counted.end());
    for (const auto& kv : variables_)
        if (kv.second && !std::binary_search(counted.begin(), counted.end(), kv.second->buffer().get()))
            sum += logical(kv.second->layout());
    return sum;
}

void InferRequest::reset_state() {
    variables_.clear();
    staged_.clear();
    for (auto& inst : insts_) inst->on_state_reset();
}

std::vector<std::string> InferRequest::state_names() const {
    std::vector<std::string> names;
    for (const auto& kv : variables_) names.push_back(kv.first);
    return names;
}

HostTensor InferRequest::get_state(const std::string& variable) const {
    auto it = variables_.find(variable);
    if (it == variables_.end() || !it->second) {
        std::string known;
        for (const auto& kv : variables_) known += (known.empty() ? "" : ", ") + kv.first;
        throw Error("variable '" + variable +
                    "' has no value (assigned variables: " + (known.empty() ? std::string("none") : known) + ")");
    }
    const Memory& m = *it->second;
    const Layout& l = m.layout();
    HostTensor t(l.dtype, l.get_shape());
    if (l.padding.empty()) {
        if (t.bytes() > 0) m.buffer()->read(*stream_, t.data(), m.offset(), t.bytes());
        return t;
    }
    throw Error("variable '" + variable + "' holds a padded view " + l.to_string() + "; cannot read it densely");
}

MemoryPtr InferRequest::variable(const std::string& name) const {
    auto it = variables_.find(name);
    return it == variables_.end() ? nullptr : it->second;
}

void InferRequest::stage_assign(const std::string& name, MemoryPtr value, const ErrorContext& where) {
    if (!staged_.emplace(name, std::move(value)).second)
        throw Error("variable '" + name + "' is assigned twice in one run", where);
}

// Outputs are copied into request-owned host tensors whose storage grows through
// the request's ShapePredictor, like device buffers do.
void InferRequest::copy_outputs() {
    const Program& program = network_->program();
    for (size_t k = 0; k < program.outputs().size(); ++k) {
        const NodeInput& o = program.outputs()[k];
        const PrimitiveInst& inst = *insts_[o.node];
        const MemoryPtr& mem = inst.output_memory(o.output);
        const Layout& l = inst.output_layout(o.output);
        HostTensor& host = outputs_host_[k];
        const size_t need = l.bytes();
        const std::string id = "output:" + program.output_names()[k];
        const bool fits = need <= host.capacity_bytes();
        auto prediction = predictor_->predict_preallocation_shape(id, l.get_shape(), bitwidth(l.dtype), fits, l.format);
        if (!fits) {
            size_t size = need;
            if (prediction.first) {
                const size_t predicted = (prediction.second.count() * bitwidth(l.dtype) + 7) / 8;
                if (predicted > need) size = predicted;
            }
            host = HostTensor();
            host.reserve_bytes(size);
        }
        host.reset(l.dtype, l.get_shape());
        if (need > 0 && mem) {
            if (!is_blocked(l.format)) {
                mem->buffer()->read(*stream_, host.data(), mem->offset(), need);
            } else {
                // A blocked output (e.g. a reorder's) is given back row-major.
                std::vector<uint8_t> storage(need);
                mem->buffer()->read(*stream_, storage.data(), mem->offset(), need);
                const Shape s = l.get_shape();
                const size_t esize = byte_size(l.dtype);
                auto* dst = static_cast<uint8_t*>(host.data());
                for (size_t i = 0; i < s.count(); ++i)
                    std::memcpy(dst + i * esize, storage.data() + storage_index(s, l.format, i) * esize, esize);
            }
        }
    }
}

const HostTensor& InferRequest::output(size_t index) const {
    if (index >= outputs_host_.size()) throw Error("output index " + std::to_string(index) + " out of range");
    if (run_index_ == 0) throw Error("no inference has run yet");
    return outputs_host_[index];
}

const HostTensor& InferRequest::output(const std::string& name) const {
    const auto& names = network_->program().output_names();
    for (size_t k = 0; k < names.size(); ++k)
        if (names[k] == name) return output(k);
    throw Error("unknown output '" + name + "'");
}

HostTensor InferRequest::get_output(const std::string& name) const { return output(name); }
HostTensor InferRequest::get_output(size_t index) const { return output(index); }

Layout InferRequest::node_layout(const std::string& node, size_t output_index) const {
    return insts_[network_->program().node_index(node)]->output_layout(output_index);
}

PrimitiveInst& InferRequest::inst(const std::string& node) const {
    return *insts_[network_->program().node_index(node)];
}

}   // namespace dynrt
