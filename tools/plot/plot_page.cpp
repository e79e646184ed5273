// `dynrt plot`: the HTML page around the charts: what was run, the notes for
// what the report lacks, the statistics, profile steps and totals tables,
// and the command that writes it.
#include <cmath>
#include <cstdio>

#include "charts.hpp"
#include "file_io.hpp"
#include "svg.hpp"

namespace dynrt::plot {

namespace {

const char* const kStyle = R"(
body{font-family:system-ui,"DejaVu Sans","Segoe UI",Roboto,sans-serif;color:#222;max-width:1000px;margin:20px auto;padding:0 14px;line-height:1.4}
h1{font-size:22px;margin:0 0 6px} h2{font-size:17px;margin:28px 0 4px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:14px;margin:16px 0 2px} p{margin:4px 0 8px;font-size:14px} .sub{color:#555;font-size:13px}
code{background:#f2f2f2;padding:1px 4px;border-radius:3px;font-size:12px;white-space:nowrap}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0} th,td{padding:3px 9px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f7f7f7} td:first-child,th:first-child{text-align:left} tr.all td{font-weight:600;border-top:1px solid #bbb}
.meta td{text-align:left} .meta td:first-child{color:#555}
.missing{background:#fff8e1;border-left:4px solid #e0a800;padding:8px 12px;margin:8px 0;font-size:13.5px}
svg.chart{display:block;width:100%;height:auto;margin:6px 0;font-family:inherit}
.gridline{stroke:#ececec} .axisline{stroke:#999} .tick{font-size:10.5px;fill:#555} .axislabel{font-size:11.5px;fill:#333}
.legendtext{font-size:11.5px;fill:#333} .note{font-size:11px;fill:#777} .rowlabel{font-size:11px;fill:#222} .value{font-size:10.5px;fill:#444}
.pt.steady{fill:#1f77b4} .pt.first{fill:#ff7f0e} .pt.warmup{fill:#fff;stroke-width:1.5} .pt.steady.warmup{stroke:#1f77b4} .pt.first.warmup{stroke:#ff7f0e}
.rangebar{fill:#9ec5e6} .range.first .rangebar{fill:#ffbf80} .rangemid{fill:#174a7c} .warmup-zone{fill:#f3f3f3}
.shape-change{stroke:#a05bc8;stroke-width:1;stroke-dasharray:3 3}
.bandbg{fill:#fafafa;stroke:#eee} .dimline{fill:none;stroke:#2a9d8f;stroke-width:2} .dimvalue{font-size:9.5px;fill:#22716a} .bandname{font-size:11px;fill:#333}
.bar.alloc{fill:#a6cde6} .bar.device-alloc{fill:#2f7dbf}
.series{fill:none;stroke-width:1.8} .s-peak{stroke:#d62728} .s-pool{stroke:#1f77b4} .s-tensor{stroke:#2ca02c} .s-used{stroke:#9467bd;stroke-dasharray:4 3}
.key.s-peak{fill:#d62728} .key.s-pool{fill:#1f77b4} .key.s-tensor{fill:#2ca02c} .key.s-used{fill:#9467bd}
.hover{fill:transparent} .hover:hover{fill:rgba(0,0,0,.06)}
.step-shape{fill:#66c2a5} .step-impl{fill:#8da0cb} .step-memory{fill:#a6d854} .step-arguments{fill:#e5c494}
.step-execute{fill:#fc8d62} .step-wait{fill:#b3b3b3} .device{fill:#6a3d9a} .opbar{fill:#fdb462}
.whisker{stroke:#1f77b4;stroke-width:1.5} .box{fill:#c6dbef;stroke:#1f77b4} .median{stroke:#08306b;stroke-width:2}
g.mark:hover .rowlabel{font-weight:bold}
)";

std::string row(const std::vector<std::string>& cells, const std::string& cls = "", const char* tag = "td") {
    std::string out = cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
    for (const std::string& c : cells) out += std::string("<") + tag + ">" + c + "</" + tag + ">";
    return out + "</tr>\n";
}

std::string missing(const std::string& id, const std::string& html) {
    return "<p class=\"missing\" id=\"" + id + "\">" + html + "</p>\n";
}

std::string header(const Report& r) {
    std::string out = "<h1>dynrt run report: " + esc(r.pipeline) + "</h1>\n<p class=\"sub\">" + esc(r.path) +
                      " &middot; written by <code>dynrt run " + esc(r.file) + " --report</code></p>\n";
    std::string device = esc(r.device) + (r.device_name.empty() ? "" : " (" + esc(r.device_name) + ")");
    if (!r.host_fallback.empty()) device += ", " + std::to_string(r.host_fallback.size()) + " nodes on the host";
    std::string runs = std::to_string(r.measured_runs) + " measured";
    if (r.warmup_runs) runs += " + " + std::to_string(r.warmup_runs) + " warm-up";
    char per_s[64];
    std::snprintf(per_s, sizeof per_s, "%.1f runs/s", r.runs_per_s);
    std::string rate = per_s;
    if (r.tokens_per_s.present) rate += ", " + count_text(std::round(r.tokens_per_s.value)) + " tokens/s";
    out +=
        "<table class=\"meta\">\n" + row({"device", device}) + row({"runs", runs}) +
        row({"report level", "<code>" + esc(r.report_level) + "</code>" + (r.has_profile ? ", with a profile" : "")}) +
        row({"throughput", rate + " (" + ms_text(r.measured_ms) + " ms of host time)"}) +
        row({"load, compile, first run",
             ms_text(r.load_ms) + " ms, " + ms_text(r.compile_ms) + " ms, " + ms_text(r.first_run_ms) + " ms"});
    if (!r.passes_spec.empty()) out += row({"passes", "<code>" + esc(r.passes_spec) + "</code>"});
    return out + "</table>\n";
}

std::string runs_section(const Report& r) {
    std::string out = "<h2 id=\"runs\">Latency per run</h2>\n";
    if (!r.has_runs || r.runs.empty())
        return out + missing("missing-runs",
                             "This report holds no per-run records (<code>report_level: " + esc(r.report_level) +
                                 "</code>), so there is no latency, allocation or memory chart per run. "
                                 "<code>dynrt run ... --report FILE --report-level runs</code> writes them (the "
                                 "default up to 10,000 runs); the statistics per shape are below.");
    out +=
        "<p>Host wall time of each <code>infer()</code>, in execution order; below it, every input dim that "
        "changes. Dashed lines: the shapes changed. Hover a mark for its run.";
    if (r.runs.size() > kMaxRunMarks)
        out += " " + std::to_string(r.runs.size()) + " runs: each mark spans the runs under it (least to most).";
    out += "</p>\n" + latency_chart(r) + "\n<h2 id=\"memory\">Allocations and memory per run</h2>\n";
    const std::string alloc = allocation_chart(r), bytes = memory_chart(r);
    if (alloc.empty() && bytes.empty())
        return out + missing("missing-memory", "The runs of this report hold no allocation counters or byte figures.");
    return out + "<h3>allocations</h3>\n" + alloc + "\n<h3>bytes</h3>\n" + bytes + "\n";
}

std::string steps_table(const Report& r) {
    const ProfileGroup& s = r.profile.steady;
    const ProfileGroup& f = r.profile.first_at_shape;
    auto cell = [](const ProfileGroup& g, double ms) {
        if (g.runs <= 0) return std::string("-");
        char share[32];
        std::snprintf(share, sizeof share, " (%.1f%%)", g.wall_ms > 0 ? 100 * ms / g.wall_ms : 0.0);
        return ms_text(ms / g.runs) + share;
    };
    std::string out = "<table id=\"steps\">\n" + row({"ms a run (share)", "steady runs (" + count_text(s.runs) + ")",
                                                      "first runs at a shape (" + count_text(f.runs) + ")"},
                                                     "", "th");
    for (size_t k = 0; k < s.steps_ms.size(); ++k) {
        const double fv = k < f.steps_ms.size() ? f.steps_ms[k].second : 0;
        out += row({esc(s.steps_ms[k].first), cell(s, s.steps_ms[k].second), cell(f, fv)});
    }
    if (r.profile.device_clock) out += row({"device (OpenCL events)", cell(s, s.device_ms), cell(f, f.device_ms)});
    out += row({"outside the nodes", cell(s, s.outside_ms), cell(f, f.outside_ms)});
    out += row({"unaccounted", cell(s, s.unaccounted_ms), cell(f, f.unaccounted_ms)});
    return out + row({"wall", cell(s, s.wall_ms), cell(f, f.wall_ms)}, "all") + "</table>\n";
}

std::string profile_section(const Report& r) {
    std::string out = "<h2 id=\"profile\">Where the time goes</h2>\n";
    if (!r.has_profile)
        return out + missing("missing-profile",
                             "This report has no profile. <code>dynrt run ... --report FILE --profile</code> times "
                             "every node's flow steps and kernels and adds it.");
    std::string group;
    const ProfileGroup& g = shown_group(r, &group);
    out += "<p>The " + esc(group) + ", summed and divided by their " + count_text(g.runs) +
           " runs: the top nodes by time a run, each bar split by flow step (host work: shape inference, impl "
           "choice, memory, arguments" +
           (r.profile.device_clock ? std::string(", the kernel enqueue; the device's time below it")
                                   : std::string("; the kernels: execute")) +
           "; waits for the device), then every op type. Hover a bar for its impl and times.</p>\n";
    const std::string nodes = nodes_chart(r), ops = ops_chart(r);
    if (nodes.empty()) out += missing("missing-nodes", "No node took any time in the profiled runs.");
    out += nodes + "\n<h3>op types</h3>\n" + ops + "\n<h3>flow steps</h3>\n" + steps_table(r);
    return out;
}

std::string stat_cells(const Latency& l) {
    if (!l.count) return "<td colspan=\"6\">(no steady runs)</td>";
    std::string out;
    for (const double v : {l.min, l.p50, l.p90, l.p99, l.max, l.mean}) out += "<td>" + ms_text(v) + "</td>";
    return out;
}

std::string statistics_section(const Report& r) {
    std::string out =
        "<h2 id=\"statistics\">Latency per input shape</h2>\n<p>Steady runs: the measured runs after "
        "the first at each shape; nearest-rank percentiles; <b>*</b> first run in warm-up.</p>\n" +
        shapes_chart(r) + "\n<table id=\"statistics-table\">\n" +
        row({"input shapes", "runs", "first ms", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"}, "",
            "th");
    for (const ShapeRow& s : r.shapes)
        out += "<tr class=\"shape\"><td>" + esc(s.shapes) + "</td><td>" + std::to_string(s.measured_runs) +
               "</td><td>" + ms_text(s.first_ms) + (s.first_in_warmup ? "*" : "") + "</td>" + stat_cells(s.steady) +
               "</tr>\n";
    out += "<tr class=\"all\"><td>every shape</td><td>" + std::to_string(r.measured_runs) + "</td><td>-</td>" +
           stat_cells(r.steady) + "</tr>\n";
    if (r.first_runs.count)
        out += "<tr class=\"all\"><td>first runs (one per shape)</td><td>" + std::to_string(r.first_runs.count) +
               "</td><td>-</td>" + stat_cells(r.first_runs) + "</tr>\n";
    return out + "</table>\n";
}

std::string totals_section(const Report& r) {
    std::string out =
        "<h2 id=\"totals\">Totals</h2>\n<p>Every counter summed over all runs, warm-up included; the "
        "engine's figures include the constants uploaded when the network was built.</p>\n"
        "<table id=\"totals-table\">\n";
    for (const auto& [k, v] : r.totals) {
        const bool bytes = k.find("bytes") != std::string::npos;
        out += row({esc(k), bytes ? bytes_text(v) : k.find("_ms") != std::string::npos ? ms_text(v) : count_text(v)});
    }
    for (const auto& [k, v] : r.engine)
        out += row({"engine " + esc(k), k.find("bytes") != std::string::npos ? bytes_text(v) : count_text(v)});
    return out + "</table>\n";
}

}   // namespace

std::string render_html(const Report& r) {
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>dynrt: " + esc(r.pipeline) +
        "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
    out += header(r);
    const bool per_run = r.has_runs && !r.runs.empty();   // else no #memory section
    out += std::string("<p class=\"sub\"><a href=\"#runs\">latency per run</a> &middot; ") +
           (per_run ? "<a href=\"#memory\">memory</a> &middot; " : "") +
           "<a href=\"#profile\">where the time goes</a> &middot; <a href=\"#statistics\">per shape</a> &middot; "
           "<a href=\"#totals\">totals</a></p>\n";
    out += runs_section(r) + profile_section(r) + statistics_section(r) + totals_section(r);
    return out +
           "<p class=\"sub\">Made by <code>dynrt plot</code> (docs/report.md, \"Plots\").</p>\n</body>\n</html>\n";
}

void write_plot(const std::string& report_path, const std::string& html_path) {
    const std::string html = render_html(read_report(report_path));
    tools::ReplacingFile out(html_path, "--output");
    out.append(html);
    out.commit();
}

}   // namespace dynrt::plot
