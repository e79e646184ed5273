// assign: makes its input the new value of a request variable.
//
// OpTraits::writes_state: the flow runs no kernel; the output aliases the input
// and the input's buffer becomes the variable's value when the run ends (a
// read_value of the same run still sees the previous value). The host kernel
// (a copy) only serves callers that run the op outside a request.
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

void register_assign(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("assign", "Sets a request variable to the input (committed when the run ends)", 1, 1,
               {attr_string("variable", std::nullopt, {}, "name of the variable")}, [](const ShapeInferContext& ctx) {
                   Layout l = ctx.inputs.at(0);
                   l.padding = Padding{};
                   return std::vector<Layout>{l};
               });
    def.traits.writes_state = true;
    def.state_variable = [](const Attributes& attrs) { return attrs.get_string("variable"); };
    reg.add_op(def);
    add_host_impls(reg, "assign", [](HostCall& call) {
        std::memcpy(call.out_raw(0), call.in_raw(0), call.in_shape(0).count() * byte_size(call.in_type(0)));
    });
}

}   // namespace

DYNRT_MODULE("assign", register_assign)
