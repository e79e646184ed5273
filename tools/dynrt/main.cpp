// dynrt: the command-line front end.
//
//   dynrt run PIPELINE.yaml [options]   run a YAML pipeline over its shape schedule
//   dynrt run MODEL.onnx [options]      run an ONNX model (--shapes, --input per run)
//   dynrt info MODEL.onnx [--json]      what a model takes and gives, what of it cannot run here
//   dynrt ops [--json]                  list loaded modules, their ops and impls
//   dynrt plot REPORT.json -o OUT.html  a run report as an HTML page of charts
//
// Exit codes: 0 success, 1 the pipeline or a run failed, 2 bad command line
// (a model run that names what the model lacks or leaves a dim without a value
// included).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dynrt/module_loader.hpp"
#include "file_io.hpp"
#include "harness.hpp"
#include "int_range.hpp"
#include "model_cli.hpp"
#include "onnx_import.hpp"
#include "pipeline.hpp"
#include "plot.hpp"
#include "trace.hpp"

namespace po = boost::program_options;
using namespace dynrt;

namespace {

constexpr int kOk = 0;
constexpr int kRunError = 1;
constexpr int kUsageError = 2;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void print_usage(std::ostream& os) {
    os << "usage: dynrt <command> [options]\n\n"
          "commands:\n"
          "  run PIPELINE.yaml   run a YAML pipeline over its shape schedule\n"
          "  run MODEL.onnx      run an ONNX model (docs/onnx.md, \"Running a model\")\n"
          "  info MODEL.onnx     a model's inputs, outputs, dynamic dims, ops and what of it cannot run here\n"
          "  ops                 list the loaded modules, their ops and impls\n"
          "  plot REPORT.json    a `dynrt run --report` file as an HTML page of charts (-o OUT.html)\n"
          "  test-op OP          check an op on every impl over a shape sweep (docs/test-op.md)\n"
          "  onnx-test PATH...   run ONNX node-test folders (docs/conformance.md)\n\n"
          "`dynrt <command> --help` describes each command's options.\n";
}

std::shared_ptr<Registry> load_modules(const std::vector<std::string>& dirs, bool verbose, LoadReport* report_out) {
    auto registry = std::make_shared<Registry>();
    const auto path = ModuleLoader::search_path(dirs);
    if (verbose) {
        std::cerr << "dynrt: module folders:";
        for (const auto& d : path) std::cerr << " " << d;
        std::cerr << "\n";
    }
    LoadReport report = ModuleLoader::load_dirs(*registry, path);
    for (const auto& f : report.failed) std::cerr << "dynrt: warning: " << f.message << "\n";
    if (verbose) std::cerr << "dynrt: " << report.loaded.size() << " modules loaded\n";
    if (report_out) *report_out = std::move(report);
    return registry;
}

// Parses `args` against `desc` (+ positional), turning option errors into UsageError.
po::variables_map parse(const std::vector<std::string>& args, const po::options_description& desc,
                        const po::positional_options_description* pos) {
    po::variables_map vm;
    try {
        po::command_line_parser parser(args);
        parser.options(desc);
        if (pos) parser.positional(*pos);
        po::store(parser.run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    return vm;
}

// A single updating line on a terminal; with -v on a pipe, a line every 10%.
class Progress {
public:
    // `total` 0: unknown (a --duration decides).
    Progress(size_t total, bool verbose)
        : total_(total), tty_(::isatty(STDERR_FILENO) != 0), on_((total >= 16 || total == 0) && (tty_ || verbose)) {}
    void update(size_t done, const pipeline::RunRecord& rec) {
        if (!on_) return;
        if (total_ == 0) {
            if (tty_) std::fprintf(stderr, "\r\033[K[%zu] %s  %.3f ms", done, rec.label.c_str(), rec.host_ms);
            else if (done % 1000 == 0)
                std::fprintf(stderr, "dynrt: [%zu] %s  %.3f ms\n", done, rec.label.c_str(), rec.host_ms);
            std::fflush(stderr);
            return;
        }
        if (tty_) {
            std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  %.3f ms", done, total_, rec.label.c_str(), rec.host_ms);
            if (done == total_) std::fprintf(stderr, "\r\033[K");
        } else if (done * 10 / total_ != (done - 1) * 10 / total_ || done == total_) {
            std::fprintf(stderr, "dynrt: [%zu/%zu] %s  %.3f ms\n", done, total_, rec.label.c_str(), rec.host_ms);
        }
        std::fflush(stderr);
    }
    void abort() {
        if (on_ && tty_) std::fprintf(stderr, "\n");
    }
    // A duration's line is cleared once the runs are done.
    void finish() {
        if (on_ && tty_ && total_ == 0) std::fprintf(stderr, "\r\033[K");
    }

private:
    size_t total_;
    bool tty_;
    bool on_;
};

ErrorContext for_option(const std::string& path, const std::string& option) {
    ErrorContext c;
    c.file = path;
    c.field = option;
    return c;
}

// `dir` must be an existing folder this process can write into (errors name
// `path` and `option`).
void check_folder_writable(const std::filesystem::path& dir, const std::string& path, const std::string& option) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(option + ": the folder " + dir.string() + " does not exist", for_option(path, option));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw Error(option + ": cannot write into " + dir.string() + ": " + std::strerror(errno),
                    for_option(path, option));
}

// The folder that will hold `path` must exist and be writable (the file is
// written next to it and renamed), and `path` must be missing or a regular
// file: never a folder, a link, a FIFO or a device the rename would replace.
void check_writable_file(const std::string& path, const std::string& option) {
    namespace fs = std::filesystem;
    if (path.empty()) throw UsageError(option + " needs a file name");
    tools::check_output_file(path, option);
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    check_folder_writable(dir, path, option);
}

// `dir` is an existing writable folder (not a link to one), or can be
// created in an existing writable folder (the staging folder is made next to
// it).
void check_writable_folder(const std::string& dir, const std::string& option) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path d = fs::path(dir).lexically_normal();
    if (d.filename().empty()) d = d.parent_path();
    tools::check_output_folder(d.string(), option);
    fs::path parent = d.parent_path();
    if (parent.empty()) parent = ".";
    check_folder_writable(parent, dir, option);
    if (fs::is_directory(d, ec)) check_folder_writable(d, dir, option);
}

// A whole decimal number, nothing else.
bool parse_number(const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtod(s.c_str(), &end);
    return errno == 0 && end == s.c_str() + s.size() && std::isfinite(out);
}

// The integer option `--name` in min..max; a usage error naming it otherwise.
size_t count_option(const po::variables_map& vm, const std::string& name, int64_t min, size_t max) {
    const std::string text = vm[name].as<std::string>();
    int64_t n = 0;
    if (!tools::parse_int64(text, n) || n < min || static_cast<uint64_t>(n) > max)
        throw UsageError("--" + name + " must be an integer in " + std::to_string(min) + ".." + std::to_string(max) +
                         ", got '" + text + "'");
    return static_cast<size_t>(n);
}

// `dynrt run`'s list-valued options, filled by the parser.
struct RunLists {
    std::vector<std::string> modules_dirs, shapes, feeds, ranges;
};

constexpr const char* kRunUsage =
    "usage: dynrt run PIPELINE.yaml [options]\n"
    "       dynrt run MODEL.onnx [--shapes \"batch=1;seq=16\"]... [--input x=a.npy,b.npy]... [options]\n\n"
    "Runs a YAML pipeline (docs/yaml.md) once per schedule entry, or an ONNX\n"
    "model once per --shapes or per --input file (docs/onnx.md), on one infer\n"
    "request and prints a summary table: per input shapes the first run apart,\n"
    "then min/p50/p90/p99/max/mean of the steady runs, and throughput. A model\n"
    "with dynamic dims and no --shapes or data for them exits 2 listing its\n"
    "inputs and an example (`dynrt info MODEL.onnx` lists them too).\n\n"
    "Benchmarking: --warmup N runs first (not measured); then --iterations N or\n"
    "--repeat K set the measured runs (default: run.iterations, else one pass of\n"
    "the schedule); --duration S makes that count a least and runs on until S\n"
    "seconds are spent too. The schedule cycles from its first entry.\n\n"
    "Profiling: --profile times every node's flow steps and kernels and prints\n"
    "where the time goes; --trace FILE writes a Perfetto trace (docs/report.md).\n\noptions";

po::options_description run_description(RunLists& lists) {
    po::options_description desc(kRunUsage);
    desc.add_options()("help,h", "show this help")(
        "device", po::value<std::string>(),
        "auto|cpu|ocl|ocl:N (default: the pipeline's run.device, else auto: a GPU OpenCL device, else cpu)")(
        "threads", po::value<std::string>(),
        "cpu engine compute threads (default: the pipeline's run.threads, else the physical cores)")(
        "report", po::value<std::string>(), "write the JSON run report (docs/report.md) to this file")(
        "save-outputs", po::value<std::string>(), "write DIR/run_<k>/<output>.npy for every run k")(
        "modules-dir", po::value<std::vector<std::string>>(&lists.modules_dirs)->composing(),
        "module folder (repeatable); replaces DYNRT_MODULE_PATH and the default folder")(
        "prealloc", po::value<std::string>(),
        "ShapePredictor settings \"N BYTES DIFF RATIO\" (\"0 0 0 1.0\" disables); "
        "overrides DYNRT_MEM_PREALLOC and run.prealloc")(
        "repeat", po::value<std::string>(),
        "measure the whole schedule K times (K x the schedule's runs: 1..1000000); not with --iterations")(
        "iterations", po::value<std::string>(),
        "measure N runs, 1..1000000, cycling through the schedule (default: run.iterations, else one pass); "
        "not with --repeat")("warmup", po::value<std::string>(),
                             "N runs (0..100000) before measuring, from the schedule's start and cycling; not in "
                             "the statistics, reported as warm-up (default: run.warmup, else 0)")(
        "duration", po::value<std::string>(),
        "measure for at least S seconds (0 < S <= 86400): runs go on until both the time is spent and the "
        "--iterations / --repeat count (default: one pass) is made, and stop at 1000000 measured runs");
    desc.add_options()(
        "report-level", po::value<std::string>(),
        "summary|runs|nodes: what the --report holds (docs/report.md); summary: statistics and totals, runs: "
        "also a record per run, nodes: also every node of every run (default: runs up to 10000 runs, summary "
        "past that)")("verbose,v", "device choice, module folders, the passes, impl choices and progress on stderr")(
        "passes", po::value<std::string>(),
        "switch passes off or on: \"-fusion,-views\", \"fusion=off\", \"none\", \"none,+fusion\" (applied over "
        "DYNRT_PASSES, which is applied over run.passes; docs/yaml.md)")(
        "shapes", po::value<std::vector<std::string>>(&lists.shapes)->composing(),
        "MODEL.onnx: one run with these shapes, by input \"x=[1,7]\" or by dim name \"batch=1;seq=16\" "
        "(';' between items; an input name wins over a dim of the same name; repeatable: one run each)")(
        "input", po::value<std::vector<std::string>>(&lists.feeds)->composing(),
        "MODEL.onnx: name=FILE (every run), name=F0,F1,... (one per run) or name=DIR (its files in name "
        "order, one per run); .npy or .pb (ONNX TensorProto) (repeatable)")(
        "inputs", po::value<std::string>(),
        "MODEL.onnx: DIR/run_<k>/<input>.npy|.pb, one folder per run (the layout --save-outputs writes; "
        "test_data_set_<k>/input_<K>.pb too)")(
        "input-range", po::value<std::vector<std::string>>(&lists.ranges)->composing(),
        "MODEL.onnx: name=LOW..HIGH, the range of that input's random data (repeatable)")(
        "profile", "time every node's flow steps and kernels; print where the time goes (docs/report.md)")(
        "trace", po::value<std::string>(),
        "write a Chrome/Perfetto trace (JSON) of the runs to this file; implies --profile")(
        "trace-runs", po::value<std::string>(),
        "the runs the trace holds: K or A..B (run indices from 0; default all)")("pipeline", po::value<std::string>(),
                                                                                 "the pipeline YAML file");
    return desc;
}

// --repeat, --iterations, --warmup and --duration: how many runs are measured.
void read_run_counts(const po::variables_map& vm, pipeline::RunOptions& opt) {
    if (vm.count("repeat")) opt.repeat = count_option(vm, "repeat", 1, pipeline::kMaxRuns);
    if (vm.count("iterations")) opt.iterations = count_option(vm, "iterations", 1, pipeline::kMaxRuns);
    if (opt.repeat && opt.iterations)
        throw UsageError("--repeat and --iterations both set the measured runs; give one");
    if (vm.count("warmup")) opt.warmup = count_option(vm, "warmup", 0, pipeline::kMaxWarmupRuns);
    if (vm.count("duration")) {
        const std::string text = vm["duration"].as<std::string>();
        double s = 0;
        if (!parse_number(text, s) || !(s > 0) || s > pipeline::kMaxDurationS)
            throw UsageError("--duration must be a number of seconds, more than 0 and at most " +
                             std::to_string(static_cast<long>(pipeline::kMaxDurationS)) + ", got '" + text + "'");
        opt.duration_s = s;
    }
}

// --report-level, --device, --threads, --prealloc, --save-outputs, --profile.
void read_run_settings(const po::variables_map& vm, pipeline::RunOptions& opt) {
    // Records are kept only for a report that holds them.
    opt.report_level = pipeline::ReportLevel::automatic;
    if (vm.count("report-level")) {
        const std::string text = vm["report-level"].as<std::string>();
        if (!pipeline::parse_report_level(text, &opt.report_level))
            throw UsageError("--report-level must be summary, runs or nodes, got '" + text + "'");
    }
    if (!vm.count("report")) opt.report_level = pipeline::ReportLevel::summary;
    if (vm.count("device")) opt.device = vm["device"].as<std::string>();
    if (vm.count("threads")) {
        const std::string text = vm["threads"].as<std::string>();
        int64_t n = 0;
        if (!tools::parse_int64(text, n) || n < 1 || n > pipeline::kMaxThreads)
            throw UsageError("--threads must be an integer in 1.." + std::to_string(pipeline::kMaxThreads) + ", got '" +
                             text + "'");
        opt.threads = static_cast<size_t>(n);
    }
    if (vm.count("prealloc")) {
        opt.prealloc = vm["prealloc"].as<std::string>();
        try {
            ShapePredictor::parse_settings(*opt.prealloc);
        } catch (const Error& e) {
            throw UsageError("--prealloc: " + e.message());
        }
    }
    if (vm.count("save-outputs")) opt.save_outputs_dir = vm["save-outputs"].as<std::string>();
    opt.profile = vm.count("profile") || vm.count("trace");
    opt.show_builds = true;
}

pipeline::PassOverrides read_passes(const po::variables_map& vm) {
    pipeline::PassOverrides passes{pipeline::env_passes(), std::nullopt};
    if (vm.count("passes")) {
        passes.cli = vm["passes"].as<std::string>();
        try {
            PassSet::parse(*passes.cli, "--passes");
        } catch (const Error& e) {
            throw UsageError(e.what());
        }
    }
    return passes;
}

// --trace-runs: the run indices [first, last] the trace holds.
std::pair<uint64_t, uint64_t> read_trace_runs(const po::variables_map& vm) {
    if (!vm.count("trace-runs")) return {0, UINT64_MAX};
    if (!vm.count("trace")) throw UsageError("--trace-runs needs --trace FILE");
    const std::string text = vm["trace-runs"].as<std::string>();
    const size_t dots = text.find("..");
    int64_t a = 0, b = 0;
    const bool ok = dots == std::string::npos
                        ? tools::parse_int64(text, a) && (b = a, true)
                        : tools::parse_int64(text.substr(0, dots), a) && tools::parse_int64(text.substr(dots + 2), b);
    if (!ok || a < 0 || b < a)
        throw UsageError("--trace-runs takes K or A..B with 0 <= A <= B (run indices), got '" + text + "'");
    return {static_cast<uint64_t>(a), static_cast<uint64_t>(b)};
}

// Every destination is checked before anything runs, so a report that
// cannot be written is not found out after the runs.
void check_destinations(const po::variables_map& vm, const pipeline::RunOptions& opt) {
    if (vm.count("report")) check_writable_file(vm["report"].as<std::string>(), "--report");
    if (vm.count("trace")) check_writable_file(vm["trace"].as<std::string>(), "--trace");
    if (!opt.save_outputs_dir.empty()) check_writable_folder(opt.save_outputs_dir, "--save-outputs");
}

// The pipeline YAML, or the ONNX model with its --shapes / --input runs.
pipeline::Pipeline load_run_target(const po::variables_map& vm, const RunLists& lists,
                                   const std::shared_ptr<const Registry>& registry,
                                   const pipeline::PassOverrides& passes) {
    const std::string file = vm["pipeline"].as<std::string>();
    const bool model = std::filesystem::path(file).extension() == ".onnx";
    if (!model && (!lists.shapes.empty() || !lists.feeds.empty() || !lists.ranges.empty() || vm.count("inputs")))
        throw UsageError("--shapes, --input, --inputs and --input-range are for ONNX models (MODEL.onnx)");
    if (!model) return pipeline::load_pipeline(file, registry, passes);
    return pipeline::load_model_run(
        {file, lists.shapes, lists.feeds, vm.count("inputs") ? vm["inputs"].as<std::string>() : "", lists.ranges},
        registry, passes);
}

// A node the device has no impl for runs on the host (correct, but it maps
// its buffers and waits for the device): with -v a line per node as it is
// first seen, else one line at the end with the count per op (print()).
class HostFallbacks {
public:
    explicit HostFallbacks(bool verbose) : verbose_(verbose) {}
    void note(const std::string& node, const std::string& op, const std::string& impl) {
        ++ops_[op];
        if (verbose_)
            std::fprintf(stderr,
                         "dynrt: note: node '%s' (%s) has no impl on this device for its inputs; it runs on the host "
                         "(%s)\n",
                         node.c_str(), op.c_str(), impl.c_str());
    }
    void print() const {
        if (ops_.empty() || verbose_) return;
        size_t nodes = 0;
        std::string list;
        for (const auto& [op, n] : ops_) {
            nodes += n;
            list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + op;
        }
        std::fprintf(stderr,
                     "dynrt: note: %zu node%s ran on the host: no impl on this device for their inputs (%s; -v names "
                     "them)\n",
                     nodes, nodes == 1 ? "" : "s", list.c_str());
    }

private:
    bool verbose_;
    std::map<std::string, size_t> ops_;
};

// Runs the pipeline with the progress line, the trace, the host-fallback
// notes and the report written before the saved outputs are committed.
pipeline::RunResult run_target(const po::variables_map& vm, const pipeline::Pipeline& p, pipeline::RunOptions opt,
                               std::pair<uint64_t, uint64_t> trace_runs, HostFallbacks& fallbacks,
                               std::unique_ptr<pipeline::TraceWriter>& trace) {
    if (opt.repeat && !p.runs.empty() && *opt.repeat > pipeline::kMaxRuns / p.runs.size())
        throw UsageError("--repeat " + std::to_string(*opt.repeat) + " x " + std::to_string(p.runs.size()) +
                         " schedule runs is more than the limit of " + std::to_string(pipeline::kMaxRuns) + " runs");
    const size_t measured = opt.iterations ? *opt.iterations
                            : opt.repeat   ? *opt.repeat * p.runs.size()
                                           : p.run.iterations.value_or(p.runs.size());
    Progress progress(opt.duration_s > 0 ? 0 : opt.warmup.value_or(p.run.warmup) + measured, opt.verbose);
    // The trace file is made now (a destination that cannot be written fails
    // before anything runs), filled run by run and renamed into place with
    // the report; a failed run leaves nothing.
    if (vm.count("trace"))
        trace = std::make_unique<pipeline::TraceWriter>(vm["trace"].as<std::string>(),
                                                        "dynrt run " + vm["pipeline"].as<std::string>(),
                                                        trace_runs.first, trace_runs.second);
    opt.on_run = [&](size_t done, size_t, const pipeline::RunRecord& rec) {
        if (trace) trace->add(rec);
        progress.update(done, rec);
    };
    opt.on_host_fallback = [&fallbacks](const std::string& node, const std::string& op, const std::string& impl) {
        fallbacks.note(node, op, impl);
    };
    // The report is written once every run succeeded and before the saved
    // outputs are moved into place: when it cannot be written, no outputs are
    // committed either.
    const std::string report = vm.count("report") ? vm["report"].as<std::string>() : std::string();
    opt.before_commit = [&report, &trace](const pipeline::RunResult& r) {
        if (!report.empty()) tools::write_file_replacing(report, pipeline::report_json(r), "--report");
        if (trace) trace->commit();
    };
    try {
        pipeline::RunResult result = pipeline::run_pipeline(p, opt);
        progress.finish();
        return result;
    } catch (...) {
        progress.abort();
        throw;
    }
}

int cmd_run(const std::vector<std::string>& args) {
    RunLists lists;
    const po::options_description desc = run_description(lists);
    po::positional_options_description pos;
    pos.add("pipeline", 1);
    const auto vm = parse(args, desc, &pos);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    if (!vm.count("pipeline")) throw UsageError("dynrt run: missing PIPELINE.yaml");
    pipeline::RunOptions opt;
    opt.verbose = vm.count("verbose") != 0;
    read_run_counts(vm, opt);
    read_run_settings(vm, opt);
    const pipeline::PassOverrides passes = read_passes(vm);
    const auto trace_runs = read_trace_runs(vm);
    check_destinations(vm, opt);

    auto registry = load_modules(lists.modules_dirs, opt.verbose, nullptr);
    const pipeline::Pipeline p = load_run_target(vm, lists, registry, passes);
    HostFallbacks fallbacks(opt.verbose);
    std::unique_ptr<pipeline::TraceWriter> trace;
    const pipeline::RunResult result = run_target(vm, p, opt, trace_runs, fallbacks, trace);
    fallbacks.print();
    std::cout << pipeline::summary_table(result, opt.verbose);
    if (opt.profile) std::cout << result.profile.table();
    if (trace)
        std::cout << "\ntrace: " << vm["trace"].as<std::string>() << " (" << trace->events()
                  << " events; open it in https://ui.perfetto.dev or chrome://tracing)\n";
    return kOk;
}

void print_ops_json(const Registry& registry, const LoadReport& report) {
    using pipeline::json_quote;
    std::string out = "{\"modules\": [";
    bool first_module = true;
    for (const auto& m : registry.modules()) {
        out += first_module ? "\n  {" : ",\n  {";
        first_module = false;
        out += "\"path\": " + json_quote(m->path) + ", \"fingerprint\": " + json_quote(m->fingerprint) +
               ", \"name\": " + json_quote(m->name) + ", \"engines\": [";
        for (size_t i = 0; i < m->engines.size(); ++i) out += (i ? ", " : "") + json_quote(m->engines[i]);
        out += "], \"ops\": [";
        // Ops the module defines, then ops of other modules it adds impls to.
        std::vector<std::string> ops = m->ops;
        for (const auto& [op, impl] : m->impls)
            if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
        for (size_t i = 0; i < ops.size(); ++i) {
            out += (i ? ", " : "") + std::string("{\"name\": ") + json_quote(ops[i]) + ", \"impls\": [";
            bool first_impl = true;
            for (const RegisteredImpl* impl : registry.all_impls(ops[i])) {
                if (impl->module.get() != m.get()) continue;
                out += first_impl ? "{" : ", {";
                first_impl = false;
                out += "\"name\": " + json_quote(impl->entry.name) +
                       ", \"type\": " + json_quote(impl->entry.impl_type) +
                       ", \"shape\": " + json_quote(to_string(impl->entry.shape_type)) + ", \"dtypes\": [";
                for (size_t d = 0; d < impl->entry.dtypes.size(); ++d)
                    out += (d ? ", " : "") + json_quote(to_string(impl->entry.dtypes[d]));
                out += "], \"priority\": " + std::to_string(impl->entry.effective_priority()) +
                       ", \"reference\": " + (impl->entry.reference ? "true" : "false") + ", \"formats\": [";
                for (size_t f = 0; f < impl->entry.formats.size(); ++f)
                    out += (f ? ", " : "") + json_quote(to_string(impl->entry.formats[f]));
                out += "], \"weights_format\": " + json_quote(to_string(impl->entry.weights_format)) + "}";
            }
            out += "]}";
        }
        out += "]}";
    }
    out += first_module ? "], \"failed\": [" : "\n], \"failed\": [";
    for (size_t i = 0; i < report.failed.size(); ++i)
        out += (i ? ",\n  " : "\n  ") + std::string("{\"path\": ") + json_quote(report.failed[i].path) +
               ", \"error\": " + json_quote(report.failed[i].message) + "}";
    out += report.failed.empty() ? "]}\n" : "\n]}\n";
    std::cout << out;
}

void print_ops_text(const Registry& registry, const LoadReport& report) {
    for (const auto& m : registry.modules()) {
        std::cout << m->path << "\n  module " << m->name << ", fingerprint " << m->fingerprint << "\n";
        if (!m->engines.empty()) {
            std::cout << "  engines:";
            for (const auto& e : m->engines) std::cout << " " << e;
            std::cout << "\n";
        }
        std::vector<std::string> ops = m->ops;
        for (const auto& [op, impl] : m->impls)
            if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
        for (const auto& op : ops) {
            std::cout << "  op " << op
                      << (std::find(m->ops.begin(), m->ops.end(), op) == m->ops.end() ? " (impls only)" : "") << "\n";
            for (const RegisteredImpl* impl : registry.all_impls(op)) {
                if (impl->module.get() != m.get()) continue;
                std::cout << "    " << impl->entry.name << ": " << impl->entry.impl_type << ", "
                          << to_string(impl->entry.shape_type) << ", dtypes ";
                if (impl->entry.dtypes.empty()) std::cout << "any";
                for (size_t d = 0; d < impl->entry.dtypes.size(); ++d)
                    std::cout << (d ? "," : "") << to_string(impl->entry.dtypes[d]);
                std::cout << ", formats ";
                if (impl->entry.formats.empty()) std::cout << "any";
                for (size_t f = 0; f < impl->entry.formats.size(); ++f)
                    std::cout << (f ? "," : "") << to_string(impl->entry.formats[f]);
                std::cout << ", weights " << to_string(impl->entry.weights_format) << ", priority "
                          << impl->entry.effective_priority() << (impl->entry.reference ? " (reference)" : "") << "\n";
            }
        }
    }
    if (!report.failed.empty()) {
        std::cout << "failed to load:\n";
        for (const auto& f : report.failed) std::cout << "  " << f.path << ": " << f.message << "\n";
    }
}

int cmd_info(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: dynrt info MODEL.onnx [--json] [--passes SPEC] [--modules-dir DIR]...\n\n"
        "Describes an ONNX model: its inputs (dtype, dims, the names --shapes sets\n"
        "its dynamic dims by), outputs, opset imports, IR version, producer, nodes\n"
        "per op type, initializers, and what this build cannot run (ops no module\n"
        "maps, ops without a cpu or ocl impl, the import's error), with an example\n"
        "`dynrt run` command. Exit 0 when the file reads as a model, 1 otherwise\n"
        "(docs/onnx.md).\n\noptions");
    std::vector<std::string> modules_dirs;
    desc.add_options()("help,h", "show this help")("json", "print one JSON object (docs/onnx.md)")(
        "passes", po::value<std::string>(),
        "the import and program passes, as for run (over DYNRT_PASSES): the program's node count and the "
        "patterns matched follow them")(
        "modules-dir", po::value<std::vector<std::string>>(&modules_dirs)->composing(),
        "module folder (repeatable); replaces DYNRT_MODULE_PATH and the default folder")(
        "verbose,v", "module folders on stderr")("model", po::value<std::string>(), "the ONNX model");
    po::positional_options_description pos;
    pos.add("model", 1);
    const auto vm = parse(args, desc, &pos);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    if (!vm.count("model")) throw UsageError("dynrt info: missing MODEL.onnx");
    PassSet passes;
    if (const auto env = pipeline::env_passes()) passes.apply(*env, "DYNRT_PASSES");
    if (vm.count("passes")) passes.apply(vm["passes"].as<std::string>(), "--passes");
    auto registry = load_modules(modules_dirs, vm.count("verbose") != 0, nullptr);
    const pipeline::ModelInfo info = pipeline::describe_model(vm["model"].as<std::string>(), registry, passes);
    std::cout << (vm.count("json") ? pipeline::model_info_json(info) : pipeline::model_info_text(info));
    return kOk;
}

