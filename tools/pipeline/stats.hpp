// Latency statistics of `dynrt run` (docs/report.md, "Statistics").
//
// The runner feeds every run's host time into a RunStatistics as it goes
// (add(): 8 bytes a measured run, nothing else per run); report_json() and
// summary_table() read it back through summarize(), a pure function of a list
// of latencies. The first run at each distinct combination of input shapes
// (impl choice, allocation, kernel builds) is kept apart and left out of the
// steady statistics; warm-up runs count only as warm-up. Percentiles are
// nearest-rank (percentile() below), so every figure is one of the measured
// latencies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "json_writer.hpp"

namespace dynrt::pipeline {

// Nearest-rank percentile of the ascending, non-empty `sorted`: the value at
// 1-based rank ceil(p / 100 * n), rank 1 for p = 0. p is in 0..100.
double percentile(const std::vector<double>& sorted, double p);

struct LatencySummary {
    size_t count = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
    double sum = 0;
};
// count, min, nearest-rank p50/p90/p99, max, mean and sum of `ms` (all 0 when
// it is empty).
LatencySummary summarize(std::vector<double> ms);

// Tokens one run processes, from the values of its named dims: the dim named
// `seq` or `sequence` (case-insensitive) times the dim named `batch` when there
// is one; 0 when no dim is named seq or sequence.
uint64_t tokens_of(const std::map<std::string, int64_t>& named_dims);

// One distinct combination of input shapes, in order of first appearance.
struct ShapeStatistics {
    std::string key;       // "x[1,7] y[1,7]"
    uint64_t tokens = 0;   // per run (tokens_of)
    double first_ms = 0;   // the first run at these shapes
    bool first_in_warmup = false;
    size_t measured = 0;          // measured runs, the first included when it was measured
    double measured_ms = 0;       // their host time
    std::vector<double> steady;   // measured runs after the first
};

class RunStatistics {
public:
    // The index of the shape combination `key`, added on first sight.
    size_t shape(const std::string& key, uint64_t tokens);
    // One run at shape `index`; returns whether it was the first run there.
    bool add(size_t index, double ms, bool warmup);

    const std::vector<ShapeStatistics>& shapes() const { return shapes_; }
    size_t warmup_runs() const { return warmup_runs_; }
    double warmup_ms() const { return warmup_ms_; }
    size_t measured_runs() const { return measured_runs_; }
    double measured_ms() const { return measured_ms_; }
    uint64_t measured_tokens() const { return measured_tokens_; }
    // Steady runs of every shape together, and the first runs of every shape
    // (in warm-up or not).
    LatencySummary steady() const;
    LatencySummary first_runs() const;
    // Measured runs (and their tokens) per second of their host time; 0 when
    // nothing was measured or no dim names a sequence.
    double runs_per_s() const;
    double tokens_per_s() const;

private:
    std::vector<ShapeStatistics> shapes_;
    std::map<std::string, size_t> index_;
    std::vector<bool> seen_;
    size_t warmup_runs_ = 0;
    double warmup_ms_ = 0;
    size_t measured_runs_ = 0;
    double measured_ms_ = 0;
    uint64_t measured_tokens_ = 0;
};

// The "statistics" object of the JSON report (docs/report.md).
void statistics_json(tools::JsonWriter& j, const RunStatistics& s);
// The console table: one line per shape combination (the middle of lists
// longer than 24 elided unless `all_shapes`), one for every shape together,
// then warm-up and throughput lines.
std::string statistics_table(const RunStatistics& s, bool all_shapes);

}   // namespace dynrt::pipeline
