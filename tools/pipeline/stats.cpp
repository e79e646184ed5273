// Latency statistics: nearest-rank percentiles, per-shape accumulation, and
// their JSON object and console table.
#include "stats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace dynrt::pipeline {

double percentile(const std::vector<double>& sorted, double p) {
    const size_t n = sorted.size();
    if (n == 0) return 0;
    // Rank ceil(p/100 * n), 1-based; a tiny slack so that 90% of 10 is rank
    // 9, not 10 because 0.9 * 10 came out as 9.000000000000002.
    const double exact = p / 100.0 * static_cast<double>(n);
    size_t rank = static_cast<size_t>(std::ceil(exact - 1e-9));
    rank = std::clamp<size_t>(rank, 1, n);
    return sorted[rank - 1];
}

LatencySummary summarize(std::vector<double> ms) {
    LatencySummary s;
    if (ms.empty()) return s;
    std::sort(ms.begin(), ms.end());
    s.count = ms.size();
    s.min = ms.front();
    s.max = ms.back();
    s.p50 = percentile(ms, 50);
    s.p90 = percentile(ms, 90);
    s.p99 = percentile(ms, 99);
    for (double v : ms) s.sum += v;
    s.mean = s.sum / static_cast<double>(s.count);
    return s;
}

uint64_t tokens_of(const std::map<std::string, int64_t>& named_dims) {
    auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    int64_t seq = -1, batch = -1;
    for (const auto& [name, v] : named_dims) {
        const std::string n = lower(name);
        if (n == "seq" || n == "sequence") seq = v;
        else if (n == "batch") batch = v;
    }
    if (seq < 0) return 0;
    const uint64_t s = static_cast<uint64_t>(seq);
    if (batch < 0) return s;
    uint64_t t = 0;
    return __builtin_mul_overflow(s, static_cast<uint64_t>(batch), &t) ? UINT64_MAX : t;
}

size_t RunStatistics::shape(const std::string& key, uint64_t tokens) {
    const auto [it, added] = index_.try_emplace(key, shapes_.size());
    if (added) {
        ShapeStatistics s;
        s.key = key;
        s.tokens = tokens;
        shapes_.push_back(std::move(s));
        seen_.push_back(false);
    }
    return it->second;
}

bool RunStatistics::add(size_t index, double ms, bool warmup) {
    ShapeStatistics& s = shapes_.at(index);
    const bool first = !seen_[index];
    seen_[index] = true;
    if (first) {
        s.first_ms = ms;
        s.first_in_warmup = warmup;
    }
    if (warmup) {
        ++warmup_runs_;
        warmup_ms_ += ms;
        return first;
    }
    ++s.measured;
    s.measured_ms += ms;
    ++measured_runs_;
    measured_ms_ += ms;
    if (__builtin_add_overflow(measured_tokens_, s.tokens, &measured_tokens_)) measured_tokens_ = UINT64_MAX;
    if (!first) s.steady.push_back(ms);
    return first;
}

LatencySummary RunStatistics::steady() const {
    std::vector<double> all;
    size_t n = 0;
    for (const auto& s : shapes_) n += s.steady.size();
    all.reserve(n);
    for (const auto& s : shapes_) all.insert(all.end(), s.steady.begin(), s.steady.end());
    return summarize(std::move(all));
}

LatencySummary RunStatistics::first_runs() const {
    std::vector<double> firsts;
    firsts.reserve(shapes_.size());
    for (size_t i = 0; i < shapes_.size(); ++i)
        if (seen_[i]) firsts.push_back(shapes_[i].first_ms);
    return summarize(std::move(firsts));
}

double RunStatistics::runs_per_s() const {
    return measured_ms_ > 0 ? static_cast<double>(measured_runs_) * 1000.0 / measured_ms_ : 0.0;
}

double RunStatistics::tokens_per_s() const {
    return measured_ms_ > 0 ? static_cast<double>(measured_tokens_) * 1000.0 / measured_ms_ : 0.0;
}

namespace {

void summary_json(tools::JsonWriter& j, const LatencySummary& s) {
    j.begin_object();
    j.field("count", static_cast<uint64_t>(s.count));
    if (s.count) {
        j.field("min_ms", s.min).field("p50_ms", s.p50).field("p90_ms", s.p90).field("p99_ms", s.p99);
        j.field("max_ms", s.max).field("mean_ms", s.mean);
    }
    j.end_object();
}

// A space before every cell: a first run of 52 s (cold OpenCL builds) or a
// max past 100 s stays apart from its neighbour.
std::string ms_cell(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " %10.4f", v);
    return buf;
}

