// Profiles and traces (`dynrt run --profile`, `--trace FILE`): every node the
// flow runs is timed step by step and the steps lie inside the run; a device
// clock is read once per node; nothing is timed when profiling is off; the
// per-node sums, the first run at a shape apart and warm-up runs left out;
// the trace is strict JSON in the trace-event format whose slices nest on
// every track; the options' bad values and destinations. No timed assertions:
// only how times relate to each other, never how long anything took.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

using namespace dynrt;
using namespace dynrt::pipeline;
using dynrt::test::JsonValue;

namespace {

const std::string kDecode = std::string(DYNRT_SOURCE_DIR) + "/configs/llm_decode_kv.yaml";
const std::string kShapeChain = std::string(DYNRT_SOURCE_DIR) + "/configs/shape_chain.yaml";

RunResult run_config(const std::string& file, bool profile, size_t runs) {
    const Pipeline p = load_pipeline(file, test::registry());
    RunOptions o;
    o.device = "cpu";
    o.profile = profile;
    o.max_runs = runs;
    o.report_level = ReportLevel::nodes;
    return run_pipeline(p, o);
}

constexpr size_t kExecute = static_cast<size_t>(FlowStep::execute);
constexpr size_t kShape = static_cast<size_t>(FlowStep::shape);

// Every node that ran a kernel is timed, its steps add up to its total and it
// lies inside its run; the nodes and the time outside them never exceed the
// run's wall time (they are disjoint intervals of it).
TEST(Profile, EveryExecutedNodeIsTimedInsideItsRun) {
    for (const std::string& file : {kDecode, kShapeChain}) {
        const RunResult r = run_config(file, true, 6);
        ASSERT_EQ(r.runs.size(), 6u) << file;
        for (const RunRecord& run : r.runs) {
            const RunStats& s = run.stats;
            ASSERT_TRUE(s.profile.on);
            const auto wall_ns = static_cast<uint64_t>(s.host_ms * 1e6);
            uint64_t nodes = 0;
            size_t timed = 0;
            for (const NodeStats& n : s.nodes) {
                const NodeTimes& t = n.times;
                uint64_t sum = 0;
                for (uint64_t v : t.ns) sum += v;
                EXPECT_EQ(sum, t.total());
                nodes += t.total();
                if (n.counters.executions) {
                    ++timed;
                    EXPECT_GT(t.total(), 0u) << n.node;
                    EXPECT_GT(t.ns[kExecute], 0u) << n.node << ": a kernel ran, its step is timed";
                }
                if (t.total()) {
                    EXPECT_LE(t.start_ns + t.total(), wall_ns) << n.node;
                }
                EXPECT_EQ(t.device_ns, 0u) << "the cpu engine has no device clock";
            }
            EXPECT_GT(timed, 0u);
            EXPECT_EQ(s.profile.nodes_ns, nodes);
            const RunProfile& p = s.profile;
            EXPECT_LE(nodes + p.inputs_ns + p.finish_ns + p.outputs_ns + p.report_ns, wall_ns);
        }
        // Shape inference ran on the first run (every node's shape is new).
        uint64_t shape = 0;
        for (const NodeStats& n : r.runs.front().stats.nodes) shape += n.times.ns[kShape];
        EXPECT_GT(shape, 0u) << file;
    }
}

TEST(Profile, OffByDefault_NothingIsTimed) {
    const RunResult r = run_config(kShapeChain, false, 3);
    ASSERT_EQ(r.runs.size(), 3u);
    for (const RunRecord& run : r.runs) {
        EXPECT_FALSE(run.stats.profile.on);
        EXPECT_EQ(run.stats.profile.nodes_ns, 0u);
        for (const NodeStats& n : run.stats.nodes) EXPECT_EQ(n.times.total(), 0u) << n.node;
    }
    EXPECT_TRUE(r.profile.empty());
}

// A device clock (OpenCL profiling events on ocl) is read after every node's
// wait: each node gets the difference, and no node is skipped or counted twice.
TEST(Profile, DeviceClock_GivesEachNodeTheDifferenceOfTwoReads) {
    const Pipeline p = load_pipeline(kDecode, test::registry());
    auto network = Network::create(p.program, test::engine("cpu"), NetworkOptions{});
    InferRequest request(network);
    request.set_profiling(true);
    uint64_t reads = 0;
    request.set_device_clock([&reads] {
        ++reads;
        return reads * reads;   // differences grow: 3, 5, 7, ... for the reads after the first
    });
    for (int step = 0; step < 3; ++step) {
        request.set_input("ids", test::random_tensor(DataType::i64, Shape{1, 1}, 7 + step, 0, 256));
        const uint64_t before = reads;
        request.infer();
        const RunStats& s = request.last_run();
        const size_t nodes = request.execution_order().size();
        EXPECT_EQ(reads - before, nodes + 1) << "one read before the first node, one after each";
        std::vector<uint64_t> seen;
        for (const NodeStats& n : s.nodes) seen.push_back(n.times.device_ns);
        std::sort(seen.begin(), seen.end());
        // Reads r = before+1 .. before+nodes+1: node k gets (r+1)^2 - r^2 = 2r+1.
        for (size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], 2 * (before + 1 + k) + 1) << k;
    }
    request.set_profiling(false);
    request.set_input("ids", test::random_tensor(DataType::i64, Shape{1, 1}, 11, 0, 256));
    const uint64_t before = reads;
    request.infer();
    EXPECT_EQ(reads, before) << "an unprofiled run reads no clock";
    for (const NodeStats& n : request.last_run().nodes) EXPECT_EQ(n.times.total() + n.times.device_ns, 0u);
}

