// Network (shared, compiled program) and InferRequest (one stream of inferences).
#include "dynrt/network.hpp"

#include <chrono>

#include "dynrt/compilation_context.hpp"
#include "dynrt/error.hpp"
#include "dynrt/impl_cache.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

std::shared_ptr<Network> Network::create(std::shared_ptr<const Program> program, EnginePtr engine,
                                         NetworkOptions options) {
    if (!program || !program->built()) throw Error("Network::create needs a built program");
    if (!engine) throw Error("Network::create needs an engine");
    return std::shared_ptr<Network>(new Network(std::move(program), std::move(engine), std::move(options)));
}

Network::Network(std::shared_ptr<const Program> program, EnginePtr engine, NetworkOptions options)
    : program_(std::move(program)), engine_(std::move(engine)), options_(std::move(options)),
      impl_cache_(std::make_unique<ImplCache>(options_.impl_cache_capacity)) {
    if (options_.async_compile) compile_ctx_ = std::make_unique<CompilationContext>(options_.compile_threads);
    upload_constants();
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
    stream_ = engine.create_stream();
    ShapePredictor::DeviceLimits limits;
    limits.max_alloc_bytes = engine.info().max_alloc_bytes;
    limits.global_mem_bytes = engine.info().global_mem_bytes;
    EnginePtr eng = network_->engine_ptr();
    limits.used_bytes = [eng] { return eng->used_bytes(); };
    predictor_ = std::make_unique<ShapePredictor>(network_->options().prealloc, limits);

    const Program& program = network_->program();
    const auto& nodes = program.nodes();
    insts_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
        insts_[i] = std::make_unique<PrimitiveInst>(*network_, *predictor_, *stream_, i);
    for (size_t i = 0; i < nodes.size(); ++i) {
        std::vector<PrimitiveInst*> deps, roots;
        for (const auto& in : nodes[i].inputs) deps.push_back(insts_[in.node].get());
        for (size_t r : nodes[i].shape_of_roots) roots.push_back(insts_[r].get());
        insts_[i]->set_dependencies(std::move(deps), std::move(roots));
    }
    for (size_t idx : program.inputs()) input_index_[nodes[idx].name] = idx;
    outputs_host_.resize(program.outputs().size());
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

void InferRequest::infer() {
    const auto t0 = std::chrono::steady_clock::now();
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
    try {
        for (size_t idx : program.order()) insts_[idx]->execute();
        stream_->finish();
        copy_outputs();
    } catch (...) {
        for (auto& inst : insts_) inst->begin_run();
        throw;
    }

    last_ = RunStats{};
    last_.nodes.reserve(insts_.size());
    for (size_t idx : program.order()) {
        const PrimitiveInst& inst = *insts_[idx];
        NodeStats ns;
        ns.node = inst.name();
        ns.op = inst.node().op;
        if (inst.impl() && inst.executed()) {
            ns.impl = inst.impl()->name();
            ns.dynamic_impl = inst.impl()->is_dynamic();
        }
        ns.counters = inst.counters();
        last_.totals += ns.counters;
        last_.nodes.push_back(std::move(ns));
    }
    last_.peak_bytes = engine.peak_bytes();
    last_.used_bytes = engine.used_bytes();
    last_.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cumulative_ += last_.totals;
    ++run_index_;
    for (auto& inst : insts_) inst->begin_run();
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
        auto prediction =
            predictor_->predict_preallocation_shape(id, l.get_shape(), bitwidth(l.dtype), fits, l.format);
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
        if (need > 0 && mem) mem->buffer()->read(*stream_, host.data(), mem->offset(), need);
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

}  // namespace dynrt
