// The embedding API: load an ONNX model or a YAML pipeline, run it from an
// application (libdynrt_api.so, CMake target dynrt::api; docs/embedding.md).
//
//   dynrt::Model model("model.onnx");                  // modules, import, device, network
//   dynrt::Request request = model.create_request();   // one per thread
//   request.set_input("x", dynrt::DataType::f32, dynrt::Shape{1, 3, 64, 64}, data);
//   request.run();
//   const dynrt::HostTensor& y = request.output("y");  // valid until the next run()
//
// A Model holds what runs share: the modules it loaded, the built program, the
// device engine and the compiled network (constants on the device, the impl
// cache). It is immutable once built: any number of Requests, each on its own
// thread, run on one Model at once. A Request holds one stream of inferences:
// input and output buffers that follow the shapes it is given, its own memory
// pool and state (the variables of a KV-cache pipeline). One Request is used by
// one thread at a time.
//
// Every failure is a dynrt::Error (dynrt/error.hpp): the file, then the node,
// input or field, then what is wrong. A model, pipeline, device, pass or node
// that fails gives the message `dynrt run` prints (the same code raises it);
// inputs are checked as `dynrt run` checks a model's input files, and said
// the same way ("model.onnx: input 'x': shape [2,3] does not fit the declared
// [batch,3,height,width] (rank 2 vs 4)"). Nothing aborts on bad input.
// The header speaks only dynrt's core types (DataType, Shape, HostTensor) and
// the standard library.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/layout.hpp"

namespace dynrt {

struct ModelOptions {
    // "auto" (OpenCL on a GPU when every op has an OpenCL impl, else cpu),
    // "cpu", "ocl", "ocl:N". Empty: a pipeline's run.device, else "auto".
    std::string device;
    // cpu compute threads; 0: a pipeline's run.threads, else the physical
    // cores of the affinity mask (the cpu engine's default).
    unsigned threads = 0;
    // The OpenCL program cache folder (DYNRT_CACHE_DIR for this model's
    // engine; docs/opencl.md); "off" disables it. Empty: DYNRT_CACHE_DIR,
    // else $XDG_CACHE_HOME/dynrt, else ~/.cache/dynrt.
    std::string cache_dir;
    // Passes switched off or on, as `dynrt run --passes` takes them:
    // "-fusion,-views", "none", "none,+fusion" (docs/yaml.md). Applied over
    // DYNRT_PASSES, which is applied over a pipeline's run.passes.
    std::string passes;
    // Module folders; empty: DYNRT_MODULE_PATH, else the folder dynrt/ next
    // to libdynrt_api.so (<prefix>/lib/dynrt installed, build/lib/dynrt in
    // the build tree).
    std::vector<std::string> module_dirs;
    // Device choice, module folders and impl choices on stderr.
    bool verbose = false;
    // OpenCL: the device's queues record profiling events, so a profiled
    // run (Request::set_profiling) gives each node's kernel time too.
    bool profiling = false;
};

// One dim of an input or output: a fixed extent, or dynamic with the name
// the model gives it (an ONNX dim_param, a pipeline's shape symbol; the name
// `dynrt run --shapes` sets it by) or none.
struct Dim {
    int64_t value = -1;   // >= 0: fixed; -1: dynamic
    std::string symbol;   // dynamic: its name, "" when it has none
    bool is_static() const { return value >= 0; }
};

struct TensorInfo {
    std::string name;   // as the model writes it (set_input and output take it)
    DataType dtype = DataType::f32;
    std::vector<Dim> dims;
    // "[batch,3,64,?]"
    std::string shape_text() const;
};

// Where a profiled run's time went (Request::set_profiling), per op node in
// program order: the node's flow steps (shape inference,
// impl choice, allocation, arguments, execution, wait) on the host, and on
// OpenCL with ModelOptions::profiling its kernels' time on the device.
struct NodeTiming {
    std::string node, op;
    std::string impl;       // "" when skipped this run; "fused", "view": no kernel of its own
    double ms = 0;          // every flow step of the node
    double device_ms = 0;   // OpenCL kernel time (0 on the cpu, where `ms` holds it)
};

struct RunTiming {
    double ms = 0;                   // run(), wall time
    std::vector<NodeTiming> nodes;   // profiled runs only
};

class Request;

class Model {
public:
    // Loads `path`: an ONNX model (.onnx) or a YAML pipeline (anything else;
    // docs/yaml.md: its graph, run settings and passes; its schedule is not
    // run). Loads the modules, imports and builds the program, creates the
    // device's engine and compiles the network.
    explicit Model(const std::string& path, const ModelOptions& options = {});
    ~Model();
    Model(Model&&) noexcept;
    Model& operator=(Model&&) noexcept;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const std::string& path() const;
    const std::vector<TensorInfo>& inputs() const;
    const std::vector<TensorInfo>& outputs() const;
    // The device in use ("cpu", "ocl") and the engine's name for it.
    const std::string& device() const;
    const std::string& device_name() const;
    // Modules that failed to load (one message each); the others loaded.
    const std::vector<std::string>& warnings() const;

    // A new request on this model; it keeps the model's network alive.
    Request create_request() const;

    struct Impl;

private:
    std::shared_ptr<const Impl> impl_;
};

class Request {
public:
    ~Request();
    Request(Request&&) noexcept;
    Request& operator=(Request&&) noexcept;
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    // Sets input `name` (its name in the model, or the one `dynrt run`
    // gives it where they differ: "input_1:0" or "input_1_0") to a dense,
    // row-major tensor of `dtype` and `shape` at `data`. The data is copied
    // before set_input returns (once into a staging tensor that the request
    // keeps, once into the input's buffer on the device; see
    // docs/embedding.md): `data` may be freed or changed right after. Throws
    // for an unknown name, another dtype, a shape that does not fit the
    // declared dims. Shapes may change from one run to the next.
    void set_input(const std::string& name, DataType dtype, const Shape& shape, const void* data);
    void set_input(const std::string& name, const HostTensor& value);

    // Runs the model on the inputs set (each keeps its last value). Throws
    // when an input was never set, when inputs disagree on a dim they share
    // (two inputs of dim `batch` given 1 and 2), and for failures inside a
    // node (naming it).
    void run();

    // An output of the last run, owned by the request: valid until the next
    // run() or the request's end. Throws for an unknown name or before the
    // first run.
    const HostTensor& output(const std::string& name) const;
    const HostTensor& output(size_t index) const;

    // Forgets the variables a pipeline's state ops keep across runs (a KV
    // cache): the next run starts from their initial values.
    void reset_state();

    // Times every node of the runs that follow (off by default: a profiled
    // run waits for the device after each node). last_run() says where the
    // last run's time went.
    void set_profiling(bool on);
    RunTiming last_run() const;

private:
    friend class Model;
    struct Impl;
    explicit Request(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Reads a tensor file: .npy (format 1-3, little-endian, C order) or .pb (an
// ONNX TensorProto, as test_data_set_<k>/input_<i>.pb). Throws naming the file.
HostTensor load_tensor(const std::string& path);
// Writes `t` as a .npy file (through a temporary file renamed into place).
void save_npy(const std::string& path, const HostTensor& t);

}   // namespace dynrt
