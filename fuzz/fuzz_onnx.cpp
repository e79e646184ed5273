// The ONNX importer on arbitrary bytes: parse the model, then map every node
// with the inputs the graph declares, through the import rules of every op
// module. A model or a dynrt::Error naming the
// file, nothing else (a node with too few inputs must not be read past).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "fuzz_registry.hpp"
#include "onnx_import.hpp"

namespace {

void map_nodes(const dynrt::Registry& registry, const dynrt::onnx::OnnxModel& m) {
    std::map<std::string, dynrt::onnx::MapInput> known;
    for (const auto& v : m.inputs) {
        const auto dtype = dynrt::onnx::dtype_from_onnx(v.onnx_type);
        if (dtype) known[v.name] = dynrt::onnx::MapInput{true, dynrt::Layout(v.shape, *dtype), nullptr};
    }
    for (const auto& [name, t] : m.initializers) known[name] = dynrt::onnx::MapInput{true, t.layout(), &t};
    for (const auto& node : m.nodes) {
        std::vector<dynrt::onnx::MapInput> ins;
        for (const auto& name : node.inputs) {
            auto it = known.find(name);
            ins.push_back(it == known.end() ? dynrt::onnx::MapInput{} : it->second);
        }
        if (!dynrt::onnx::has_rule(registry, node)) continue;
        (void)dynrt::onnx::map_node(registry, node, m.opset, ins);
    }
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::shared_ptr<const dynrt::Registry> registry = dynrt::fuzz::registry();
    try {
        map_nodes(*registry,
                  dynrt::onnx::parse_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx"));
    } catch (const dynrt::Error&) {
    }
    return 0;
}
