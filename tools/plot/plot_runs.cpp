// `dynrt plot`: the charts over the runs (latency, shape dims, allocations,
// bytes), one mark per run up to kMaxRunMarks runs.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <sstream>

#include "charts.hpp"
#include "svg.hpp"

namespace dynrt::plot {

namespace {

constexpr double kLeft = 118, kRight = 18;
constexpr double kPlotWidth = kChartWidth - kLeft - kRight;
constexpr size_t kMaxShapeLines = 300;
constexpr size_t kMaxBands = 6;
constexpr int64_t kNoDim = INT64_MIN;

// Where runs lie along x: run position i spans [left(i), left(i + 1)].
struct RunX {
    size_t n = 1;
    double left(size_t i) const { return kLeft + kPlotWidth * static_cast<double>(i) / static_cast<double>(n); }
    double mid(const Group& g) const { return (left(g.first) + left(g.last + 1)) / 2; }
};

// One input dim that changes over the runs (dims with the same values share
// a band), named by the schedule symbol of the run labels that always equals
// it ("size: x[2], x[3]").
struct DimBand {
    std::string name;
    std::vector<int64_t> values;   // per run; kNoDim where a run lacks it
};

// "batch=1 size=8" -> {batch: 1, size: 8}; other words are skipped.
std::map<std::string, int64_t> label_values(const std::string& label) {
    std::map<std::string, int64_t> out;
    std::string word;
    std::istringstream in(label);
    while (in >> word) {
        const size_t eq = word.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        char* end = nullptr;
        const std::string v = word.substr(eq + 1);
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (!v.empty() && end && *end == '\0') out[word.substr(0, eq)] = n;
    }
    return out;
}

std::string symbol_of(const std::vector<RunPoint>& runs, const std::vector<int64_t>& values) {
    std::map<std::string, int64_t> first = label_values(runs.front().label);
    for (const auto& [name, v] : first) {
        bool all = true;
        for (size_t i = 0; i < runs.size() && all; ++i) {
            const auto labels = label_values(runs[i].label);
            const auto it = labels.find(name);
            all = it != labels.end() && it->second == values[i];
        }
        if (all) return name;
    }
    return "";
}

std::vector<DimBand> dim_bands(const std::vector<RunPoint>& runs, size_t* dropped) {
    std::map<std::string, std::vector<int64_t>> dims;   // "x[2]" -> value per run
    std::vector<std::string> order;
    for (size_t i = 0; i < runs.size(); ++i)
        for (const auto& [input, shape] : runs[i].shapes)
            for (size_t a = 0; a < shape.size(); ++a) {
                const std::string key = input + "[" + std::to_string(a) + "]";
                auto [it, added] = dims.try_emplace(key, std::vector<int64_t>(runs.size(), kNoDim));
                if (added) order.push_back(key);
                it->second[i] = shape[a];
            }
    std::vector<DimBand> bands;
    for (const std::string& key : order) {
        const auto& v = dims[key];
        if (std::all_of(v.begin(), v.end(), [&](int64_t d) { return d == v.front(); })) continue;
        auto same = std::find_if(bands.begin(), bands.end(), [&](const DimBand& b) { return b.values == v; });
        if (same != bands.end()) same->name += ", " + key;
        else bands.push_back({key, v});
    }
    for (DimBand& b : bands) {
        const std::string symbol = symbol_of(runs, b.values);
        if (!symbol.empty()) b.name = symbol + ": " + b.name;
    }
    *dropped = bands.size() > kMaxBands ? bands.size() - kMaxBands : 0;
    if (*dropped) bands.resize(kMaxBands);
    return bands;
}

std::string run_tip(const RunPoint& p) {
    std::string tip = "run " + std::to_string(p.index) + (p.warmup ? " (warm-up)" : "") +
                      (p.first_at_shape ? ", first at its shapes" : "") + "\n" + p.shapes_key;
    if (!p.label.empty() && p.label != p.shapes_key) tip += "\n" + p.label;
    tip += "\n" + ms_text(p.host_ms) + " ms";
    if (p.submit_ms.present) tip += " (submitted in " + ms_text(p.submit_ms.value) + " ms)";
    return tip;
}

// One run's latency mark: a diamond for the first run at a shape, hollow in
// warm-up.
std::string run_mark(const RunPoint& p, double x, double y, double r) {
    const std::string cls =
        std::string("mark pt ") + (p.first_at_shape ? "first" : "steady") + (p.warmup ? " warmup" : "");
    if (p.first_at_shape) return diamond(x, y, r * 1.35, cls, run_tip(p));
    return circle(x, y, r, cls, run_tip(p));
}

// Several runs under one mark: a bar from their least to their most, and
// their median.
std::string range_mark(const std::vector<RunPoint>& runs, const Group& g, const Axis& y, double x) {
    std::vector<double> ms;
    bool first = false;
    for (size_t i = g.first; i <= g.last; ++i) {
        ms.push_back(runs[i].host_ms);
        first = first || runs[i].first_at_shape;
    }
    std::sort(ms.begin(), ms.end());
    const double lo = ms.front(), hi = ms.back(), mid = ms[(ms.size() - 1) / 2];
    const std::string tip = "runs " + std::to_string(runs[g.first].index) + ".." + std::to_string(runs[g.last].index) +
                            ": " + ms_text(lo) + " .. " + ms_text(hi) + " ms, median " + ms_text(mid) +
                            (first ? "\na first run at a shape among them" : "");
    return "<g class=\"mark range" + std::string(first ? " first" : "") + "\"><title>" + esc(tip) + "</title>" +
           rect(x - 1, y.at(hi) - 1, 2, y.at(lo) - y.at(hi) + 2, "rangebar") +
           rect(x - 1.5, y.at(mid) - 1.5, 3, 3, "rangemid") + "</g>";
}

// Run indices along the bottom at [y].
std::string x_ticks(const std::vector<RunPoint>& runs, const RunX& rx, double y) {
    Axis a;
    a.lo = 0;
    a.hi = static_cast<double>(runs.size() - 1);
    std::string out = "<g class=\"axis\">" + line(kLeft, y, kLeft + kPlotWidth, y, "axisline");
    for (const double t : a.ticks(10)) {
        const auto i = static_cast<size_t>(t);
        const double x = rx.mid({i, i});
        out += line(x, y, x, y + 4, "axisline") + text(x, y + 16, std::to_string(runs[i].index), "tick", "middle");
    }
    return out + text(kLeft + kPlotWidth / 2, y + 32, "run index", "axislabel", "middle") + "</g>";
}

// Shading behind the warm-up runs (they come first).
std::string warmup_shade(const std::vector<RunPoint>& runs, const RunX& rx, double top, double bottom) {
    size_t w = 0;
    while (w < runs.size() && runs[w].warmup) ++w;
    if (!w) return "";
    return rect(kLeft, top, rx.left(w) - kLeft, bottom - top, "warmup-zone", std::to_string(w) + " warm-up runs") +
           text(kLeft + 4, top + 12, "warm-up", "note");
}

// A line between two runs whose shapes differ, over [top, bottom].
std::string shape_changes(const std::vector<RunPoint>& runs, const RunX& rx, double top, double bottom, size_t* count) {
    std::string out = "<g class=\"shape-changes\">";
    *count = 0;
    for (size_t i = 1; i < runs.size(); ++i) *count += runs[i].shapes_key != runs[i - 1].shapes_key;
    if (*count > kMaxShapeLines) return out + "</g>";
    for (size_t i = 1; i < runs.size(); ++i)
        if (runs[i].shapes_key != runs[i - 1].shapes_key)
            out += line(rx.left(i), top, rx.left(i), bottom, "shape-change");
    return out + "</g>";
}

std::string legend(double y, const std::vector<std::pair<std::string, std::string>>& items) {
    std::string out = "<g class=\"legend\">";
    double x = kLeft;
    for (const auto& [mark, label] : items) {
        out += mark == "steady"   ? circle(x + 5, y - 4, 4, "pt steady")
               : mark == "first"  ? diamond(x + 5, y - 4, 5, "pt first")
               : mark == "warmup" ? circle(x + 5, y - 4, 4, "pt steady warmup")
               : mark == "change" ? line(x + 5, y - 12, x + 5, y + 3, "shape-change")
                                  : rect(x, y - 9, 10, 10, mark);
        out += text(x + 15, y, label, "legendtext");
        x += 26 + 6.8 * static_cast<double>(label.size());
    }
    return out + "</g>";
}

// A band's step line: flat over runs (or groups of runs) of one value, a
// vertical bar over a group whose values differ.
std::string band_line(const DimBand& b, const std::vector<Group>& groups, const RunX& rx, const Axis& y) {
    std::string d;
    bool pen = false;   // the line goes on from the previous group
    for (const Group& g : groups) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = g.first; i <= g.last; ++i)
            if (b.values[i] != kNoDim) lo = std::min(lo, b.values[i]), hi = std::max(hi, b.values[i]);
        const double x0 = rx.left(g.first), x1 = rx.left(g.last + 1);
        if (lo > hi) {
            pen = false;
        } else if (lo == hi) {
            const std::string at = px(y.at(static_cast<double>(lo)));
            d += (pen ? "V" + at : "M" + px(x0) + " " + at) + "H" + px(x1);
            pen = true;
        } else {
            d += "M" + px((x0 + x1) / 2) + " " + px(y.at(static_cast<double>(lo))) + "V" +
                 px(y.at(static_cast<double>(hi)));
            pen = false;
        }
    }
    return path(d, "dimline", b.name);
}

