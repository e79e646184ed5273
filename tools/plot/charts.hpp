// `dynrt plot`: each chart of the page as an <svg> element (internal to
// tools/plot). Every chart has an id and draws its marks inside
// <g class="marks">, one element of class "mark" per run (or per group of
// runs, per node, per op, per shape), so a page can be measured: the tests
// count and size them in a browser.
#pragma once

#include <cstddef>
#include <string>

#include "plot.hpp"

namespace dynrt::plot {

// The page's width in SVG units; charts scale down with the window.
inline constexpr double kChartWidth = 960;
// Past this many runs, consecutive runs share a mark (min..max of them).
inline constexpr size_t kMaxRunMarks = 2000;
// The profile's top nodes drawn.
inline constexpr size_t kTopNodes = 15;

// Latency per run (#latency) over one band per changing input dim; needs runs.
std::string latency_chart(const Report& r);
// Allocations (#allocations) and bytes (#memory) per run; needs runs. An
// empty string when the runs hold none of them.
std::string allocation_chart(const Report& r);
std::string memory_chart(const Report& r);
// Steady latency per input shape (#shapes): min..max, p50..p90, first run.
std::string shapes_chart(const Report& r);
// Top nodes by flow step (#nodes) and op types (#ops) of the profile's
// steady runs (its first-at-a-shape runs when there are none).
std::string nodes_chart(const Report& r);
std::string ops_chart(const Report& r);
// The profile group the charts show, and its name.
const ProfileGroup& shown_group(const Report& r, std::string* name);

}   // namespace dynrt::plot
