// The pipeline front end: YAML pipelines, shape schedules, .npy files, runs and
// run reports. Used by the `dynrt` CLI and by the pipeline tests.
//
// load_pipeline() parses a YAML file (docs/yaml.md) into a built Program plus
// the expanded schedule: one RunSpec per inference, each with the value of every
// shape symbol and the tensors fed from .npy files. Every error names the file
// and the line:column of the YAML node at fault. run_pipeline() compiles the
// program for one engine and runs the schedule on one InferRequest, collecting
// per-run counters; report_json() and summary_table() turn the result into the
// JSON report (docs/report.md) and the console summary. yaml-cpp stays an
// implementation detail: nothing here includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/network.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/passes.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"
#include "dynrt/shape_predictor.hpp"
#include "json_writer.hpp"
#include "profile.hpp"
#include "run_plan.hpp"
#include "stats.hpp"

namespace dynrt::pipeline {

// An ErrorContext naming only a file (and optionally a field).
inline ErrorContext in_file(std::string file, std::string field = {}) {
    ErrorContext c;
    c.file = std::move(file);
    c.field = std::move(field);
    return c;
}

// ---- .npy (npy.cpp) --------------------------------------------------------

// Reads a .npy file (format 1.0/2.0/3.0, little-endian, C order; dtypes <f4 <f2
// <i4 <i8 |u1 |i1 |b1). Throws dynrt::Error (file = path) on anything else.
HostTensor read_npy(const std::string& path);
// Parses .npy bytes already in memory; `name` is used in messages.
HostTensor parse_npy(const std::string& bytes, const std::string& name);
// Serialises `t` as a version 1.0 .npy (2.0 when the header needs it).
std::string to_npy(const HostTensor& t);
// Writes `t` to `path` through a temporary file renamed at the end.
void write_npy(const std::string& path, const HostTensor& t);

// ---- pipelines (yaml_loader.cpp, schedule.cpp) -----------------------------

// One dim of a declared input: a fixed extent, a named symbol bound by the
// schedule, or an anonymous dynamic dim (optionally bounded) set only by a feed.
struct DimSpec {
    enum class Kind { fixed, symbol, anonymous };
    Kind kind = Kind::fixed;
    int64_t value = 0;    // fixed
    std::string symbol;   // symbol
    Dimension bounds;     // anonymous: allowed range
};

struct InputSpec {
    std::string name;
    DataType dtype = DataType::f32;
    std::vector<DimSpec> dims;
    double low = -1.0, high = 1.0;   // range of generated random data
    ErrorContext where;
    PartialShape partial_shape() const;
};

// One inference of the schedule.
struct RunSpec {
    size_t entry = 0;                                                 // index of the schedule entry
    ErrorContext where;                                               // that entry's YAML location
    std::map<std::string, int64_t> symbols;                           // every symbol of the inputs
    std::map<std::string, std::shared_ptr<const HostTensor>> feeds;   // input -> data
    std::map<std::string, Shape> shapes;                              // every input's concrete shape
    std::string label() const;                                        // "seq=7" / "x=[1,7,64]"
};

struct RunSettings {
    std::string device = "auto";
    uint64_t seed = 42;
    std::optional<std::string> prealloc;   // "N BYTES DIFF RATIO"
    size_t impl_cache_capacity = 300;
    bool async_compile = true;
    size_t async_compile_after = 2;   // NetworkOptions::async_compile_after
    bool dynamic_impls = true;
    size_t compile_threads = 1;
    size_t threads = 0;                  // EngineConfig::threads: cpu compute threads (0 = physical cores)
    size_t weights_cache_capacity = 3;   // NetworkOptions::weights_cache_capacity
    size_t memory_budget_bytes = 0;      // NetworkOptions::memory_budget_bytes (0 = none)
    size_t max_tensor_bytes = 0;         // NetworkOptions::max_tensor_bytes (0 = none)
    // The passes (dynrt/passes.hpp): run.passes and its aliases (run.fusion,
    // run.views, run.inplace_concat, run.fake_alignment, run.memory_pool),
    // then DYNRT_PASSES, then --passes (PassOverrides).
    PassSet passes;
    std::string passes_source = "default";   // the sources that set any: "yaml", "yaml+cli" ...
    // Variables start empty with every `dynrt run`; true (`reset_state: repeat`)
    // also empties them before each --repeat round.
    bool reset_state_each_repeat = false;
    // run.warmup and run.iterations (docs/yaml.md): runs before measuring, and
    // the measured runs (the schedule cycles); --warmup, --iterations and
    // --repeat replace them.
    size_t warmup = 0;
    std::optional<size_t> iterations;
};

struct Pipeline {
    std::string name;
    std::string file;                   // the YAML file as given
    std::shared_ptr<Program> program;   // built
    std::vector<InputSpec> inputs;      // in declaration order
    std::vector<std::string> outputs;
    std::vector<std::string> symbols;   // sorted
    std::vector<RunSpec> runs;          // the expanded schedule
    RunSettings run;
    double load_ms = 0;   // parsing and building the program (a model: import included)
    // A model: its program's node count and what the import patterns did
    // (import_notes()); `dynrt run -v` prints them.
    std::vector<std::string> import_notes;
};

// The most runs one pipeline expands to (its schedule, every entry's values,
// products and repeats counted) and the most runs one execution makes
// (schedule x --repeat): beyond, loading or running is an error naming the
// field and this cap, before anything is expanded.
inline constexpr size_t kMaxRuns = 1000000;
// run.compile_threads is 1..kMaxCompileThreads, run.threads and --threads
// 1..kMaxThreads.
inline constexpr int64_t kMaxCompileThreads = 256;
inline constexpr int64_t kMaxThreads = 1024;

// A model file's graph (docs/onnx.md): the built program, one InputSpec per
// graph input (dynamic dims are symbols named by their dim_param, made
// distinct when characters other than letters, digits and '_' are replaced;
// "<input>_<k>" for each anonymous dim: no dim_param, "?", "" or "unk__N")
// and the model's output names. Throws
// dynrt::Error naming the file (and the node) when the model cannot load or
// run.
struct ModelGraph {
    std::shared_ptr<Program> program;
    std::vector<InputSpec> inputs;
    std::vector<std::string> outputs;
    // Per input: its name in the model, where InputSpec::name is the
    // program's (a ':' made '_': "input_1:0" is "input_1_0").
    std::vector<std::string> onnx_inputs;
    size_t program_nodes = 0;   // the program's op nodes (inputs and constants not counted)
    // Subgraphs the import patterns took, per pass, and the candidates they
    // declined ("pattern_attention: Softmax 'sm': why").
    std::map<std::string, size_t> pattern_matches;
    std::vector<std::string> pattern_declines;
};
// ModelGraph::program_nodes, pattern_matches and pattern_declines as lines
// of text: "imported: 153 program nodes; patterns matched: pattern_attention
// 2", then "declined by pattern_attention: Softmax 'sm': why" per decline.
std::vector<std::string> import_notes(const ModelGraph& g);
// `passes`: the import and program passes applied while it is built.
ModelGraph load_model_graph(const std::string& path, const std::shared_ptr<const Registry>& registry,
                            const PassSet& passes = PassSet::all());

// Pass specs from outside the pipeline file, applied over its run.passes in
// this order, each winning for the passes it names: `env` (the value of
// DYNRT_PASSES; read by the caller, see env_passes()), then `cli` (--passes).
struct PassOverrides {
    std::optional<std::string> env;
    std::optional<std::string> cli;
};
// DYNRT_PASSES when set and not empty.
std::optional<std::string> env_passes();

// Parses and builds a pipeline. Relative paths (.npy) resolve against the YAML
// file's folder. Throws dynrt::Error with file:line:column on bad input.
Pipeline load_pipeline(const std::string& path, std::shared_ptr<const Registry> registry,
                       const PassOverrides& passes = {});
// Same from text in memory; `file` names it in messages, `base_dir` resolves
// relative paths.
Pipeline load_pipeline_text(const std::string& text, const std::string& file, const std::string& base_dir,
                            std::shared_ptr<const Registry> registry, const PassOverrides& passes = {});

// Closest names to `name` among `candidates` (edit distance), best first.
std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates,
                                     size_t max_count = 3);

