// The op "tm_scratch_op" (one f32 input, same-shaped output) whose cpu impl
// asks for scratch memory that depends on the shape and keeps per-request
// state: out[i] = 2 * in[i] + runs, where `runs` counts this state's
// executions. The input goes through scratch buffer 0 (n floats) on its way
// to the output, and buffer 1 (64 + n bytes) is filled completely, so a
// scratch buffer smaller than asked for shows up as a wrong result or an error.
#include <cstring>
#include <memory>
#include <stdexcept>

#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"

namespace {

using namespace dynrt;

struct RunCount : ImplState {
    int runs = 0;
};

class ThroughScratch : public Impl {
public:
    void execute(ExecContext& ctx) override {
        const size_t n = ctx.params.outputs.at(0).count();
        const std::vector<size_t> asked = scratch_bytes(ctx.params);
        if (!ctx.scratch || ctx.scratch->size() != asked.size()) throw std::runtime_error("scratch missing");
        for (size_t i = 0; i < asked.size(); ++i)
            if ((*ctx.scratch)[i]->layout().bytes() != asked[i] || (*ctx.scratch)[i]->capacity() < asked[i])
                throw std::runtime_error("scratch buffer " + std::to_string(i) + " is not the size asked for");
        auto* state = dynamic_cast<RunCount*>(ctx.state);
        if (!state) throw std::runtime_error("no state");
        ++state->runs;
        MappedMemory in(*ctx.inputs.at(0), ctx.stream);
        MappedMemory s0(*(*ctx.scratch)[0], ctx.stream);
        MappedMemory s1(*(*ctx.scratch)[1], ctx.stream);
        std::memset(s1.data(), 0x5a, asked[1]);
        for (size_t i = 0; i < n; ++i) s0.as<float>()[i] = 2.0f * in.as<float>()[i];
        MappedMemory out(*ctx.outputs.at(0), ctx.stream);
        for (size_t i = 0; i < n; ++i) out.as<float>()[i] = s0.as<float>()[i] + static_cast<float>(state->runs);
    }
    std::string name() const override { return "through_scratch"; }
    bool is_dynamic() const override { return true; }
    std::unique_ptr<ImplState> create_state() const override { return std::make_unique<RunCount>(); }
    std::vector<size_t> scratch_bytes(const KernelParams& p) const override {
        const size_t n = p.outputs.at(0).count();
        return {n * sizeof(float), 64 + n};
    }
};

void register_module(ModuleRegistrar& r) {
    OpDefinition def;
    def.name = "tm_scratch_op";
    def.doc = "test op: out = 2 * in + executions of this request's state, through scratch";
    def.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    r.add_op(def);
    ImplEntry e;
    e.name = "through_scratch";
    e.impl_type = "cpu";
    e.shape_type = ShapeType::dynamic_shape;
    e.dtypes = {DataType::f32};
    e.create = [](const KernelParams&) -> std::unique_ptr<Impl> { return std::make_unique<ThroughScratch>(); };
    r.add_impl("tm_scratch_op", e);
}

}   // namespace

DYNRT_MODULE("tm_scratch", register_module)
