// dynrt::Request: one InferRequest on the model's network, with the checks
// `dynrt run` makes on a model's inputs (dtype, rank, fixed dims, dims that
// inputs share) before anything reaches the device.
#include <cstring>
#include <filesystem>
#include <optional>

#include "api_impl.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/ocl_api.hpp"
#ifdef DYNRT_HAVE_ONNX
#include "onnx_import.hpp"
#endif

namespace dynrt {

struct Request::Impl {
    explicit Impl(std::shared_ptr<const Model::Impl> m)
        : model(std::move(m)), request(model->network), staging(model->inputs.size()), shapes(model->inputs.size()) {}

    void check(size_t i, DataType dtype, const Shape& shape) const;
    void check_shared_dims() const;
    Error located(const Error& e) const;

    std::shared_ptr<const Model::Impl> model;
    InferRequest request;
    std::vector<HostTensor> staging;            // per input: reused, so a steady shape allocates nothing
    std::vector<std::optional<Shape>> shapes;   // per input: the shape last set
    bool ran = false;
};

namespace {

std::string quoted(const std::string& name) { return "input '" + name + "': "; }

}   // namespace

void Request::Impl::check(size_t i, DataType dtype, const Shape& shape) const {
    const TensorInfo& info = model->inputs[i];
    const pipeline::InputSpec& spec = model->specs[i];
    if (dtype != info.dtype)
        throw Error(quoted(info.name) + "holds " + to_string(dtype) + ", the model declares " + to_string(info.dtype),
                    model->where());
    auto fail = [&](const std::string& why) {
        throw Error(quoted(info.name) + "shape " + shape.to_string() + " does not fit the declared " +
                        dims_text(info.dims) + why,
                    model->where());
    };
    if (shape.size() != spec.dims.size())
        fail(" (rank " + std::to_string(shape.size()) + " vs " + std::to_string(spec.dims.size()) + ")");
    for (size_t k = 0; k < shape.size(); ++k) {
        const pipeline::DimSpec& d = spec.dims[k];
        if (shape[k] < 0) fail(" (dim " + std::to_string(k) + " is negative)");
        if (d.kind == pipeline::DimSpec::Kind::fixed && shape[k] != d.value) fail(" at dim " + std::to_string(k));
        if (d.kind == pipeline::DimSpec::Kind::anonymous && !d.bounds.contains(shape[k]))
            fail(" at dim " + std::to_string(k) + " (allowed " + d.bounds.to_string() + ")");
    }
    size_t count = 0, bytes = 0;
    if (!count_fits(shape, &count) || __builtin_mul_overflow(count, byte_size(dtype), &bytes))
        throw Error(quoted(info.name) + "shape " + shape.to_string() + " holds more than 2^64 bytes", model->where());
}

// Inputs that share a dim symbol (two inputs of dim `batch`) must agree on it.
void Request::Impl::check_shared_dims() const {
    std::map<std::string, std::pair<int64_t, size_t>> bound;   // symbol -> value, input
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (!shapes[i]) continue;
        const pipeline::InputSpec& spec = model->specs[i];
        for (size_t k = 0; k < spec.dims.size(); ++k) {
            if (spec.dims[k].kind != pipeline::DimSpec::Kind::symbol) continue;
            const int64_t v = (*shapes[i])[k];
            const auto [it, added] = bound.try_emplace(spec.dims[k].symbol, v, i);
            if (added || it->second.first == v) continue;
            const size_t j = it->second.second;
            throw Error(quoted(model->inputs[i].name) + "shape " + shapes[i]->to_string() + " sets '" +
                            spec.dims[k].symbol + "' to " + std::to_string(v) + ", but input '" +
                            model->inputs[j].name + "' (shape " + shapes[j]->to_string() + ") sets it to " +
                            std::to_string(it->second.first),
                        model->where());
        }
    }
}

// A flow error with the failing node's location (a pipeline's YAML line) and
// the model file, as `dynrt run` reports it.
Error Request::Impl::located(const Error& e) const {
    ErrorContext outer = model->where();
    const std::string& node = e.context().node;
    if (!node.empty())
        for (const auto& n : model->program->nodes())
            if (n.name == node && !n.where.file.empty()) outer = n.where;
    return e.with_context(outer);
}

