// Registers one cpu impl, TM_IMPL with priority TM_PRIORITY, of the op
// "tm_priority_op" (defined by the test itself): out = in + TM_ADD. Two copies
// with different names, priorities and addends show which impl the registry
// puts first and which the flow runs, whatever order they were loaded in.
#include <memory>

#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"

namespace {

using namespace dynrt;

class AddConstant : public Impl {
public:
    void execute(ExecContext& ctx) override {
        MappedMemory in(*ctx.inputs.at(0), ctx.stream);
        MappedMemory out(*ctx.outputs.at(0), ctx.stream);
        const size_t n = ctx.params.outputs.at(0).count();
        for (size_t i = 0; i < n; ++i) out.as<float>()[i] = in.as<float>()[i] + static_cast<float>(TM_ADD);
    }
    std::string name() const override { return TM_IMPL; }
    bool is_dynamic() const override { return true; }
};

void register_module(ModuleRegistrar& r) {
    ImplEntry e;
    e.name = TM_IMPL;
    e.priority = TM_PRIORITY;
    e.impl_type = "cpu";
    e.shape_type = ShapeType::dynamic_shape;
    e.dtypes = {DataType::f32};
    e.create = [](const KernelParams&) -> std::unique_ptr<Impl> { return std::make_unique<AddConstant>(); };
    r.add_impl("tm_priority_op", e);
}

}   // namespace

DYNRT_MODULE("tm_priority_" TM_IMPL, register_module)
