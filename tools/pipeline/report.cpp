// The JSON run report (docs/report.md) and the console summary table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "file_io.hpp"
#include "pipeline.hpp"

namespace dynrt::pipeline {

namespace {

using Json = tools::JsonWriter;

void counters(Json& j, const Counters& c, bool skip_zero) {
    j.begin_object();
    for (const auto& [name, v] : c.items())
        if (!skip_zero || v != 0) j.field(name, v);
    j.end_object();
}

std::string bytes_text(uint64_t b) {
    char buf[48];
    if (b >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%llu (%.1f MiB)", static_cast<unsigned long long>(b), b / 1048576.0);
    else if (b >= 1024)
        std::snprintf(buf, sizeof buf, "%llu (%.1f KiB)", static_cast<unsigned long long>(b), b / 1024.0);
    else std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(b));
    return buf;
}

std::string prealloc_text(const ShapePredictor::Settings& s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%zu %zu %zu %g", s.next_iters_preallocation_count, s.max_per_iter_size,
                  s.max_per_dim_diff, static_cast<double>(s.buffers_preallocation_ratio));
    return buf;
}

// A profiled run: where its wall time went (docs/report.md, "Profiles").
void run_profile(Json& j, const RunStats& s) {
    const RunProfile& p = s.profile;
    const uint64_t nodes = p.nodes_ns;
    const uint64_t outside = p.inputs_ns + p.finish_ns + p.outputs_ns + p.report_ns;
    const double wall = s.host_ms;
    const double accounted = static_cast<double>(nodes + outside) * 1e-6;
    j.key("profile").begin_object();
    j.field("nodes_ms", static_cast<double>(nodes) * 1e-6)
        .field("outside_nodes_ms", static_cast<double>(outside) * 1e-6);
    j.field("unaccounted_ms", wall > accounted ? wall - accounted : 0.0);
    j.end_object();
}

void node_times(Json& j, const NodeTimes& t) {
    j.key("times_us").begin_object();
    j.field("start", static_cast<double>(t.start_ns) * 1e-3);
    for (size_t s = 0; s < kFlowSteps; ++s)
        if (t.ns[s]) j.field(to_string(static_cast<FlowStep>(s)), static_cast<double>(t.ns[s]) * 1e-3);
    if (t.device_ns) j.field("device", static_cast<double>(t.device_ns) * 1e-3);
    j.end_object();
}

}   // namespace

std::string report_json(const RunResult& r) {
    Json j;
    j.begin_object();
    j.field("pipeline", r.pipeline).field("file", r.file).field("device", r.device).field("device_name", r.device_name);
    j.field("seed", static_cast<uint64_t>(r.seed));
    // Load (parse + build), compile and the first run, each on its own: what a
    // model costs before it serves.
    j.field("load_ms", r.load_ms).field("compile_ms", r.compile_ms);
    j.field("first_run_ms", r.first_run_ms);
    j.key("host_fallback").begin_array();
    for (const std::string& node : r.host_fallback) j.value(node);
    j.end_array();
    j.key("prealloc").begin_object();
    j.field("source", r.prealloc_source);
    j.field("next_iters_preallocation_count", static_cast<uint64_t>(r.prealloc.next_iters_preallocation_count));
    j.field("max_per_iter_size", static_cast<uint64_t>(r.prealloc.max_per_iter_size));
    j.field("max_per_dim_diff", static_cast<uint64_t>(r.prealloc.max_per_dim_diff));
    j.field("buffers_preallocation_ratio", static_cast<double>(r.prealloc.buffers_preallocation_ratio));
    j.field("disabled", ShapePredictor::disabled(r.prealloc));
    j.end_object();
    j.key("passes").begin_object();
    j.field("source", r.passes_source).field("spec", r.passes.to_string());
    j.key("on").begin_object();
    for (const PassInfo& info : passes()) j.field(info.name, r.passes.on(info.name));
    j.end_object();
    j.end_object();

    j.field("report_level", to_string(r.report_level));
    j.key("benchmark").begin_object();
    j.field("warmup", static_cast<uint64_t>(r.plan.warmup)).field("iterations", static_cast<uint64_t>(r.plan.measured));
    j.field("duration_s", r.plan.duration_s).field("stopped_by", r.stopped_by);
    j.end_object();
    j.key("statistics");
    statistics_json(j, r.statistics);

    // Per-run records only at the levels that keep them.
    if (r.report_level >= ReportLevel::runs) j.key("runs").begin_array();
    for (const auto& run : r.runs) {
        if (r.report_level < ReportLevel::runs) break;
        j.begin_object();
        j.field("index", static_cast<uint64_t>(run.index)).field("label", run.label);
        j.field("warmup", run.warmup).field("first_at_shape", run.first_at_shape);
        j.key("shapes").begin_object();
        for (const auto& [name, s] : run.shapes) {
            j.key(name).begin_array();
            for (int64_t d : s) j.value(d);
            j.end_array();
        }
        j.end_object();
        j.field("host_ms", run.host_ms);
        j.field("submit_ms", run.stats.submit_ms);
        j.key("counters");
        counters(j, run.stats.totals, false);
        j.field("peak_bytes", run.stats.peak_bytes).field("used_bytes", run.stats.used_bytes);
        j.field("pool_bytes", run.stats.pool_bytes).field("pool_peak_bytes", run.stats.pool_peak_bytes);
        j.field("tensor_bytes", run.stats.tensor_bytes);
        if (run.stats.profile.on) run_profile(j, run.stats);
        if (r.report_level >= ReportLevel::nodes) {
            j.key("nodes").begin_array();
            for (const auto& n : run.stats.nodes) {
                j.begin_object();
                j.field("node", n.node).field("op", n.op).field("impl", n.impl).field("dynamic_impl", n.dynamic_impl);
                j.key("counters");
                counters(j, n.counters, true);
                if (run.stats.profile.on && n.times.total()) node_times(j, n.times);
                j.end_object();
            }
            j.end_array();
        }
        j.end_object();
    }
    if (r.report_level >= ReportLevel::runs) j.end_array();

    j.key("totals").begin_object();
    for (const auto& [name, v] : r.totals.items()) j.field(name, v);
    j.field("peak_bytes", r.peak_bytes);
    j.field("runs", static_cast<uint64_t>(r.run_count));
    j.field("host_ms", r.host_ms);
    j.field("submit_ms", r.submit_ms);
    j.key("impls").begin_object();
    for (const auto& [name, v] : r.impls) j.field(name, v);
    j.end_object();
    j.end_object();

    if (!r.profile.empty()) {
        j.key("profile");
        r.profile.json(j);
    }
    if (r.ocl_programs) {
        const OclBuildStats& o = *r.ocl_programs;
        j.key("ocl_programs").begin_object();
        j.field("source_builds", static_cast<uint64_t>(o.source_builds));
        j.field("disk_cache_hits", static_cast<uint64_t>(o.disk_cache_hits));
        j.field("disk_cache_rejects", static_cast<uint64_t>(o.disk_cache_rejects));
        j.field("disk_cache_writes", static_cast<uint64_t>(o.disk_cache_writes));
        j.field("memory_cache_hits", static_cast<uint64_t>(o.memory_cache_hits));
        j.field("memory_cache_evictions", static_cast<uint64_t>(o.memory_cache_evictions));
        j.field("disk_cache_evictions", static_cast<uint64_t>(o.disk_cache_evictions));
        j.end_object();
    }
    j.key("engine").begin_object();
    j.field("allocations", r.engine_allocations).field("bytes_allocated", r.engine_bytes_allocated);
    j.field("peak_bytes", r.engine_peak_bytes);
    j.end_object();
    j.end_object();
    return j.str() + "\n";
}

