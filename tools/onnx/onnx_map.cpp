// ONNX node -> dynrt op and attributes, through the import rules the loaded op
// modules declare (OpDefinition::imports, dynrt/op_import.hpp). The importer
// checks the node's input and output counts against the rule before the rule
// reads them; every attribute a rule does not understand makes the node
// unsupported (with the reason), so nothing passes by ignoring an attribute.
#include <algorithm>
#include <map>
#include <utility>

#include "dynrt/error.hpp"
#include "onnx_import.hpp"

namespace dynrt::onnx {

namespace {

bool default_domain(const OnnxNode& node) { return node.domain.empty() || node.domain == "ai.onnx"; }

FoundImport find_rule(const Registry& registry, const OnnxNode& node) {
    // An op_type of the default domain never holds a dot: "com.microsoft.X"
    // as an ai.onnx op_type must not reach the rule of com.microsoft's X.
    if (default_domain(node) && node.op_type.find('.') != std::string::npos) return {};
    return registry.find_import("onnx", rule_name(node));
}

ErrorContext node_context(const OnnxNode& node) {
    ErrorContext c;
    c.op = node.op_type;
    c.node = node.name.empty() ? node.op_type : node.name;
    return c;
}

[[noreturn]] void unknown_op(const Registry& registry, const OnnxNode& node, int64_t opset) {
    // The claimed ops by domain, ai.onnx first.
    std::map<std::string, std::string> by_domain;
    by_domain["ai.onnx"];
    for (const auto& kv : claimed_ops(registry)) {
        const auto [domain, op] = split_rule_name(kv.first);
        std::string& list = by_domain[domain.empty() ? "ai.onnx" : domain];
        list += (list.empty() ? "" : ", ") + op;
    }
    std::string known = "in domain 'ai.onnx': " + (by_domain["ai.onnx"].empty() ? "nothing" : by_domain["ai.onnx"]);
    for (const auto& [domain, list] : by_domain)
        if (domain != "ai.onnx") known += "; in domain '" + domain + "': " + list;
    throw Error("unknown ONNX op '" + (node.domain.empty() ? "" : node.domain + ".") + node.op_type + "' (domain '" +
                    (node.domain.empty() ? std::string("ai.onnx") : node.domain) + "', opset " + std::to_string(opset) +
                    "; the loaded modules map, " + known + ")",
                node_context(node));
}

std::string arity(const ImportRule& rule) {
    if (rule.max_inputs == kAnyInputs) return std::to_string(rule.min_inputs) + " or more inputs";
    if (rule.min_inputs == rule.max_inputs)
        return std::to_string(rule.min_inputs) + (rule.min_inputs == 1 ? " input" : " inputs");
    return std::to_string(rule.min_inputs) + ".." + std::to_string(rule.max_inputs) + " inputs";
}

// Input counts before any rule indexes the inputs: a MatMul with one input is
// malformed ONNX, an error naming the node and the op.
void check_inputs(const ImportRule& rule, const OnnxNode& node, const std::vector<MapInput>& inputs) {
    auto fail = [&](const std::string& why) {
        ErrorContext ec = node_context(node);
        ec.field = "input";
        throw Error(
            "ONNX node '" + ec.node + "' (" + node.op_type + ") " + why + "; " + node.op_type + " takes " + arity(rule),
            ec);
    };
    const size_t given = std::min(node.inputs.size(), inputs.size());
    if (given < rule.min_inputs || node.inputs.size() > rule.max_inputs)
        fail("has " + std::to_string(node.inputs.size()) + (node.inputs.size() == 1 ? " input" : " inputs"));
    for (size_t k = 0; k < rule.min_inputs; ++k)
        if (!inputs[k].present) fail("has no input " + std::to_string(k) + " (it is empty or unknown)");
}

ImportNode import_node(const OnnxNode& node, int64_t opset, const std::vector<MapInput>& inputs) {
    ImportNode n;
    n.name = node.name.empty() ? node.op_type : node.name;
    n.op_type = node.op_type;
    n.opset = opset;
    n.attrs = node.attrs;
    n.inputs.resize(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
        n.inputs[k].present = inputs[k].present;
        n.inputs[k].layout = inputs[k].layout;
        n.inputs[k].value = inputs[k].value;
    }
    // Trailing optional outputs left out ("") do not count.
    n.outputs = node.outputs.size();
    while (n.outputs > 1 && node.outputs[n.outputs - 1].empty()) --n.outputs;
    return n;
}

}   // namespace

std::string rule_name(const OnnxNode& node) {
    return default_domain(node) ? node.op_type : node.domain + "." + node.op_type;
}

std::pair<std::string, std::string> split_rule_name(const std::string& name) {
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) return {std::string(), name};
    return {name.substr(0, dot), name.substr(dot + 1)};
}

std::map<std::string, std::string> claimed_ops(const Registry& registry) {
    std::map<std::string, std::string> out;
    // Claimed: a loaded op with at least one impl maps it.
    for (const FoundImport& f : registry.imports("onnx"))
        if (!registry.all_impls(f.op->def.name).empty()) out[f.rule->op_type] = f.op->def.name;
    return out;
}

std::string target_op(const Registry& registry, const std::string& onnx_op) {
    const FoundImport f = registry.find_import("onnx", onnx_op);
    return f.rule ? f.op->def.name : std::string();
}

bool has_rule(const Registry& registry, const OnnxNode& node) { return find_rule(registry, node).rule != nullptr; }

void require_rule(const Registry& registry, const OnnxNode& node, int64_t opset) {
    if (!has_rule(registry, node)) unknown_op(registry, node, opset);
}

Mapped map_node(const Registry& registry, const OnnxNode& node, int64_t opset, const std::vector<MapInput>& inputs) {
    const FoundImport found = find_rule(registry, node);
    if (!found.rule) unknown_op(registry, node, opset);
    const ImportRule& rule = *found.rule;
    const ImportNode n = import_node(node, opset, inputs);
    Mapped out;
    if (n.outputs > rule.max_outputs) {
        out.unsupported = std::to_string(n.outputs) + " outputs (dynrt's " + found.op->def.name + " gives " +
                          std::to_string(rule.max_outputs) + ")";
        return out;
    }
    check_inputs(rule, node, inputs);
    ImportContext c(n, found.op->def.name);
    const bool mapped = rule.map(c);
    out.unsupported = c.out.unsupported;
    if (!mapped) {
        if (out.unsupported.empty()) out.unsupported = "the import rule of " + found.op->def.name + " refused it";
        return out;
    }
    out.op = c.out.op;
    out.attrs = c.out.attrs;
    out.inputs = c.out.inputs;
    return out;
}

}   // namespace dynrt::onnx
