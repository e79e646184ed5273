#include "onnx_build.hpp"

#include <cctype>
#include <fstream>

namespace dynrt::test::onnx_build {

namespace ox = ::onnx;

ox::ModelProto empty_model(int64_t opset) {
    ox::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    m.mutable_graph()->set_name("g");
    return m;
}

ox::NodeProto* add_node(ox::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name) {
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
}

void add_symbolic_value(ox::ValueInfoProto* v, const std::string& name, int type,
                        const std::vector<std::string>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();   // a scalar has a shape of no dims
    for (const std::string& d : dims) {
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
            tt->mutable_shape()->add_dim()->set_dim_value(std::stoll(d));
        else tt->mutable_shape()->add_dim()->set_dim_param(d);
    }
}

void add_value(ox::ValueInfoProto* v, const std::string& name, int type, const std::vector<int64_t>& dims,
               const std::vector<std::string>& params) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i < params.size() && !params[i].empty()) shape->add_dim()->set_dim_param(params[i]);
        else shape->add_dim()->set_dim_value(dims[i]);
    }
}

ox::TensorProto float_tensor(const std::vector<int64_t>& dims, const std::vector<float>& v, bool raw) {
    ox::TensorProto t;
    for (int64_t d : dims) t.add_dims(d);
    t.set_data_type(ox::TensorProto::FLOAT);
    if (raw) t.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
    else
        for (float f : v) t.add_float_data(f);
    return t;
}

void int_attr(ox::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::INT);
    a->set_i(v);
}

void ints_attr(ox::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
}

void write_proto(const std::filesystem::path& path, const google::protobuf::MessageLite& m) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
}

}   // namespace dynrt::test::onnx_build
