// The drawing pieces of `dynrt plot` (svg.hpp).
#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dynrt::plot {

std::string esc(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string px(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", std::isfinite(v) ? v : 0.0);
    return buf;
}

std::string ms_text(double ms) {
    char buf[32];
    if (ms >= 1000) std::snprintf(buf, sizeof buf, "%.0f", ms);
    else if (ms >= 100) std::snprintf(buf, sizeof buf, "%.1f", ms);
    else if (ms >= 10) std::snprintf(buf, sizeof buf, "%.2f", ms);
    else if (ms >= 1) std::snprintf(buf, sizeof buf, "%.3f", ms);
    else std::snprintf(buf, sizeof buf, "%.4g", ms);
    return buf;
}

std::string bytes_text(double b) {
    char buf[32];
    if (b >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.4g GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.4g MiB", b / (1024.0 * 1024));
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.4g KiB", b / 1024);
    else std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
}

std::string count_text(double v) {
    char buf[32];
    if (std::fabs(v) < 1e9 && v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f", v);
    else std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string tick_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

double Axis::at(double v) const {
    double t = 0;
    if (log) t = (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    else t = hi > lo ? (v - lo) / (hi - lo) : 0;
    return px0 + std::clamp(t, 0.0, 1.0) * (px1 - px0);
}

namespace {

// The 1-2-5 step that cuts `span` into about `parts`.
double round_step(double span, size_t parts) {
    const double raw = span / static_cast<double>(std::max<size_t>(parts, 1));
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

}   // namespace

std::vector<double> Axis::ticks(size_t about) const {
    std::vector<double> out;
    if (log) {
        const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
        const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
        const bool fine = d1 - d0 <= 2;
        for (int d = d0; d <= d1; ++d)
            for (const double m : {1.0, 2.0, 5.0}) {
                const double v = m * std::pow(10.0, d);
                if ((m == 1.0 || fine) && v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
            }
        return out;
    }
    if (!(hi > lo)) return {lo};
    const double by = step > 0 ? step : round_step(hi - lo, about);
    const double first = std::ceil(lo / by - 1e-9);
    for (double k = first; k * by <= hi + by * 1e-9 && out.size() < 100; ++k) out.push_back(k == 0 ? 0 : k * by);
    return out;
}

Axis value_axis(const std::vector<double>& values, double log_ratio, double px0, double px1) {
    Axis a;
    a.px0 = px0;
    a.px1 = px1;
    double lo = INFINITY, hi = 0;
    for (const double v : values) lo = std::min(lo, v), hi = std::max(hi, v);
    if (values.empty() || !(hi > 0)) {
        a.lo = 0, a.hi = 1;
        return a;
    }
    if (lo > 0 && hi / lo > log_ratio) {
        a.log = true;
        a.lo = std::pow(10.0, std::floor(std::log10(lo)));
        a.hi = std::pow(10.0, std::ceil(std::log10(hi)));
        return a;
    }
    const double step = round_step(hi, 5);
    a.lo = 0;
    a.hi = std::ceil(hi / step - 1e-9) * step;
    return a;
}

Axis bytes_axis(const std::vector<double>& values, double px0, double px1) {
    Axis a;
    a.px0 = px0, a.px1 = px1, a.lo = 0, a.hi = 1;
    double hi = 0;
    for (const double v : values) hi = std::max(hi, v);
    if (!(hi > 0)) return a;
    double unit = 1;
    while (hi / unit >= 1024) unit *= 1024;
    a.step = round_step(hi / unit, 5) * unit;
    a.hi = std::ceil(hi / a.step - 1e-9) * a.step;
    return a;
}

std::vector<Group> group_runs(size_t runs, size_t max_marks) {
    std::vector<Group> out;
    if (runs == 0) return out;
    const size_t groups = std::min(runs, std::max<size_t>(max_marks, 1));
    for (size_t g = 0; g < groups; ++g) out.push_back({g * runs / groups, (g + 1) * runs / groups - 1});
    return out;
}

namespace {

std::string tip_of(const std::string& tip) { return tip.empty() ? "" : "<title>" + esc(tip) + "</title>"; }

std::string element(const std::string& name, const std::string& attrs, const std::string& cls, const std::string& tip) {
    const std::string head = "<" + name + " " + attrs + " class=\"" + esc(cls) + "\"";
    return tip.empty() ? head + "/>" : head + ">" + tip_of(tip) + "</" + name + ">";
}

}   // namespace

std::string svg_open(const std::string& id, double width, double height, const std::string& label) {
    return "<svg id=\"" + esc(id) + "\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
           px(width) + " " + px(height) + "\" width=\"" + px(width) + "\" height=\"" + px(height) +
           "\" role=\"img\" aria-label=\"" + esc(label) + "\">";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
    return element("line", "x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\"",
                   cls, "");
}

std::string rect(double x, double y, double w, double h, const std::string& cls, const std::string& tip) {
    return element("rect",
                   "x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(w, 0.0)) + "\" height=\"" +
                       px(std::max(h, 0.0)) + "\"",
                   cls, tip);
}

std::string circle(double x, double y, double r, const std::string& cls, const std::string& tip) {
    return element("circle", "cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) + "\"", cls, tip);
}

std::string diamond(double x, double y, double r, const std::string& cls, const std::string& tip) {
    const std::string d = "M" + px(x) + " " + px(y - r) + "L" + px(x + r) + " " + px(y) + "L" + px(x) + " " +
                          px(y + r) + "L" + px(x - r) + " " + px(y) + "Z";
    return element("path", "d=\"" + d + "\"", cls, tip);
}

std::string text(double x, double y, const std::string& s, const std::string& cls, const std::string& anchor) {
    return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" class=\"" + esc(cls) + "\" text-anchor=\"" + anchor + "\">" +
           esc(s) + "</text>";
}

std::string vertical_text(double x, double y, const std::string& s, const std::string& cls) {
    return "<text transform=\"translate(" + px(x) + "," + px(y) + ") rotate(-90)\" class=\"" + esc(cls) +
           "\" text-anchor=\"middle\">" + esc(s) + "</text>";
}

std::string polyline(const std::vector<double>& xy, const std::string& cls, const std::string& tip) {
    std::string points;
    for (size_t i = 0; i + 1 < xy.size(); i += 2) points += (i ? " " : "") + px(xy[i]) + "," + px(xy[i + 1]);
    return element("polyline", "points=\"" + points + "\"", cls, tip);
}

std::string path(const std::string& d, const std::string& cls, const std::string& tip) {
    return element("path", "d=\"" + d + "\"", cls, tip);
}

std::string y_grid(const Axis& y, double x0, double x1, std::string (*label)(double)) {
    std::string out = "<g class=\"grid\">";
    for (const double v : y.ticks(5)) {
        const double at = y.at(v);
        out += line(x0, at, x1, at, "gridline");
        out += text(x0 - 6, at + 4, label(v), "tick", "end");
    }
    return out + "</g>";
}

}   // namespace dynrt::plot
