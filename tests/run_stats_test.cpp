// `dynrt run` as a benchmark: nearest-rank percentiles and the per-shape
// statistics on hand-computable latencies, the run plan (warm-up, iterations,
// duration, schedule cycling) driven without a clock, the report levels and
// what a run keeps per run, and the CLI options end to end (no timed
// assertions: a duration only has to end).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;
using namespace dynrt::pipeline;

namespace {

// ---- percentiles and statistics ------------------------------------------------

std::vector<double> one_to(size_t n) {
    std::vector<double> v;
    for (size_t i = 1; i <= n; ++i) v.push_back(static_cast<double>(i));
    return v;
}

TEST(RunStats, Percentile_IsNearestRank) {
    // Rank ceil(p/100 * n): 1..10 gives p50 = 5, p90 = 9, p99 = 10.
    const auto ten = one_to(10);
    EXPECT_EQ(percentile(ten, 0), 1);
    EXPECT_EQ(percentile(ten, 50), 5);
    EXPECT_EQ(percentile(ten, 90), 9);
    EXPECT_EQ(percentile(ten, 99), 10);
    EXPECT_EQ(percentile(ten, 100), 10);
    const auto hundred = one_to(100);
    EXPECT_EQ(percentile(hundred, 90), 90);
    EXPECT_EQ(percentile(hundred, 99), 99);
    // Four values: nearest rank is the 2nd (interpolation would give 2.5).
    EXPECT_EQ(percentile({1, 2, 3, 4}, 50), 2);
    EXPECT_EQ(percentile({1, 2, 3, 4}, 51), 3);
    EXPECT_EQ(percentile({7}, 99), 7);
}

TEST(RunStats, Summarize_SortsAndComputesEveryFigure) {
    const LatencySummary s = summarize({5, 1, 4, 2, 3});
    EXPECT_EQ(s.count, 5u);
    EXPECT_EQ(s.min, 1);
    EXPECT_EQ(s.max, 5);
    EXPECT_EQ(s.p50, 3);   // rank ceil(2.5) = 3
    EXPECT_EQ(s.p90, 5);   // rank ceil(4.5) = 5
    EXPECT_EQ(s.p99, 5);
    EXPECT_DOUBLE_EQ(s.mean, 3);
    EXPECT_DOUBLE_EQ(s.sum, 15);
    EXPECT_EQ(summarize({}).count, 0u);
}

TEST(RunStats, Tokens_AreBatchTimesSeqByDimName) {
    EXPECT_EQ(tokens_of({{"seq", 7}}), 7u);
    EXPECT_EQ(tokens_of({{"Sequence", 5}, {"batch", 3}}), 15u);
    EXPECT_EQ(tokens_of({{"SEQ", 2}, {"Batch", 4}, {"size", 9}}), 8u);
    EXPECT_EQ(tokens_of({{"batch", 4}}), 0u);
    EXPECT_EQ(tokens_of({{"seq_len", 9}, {"batch", 2}}), 0u);
}

TEST(RunStats, FirstRunAtEachShapeAndWarmup_StayOutOfTheSteadyFigures) {
    RunStatistics s;
    const size_t a = s.shape("x[1,3]", 3), b = s.shape("x[1,5]", 5);
    EXPECT_EQ(s.shape("x[1,3]", 3), a);
    EXPECT_TRUE(s.add(a, 100, true));   // first at a, in warm-up
    EXPECT_FALSE(s.add(a, 50, true));   // warm-up
    EXPECT_FALSE(s.add(a, 2, false));
    EXPECT_TRUE(s.add(b, 40, false));   // first at b, measured
    EXPECT_FALSE(s.add(b, 4, false));
    EXPECT_FALSE(s.add(a, 6, false));
    EXPECT_FALSE(s.add(b, 8, false));
    EXPECT_EQ(s.warmup_runs(), 2u);
    EXPECT_DOUBLE_EQ(s.warmup_ms(), 150);
    EXPECT_EQ(s.measured_runs(), 5u);
    EXPECT_DOUBLE_EQ(s.measured_ms(), 60);
    const auto& shapes = s.shapes();
    ASSERT_EQ(shapes.size(), 2u);
    EXPECT_TRUE(shapes[a].first_in_warmup);
    EXPECT_EQ(shapes[a].first_ms, 100);
    EXPECT_EQ(shapes[a].measured, 2u);
    EXPECT_EQ(shapes[a].steady, (std::vector<double>{2, 6}));
    EXPECT_FALSE(shapes[b].first_in_warmup);
    EXPECT_EQ(shapes[b].first_ms, 40);
    EXPECT_EQ(shapes[b].measured, 3u);   // the first counted as measured, not as steady
    EXPECT_EQ(shapes[b].steady, (std::vector<double>{4, 8}));
    const LatencySummary steady = s.steady();
    EXPECT_EQ(steady.count, 4u);
    EXPECT_EQ(steady.min, 2);
    EXPECT_EQ(steady.max, 8);
    EXPECT_DOUBLE_EQ(steady.mean, 5);
    const LatencySummary firsts = s.first_runs();
    EXPECT_EQ(firsts.count, 2u);
    EXPECT_EQ(firsts.min, 40);
    EXPECT_EQ(firsts.max, 100);
    // 5 measured runs in 60 ms; tokens 3 + 3 + 5 + 5 + 5 = 21.
    EXPECT_DOUBLE_EQ(s.runs_per_s(), 5 * 1000.0 / 60);
    EXPECT_EQ(s.measured_tokens(), 21u);
    EXPECT_DOUBLE_EQ(s.tokens_per_s(), 21 * 1000.0 / 60);

    const std::string table = statistics_table(s, true);
    EXPECT_NE(table.find("x[1,3]"), std::string::npos) << table;
    EXPECT_NE(table.find("* first run in warm-up"), std::string::npos) << table;
    EXPECT_NE(table.find("warm-up: 2 runs"), std::string::npos) << table;
    EXPECT_NE(table.find("tokens/s"), std::string::npos) << table;
}

// ---- the run plan --------------------------------------------------------------------

struct Planned {
    std::vector<size_t> entries;
    std::vector<bool> warmup, new_round;
};

Planned drain(RunPlan& plan, double elapsed = 0) {
    Planned out;
    RunPlan::Step step;
    while (plan.next(elapsed, &step)) {
        out.entries.push_back(step.entry);
        out.warmup.push_back(step.warmup);
        out.new_round.push_back(step.new_round);
        if (out.entries.size() > 100) break;
    }
    return out;
}

TEST(RunPlanTest, WarmupThenIterations_CycleTheScheduleFromItsStart) {
    PlanSettings s;
    s.warmup = 2;
    s.measured = 7;
    RunPlan plan(3, s);
    EXPECT_EQ(plan.planned_runs(), 9u);
    const Planned p = drain(plan);
    EXPECT_EQ(p.entries, (std::vector<size_t>{0, 1, 0, 1, 2, 0, 1, 2, 0}));
    EXPECT_EQ(p.warmup, (std::vector<bool>{true, true, false, false, false, false, false, false, false}));
    EXPECT_EQ(p.new_round, (std::vector<bool>{false, false, true, false, false, true, false, false, true}));
    EXPECT_EQ(plan.stopped_by(), "iterations");
    EXPECT_EQ(plan.measured_made(), 7u);
}

TEST(RunPlanTest, Duration_WantsTheCountAndTheTime) {
    PlanSettings s;
    s.measured = 3;   // one pass of a 3-entry schedule
    s.duration_s = 1.0;
    s.cap = 100;
    RunPlan plan(3, s);
    EXPECT_EQ(plan.planned_runs(), 0u);
    RunPlan::Step step;
    // The time is spent at once, but the pass is not done yet.
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(plan.next(5.0, &step));
    // The pass is done, the time not yet.
    ASSERT_TRUE(plan.next(0.5, &step));
    EXPECT_EQ(step.entry, 0u);
    EXPECT_FALSE(plan.next(1.0, &step));
    EXPECT_EQ(plan.stopped_by(), "duration");
    EXPECT_EQ(plan.measured_made(), 4u);
    EXPECT_FALSE(plan.next(0, &step));   // stays stopped
}

TEST(RunPlanTest, Duration_StopsAtTheCap) {
    PlanSettings s;
    s.measured = 1;
    s.duration_s = 10;
    s.cap = 5;
    RunPlan plan(2, s);
    const Planned p = drain(plan, 0.0);
    EXPECT_EQ(p.entries.size(), 5u);
    EXPECT_EQ(plan.stopped_by(), "cap");
}

TEST(RunPlanTest, EmptySchedule_RunsNothing) {
    PlanSettings s;
    s.measured = 4;
    RunPlan plan(0, s);
    RunPlan::Step step;
    EXPECT_FALSE(plan.next(0, &step));
}

// ---- the runner: what it keeps per run ------------------------------------------------

const char* kTiny = R"(
name: tiny
inputs:
  x: {dtype: f32, shape: [batch, seq]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
schedule:
  - {batch: 2, seq: [3, 5]}
)";

RunResult run_tiny(ReportLevel level, size_t warmup, size_t iterations, const std::string& extra_yaml = "") {
    const Pipeline p = load_pipeline_text(std::string(kTiny) + extra_yaml, "tiny.yaml", "", test::registry());
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    o.report_level = level;
    o.warmup = warmup;
    if (iterations) o.iterations = iterations;
    return run_pipeline(p, o);
}

TEST(RunStatsRunner, ReportLevels_KeepOnlyWhatTheyNeed) {
    const RunResult summary = run_tiny(ReportLevel::summary, 1, 6);
    EXPECT_EQ(summary.report_level, ReportLevel::summary);
    EXPECT_TRUE(summary.runs.empty());
    EXPECT_EQ(summary.run_count, 7u);
    EXPECT_EQ(summary.statistics.measured_runs(), 6u);
    EXPECT_EQ(summary.statistics.warmup_runs(), 1u);
    EXPECT_FALSE(summary.impls.empty());   // counted as the runs went, not from records

    const RunResult runs = run_tiny(ReportLevel::runs, 1, 6);
    ASSERT_EQ(runs.runs.size(), 7u);
    for (const RunRecord& r : runs.runs) EXPECT_TRUE(r.stats.nodes.empty());
    EXPECT_TRUE(runs.runs[0].warmup);
    EXPECT_TRUE(runs.runs[0].first_at_shape);   // seq 3
    EXPECT_FALSE(runs.runs[1].warmup);
    EXPECT_FALSE(runs.runs[1].first_at_shape);   // seq 3 again: the measured runs start over
    EXPECT_TRUE(runs.runs[2].first_at_shape);    // seq 5
    EXPECT_EQ(runs.runs[2].label, "batch=2 seq=5");
    EXPECT_EQ(runs.runs[2].shapes.at("x"), (Shape{2, 5}));

    const RunResult nodes = run_tiny(ReportLevel::nodes, 0, 2);
    ASSERT_EQ(nodes.runs.size(), 2u);
    bool act = false;
    for (const NodeStats& n : nodes.runs[0].stats.nodes) act = act || n.node == "act";
    EXPECT_TRUE(act);
}

TEST(RunStatsRunner, Automatic_DropsTheRecordsPastItsSize) {
    const RunResult few = run_tiny(ReportLevel::automatic, 0, 4);
    EXPECT_EQ(few.report_level, ReportLevel::runs);
    EXPECT_EQ(few.runs.size(), 4u);
    const RunResult many = run_tiny(ReportLevel::automatic, 0, kAutoRunRecords + 1);
    EXPECT_EQ(many.report_level, ReportLevel::summary);
    EXPECT_TRUE(many.runs.empty());
    EXPECT_EQ(many.statistics.measured_runs(), kAutoRunRecords + 1);
}

TEST(RunStatsRunner, YamlWarmupAndIterations_AreUsedUnlessTheOptionsSayOtherwise) {
    const std::string run = "run: {warmup: 3, iterations: 5}\n";
    const Pipeline p = load_pipeline_text(std::string(kTiny) + run, "tiny.yaml", "", test::registry());
    EXPECT_EQ(p.run.warmup, 3u);
    ASSERT_TRUE(p.run.iterations.has_value());
    EXPECT_EQ(*p.run.iterations, 5u);
    RunOptions o;
    o.device = "cpu";
    o.report_level = ReportLevel::summary;
    const RunResult yaml = run_pipeline(p, o);
    EXPECT_EQ(yaml.statistics.warmup_runs(), 3u);
    EXPECT_EQ(yaml.statistics.measured_runs(), 5u);
    o.warmup = 0;
    o.repeat = 2;   // replaces run.iterations: two passes of two entries
    const RunResult cli = run_pipeline(p, o);
    EXPECT_EQ(cli.statistics.warmup_runs(), 0u);
    EXPECT_EQ(cli.statistics.measured_runs(), 4u);
    // tokens: batch 2 x seq (3, 5, 3, 5).
    EXPECT_EQ(cli.statistics.measured_tokens(), 32u);

    for (const char* bad : {"run: {warmup: -1}\n", "run: {warmup: 100001}\n", "run: {iterations: 0}\n",
                            "run: {iterations: 2.5}\n", "run: {iterations: 1000001}\n"}) {
        try {
            load_pipeline_text(std::string(kTiny) + bad, "tiny.yaml", "", test::registry());
            ADD_FAILURE() << "no error for " << bad;
        } catch (const Error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(std::string(bad).find("warmup") != std::string::npos ? "run.warmup" : "run.iterations"),
                      std::string::npos)
                << what;
            EXPECT_NE(what.find("tiny.yaml:"), std::string::npos) << what;
        }
    }
}