Request Model::create_request() const { return Request(std::make_unique<Request::Impl>(impl_)); }

Request::Request(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Request::~Request() = default;
Request::Request(Request&&) noexcept = default;
Request& Request::operator=(Request&&) noexcept = default;

void Request::set_input(const std::string& name, DataType dtype, const Shape& shape, const void* data) {
    Impl& r = *impl_;
    const size_t i = r.model->find_input(name);
    r.check(i, dtype, shape);
    HostTensor& t = r.staging[i];
    t.reset(dtype, shape);
    if (t.bytes()) {
        if (!data) throw Error(quoted(r.model->inputs[i].name) + "no data (a null pointer)", r.model->where());
        std::memcpy(t.data(), data, t.bytes());
    }
    try {
        r.request.set_input(r.model->specs[i].name, t);
    } catch (const Error& e) {
        throw r.located(e);
    }
    r.shapes[i] = shape;
}

void Request::set_input(const std::string& name, const HostTensor& value) {
    Impl& r = *impl_;
    const size_t i = r.model->find_input(name);
    r.check(i, value.dtype(), value.shape());
    try {
        r.request.set_input(r.model->specs[i].name, value);
    } catch (const Error& e) {
        throw r.located(e);
    }
    r.shapes[i] = value.shape();
}

void Request::run() {
    Impl& r = *impl_;
    r.ran = false;
    r.check_shared_dims();
    try {
        r.request.infer();
    } catch (const Error& e) {
        throw r.located(e);
    } catch (const std::bad_alloc&) {
        throw Error("out of host memory while running", r.model->where());
    }
    r.ran = true;
}

const HostTensor& Request::output(size_t index) const {
    const Impl& r = *impl_;
    if (index >= r.model->outputs.size())
        throw Error("output " + std::to_string(index) + " of " + std::to_string(r.model->outputs.size()) + " outputs",
                    r.model->where());
    if (!r.ran)
        throw Error("output '" + r.model->outputs[index].name + "': the request has not run (run() first)",
                    r.model->where());
    return r.request.output(index);
}

const HostTensor& Request::output(const std::string& name) const { return output(impl_->model->find_output(name)); }

void Request::reset_state() { impl_->request.reset_state(); }

void Request::set_profiling(bool on) {
    Impl& r = *impl_;
    r.request.set_profiling(on);
    // On OpenCL each node's kernel time is read from the stream's profiling
    // events (recorded when the model was made with profiling on).
    OclDevice* dev = on ? OclDevice::from(*r.model->engine) : nullptr;
    if (dev) {
        Stream* stream = &r.request.stream();
        r.request.set_device_clock([dev, stream] { return dev->stream_profile(*stream).kernel_ns; });
    } else {
        r.request.set_device_clock({});
    }
}

RunTiming Request::last_run() const {
    const RunStats& stats = impl_->request.last_run();
    RunTiming t;
    t.ms = stats.host_ms;
    if (!stats.profile.on) return t;
    for (const NodeStats& n : stats.nodes)
        if (!n.op.empty() && n.op.front() != '<')   // not an input's or a constant's built-in node
            t.nodes.push_back({n.node, n.op, n.impl, static_cast<double>(n.times.total()) / 1e6,
                               static_cast<double>(n.times.device_ns) / 1e6});
    return t;
}

HostTensor load_tensor(const std::string& path) {
    if (std::filesystem::path(path).extension() == ".pb") {
#ifdef DYNRT_HAVE_ONNX
        return onnx::read_tensor(path);
#else
        ErrorContext c;
        c.file = path;
        throw Error("reading .pb tensors needs ONNX support (install libonnx-dev and libprotobuf-dev)", c);
#endif
    }
    return pipeline::read_npy(path);
}

void save_npy(const std::string& path, const HostTensor& t) { pipeline::write_npy(path, t); }

}   // namespace dynrt
