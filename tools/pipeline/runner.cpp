// Running a pipeline: device choice, prealloc settings, the schedule loop and
// --save-outputs staging.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "build_watch.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/compilation_context.hpp"
#include "dynrt/ocl_api.hpp"
#include "file_io.hpp"
#include "json_writer.hpp"
#include "pipeline.hpp"

namespace dynrt::pipeline {

namespace fs = std::filesystem;

ShapePredictor::Settings resolve_prealloc(const std::optional<std::string>& cli, const char* env,
                                          const std::optional<std::string>& yaml, std::string* source) {
    auto parse = [](const std::string& text, const std::string& where) {
        try {
            return ShapePredictor::parse_settings(text);
        } catch (const Error& e) {
            throw Error(where + ": " + e.message(), e.context());
        }
    };
    std::string from = "default";
    ShapePredictor::Settings s;
    if (cli) {
        s = parse(*cli, "--prealloc");
        from = "cli";
    } else if (env && *env) {
        s = parse(env, "DYNRT_MEM_PREALLOC");
        from = "env";
    } else if (yaml) {
        s = parse(*yaml, "run.prealloc");
        from = "yaml";
    }
    if (source) *source = from;
    return s;
}

EnginePtr create_device(const Registry& registry, const std::string& device, bool verbose, std::string* chosen,
                        std::string* note, const std::vector<std::string>& needed_ops, unsigned threads) {
    std::string dev = device.empty() ? "auto" : device;
    std::string why;
    if (dev == "auto") {
        // An engine without impls for the pipeline's ops would only fail later,
        // so auto looks at the impl lists before choosing.
        std::string missing;
        for (const auto& op : needed_ops)
            if (registry.impls(op, "ocl").empty()) missing += (missing.empty() ? "" : ", ") + op;
        if (registry.has_engine("ocl") && !missing.empty()) {
            why = "no ocl impls for: " + missing;
        } else if (registry.has_engine("ocl")) {
            try {
                EnginePtr e = registry.create_engine("ocl", EngineConfig{"ocl", verbose, threads});
                if (e && e->info().accelerator) {
                    if (chosen) *chosen = "ocl";
                    if (note) *note = "device auto -> ocl (" + e->info().name + ")";
                    return e;
                }
                // OpenCL on the host's own cores (PoCL) runs the same work
                // slower than the cpu engine's native impls.
                why = e ? "the OpenCL device is not an accelerator (" + e->info().name + ")"
                        : "the ocl engine returned nothing";
            } catch (const std::exception& ex) {
                why = std::string("the ocl engine failed: ") + ex.what();
            }
        } else {
            why = "no module registered an ocl engine";
        }
        dev = "cpu";
    }
    const std::string type = dev.substr(0, dev.find(':'));
    if (type == "ocl" && !registry.has_engine("ocl"))
        throw Error(
            "no OpenCL device module/platform: no loaded module registers an 'ocl' engine "
            "(check `dynrt ops`, or use --device cpu)",
            in_file("", "device"));
    if (!registry.has_engine(type)) {
        std::string msg = "unknown device '" + dev + "'; available:";
        for (const auto& n : registry.engine_names()) msg += " " + n;
        if (registry.engine_names().empty()) msg += " none (no device module loaded; check --modules-dir)";
        throw Error(msg, in_file("", "device"));
    }
    EnginePtr e;
    try {
        e = registry.create_engine(type, EngineConfig{dev, verbose, threads});
    } catch (const Error& ex) {
        if (type == "ocl") throw Error("no OpenCL device module/platform: " + ex.message(), ex.context());
        throw;
    } catch (const std::exception& ex) {
        const std::string what =
            type == "ocl" ? "no OpenCL device module/platform: " : "cannot create device '" + dev + "': ";
        throw Error(what + ex.what(), in_file("", "device"));
    }
    if (!e) throw Error("the '" + type + "' engine module returned no engine", in_file("", "device"));
    if (chosen) *chosen = dev;
    if (note)
        *note =
            why.empty() ? "device " + dev + " (" + e->info().name + ")" : "device auto -> " + dev + " (" + why + ")";
    return e;
}

namespace {

// Files of --save-outputs go to a sibling staging folder first; commit() moves
// every run_<k> into place, the destructor removes what was not committed.
// Each output's file name comes from its name (tools::output_file_names: only
// [A-Za-z0-9._-], distinct, never leading out of the folder), and every
// run_<k> holds index.json naming the output each file holds.
class OutputStaging {
public:
    OutputStaging(const std::string& dir, const std::vector<std::string>& outputs) : dir_(dir) {
        if (dir_.empty()) return;
        tools::check_output_folder(dir_, "--save-outputs");
        files_ = tools::output_file_names(outputs, ".npy");
        tools::JsonWriter j;
        j.begin_object();
        j.key("outputs");
        j.begin_array();
        for (size_t o = 0; o < outputs.size(); ++o) {
            j.begin_object();
            j.field("name", outputs[o]);
            j.field("file", files_[o]);
            j.end_object();
        }
        j.end_array();
        j.end_object();
        index_ = j.str() + "\n";
        fs::path d = fs::path(dir_).lexically_normal();
        if (d.filename().empty()) d = d.parent_path();
        staging_ = d.string() + ".partial-" + std::to_string(::getpid());
        std::error_code ec;
        fs::remove_all(staging_, ec);
        if (!d.parent_path().empty()) fs::create_directories(d.parent_path(), ec);
        // A new folder of ours, not one (or a link to one) that appeared
        // under that name since.
        const bool created = !ec && fs::create_directory(staging_, ec);
        if (!created) {
            // The destructor does not run for a throwing constructor.
            const std::string msg = "cannot create " + staging_.string() + ": " +
                                    (ec ? ec.message() : std::string("something else is there"));
            staging_.clear();
            throw Error(msg, in_file(dir_, "--save-outputs"));
        }
    }
    ~OutputStaging() {
        std::error_code ec;
        if (!staging_.empty()) fs::remove_all(staging_, ec);
    }
    bool enabled() const { return !staging_.empty(); }
    // Output `o` of run `run`.
    void save(size_t run, size_t o, const HostTensor& t) {
        const fs::path d = staging_ / ("run_" + std::to_string(run));
        std::error_code ec;
        if (fs::create_directory(d, ec)) write_file_atomic((d / "index.json").string(), index_);
        if (ec) throw Error("cannot create " + d.string() + ": " + ec.message(), in_file(dir_));
        write_npy((d / files_.at(o)).string(), t);
    }
    void commit() {
        if (staging_.empty()) return;
        tools::check_output_folder(dir_, "--save-outputs");
        std::error_code ec;
        fs::create_directories(dir_, ec);
        if (ec) throw Error("cannot create the output folder: " + ec.message(), in_file(dir_));
        std::vector<fs::path> entries;
        for (fs::directory_iterator it(staging_, ec), end; !ec && it != end; it.increment(ec))
            entries.push_back(it->path());
        if (ec) throw Error("cannot list " + staging_.string() + ": " + ec.message(), in_file(dir_));
        std::sort(entries.begin(), entries.end());
        // An existing run_<k> is replaced only when it is a folder: all are
        // checked before the first is moved.
        for (const fs::path& from : entries)
            tools::check_output_folder((fs::path(dir_) / from.filename()).string(), "--save-outputs");
        for (const fs::path& from : entries) {
            const fs::path target = fs::path(dir_) / from.filename();
            fs::remove_all(target, ec);
            fs::rename(from, target, ec);
            if (ec) throw Error("cannot move outputs into place: " + ec.message(), in_file(target.string()));
        }
    }

private:
    std::string dir_;
    fs::path staging_;
    std::vector<std::string> files_;   // per output
    std::string index_;                // index.json of every run_<k>
};

// Nodes that ran a host impl on a device that is not the cpu: each is
// reported once, the first run it does so. An impl is the host's when the
// registry lists it for the op with impl type "cpu" (Impl::name() is the
// entry's name, or "<op>_<entry name>" for the op SDK's impls).
class HostFallbacks {
public:
    HostFallbacks(const Registry& registry, const Engine& engine) : registry_(registry), device_(engine.info().type) {}

