// Reading ONNX protobuf files: ModelProto -> OnnxModel, TensorProto -> HostTensor.
#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "file_io.hpp"
#include "onnx_import.hpp"

namespace dynrt::onnx {

namespace {

ErrorContext in_file(const std::string& file, const std::string& field = {}) {
    ErrorContext c;
    c.file = file;
    c.field = field;
    return c;
}

std::string read_bytes(const std::string& path, const char* what) {
    return tools::read_file_capped(path, tools::max_tensor_file_bytes(), what);
}

const char* supported_list() { return "FLOAT, FLOAT16, DOUBLE, INT32, INT64, INT8, UINT8, BOOL"; }

// External data (TensorProto data_location EXTERNAL): `location` names a file
// relative to the model's folder, never outside it (no absolute path, no
// "..", no link leading out); `offset` and `length` must lie inside the file
// and `length` must be the size the dims and type need. The bytes are read
// with pread straight into the tensor's own storage, in chunks (no second
// copy of a multi-GiB weight, 64-bit offsets). A HostTensor owns its storage
// (a std::vector), so a mapping could not back it without a change to
// dynrt/host_tensor.hpp; reading (not mmap) also keeps a side file truncated
// while it is read an error rather than a SIGBUS. Every error names the model
// file, the tensor and the external_data field at fault.
HostTensor external_tensor(const ::onnx::TensorProto& t, const std::string& what, DataType dt, const Shape& shape,
                           size_t bytes, const std::string& file) {
    namespace fs = std::filesystem;
    auto fail = [&](const std::string& why, const std::string& field) {
        return Error(what + ": " + why, in_file(file, "external_data." + field));
    };
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
        const std::string& k = kv.key();
        const std::string& v = kv.value();
        auto number = [&](int64_t& out) {
            char* end = nullptr;
            errno = 0;
            const long long x = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || errno != 0 || *end != '\0' || x < 0)
                throw fail("external_data " + k + " '" + v + "' is not an integer >= 0", k);
            out = x;
        };
        if (k == "location") location = v;
        else if (k == "offset") number(offset);
        else if (k == "length") number(length);
        else if (k != "checksum") throw fail("unknown external_data key '" + k + "'", k);
    }
    if (location.empty()) throw fail("external data without a location", "location");
    const fs::path rel(location);
    if (rel.is_absolute() || std::any_of(rel.begin(), rel.end(), [](const fs::path& c) { return c == ".."; }))
        throw fail("external data location '" + location +
                       "' must be a path inside the model's folder (no absolute path, no '..')",
                   "location");
    const fs::path dir = fs::path(file).parent_path();
    const fs::path path = dir / rel;
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(path, ec);
    const fs::path real_dir = fs::weakly_canonical(dir.empty() ? fs::path(".") : dir, ec);
    const std::string rs = real.string(), ds = real_dir.string();
    if (ec || rs.compare(0, ds.size(), ds) != 0 || (rs.size() > ds.size() && rs[ds.size()] != '/'))
        throw fail("external data file '" + location + "' leads outside the model's folder", "location");
    if (length >= 0 && static_cast<uint64_t>(length) != bytes)
        throw fail("external data length " + std::to_string(length) + " is not the " + std::to_string(bytes) +
                       " bytes its dims " + shape.to_string() + " of " + to_string(dt) + " need",
                   "length");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw fail("cannot open external data file '" + path.string() + "': " + std::strerror(errno), "location");
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        throw fail("external data file '" + path.string() + "' is not a regular file", "location");
    const auto size = static_cast<uint64_t>(st.st_size);
    if (static_cast<uint64_t>(offset) > size || size - static_cast<uint64_t>(offset) < bytes)
        throw fail("external data [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                       ") lies beyond the end of the " + std::to_string(size) + "-byte file '" + path.string() + "'",
                   "offset");
    HostTensor out(dt, shape);
    auto* dst = static_cast<char*>(out.data());
    constexpr size_t kChunk = size_t{64} << 20;
    for (size_t done = 0; done < bytes;) {
        const size_t want = std::min(kChunk, bytes - done);
        const ssize_t got = ::pread(fd, dst + done, want, static_cast<off_t>(static_cast<uint64_t>(offset) + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            throw fail("cannot read external data file '" + path.string() + "' at byte " +
                           std::to_string(static_cast<uint64_t>(offset) + done) + ": " +
                           (got < 0 ? std::strerror(errno) : "the file ended early"),
                       "offset");
        done += static_cast<size_t>(got);
    }
    return out;
}

// The number of values a TensorProto holds in the typed field of its type
// (float16 and the small integer types use int32_data).
size_t typed_count(const ::onnx::TensorProto& t, DataType dt) {
    switch (dt) {
        case DataType::f32: return static_cast<size_t>(t.float_data_size());
        case DataType::i64: return static_cast<size_t>(t.int64_data_size());
        case DataType::f64: return static_cast<size_t>(t.double_data_size());
        default: return static_cast<size_t>(t.int32_data_size());
    }
}

// Copies the typed values (their count already checked) into `out`.
void copy_typed(const ::onnx::TensorProto& t, HostTensor& out) {
    const size_t n = out.count();
    switch (out.dtype()) {
        case DataType::f32:
            for (size_t i = 0; i < n; ++i) out.as<float>()[i] = t.float_data(static_cast<int>(i));
            break;
        case DataType::f16:
            // Typed float16 values are the IEEE bit patterns in int32_data.
            for (size_t i = 0; i < n; ++i)
                out.as<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
            break;
        case DataType::f64:
            for (size_t i = 0; i < n; ++i) out.as<double>()[i] = t.double_data(static_cast<int>(i));
            break;
        case DataType::i64:
            for (size_t i = 0; i < n; ++i) out.as<int64_t>()[i] = t.int64_data(static_cast<int>(i));
            break;
        case DataType::i32:
        case DataType::i8:
        case DataType::u8:
        case DataType::boolean:
            for (size_t i = 0; i < n; ++i)
                out.set_from_double(i, static_cast<double>(t.int32_data(static_cast<int>(i))));
            break;
    }
}

HostTensor decode(const ::onnx::TensorProto& t, const std::string& file) {
    const std::string what = t.name().empty() ? std::string("tensor") : "tensor '" + t.name() + "'";
    const auto dt = dtype_from_onnx(t.data_type());
    if (!dt)
        throw Error(what + " has data type " + onnx_type_name(t.data_type()) + " (" + std::to_string(t.data_type()) +
                        "), which dynrt does not have (supported: " + supported_list() + ")",
                    in_file(file, "data_type"));
    if (t.has_segment()) throw Error(what + " is segmented, which is not supported", in_file(file));
    std::vector<int64_t> dims;
    for (int64_t d : t.dims()) {
        if (d < 0) throw Error(what + " has a negative dim", in_file(file, "dims"));
        dims.push_back(d);
    }
    // The size the dims claim is checked against the data present before
    // anything is allocated: a few bytes claiming 10^9 elements are refused
    // here, not after zeroing gigabytes.
    const Shape shape(dims);
    size_t n = 0;
    if (!count_fits(dims, &n))
        throw Error(what + " has dims " + shape.to_string() + ", more elements than fit (at most 2^60)",
                    in_file(file, "dims"));
    const size_t bytes = checked_mul(n, byte_size(*dt), "tensor data size");
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) return external_tensor(t, what, *dt, shape, bytes, file);
    if (t.has_raw_data() && t.raw_data().size() != bytes)
        // raw_data is little-endian, like every host dynrt runs on.
        throw Error(what + " has " + std::to_string(t.raw_data().size()) + " bytes of raw_data, " + shape.to_string() +
                        " of " + to_string(*dt) + " needs " + std::to_string(bytes),
                    in_file(file, "raw_data"));
    if (!t.has_raw_data() && typed_count(t, *dt) != n)
        throw Error(what + " holds " + std::to_string(typed_count(t, *dt)) + " values, its dims " + shape.to_string() +
                        " need " + std::to_string(n),
                    in_file(file));
    HostTensor out(*dt, shape);
    if (!t.has_raw_data()) copy_typed(t, out);
    else if (n) std::memcpy(out.data(), t.raw_data().data(), out.bytes());
    return out;
}

