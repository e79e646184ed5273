// The pass switchboard (dynrt/passes.hpp): spec parsing and its errors, each
// program and network pass following its switch alone, YAML run.passes and
// its aliases, the precedence of DYNRT_PASSES and --passes, and the passes
// acting (or not) in a run: with fusion off a fused pattern runs as separate
// nodes, with fold_permutations off the transpose stays.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "dynrt/passes.hpp"
#include "op_test.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;
using namespace dynrt::pipeline;

namespace {

using test::error_of;

Pipeline load_text(const std::string& text, const PassOverrides& overrides = {}) {
    return load_pipeline_text(text, "pipe.yaml", {}, test::registry(), overrides);
}

RunResult run(const Pipeline& p) {
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    o.keep_outputs = true;
    return run_pipeline(p, o);
}

const NodeStats& node_stats(const RunRecord& r, const std::string& node) {
    for (const NodeStats& n : r.stats.nodes)
        if (n.node == node) return n;
    throw Error("no node '" + node + "' in the run's stats");
}

using Proc = test::CliResult;

// The caller's DYNRT_PASSES never leaks in: each case sets its own.
Proc dynrt_cli(const std::string& env, const std::string& args) {
    return test::run_dynrt(args + " --modules-dir " + test::module_dir(), "env -u DYNRT_PASSES " + env + " ");
}

// A fully_connected with a fused relu, over three sequence lengths.
const char* kFcRelu = R"(
inputs:
  x: {dtype: f32, shape: [seq, 3]}
constants:
  w: {dtype: f32, shape: [2, 3], values: [1, -2, 0.5, 0, 1, 3]}
nodes:
  - {name: fc, op: fully_connected, inputs: [x, w]}
  - {name: act, op: activation, inputs: [fc], attrs: {func: relu}}
outputs: [act]
schedule:
  - {seq: [1, 4, 2]}
)";

}   // namespace

// ---- specs -----------------------------------------------------------------

TEST(PassSet, SpecForms_EditTheSetLeftToRight) {
    const PassSet all;
    EXPECT_TRUE(all.all_on());
    EXPECT_EQ(all.to_string(), "all");
    const PassSet a = PassSet::parse("fusion=off, views=false");
    EXPECT_FALSE(a.on("fusion"));
    EXPECT_FALSE(a.on("views"));
    EXPECT_TRUE(a.on("constant_folding"));
    EXPECT_EQ(a.to_string(), "-views,-fusion");   // table order
    EXPECT_EQ(PassSet::parse("-fusion,-views"), a);
    EXPECT_EQ(PassSet::parse(a.to_string()), a);
    const PassSet only_fusion = PassSet::parse("none,+fusion");
    EXPECT_TRUE(only_fusion.on("fusion"));
    EXPECT_EQ(only_fusion.off().size(), passes().size() - 1);
    EXPECT_EQ(PassSet::parse("none").to_string(), "none");
    EXPECT_EQ(PassSet::parse("none,all"), PassSet::all());
    EXPECT_EQ(PassSet::parse(""), PassSet::all());
    EXPECT_EQ(PassSet::parse("-fusion,fusion=on"), PassSet::all());
    // apply() edits an existing set
    PassSet s = PassSet::none();
    s.apply("+memory_pool", "test");
    EXPECT_TRUE(s.on("memory_pool"));
    EXPECT_FALSE(s.on("fusion"));
}

TEST(PassSet, UnknownPassOrValue_IsAnErrorNamingItTheSourceAndTheKnownPasses) {
    const std::string e = error_of([] { PassSet::parse("-fusion,-fuson", "--passes"); });
    EXPECT_NE(e.find("unknown pass 'fuson'"), std::string::npos) << e;
    EXPECT_NE(e.find("--passes"), std::string::npos) << e;
    for (const PassInfo& p : passes()) EXPECT_NE(e.find(p.name), std::string::npos) << p.name << ": " << e;
    EXPECT_NE(error_of([] { PassSet::parse("fusion=maybe", "DYNRT_PASSES"); }).find("'fusion=maybe'"),
              std::string::npos);
    // A bare known name says neither on nor off.
    EXPECT_NE(error_of([] { PassSet::parse("fusion"); }).find("-fusion"), std::string::npos);
    EXPECT_NE(error_of([] { PassSet::parse("-"); }).find("unknown pass ''"), std::string::npos);
    // A failed apply() changes nothing.
    PassSet s;
    EXPECT_THROW(s.apply("-fusion,-nope", "x"), Error);
    EXPECT_TRUE(s.all_on());
    EXPECT_THROW(s.on("nope"), Error);
}