    void note(const RunStats& stats, RunResult& result, const RunOptions& options) {
        if (device_ == "cpu") return;
        for (const NodeStats& ns : stats.nodes) {
            if (ns.impl.empty() || ns.impl == "fused" || seen_.count(ns.node) || !on_host(ns)) continue;
            seen_.insert(ns.node);
            result.host_fallback.push_back(ns.node);
            if (options.on_host_fallback) options.on_host_fallback(ns.node, ns.op, ns.impl);
        }
    }

private:
    // Asked once per op and impl name (runs repeat the same few).
    bool on_host(const NodeStats& ns) {
        const auto [it, added] = impl_on_host_.try_emplace(ns.op + '\n' + ns.impl, false);
        if (added)
            for (const RegisteredImpl* r : registry_.impls(ns.op, "cpu"))
                it->second = it->second || ns.impl == r->entry.name || ns.impl == ns.op + "_" + r->entry.name;
        return it->second;
    }

    const Registry& registry_;
    std::string device_;
    std::set<std::string> seen_;
    std::map<std::string, bool> impl_on_host_;
};

// Adds the YAML location of the failing node (and the run) to a flow error.
Error locate(const Pipeline& p, const Error& e, size_t run, const std::string& label) {
    ErrorContext outer = in_file(p.file);
    const std::string& node = e.context().node;
    if (!node.empty()) {
        for (const auto& n : p.program->nodes())
            if (n.name == node) outer = n.where;
        if (outer.file.empty()) outer.file = p.file;
    }
    const Error located = e.with_context(outer);
    return Error("run " + std::to_string(run) + " (" + label + "): " + located.message(), located.context());
}

// "x f32 [1,3,8,8] (768 bytes), ..." for a run's inputs (an out-of-memory message).
std::string input_bytes(const Pipeline& p, const RunSpec& spec) {
    std::string list;
    for (const InputSpec& in : p.inputs) {
        const auto s = spec.shapes.find(in.name);
        if (s == spec.shapes.end()) continue;
        size_t count = 0, bytes = 0;
        const bool fits = count_fits(s->second, &count) && !__builtin_mul_overflow(count, byte_size(in.dtype), &bytes);
        list += (list.empty() ? "" : ", ") + in.name + " " + to_string(in.dtype) + " " + s->second.to_string() + " (" +
                (fits ? std::to_string(bytes) + " bytes" : std::string("past 2^64 bytes")) + ")";
    }
    return list.empty() ? std::string("none") : list;
}

// "x[1,7] y[1,7]": a run's input shapes, the key of its row in the statistics.
std::string shapes_key(const std::map<std::string, Shape>& shapes) {
    std::string out;
    for (const auto& [name, s] : shapes) out += (out.empty() ? "" : " ") + name + s.to_string();
    return out;
}

// Every named dim of a run: the schedule's symbols, and each input dim
// declared by name (a model's dim_param) with its value in this run.
std::map<std::string, int64_t> named_dims(const Pipeline& p, const RunSpec& spec) {
    std::map<std::string, int64_t> dims = spec.symbols;
    for (const InputSpec& in : p.inputs) {
        const auto s = spec.shapes.find(in.name);
        if (s == spec.shapes.end() || s->second.size() != in.dims.size()) continue;
        for (size_t d = 0; d < in.dims.size(); ++d)
            if (in.dims[d].kind == DimSpec::Kind::symbol) dims.emplace(in.dims[d].symbol, s->second[d]);
    }
    return dims;
}

// Warm-up, measured runs and duration from the options over run.warmup and
// run.iterations.
PlanSettings plan_settings(const Pipeline& p, const RunOptions& options) {
    PlanSettings plan;
    plan.warmup = options.warmup.value_or(p.run.warmup);
    if (plan.warmup > kMaxWarmupRuns)
        throw Error("warm-up of " + std::to_string(plan.warmup) + " runs is more than the limit of " +
                        std::to_string(kMaxWarmupRuns),
                    in_file(p.file, "warmup"));
    if (options.repeat && options.iterations)
        throw Error("--repeat and --iterations both set the measured runs; give one", in_file(p.file, "iterations"));
    const size_t size = p.runs.size();
    size_t measured = size;
    if (options.iterations) {
        measured = *options.iterations;
    } else if (options.repeat) {
        const size_t repeat = std::max<size_t>(1, *options.repeat);
        if (size && repeat > kMaxRuns / size && !(options.max_runs && options.max_runs <= kMaxRuns))
            throw Error("repeat " + std::to_string(repeat) + " x " + std::to_string(size) +
                            " schedule runs is more than the limit of " + std::to_string(kMaxRuns) + " runs",
                        in_file(p.file, "repeat"));
        if (__builtin_mul_overflow(repeat, size, &measured)) measured = SIZE_MAX;
    } else if (p.run.iterations) {
        measured = *p.run.iterations;
    }
    if (measured > kMaxRuns && !(options.max_runs && options.max_runs <= kMaxRuns))
        throw Error(std::to_string(measured) + " measured runs is more than the limit of " + std::to_string(kMaxRuns),
                    in_file(p.file, "iterations"));
    if (options.max_runs) measured = std::min(measured, options.max_runs);
    plan.measured = std::max<size_t>(measured, 1);
    if (!(options.duration_s >= 0 && options.duration_s <= kMaxDurationS))
        throw Error("duration must be in 0.." + std::to_string(static_cast<long>(kMaxDurationS)) + " s",
                    in_file(p.file, "duration"));
    plan.duration_s = options.duration_s;
    plan.cap = kMaxRuns;
    return plan;
}

std::string limit_text(const RunSettings& run) {
    std::string what;
    const size_t limit = generated_input_limit(run, &what);
    return limit ? std::to_string(limit) + " bytes, " + what : std::string("none");
}

}   // namespace

RunResult run_pipeline(const Pipeline& p, const RunOptions& options) {
    const Registry& registry = *p.program->registry();
    RunResult result;
    result.pipeline = p.name;
    result.file = p.file;
    result.seed = p.run.seed;
    result.load_ms = p.load_ms;
    result.prealloc =
        resolve_prealloc(options.prealloc, options.use_env_prealloc ? std::getenv("DYNRT_MEM_PREALLOC") : nullptr,
                         p.run.prealloc, &result.prealloc_source);

    const PlanSettings plan = plan_settings(p, options);
    result.plan = plan;

    std::vector<std::string> ops;
    for (const auto& n : p.program->nodes())
        if (n.def && !n.def->def.traits.is_input && !n.def->def.traits.is_constant &&
            std::find(ops.begin(), ops.end(), n.op) == ops.end())
            ops.push_back(n.op);
    std::string note;
    // A profiled run on OpenCL reads each node's kernel times from profiling
    // events: the engine's queues are made with profiling on.
    if (options.profile) ::setenv("DYNRT_OCL_PROFILE", "1", 1);
    EnginePtr engine = create_device(registry, options.device.value_or(p.run.device), options.verbose, &result.device,
                                     &note, ops, static_cast<unsigned>(options.threads.value_or(p.run.threads)));
    result.device_name = engine->info().name;
    if (options.verbose) std::fprintf(stderr, "dynrt: %s\n", note.c_str());

    NetworkOptions nopt;
    nopt.impl_cache_capacity = p.run.impl_cache_capacity;
    nopt.use_dynamic_impls = p.run.dynamic_impls;
    nopt.async_compile = p.run.async_compile;
    nopt.async_compile_after = p.run.async_compile_after;
    nopt.compile_threads = p.run.compile_threads;
    nopt.prealloc = result.prealloc;
    nopt.verbose = options.verbose;
    apply_passes(p.run.passes, nullptr, &nopt);
    result.passes = p.run.passes;
    result.passes_source = p.run.passes_source;
    if (options.verbose) {
        std::fprintf(stderr, "dynrt: passes %s (set by: %s)\n", p.run.passes.to_string().c_str(),
                     p.run.passes_source.c_str());
        for (const PassInfo& info : passes())
            std::fprintf(stderr, "dynrt:   %-20s %-3s  %s\n", info.name, p.run.passes.on(info.name) ? "on" : "off",
                         to_string(info.stage));
        for (const std::string& line : p.import_notes) std::fprintf(stderr, "dynrt: %s\n", line.c_str());
    }
    nopt.weights_cache_capacity = p.run.weights_cache_capacity;
    nopt.memory_budget_bytes = p.run.memory_budget_bytes;
    nopt.max_tensor_bytes = p.run.max_tensor_bytes;

    // A line on stderr while OpenCL programs build for more than a second
    // (the network's build and the runs).
    std::optional<OclBuildWatch> build_watch;
    build_watch.emplace(OclDevice::from(*engine), !options.show_builds);
    std::shared_ptr<Network> network;
    const auto compile_start = std::chrono::steady_clock::now();
    try {
        network = Network::create(p.program, engine, nopt);
    } catch (const Error& e) {
        throw e.with_context(in_file(p.file));
    }
    result.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start).count();
    InferRequest request(network);
    if (options.profile) {
        request.set_profiling(true);
        if (OclDevice* dev = OclDevice::from(*engine)) {
            Stream* stream = &request.stream();
            request.set_device_clock([dev, stream] { return dev->stream_profile(*stream).kernel_ns; });
        }
    }
    OutputStaging staging(options.save_outputs_dir, p.outputs);
    HostFallbacks fallbacks(registry, *engine);

