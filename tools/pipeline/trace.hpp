// `dynrt run --trace FILE`: a Chrome trace-event JSON file (opens in Perfetto
// and chrome://tracing) of the profiled runs, written run by run through a
// temporary file renamed when complete (docs/report.md, "Traces").
//
// Tracks (threads of one process): "runs" (one slice a run, its input shapes
// in the args), "nodes" (one slice a node, its flow steps nested inside),
// "kernels" (the kernel of each node: on the cpu engine its execute step,
// on a device with a clock the device time ending where the host's wait for
// it ended) and "events" (shape changes, background builds queued and
// picked up, as instant events).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace dynrt::tools {
class ReplacingFile;
}

namespace dynrt::pipeline {

struct RunRecord;

class TraceWriter {
public:
    // Checks `path` and makes the temporary file (throws dynrt::Error naming
    // the option and path). `first`..`last`: the run indices traced.
    TraceWriter(const std::string& path, const std::string& title, uint64_t first = 0, uint64_t last = UINT64_MAX);
    ~TraceWriter();
    // Appends a run's events (a run outside the traced indices, or one that
    // was not profiled, adds none).
    void add(const RunRecord& run);
    // Closes the JSON and renames the file into place.
    void commit();
    uint64_t events() const { return events_; }

private:
    void event(const std::string& json);

    std::unique_ptr<tools::ReplacingFile> file_;
    std::string buffer_;
    std::string previous_label_;
    uint64_t first_, last_, events_ = 0;
};

}   // namespace dynrt::pipeline