// Input data for run `run_index` (counted over the whole execution): fed
// tensors as given, others random from (settings seed, run index, input),
// identical for identical arguments. A generated input larger than
// generated_input_limit() is an Error naming the input, its shape, its bytes
// and the limit, raised before anything is allocated.
std::map<std::string, HostTensor> make_inputs(const Pipeline& p, const RunSpec& run, uint64_t run_index);
// The most bytes one generated (random) input may take: run.max_tensor_bytes
// when set and below the host's physical memory, else that memory (0 when
// unknown: no limit). `what` receives which of the two it is.
size_t generated_input_limit(const RunSettings& run, std::string* what = nullptr);

// ---- running (runner.cpp) ---------------------------------------------------

// Effective ShapePredictor settings. Precedence: `cli` (--prealloc) > `env`
// (DYNRT_MEM_PREALLOC; nullptr = unset) > `yaml` (run.prealloc) > defaults.
// `source` (optional) receives "cli", "env", "yaml" or "default".
ShapePredictor::Settings resolve_prealloc(const std::optional<std::string>& cli, const char* env,
                                          const std::optional<std::string>& yaml, std::string* source = nullptr);

// Picks and creates the engine for `device` ("auto", "cpu", "ocl", "ocl:N").
// auto = ocl when an ocl engine can be created on an accelerator (a GPU) and
// every op in `needed_ops` has an ocl impl, else cpu. `chosen` receives the
// device string actually used; `note` a line saying why (for -v). `threads`:
// EngineConfig::threads (0 = the physical cores).
EnginePtr create_device(const Registry& registry, const std::string& device, bool verbose, std::string* chosen,
                        std::string* note = nullptr, const std::vector<std::string>& needed_ops = {},
                        unsigned threads = 0);

