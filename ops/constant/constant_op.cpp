// constant: data fixed when the program is built. Core uploads it once per
// network; there is nothing to compute, so the op registers no impls.
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"

namespace {

using namespace dynrt;

OpDefinition make_definition() {
    OpDefinition def;
    def.name = "constant";
    def.doc = "Constant tensor given when the program is built";
    def.min_inputs = 0;
    def.max_inputs = 0;
    // The layout is that of the value given to Program::add_constant, never
    // inferred: reaching this function means a caller treated a constant like a
    // computed node.
    def.infer = [](const ShapeInferContext&) -> std::vector<Layout> {
        throw Error("constant layouts come from the constant values");
    };
    def.traits.is_constant = true;
    return def;
}

void register_constant(ModuleRegistrar& reg) { reg.add_op(make_definition()); }

}  // namespace

DYNRT_MODULE("constant", register_constant)
