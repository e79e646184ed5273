// `dynrt run --profile`: the nodes' flow-step times of every profiled run
// (NodeStats::times, RunStats::profile), summed per node, per op type and per
// step as the runs come, so memory stays bounded by the node count whatever
// the number of runs. The first run at each input shape (impl choice,
// allocation, kernel builds; RunRecord::first_at_shape) is summed apart from
// the steady runs; other warm-up runs are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/stats.hpp"
#include "json_writer.hpp"

namespace dynrt::pipeline {

struct RunRecord;

struct StepTimes {
    uint64_t ns[kFlowSteps] = {};
    uint64_t device_ns = 0;
    uint64_t total() const;
    void add(const NodeTimes& t);
};

// One group of runs (steady, or first at a shape).
struct ProfileGroup {
    uint64_t runs = 0;
    uint64_t wall_ns = 0;   // sum of the runs' infer() wall times
    StepTimes steps;        // sum over nodes and runs
    // Outside the nodes (RunStats::profile).
    uint64_t inputs_ns = 0, finish_ns = 0, outputs_ns = 0, report_ns = 0;
    std::vector<StepTimes> nodes;   // program order (RunStats::nodes)
    std::vector<uint64_t> executions;

    uint64_t outside_ns() const { return inputs_ns + finish_ns + outputs_ns + report_ns; }
    uint64_t accounted_ns() const { return steps.total() + outside_ns(); }
    // What the steps do not account for (never negative: clock reads round).
    uint64_t unaccounted_ns() const { return wall_ns > accounted_ns() ? wall_ns - accounted_ns() : 0; }
};

class Profile {
public:
    // Adds a profiled run (a run without RunStats::profile.on is ignored).
    void add(const RunRecord& run);
    bool empty() const { return steady_.runs == 0 && first_.runs == 0; }

    const ProfileGroup& steady() const { return steady_; }
    const ProfileGroup& first() const { return first_; }
    // The group the tables show: the steady runs, else (every run was the
    // first at its shape) the first runs.
    const ProfileGroup& shown() const { return steady_.runs ? steady_ : first_; }
    const std::vector<std::string>& node_names() const { return names_; }
    const std::vector<std::string>& node_ops() const { return ops_; }
    const std::vector<std::string>& node_impls() const { return impls_; }
    bool device_clock() const { return device_clock_; }

    // The console tables: where the time goes per step, host against device,
    // the `top` nodes and every op type by time per run.
    std::string table(size_t top = 10) const;
    // The report's "profile" object.
    void json(tools::JsonWriter& j) const;

private:
    ProfileGroup steady_, first_;
    std::vector<std::string> names_, ops_, impls_;
    bool device_clock_ = false;
};

}   // namespace dynrt::pipeline
