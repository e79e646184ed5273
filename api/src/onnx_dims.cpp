// The dims an ONNX model declares for its graph inputs and outputs, with their
// dim_params (Model::outputs() names an output's dynamic dims as the model
// does). The importer keeps only the inputs' names; reading the model again
// through onnx::load_model would parse and copy every initializer a second
// time, so this walks the file's protobuf fields and skips everything but
// ModelProto.graph's input and output ValueInfoProtos (a seek past each
// initializer).
#ifdef DYNRT_HAVE_ONNX
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "api_impl.hpp"
#include "onnx_import.hpp"

namespace dynrt {

namespace {

using google::protobuf::internal::WireFormatLite;

constexpr uint32_t kModelGraph = 7;     // ModelProto.graph
constexpr uint32_t kGraphInput = 11;    // GraphProto.input
constexpr uint32_t kGraphOutput = 12;   // GraphProto.output

std::vector<Dim> dims_of(const ::onnx::ValueInfoProto& vi) {
    std::vector<Dim> dims;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
        Dim out;
        if (d.has_dim_value() && d.dim_value() >= 0) out.value = d.dim_value();
        else if (d.has_dim_param() && !onnx::is_anonymous_dim_param(d.dim_param())) out.symbol = d.dim_param();
        dims.push_back(out);
    }
    return dims;
}

// Reads the length-delimited field the stream is at into a ValueInfoProto
// and files its dims under `into` when it declares a tensor shape.
bool read_value_info(google::protobuf::io::CodedInputStream& in, std::map<std::string, std::vector<Dim>>& into) {
    uint32_t length = 0;
    if (!in.ReadVarint32(&length)) return false;
    const auto limit = in.PushLimit(static_cast<int>(length));
    ::onnx::ValueInfoProto vi;
    const bool ok = vi.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
    in.PopLimit(limit);
    if (ok && vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) into[vi.name()] = dims_of(vi);
    return ok;
}

}   // namespace

DeclaredDims declared_dims(const std::string& path) {
    DeclaredDims out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return out;   // the importer has read it; nothing to add
    {
        google::protobuf::io::FileInputStream file(fd);
        google::protobuf::io::CodedInputStream in(&file);
        in.SetTotalBytesLimit(INT_MAX);
        bool in_graph = false;
        for (;;) {
            const uint32_t tag = in.ReadTag();
            if (tag == 0) break;
            const uint32_t field = WireFormatLite::GetTagFieldNumber(tag);
            const bool delimited = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
            if (!in_graph && field == kModelGraph && delimited) {
                // Enter the graph: its fields follow until its end, and
                // nothing of the model after it is needed.
                uint32_t length = 0;
                if (!in.ReadVarint32(&length)) break;
                in.PushLimit(static_cast<int>(length));
                in_graph = true;
                continue;
            }
            if (in_graph && delimited && (field == kGraphInput || field == kGraphOutput)) {
                if (!read_value_info(in, field == kGraphInput ? out.inputs : out.outputs)) break;
                continue;
            }
            if (!WireFormatLite::SkipField(&in, tag)) break;
        }
    }
    ::close(fd);
    return out;
}

}   // namespace dynrt
#endif