std::string band(const DimBand& b, const std::vector<RunPoint>& runs, const std::vector<Group>& groups, const RunX& rx,
                 double top, double h) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const int64_t v : b.values)
        if (v != kNoDim) lo = std::min(lo, v), hi = std::max(hi, v);
    Axis y;
    y.lo = static_cast<double>(lo), y.hi = static_cast<double>(hi), y.px0 = top + h - 4, y.px1 = top + 12;
    std::string out = "<g class=\"band\">" + rect(kLeft, top, kPlotWidth, h, "bandbg");
    const size_t colon = b.name.find(": ");
    const std::string symbol = colon == std::string::npos ? b.name : b.name.substr(0, colon);
    const std::string dims = colon == std::string::npos ? "" : b.name.substr(colon + 2);
    out += text(kLeft - 6, top + 13, symbol + " " + std::to_string(lo) + ".." + std::to_string(hi), "bandname", "end");
    if (!dims.empty()) out += text(kLeft - 6, top + h - 6, dims, "tick", "end");
    out += band_line(b, groups, rx, y);
    for (size_t i = 0; i < runs.size();) {   // each stretch's value where it fits
        size_t j = i;
        while (j + 1 < runs.size() && b.values[j + 1] == b.values[i]) ++j;
        const std::string v = b.values[i] == kNoDim ? "" : std::to_string(b.values[i]);
        if (rx.left(j + 1) - rx.left(i) >= 7.0 * static_cast<double>(v.size()) + 4)
            out += text((rx.left(i) + rx.left(j + 1)) / 2, y.at(static_cast<double>(b.values[i])) - 3, v, "dimvalue",
                        "middle");
        i = j + 1;
    }
    return out + "</g>";
}