// ---- the sums ------------------------------------------------------------------

RunRecord synthetic_run(size_t index, bool first, bool warmup, std::vector<uint64_t> execute_ns, double host_ms) {
    RunRecord r;
    r.index = index;
    r.label = "x[1," + std::to_string(index) + "]";
    r.first_at_shape = first;
    r.warmup = warmup;
    r.host_ms = host_ms;
    r.stats.host_ms = host_ms;
    r.stats.profile.on = true;
    r.stats.profile.outputs_ns = 1000;
    const char* names[] = {"a", "b", "c"};
    const char* ops[] = {"gemm", "softmax", "gemm"};
    for (size_t k = 0; k < execute_ns.size(); ++k) {
        NodeStats n;
        n.node = names[k];
        n.op = ops[k];
        n.impl = std::string(ops[k]) + "_impl";
        n.counters.executions = 1;
        n.times.ns[kShape] = 100;
        n.times.ns[kExecute] = execute_ns[k];
        r.stats.nodes.push_back(n);
        r.stats.profile.nodes_ns += n.times.total();
    }
    return r;
}

TEST(Profile, Sums_SteadyRunsApartFromFirstRunsAndWarmupLeftOut) {
    Profile prof;
    prof.add(synthetic_run(0, true, true, {90000, 1000, 5000}, 1.0));   // first at its shape (a warm-up)
    prof.add(synthetic_run(1, false, true, {1, 1, 1}, 9.0));            // warm-up: left out
    prof.add(synthetic_run(2, false, false, {2000, 30000, 10000}, 0.05));
    prof.add(synthetic_run(3, false, false, {4000, 50000, 10000}, 0.07));
    RunRecord unprofiled = synthetic_run(4, false, false, {7, 7, 7}, 1.0);
    unprofiled.stats.profile.on = false;
    prof.add(unprofiled);   // ignored

    ASSERT_EQ(prof.steady().runs, 2u);
    ASSERT_EQ(prof.first().runs, 1u);
    EXPECT_EQ(prof.steady().nodes[1].ns[kExecute], 80000u);
    EXPECT_EQ(prof.steady().nodes[0].ns[kShape], 200u);
    EXPECT_EQ(prof.first().nodes[0].ns[kExecute], 90000u);
    EXPECT_EQ(prof.steady().outputs_ns, 2000u);
    EXPECT_EQ(prof.steady().wall_ns, 120000u);
    EXPECT_EQ(prof.steady().accounted_ns(), 200u * 3 + 6000 + 80000 + 20000 + 2000);
    EXPECT_EQ(prof.steady().unaccounted_ns(), 120000u - prof.steady().accounted_ns());

    // The table: b (softmax) first, then c, then a; op types by time.
    const std::string t = prof.table(2);
    const size_t b = t.find("\n  b "), c = t.find("\n  c "), a = t.find("\n  a ");
    ASSERT_NE(b, std::string::npos) << t;
    ASSERT_NE(c, std::string::npos) << t;
    EXPECT_EQ(a, std::string::npos) << "top 2 only\n" << t;
    EXPECT_LT(b, c);
    EXPECT_LT(t.find("softmax"), t.find("\n  gemm "));
    EXPECT_NE(t.find("2 steady runs"), std::string::npos) << t;
    EXPECT_NE(t.find("first run at a shape"), std::string::npos) << t;

    tools::JsonWriter j;
    prof.json(j);
    const JsonValue v = test::parse_json(j.str());
    const JsonValue* steady = v.find("steady");
    ASSERT_NE(steady, nullptr);
    EXPECT_EQ(steady->find("runs")->number, 2);
    const JsonValue* nodes = steady->find("nodes");
    ASSERT_TRUE(nodes && nodes->is(JsonValue::Type::array));
    ASSERT_EQ(nodes->array.size(), 3u);
    EXPECT_EQ(nodes->array[0].find("node")->string, "b");
    EXPECT_DOUBLE_EQ(nodes->array[0].find("per_run_ms")->number, (80000.0 + 200) * 1e-6 / 2);
    EXPECT_EQ(v.find("first_at_shape")->find("runs")->number, 1);
}

