// `dynrt plot`: reports written by real `dynrt run`s of configs/conv_net.yaml
// (batch and size change between runs) at each report level, with and without
// --profile, drawn as a page; each chart's marks counted against the report
// (one per run, per shape, per top node); what a report lacks said on the
// page; bad inputs and destinations; the axes and grouping the charts use; and
// the page drawn by headless Chromium, whose measurements of the SVG are read
// back (skipped without Chromium unless DYNRT_REQUIRE_CHROMIUM=1).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "charts.hpp"
#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "json_writer.hpp"
#include "plot.hpp"
#include "svg.hpp"

namespace fs = std::filesystem;
using dynrt::test::JsonValue;

namespace {

const std::string kConvNet = std::string(DYNRT_SOURCE_DIR) + "/configs/conv_net.yaml";

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// The <svg id="ID"> element of a page ("" when there is none).
std::string chart(const std::string& html, const std::string& id) {
    const size_t at = html.find("<svg id=\"" + id + "\"");
    if (at == std::string::npos) return "";
    return html.substr(at, html.find("</svg>", at) + 6 - at);
}

// Between `open` and the next `close` in `text`.
std::string part(const std::string& text, const std::string& open, const std::string& close) {
    const size_t at = text.find(open);
    if (at == std::string::npos) return "";
    return text.substr(at, text.find(close, at) - at);
}

// Writes a report of conv_net at `level` (and `extra` options) into `dir`.
std::string make_report(const dynrt::test::ScratchDir& dir, const std::string& level, const std::string& extra = "") {
    std::string path = dir / ("report_" + level + ".json");
    const auto r = dynrt::test::run_dynrt("run " + kConvNet + " --device cpu --report " + path + " --report-level " +
                                          level + " " + extra);
    EXPECT_EQ(r.code, 0) << r.out;
    return path;
}

// `dynrt plot REPORT -o HTML`, the page's text.
std::string plot_page(const std::string& report, const std::string& html) {
    const auto r = dynrt::test::run_dynrt("plot " + report + " -o " + html);
    EXPECT_EQ(r.code, 0) << r.out;
    return dynrt::test::read_text(html);
}

// What a page must never hold: scripts, fetched resources, external links.
void expect_self_contained(const std::string& html) {
    EXPECT_EQ(count(html, "<script"), 0u);
    EXPECT_EQ(count(html, "src="), 0u);
    EXPECT_EQ(count(html, "@import"), 0u);
    EXPECT_EQ(count(html, "url("), 0u);
    EXPECT_EQ(count(html, "href=\"http"), 0u);
    EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\"")) << "only SVG's namespace";
}

TEST(PlotCli, RunsLevel_OneMarkPerRunWithTheShapesAndTheirChanges) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string report = make_report(dir, "runs", "--warmup 2");
    const std::string html = plot_page(report, dir / "page.html");
    const JsonValue doc = dynrt::test::parse_json(dynrt::test::read_text(report));
    const auto& runs = doc.find("runs")->array;
    ASSERT_EQ(runs.size(), 20u) << "18 schedule runs and 2 warm-up runs";
    size_t firsts = 0, warmups = 0, changes = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
        firsts += runs[i].find("first_at_shape")->boolean;
        warmups += runs[i].find("warmup")->boolean;
        if (i)
            changes += dynrt::plot::parse_report(dynrt::test::read_text(report), report).runs[i].shapes_key !=
                       dynrt::plot::parse_report(dynrt::test::read_text(report), report).runs[i - 1].shapes_key;
    }
    const std::string latency = chart(html, "latency");
    ASSERT_NE(latency, "");
    EXPECT_EQ(count(latency, "class=\"mark pt "), runs.size());
    EXPECT_EQ(count(latency, "class=\"mark pt first"), firsts);
    EXPECT_EQ(count(latency, "class=\"mark pt steady warmup\"") + count(latency, "class=\"mark pt first warmup\""),
              warmups);
    EXPECT_GT(changes, 10u);
    EXPECT_EQ(count(part(latency, "<g class=\"shape-changes\">", "</g>"), "class=\"shape-change\""), changes);
    EXPECT_NE(latency.find(std::to_string(changes) + " shape changes"), std::string::npos);
    // Every shape is named in the runs' tooltips, and the dims that change
    // have a band named by their schedule symbol.
    for (const JsonValue& s : doc.find("statistics")->find("shapes")->array)
        EXPECT_NE(latency.find("\n" + s.find("shapes")->string + "\n"), std::string::npos) << s.find("shapes")->string;
    EXPECT_NE(latency.find(">batch 1..4</text>"), std::string::npos);
    EXPECT_NE(latency.find(">size 8..32</text>"), std::string::npos);
    EXPECT_NE(latency.find(">x[2], x[3]</text>"), std::string::npos) << "two dims with the same values share a band";
    EXPECT_EQ(count(chart(html, "allocations"), "class=\"mark alloc\""), runs.size());
    EXPECT_EQ(count(chart(html, "memory"), "class=\"hover\""), runs.size());
    EXPECT_EQ(count(chart(html, "memory"), "class=\"mark series "), 4u) << "peak, pool, tensors, in use";
    EXPECT_EQ(html.find("id=\"missing-runs\""), std::string::npos);
    EXPECT_NE(html.find("id=\"missing-profile\""), std::string::npos);
    for (const char* section : {"runs", "memory", "profile", "statistics", "totals"}) {
        EXPECT_NE(html.find(std::string("href=\"#") + section + "\""), std::string::npos) << section;
        EXPECT_NE(html.find(std::string("id=\"") + section + "\""), std::string::npos) << section;
    }
    expect_self_contained(html);
}