// ---- the CLI ---------------------------------------------------------------------------

using Proc = test::CliResult;
using TempDir = test::ScratchDir;

Proc dynrt_cli(const std::string& args) { return test::run_dynrt(args); }

std::string slurp(const std::string& path) { return test::read_text(path); }

// The number after the first `"key": ` in `json` (-1 when absent).
double number_after(const std::string& json, const std::string& key) {
    const std::string k = "\"" + key + "\": ";
    const size_t at = json.find(k);
    return at == std::string::npos ? -1 : std::strtod(json.c_str() + at + k.size(), nullptr);
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Runs the tiny pipeline with `args` and --report; returns the report ("" on failure).
std::string report_of(const TempDir& dir, const std::string& args, Proc* proc = nullptr) {
    const std::string cfg = dir / "tiny.yaml";
    if (!fs::exists(cfg)) std::ofstream(cfg) << kTiny;
    const std::string report = dir / "report.json";
    fs::remove(report);
    const Proc p = dynrt_cli("run " + cfg + " --device cpu --modules-dir " + test::module_dir() + " --report " +
                             report + " " + args);
    EXPECT_EQ(p.code, 0) << args << ": " << p.out;
    if (proc) *proc = p;
    return slurp(report);
}

TEST(RunStatsCli, WarmupRuns_AreReportedApartAndNotInTheStatistics) {
    TempDir dir;
    Proc p;
    const std::string json = report_of(dir, "--warmup 3 --iterations 5", &p);
    EXPECT_NE(p.out.find("5 measured runs (+3 warm-up)"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("warm-up: 3 runs"), std::string::npos) << p.out;
    EXPECT_EQ(number_after(json, "warmup_runs"), 3) << json;
    EXPECT_EQ(number_after(json, "measured_runs"), 5) << json;
    // Warm-up ran both shapes first (seq 3, 5, 3), so the 5 measured runs are all steady.
    EXPECT_NE(json.find("\"steady\": {\"count\": 5,"), std::string::npos) << json;
    EXPECT_EQ(count_of(json, "\"warmup\": true"), 3u) << json;
    EXPECT_EQ(count_of(json, "\"warmup\": false"), 5u) << json;
    EXPECT_EQ(number_after(json, "tokens"), 38) << json;   // batch 2 x seq (3 + 5 + 3 + 5 + 3)

    // Without warm-up the first run at each shape leaves the steady runs: 5 - 2.
    const std::string cold = report_of(dir, "--iterations 5");
    EXPECT_NE(cold.find("\"steady\": {\"count\": 3,"), std::string::npos) << cold;
    EXPECT_EQ(number_after(cold, "warmup_runs"), 0) << cold;
}

TEST(RunStatsCli, IterationsRepeatAndDuration_SetTheMeasuredRuns) {
    TempDir dir;
    EXPECT_EQ(number_after(report_of(dir, "--iterations 7"), "measured_runs"), 7);
    EXPECT_EQ(number_after(report_of(dir, "--repeat 3"), "measured_runs"), 6);
    EXPECT_EQ(number_after(report_of(dir, ""), "measured_runs"), 2);   // one pass
    const std::string counted = report_of(dir, "--iterations 7");
    EXPECT_NE(counted.find("\"stopped_by\": \"iterations\""), std::string::npos) << counted;
    // A short duration ends, after at least one pass of the schedule.
    const std::string timed = report_of(dir, "--duration 0.01");
    EXPECT_NE(timed.find("\"stopped_by\": \"duration\""), std::string::npos) << timed;
    EXPECT_GE(number_after(timed, "measured_runs"), 2) << timed;
    EXPECT_EQ(number_after(timed, "duration_s"), 0.01) << timed;
}

TEST(RunStatsCli, ReportLevels_DecideTheReportsContent) {
    TempDir dir;
    const std::string summary = report_of(dir, "--iterations 4 --report-level summary");
    EXPECT_NE(summary.find("\"report_level\": \"summary\""), std::string::npos) << summary;
    EXPECT_EQ(summary.find("\"runs\": ["), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"statistics\": {"), std::string::npos) << summary;
    EXPECT_NE(summary.find("\"totals\": {"), std::string::npos) << summary;

    const std::string runs = report_of(dir, "--iterations 4 --report-level runs");
    EXPECT_EQ(count_of(runs, "\"index\": "), 4u) << runs;
    EXPECT_EQ(runs.find("\"nodes\": ["), std::string::npos) << runs;

    const std::string nodes = report_of(dir, "--iterations 4 --report-level nodes");
    EXPECT_EQ(count_of(nodes, "\"nodes\": ["), 4u) << nodes;

    // The default: records up to kAutoRunRecords runs.
    const std::string deflt = report_of(dir, "--iterations 4");
    EXPECT_NE(deflt.find("\"report_level\": \"runs\""), std::string::npos) << deflt;
    EXPECT_EQ(count_of(deflt, "\"index\": "), 4u) << deflt;
}

TEST(RunStatsCli, BadBenchmarkValues_Exit2NamingTheOption) {
    TempDir dir;
    const std::string cfg = dir / "tiny.yaml";
    std::ofstream(cfg) << kTiny;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"--duration 0", "--duration"},
        {"--duration -1", "--duration"},
        {"--duration 86401", "--duration"},
        {"--duration 1e308", "--duration"},
        {"--duration nan", "--duration"},
        {"--duration 2s", "--duration"},
        {"--warmup -1", "--warmup"},
        {"--warmup 100001", "--warmup"},
        {"--warmup 1.5", "--warmup"},
        {"--warmup ten", "--warmup"},
        {"--iterations 0", "--iterations"},
        {"--iterations 1000001", "--iterations"},
        {"--iterations 3.0", "--iterations"},
        {"--iterations 3 --repeat 2", "--iterations"},
        {"--report-level everything", "--report-level"},
    };
    for (const auto& [args, option] : cases) {
        const Proc p = dynrt_cli("run " + cfg + " --device cpu --modules-dir " + test::module_dir() + " " + args);
        EXPECT_EQ(p.code, 2) << args << ": " << p.out;
        EXPECT_NE(p.out.find(option), std::string::npos) << args << ": " << p.out;
        EXPECT_EQ(p.out.find("p50 ms"), std::string::npos) << args << ": it ran: " << p.out;
    }
    const Proc help = dynrt_cli("run --help");
    for (const char* option : {"--warmup", "--iterations", "--duration", "--report-level"})
        EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

}   // namespace
