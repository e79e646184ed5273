// `dynrt plot`: the profile's charts (top nodes by flow step, op types) and
// the latency per input shape.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "charts.hpp"
#include "svg.hpp"

namespace dynrt::plot {

namespace {

constexpr double kLabels = 250, kRight = 130;
constexpr double kBarsWidth = kChartWidth - kLabels - kRight;
constexpr size_t kMaxShapeRows = 60;
const char* const kSteps[] = {"shape", "impl", "memory", "arguments", "execute", "wait"};

std::string cut(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

double step_of(const ProfileNode& n, const std::string& step) {
    for (const auto& [k, v] : n.steps_ms)
        if (k == step) return v;
    return 0;
}

// A row's tooltip: what the node is and its steps a run.
std::string node_tip(const ProfileNode& n, double runs, bool device_clock) {
    std::string tip = n.node + " (" + n.op + (n.impl.empty() ? "" : ", " + n.impl) + ")\n" +
                      ms_text(n.total_ms / runs) + " ms a run:";
    for (const char* s : kSteps) {
        const double v = step_of(n, s);
        if (v > 0) tip += std::string(" ") + s + " " + ms_text(v / runs);
    }
    const double kernel = device_clock ? n.device_ms : step_of(n, "execute");
    const double host = n.total_ms - step_of(n, "wait") - (device_clock ? 0 : step_of(n, "execute"));
    tip += "\nhost " + ms_text(host / runs) + " ms, " + (device_clock ? "device " : "kernels ") +
           ms_text(kernel / runs) + " ms, waits " + ms_text(step_of(n, "wait") / runs) + " ms";
    return tip;
}

std::string x_axis(const Axis& x, double y, const std::string& label) {
    std::string out = "<g class=\"axis\">" + line(x.px0, y, x.px1, y, "axisline");
    for (const double t : x.ticks(6))
        out += line(x.at(t), y, x.at(t), y + 4, "axisline") + text(x.at(t), y + 16, tick_text(t), "tick", "middle");
    return out + text((x.px0 + x.px1) / 2, y + 32, label, "axislabel", "middle") + "</g>";
}

std::string step_legend(double y, bool device_clock) {
    const char* names[] = {"shape inference",
                           "impl choice, weights",
                           "memory",
                           "arguments",
                           device_clock ? "execute (enqueue)" : "execute (kernels)",
                           "wait"};
    std::string out = "<g class=\"legend\">";
    double x = 12;
    for (size_t s = 0; s < 6; ++s) {
        out += rect(x, y - 9, 10, 10, std::string("step-") + kSteps[s]) + text(x + 14, y, names[s], "legendtext");
        x += 26 + 6.8 * static_cast<double>(std::string(names[s]).size());
    }
    if (device_clock)
        out += rect(x, y - 7, 10, 6, "device") + text(x + 14, y, "device time (OpenCL events)", "legendtext");
    return out + "</g>";
}

// One node's row: its steps stacked, and its device time below on OpenCL.
std::string node_row(const ProfileNode& n, const Axis& x, double y, double runs, double wall, bool device_clock) {
    std::string out = "<g class=\"mark node\"><title>" + esc(node_tip(n, runs, device_clock)) + "</title>";
    out += text(kLabels - 8, y + 12, cut(n.node, 26) + " (" + cut(n.op, 14) + ")", "rowlabel", "end");
    double at = 0;
    for (const char* s : kSteps) {
        const double v = step_of(n, s) / runs;
        if (v <= 0) continue;
        out += rect(x.at(at), y + 2, x.at(at + v) - x.at(at), device_clock ? 9 : 13, std::string("step-") + s);
        at += v;
    }
    if (device_clock) out += rect(x.at(0), y + 12, x.at(n.device_ms / runs) - x.at(0), 5, "device");
    const double share = wall > 0 ? 100 * n.total_ms / wall : 0;
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.1f%%)", share);
    out += text(x.at(at) + 6, y + 12, ms_text(n.total_ms / runs) + " ms" + pct, "value");
    return out + "</g>";
}

}   // namespace

const ProfileGroup& shown_group(const Report& r, std::string* name) {
    const bool steady = r.profile.steady.runs > 0;
    if (name) *name = steady ? "steady runs" : "first runs at a shape (no steady runs)";
    return steady ? r.profile.steady : r.profile.first_at_shape;
}

std::string nodes_chart(const Report& r) {
    const ProfileGroup& g = shown_group(r, nullptr);
    const bool device_clock = r.profile.device_clock;
    const size_t n = std::min(g.nodes.size(), kTopNodes);
    if (!r.has_profile || n == 0 || g.runs <= 0) return "";
    double most = 0;
    for (size_t i = 0; i < n; ++i) most = std::max({most, g.nodes[i].total_ms, g.nodes[i].device_ms});
    const Axis x = value_axis({most / g.runs}, 1e300, kLabels, kLabels + kBarsWidth);
    const double top = 34, row = 22, bottom = top + row * static_cast<double>(n);
    std::string out =
        svg_open("nodes", kChartWidth, bottom + 44, "top nodes by time a run") + step_legend(16, device_clock);
    out += "<g class=\"marks\">";
    for (size_t i = 0; i < n; ++i)
        out += node_row(g.nodes[i], x, top + row * static_cast<double>(i), g.runs, g.wall_ms, device_clock);
    out += "</g>" + x_axis(x, bottom + 4, "ms a run");
    return out + "</svg>";
}

std::string ops_chart(const Report& r) {
    const ProfileGroup& g = shown_group(r, nullptr);
    std::vector<ProfileOp> ops;
    for (const ProfileOp& o : g.ops)
        if (o.total_ms > 0) ops.push_back(o);
    if (!r.has_profile || ops.empty() || g.runs <= 0) return "";
    std::stable_sort(ops.begin(), ops.end(),
                     [](const ProfileOp& a, const ProfileOp& b) { return a.total_ms > b.total_ms; });
    const Axis x = value_axis({ops.front().total_ms / g.runs}, 1e300, kLabels, kLabels + kBarsWidth);
    const double top = 10, row = 20, bottom = top + row * static_cast<double>(ops.size());
    std::string out = svg_open("ops", kChartWidth, bottom + 44, "op types by time a run") + "<g class=\"marks\">";
    for (size_t i = 0; i < ops.size(); ++i) {
        const ProfileOp& o = ops[i];
        const double y = top + row * static_cast<double>(i), v = o.total_ms / g.runs;
        const std::string nodes = count_text(o.nodes) + (o.nodes == 1 ? " node" : " nodes");
        char pct[32];
        std::snprintf(pct, sizeof pct, " (%.1f%%)", g.wall_ms > 0 ? 100 * o.total_ms / g.wall_ms : 0.0);
        out += "<g class=\"mark op\"><title>" + esc(o.op + ": " + nodes + ", " + ms_text(v) + " ms a run") + "</title>";
        out += text(kLabels - 8, y + 12, cut(o.op, 24) + " (" + nodes + ")", "rowlabel", "end");
        out += rect(x.at(0), y + 2, x.at(v) - x.at(0), 13, "opbar");
        out += text(x.at(v) + 6, y + 12, ms_text(v) + " ms" + pct, "value") + "</g>";
    }
    out += "</g>" + x_axis(x, bottom + 4, "ms a run");
    return out + "</svg>";
}

namespace {

std::string shape_tip(const ShapeRow& s) {
    std::string tip = s.shapes + "\nfirst run " + ms_text(s.first_ms) + " ms" +
                      (s.first_in_warmup ? " (warm-up)" : "") + "\n" + std::to_string(s.measured_runs) +
                      " measured runs";
    const Latency& l = s.steady;
    if (l.count)
        tip += ", " + std::to_string(l.count) + " steady: min " + ms_text(l.min) + ", p50 " + ms_text(l.p50) +
               ", p90 " + ms_text(l.p90) + ", p99 " + ms_text(l.p99) + ", max " + ms_text(l.max) + " ms";
    return tip;
}

std::string shape_row(const ShapeRow& s, const Axis& x, double y) {
    std::string out = "<g class=\"mark shape\"><title>" + esc(shape_tip(s)) + "</title>";
    out += text(kLabels - 8, y + 11, cut(s.shapes, 34), "rowlabel", "end");
    const Latency& l = s.steady;
    if (l.count) {
        out += line(x.at(l.min), y + 7, x.at(l.max), y + 7, "whisker");
        out += rect(x.at(l.p50), y + 2, std::max(x.at(l.p90) - x.at(l.p50), 1.5), 10, "box");
        out += line(x.at(l.p50), y + 1, x.at(l.p50), y + 13, "median");
    }
    out += diamond(x.at(s.first_ms), y + 7, 5, std::string("pt first") + (s.first_in_warmup ? " warmup" : ""));
    return out + "</g>";
}

}   // namespace

std::string shapes_chart(const Report& r) {
    if (r.shapes.empty()) return "";
    const size_t n = std::min(r.shapes.size(), kMaxShapeRows);
    std::vector<double> values;
    for (size_t i = 0; i < n; ++i) {
        values.push_back(r.shapes[i].first_ms);
        if (r.shapes[i].steady.count) values.insert(values.end(), {r.shapes[i].steady.min, r.shapes[i].steady.max});
    }
    const Axis x = value_axis(values, 30, kLabels, kLabels + kBarsWidth);
    const double top = 34, row = 19, bottom = top + row * static_cast<double>(n);
    std::string out = svg_open("shapes", kChartWidth, bottom + 44, "latency per input shape");
    out += "<g class=\"legend\">" + line(12, 12, 32, 12, "whisker") + text(36, 16, "steady min..max", "legendtext");
    out += rect(150, 7, 20, 10, "box") + text(174, 16, "p50..p90", "legendtext");
    out += diamond(250, 12, 5, "pt first") +
           text(260, 16, "first run at the shape (hollow: in warm-up)", "legendtext") + "</g>";
    for (const double t : x.ticks(6)) out += line(x.at(t), top, x.at(t), bottom, "gridline");
    out += "<g class=\"marks\">";
    for (size_t i = 0; i < n; ++i) out += shape_row(r.shapes[i], x, top + row * static_cast<double>(i));
    out += "</g>" + x_axis(x, bottom + 4, x.log ? "ms (log)" : "ms");
    if (n < r.shapes.size())
        out += text(kLabels, bottom + 40, std::to_string(r.shapes.size() - n) + " more shapes: in the table", "note");
    return out + "</svg>";
}

}   // namespace dynrt::plot
