// Which schedule entry each run of `dynrt run` takes, and when the runs stop:
// warm-up, measured runs (--iterations / --repeat), --duration.
//
// The runner asks next() before every run; the plan cycles through the
// schedule. Warm-up runs go first, from entry 0; the measured runs then start
// again at entry 0, so every measured pass covers the schedule in its order.
// Without a duration exactly `measured` runs are made; with one, runs go on
// until both `measured` runs were made and `duration_s` seconds were spent
// measuring, and never past `cap` measured runs. A pure state machine: the
// elapsed time is passed in, so tests drive it without a clock.
#pragma once

#include <cstddef>
#include <string>

namespace dynrt::pipeline {

// Bounds of the benchmark options (the command line's and run.warmup,
// run.iterations): past them is exit 2, or an error naming the YAML field.
inline constexpr size_t kMaxWarmupRuns = 100000;
inline constexpr double kMaxDurationS = 86400;   // one day

struct PlanSettings {
    size_t warmup = 0;       // runs before measuring
    size_t measured = 0;     // measured runs: exact, or the least with a duration
    double duration_s = 0;   // 0: none
    size_t cap = 0;          // the most measured runs with a duration (0: no cap)
};

class RunPlan {
public:
    struct Step {
        size_t entry = 0;         // schedule entry (index into Pipeline::runs)
        bool warmup = false;      // not measured
        bool new_round = false;   // the schedule starts over at entry 0 (not on the very first run)
    };

    RunPlan(size_t schedule_size, PlanSettings settings);
    // The next run, given the seconds spent since the first measured run
    // began (ignored before it); false when the runs are done.
    bool next(double measured_elapsed_s, Step* step);
    // Why the measured runs ended: "iterations" (the count, no duration),
    // "duration" (count and time both reached), "cap" (the measured-run cap
    // was reached before the duration), or "" while running.
    const std::string& stopped_by() const { return stopped_by_; }
    size_t runs_made() const { return warmup_made_ + measured_made_; }
    size_t measured_made() const { return measured_made_; }
    // The runs the plan will make, or 0 when a duration decides.
    size_t planned_runs() const;

private:
    size_t size_;
    PlanSettings s_;
    size_t warmup_made_ = 0;
    size_t measured_made_ = 0;
    size_t entry_ = 0;
    std::string stopped_by_;
};

}   // namespace dynrt::pipeline
