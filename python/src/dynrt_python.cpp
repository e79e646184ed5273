// The Python module dynrt._dynrt over the embedding API (dynrt/dynrt.hpp;
// docs/python.md). numpy arrays in, numpy arrays out (copies of the request's
// outputs); the GIL is released while inputs are copied and while a model
// loads or runs; every dynrt::Error becomes dynrt.Error with the same message
// (and its file, node and field as attributes). Nothing here aborts the
// interpreter: whatever C++ throws reaches Python as an exception.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/dynrt.hpp"

namespace py = pybind11;

namespace {

// numpy's name of each dynrt type.
const char* numpy_name(dynrt::DataType t) {
    switch (t) {
        case dynrt::DataType::f32: return "float32";
        case dynrt::DataType::f16: return "float16";
        case dynrt::DataType::f64: return "float64";
        case dynrt::DataType::i32: return "int32";
        case dynrt::DataType::i64: return "int64";
        case dynrt::DataType::u8: return "uint8";
        case dynrt::DataType::i8: return "int8";
        case dynrt::DataType::boolean: return "bool";
    }
    return "?";
}

constexpr const char* kNumpyTypes = "float32, float16, float64, int32, int64, int8, uint8, bool";

dynrt::ErrorContext in_file(const std::string& file) {
    dynrt::ErrorContext c;
    c.file = file;
    return c;
}

// The dynrt type of a numpy dtype (native byte order only).
std::optional<dynrt::DataType> dtype_of(const py::dtype& d) {
    const char kind = d.kind();
    const auto size = d.itemsize();
    const char order = d.attr("byteorder").cast<std::string>()[0];
    if (order == '>') return std::nullopt;   // '=', '<' and '|' are native on the little-endian hosts dynrt runs on
    if (kind == 'f' && size == 4) return dynrt::DataType::f32;
    if (kind == 'f' && size == 2) return dynrt::DataType::f16;
    if (kind == 'f' && size == 8) return dynrt::DataType::f64;
    if (kind == 'i' && size == 4) return dynrt::DataType::i32;
    if (kind == 'i' && size == 8) return dynrt::DataType::i64;
    if (kind == 'i' && size == 1) return dynrt::DataType::i8;
    if (kind == 'u' && size == 1) return dynrt::DataType::u8;
    if (kind == 'b' && size == 1) return dynrt::DataType::boolean;
    return std::nullopt;
}

// A copy of a request's output as a numpy array.
py::array to_numpy(const dynrt::HostTensor& t) {
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    return py::array(py::dtype(numpy_name(t.dtype())), shape, t.data());
}

py::object dim_object(const dynrt::Dim& d) {
    if (d.is_static()) return py::int_(d.value);
    if (!d.symbol.empty()) return py::str(d.symbol);
    return py::none();
}

// One request with the Python-side checks: what an array must be to be an
// input (a known dtype, C-contiguous), said with the input's name.
class PyRequest {
public:
    PyRequest(std::shared_ptr<const dynrt::Model> model, dynrt::Request request)
        : model_(std::move(model)), request_(std::move(request)) {}

    void set_input(const std::string& name, const py::handle& value) {
        const dynrt::TensorInfo* info = nullptr;
        for (const auto& in : model_->inputs())
            if (in.name == name) info = &in;
        py::array array;
        if (py::isinstance<py::array>(value)) {
            array = py::reinterpret_borrow<py::array>(value);
        } else if (py::hasattr(value, "__dlpack__")) {
            // A tensor of another library (torch, jax, cupy ...) through
            // DLPack: numpy views its memory without a copy; one that is not
            // in host memory is refused by numpy, with its own message.
            try {
                array = py::array(py::module_::import("numpy").attr("from_dlpack")(value));
            } catch (py::error_already_set& e) {
                throw dynrt::Error("input '" + (info ? info->name : name) +
                                       "': numpy.from_dlpack cannot take it: " + std::string(py::str(e.value())),
                                   in_file(model_->path()));
            }
        } else {
            // A list or a scalar: numpy makes it an array of the declared
            // dtype (an unknown name is reported below, by the API).
            array = info ? py::array(py::module_::import("numpy").attr("asarray")(value, numpy_name(info->dtype)))
                         : py::array(py::module_::import("numpy").attr("asarray")(value));
        }
        const std::string who = "input '" + (info ? info->name : name) + "': ";
        const auto dtype = dtype_of(array.dtype());
        if (!dtype)
            throw dynrt::Error(who + "the array's dtype " + py::str(array.dtype()).cast<std::string>() +
                                   " has no dynrt type (" + kNumpyTypes + ", native byte order)",
                               in_file(model_->path()));
        if (!(array.flags() & py::array::c_style)) {
            std::string strides;
            for (py::ssize_t k = 0; k < array.ndim(); ++k) strides += (k ? "," : "") + std::to_string(array.strides(k));
            throw dynrt::Error(who + "the array is not C-contiguous (strides [" + strides +
                                   "] bytes); numpy.ascontiguousarray() makes a contiguous copy",
                               in_file(model_->path()));
        }
        dynrt::Shape shape;
        for (py::ssize_t k = 0; k < array.ndim(); ++k) shape.push_back(static_cast<int64_t>(array.shape(k)));
        const void* data = array.data();
        // `array` holds the buffer alive while the GIL is released.
        py::gil_scoped_release release;
        request_.set_input(name, *dtype, shape, data);
    }