std::string latency_legend(bool grouped, size_t changes) {
    std::vector<std::pair<std::string, std::string>> items;
    if (grouped) items.emplace_back("rangebar", "runs under a mark: least to most, median");
    else items.emplace_back("steady", "measured run");
    items.emplace_back("first", grouped ? "orange: a first run at a shape among them" : "first run at a shape");
    if (!grouped) items.emplace_back("warmup", "warm-up run");
    items.emplace_back(
        "change", std::to_string(changes) + " shape changes" + (changes > kMaxShapeLines ? " (too many to draw)" : ""));
    return legend(16, items);
}

}   // namespace

std::string latency_chart(const Report& r) {
    const std::vector<RunPoint>& runs = r.runs;
    if (runs.empty()) return "";
    size_t dropped = 0;
    const std::vector<DimBand> bands = dim_bands(runs, &dropped);
    const double top = 34, plot_h = 260, band_h = 34, band_gap = 6;
    const double bands_top = top + plot_h + 14;
    const double bottom = bands_top + static_cast<double>(bands.size()) * (band_h + band_gap);
    std::vector<double> ms;
    for (const RunPoint& p : runs) ms.push_back(p.host_ms);
    const Axis y = value_axis(ms, 30, top + plot_h, top);
    const RunX rx{runs.size()};
    const std::vector<Group> groups = group_runs(runs.size(), kMaxRunMarks);
    size_t changes = 0;
    std::string out = svg_open("latency", kChartWidth, bottom + 40, "latency per run");
    out += warmup_shade(runs, rx, top, top + plot_h);
    out += y_grid(y, kLeft, kLeft + kPlotWidth, tick_text);
    out += vertical_text(kLeft - 58, top + plot_h / 2, y.log ? "host ms (log scale)" : "host ms", "axislabel");
    out += shape_changes(runs, rx, top, bottom - band_gap, &changes);
    out += latency_legend(groups.size() < runs.size(), changes);
    const double r_pt = runs.size() <= 200 ? 3.5 : runs.size() <= 1000 ? 2.5 : 1.7;
    out += "<g class=\"marks\">";
    for (const Group& g : groups)
        out += g.first == g.last ? run_mark(runs[g.first], rx.mid(g), y.at(runs[g.first].host_ms), r_pt)
                                 : range_mark(runs, g, y, rx.mid(g));
    out += "</g>";
    for (size_t b = 0; b < bands.size(); ++b)
        out += band(bands[b], runs, groups, rx, bands_top + static_cast<double>(b) * (band_h + band_gap), band_h);
    if (dropped) out += text(kLeft, bottom - 2, std::to_string(dropped) + " more changing dims not drawn", "note");
    out += x_ticks(runs, rx, bottom);
    return out + "</svg>";
}