std::string summary_table(const RunResult& r, bool all_shapes) {
    std::ostringstream out;
    out << "pipeline " << r.pipeline << " on " << r.device;
    if (!r.device_name.empty()) out << " (" << r.device_name << ")";
    out << ": " << r.statistics.measured_runs() << " measured runs";
    if (r.statistics.warmup_runs()) out << " (+" << r.statistics.warmup_runs() << " warm-up)";
    if (r.stopped_by == "duration" || r.stopped_by == "cap")
        out << " in " << r.plan.duration_s << " s" << (r.stopped_by == "cap" ? " (stopped at the run cap)" : "");
    out << ", prealloc \"" << prealloc_text(r.prealloc) << "\" (" << r.prealloc_source << ")";
    if (!r.passes.all_on()) out << ", passes " << r.passes.to_string() << " (" << r.passes_source << ")";
    out << "\n\n";
    out << statistics_table(r.statistics, all_shapes);

    char line[256];
    const Counters& t = r.totals;
    auto row = [&](const char* name, const std::string& value) {
        std::snprintf(line, sizeof line, "  %-24s %s\n", name, value.c_str());
        out << line;
    };
    out << "\ntotals\n";
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f ms", r.load_ms);
    row("load (parse + build)", ms);
    std::snprintf(ms, sizeof ms, "%.3f ms", r.compile_ms);
    row("compile", ms);
    std::snprintf(ms, sizeof ms, "%.3f ms", r.first_run_ms);
    row("first run", ms);
    std::snprintf(ms, sizeof ms, "%.3f ms", r.host_ms);
    row("host time (infer)", ms + std::string(r.statistics.warmup_runs() ? " (warm-up included)" : ""));
    row("allocations", std::to_string(t.allocations));
    row("reuses", std::to_string(t.reuses));
    row("reclaims", std::to_string(t.reclaims));
    row("bytes allocated", bytes_text(t.bytes_allocated));
    row("peak bytes", bytes_text(r.peak_bytes));
    row("impl cache hits", std::to_string(t.impl_cache_hits));
    row("impl cache misses", std::to_string(t.impl_cache_misses));
    row("static builds", std::to_string(t.static_builds));
    row("async builds",
        std::to_string(t.async_builds_queued) + " queued, " + std::to_string(t.async_builds_picked) + " picked");
    if (r.ocl_programs)
        row("OpenCL programs", std::to_string(r.ocl_programs->source_builds) + " built from source, " +
                                   std::to_string(r.ocl_programs->disk_cache_hits) + " from the disk cache, " +
                                   std::to_string(r.ocl_programs->memory_cache_hits) + " reused in memory");
    row("shape changes", std::to_string(t.shape_changes));
    row("executions", std::to_string(t.executions) + " (" + std::to_string(t.dynamic_impl_runs) + " on dynamic impls)");
    const auto& kinds = r.impls;
    if (kinds.empty()) row("impl kinds used", "none");
    else out << "  impl kinds used\n";
    for (const auto& [name, v] : kinds) out << "    " << name << ": " << v << " executions\n";
    return out.str();
}

void write_file_atomic(const std::string& path, const std::string& content) {
    tools::write_file_replacing(path, content, "output file");
}

}   // namespace dynrt::pipeline
