// `dynrt plot`: reading a run report (docs/report.md, "JSON report") into
// plot::Report, each field checked for its type, errors naming the file and
// the field's path.
#include <cmath>

#include "dynrt/error.hpp"
#include "file_io.hpp"
#include "json_reader.hpp"
#include "plot.hpp"

namespace dynrt::plot {

namespace {

using tools::JsonValue;
using Type = JsonValue::Type;

std::string member(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string element(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Reads fields of one report, naming the file and the field's path in errors.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        ErrorContext c;
        c.file = file_;
        c.field = field;
        throw Error(what, c);
    }
    // The member `key` of `obj` (at `path`), of type `t`.
    const JsonValue& need(const JsonValue& obj, const std::string& key, Type t, const std::string& path) const {
        const JsonValue* v = maybe(obj, key, t, path);
        if (!v)
            fail(member(path, key),
                 "missing: not a dynrt run report, or not a whole one (`dynrt run ... --report FILE` writes one)");
        return *v;
    }
    // The same, or nullptr when it is absent.
    const JsonValue* maybe(const JsonValue& obj, const std::string& key, Type t, const std::string& path) const {
        const JsonValue* v = obj.find(key);
        if (v && !v->is(t)) fail(member(path, key), std::string("expected ") + an(t) + ", got " + an(v->type));
        return v;
    }
    double number(const JsonValue& obj, const std::string& key, const std::string& path) const {
        return need(obj, key, Type::number, path).number;
    }
    // A number >= 0 (times, bytes).
    double amount(const JsonValue& obj, const std::string& key, const std::string& path) const {
        const double v = number(obj, key, path);
        if (v < 0) fail(member(path, key), "expected a number >= 0, got " + std::to_string(v));
        return v;
    }
    size_t count(const JsonValue& obj, const std::string& key, const std::string& path) const {
        const double v = amount(obj, key, path);
        if (v != std::floor(v) || v > 9e15) fail(member(path, key), "expected a whole count, got " + std::to_string(v));
        return static_cast<size_t>(v);
    }
    std::string string(const JsonValue& obj, const std::string& key, const std::string& path) const {
        return need(obj, key, Type::string, path).string;
    }
    bool boolean(const JsonValue& obj, const std::string& key, const std::string& path) const {
        return need(obj, key, Type::boolean, path).boolean;
    }
    Figure figure(const JsonValue* obj, const std::string& key, const std::string& path) const {
        Figure f;
        if (obj && obj->find(key)) f.present = true, f.value = amount(*obj, key, path);
        return f;
    }
    // Every member of `obj` that is a number, in file order (others skipped).
    std::vector<std::pair<std::string, double>> numbers(const JsonValue& obj) const {
        std::vector<std::pair<std::string, double>> out;
        for (const auto& [k, v] : obj.object)
            if (v.is(Type::number)) out.emplace_back(k, v.number);
        return out;
    }

private:
    static std::string an(Type t) {
        return (t == Type::array || t == Type::object ? "an " : "a ") + std::string(tools::to_string(t));
    }
    std::string file_;
};

Latency latency(const Reader& in, const JsonValue& v, const std::string& path) {
    Latency l;
    l.count = in.count(v, "count", path);
    if (!l.count) return l;
    l.min = in.amount(v, "min_ms", path);
    l.p50 = in.amount(v, "p50_ms", path);
    l.p90 = in.amount(v, "p90_ms", path);
    l.p99 = in.amount(v, "p99_ms", path);
    l.max = in.amount(v, "max_ms", path);
    l.mean = in.amount(v, "mean_ms", path);
    return l;
}

void read_statistics(const Reader& in, const JsonValue& root, Report& r) {
    const std::string p = "statistics";
    const JsonValue& s = in.need(root, p, Type::object, "");
    r.warmup_runs = in.count(s, "warmup_runs", p);
    r.warmup_ms = in.amount(s, "warmup_ms", p);
    r.measured_runs = in.count(s, "measured_runs", p);
    r.measured_ms = in.amount(s, "measured_ms", p);
    r.runs_per_s = in.amount(s, "runs_per_s", p);
    r.tokens_per_s = in.figure(&s, "tokens_per_s", p);
    r.steady = latency(in, in.need(s, "steady", Type::object, p), member(p, "steady"));
    r.first_runs = latency(in, in.need(s, "first_runs", Type::object, p), member(p, "first_runs"));
    const JsonValue& shapes = in.need(s, "shapes", Type::array, p);
    for (size_t i = 0; i < shapes.array.size(); ++i) {
        const std::string at = element(member(p, "shapes"), i);
        const JsonValue& v = shapes.array[i];
        if (!v.is(Type::object)) in.fail(at, "expected an object");
        ShapeRow row;
        row.shapes = in.string(v, "shapes", at);
        row.first_ms = in.amount(v, "first_ms", at);
        row.first_in_warmup = in.boolean(v, "first_in_warmup", at);
        row.measured_runs = in.count(v, "measured_runs", at);
        row.steady = latency(in, in.need(v, "steady", Type::object, at), member(at, "steady"));
        r.shapes.push_back(std::move(row));
    }
}

// runs[i].shapes: {"x": [1, 3, 8, 8]}; the key as the statistics write it.
void read_shapes(const Reader& in, const JsonValue& run, const std::string& at, RunPoint& p) {
    const JsonValue& shapes = in.need(run, "shapes", Type::object, at);
    for (const auto& [name, dims] : shapes.object) {
        const std::string field = member(member(at, "shapes"), name);
        if (!dims.is(Type::array)) in.fail(field, "expected an array of dims");
        std::vector<int64_t> d;
        std::string text;
        for (const JsonValue& v : dims.array) {
            if (!v.is(Type::number) || v.number != std::floor(v.number) || std::fabs(v.number) > 9e15)
                in.fail(field, "expected whole numbers as dims");
            d.push_back(static_cast<int64_t>(v.number));
            text += (text.empty() ? "" : ",") + std::to_string(d.back());
        }
        p.shapes_key += (p.shapes_key.empty() ? "" : " ") + name + "[" + text + "]";
        p.shapes.emplace_back(name, std::move(d));
    }
}

RunPoint read_run(const Reader& in, const JsonValue& run, const std::string& at) {
    if (!run.is(Type::object)) in.fail(at, "expected an object");
    RunPoint p;
    p.index = in.count(run, "index", at);
    const JsonValue* label = in.maybe(run, "label", Type::string, at);
    if (label) p.label = label->string;
    p.warmup = in.boolean(run, "warmup", at);
    p.first_at_shape = in.boolean(run, "first_at_shape", at);
    read_shapes(in, run, at, p);
    p.host_ms = in.amount(run, "host_ms", at);
    p.submit_ms = in.figure(&run, "submit_ms", at);
    const JsonValue* c = in.maybe(run, "counters", Type::object, at);
    const std::string cp = member(at, "counters");
    p.allocations = in.figure(c, "allocations", cp);
    p.device_allocations = in.figure(c, "pool_misses", cp);
    p.bytes_allocated = in.figure(c, "bytes_allocated", cp);
    p.peak_bytes = in.figure(&run, "peak_bytes", at);
    p.used_bytes = in.figure(&run, "used_bytes", at);
    p.pool_bytes = in.figure(&run, "pool_bytes", at);
    p.pool_peak_bytes = in.figure(&run, "pool_peak_bytes", at);
    p.tensor_bytes = in.figure(&run, "tensor_bytes", at);
    return p;
}

ProfileGroup read_group(const Reader& in, const JsonValue& profile, const std::string& key) {
    const std::string p = member("profile", key);
    const JsonValue& g = in.need(profile, key, Type::object, "profile");
    ProfileGroup out;
    out.runs = in.amount(g, "runs", p);
    out.wall_ms = in.amount(g, "wall_ms", p);
    out.device_ms = in.amount(g, "device_ms", p);
    out.unaccounted_ms = in.amount(g, "unaccounted_ms", p);
    out.steps_ms = in.numbers(in.need(g, "steps_ms", Type::object, p));
    for (const auto& [k, v] : in.numbers(in.need(g, "outside_nodes_ms", Type::object, p))) out.outside_ms += v;
    const JsonValue& nodes = in.need(g, "nodes", Type::array, p);
    for (size_t i = 0; i < nodes.array.size(); ++i) {
        const JsonValue& n = nodes.array[i];
        const std::string at = element(member(p, "nodes"), i);
        if (!n.is(Type::object)) in.fail(at, "expected an object");
        ProfileNode node{in.string(n, "node", at),
                         in.string(n, "op", at),
                         in.string(n, "impl", at),
                         in.amount(n, "total_ms", at),
                         in.figure(&n, "device_ms", at).value,
                         in.numbers(in.need(n, "steps_ms", Type::object, at))};
        out.nodes.push_back(std::move(node));
    }
    const JsonValue& ops = in.need(g, "ops", Type::array, p);
    for (size_t i = 0; i < ops.array.size(); ++i) {
        const std::string at = element(member(p, "ops"), i);
        if (!ops.array[i].is(Type::object)) in.fail(at, "expected an object");
        out.ops.push_back({in.string(ops.array[i], "op", at), in.amount(ops.array[i], "nodes", at),
                           in.amount(ops.array[i], "total_ms", at)});
    }
    return out;
}

void read_summary(const Reader& in, const JsonValue& root, Report& r) {
    r.pipeline = in.string(root, "pipeline", "");
    r.file = in.string(root, "file", "");
    r.device = in.string(root, "device", "");
    const JsonValue* name = in.maybe(root, "device_name", Type::string, "");
    if (name) r.device_name = name->string;
    r.load_ms = in.figure(&root, "load_ms", "").value;
    r.compile_ms = in.figure(&root, "compile_ms", "").value;
    r.first_run_ms = in.figure(&root, "first_run_ms", "").value;
    if (const JsonValue* f = in.maybe(root, "host_fallback", Type::array, ""))
        for (const JsonValue& v : f->array)
            if (v.is(Type::string)) r.host_fallback.push_back(v.string);
    if (const JsonValue* passes = in.maybe(root, "passes", Type::object, ""))
        if (const JsonValue* spec = in.maybe(*passes, "spec", Type::string, "passes")) r.passes_spec = spec->string;
    if (const JsonValue* pre = in.maybe(root, "prealloc", Type::object, ""))
        if (const JsonValue* src = in.maybe(*pre, "source", Type::string, "prealloc")) r.prealloc_source = src->string;
    r.report_level = in.string(root, "report_level", "");
    if (r.report_level != "summary" && r.report_level != "runs" && r.report_level != "nodes")
        in.fail("report_level", "expected summary, runs or nodes, got '" + r.report_level + "'");
    read_statistics(in, root, r);
    r.totals = in.numbers(in.need(root, "totals", Type::object, ""));
    if (const JsonValue* e = in.maybe(root, "engine", Type::object, "")) r.engine = in.numbers(*e);
}

}   // namespace

Report parse_report(const std::string& text, const std::string& path) {
    JsonValue root;
    try {
        root = tools::parse_json(text);
    } catch (const tools::JsonSyntaxError& e) {
        throw Error(std::string(e.what()) + " (a dynrt run report is JSON)", tools::in_file(path));
    }
    const Reader in(path);
    if (!root.is(Type::object))
        throw Error(std::string("not a dynrt run report: the JSON is ") + (root.is(Type::array) ? "an " : "a ") +
                        tools::to_string(root.type) + ", not an object",
                    tools::in_file(path));
    Report r;
    r.path = path;
    read_summary(in, root, r);
    const bool runs_level = r.report_level != "summary";
    const JsonValue* runs =
        runs_level ? &in.need(root, "runs", Type::array, "") : in.maybe(root, "runs", Type::array, "");
    r.has_runs = runs != nullptr;
    for (size_t i = 0; runs && i < runs->array.size(); ++i)
        r.runs.push_back(read_run(in, runs->array[i], element("runs", i)));
    if (const JsonValue* profile = in.maybe(root, "profile", Type::object, "")) {
        r.has_profile = true;
        r.profile.device_clock = in.boolean(*profile, "device_clock", "profile");
        r.profile.steady = read_group(in, *profile, "steady");
        r.profile.first_at_shape = read_group(in, *profile, "first_at_shape");
    }
    return r;
}

Report read_report(const std::string& path) {
    std::string text;
    try {
        text = tools::read_file_capped(path, kMaxReportBytes, "report file");
    } catch (const Error& e) {
        if (e.message().find("more than the limit") == std::string::npos) throw;
        throw Error(e.message() +
                        "; the plot does not read runs[].nodes: a report written at --report-level runs "
                        "is smaller",
                    e.context());
    }
    return parse_report(text, path);
}

}   // namespace dynrt::plot