namespace {

// The largest of `figure` over a group of runs, and whether any run has it.
Figure group_max(const std::vector<RunPoint>& runs, const Group& g, Figure RunPoint::*figure) {
    Figure f;
    for (size_t i = g.first; i <= g.last; ++i)
        if ((runs[i].*figure).present) f.present = true, f.value = std::max(f.value, (runs[i].*figure).value);
    return f;
}

bool any_run_has(const std::vector<RunPoint>& runs, Figure RunPoint::*figure) {
    return std::any_of(runs.begin(), runs.end(), [&](const RunPoint& p) { return (p.*figure).present; });
}

std::string group_name(const std::vector<RunPoint>& runs, const Group& g) {
    return g.first == g.last ? "run " + std::to_string(runs[g.first].index)
                             : "runs " + std::to_string(runs[g.first].index) + ".." +
                                   std::to_string(runs[g.last].index) + " (the most of them)";
}

struct Series {
    Figure RunPoint::*figure;
    const char* cls;
    const char* name;
};

// A column over each run (or group) whose tooltip gives every series.
std::string memory_tips(const std::vector<RunPoint>& runs, const std::vector<Group>& groups,
                        const std::vector<Series>& series, const RunX& rx, double top, double h) {
    std::string out = "<g class=\"tips\">";
    for (const Group& g : groups) {
        std::string tip = group_name(runs, g);
        for (const Series& s : series) tip += "\n" + bytes_text(group_max(runs, g, s.figure).value) + " " + s.name;
        out += rect(rx.left(g.first), top, rx.left(g.last + 1) - rx.left(g.first), h, "hover", tip);
    }
    return out + "</g>";
}

}   // namespace

