// `dynrt run --profile`: per-node, per-op and per-step sums of the profiled
// runs, the console tables and the report's "profile" object (docs/report.md,
// "Profiles").
#include "profile.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

#include "pipeline.hpp"

namespace dynrt::pipeline {

namespace {

constexpr size_t kExecute = static_cast<size_t>(FlowStep::execute);
constexpr size_t kWait = static_cast<size_t>(FlowStep::wait);

double ms(uint64_t ns) { return static_cast<double>(ns) * 1e-6; }

double share(uint64_t part, uint64_t whole) {
    return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The host's share of a node's steps: every step but the kernel and the
// wait; on a device whose kernels a clock measures, the enqueue
// (`execute`) is host work too.
uint64_t host_ns(const StepTimes& t, bool device_clock) {
    uint64_t h = t.total() - t.ns[kWait];
    if (!device_clock) h -= t.ns[kExecute];
    return h;
}

void add_group(ProfileGroup& g, const RunRecord& run) {
    const RunStats& s = run.stats;
    ++g.runs;
    g.wall_ns += static_cast<uint64_t>(s.host_ms * 1e6);
    g.inputs_ns += s.profile.inputs_ns;
    g.finish_ns += s.profile.finish_ns;
    g.outputs_ns += s.profile.outputs_ns;
    g.report_ns += s.profile.report_ns;
    if (g.nodes.size() != s.nodes.size()) {
        g.nodes.assign(s.nodes.size(), StepTimes{});
        g.executions.assign(s.nodes.size(), 0);
    }
    for (size_t k = 0; k < s.nodes.size(); ++k) {
        g.nodes[k].add(s.nodes[k].times);
        g.steps.add(s.nodes[k].times);
        g.executions[k] += s.nodes[k].counters.executions;
    }
}

// Per op type: (nodes, nanoseconds) of a group, by op name.
std::map<std::string, std::pair<uint64_t, uint64_t>> op_totals(const ProfileGroup& g,
                                                               const std::vector<std::string>& node_ops) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> ops;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
        auto& o = ops[node_ops[k]];
        ++o.first;
        o.second += g.nodes[k].total();
    }
    return ops;
}

void group_json(tools::JsonWriter& j, const ProfileGroup& g, const Profile& p) {
    const double runs = g.runs ? static_cast<double>(g.runs) : 1.0;
    j.begin_object();
    j.field("runs", g.runs).field("wall_ms", ms(g.wall_ns));
    j.key("steps_ms").begin_object();
    for (size_t s = 0; s < kFlowSteps; ++s) j.field(to_string(static_cast<FlowStep>(s)), ms(g.steps.ns[s]));
    j.end_object();
    j.field("device_ms", ms(g.steps.device_ns));
    j.key("outside_nodes_ms").begin_object();
    j.field("inputs", ms(g.inputs_ns)).field("finish", ms(g.finish_ns));
    j.field("outputs", ms(g.outputs_ns)).field("report", ms(g.report_ns));
    j.end_object();
    j.field("accounted_ms", ms(g.accounted_ns())).field("unaccounted_ms", ms(g.unaccounted_ns()));
    j.field("accounted_share",
            g.wall_ns ? static_cast<double>(g.accounted_ns()) / static_cast<double>(g.wall_ns) : 0.0);

    // Nodes with any time, most time first.
    std::vector<size_t> order;
    for (size_t k = 0; k < g.nodes.size(); ++k)
        if (g.nodes[k].total() || g.nodes[k].device_ns) order.push_back(k);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return g.nodes[a].total() > g.nodes[b].total(); });
    j.key("nodes").begin_array();
    for (size_t k : order) {
        const StepTimes& t = g.nodes[k];
        j.newline(2).begin_object();
        j.field("node", p.node_names()[k]).field("op", p.node_ops()[k]).field("impl", p.node_impls()[k]);
        j.field("executions", g.executions[k]);
        j.field("total_ms", ms(t.total())).field("per_run_ms", ms(t.total()) / runs);
        j.key("steps_ms").begin_object();
        for (size_t s = 0; s < kFlowSteps; ++s)
            if (t.ns[s]) j.field(to_string(static_cast<FlowStep>(s)), ms(t.ns[s]));
        j.end_object();
        if (p.device_clock()) j.field("device_ms", ms(t.device_ns));
        j.end_object();
    }
    j.end_array();

    j.key("ops").begin_array();
    for (const auto& [op, v] : op_totals(g, p.node_ops())) {
        j.begin_object();
        j.field("op", op)
            .field("nodes", v.first)
            .field("total_ms", ms(v.second))
            .field("per_run_ms", ms(v.second) / runs);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

}   // namespace

uint64_t StepTimes::total() const { return std::accumulate(std::begin(ns), std::end(ns), uint64_t{0}); }

void StepTimes::add(const NodeTimes& t) {
    for (size_t s = 0; s < kFlowSteps; ++s) ns[s] += t.ns[s];
    device_ns += t.device_ns;
}

void Profile::add(const RunRecord& run) {
    const RunStats& s = run.stats;
    if (!s.profile.on) return;
    if (names_.size() != s.nodes.size()) {
        names_.clear();
        ops_.clear();
        impls_.assign(s.nodes.size(), std::string());
        for (const NodeStats& n : s.nodes) {
            names_.push_back(n.node);
            ops_.push_back(n.op);
        }
    }
    // The impl a node last ran with (a node that ran no kernel keeps the last one it had).
    for (size_t k = 0; k < s.nodes.size(); ++k) {
        if (!s.nodes[k].impl.empty()) impls_[k] = s.nodes[k].impl;
        if (s.nodes[k].times.device_ns) device_clock_ = true;
    }
    // Warm-up runs count only as the first run at their shape.
    if (run.first_at_shape) add_group(first_, run);
    else if (!run.warmup) add_group(steady_, run);
}

