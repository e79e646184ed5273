// parameter: a graph input. The request writes its data; there is nothing to
// compute, so the op registers no impls and core never executes it.
#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"

namespace {

using namespace dynrt;

OpDefinition make_definition() {
    OpDefinition def;
    def.name = "parameter";
    def.doc = "Graph input: its layout is the program's declared input layout, its data the request's";
    def.min_inputs = 0;
    def.max_inputs = 0;
    // The layout is declared by Program::add_input, never inferred: reaching this
    // function means a caller treated an input like a computed node.
    def.infer = [](const ShapeInferContext&) -> std::vector<Layout> {
        throw Error("parameter layouts come from the program's inputs");
    };
    def.traits.is_input = true;
    return def;
}

void register_parameter(ModuleRegistrar& reg) { reg.add_op(make_definition()); }

}  // namespace

DYNRT_MODULE("parameter", register_parameter)