struct RunRecord {
    size_t index = 0;                            // over the whole execution
    std::string label;                           // RunSpec::label()
    std::map<std::string, Shape> shapes;         // input shapes
    double host_ms = 0;                          // infer()
    uint64_t start_ns = 0;                       // when infer() was called, from the first run's call
    bool warmup = false;                         // a warm-up run: not in the statistics
    bool first_at_shape = false;                 // the first run at these input shapes
    RunStats stats;                              // `nodes` empty below ReportLevel::nodes
    std::map<std::string, HostTensor> outputs;   // only with keep_outputs
};

// What a run keeps per run (and the JSON report holds): `summary` only the
// statistics and totals (8 bytes a measured run), `runs` also one RunRecord per
// run without its nodes, `nodes` also every node's stats of every run.
// `automatic` (`dynrt run` without --report-level) is `runs` up to
// kAutoRunRecords runs and `summary` past that.
enum class ReportLevel { automatic, summary, runs, nodes };
inline constexpr size_t kAutoRunRecords = 10000;
const char* to_string(ReportLevel level);
// "summary", "runs", "nodes"; false for anything else.
bool parse_report_level(const std::string& text, ReportLevel* level);

struct RunResult;

struct RunOptions {
    std::optional<std::string> device;     // overrides run.device
    std::optional<size_t> threads;         // overrides run.threads
    std::optional<std::string> prealloc;   // --prealloc
    bool use_env_prealloc = true;          // read DYNRT_MEM_PREALLOC
    // Measured runs: --repeat K (the whole schedule K times) or --iterations N
    // (N runs, the schedule cycles), not both; else run.iterations, else one
    // pass. With a duration they are the least made.
    std::optional<size_t> repeat;
    std::optional<size_t> iterations;
    std::optional<size_t> warmup;   // overrides run.warmup
    double duration_s = 0;          // --duration: measure at least this long (0 = no)
    ReportLevel report_level = ReportLevel::nodes;
    bool verbose = false;
    std::string save_outputs_dir;   // "" = none
    // A line on stderr while OpenCL programs build for more than a second
    // (build_watch.hpp); the CLI turns it on.
    bool show_builds = false;
    // --profile: every run times its nodes' flow steps (RunStats::profile,
    // NodeStats::times), summed into RunResult::profile; on an OpenCL device
    // the queue records profiling events, read as each node's device time.
    bool profile = false;
    size_t max_runs = 0;         // 0 = all measured runs (tests shorten schedules)
    bool keep_outputs = false;   // fill RunRecord::outputs (tests); keeps the records
    // Called after each run with (done, total, record); progress display.
    // `total` is 0 when a duration decides how many runs there are.
    std::function<void(size_t, size_t, const RunRecord&)> on_run;
    // Called once every run succeeded, before the --save-outputs files are
    // moved into place: what else the caller writes (the report) happens here,
    // so when it fails no outputs are committed.
    std::function<void(const RunResult&)> before_commit;
    // Called once per node that runs on the host although the device is not
    // the cpu (no impl of that device serves it): "node", "op", "impl".
    std::function<void(const std::string&, const std::string&, const std::string&)> on_host_fallback;
};