    // Sets `feeds` (every input of the model when `all_inputs`), runs, and
    // returns copies of the outputs named (all by default).
    py::dict run(const py::object& feeds, const py::object& outputs, bool all_inputs) {
        if (!feeds.is_none()) {
            if (!py::isinstance<py::dict>(feeds))
                throw py::type_error("feeds must be a dict of input name -> array, got " +
                                     py::str(feeds.get_type().attr("__name__")).cast<std::string>());
            const py::dict d = py::reinterpret_borrow<py::dict>(feeds);
            for (const auto& [key, value] : d) set_input(py::str(key).cast<std::string>(), value);
            if (all_inputs) check_given(d);
        }
        {
            py::gil_scoped_release release;
            request_.run();
        }
        py::dict out;
        if (outputs.is_none()) {
            for (size_t k = 0; k < model_->outputs().size(); ++k)
                out[py::str(model_->outputs()[k].name)] = to_numpy(request_.output(k));
        } else {
            for (const auto& name : outputs) {
                const std::string n = py::str(name).cast<std::string>();
                out[py::str(n)] = to_numpy(request_.output(n));
            }
        }
        return out;
    }

    py::array output(const std::string& name) const { return to_numpy(request_.output(name)); }
    void reset_state() { request_.reset_state(); }
    void set_profiling(bool on) { request_.set_profiling(on); }

    // {"ms": run time, "nodes": [{"node", "op", "impl", "ms", "device_ms"}, ...]}
    py::dict last_run() const {
        const dynrt::RunTiming t = request_.last_run();
        py::list nodes;
        for (const auto& n : t.nodes) {
            py::dict d;
            d["node"] = n.node;
            d["op"] = n.op;
            d["impl"] = n.impl;
            d["ms"] = n.ms;
            d["device_ms"] = n.device_ms;
            nodes.append(d);
        }
        py::dict out;
        out["ms"] = t.ms;
        out["nodes"] = nodes;
        return out;
    }

private:
    // Model.run takes every input each call: a pooled request keeps the
    // inputs of an earlier call, which must not stand in for a missing one.
    void check_given(const py::dict& feeds) const {
        std::string missing, all;
        for (const auto& in : model_->inputs()) {
            all += (all.empty() ? "" : ", ") + in.name;
            if (!feeds.contains(py::str(in.name))) missing += (missing.empty() ? "'" : ", '") + in.name + "'";
        }
        if (!missing.empty())
            throw dynrt::Error("input " + missing + " not given (Model.run takes every input; its inputs: " + all + ")",
                               in_file(model_->path()));
    }

    std::shared_ptr<const dynrt::Model> model_;
    dynrt::Request request_;
};

// A model and the requests Model.run uses, one per concurrent call.
class PyModel {
public:
    PyModel(const std::string& path, const dynrt::ModelOptions& options)
        : model_(std::make_shared<const dynrt::Model>(path, options)) {}

    const dynrt::Model& model() const { return *model_; }
    std::unique_ptr<PyRequest> create_request() const {
        return std::make_unique<PyRequest>(model_, model_->create_request());
    }

    py::dict run(const py::object& feeds, const py::object& outputs) {
        if (feeds.is_none()) throw py::type_error("Model.run needs feeds: a dict of input name -> array");
        std::unique_ptr<PyRequest> r;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!idle_.empty()) {
                r = std::move(idle_.back());
                idle_.pop_back();
            }
        }
        if (!r) {
            py::gil_scoped_release release;
            r = create_request();
        }
        py::dict out = r->run(feeds, outputs, true);
        // A request whose run failed is dropped: it may hold half-set inputs.
        std::lock_guard<std::mutex> lock(mutex_);
        idle_.push_back(std::move(r));
        return out;
    }

private:
    std::shared_ptr<const dynrt::Model> model_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<PyRequest>> idle_;
};

// dynrt.Error (made once, when the module is imported).
py::exception<dynrt::Error>* error_type = nullptr;

}   // namespace