ValueInfo value_info(const ::onnx::ValueInfoProto& v) {
    ValueInfo out;
    out.name = v.name();
    const auto& type = v.type();
    if (type.has_tensor_type()) {
        out.onnx_type = type.tensor_type().elem_type();
        if (type.tensor_type().has_shape()) {
            out.has_shape = true;
            std::vector<Dimension> dims;
            for (const auto& d : type.tensor_type().shape().dim()) {
                // A negative dim_value (-1 from some exporters) is malformed:
                // treated like a missing dim, an anonymous unknown.
                const bool known = d.has_dim_value() && d.dim_value() >= 0;
                dims.push_back(known ? Dimension(d.dim_value()) : Dimension::dynamic());
                const bool named = d.has_dim_param() && !is_anonymous_dim_param(d.dim_param());
                out.dim_params.push_back(named ? d.dim_param() : std::string());
            }
            out.shape = PartialShape(dims);
        }
    } else if (type.has_sequence_type()) {
        out.kind = "sequence";
    } else if (type.has_optional_type()) {
        out.kind = "optional";
    } else if (type.has_map_type()) {
        out.kind = "map";
    } else if (type.has_sparse_tensor_type()) {
        out.kind = "sparse tensor";
    } else {
        out.kind = "unknown type";
    }
    return out;
}

