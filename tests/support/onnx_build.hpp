// Building small ONNX models in tests: an empty model, nodes, value infos,
// tensors, attributes, and writing a message to a file. Linked (with the ONNX
// protobuf library) by the tests that write models: onnx, onnx_names,
// bisect, attention_pattern, rms_norm_pattern.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynrt::test::onnx_build {

// An empty model of the default domain at `opset`, IR version 8, graph "g".
::onnx::ModelProto empty_model(int64_t opset = 13);

::onnx::NodeProto* add_node(::onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs, const std::string& name = {});

// A tensor value info of element type `type` (TensorProto::FLOAT ...); each
// of `dims` a number ("3") or a dim_param ("N"). No dims: a scalar.
void add_symbolic_value(::onnx::ValueInfoProto* v, const std::string& name, int type,
                        const std::vector<std::string>& dims);
// The same with numeric dims; where `params[i]` is not empty, dim i is that
// dim_param instead of dims[i].
void add_value(::onnx::ValueInfoProto* v, const std::string& name, int type, const std::vector<int64_t>& dims,
               const std::vector<std::string>& params = {});

// An f32 tensor of `dims`, its values as raw_data or as float_data.
::onnx::TensorProto float_tensor(const std::vector<int64_t>& dims, const std::vector<float>& v, bool raw = true);

void int_attr(::onnx::NodeProto* n, const std::string& name, int64_t v);
void ints_attr(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);

// The message serialised into `path`, its folders made first.
void write_proto(const std::filesystem::path& path, const google::protobuf::MessageLite& m);

}   // namespace dynrt::test::onnx_build