    RunPlan planner(p.runs.size(), plan);
    const size_t total = planner.planned_runs();
    // `automatic` keeps records like `runs` until there are more than
    // kAutoRunRecords, then drops them and goes on as `summary`.
    const bool automatic = options.report_level == ReportLevel::automatic;
    ReportLevel level = automatic ? ReportLevel::runs : options.report_level;
    if (automatic && (total == 0 ? plan.warmup + plan.measured : total) > kAutoRunRecords) level = ReportLevel::summary;
    if (level >= ReportLevel::runs || options.keep_outputs)
        result.runs.reserve(std::min(total ? total : plan.warmup + plan.measured, kAutoRunRecords));
    // Per schedule entry, its shape combination in the statistics (looked up
    // the first time the entry runs, so shapes appear in execution order).
    std::vector<size_t> shape_of(p.runs.size(), SIZE_MAX);

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> measure_start;
    Clock::time_point schedule_start;
    RunPlan::Step step;
    size_t k = 0;
    while (planner.next(measure_start ? std::chrono::duration<double>(Clock::now() - *measure_start).count() : 0.0,
                        &step)) {
        if (!step.warmup && !measure_start) measure_start = Clock::now();
        if (step.new_round && p.run.reset_state_each_repeat) request.reset_state();
        const RunSpec& spec = p.runs[step.entry];
        RunRecord rec;
        rec.index = k;
        rec.label = spec.label();
        rec.shapes = spec.shapes;
        rec.warmup = step.warmup;
        const char* stage = "making its inputs";
        try {
            const auto inputs = make_inputs(p, spec, k);
            stage = "setting its inputs";
            for (const auto& [name, t] : inputs) request.set_input(name, t);
            stage = "running";
            const auto t0 = Clock::now();
            if (k == 0) schedule_start = t0;
            request.infer();
            const auto t1 = Clock::now();
            rec.host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
            rec.start_ns = static_cast<uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(t0 - schedule_start).count());
            rec.stats = request.last_run();
            fallbacks.note(rec.stats, result, options);
            stage = "reading its outputs";
            if (staging.enabled() || options.keep_outputs) {
                for (size_t o = 0; o < p.outputs.size(); ++o) {
                    HostTensor t = request.get_output(o);
                    if (staging.enabled()) staging.save(k, o, t);
                    if (options.keep_outputs) rec.outputs[p.outputs[o]] = std::move(t);
                }
            }
        } catch (const Error& e) {
            throw locate(p, e, k, rec.label);
        } catch (const std::bad_alloc&) {
            // The network turns a failed allocation inside a node into a
            // sized Error; one here is a host copy of an input or output.
            throw Error("run " + std::to_string(k) + " (" + rec.label + "): out of host memory while " + stage +
                            " (inputs " + input_bytes(p, spec) + "; limit of a generated input " + limit_text(p.run) +
                            ")",
                        in_file(p.file));
        } catch (const std::exception& e) {
            throw Error("run " + std::to_string(k) + " (" + rec.label + "): " + e.what(), in_file(p.file));
        }
        size_t& shape = shape_of[step.entry];
        if (shape == SIZE_MAX) shape = result.statistics.shape(shapes_key(spec.shapes), tokens_of(named_dims(p, spec)));
        rec.first_at_shape = result.statistics.add(shape, rec.host_ms, step.warmup);
        if (options.profile) result.profile.add(rec);
        if (k == 0) result.first_run_ms = rec.host_ms;
        ++result.run_count;
        result.totals += rec.stats.totals;
        result.peak_bytes = std::max<uint64_t>(result.peak_bytes, rec.stats.peak_bytes);
        result.host_ms += rec.host_ms;
        result.submit_ms += rec.stats.submit_ms;
        for (const NodeStats& n : rec.stats.nodes)
            if (!n.impl.empty() && n.counters.executions)
                result.impls[n.impl + (n.dynamic_impl ? " (dynamic)" : " (static)")] += n.counters.executions;
        ++k;
        if (options.on_run) options.on_run(k, total, rec);
        if (automatic && level == ReportLevel::runs && result.runs.size() == kAutoRunRecords) {
            // Past the size `automatic` keeps: from here on only statistics.
            std::vector<RunRecord>().swap(result.runs);
            level = ReportLevel::summary;
        }
        if (level >= ReportLevel::runs || options.keep_outputs) {
            if (level < ReportLevel::nodes) std::vector<NodeStats>().swap(rec.stats.nodes);
            result.runs.push_back(std::move(rec));
        }
    }
    result.report_level = level;
    result.stopped_by = planner.stopped_by();
    // Static builds still queued would only serve later runs, and there are
    // none: drop them (a decode loop queues one per step for shapes that never
    // come back) and let the running ones finish.
    if (CompilationContext* cc = network->compilation_context()) cc->cancel_pending();
    network->wait_for_background_builds();
    build_watch.reset();
    if (OclDevice* dev = OclDevice::from(*engine)) result.ocl_programs = dev->build_stats();
    result.engine_allocations = engine->allocation_count();
    result.engine_bytes_allocated = engine->bytes_allocated();
    result.engine_peak_bytes = engine->peak_bytes();
    if (options.before_commit) options.before_commit(result);
    staging.commit();
    return result;
}

}   // namespace dynrt::pipeline