// Every program or network pass sets its own switch and no other; import
// passes have none (the importer reads them by name).
TEST(PassSet, ApplyPasses_EachSwitchFollowsItsRowAlone) {
    std::set<std::string> switches;
    for (const PassInfo& p : passes()) {
        SCOPED_TRACE(p.name);
        EXPECT_TRUE(p.program_switch == nullptr || p.network_switch == nullptr);
        EXPECT_EQ(p.stage == PassStage::import, !p.program_switch && !p.network_switch);
        PassSet off_alone;
        off_alone.set(p.name, false);
        ProgramOptions po;
        NetworkOptions no;
        apply_passes(off_alone, &po, &no);
        for (const PassInfo& q : passes()) {
            const bool want = q.name != std::string(p.name);
            if (q.program_switch) {
                EXPECT_EQ(po.*q.program_switch, want) << q.name;
            }
            if (q.network_switch) {
                EXPECT_EQ(no.*q.network_switch, want) << q.name;
            }
        }
    }
    // The names the YAML aliases and the older options use.
    ProgramOptions po;
    NetworkOptions no;
    apply_passes(PassSet::none(), &po, &no);
    EXPECT_FALSE(po.fold_permutations || po.fold_channel_affine);
    EXPECT_FALSE(no.views || no.fusion || no.inplace_concat || no.fake_alignment || no.reorder_weights ||
                 no.memory_pool);
    apply_passes(PassSet::all(), &po, nullptr);
    EXPECT_TRUE(po.fold_permutations && po.fold_channel_affine);
    EXPECT_FALSE(no.fusion);   // a null stage is left alone
}

// ---- YAML and its overrides ---------------------------------------------------

TEST(PassYaml, RunPassesMapStringAndAliases_SetTheSet) {
    Pipeline p = load_text(std::string(kFcRelu) + "run: {passes: {fusion: false, views: false}}\n");
    EXPECT_FALSE(p.run.passes.on("fusion"));
    EXPECT_FALSE(p.run.passes.on("views"));
    EXPECT_TRUE(p.run.passes.on("memory_pool"));
    EXPECT_EQ(p.run.passes_source, "yaml");
    p = load_text(std::string(kFcRelu) + "run: {passes: \"none,+memory_pool\"}\n");
    EXPECT_EQ(p.run.passes.off().size(), passes().size() - 1);
    EXPECT_TRUE(p.run.passes.on("memory_pool"));
    // The older run.* switches are aliases of run.passes.<name>.
    p = load_text(std::string(kFcRelu) + "run: {fusion: false, inplace_concat: false}\n");
    EXPECT_FALSE(p.run.passes.on("fusion"));
    EXPECT_FALSE(p.run.passes.on("inplace_concat"));
    p = load_text(std::string(kFcRelu) + "run: {fusion: false, passes: {fusion: false}}\n");
    EXPECT_FALSE(p.run.passes.on("fusion"));
    p = load_text(kFcRelu);
    EXPECT_TRUE(p.run.passes.all_on());
    EXPECT_EQ(p.run.passes_source, "default");
}