std::string Profile::table(size_t top) const {
    const ProfileGroup& g = shown();
    if (!g.runs) return "";
    const double runs = static_cast<double>(g.runs);
    std::string out;
    char line[512];
    auto put = [&](const char* fmt, auto... args) {
        std::snprintf(line, sizeof line, fmt, args...);
        out += line;
    };
    const bool steady = steady_.runs != 0;
    put("\nprofile: %llu %s runs, %.4f ms a run", static_cast<unsigned long long>(g.runs),
        steady ? "steady" : "first-at-a-shape", ms(g.wall_ns) / runs);
    if (steady && first_.runs)
        put(" (the first run at each of %llu shapes apart, below)", static_cast<unsigned long long>(first_.runs));
    out += "\n";
    put("  %-28s %12s %7s\n", "step", "ms a run", "share");
    const char* what[kFlowSteps] = {"shape inference",
                                    "impl choice and weights",
                                    "memory",
                                    "arguments",
                                    device_clock_ ? "execute (kernel enqueue)" : "execute (kernels)",
                                    device_clock_ ? "wait (for the device)" : "wait"};
    for (size_t s = 0; s < kFlowSteps; ++s)
        put("  %-28s %12.4f %6.1f%%\n", what[s], ms(g.steps.ns[s]) / runs, share(g.steps.ns[s], g.wall_ns));
    put("  %-28s %12.4f %6.1f%%\n", "outside the nodes", ms(g.outside_ns()) / runs, share(g.outside_ns(), g.wall_ns));
    put("  %-28s %12.4f %6.1f%%\n", "unaccounted", ms(g.unaccounted_ns()) / runs, share(g.unaccounted_ns(), g.wall_ns));
    const uint64_t host = host_ns(g.steps, device_clock_);
    put("  host work %.4f ms a run (%.1f%%)", ms(host) / runs, share(host, g.wall_ns));
    if (device_clock_)
        put(", device kernels %.4f ms a run (%.1f%%, OpenCL profiling events), host waits %.4f ms\n",
            ms(g.steps.device_ns) / runs, share(g.steps.device_ns, g.wall_ns), ms(g.steps.ns[kWait]) / runs);
    else
        put(", kernels %.4f ms a run (%.1f%%)\n", ms(g.steps.ns[kExecute]) / runs,
            share(g.steps.ns[kExecute], g.wall_ns));

    std::vector<size_t> order(g.nodes.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return g.nodes[a].total() > g.nodes[b].total(); });
    put("\n  top %zu nodes by time a run\n", std::min(top, order.size()));
    put("  %-32s %-18s %10s %7s %10s %10s %10s", "node", "op", "ms a run", "share", "host ms", "kernel ms", "wait ms");
    out += device_clock_ ? "  device ms\n" : "  impl\n";
    for (size_t i = 0; i < order.size() && i < top; ++i) {
        const size_t k = order[i];
        const StepTimes& t = g.nodes[k];
        if (!t.total()) break;
        const uint64_t kernel = device_clock_ ? t.device_ns : t.ns[kExecute];
        put("  %-32.32s %-18.18s %10.4f %6.1f%% %10.4f %10.4f %10.4f", names_[k].c_str(), ops_[k].c_str(),
            ms(t.total()) / runs, share(t.total(), g.wall_ns), ms(host_ns(t, device_clock_)) / runs, ms(kernel) / runs,
            ms(t.ns[kWait]) / runs);
        if (device_clock_) put("  %9.4f\n", ms(t.device_ns) / runs);
        else put("  %s\n", impls_[k].c_str());
    }

    const auto ops = op_totals(g, ops_);
    std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> by_time(ops.begin(), ops.end());
    std::stable_sort(by_time.begin(), by_time.end(),
                     [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
    put("\n  %-24s %6s %10s %7s\n", "op type", "nodes", "ms a run", "share");
    for (const auto& [op, v] : by_time) {
        if (!v.second) continue;
        put("  %-24.24s %6llu %10.4f %6.1f%%\n", op.c_str(), static_cast<unsigned long long>(v.first),
            ms(v.second) / runs, share(v.second, g.wall_ns));
    }
    if (steady && first_.runs) {
        const double fr = static_cast<double>(first_.runs);
        put("\n  first run at a shape: %.4f ms a run (shape %.4f, impl %.4f, memory %.4f, arguments %.4f, execute "
            "%.4f, wait %.4f)\n",
            ms(first_.wall_ns) / fr, ms(first_.steps.ns[0]) / fr, ms(first_.steps.ns[1]) / fr,
            ms(first_.steps.ns[2]) / fr, ms(first_.steps.ns[3]) / fr, ms(first_.steps.ns[4]) / fr,
            ms(first_.steps.ns[5]) / fr);
    }
    return out;
}

void Profile::json(tools::JsonWriter& j) const {
    j.begin_object();
    j.field("device_clock", device_clock_);
    j.key("steady");
    group_json(j, steady_, *this);
    j.key("first_at_shape");
    group_json(j, first_, *this);
    j.end_object();
}

}   // namespace dynrt::pipeline