// Appends every element of a repeated protobuf field.
template <class V, class R>
void append_all(V& out, const R& field) {
    for (const auto& x : field) out.push_back(x);
}

OnnxAttr attr_of(const ::onnx::AttributeProto& a, const std::string& file) {
    OnnxAttr out;
    using A = ::onnx::AttributeProto;
    switch (a.type()) {
        case A::INT:
            out.kind = OnnxAttr::Kind::Int;
            out.i = a.i();
            break;
        case A::FLOAT:
            out.kind = OnnxAttr::Kind::Float;
            out.f = a.f();
            break;
        case A::STRING:
            out.kind = OnnxAttr::Kind::String;
            out.s = a.s();
            break;
        case A::INTS:
            out.kind = OnnxAttr::Kind::Ints;
            append_all(out.ints, a.ints());
            break;
        case A::FLOATS:
            out.kind = OnnxAttr::Kind::Floats;
            append_all(out.floats, a.floats());
            break;
        case A::STRINGS:
            out.kind = OnnxAttr::Kind::Strings;
            append_all(out.strings, a.strings());
            break;
        case A::TENSOR:
            out.kind = OnnxAttr::Kind::Tensor;
            out.tensor = std::make_shared<HostTensor>(decode(a.t(), file));
            break;
        default: out.kind = OnnxAttr::Kind::Other; break;
    }
    return out;
}

}   // namespace