TEST(PassYaml, UnknownPassOrConflictingAlias_IsALocatedError) {
    std::string e = error_of([] { load_text(std::string(kFcRelu) + "run: {passes: {fuson: false}}\n"); });
    EXPECT_NE(e.find("pipe.yaml:12:"), std::string::npos) << e;
    EXPECT_NE(e.find("unknown pass 'fuson'"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'fusion'"), std::string::npos) << e;
    e = error_of([] { load_text(std::string(kFcRelu) + "run: {fusion: true, passes: {fusion: false}}\n"); });
    EXPECT_NE(e.find("pipe.yaml:12:"), std::string::npos) << e;
    EXPECT_NE(e.find("disagrees with run.fusion"), std::string::npos) << e;
    e = error_of([] { load_text(std::string(kFcRelu) + "run: {passes: \"-views,-nope\"}\n"); });
    EXPECT_NE(e.find("unknown pass 'nope'"), std::string::npos) << e;
    e = error_of([] { load_text(std::string(kFcRelu) + "run: {passes: {fusion: maybe}}\n"); });
    EXPECT_NE(e.find("run.passes.fusion"), std::string::npos) << e;
}

// YAML, then DYNRT_PASSES, then --passes: each wins for the passes it names.
TEST(PassYaml, EnvOverridesYamlAndCliOverridesEnv) {
    const std::string yaml = std::string(kFcRelu) + "run: {passes: {fusion: false, memory_pool: false}}\n";
    Pipeline p = load_text(yaml, {std::string("+fusion,-views"), std::nullopt});
    EXPECT_TRUE(p.run.passes.on("fusion"));
    EXPECT_FALSE(p.run.passes.on("views"));
    EXPECT_FALSE(p.run.passes.on("memory_pool"));   // the env does not name it
    EXPECT_EQ(p.run.passes_source, "yaml+env");
    p = load_text(yaml, {std::string("+fusion,-views"), std::string("-fusion,+memory_pool")});
    EXPECT_FALSE(p.run.passes.on("fusion"));
    EXPECT_FALSE(p.run.passes.on("views"));
    EXPECT_TRUE(p.run.passes.on("memory_pool"));
    EXPECT_EQ(p.run.passes_source, "yaml+env+cli");
    p = load_text(kFcRelu, {std::nullopt, std::string("none")});
    EXPECT_EQ(p.run.passes_source, "cli");
    const std::string e = error_of([] { load_text(kFcRelu, {std::string("-bogus"), std::nullopt}); });
    EXPECT_NE(e.find("DYNRT_PASSES"), std::string::npos) << e;
    EXPECT_NE(e.find("unknown pass 'bogus'"), std::string::npos) << e;

    ::setenv("DYNRT_PASSES", "-fusion", 1);
    EXPECT_EQ(env_passes(), std::optional<std::string>("-fusion"));
    ::setenv("DYNRT_PASSES", "", 1);
    EXPECT_EQ(env_passes(), std::nullopt);
    ::unsetenv("DYNRT_PASSES");
    EXPECT_EQ(env_passes(), std::nullopt);
}

// ---- the passes acting in a run -------------------------------------------------

TEST(PassRun, FusionOff_RunsTheFusedPatternAsSeparateNodes) {
    const RunResult fused = run(load_text(kFcRelu));
    const RunResult apart = run(load_text(std::string(kFcRelu) + "run: {passes: {fusion: false}}\n"));
    ASSERT_EQ(fused.runs.size(), 3u);
    ASSERT_EQ(apart.runs.size(), 3u);
    EXPECT_EQ(fused.totals.fused_runs, 3u);
    EXPECT_EQ(apart.totals.fused_runs + apart.totals.unfused_runs, 0u);
    for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(node_stats(fused.runs[k], "act").impl, "fused");
        EXPECT_EQ(node_stats(fused.runs[k], "act").counters.executions, 0u);
        EXPECT_NE(node_stats(apart.runs[k], "act").impl, "fused");
        EXPECT_EQ(node_stats(apart.runs[k], "act").counters.executions, 1u);
        const HostTensor& a = fused.runs[k].outputs.at("act");
        const HostTensor& b = apart.runs[k].outputs.at("act");
        ASSERT_EQ(a.shape(), b.shape());
        for (size_t i = 0; i < a.count(); ++i) EXPECT_NEAR(a.as<float>()[i], b.as<float>()[i], 1e-5);
    }
    EXPECT_EQ(apart.totals.executions, fused.totals.executions + 3);
    EXPECT_FALSE(apart.passes.on("fusion"));
    EXPECT_EQ(apart.passes_source, "yaml");
}

TEST(PassRun, FoldPermutationsOff_KeepsTheTransposeNode) {
    const std::string yaml = R"(
inputs:
  a: {dtype: f32, shape: [2, 3]}
  b: {dtype: f32, shape: [4, 3]}
nodes:
  - {name: bt, op: transpose, inputs: [b], attrs: {perm: [1, 0]}}
  - {name: mm, op: gemm, inputs: [a, bt]}
outputs: [mm]
)";
    const Pipeline on = load_text(yaml);
    const Pipeline off = load_text(yaml + "run: {passes: \"-fold_permutations\"}\n");
    ASSERT_EQ(on.program->folded().size(), 1u);
    EXPECT_EQ(on.program->folded()[0].pass, "fold_permutations");
    EXPECT_TRUE(off.program->folded().empty());
    EXPECT_NO_THROW(off.program->node_index("bt"));
    EXPECT_FALSE(off.program->options().fold_permutations);
    const RunResult a = run(on), b = run(off);
    const HostTensor& x = a.runs[0].outputs.at("mm");
    const HostTensor& y = b.runs[0].outputs.at("mm");
    ASSERT_EQ(x.shape(), (Shape{2, 4}));
    for (size_t i = 0; i < x.count(); ++i) EXPECT_NEAR(x.as<float>()[i], y.as<float>()[i], 1e-5);
}