TEST(PlotCli, NodesLevelWithProfile_DrawsTheTopNodesAndOpTypes) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string report = make_report(dir, "nodes", "--profile");
    const std::string html = plot_page(report, dir / "page.html");
    const JsonValue doc = dynrt::test::parse_json(dynrt::test::read_text(report));
    const JsonValue* steady = doc.find("profile")->find("steady");
    ASSERT_GT(steady->find("runs")->number, 0);
    const auto& nodes = steady->find("nodes")->array;
    ASSERT_GE(nodes.size(), 3u);
    const std::string drawn = chart(html, "nodes");
    EXPECT_EQ(count(drawn, "class=\"mark node\""), std::min(nodes.size(), dynrt::plot::kTopNodes));
    for (size_t i = 0; i < nodes.size() && i < dynrt::plot::kTopNodes; ++i) {
        const std::string name = nodes[i].find("node")->string;
        EXPECT_NE(drawn.find("<title>" + name + " (" + nodes[i].find("op")->string), std::string::npos) << name;
    }
    EXPECT_NE(drawn.find("class=\"step-execute\""), std::string::npos);
    size_t ops = 0;
    for (const JsonValue& o : steady->find("ops")->array) ops += o.find("total_ms")->number > 0;
    EXPECT_EQ(count(chart(html, "ops"), "class=\"mark op\""), ops);
    EXPECT_NE(html.find("<table id=\"steps\">"), std::string::npos);
    EXPECT_EQ(html.find("id=\"missing-profile\""), std::string::npos);
    EXPECT_EQ(count(chart(html, "latency"), "class=\"mark pt "), doc.find("runs")->array.size());
    expect_self_contained(html);
}

TEST(PlotCli, SummaryLevel_SaysWhatIsMissingAndWhichOptionAddsIt) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string report = make_report(dir, "summary");
    const std::string html = plot_page(report, dir / "page.html");
    EXPECT_EQ(chart(html, "latency"), "");
    EXPECT_EQ(chart(html, "memory"), "");
    EXPECT_EQ(chart(html, "nodes"), "");
    EXPECT_EQ(html.find("href=\"#memory\""), std::string::npos) << "no link to a section the page lacks";
    const std::string runs_note = part(html, "id=\"missing-runs\"", "</p>");
    EXPECT_NE(runs_note.find("--report-level runs"), std::string::npos) << runs_note;
    EXPECT_NE(runs_note.find("summary"), std::string::npos) << runs_note;
    EXPECT_NE(part(html, "id=\"missing-profile\"", "</p>").find("--profile"), std::string::npos);
    // What a summary has: the statistics per shape, as a chart and a table.
    const JsonValue doc = dynrt::test::parse_json(dynrt::test::read_text(report));
    const auto& shapes = doc.find("statistics")->find("shapes")->array;
    ASSERT_EQ(shapes.size(), 15u);
    EXPECT_EQ(count(chart(html, "shapes"), "class=\"mark shape\""), shapes.size());
    const std::string table = part(html, "<table id=\"statistics-table\">", "</table>");
    EXPECT_EQ(count(table, "<tr class=\"shape\">"), shapes.size());
    for (const JsonValue& s : shapes)
        EXPECT_NE(table.find("<td>" + s.find("shapes")->string + "</td>"), std::string::npos);
    EXPECT_NE(table.find("every shape"), std::string::npos);
    expect_self_contained(html);
}