struct RunResult {
    std::string pipeline;
    std::string file;
    std::string device;
    std::string device_name;
    ShapePredictor::Settings prealloc;
    std::string prealloc_source;
    PassSet passes;              // RunSettings::passes
    std::string passes_source;   // RunSettings::passes_source
    uint64_t seed = 0;
    // The level the records were kept at (never `automatic`), and the runs
    // kept: every run (warm-up included) at `runs` and `nodes`, none at `summary`.
    ReportLevel report_level = ReportLevel::nodes;
    std::vector<RunRecord> runs;
    RunStatistics statistics;   // per-shape latencies, warm-up, throughput
    PlanSettings plan;          // warm-up, measured runs, duration in effect
    std::string stopped_by;     // RunPlan::stopped_by()
    // Totals over every run, warm-up included.
    size_t run_count = 0;
    Counters totals;
    uint64_t peak_bytes = 0;   // max over runs (engine peak)
    double host_ms = 0;
    double submit_ms = 0;
    double first_run_ms = 0;                 // the first run of the execution
    std::map<std::string, uint64_t> impls;   // executions per "impl (dynamic)" / "impl (static)"
    double load_ms = 0;                      // Pipeline::load_ms
    double compile_ms = 0;                   // compiling the network for the device (Network::create)
    // Engine-level totals over the whole execution, constants and I/O included.
    uint64_t engine_allocations = 0;
    uint64_t engine_bytes_allocated = 0;
    uint64_t engine_peak_bytes = 0;
    // Nodes that ran on the host on a device other than the cpu, in the order
    // first seen (RunOptions::on_host_fallback).
    std::vector<std::string> host_fallback;
    Profile profile;   // RunOptions::profile
    // The OpenCL engine's program builds over the whole execution (network
    // build included); absent on the cpu.
    std::optional<OclBuildStats> ocl_programs;
};

// Runs the pipeline's schedule. `--save-outputs` files are written into a
// staging folder and moved into place only after the last run succeeded.
// Errors during a run get the run index and the node's YAML location.
RunResult run_pipeline(const Pipeline& p, const RunOptions& options);

// ---- reports (report.cpp) ---------------------------------------------------

std::string report_json(const RunResult& r);
// Console summary: per distinct input shape count and median latency, then the
// totals. `all_shapes` = false elides the middle of long shape lists.
std::string summary_table(const RunResult& r, bool all_shapes = false);
// Writes `content` to `path` through `path.tmp-<pid>` and a rename, so readers
// never see half a file; `path` must be missing or a regular file, never a
// link, FIFO or device (tools::write_file_replacing, file_io.hpp).
void write_file_atomic(const std::string& path, const std::string& content);
// JSON string literal with escaping (tools/common/json_writer.hpp).
using tools::json_quote;

}   // namespace dynrt::pipeline