// ---- the CLI: --passes, DYNRT_PASSES, -v and the report ----------------------------

TEST(PassCli, EnvAndFlag_AreListedByVerboseAndInTheReport) {
    const fs::path dir = fs::temp_directory_path() / ("dynrt_passes_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string yaml = (dir / "fc.yaml").string(), report = (dir / "r.json").string();
    std::ofstream(yaml) << kFcRelu;
    Proc p = dynrt_cli("DYNRT_PASSES=-fusion", "run " + yaml + " --device cpu -v --report " + report);
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_NE(p.out.find("passes -fusion (set by: env)"), std::string::npos) << p.out;
    for (const PassInfo& info : passes()) EXPECT_NE(p.out.find(std::string("  ") + info.name), std::string::npos);
    std::stringstream json;
    json << std::ifstream(report).rdbuf();
    EXPECT_NE(json.str().find("\"passes\": {\"source\": \"env\", \"spec\": \"-fusion\", \"on\": {"), std::string::npos)
        << json.str();
    EXPECT_NE(json.str().find("\"fusion\": false"), std::string::npos);
    EXPECT_NE(json.str().find("\"fused_runs\": 0"), std::string::npos);

    p = dynrt_cli("DYNRT_PASSES=-fusion", "run " + yaml + " --device cpu --passes +fusion --report " + report);
    ASSERT_EQ(p.code, 0) << p.out;
    json.str({});
    json << std::ifstream(report).rdbuf();
    EXPECT_NE(json.str().find("\"source\": \"env+cli\", \"spec\": \"all\""), std::string::npos) << json.str();
    EXPECT_NE(json.str().find("\"fused_runs\": 3"), std::string::npos);

    p = dynrt_cli("DYNRT_PASSES=-fuson", "run " + yaml + " --device cpu");
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find("DYNRT_PASSES"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("unknown pass 'fuson'"), std::string::npos) << p.out;
    p = dynrt_cli("", "run " + yaml + " --device cpu --passes fusion=maybe");
    EXPECT_EQ(p.code, 2) << p.out;
    EXPECT_NE(p.out.find("--passes"), std::string::npos) << p.out;
    p = dynrt_cli("", "onnx-test " + yaml + " --passes -nope");
    EXPECT_EQ(p.code, 2) << p.out;
    EXPECT_NE(p.out.find("unknown pass 'nope'"), std::string::npos) << p.out;
    fs::remove_all(dir);
}

// ---- observing every node's value inside the run (the bisect tool's hook) --------

namespace {

struct Seen {
    HostTensor value;
    bool has_value = false;
    std::string absorbed;
    Layout layout;
};

std::map<std::string, Seen> observe(InferRequest& req) {
    std::map<std::string, Seen> seen;
    req.set_observer([&seen](const ObservedOutput& o) {
        Seen& s = seen[o.output == 0 ? o.name : o.name + ":" + std::to_string(o.output)];
        s.layout = o.layout;
        s.absorbed = o.absorbed;
        s.has_value = o.value != nullptr;
        if (o.value) s.value = *o.value;
    });
    req.infer();
    req.set_observer({});
    return seen;
}

}   // namespace

// Producers writing into an in-place concat (padded views of its buffer), a
// view (reshape) and buffers the pool hands on: each value is read right
// after its node, through its padding, and equals the hand computation.
TEST(PassObserver, ValuesAreReadThroughPaddingAndViewsRightAfterEachNode) {
    const Pipeline p = load_text(R"(
inputs:
  a: {dtype: f32, shape: [1, seq, 4]}
  b: {dtype: f32, shape: [1, 2, 4]}
constants:
  flat: {dtype: i64, values: [1, -1]}
nodes:
  - {name: ra, op: activation, inputs: [a], attrs: {func: relu}}
  - {name: nb, op: activation, inputs: [b], attrs: {func: abs}}
  - {name: cat, op: concat, inputs: [ra, nb], attrs: {axis: 1}}
  - {name: neg, op: activation, inputs: [cat], attrs: {func: neg}}
  - {name: row, op: reshape, inputs: [neg, flat]}
outputs: [row]
schedule:
  - {seq: 3}
)");
    NetworkOptions opts;
    opts.host_reference_only = true;   // the reference impls write into a padded concat target
    InferRequest req(Network::create(p.program, test::engine(), opts));
    for (int64_t seq : {3, 5, 2}) {
        SCOPED_TRACE("seq " + std::to_string(seq));
        const HostTensor a = test::random_tensor(DataType::f32, Shape{1, seq, 4}, 10 + seq, -1, 1);
        const HostTensor b = test::random_tensor(DataType::f32, Shape{1, 2, 4}, 20 + seq, -1, 1);
        req.set_input("a", a);
        req.set_input("b", b);
        const std::map<std::string, Seen> seen = observe(req);
        EXPECT_GT(req.last_run().totals.concat_inplace, 0u);   // the producers wrote into the concat
        EXPECT_GT(req.last_run().totals.views, 0u);            // the reshape viewed its input
        EXPECT_FALSE(seen.at("ra").layout.padding.empty());    // ... through a padded view
        const size_t na = a.count(), nb = b.count();
        ASSERT_EQ(seen.at("ra").value.shape(), a.shape());
        ASSERT_EQ(seen.at("nb").value.shape(), b.shape());
        ASSERT_EQ(seen.at("cat").value.count(), na + nb);
        ASSERT_EQ(seen.at("row").value.shape(), (Shape{1, static_cast<int64_t>(na + nb)}));
        for (size_t i = 0; i < na; ++i) {
            const float want = std::max(a.as<float>()[i], 0.0f);
            EXPECT_EQ(seen.at("ra").value.as<float>()[i], want);
            EXPECT_EQ(seen.at("cat").value.as<float>()[i], want);
            EXPECT_EQ(seen.at("row").value.as<float>()[i], -want);
        }
        for (size_t i = 0; i < nb; ++i) {
            const float want = std::abs(b.as<float>()[i]);
            EXPECT_EQ(seen.at("nb").value.as<float>()[i], want);
            EXPECT_EQ(seen.at("cat").value.as<float>()[na + i], want);
        }
        EXPECT_EQ(seen.at("a").value.as<float>()[0], a.as<float>()[0]);   // inputs are observed too
        EXPECT_EQ(seen.at("flat").value.to_int64(), (std::vector<int64_t>{1, -1}));
    }
}

// A fused producer holds its chain's result, not its own value: it is
// reported as absorbed by `fusion`; the chain's last node holds its own.
TEST(PassObserver, FusedProducer_IsReportedAbsorbedByFusion) {
    const Pipeline p = load_text(kFcRelu);
    for (const bool fusion : {true, false}) {
        SCOPED_TRACE(fusion ? "fusion on" : "fusion off");
        NetworkOptions opts;
        opts.fusion = fusion;
        InferRequest req(Network::create(p.program, test::engine(), opts));
        const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, -1, -2, -3});
        req.set_input("x", x);
        const std::map<std::string, Seen> seen = observe(req);
        const std::vector<float> fc = {1 - 4 + 1.5f, 2 + 9, -1 + 4 - 1.5f, -2 - 9};
        if (fusion) {
            EXPECT_FALSE(seen.at("fc").has_value);
            EXPECT_NE(seen.at("fc").absorbed.find("fusion: computed inside 'fc'"), std::string::npos)
                << seen.at("fc").absorbed;
        } else {
            EXPECT_TRUE(seen.at("fc").has_value);
            EXPECT_TRUE(seen.at("fc").absorbed.empty());
            for (size_t i = 0; i < fc.size(); ++i) EXPECT_NEAR(seen.at("fc").value.as<float>()[i], fc[i], 1e-5);
        }
        ASSERT_TRUE(seen.at("act").has_value);
        ASSERT_EQ(seen.at("act").value.count(), fc.size());
        for (size_t i = 0; i < fc.size(); ++i)
            EXPECT_NEAR(seen.at("act").value.as<float>()[i], std::max(fc[i], 0.0f), 1e-5);
    }
}
