// The one-node program builder.
#include "single_node.hpp"

namespace dynrt::tools {

std::string single_node_input_name(size_t k) { return "in" + std::to_string(k); }

SingleNodeInput node_input(const HostTensor& value, InputRole role, bool dynamic) {
    SingleNodeInput in;
    in.value = &value;
    in.constant = role == InputRole::constant || (role == InputRole::shape_values && !dynamic);
    if (!dynamic || role == InputRole::shape_values) in.layout = value.layout();
    else in.layout = Layout(PartialShape::dynamic_of_rank(value.shape().size()), value.dtype());
    return in;
}

KernelParams single_node_params(const Program& program, Engine* engine) {
    const Node& n = program.nodes()[program.node_index(kSingleNodeName)];
    KernelParams kp;
    kp.node = n.name;
    kp.op = &n.def->def;
    kp.attrs = &n.attrs;
    for (const NodeInput& in : n.inputs) kp.inputs.push_back(program.nodes()[in.node].out_layouts[in.output]);
    kp.outputs = n.out_layouts;
    kp.engine = engine;
    return kp;
}

std::shared_ptr<Program> build_single_node(std::shared_ptr<const Registry> registry, const SingleNode& node) {
    const size_t outputs = output_count(registry->op(node.op).def, node.attrs);
    auto program = std::make_shared<Program>(std::move(registry),
                                             node.program_name.empty() ? "single node " + node.op : node.program_name);
    std::vector<std::string> names;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
        const SingleNodeInput& in = node.inputs[k];
        names.push_back(single_node_input_name(k));
        if (in.constant) {
            if (!in.value) throw Error("constant input " + names.back() + " has no value", in.where);
            program->add_constant(names.back(), *in.value, in.where);
        } else {
            program->add_input(names.back(), in.layout, in.where);
        }
    }
    ErrorContext where = node.where;
    if (where.node.empty()) where.node = kSingleNodeName;
    if (where.op.empty()) where.op = node.op;
    program->add_node(kSingleNodeName, node.op, names, node.attrs, where);
    for (size_t k = 0; k < outputs; ++k)
        program->add_output(k == 0 ? std::string(kSingleNodeName)
                                   : std::string(kSingleNodeName) + ":" + std::to_string(k));
    program->build();
    return program;
}

void feed(InferRequest& request, const SingleNode& node) {
    for (size_t k = 0; k < node.inputs.size(); ++k)
        if (!node.inputs[k].constant && node.inputs[k].value)
            request.set_input(single_node_input_name(k), *node.inputs[k].value);
}

}   // namespace dynrt::tools
