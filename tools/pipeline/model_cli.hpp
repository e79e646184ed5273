// A model first: `dynrt info MODEL.onnx` (what the model takes and gives,
// what of it this build cannot run) and the runs of `dynrt run MODEL.onnx`
// built from the command line (--shapes by input or by dim name, --input per
// run, --inputs DIR, .npy and .pb tensors). docs/onnx.md, "Running a model".
//
// Errors of a model run name the model file and the input ("model.onnx:
// input 'x': ..."), never a generated file. Like pipeline.hpp, this header
// speaks only dynrt types: the ONNX reader stays inside the library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline.hpp"

namespace dynrt::pipeline {

// A model run's command line that cannot run as given: it names an input or
// a dim the model lacks, leaves a dynamic dim without a value, or gives a
// number of files that does not fit the number of runs. what() says so and
// lists what the model has; `dynrt run` prints it and exits 2.
class ModelArgsError : public Error {
public:
    using Error::Error;
};

// ---- dynrt info (model_info.cpp) ----------------------------------------------

struct ModelDimInfo {
    bool is_static = false;
    int64_t value = 0;        // is_static
    std::string symbol;       // inputs, dynamic dims: the name --shapes gives it a value by
    std::string dim_param;    // as the model writes it ("" for a static or anonymous dim)
    bool anonymous = false;   // dynamic and named by nothing ("?", "", "unk__N", -1, no value)
};

struct ModelTensorInfo {
    std::string name;        // inputs: the name --shapes and --input take; outputs: the ONNX name
    std::string onnx_name;   // as the model writes it
    std::string dtype;       // "f32" ..., or the ONNX type dynrt lacks ("STRING")
    std::string kind = "tensor";
    bool has_shape = false;
    std::vector<ModelDimInfo> dims;
};

// One dynamic dim of the inputs, by the symbol --shapes sets it with.
struct ModelSymbolInfo {
    std::string name;
    std::string dim_param;   // the model's spelling when it differs from `name` ("seq len")
    bool anonymous = false;
    int64_t example = 16;             // the value the example command gives it
    std::vector<std::string> where;   // "input_ids dim 1", ...
};

struct ModelOpInfo {
    std::string op_type;
    std::string domain;   // "ai.onnx" for the default domain
    size_t nodes = 0;
    bool import_rule = false;   // a loaded module maps it
    std::string dynrt_op;       // what it maps to ("" without a rule)
    // Per device ("cpu", "ocl"): whether the dynrt op has an impl there.
    std::vector<std::pair<std::string, bool>> impls;
};

struct ModelInfo {
    std::string file;
    int64_t ir_version = 0;
    std::string producer_name, producer_version, graph_name;
    std::map<std::string, int64_t> opsets;   // "ai.onnx" for the default domain
    std::vector<ModelTensorInfo> inputs, outputs;
    std::vector<ModelSymbolInfo> symbols;   // in the order the inputs use them
    size_t nodes = 0;
    // When the graph imports: its op nodes in the program, what the import
    // patterns took (per pass) and the candidates they declined, with why.
    size_t program_nodes = 0;
    std::map<std::string, size_t> pattern_matches;
    std::vector<std::string> pattern_declines;
    std::vector<ModelOpInfo> ops;   // by op type, in the order first used
    size_t initializers = 0;
    uint64_t initializer_bytes = 0;
    // Empty when the graph imports into a program; else why it does not (an
    // op no module maps, a node its rule refuses, a broken graph).
    std::string import_error;
    // Per device ("cpu", "ocl", then other registered engines): empty when
    // every node has an impl there for its input type, else the first that
    // has none (on a device other than the cpu such a node runs on the host).
    // Only when the graph imports.
    std::vector<std::pair<std::string, std::string>> devices;
    // Each thing this build cannot run, with why: ops without an import rule
    // or without an impl on a device, the import error.
    std::vector<std::string> unsupported;
};

// Reads `path` and describes it against the loaded modules, imported with
// `passes` (ModelInfo::program_nodes and the patterns follow them). Throws
// dynrt::Error (file = path) only when the file cannot be read as an ONNX
// model; what this build cannot run is described, not thrown.
ModelInfo describe_model(const std::string& path, const std::shared_ptr<const Registry>& registry,
                         const PassSet& passes = PassSet::all());
// The whole description, for a terminal (`dynrt info`).
std::string model_info_text(const ModelInfo& info);
// The same as one JSON object (`dynrt info --json`; docs/onnx.md).
std::string model_info_json(const ModelInfo& info);
// Only the inputs and their dynamic dims (what `dynrt run` prints when a dim
// has no value).
std::string model_inputs_text(const ModelInfo& info);
// A --shapes value setting every dynamic dim by name ("batch=1;seq=16"): 1
// for batch-like dims, 0 for a cache's past length, 1600 for audio samples,
// 16 for the others (ModelSymbolInfo::example); empty when every dim is
// static.
std::string example_shapes(const ModelInfo& info);
// --input-range values the example adds: 0..2 for an integer input whose
// name holds "mask" (random integers are 0..9, and a mask of them makes
// positions past the model's tables).
std::vector<std::string> example_ranges(const ModelInfo& info);
// "dynrt run MODEL --shapes \"...\" [--input-range ...]"; empty when every
// dim is static.
std::string example_command(const ModelInfo& info);

// ---- dynrt run MODEL.onnx (model_run.cpp) ------------------------------------

struct ModelRunArgs {
    std::string file;                  // MODEL.onnx
    std::vector<std::string> shapes;   // each --shapes: one run, "x=[1,7];batch=1;seq=16"
    // --input: "name=FILE" (every run), "name=F0,F1,..." (one per run),
    // "name=DIR" (DIR's .npy/.pb files in name order, one per run).
    std::vector<std::string> inputs;
    std::string inputs_dir;            // --inputs DIR: DIR/run_<k>/<input>.npy|.pb, one folder per run
    std::vector<std::string> ranges;   // --input-range name=LOW..HIGH
};

// The pipeline `dynrt run MODEL.onnx` runs: the model's graph and one run per
// --shapes or per file of --input (a count of 1 goes with every run), each
// input fed, shaped or random. Run settings are the defaults, with `passes`
// over them. Throws ModelArgsError for a command line that names what the
// model lacks or leaves a dim without a value, dynrt::Error naming the model
// and the input for data that does not fit it.
Pipeline load_model_run(const ModelRunArgs& args, std::shared_ptr<const Registry> registry,
                        const PassOverrides& passes = {});

}   // namespace dynrt::pipeline