#if defined(DYNRT_HAVE_ONNX)
TEST(PlotCli, OnnxModelRun_BandsAreNamedByTheModelsDims) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string report = dir / "model.json";
    const auto run = dynrt::test::run_dynrt("run " + std::string(DYNRT_SOURCE_DIR) +
                                            "/tests/models/cnn/model.onnx --device cpu --shapes "
                                            "'batch=1;height=32;width=32' --shapes 'batch=2;height=16;width=24' "
                                            "--shapes 'batch=1;height=32;width=32' --report " +
                                            report);
    ASSERT_EQ(run.code, 0) << run.out;
    const std::string latency = chart(plot_page(report, dir / "page.html"), "latency");
    EXPECT_EQ(count(latency, "class=\"mark pt "), 3u);
    EXPECT_EQ(count(latency, "class=\"mark pt first"), 2u);
    EXPECT_NE(latency.find("2 shape changes"), std::string::npos);
    for (const char* name : {">batch 1..2</text>", ">image[0]</text>", ">height 16..32</text>", ">image[2]</text>",
                             ">width 24..32</text>", ">image[3]</text>", "\nimage[2,3,16,24]\n"})
        EXPECT_NE(latency.find(name), std::string::npos) << name;
}
#endif

TEST(PlotCli, Help_AndTheCommandList) {
    const auto help = dynrt::test::run_dynrt("plot --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.out.find("usage: dynrt plot REPORT.json -o OUT.html"), std::string::npos) << help.out;
    const auto list = dynrt::test::run_dynrt("--help");
    EXPECT_NE(list.out.find("  plot REPORT.json"), std::string::npos) << list.out;
}

// ---- bad inputs and destinations --------------------------------------------------

std::string write(const dynrt::test::ScratchDir& dir, const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
}

// Replaces the first `from` in `text` (which must hold it).
std::string edit(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(PlotCli, BadReports_ExitOneNamingTheFileAndField) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string good = dynrt::test::read_text(make_report(dir, "runs"));
    const std::string out = dir / "page.html";
    write(dir, "page.html", "the page before");
    fs::create_directories(dir / "folder");
    struct Case {
        std::string file, says;
    };
    const std::vector<Case> cases = {
        {dir / "missing.json", "cannot open report file"},
        {dir / "folder", "not a regular file"},
        {write(dir, "text.json", "pipeline: x\n"), "not JSON at line 1, column 1"},
        {write(dir, "cut.json", good.substr(0, good.size() / 2)), "not JSON at line"},
        {write(dir, "array.json", "[1, 2]"), "not a dynrt run report: the JSON is an array"},
        {write(dir, "other.json", "{\"traceEvents\": []}"), "field 'pipeline': missing: not a dynrt run report"},
        {write(dir, "level.json", edit(good, "\"report_level\": \"runs\"", "\"report_level\": \"all\"")),
         "field 'report_level': expected summary, runs or nodes, got 'all'"},
        {write(dir, "stats.json", edit(good, "\"statistics\":", "\"statistix\":")), "field 'statistics': missing"},
        {write(dir, "runs.json", edit(good, "\"runs\": [", "\"runz\": [")), "field 'runs': missing"},
        {write(dir, "ms.json", edit(good, "\"host_ms\": ", "\"host_ms\": \"fast\", \"x\": ")),
         "field 'runs[0].host_ms': expected a number, got a string"},
        {write(dir, "dims.json", edit(good, "\"x\": [1, 3, 8, 8]", "\"x\": [1, 3, 8.5, 8]")),
         "field 'runs[0].shapes.x': expected whole numbers as dims"},
        {write(dir, "negative.json", edit(good, "\"measured_runs\": ", "\"measured_runs\": -")),
         "field 'statistics.measured_runs': expected a number >= 0"},
    };
    for (const Case& c : cases) {
        const auto r = dynrt::test::run_dynrt("plot " + c.file + " -o " + out);
        EXPECT_EQ(r.code, 1) << c.file << ": " << r.out;
        EXPECT_NE(r.out.find(c.file + ": "), std::string::npos) << "names the file: " << r.out;
        EXPECT_NE(r.out.find(c.says), std::string::npos) << c.says << "\n" << r.out;
        EXPECT_EQ(dynrt::test::read_text(out), "the page before") << c.file;
    }
    // Nothing left behind: no temporary file next to the page.
    for (const auto& e : fs::directory_iterator(dir.path()))
        EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST(PlotCli, BadCommandLinesAndDestinations) {
    dynrt::test::ScratchDir dir("dynrt_plot_test");
    const std::string report = make_report(dir, "summary");
    for (const std::string& args : {std::string("plot"), "plot " + report, "plot -o " + dir / "p.html",
                                    "plot " + report + " -o " + dir / "p.html --bogus"}) {
        const auto r = dynrt::test::run_dynrt(args);
        EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    }
    EXPECT_NE(dynrt::test::run_dynrt("plot " + report).out.find("missing -o OUT.html"), std::string::npos);
    fs::create_directories(dir / "folder");
    for (const std::string& target : {dir / "no/such/folder/p.html", dir / "folder"}) {
        const auto r = dynrt::test::run_dynrt("plot " + report + " -o " + target);
        EXPECT_EQ(r.code, 1) << target << ": " << r.out;
        EXPECT_NE(r.out.find("--output"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(target), std::string::npos) << r.out;
    }
    EXPECT_TRUE(fs::is_directory(dir / "folder")) << "left as it was";
    // Writes replace a page whole.
    write(dir, "p.html", "old");
    ASSERT_EQ(dynrt::test::run_dynrt("plot " + report + " -o " + dir / "p.html").code, 0);
    EXPECT_EQ(dynrt::test::read_text(dir / "p.html").rfind("<!DOCTYPE html>", 0), 0u);
}

// ---- the library: big reports, escaping, axes ------------------------------------

// A report of `n` runs whose shapes change every `every` runs.
std::string synthetic_report(size_t n, size_t every, const std::string& name = "synthetic") {
    dynrt::tools::JsonWriter j;
    j.begin_object().field("pipeline", name).field("file", "s.yaml").field("device", "cpu");
    j.field("report_level", "runs").key("statistics").begin_object();
    j.field("warmup_runs", 0).field("warmup_ms", 0.0).field("measured_runs", static_cast<uint64_t>(n));
    j.field("measured_ms", 1.0).field("runs_per_s", 1.0);
    j.key("steady").begin_object().field("count", 0).end_object();
    j.key("first_runs").begin_object().field("count", 0).end_object();
    j.key("shapes").begin_array().end_array().end_object();
    j.key("runs").begin_array();
    for (size_t i = 0; i < n; ++i) {
        const int64_t seq = 1 + static_cast<int64_t>(i / every);
        j.begin_object().field("index", static_cast<uint64_t>(i)).field("label", "seq=" + std::to_string(seq));
        j.field("warmup", false).field("first_at_shape", i % every == 0);
        j.key("shapes").begin_object().key("x").begin_array().value(1).value(seq).end_array().end_object();
        j.field("host_ms", 0.5 + static_cast<double>(i % 7)).field("peak_bytes", 1024.0 * static_cast<double>(seq));
        j.end_object();
    }
    j.end_array().key("totals").begin_object().field("runs", static_cast<uint64_t>(n)).end_object();
    return j.end_object().str();
}

TEST(PlotPage, ManyRuns_ShareMarksAndEveryRunIsUnderOne) {
    const dynrt::plot::Report r = dynrt::plot::parse_report(synthetic_report(5000, 2), "big.json");
    ASSERT_EQ(r.runs.size(), 5000u);
    const std::string html = dynrt::plot::render_html(r);
    const std::string latency = chart(html, "latency");
    EXPECT_EQ(count(latency, "class=\"mark range"), dynrt::plot::kMaxRunMarks);
    EXPECT_EQ(count(latency, "class=\"mark pt "), 0u);
    EXPECT_NE(latency.find("2499 shape changes (too many to draw)"), std::string::npos);
    EXPECT_EQ(count(part(latency, "<g class=\"shape-changes\">", "</g>"), "<line"), 0u);
    EXPECT_EQ(count(chart(html, "memory"), "class=\"hover\""), dynrt::plot::kMaxRunMarks);
    EXPECT_EQ(chart(html, "allocations"), "") << "the runs have no counters";
    // Up to the limit, one mark per run.
    const std::string small =
        chart(dynrt::plot::render_html(dynrt::plot::parse_report(synthetic_report(50, 10), "s.json")), "latency");
    EXPECT_EQ(count(small, "class=\"mark pt "), 50u);
    EXPECT_EQ(count(small, "class=\"mark pt first"), 5u);
    EXPECT_EQ(count(part(small, "<g class=\"shape-changes\">", "</g>"), "<line"), 4u);
    EXPECT_NE(small.find(">seq 1..5</text>"), std::string::npos) << "the band named by the label's symbol";
}

TEST(PlotPage, TextFromTheReport_IsEscaped) {
    const std::string html = dynrt::plot::render_html(
        dynrt::plot::parse_report(synthetic_report(3, 1, "<script>alert(\"&'\")</script>"), "r.json"));
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(&quot;&amp;&#39;&quot;)&lt;/script&gt;"), std::string::npos);
}

TEST(PlotGroups, EveryRunIsInExactlyOneGroupInOrder) {
    for (const size_t runs : {1, 7, 2000, 2001, 4999, 100000}) {
        const auto groups = dynrt::plot::group_runs(runs, 2000);
        ASSERT_EQ(groups.size(), std::min<size_t>(runs, 2000)) << runs;
        EXPECT_EQ(groups.front().first, 0u);
        EXPECT_EQ(groups.back().last, runs - 1);
        for (size_t g = 1; g < groups.size(); ++g) EXPECT_EQ(groups[g].first, groups[g - 1].last + 1) << runs;
    }
}

TEST(PlotAxes, TicksAreRoundAndInside) {
    const dynrt::plot::Axis linear = dynrt::plot::value_axis({0.3, 4.2, 1.0}, 30, 100, 0);
    EXPECT_FALSE(linear.log);
    EXPECT_EQ(linear.lo, 0);
    EXPECT_EQ(linear.hi, 5);
    EXPECT_EQ(linear.ticks(5), (std::vector<double>{0, 1, 2, 3, 4, 5}));
    EXPECT_DOUBLE_EQ(linear.at(0), 100);
    EXPECT_DOUBLE_EQ(linear.at(5), 0);
    const dynrt::plot::Axis log = dynrt::plot::value_axis({0.04, 4.5, 0.1}, 30, 0, 300);
    EXPECT_TRUE(log.log) << "a 112x span";
    EXPECT_DOUBLE_EQ(log.lo, 0.01);
    EXPECT_DOUBLE_EQ(log.hi, 10);
    EXPECT_EQ(log.ticks(5).size(), 4u) << "0.01 0.1 1 10";
    EXPECT_DOUBLE_EQ(log.at(1), 200);
    const dynrt::plot::Axis bytes = dynrt::plot::bytes_axis({7136, 390000}, 0, 1);
    std::vector<std::string> labels;
    for (const double t : bytes.ticks(5)) labels.push_back(dynrt::plot::bytes_text(t));
    EXPECT_EQ(labels, (std::vector<std::string>{"0 B", "100 KiB", "200 KiB", "300 KiB", "400 KiB"}));
    EXPECT_EQ(dynrt::plot::tick_text(0.1 + 0.2), "0.3");
    EXPECT_EQ(dynrt::plot::ms_text(0.0438012), "0.0438");
}

// ---- rendered by a browser -------------------------------------------------------------

// The output of `command` (stdout only) and its exit code.
std::pair<int, std::string> shell(const std::string& command) {
    std::string out;
    FILE* f = ::popen(command.c_str(), "r");
    if (!f) return {-1, out};
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int status = ::pclose(f);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string chromium_binary() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
        const auto [code, path] = shell(std::string("command -v ") + name + " 2>/dev/null");
        if (code == 0 && !path.empty()) return path.substr(0, path.find('\n'));
    }
    return "";
}

// Appended to a copy of the page: per chart, its marks counted, those drawn
// with a size, and the box around them (SVG units), written into the DOM.
const char* const kMeasure = R"(<script>
const lines = [];
for (const svg of document.querySelectorAll('svg.chart')) {
  const g = svg.querySelector('g.marks');
  const marks = svg.querySelectorAll('g.marks .mark');
  let drawn = 0;
  for (const m of marks) { const b = m.getBBox(); if (b.width > 0 || b.height > 0) ++drawn; }
  const b = g ? g.getBBox() : {x: 0, y: 0, width: 0, height: 0};
  const view = svg.viewBox.baseVal;
  const inside = b.x >= 0 && b.y >= 0 && b.x + b.width <= view.width + 0.5 && b.y + b.height <= view.height + 0.5;
  lines.push(svg.id + ' marks=' + marks.length + ' drawn=' + drawn + ' w=' + Math.round(b.width) + ' h=' +
             Math.round(b.height) + ' inside=' + (inside ? 1 : 0) + ' px=' + Math.round(svg.getBoundingClientRect().width));
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = '\n' + lines.join('\n') + '\n';
document.body.appendChild(pre);
</script>)";

// Per chart: marks, drawn, w, h, inside, px.
using Measured = std::map<std::string, double>;

// The measurements of each chart of `html`, drawn by `chromium`.
std::map<std::string, Measured> measure(const std::string& chromium, const dynrt::test::ScratchDir& dir,
                                        const std::string& html, const std::string& name) {
    const std::string page = dir / (name + ".html");
    std::ofstream(page, std::ios::binary) << html.substr(0, html.rfind("</body>")) << kMeasure << "</body></html>\n";
    const auto [code, dom] = shell("timeout 120 " + chromium +
                                   " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
                                   "--window-size=1100,900 --user-data-dir=" +
                                   dir / ("profile-" + name) + " --dump-dom file://" + page + " 2>/dev/null");
    EXPECT_EQ(code, 0) << "chromium failed on " << page;
    const std::string text = part(dom, "<pre id=\"measured\">", "</pre>");
    EXPECT_NE(text, "") << "no measurements in the DOM:\n" << dom.substr(0, 2000);
    std::map<std::string, Measured> out;
    std::istringstream lines(text.substr(text.find('>') + 1));
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string id, word;
        if (!(words >> id)) continue;
        while (words >> word) {
            const size_t eq = word.find('=');
            if (eq != std::string::npos) out[id][word.substr(0, eq)] = std::stod(word.substr(eq + 1));
        }
    }
    return out;
}

TEST(PlotBrowser, PagesRenderInHeadlessChromium) {
    const std::string chromium = chromium_binary();
    const char* required = std::getenv("DYNRT_REQUIRE_CHROMIUM");
    if (chromium.empty()) {
        if (required && std::string(required) == "1") FAIL() << "DYNRT_REQUIRE_CHROMIUM=1 and no chromium on PATH";
        GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
    }
    dynrt::test::ScratchDir dir("dynrt_plot_browser");
    const std::string report = make_report(dir, "nodes", "--profile --warmup 2");
    const dynrt::plot::Report r = dynrt::plot::read_report(report);
    const auto charts = measure(chromium, dir, dynrt::plot::render_html(r), "nodes");
    const size_t nodes = std::min(r.profile.steady.nodes.size(), dynrt::plot::kTopNodes);
    size_t ops = 0;
    for (const auto& o : r.profile.steady.ops) ops += o.total_ms > 0;
    size_t allocating = 0;   // a run without allocations has a bar of no height
    for (const auto& run : r.runs) allocating += run.allocations.value > 0;
    ASSERT_GT(allocating, 0u);
    // Per chart: its marks, and those drawn with a size.
    const std::map<std::string, std::pair<size_t, size_t>> want = {{"latency", {r.runs.size(), r.runs.size()}},
                                                                   {"allocations", {r.runs.size(), allocating}},
                                                                   {"memory", {4, 4}},
                                                                   {"nodes", {nodes, nodes}},
                                                                   {"ops", {ops, ops}},
                                                                   {"shapes", {r.shapes.size(), r.shapes.size()}}};
    ASSERT_EQ(charts.size(), want.size());
    for (const auto& [id, marks] : want) {
        ASSERT_TRUE(charts.count(id)) << id;
        Measured m = charts.at(id);
        EXPECT_EQ(m["marks"], static_cast<double>(marks.first)) << id;
        EXPECT_EQ(m["drawn"], static_cast<double>(marks.second)) << id << ": the marks have a size";
        EXPECT_GT(m["w"], 100) << id;
        EXPECT_GT(m["h"], 10) << id;
        EXPECT_EQ(m["inside"], 1) << id << ": the marks lie inside the chart";
        EXPECT_GT(m["px"], 500) << id << ": the chart is laid out on the page";
    }
    // A summary report: only the statistics per shape are drawn.
    const auto summary =
        measure(chromium, dir, dynrt::plot::render_html(dynrt::plot::read_report(make_report(dir, "summary"))), "sum");
    ASSERT_EQ(summary.size(), 1u);
    Measured shapes = summary.at("shapes");
    EXPECT_EQ(shapes["marks"], static_cast<double>(r.shapes.size()));
    EXPECT_EQ(shapes["drawn"], static_cast<double>(r.shapes.size()));
}

}   // namespace