bool is_anonymous_dim_param(const std::string& param) {
    if (param.empty() || param == "?") return true;
    const std::string prefix = "unk__";
    if (param.size() <= prefix.size() || param.compare(0, prefix.size(), prefix) != 0) return false;
    return std::all_of(param.begin() + static_cast<std::ptrdiff_t>(prefix.size()), param.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<DataType> dtype_from_onnx(int t) {
    using T = ::onnx::TensorProto;
    switch (t) {
        case T::FLOAT: return DataType::f32;
        case T::FLOAT16: return DataType::f16;
        case T::INT32: return DataType::i32;
        case T::INT64: return DataType::i64;
        case T::INT8: return DataType::i8;
        case T::UINT8: return DataType::u8;
        case T::BOOL: return DataType::boolean;
        case T::DOUBLE: return DataType::f64;
        default: return std::nullopt;
    }
}

std::string onnx_type_name(int t) {
    if (::onnx::TensorProto::DataType_IsValid(t))
        return ::onnx::TensorProto::DataType_Name(static_cast<::onnx::TensorProto::DataType>(t));
    return "unknown";
}

HostTensor parse_tensor(const std::string& bytes, const std::string& file) {
    ::onnx::TensorProto t;
    if (!t.ParseFromString(bytes)) throw Error("not a serialized onnx.TensorProto", in_file(file));
    return decode(t, file);
}

HostTensor read_tensor(const std::string& path) { return parse_tensor(read_bytes(path, "tensor file"), path); }

OnnxModel parse_model(const std::string& bytes, const std::string& file) {
    ::onnx::ModelProto m;
    if (!m.ParseFromString(bytes)) throw Error("not a serialized onnx.ModelProto", in_file(file));
    OnnxModel out;
    out.file = file;
    out.ir_version = m.ir_version();
    out.producer_name = m.producer_name();
    out.producer_version = m.producer_version();
    out.graph_name = m.graph().name();
    for (const auto& o : m.opset_import()) {
        const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
        out.opsets[domain] = o.version();
        if (domain.empty()) out.opset = o.version();
    }
    // The import rules read the default domain's opset to pick each op's
    // semantics: with none or an unknown one every ai.onnx op would silently
    // run as some other opset. A model whose nodes are all of other domains
    // (ai.onnx.preview.training) needs no ai.onnx opset.
    const std::string known = "dynrt's import rules know ai.onnx opsets 1.." + std::to_string(kNewestOnnxOpset);
    if (!out.opsets.count("")) {
        const auto& nodes = m.graph().node();
        const auto in_default = std::find_if(nodes.begin(), nodes.end(), [](const ::onnx::NodeProto& n) {
            return n.domain().empty() || n.domain() == "ai.onnx";
        });
        if (in_default != nodes.end()) {
            std::string others;
            for (const auto& [domain, version] : out.opsets)
                others += (others.empty() ? "" : ", ") + domain + " " + std::to_string(version);
            ErrorContext where = in_file(file, "opset_import");
            where.node = in_default->name().empty() ? in_default->op_type() : in_default->name();
            where.op = in_default->op_type();
            throw Error(
                "the model imports no opset of the default domain (ai.onnx), which its ai.onnx nodes need: "
                "its opset_import lists " +
                    (others.empty() ? std::string("nothing") : "only " + others) + "; " + known,
                where);
        }
    } else if (out.opset < 1 || out.opset > kNewestOnnxOpset) {
        throw Error(
            "the model imports ai.onnx opset " + std::to_string(out.opset) + "; " + known +
                (out.opset > kNewestOnnxOpset ? " (the newest supported is " + std::to_string(kNewestOnnxOpset) + ")"
                                              : std::string()),
            in_file(file, "opset_import"));
    }
    const auto& g = m.graph();
    for (const auto& init : g.initializer()) {
        if (out.initializers.count(init.name()))
            throw Error("initializer '" + init.name() + "' is given twice", in_file(file, "initializer"));
        out.initializers.emplace(init.name(), decode(init, file));
    }
    for (const auto& in : g.input()) {
        if (out.initializers.count(in.name())) out.initialized_inputs.push_back(in.name());
        else out.inputs.push_back(value_info(in));
    }
    for (const auto& o : g.output()) out.outputs.push_back(value_info(o));
    for (const auto& n : g.node()) {
        OnnxNode node;
        node.name = n.name();
        node.op_type = n.op_type();
        node.domain = n.domain();
        node.inputs.assign(n.input().begin(), n.input().end());
        node.outputs.assign(n.output().begin(), n.output().end());
        for (const auto& a : n.attribute()) {
            try {
                node.attrs[a.name()] = attr_of(a, file);
            } catch (const Error& e) {
                ErrorContext where = in_file(file, a.name());
                where.node = n.name().empty() ? n.op_type() : n.name();
                where.op = n.op_type();
                throw e.with_context(where);
            }
        }
        out.nodes.push_back(std::move(node));
    }
    return out;
}

OnnxModel load_model(const std::string& path) { return parse_model(read_bytes(path, "model file"), path); }

}   // namespace dynrt::onnx