std::string allocation_chart(const Report& r) {
    const std::vector<RunPoint>& runs = r.runs;
    if (runs.empty() || !any_run_has(runs, &RunPoint::allocations)) return "";
    const double top = 30, h = 130;
    const std::vector<Group> groups = group_runs(runs.size(), kMaxRunMarks);
    std::vector<double> counts;
    for (const Group& g : groups) counts.push_back(group_max(runs, g, &RunPoint::allocations).value);
    Axis y = value_axis(counts, 1e300, top + h, top);
    if (y.hi <= 5) y.step = 1;   // whole counts
    const RunX rx{runs.size()};
    std::string out = svg_open("allocations", kChartWidth, top + h + 40, "allocations per run");
    out += legend(16, {{"bar alloc", "buffers (re)assigned (allocations)"},
                       {"bar device-alloc", "of them allocated on the device (pool misses)"}});
    out += y_grid(y, kLeft, kLeft + kPlotWidth, count_text);
    out += vertical_text(kLeft - 58, top + h / 2, "allocations", "axislabel");
    out += "<g class=\"marks\">";
    for (const Group& g : groups) {
        const double x = rx.left(g.first), w = std::max(rx.left(g.last + 1) - x - 1, 0.8);
        const Figure a = group_max(runs, g, &RunPoint::allocations);
        const Figure d = group_max(runs, g, &RunPoint::device_allocations);
        const std::string tip = group_name(runs, g) + ": " + count_text(a.value) + " allocations" +
                                (d.present ? ", " + count_text(d.value) + " on the device" : "");
        out += "<g class=\"mark alloc\"><title>" + esc(tip) + "</title>" +
               rect(x, y.at(a.value), w, y.at(0) - y.at(a.value), "bar alloc");
        if (d.present && d.value > 0) out += rect(x, y.at(d.value), w, y.at(0) - y.at(d.value), "bar device-alloc");
        out += "</g>";
    }
    out += "</g>" + x_ticks(runs, rx, top + h);
    return out + "</svg>";
}

std::string memory_chart(const Report& r) {
    const std::vector<RunPoint>& runs = r.runs;
    const Series all[] = {{&RunPoint::peak_bytes, "s-peak", "peak during the run"},
                          {&RunPoint::pool_bytes, "s-pool", "held by the memory pool"},
                          {&RunPoint::tensor_bytes, "s-tensor", "live tensors"},
                          {&RunPoint::used_bytes, "s-used", "in use after the run"}};
    std::vector<Series> series;
    for (const Series& s : all)
        if (!runs.empty() && any_run_has(runs, s.figure)) series.push_back(s);
    if (series.empty()) return "";
    const double top = 30, h = 170;
    const std::vector<Group> groups = group_runs(runs.size(), kMaxRunMarks);
    std::vector<double> bytes;
    for (const Series& s : series)
        for (const Group& g : groups) bytes.push_back(group_max(runs, g, s.figure).value);
    const Axis y = bytes_axis(bytes, top + h, top);
    const RunX rx{runs.size()};
    std::vector<std::pair<std::string, std::string>> keys;
    for (const Series& s : series) keys.emplace_back(std::string("key ") + s.cls, s.name);
    std::string out = svg_open("memory", kChartWidth, top + h + 40, "bytes per run") + legend(16, keys);
    out += y_grid(y, kLeft, kLeft + kPlotWidth, bytes_text) + "<g class=\"marks\">";
    for (const Series& s : series) {
        std::vector<double> xy;
        for (const Group& g : groups) {
            const double v = y.at(group_max(runs, g, s.figure).value);
            xy.insert(xy.end(), {rx.left(g.first), v, rx.left(g.last + 1), v});
        }
        out += polyline(xy, std::string("mark series ") + s.cls, s.name);
    }
    out += "</g>" + memory_tips(runs, groups, series, rx, top, h) + x_ticks(runs, rx, top + h);
    return out + "</svg>";
}

}   // namespace dynrt::plot
