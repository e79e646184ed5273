// A small well-formed module: op TM_OP (one f32 input, same-shaped output) with
// one cpu impl computing out = 2 * in + 1. Its Impl class and its code live in
// this module, so executing an impl after the registry is gone shows whether
// the library was kept mapped. With TM_THROW the entry point throws after
// staging its registrations (none of them may reach the registry).
#include <memory>
#include <stdexcept>

#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"

namespace {

using namespace dynrt;

class TwoXPlusOne : public Impl {
public:
    void execute(ExecContext& ctx) override {
        MappedMemory in(*ctx.inputs.at(0), ctx.stream);
        MappedMemory out(*ctx.outputs.at(0), ctx.stream);
        const size_t n = ctx.params.outputs.at(0).count();
        for (size_t i = 0; i < n; ++i) out.as<float>()[i] = 2.0f * in.as<float>()[i] + 1.0f;
    }
    std::string name() const override { return std::string(TM_OP) + "_two_x_plus_one"; }
    bool is_dynamic() const override { return true; }
};

void register_module(ModuleRegistrar& r) {
    OpDefinition def;
    def.name = TM_OP;
    def.doc = "test op: out = 2 * in + 1";
    def.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    r.add_op(def);

    ImplEntry e;
    e.name = "two_x_plus_one";
    e.impl_type = "cpu";
    e.shape_type = ShapeType::dynamic_shape;
    e.dtypes = {DataType::f32};
    e.create = [](const KernelParams&) -> std::unique_ptr<Impl> { return std::make_unique<TwoXPlusOne>(); };
    r.add_impl(TM_OP, e);
#ifdef TM_THROW
    throw std::runtime_error("deliberate failure after staging op " TM_OP);
#endif
}

}   // namespace

DYNRT_MODULE("tm_" TM_OP, register_module)
