// The run plan: warm-up, measured runs and the duration over a cycling schedule.
#include "run_plan.hpp"

#include "pipeline.hpp"

namespace dynrt::pipeline {

RunPlan::RunPlan(size_t schedule_size, PlanSettings settings) : size_(schedule_size), s_(settings) {}

size_t RunPlan::planned_runs() const { return s_.duration_s > 0 ? 0 : s_.warmup + s_.measured; }

bool RunPlan::next(double measured_elapsed_s, Step* step) {
    if (size_ == 0 || !stopped_by_.empty()) return false;
    const bool warmup = warmup_made_ < s_.warmup;
    if (!warmup) {
        const bool count_done = measured_made_ >= s_.measured;
        if (s_.duration_s <= 0) {
            if (count_done) stopped_by_ = "iterations";
        } else if (count_done && measured_made_ > 0 && measured_elapsed_s >= s_.duration_s) {
            stopped_by_ = "duration";
        } else if (s_.cap && measured_made_ >= s_.cap) {
            stopped_by_ = "cap";
        }
        if (!stopped_by_.empty()) return false;
        // The measured runs start over at entry 0.
        if (measured_made_ == 0) entry_ = 0;
    }
    step->entry = entry_;
    step->warmup = warmup;
    step->new_round = entry_ == 0 && runs_made() > 0;
    if (warmup) ++warmup_made_;
    else ++measured_made_;
    entry_ = (entry_ + 1) % size_;
    return true;
}

const char* to_string(ReportLevel level) {
    switch (level) {
        case ReportLevel::automatic: return "automatic";
        case ReportLevel::summary: return "summary";
        case ReportLevel::runs: return "runs";
        case ReportLevel::nodes: return "nodes";
    }
    return "?";
}

bool parse_report_level(const std::string& text, ReportLevel* level) {
    for (ReportLevel l : {ReportLevel::summary, ReportLevel::runs, ReportLevel::nodes})
        if (text == to_string(l)) {
            *level = l;
            return true;
        }
    return false;
}

}   // namespace dynrt::pipeline
