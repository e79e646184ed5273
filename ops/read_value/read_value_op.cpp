// read_value: the value of a request variable (state kept across runs).
//
// The flow gives the variable's current value as this node's output once an
// assign wrote one (OpTraits::reads_state). Until then (first run, or after
// InferRequest::reset_state) this op computes the initial value: a copy of the
// optional init input, or a tensor of `init_shape` filled with `init_value`.
// Without either, reading before assignment is an error naming the variable.
// At graph build the output is the variable's partial layout: the `shape`
// attribute (-1 = dynamic dim), or the init input's rank with every dim dynamic.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

PartialShape declared_shape(const std::vector<int64_t>& dims) {
    std::vector<Dimension> d;
    for (int64_t v : dims) d.push_back(v < 0 ? Dimension::dynamic() : Dimension(v));
    return PartialShape(std::move(d));
}

std::vector<Layout> infer_read_value(const ShapeInferContext& ctx) {
    const std::string& var = ctx.attrs.get_string("variable");
    const std::vector<int64_t>& shape = ctx.attrs.get_ints("shape");
    const std::vector<int64_t>& init_shape = ctx.attrs.get_ints("init_shape");
    const bool has_init_input = !ctx.inputs.empty();
    const DataType dtype = has_init_input ? ctx.inputs[0].dtype : parse_data_type(ctx.attrs.get_string("dtype"));
    for (int64_t v : init_shape)
        if (v < 0) throw Error("init_shape of variable '" + var + "' has a negative dim " + std::to_string(v));
    if (!ctx.run_time) {
        if (!shape.empty()) return {Layout(declared_shape(shape), dtype)};
        if (has_init_input) return {Layout(PartialShape::dynamic_of_rank(ctx.inputs[0].shape.rank()), dtype)};
        if (!init_shape.empty()) return {Layout(PartialShape::dynamic_of_rank(init_shape.size()), dtype)};
        throw Error("variable '" + var + "' needs a `shape` attribute, an init input or an init_shape");
    }
    // Run time: the variable has no value yet; this is the initial value.
    Layout init;
    if (has_init_input) {
        init = ctx.inputs[0];
        init.padding = Padding{};
    } else if (!init_shape.empty()) {
        init = Layout(PartialShape(Shape(init_shape)), dtype);
    } else {
        throw Error("variable '" + var +
                    "' is read before any assign, and this read_value has neither an init input nor an "
                    "init_shape attribute to give its initial value");
    }
    if (!shape.empty() && !declared_shape(shape).compatible(init.get_shape()))
        throw Error("initial value " + init.to_string() + " of variable '" + var + "' does not fit its shape " +
                    declared_shape(shape).to_string());
    return {init};
}

void read_value_kernel(HostCall& call) {
    const size_t n = call.out_shape(0).count();
    if (call.num_inputs() > 0 && call.in_raw(0)) {
        std::memcpy(call.out_raw(0), call.in_raw(0), n * byte_size(call.out_type(0)));
        return;
    }
    const double v = call.attrs().get_float("init_value");
    for (size_t i = 0; i < n; ++i) call.set(0, i, v);
}

void register_read_value(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "read_value", "Value of a request variable (initial value until assigned)", 0, 1,
        {attr_string("variable", std::nullopt, {}, "name of the variable"),
         attr_ints("shape", std::vector<int64_t>{}, "partial shape of the variable; -1 = dynamic dim"),
         attr_string("dtype", std::string("f32"), {}, "data type when there is no init input"),
         attr_ints("init_shape", std::vector<int64_t>{}, "shape of the initial value when there is no init input"),
         attr_float("init_value", 0.0, "value of every element of the initial value")},
        infer_read_value);
    def.traits.reads_state = true;
    def.state_variable = [](const Attributes& attrs) { return attrs.get_string("variable"); };
    reg.add_op(def);
    add_host_impls(reg, "read_value", read_value_kernel);
}

}   // namespace

DYNRT_MODULE("read_value", register_read_value)
