// `dynrt run --trace FILE`: Chrome trace-event JSON, streamed run by run.
#include "trace.hpp"

#include <algorithm>
#include <cstdio>

#include "file_io.hpp"
#include "json_writer.hpp"
#include "pipeline.hpp"

namespace dynrt::pipeline {

namespace {

constexpr int kPid = 1;
constexpr int kRunsTid = 1, kNodesTid = 2, kKernelsTid = 3, kEventsTid = 4;

// Microseconds, exact to the nanosecond: slices nest exactly as the
// nanosecond times do (no rounding lets a step end after its node).
std::string us(uint64_t ns) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                  static_cast<unsigned long long>(ns % 1000));
    return buf;
}

std::string slice(const std::string& name, const char* cat, int tid, uint64_t ts_ns, uint64_t dur_ns,
                  const std::string& args) {
    return "{\"name\": " + tools::json_quote(name) + ", \"cat\": \"" + cat +
           "\", \"ph\": \"X\", \"pid\": " + std::to_string(kPid) + ", \"tid\": " + std::to_string(tid) +
           ", \"ts\": " + us(ts_ns) + ", \"dur\": " + us(dur_ns) + (args.empty() ? "" : ", \"args\": " + args) + "}";
}

std::string instant(const std::string& name, const char* cat, uint64_t ts_ns, const std::string& args) {
    return "{\"name\": " + tools::json_quote(name) + ", \"cat\": \"" + cat +
           "\", \"ph\": \"i\", \"s\": \"t\", \"pid\": " + std::to_string(kPid) +
           ", \"tid\": " + std::to_string(kEventsTid) + ", \"ts\": " + us(ts_ns) + ", \"args\": " + args + "}";
}

std::string thread_name(int tid, const char* name) {
    return "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + std::to_string(kPid) +
           ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"name\": \"" + name + "\"}}";
}

std::string thread_order(int tid) {
    return "{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": " + std::to_string(kPid) +
           ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"sort_index\": " + std::to_string(tid) + "}}";
}

}   // namespace

TraceWriter::TraceWriter(const std::string& path, const std::string& title, uint64_t first, uint64_t last)
    : file_(std::make_unique<tools::ReplacingFile>(path, "--trace")), first_(first), last_(last) {
    buffer_ =
        "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"dynrt run --trace\"}, \"traceEvents\": [\n";
    event("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(kPid) +
          ", \"args\": {\"name\": " + tools::json_quote(title) + "}}");
    event(thread_name(kRunsTid, "runs"));
    event(thread_name(kNodesTid, "nodes (flow steps)"));
    event(thread_name(kKernelsTid, "kernels"));
    event(thread_name(kEventsTid, "events"));
    for (int tid : {kRunsTid, kNodesTid, kKernelsTid, kEventsTid}) event(thread_order(tid));
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::event(const std::string& json) {
    if (events_) buffer_ += ",\n";
    buffer_ += json;
    ++events_;
    if (buffer_.size() >= (size_t{1} << 20)) {
        file_->append(buffer_);
        buffer_.clear();
    }
}

void TraceWriter::add(const RunRecord& run) {
    const std::string label = run.label;
    const bool changed = label != previous_label_;
    previous_label_ = label;
    if (run.index < first_ || run.index > last_ || !run.stats.profile.on) return;
    const uint64_t t0 = run.start_ns;
    const auto run_ns = static_cast<uint64_t>(run.host_ms * 1e6);
    event(slice("run " + std::to_string(run.index), "run", kRunsTid, t0, run_ns,
                "{\"shapes\": " + tools::json_quote(label) +
                    ", \"submit_ms\": " + tools::json_number(run.stats.submit_ms) + "}"));
    if (changed) event(instant("shape change", "shape", t0, "{\"shapes\": " + tools::json_quote(label) + "}"));
    const bool device_clock = [&] {
        for (const NodeStats& n : run.stats.nodes)
            if (n.times.device_ns) return true;
        return false;
    }();
    for (const NodeStats& n : run.stats.nodes) {
        const NodeTimes& t = n.times;
        const uint64_t total = t.total();
        if (!total) continue;
        const uint64_t start = t0 + t.start_ns;
        const std::string op = tools::json_quote(n.op);
        event(slice(n.node, "node", kNodesTid, start, total,
                    "{\"op\": " + op + ", \"impl\": " + tools::json_quote(n.impl) + "}"));
        // The steps, back to back inside the node's slice.
        uint64_t at = start;
        for (size_t s = 0; s < kFlowSteps; ++s) {
            if (!t.ns[s]) continue;
            event(slice(to_string(static_cast<FlowStep>(s)), "step", kNodesTid, at, t.ns[s], ""));
            if (s == static_cast<size_t>(FlowStep::execute) && !device_clock)
                event(slice(n.node, "kernel", kKernelsTid, at, t.ns[s], "{\"op\": " + op + "}"));
            at += t.ns[s];
        }
        // A device kernel ended at the latest when the host's wait for it
        // did, and began after the node did.
        if (device_clock && t.device_ns) {
            const uint64_t dur = std::min(t.device_ns, total);
            event(slice(n.node, "kernel", kKernelsTid, start + total - dur, dur,
                        "{\"op\": " + op + ", \"device_us\": " + us(t.device_ns) + "}"));
        }
        const std::string node = "{\"node\": " + tools::json_quote(n.node) + "}";
        if (n.counters.async_builds_queued) event(instant("background build queued", "build", start, node));
        if (n.counters.async_builds_picked) event(instant("background build picked up", "build", start, node));
        if (n.counters.static_builds) event(instant("static build", "build", start, node));
    }
}

void TraceWriter::commit() {
    buffer_ += "\n]}\n";
    file_->append(buffer_);
    buffer_.clear();
    file_->commit();
}

}   // namespace dynrt::pipeline