int cmd_ops(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: dynrt ops [--json] [--modules-dir DIR]...\n\n"
        "Lists every loaded module (path, fingerprint), the ops and impls it\n"
        "registered and the modules that failed to load.\n\noptions");
    std::vector<std::string> modules_dirs;
    desc.add_options()("help,h", "show this help")("json", "print JSON: {\"modules\": [...], \"failed\": [...]}")(
        "modules-dir", po::value<std::vector<std::string>>(&modules_dirs)->composing(),
        "module folder (repeatable); replaces DYNRT_MODULE_PATH and the default folder")("verbose,v",
                                                                                         "module folders on stderr");
    const auto vm = parse(args, desc, nullptr);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    LoadReport report;
    auto registry = load_modules(modules_dirs, vm.count("verbose") != 0, &report);
    if (vm.count("json")) print_ops_json(*registry, report);
    else print_ops_text(*registry, report);
    return kOk;
}

int cmd_plot(const std::vector<std::string>& args) {
    po::options_description desc(
        "usage: dynrt plot REPORT.json -o OUT.html\n\n"
        "Draws a `dynrt run --report` file as one self-contained HTML page (inline\n"
        "SVG: no script, no network): latency per run with the input dims that\n"
        "change, the first run at each shape and warm-up runs apart; allocations\n"
        "and bytes per run; with --profile, the top nodes by flow step and the op\n"
        "types; the statistics per input shape. A report without per-run records\n"
        "(--report-level summary) or without a profile says so on the page. Exit\n"
        "1 when the report cannot be read or is not a dynrt run report (the\n"
        "message names the file and field) or OUT.html cannot be written, 2 for a\n"
        "bad command line (docs/report.md, \"Plots\").\n\noptions");
    desc.add_options()("help,h", "show this help")("output,o", po::value<std::string>(),
                                                   "the HTML file to write (replaced whole, never half-written)")(
        "report", po::value<std::string>(), "the JSON report of `dynrt run --report`");
    po::positional_options_description pos;
    pos.add("report", 1);
    const auto vm = parse(args, desc, &pos);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    if (!vm.count("report")) throw UsageError("dynrt plot: missing REPORT.json");
    if (!vm.count("output")) throw UsageError("dynrt plot: missing -o OUT.html");
    const std::string out = vm["output"].as<std::string>();
    check_writable_file(out, "--output");
    plot::write_plot(vm["report"].as<std::string>(), out);
    return kOk;
}

}   // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(std::cerr);
        return kUsageError;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    try {
        if (cmd == "run") return cmd_run(args);
        if (cmd == "ops") return cmd_ops(args);
        if (cmd == "info") return cmd_info(args);
        if (cmd == "plot") return cmd_plot(args);
        if (cmd == "test-op") return dynrt_test_op_main(argc - 1, argv + 1);
        if (cmd == "onnx-test") return dynrt_onnx_test_main(argc - 1, argv + 1);
        if (cmd == "--help" || cmd == "-h" || cmd == "help") {
            print_usage(std::cout);
            return kOk;
        }
        throw UsageError("unknown command '" + cmd + "'");
    } catch (const UsageError& e) {
        std::cerr << "dynrt: " << e.what() << "\n\n";
        print_usage(std::cerr);
        return kUsageError;
    } catch (const pipeline::ModelArgsError& e) {
        // A model run naming what the model lacks: the message lists what it has.
        std::cerr << "dynrt: error: " << e.what() << "\n";
        return kUsageError;
    } catch (const std::exception& e) {
        std::cerr << "dynrt: error: " << e.what() << "\n";
        return kRunError;
    } catch (...) {
        // Whatever a module may throw: still unwound (staging folders and
        // temporary files removed) and reported, never std::terminate.
        std::cerr << "dynrt: error: unknown exception\n";
        return kRunError;
    }
}
