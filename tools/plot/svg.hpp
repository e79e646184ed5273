// `dynrt plot`: the pieces its SVG charts are drawn with: escaping, number
// and byte formats, linear and log axes with round ticks, runs grouped into
// at most so many marks, and SVG elements as text. Internal to tools/plot.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dynrt::plot {

// Text for HTML and SVG, in elements and in quoted attributes: & < > " '.
std::string esc(const std::string& s);
// A coordinate: one decimal, no exponent.
std::string px(double v);
// Milliseconds with 4 significant digits ("0.04380", "12.35", "1235").
std::string ms_text(double ms);
// Bytes as "812 B", "6.969 KiB", "128 KiB", "3.25 MiB", "1.5 GiB" (4 significant digits).
std::string bytes_text(double bytes);
// A count as "1234", or with 4 significant digits ("1.235e+06") past 1e9.
std::string count_text(double v);
// An axis tick: the shortest form of a round value ("0.01", "2.5", "100").
std::string tick_text(double v);

// A value axis mapped to pixels [px0, px1] (px0 is where `lo` lies: the
// bottom of a vertical axis, the left of a horizontal one).
struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    double px0 = 0, px1 = 1;
    double step = 0;   // the linear ticks' step; 0: chosen by ticks()

    double at(double v) const;
    // Round values inside [lo, hi]: 1-2-5 steps, or powers of ten on a log
    // axis (with 2 and 5 between them when there are few decades).
    std::vector<double> ticks(size_t about) const;
};
// An axis over `values` (>= 0): logarithmic when they are all > 0 and the
// largest is more than `log_ratio` times the smallest, else linear from 0;
// widened to round ends (1-2-5 steps, whole decades).
Axis value_axis(const std::vector<double>& values, double log_ratio, double px0, double px1);
// A linear axis from 0 over byte counts, its ticks round in the unit of the
// largest (KiB, MiB, GiB: 256 KiB, not 262.1 KB); ticks() keeps them.
Axis bytes_axis(const std::vector<double>& values, double px0, double px1);

// Runs grouped for drawing: one group per run up to `max_marks` runs, else
// `max_marks` groups of consecutive runs.
struct Group {
    size_t first = 0, last = 0;   // positions in the runs array, inclusive
};
std::vector<Group> group_runs(size_t runs, size_t max_marks);

// SVG elements. `cls` becomes class="..."; `tip` a <title> child (the
// tooltip) when not empty.
std::string svg_open(const std::string& id, double width, double height, const std::string& label);
std::string line(double x1, double y1, double x2, double y2, const std::string& cls);
std::string rect(double x, double y, double w, double h, const std::string& cls, const std::string& tip = "");
std::string circle(double x, double y, double r, const std::string& cls, const std::string& tip = "");
// A diamond of half-width `r` around (x, y).
std::string diamond(double x, double y, double r, const std::string& cls, const std::string& tip = "");
// `anchor`: start, middle or end.
std::string text(double x, double y, const std::string& s, const std::string& cls, const std::string& anchor = "start");
// Text read bottom to top, centred on (x, y): a vertical axis' label.
std::string vertical_text(double x, double y, const std::string& s, const std::string& cls);
std::string polyline(const std::vector<double>& xy, const std::string& cls, const std::string& tip = "");
// A <path> of the path data `d` ("M10 20H30V5").
std::string path(const std::string& d, const std::string& cls, const std::string& tip = "");

// Horizontal grid lines and labels of `y` (a vertical axis) across
// [x0, x1], each label made by `label`.
std::string y_grid(const Axis& y, double x0, double x1, std::string (*label)(double));

}   // namespace dynrt::plot