// ---- traces ------------------------------------------------------------------------

struct Slice {
    double ts, end;
    std::string name;
};

// The trace-event format's fields (what Perfetto's JSON importer reads), and
// on every track the complete events nest: a slice that starts inside
// another ends inside it too.
void check_trace(const JsonValue& doc, std::map<std::string, size_t>* names_by_cat, std::vector<double>* run_ids) {
    ASSERT_TRUE(doc.is(JsonValue::Type::object));
    const JsonValue* events = doc.find("traceEvents");
    ASSERT_TRUE(events && events->is(JsonValue::Type::array));
    std::map<double, std::vector<Slice>> by_tid;
    for (const JsonValue& e : events->array) {
        ASSERT_TRUE(e.is(JsonValue::Type::object));
        const JsonValue* ph = e.find("ph");
        ASSERT_TRUE(ph && ph->is(JsonValue::Type::string));
        ASSERT_TRUE(e.find("name") && e.find("name")->is(JsonValue::Type::string));
        ASSERT_TRUE(e.find("pid") && e.find("pid")->is(JsonValue::Type::number));
        if (ph->string == "M") continue;
        ASSERT_TRUE(ph->string == "X" || ph->string == "i") << ph->string;
        ASSERT_TRUE(e.find("tid") && e.find("tid")->is(JsonValue::Type::number));
        const JsonValue* ts = e.find("ts");
        ASSERT_TRUE(ts && ts->is(JsonValue::Type::number));
        EXPECT_GE(ts->number, 0);
        const std::string cat = e.find("cat") ? e.find("cat")->string : "";
        ++(*names_by_cat)[cat];
        if (ph->string == "i") continue;
        const JsonValue* dur = e.find("dur");
        ASSERT_TRUE(dur && dur->is(JsonValue::Type::number));
        EXPECT_GE(dur->number, 0);
        by_tid[e.find("tid")->number].push_back({ts->number, ts->number + dur->number, e.find("name")->string});
        if (cat == "run") run_ids->push_back(std::stod(e.find("name")->string.substr(4)));
    }
    for (auto& [tid, slices] : by_tid) {
        // Parents first: earlier start, then the longer one.
        std::stable_sort(slices.begin(), slices.end(),
                         [](const Slice& a, const Slice& b) { return a.ts < b.ts || (a.ts == b.ts && a.end > b.end); });
        std::vector<const Slice*> open;
        for (const Slice& s : slices) {
            // Times are exact to the nanosecond (0.001 us); ts + dur in
            // doubles may be off in the 14th digit.
            constexpr double kEps = 1e-6;
            while (!open.empty() && s.ts >= open.back()->end - kEps) open.pop_back();
            if (!open.empty()) {
                ASSERT_LE(s.end, open.back()->end + kEps)
                    << "track " << tid << ": '" << s.name << "' [" << s.ts << ", " << s.end << "] overlaps '"
                    << open.back()->name << "' [" << open.back()->ts << ", " << open.back()->end << "]";
            }
            open.push_back(&s);
        }
    }
}

