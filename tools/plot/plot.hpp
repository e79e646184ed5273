// `dynrt plot REPORT.json -o OUT.html`: a run report (docs/report.md) as one
// self-contained HTML page of inline SVG charts, drawn here in C++ (no
// script, no network, no font or file besides the page).
//
// read_report() checks the JSON against what `dynrt run --report` writes and
// keeps what the charts draw; render_html() makes the page from it:
//   - latency per run (one mark per run, the first run at a shape and warm-up
//     runs apart, shape changes marked) over bands of the input dims that
//     change (docs/report.md, "Plots");
//   - allocations and bytes per run;
//   - with a profile, where the time goes: top nodes by flow step (host work,
//     kernels, waits, device time) and op types;
//   - the statistics per input shape as a chart and a table.
// Parts a report lacks (no `runs` at level summary, no `profile` without
// --profile) are replaced by a note naming the option that adds them.
// write_plot() is the command: read, render, write through a temporary file
// renamed into place (tools::write_file_replacing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dynrt::plot {

// {count, min ... mean} of statistics.steady / first_runs / shapes[].steady.
struct Latency {
    size_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};

// statistics.shapes[]: one input-shape combination.
struct ShapeRow {
    std::string shapes;   // "x[1,3,8,8]"
    double first_ms = 0;
    bool first_in_warmup = false;
    size_t measured_runs = 0;
    Latency steady;
};

// A per-run figure that a report may lack (older reports, other writers).
struct Figure {
    bool present = false;
    double value = 0;
};

// runs[]: one inference.
struct RunPoint {
    uint64_t index = 0;
    std::string label;        // "batch=1 size=8"
    std::string shapes_key;   // "x[1,3,8,8]", as statistics.shapes[].shapes
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
    bool warmup = false, first_at_shape = false;
    double host_ms = 0;
    Figure submit_ms, allocations, device_allocations, bytes_allocated;
    Figure peak_bytes, used_bytes, pool_bytes, pool_peak_bytes, tensor_bytes;
};

// profile.steady.nodes[] / ops[]: times summed over the group's runs.
struct ProfileNode {
    std::string node, op, impl;
    double total_ms = 0, device_ms = 0;
    std::vector<std::pair<std::string, double>> steps_ms;   // shape, impl, memory, arguments, execute, wait
};
struct ProfileOp {
    std::string op;
    double nodes = 0, total_ms = 0;
};
struct ProfileGroup {
    double runs = 0, wall_ms = 0, device_ms = 0, outside_ms = 0, unaccounted_ms = 0;
    std::vector<std::pair<std::string, double>> steps_ms;
    std::vector<ProfileNode> nodes;   // most time first
    std::vector<ProfileOp> ops;
};
struct Profile {
    bool device_clock = false;
    ProfileGroup steady, first_at_shape;
};

struct Report {
    std::string path;   // the file read
    std::string pipeline, file, device, device_name, report_level;
    double load_ms = 0, compile_ms = 0, first_run_ms = 0;
    std::vector<std::string> host_fallback;
    std::string passes_spec, prealloc_source;
    size_t warmup_runs = 0, measured_runs = 0;
    double warmup_ms = 0, measured_ms = 0, runs_per_s = 0;
    Figure tokens_per_s;
    Latency steady, first_runs;
    std::vector<ShapeRow> shapes;
    bool has_runs = false;
    std::vector<RunPoint> runs;
    std::vector<std::pair<std::string, double>> totals;   // totals' numbers, in file order
    bool has_profile = false;
    Profile profile;
    std::vector<std::pair<std::string, double>> engine;
};

// Reports read are at most this large (the whole file is parsed in memory,
// about ten times its size: a 20,000-run report of 19 MB took 180 MB).
inline constexpr size_t kMaxReportBytes = size_t{256} << 20;

// Parses `text` as the report read from `path` (named in errors). Throws
// dynrt::Error naming the file and, for a report that is not one, the field
// ("statistics.shapes[2].first_ms") and what was expected; JSON syntax errors
// name the line and column.
Report parse_report(const std::string& text, const std::string& path);
// Reads `path` (a regular file of at most kMaxReportBytes) and parses it.
Report read_report(const std::string& path);

// The page.
std::string render_html(const Report& r);

// `dynrt plot`: reads `report_path` and writes the page to `html_path`.
void write_plot(const std::string& report_path, const std::string& html_path);

}   // namespace dynrt::plot