PYBIND11_MODULE(_dynrt, m) {   // NOLINT
    m.doc() = "dynrt: run ONNX models and YAML pipelines with shapes that change between runs (docs/python.md)";

    // Kept for the life of the process: never destroyed after the interpreter.
    error_type = new py::exception<dynrt::Error>(m, "Error", PyExc_RuntimeError);
    error_type->doc() = "A dynrt error: str() is the message dynrt's CLI prints; .file, .node, .field say where.";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const dynrt::Error& e) {
            py::object instance = py::handle(error_type->ptr())(py::str(e.what()));
            instance.attr("file") = e.context().file;
            instance.attr("node") = e.context().node;
            instance.attr("field") = e.context().field;
            instance.attr("message") = e.message();
            PyErr_SetObject(error_type->ptr(), instance.ptr());
        }
    });

    py::class_<dynrt::TensorInfo>(m, "TensorInfo",
                                  "An input or output: name, numpy dtype, shape (int, dim name or None)")
        .def_readonly("name", &dynrt::TensorInfo::name)
        .def_property_readonly("dtype", [](const dynrt::TensorInfo& t) { return py::dtype(numpy_name(t.dtype)); })
        .def_property_readonly("shape",
                               [](const dynrt::TensorInfo& t) {
                                   py::list dims;
                                   for (const auto& d : t.dims) dims.append(dim_object(d));
                                   return dims;
                               })
        .def("__repr__", [](const dynrt::TensorInfo& t) {
            return "TensorInfo(name='" + t.name + "', dtype=" + numpy_name(t.dtype) + ", shape=" + t.shape_text() + ")";
        });

    py::class_<PyRequest>(m, "Request",
                          "One stream of runs on a model (Model.create_request): inputs keep their last value, "
                          "shapes may change from run to run. One thread at a time.")
        .def("set_input", &PyRequest::set_input, py::arg("name"), py::arg("array"),
             "Copies `array` (C-contiguous, of the input's dtype) into the input `name`.")
        .def(
            "run",
            [](PyRequest& r, const py::object& feeds, const py::object& outputs) {
                return r.run(feeds, outputs, false);
            },
            py::arg("feeds") = py::none(), py::arg("outputs") = py::none(),
            "Sets the inputs in `feeds` (a dict; others keep their last value), runs, and returns "
            "{output name: numpy array} (copies) for `outputs` (default: all).")
        .def("output", &PyRequest::output, py::arg("name"), "A copy of an output of the last run.")
        .def("reset_state", &PyRequest::reset_state, "Forgets the variables a pipeline keeps across runs.")
        .def("set_profiling", &PyRequest::set_profiling, py::arg("on") = true,
             "Times every node of the runs that follow (last_run() gives the times).")
        .def("last_run", &PyRequest::last_run,
             "The last run's time: {'ms': ..., 'nodes': [{'node', 'op', 'impl', 'ms', 'device_ms'}, ...]} "
             "(nodes only for profiled runs).");

    py::class_<PyModel>(m, "Model",
                        "An ONNX model (.onnx) or a YAML pipeline loaded for a device; safe to run from several "
                        "threads at once.")
        .def(py::init([](const std::string& path, const std::optional<std::string>& device, unsigned threads,
                         const std::optional<std::string>& cache_dir, const std::optional<std::string>& passes,
                         const std::optional<std::vector<std::string>>& module_dirs, bool verbose, bool profiling) {
                 dynrt::ModelOptions o;
                 o.device = device.value_or("");
                 o.threads = threads;
                 o.cache_dir = cache_dir.value_or("");
                 o.passes = passes.value_or("");
                 o.module_dirs = module_dirs.value_or(std::vector<std::string>{});
                 o.verbose = verbose;
                 o.profiling = profiling;
                 py::gil_scoped_release release;
                 return std::make_unique<PyModel>(path, o);
             }),
             py::arg("path"), py::arg("device") = py::none(), py::arg("threads") = 0, py::arg("cache_dir") = py::none(),
             py::arg("passes") = py::none(), py::arg("module_dirs") = py::none(), py::arg("verbose") = false,
             py::arg("profiling") = false)
        .def_property_readonly("path", [](const PyModel& self) { return self.model().path(); })
        .def_property_readonly("inputs", [](const PyModel& self) { return self.model().inputs(); })
        .def_property_readonly("outputs", [](const PyModel& self) { return self.model().outputs(); })
        .def_property_readonly("device", [](const PyModel& self) { return self.model().device(); })
        .def_property_readonly("device_name", [](const PyModel& self) { return self.model().device_name(); })
        .def_property_readonly("warnings", [](const PyModel& self) { return self.model().warnings(); })
        .def("create_request", &PyModel::create_request, "A new request (for repeated runs, one per thread).")
        .def("run", &PyModel::run, py::arg("feeds"), py::arg("outputs") = py::none(),
             "Runs on `feeds` ({input name: array}, every input) and returns {output name: numpy array}; "
             "several threads may call it at once.");

    m.def(
        "load_tensor", [](const std::string& path) { return to_numpy(dynrt::load_tensor(path)); }, py::arg("path"),
        "Reads a .npy or .pb (ONNX TensorProto) file into a numpy array.");
}