std::string pad_right(const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string pad_left(const std::string& s, size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// "   runs  first ms    min ms ..." cells after the shape column.
std::string stat_cells(size_t runs, const std::string& first, const LatencySummary& s) {
    std::string out = pad_left(std::to_string(runs), 7) + " " + pad_left(first, 12);
    if (!s.count) return out + pad_left("-", 11) + "  (no steady runs)";
    for (double v : {s.min, s.p50, s.p90, s.p99, s.max, s.mean}) out += ms_cell(v);
    return out;
}

}   // namespace

void statistics_json(tools::JsonWriter& j, const RunStatistics& s) {
    j.begin_object();
    j.field("percentiles", "nearest-rank");
    j.field("warmup_runs", static_cast<uint64_t>(s.warmup_runs())).field("warmup_ms", s.warmup_ms());
    j.field("measured_runs", static_cast<uint64_t>(s.measured_runs())).field("measured_ms", s.measured_ms());
    j.field("runs_per_s", s.runs_per_s());
    if (s.measured_tokens()) {
        j.field("tokens", s.measured_tokens());
        j.field("tokens_per_s", s.tokens_per_s());
    }
    j.key("steady");
    summary_json(j, s.steady());
    j.key("first_runs");
    summary_json(j, s.first_runs());
    j.key("shapes").begin_array();
    for (const ShapeStatistics& sh : s.shapes()) {
        j.newline(2);
        j.begin_object();
        j.field("shapes", sh.key);
        if (sh.tokens) j.field("tokens_per_run", sh.tokens);
        j.field("first_ms", sh.first_ms).field("first_in_warmup", sh.first_in_warmup);
        j.field("measured_runs", static_cast<uint64_t>(sh.measured)).field("measured_ms", sh.measured_ms);
        j.key("steady");
        summary_json(j, summarize(sh.steady));
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

std::string statistics_table(const RunStatistics& s, bool all_shapes) {
    const auto& shapes = s.shapes();
    size_t width = 12;
    for (const auto& sh : shapes) width = std::max(width, sh.key.size());
    width = std::min<size_t>(width, 160);
    std::string out = "  " + pad_right("input shapes", width) + pad_left("runs", 7) + " " + pad_left("first ms", 12);
    for (const char* h : {"min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "mean ms"}) out += pad_left(h, 11);
    out += "\n";
    bool warm_firsts = false;
    const size_t keep = 10;
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (!all_shapes && shapes.size() > 2 * keep + 4 && i == keep) {
            out += "  ... " + std::to_string(shapes.size() - 2 * keep) + " more shapes (-v or --report for all)\n";
            i = shapes.size() - keep;
        }
        const ShapeStatistics& sh = shapes[i];
        std::string first = ms_cell(sh.first_ms);
        if (sh.first_in_warmup) {
            first += "*";
            warm_firsts = true;
        }
        out += "  " + pad_right(sh.key, width) + stat_cells(sh.measured, first, summarize(sh.steady)) + "\n";
    }
    if (shapes.size() > 1)
        out += "  " + pad_right("every shape", width) + stat_cells(s.measured_runs(), "-", s.steady()) + "\n";
    out += "  min..mean: steady runs (the first at each shape left out), nearest-rank percentiles";
    out += warm_firsts ? "; * first run in warm-up\n" : "\n";

    char line[256];
    const LatencySummary firsts = s.first_runs();
    if (firsts.count > 1) {
        std::snprintf(line, sizeof line,
                      "  first runs: %zu (one per shape), min %.4f  p50 %.4f  p90 %.4f  max %.4f  mean %.4f ms\n",
                      firsts.count, firsts.min, firsts.p50, firsts.p90, firsts.max, firsts.mean);
        out += line;
    }
    if (s.warmup_runs()) {
        std::snprintf(line, sizeof line, "  warm-up: %zu runs, %.3f ms (not in the statistics)\n", s.warmup_runs(),
                      s.warmup_ms());
        out += line;
    }
    std::snprintf(line, sizeof line, "  throughput: %.1f runs/s", s.runs_per_s());
    out += line;
    if (s.measured_tokens()) {
        std::snprintf(line, sizeof line, ", %.1f tokens/s", s.tokens_per_s());
        out += line;
    }
    std::snprintf(line, sizeof line, " (%zu measured runs in %.3f ms of host time)\n", s.measured_runs(),
                  s.measured_ms());
    out += line;
    return out;
}

}   // namespace dynrt::pipeline