TEST(Trace, CliWritesNestedTraceEventsOfTheChosenRuns) {
    test::ScratchDir dir("dynrt_trace_test");
    const std::string trace = dir / "t.json";
    const auto r = test::run_dynrt("run " + kShapeChain + " --device cpu --trace " + trace + " --trace-runs 1..3");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("profile:"), std::string::npos) << "--trace implies --profile\n" << r.out;
    EXPECT_NE(r.out.find("top "), std::string::npos) << r.out;
    const JsonValue doc = test::parse_json(test::read_text(trace));
    std::map<std::string, size_t> cats;
    std::vector<double> runs;
    check_trace(doc, &cats, &runs);
    EXPECT_EQ(runs, (std::vector<double>{1, 2, 3}));
    EXPECT_GT(cats["node"], 0u);
    EXPECT_GT(cats["step"], cats["node"]);
    EXPECT_GT(cats["kernel"], 0u);
    EXPECT_GT(cats["shape"], 0u) << "the shape chain's runs change shapes";
    // Nothing but the trace in the folder: the temporary file was renamed.
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.is_regular_file();
    EXPECT_EQ(files, 1u);
}

TEST(Trace, ReportHoldsTheProfileAndPerRunFigures) {
    test::ScratchDir dir("dynrt_trace_test");
    const std::string report = dir / "r.json";
    const auto r = test::run_dynrt("run " + kDecode + " --device cpu --profile --iterations 12 --report " + report +
                                   " --report-level nodes");
    ASSERT_EQ(r.code, 0) << r.out;
    const JsonValue doc = test::parse_json(test::read_text(report));
    const JsonValue* profile = doc.find("profile");
    ASSERT_NE(profile, nullptr);
    const JsonValue* steady = profile->find("steady");
    ASSERT_NE(steady, nullptr);
    EXPECT_EQ(steady->find("runs")->number, 11) << "the first run at the shape is apart";
    EXPECT_GT(steady->find("nodes")->array.size(), 5u);
    EXPECT_LE(steady->find("accounted_share")->number, 1.0);
    const JsonValue* runs = doc.find("runs");
    ASSERT_TRUE(runs && runs->array.size() == 12u);
    const JsonValue& last = runs->array.back();
    ASSERT_NE(last.find("profile"), nullptr);
    size_t timed = 0;
    for (const JsonValue& n : last.find("nodes")->array) timed += n.find("times_us") != nullptr;
    EXPECT_GT(timed, 5u);
}

TEST(Trace, BadValuesAndDestinations_FailBeforeAnythingRuns) {
    test::ScratchDir dir("dynrt_trace_test");
    const auto no_trace = test::run_dynrt("run " + kShapeChain + " --trace-runs 1..2");
    EXPECT_EQ(no_trace.code, 2) << no_trace.out;
    EXPECT_NE(no_trace.out.find("--trace-runs"), std::string::npos);
    for (const char* bad : {"3..1", "-1", "x", "1..", "1..y"}) {
        const auto r = test::run_dynrt("run " + kShapeChain + " --trace " + dir / "t.json" + " --trace-runs " + bad);
        EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
        EXPECT_NE(r.out.find("--trace-runs"), std::string::npos) << r.out;
    }
    // A folder, a FIFO: refused and left as they are, nothing run.
    std::filesystem::create_directories(dir / "folder");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    for (const std::string& target : {dir / "folder", dir / "fifo", dir / "missing/t.json"}) {
        const auto r = test::run_dynrt("run " + kShapeChain + " --device cpu --trace " + target);
        EXPECT_NE(r.code, 0) << target << ": " << r.out;
        EXPECT_NE(r.out.find("--trace"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("profile:"), std::string::npos) << "nothing ran\n" << r.out;
    }
    struct stat st {};
    ASSERT_EQ(::lstat((dir / "fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    // A run that fails leaves no trace (and no temporary file).
    const std::string yaml = dir / "bad.yaml";
    {
        std::ofstream f(yaml);
        f << "name: bad\ninputs:\n  x: {dtype: f32, shape: [batch, seq, 16]}\nnodes:\n"
             "  - {name: cs, op: cumsum, inputs: [x], attrs: {axis: 1}}\noutputs: [cs]\nschedule:\n"
             "  - {batch: 1, seq: 4}\n  - {batch: 100000000, seq: 100000000}\n";
    }
    const auto failed = test::run_dynrt("run " + yaml + " --device cpu --trace " + dir / "late.json");
    EXPECT_EQ(failed.code, 1) << failed.out;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find("late.json"), std::string::npos) << e.path();
}

}   // namespace
