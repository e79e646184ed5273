// What Model and Request share inside libdynrt_api.so: the loaded model
// (Model::Impl) and the helpers both use. Not installed.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/dynrt.hpp"
#include "dynrt/network.hpp"
#include "dynrt/registry.hpp"
#include "pipeline.hpp"

namespace dynrt {

struct Model::Impl {
    // Destroyed last: the modules stay mapped while anything made by them lives.
    std::shared_ptr<Registry> registry;
    std::string path;
    std::shared_ptr<const Program> program;
    EnginePtr engine;
    std::shared_ptr<Network> network;
    std::vector<TensorInfo> inputs, outputs;
    // Per input: the program's input node and its declared dims (symbols).
    std::vector<pipeline::InputSpec> specs;
    std::map<std::string, size_t> input_index;    // model and program names
    std::map<std::string, size_t> output_index;   // model names
    std::string device, device_name;
    std::vector<std::string> warnings;

    // The input `name` names; throws the CLI's "the model has no input" error.
    size_t find_input(const std::string& name) const;
    size_t find_output(const std::string& name) const;
    // An ErrorContext naming the model file (and a field).
    ErrorContext where(const std::string& field = {}) const;
};

// The text of a dim list: "[batch,3,?]".
std::string dims_text(const std::vector<Dim>& dims);

#ifdef DYNRT_HAVE_ONNX
// The dims an ONNX model declares for its graph inputs and outputs, by name:
// per dim a dim_value, else its dim_param (anonymous ones as "": "?",
// "unk__N"), read from the file without its initializers. A value without a
// declared shape is missing.
struct DeclaredDims {
    std::map<std::string, std::vector<Dim>> inputs, outputs;
};
DeclaredDims declared_dims(const std::string& path);
#endif

}   // namespace dynrt
