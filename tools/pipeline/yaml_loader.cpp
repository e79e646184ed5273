// YAML pipeline -> Program (docs/yaml.md). Every check that can point at a YAML
// node is done here with that node's line:column; the rest (cycles, attribute
// defaults, shape inference) is left to Program::build(), which reports through
// the ErrorContext each node was added with.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "file_io.hpp"
#include "int_range.hpp"
#include "yaml_util.hpp"

// yaml-cpp 0.7 and later stop deep recursion with DeepRecursion; with older
// ones check_tree() is the only depth check.
#if __has_include(<yaml-cpp/depthguard.h>)
#include <yaml-cpp/depthguard.h>
#define DYNRT_YAML_DEPTHGUARD 1
#endif

namespace dynrt::pipeline {

using detail::Source;

PartialShape InputSpec::partial_shape() const {
    std::vector<Dimension> out;
    for (const auto& d : dims) {
        switch (d.kind) {
            case DimSpec::Kind::fixed: out.emplace_back(d.value); break;
            case DimSpec::Kind::symbol: out.push_back(Dimension::dynamic()); break;
            case DimSpec::Kind::anonymous: out.push_back(d.bounds); break;
        }
    }
    return PartialShape(out);
}

namespace {

// The largest K accepted in a 'node:K' reference (no op has more outputs).
constexpr int64_t kMaxOutputIndex = 65535;

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

DataType read_dtype(const Source& src, const YAML::Node& n, const std::string& what) {
    const std::string text = detail::read_string(src, n, what);
    try {
        return parse_data_type(text);
    } catch (const Error& e) {
        src.fail(n, what + ": " + e.message(), "dtype");
    }
}

// The values a dtype holds: a constant or a random bound outside them would be
// saturated or turned into inf by the conversion (i8 300 -> 127), silently.
struct DtypeRange {
    double lo, hi;   // inclusive; for integers the exact extremes
    bool integral;
};

DtypeRange dtype_range(DataType t) {
    switch (t) {
        case DataType::f32: return {-3.4028234663852886e38, 3.4028234663852886e38, false};
        case DataType::f16: return {-65504.0, 65504.0, false};
        case DataType::f64: return {-1.7976931348623157e308, 1.7976931348623157e308, false};
        case DataType::i32: return {-2147483648.0, 2147483647.0, true};
        // 2^63 - 1 is no double: the upper bound is checked as "< 2^63".
        case DataType::i64: return {-9223372036854775808.0, 9223372036854775808.0, true};
        case DataType::u8: return {0.0, 255.0, true};
        case DataType::i8: return {-128.0, 127.0, true};
        case DataType::boolean: return {0.0, 1.0, true};
    }
    return {0.0, 0.0, true};
}

std::string number_text(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<int64_t>(v));
    std::ostringstream os;
    os << v;
    return os.str();
}

std::string range_text(DataType t) {
    const DtypeRange r = dtype_range(t);
    if (t == DataType::i64) return "-9223372036854775808..9223372036854775807";
    return number_text(r.lo) + ".." + number_text(r.hi);
}

// A value to be stored as `t` (a constant's values or fill): inside the dtype's
// range and, for integer dtypes, a whole number.
void check_value(const Source& src, const YAML::Node& n, DataType t, double v, const std::string& what,
                 const std::string& field) {
    const DtypeRange r = dtype_range(t);
    const bool inside = t == DataType::i64 ? (v >= r.lo && v < r.hi) : (v >= r.lo && v <= r.hi);
    if (!inside)
        src.fail(n,
                 what + ": " + number_text(v) + " is outside the range of " + to_string(t) + " (" + range_text(t) + ")",
                 field);
    if (r.integral && v != std::floor(v))
        src.fail(n, what + ": " + number_text(v) + " is not a whole number, and " + to_string(t) + " holds only those",
                 field);
}

// A random range [low, high) drawn for `t`: integers take floor(low + u *
// (high - low)), so every value drawn lies in [low, high - 1]; booleans ignore
// the range.
void check_random_range(const Source& src, const YAML::Node& r, DataType t, double low, double high,
                        const std::string& what) {
    if (t == DataType::boolean) return;
    const DtypeRange d = dtype_range(t);
    const double top = d.integral ? d.hi + 1 : d.hi;   // high is exclusive for integers
    const YAML::Node at_low = r && r["low"] ? r["low"] : r;
    const YAML::Node at_high = r && r["high"] ? r["high"] : r;
    if (!(low >= d.lo))
        src.fail(at_low,
                 what + ": random.low " + number_text(low) + " is outside the range of " + to_string(t) + " (" +
                     range_text(t) + ")",
                 "low");
    if (!(high <= top))
        src.fail(at_high,
                 what + ": random.high " + number_text(high) + " is outside the range of " + to_string(t) + " (" +
                     range_text(t) + (d.integral ? ", high exclusive" : "") + ")",
                 "high");
}

}   // namespace

std::string detail::random_range_problem(DataType t, double low, double high) {
    if (!(high > low))
        return "random.high " + number_text(high) + " must be greater than random.low " + number_text(low);
    if (t == DataType::boolean) return {};
    const DtypeRange d = dtype_range(t);
    if (!(low >= d.lo))
        return "random.low " + number_text(low) + " is outside the range of " + to_string(t) + " (" + range_text(t) +
               ")";
    if (!(high <= (d.integral ? d.hi + 1 : d.hi)))
        return "random.high " + number_text(high) + " is outside the range of " + to_string(t) + " (" + range_text(t) +
               (d.integral ? ", high exclusive" : "") + ")";
    return {};
}

namespace {

// "1..8" (bounded), "2.." (lower bound only).
bool parse_bounds(const std::string& text, Dimension& out) {
    const size_t dots = text.find("..");
    if (dots == std::string::npos) return false;
    try {
        size_t used = 0;
        const std::string lo = text.substr(0, dots), hi = text.substr(dots + 2);
        const int64_t min = std::stoll(lo, &used);
        if (used != lo.size() || min < 0) return false;
        int64_t max = Dimension::kUnbounded;
        if (!hi.empty()) {
            max = std::stoll(hi, &used);
            if (used != hi.size() || max < min) return false;
        }
        out = Dimension(min, max);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

DimSpec read_dim(const Source& src, const YAML::Node& n, const std::string& what) {
    DimSpec d;
    int64_t v = 0;
    if (n.IsNull()) {
        d.kind = DimSpec::Kind::anonymous;
        return d;
    }
    if (detail::try_int(n, v)) {
        if (v == -1) {
            d.kind = DimSpec::Kind::anonymous;
        } else if (v < 0) {
            src.fail(n, what + ": a dim must be >= 0, -1 or '?', got " + std::to_string(v));
        } else {
            d.value = v;
        }
        return d;
    }
    if (!n.IsScalar()) src.fail(n, what + ": a dim must be a number, a symbol name, '?' or 'min..max'");
    const std::string& text = n.Scalar();
    if (text == "?") {
        d.kind = DimSpec::Kind::anonymous;
    } else if (parse_bounds(text, d.bounds)) {
        d.kind = DimSpec::Kind::anonymous;
    } else if (is_identifier(text)) {
        d.kind = DimSpec::Kind::symbol;
        d.symbol = text;
    } else {
        src.fail(n, what + ": bad dim '" + text + "'; expected a number, a symbol name, '?' or 'min..max'");
    }
    return d;
}

std::vector<int64_t> read_static_shape(const Source& src, const YAML::Node& n, const std::string& what) {
    detail::expect_seq(src, n, what);
    std::vector<int64_t> dims;
    for (const auto& d : n) {
        const int64_t v = detail::read_int(src, d, what + " dim");
        if (v < 0) src.fail(d, what + ": dims must be >= 0");
        dims.push_back(v);
    }
    return dims;
}

struct Loader {
    Source src;
    std::shared_ptr<const Registry> registry;
    Pipeline p;
    std::set<std::string> names;   // inputs, constants and nodes
    PassOverrides pass_overrides;

    void declare(const YAML::Node& key, const std::string& name, const std::string& what) {
        if (!is_identifier(name))
            src.fail(key, what + " name '" + name + "' must be letters, digits and '_' (not starting with a digit)");
        if (!names.insert(name).second) src.fail(key, "duplicate name '" + name + "'");
    }

    void load(const YAML::Node& root) {
        if (!root.IsMap()) src.fail(root, "a pipeline must be a map with 'inputs', 'nodes' and 'outputs' (or 'model')");
        detail::check_keys(
            src, root, {"name", "description", "model", "inputs", "constants", "nodes", "outputs", "schedule", "run"},
            "top level");
        p.file = src.file;
        p.name = root["name"] ? detail::read_string(src, root["name"], "name")
                              : std::filesystem::path(src.file).stem().string();
        if (root["run"]) read_run(root["run"]);
        override_passes();
        if (root["model"]) {
            read_model(root);
        } else {
            read_graph(root);
        }
        std::set<std::string> symbols;
        for (const auto& in : p.inputs)
            for (const auto& d : in.dims)
                if (d.kind == DimSpec::Kind::symbol) symbols.insert(d.symbol);
        p.symbols.assign(symbols.begin(), symbols.end());
        p.runs = detail::expand_schedule(src, root["schedule"], p.inputs);
    }

    void read_run(const YAML::Node& n) {
        detail::expect_map(src, n, "run");
        detail::check_keys(
            src, n,
            {"device", "seed", "prealloc", "impl_cache_capacity", "async_compile", "async_compile_after",
             "dynamic_impls", "compile_threads", "threads", "inplace_concat", "views", "memory_pool", "memory_budget",
             "max_tensor_bytes", "reset_state", "fusion", "fake_alignment", "weights_cache", "passes",
             // The benchmark settings (--warmup, --iterations replace them).
             "warmup", "iterations"},
            "run");
        auto& r = p.run;
        if (n["device"]) r.device = detail::read_string(src, n["device"], "run.device");
        if (n["seed"]) {
            const int64_t s = detail::read_int(src, n["seed"], "run.seed");
            if (s < 0) src.fail(n["seed"], "run.seed must be >= 0, got " + std::to_string(s), "seed");
            r.seed = static_cast<uint64_t>(s);
        }
        if (n["prealloc"]) {
            const YAML::Node& v = n["prealloc"];
            const std::string text = detail::read_string(src, v, "run.prealloc");
            try {
                ShapePredictor::parse_settings(text);
            } catch (const Error& e) {
                src.fail(v, "run.prealloc: " + e.message(), "prealloc");
            }
            r.prealloc = text;
        }
        auto count = [&](const char* key, size_t& out, int64_t min, int64_t max = INT64_MAX) {
            if (!n[key]) return;
            const int64_t v = detail::read_int(src, n[key], std::string("run.") + key);
            if (v < min) src.fail(n[key], std::string("run.") + key + " must be >= " + std::to_string(min), key);
            if (v > max)
                src.fail(n[key],
                         std::string("run.") + key + " must be in " + std::to_string(min) + ".." + std::to_string(max) +
                             ", got " + std::to_string(v),
                         key);
            out = static_cast<size_t>(v);
        };
        count("impl_cache_capacity", r.impl_cache_capacity, 1);
        count("compile_threads", r.compile_threads, 1, kMaxCompileThreads);
        count("threads", r.threads, 1, kMaxThreads);
        count("async_compile_after", r.async_compile_after, 1);
        if (n["async_compile"]) r.async_compile = detail::read_bool(src, n["async_compile"], "run.async_compile");
        if (n["dynamic_impls"]) r.dynamic_impls = detail::read_bool(src, n["dynamic_impls"], "run.dynamic_impls");
        count("memory_budget", r.memory_budget_bytes, 0);
        count("max_tensor_bytes", r.max_tensor_bytes, 0);
        read_passes(n);
        count("weights_cache", r.weights_cache_capacity, 1);
        count("warmup", r.warmup, 0, static_cast<int64_t>(kMaxWarmupRuns));
        if (n["iterations"]) {
            size_t iterations = 0;
            count("iterations", iterations, 1, static_cast<int64_t>(kMaxRuns));
            r.iterations = iterations;
        }
        if (n["reset_state"]) {
            const std::string v = detail::read_string(src, n["reset_state"], "run.reset_state");
            if (v != "start" && v != "repeat")
                src.fail(n["reset_state"], "run.reset_state must be 'start' or 'repeat', got '" + v + "'");
            r.reset_state_each_repeat = v == "repeat";
        }
    }

    // run.passes: a map {pass: bool} or a spec string ("-fusion,-views",
    // "none"); run.fusion, run.views, run.inplace_concat, run.fake_alignment
    // and run.memory_pool are aliases of run.passes.<name> (they may not
    // disagree with it).
    void read_passes(const YAML::Node& n) {
        PassSet& set = p.run.passes;
        std::map<std::string, const YAML::Node*> set_by;
        bool any = false;
        for (const char* alias : {"inplace_concat", "views", "memory_pool", "fusion", "fake_alignment"}) {
            if (!n[alias]) continue;
            set.set(alias, detail::read_bool(src, n[alias], std::string("run.") + alias));
            any = true;
        }
        if (const YAML::Node v = n["passes"]) {
            any = true;
            if (v.IsScalar()) {
                try {
                    set.apply(v.Scalar(), "run.passes");
                } catch (const Error& e) {
                    src.fail(v, "run.passes: " + e.message(), "passes");
                }
            } else {
                if (!v.IsMap()) src.fail(v, "run.passes must be a map {pass: true|false} or a spec string", "passes");
                for (const auto& kv : v) {
                    const std::string name = detail::read_string(src, kv.first, "run.passes key");
                    if (!find_pass(name)) {
                        std::vector<std::string> known;
                        for (const PassInfo& info : passes()) known.emplace_back(info.name);
                        std::string msg = "run.passes: unknown pass '" + name + "'";
                        const auto close = close_names(name, known, 1);
                        if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                        src.fail(kv.first, msg + "; known passes: " + pass_names(), "passes");
                    }
                    const bool on = detail::read_bool(src, kv.second, "run.passes." + name);
                    if (n[name] && detail::read_bool(src, n[name], "run." + name) != on)
                        src.fail(kv.second, "run.passes." + name + " disagrees with run." + name + " (an alias of it)",
                                 "passes");
                    set.set(name, on);
                }
            }
        }
        if (any) p.run.passes_source = "yaml";
    }

    // DYNRT_PASSES, then --passes, over what the file says.
    void override_passes() {
        RunSettings& r = p.run;
        const std::pair<const std::optional<std::string>*, const char*> sources[] = {{&pass_overrides.env, "env"},
                                                                                     {&pass_overrides.cli, "cli"}};
        for (const auto& [spec, name] : sources) {
            if (!*spec) continue;
            r.passes.apply(**spec, std::string(name) == "env" ? "DYNRT_PASSES" : "--passes");
            r.passes_source = r.passes_source == "default" ? name : r.passes_source + "+" + name;
        }
    }

    void read_graph(const YAML::Node& root) {
        ProgramOptions program_options;
        apply_passes(p.run.passes, &program_options, nullptr);
        p.program = std::make_shared<Program>(registry, p.name, program_options);
        if (root["inputs"]) read_inputs(root["inputs"]);
        if (root["constants"]) read_constants(root["constants"]);
        if (!root["nodes"]) src.fail(root, "the pipeline has no 'nodes'");
        read_nodes(root["nodes"]);
        if (!root["outputs"]) src.fail(root, "the pipeline has no 'outputs'");
        read_outputs(root["outputs"]);
        try {
            p.program->build();
        } catch (const Error& e) {
            throw e.with_context(in_file(src.file));
        }
    }

    // `model: FILE.onnx`: the graph, its inputs and outputs come from the
    // model; `inputs:` may only set the random ranges of its inputs.
    void read_model(const YAML::Node& root) {
        for (const char* k : {"nodes", "constants", "outputs"})
            if (root[k])
                src.fail(root[k],
                         std::string("a pipeline with 'model' takes its graph from the model: remove '") + k + "'", k);
        const std::string path = src.resolve(detail::read_string(src, root["model"], "model"));
        ModelGraph g;
        try {
            g = load_model_graph(path, registry, p.run.passes);
        } catch (const Error& e) {
            src.fail(root["model"], e.what(), "model");
        }
        p.program = g.program;
        p.inputs = g.inputs;
        p.outputs = g.outputs;
        if (root["inputs"]) read_model_inputs(root["inputs"]);
    }

    void read_model_inputs(const YAML::Node& n) {
        detail::expect_map(src, n, "inputs");
        for (const auto& kv : n) {
            const std::string name = detail::read_string(src, kv.first, "input name");
            auto in =
                std::find_if(p.inputs.begin(), p.inputs.end(), [&](const InputSpec& s) { return s.name == name; });
            if (in == p.inputs.end()) {
                std::vector<std::string> known;
                for (const auto& s : p.inputs) known.push_back(s.name);
                std::string msg = "the model has no input '" + name + "'";
                const auto close = close_names(name, known, 1);
                if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                src.fail(kv.first, msg, name);
            }
            const std::string what = "input '" + name + "'";
            detail::expect_map(src, kv.second, what);
            detail::check_keys(src, kv.second, {"random"},
                               what + " of a model (its dtype and shape come from the model)");
            read_random(kv.second["random"], *in, what);
        }
    }

    void read_random(const YAML::Node& r, InputSpec& in, const std::string& what) {
        if (!r) return;
        detail::expect_map(src, r, what + " random");
        detail::check_keys(src, r, {"low", "high"}, what + " random");
        if (r["low"]) in.low = detail::read_float(src, r["low"], "random.low");
        if (r["high"]) in.high = detail::read_float(src, r["high"], "random.high");
        if (!(in.high > in.low)) src.fail(r, what + ": random.high must be greater than random.low");
        check_random_range(src, r, in.dtype, in.low, in.high, what);
    }

    void read_inputs(const YAML::Node& n) {
        detail::expect_map(src, n, "inputs");
        for (const auto& kv : n) {
            const std::string name = detail::read_string(src, kv.first, "input name");
            declare(kv.first, name, "input");
            const YAML::Node& spec = kv.second;
            const std::string what = "input '" + name + "'";
            detail::expect_map(src, spec, what);
            detail::check_keys(src, spec, {"dtype", "shape", "random"}, what);
            InputSpec in;
            in.name = name;
            in.where = src.at(kv.first);
            in.where.node = name;
            in.dtype = spec["dtype"] ? read_dtype(src, spec["dtype"], what + " dtype") : DataType::f32;
            if (!spec["shape"]) src.fail(spec, what + " needs a 'shape'");
            detail::expect_seq(src, spec["shape"], what + " shape");
            for (const auto& d : spec["shape"]) in.dims.push_back(read_dim(src, d, what + " shape"));
            if (!is_floating(in.dtype)) {
                in.low = 0;
                in.high = 10;
            }
            read_random(spec["random"], in, what);
            p.program->add_input(name, Layout(in.partial_shape(), in.dtype), in.where);
            p.inputs.push_back(std::move(in));
        }
    }

    void read_constants(const YAML::Node& n) {
        detail::expect_map(src, n, "constants");
        for (const auto& kv : n) {
            const std::string name = detail::read_string(src, kv.first, "constant name");
            declare(kv.first, name, "constant");
            const std::string what = "constant '" + name + "'";
            const YAML::Node& spec = kv.second;
            detail::expect_map(src, spec, what);
            detail::check_keys(src, spec, {"dtype", "shape", "init", "npy", "values"}, what);
            ErrorContext where = src.at(kv.first);
            where.node = name;
            p.program->add_constant(name, read_constant_value(spec, what), where);
        }
    }

    HostTensor read_constant_value(const YAML::Node& spec, const std::string& what) {
        const int sources = (spec["init"] ? 1 : 0) + (spec["npy"] ? 1 : 0) + (spec["values"] ? 1 : 0);
        if (sources != 1) src.fail(spec, what + " needs exactly one of 'init', 'npy', 'values'");
        const bool has_dtype = static_cast<bool>(spec["dtype"]);
        const DataType dtype = has_dtype ? read_dtype(src, spec["dtype"], what + " dtype") : DataType::f32;
        std::optional<Shape> shape;
        if (spec["shape"]) shape = Shape(read_static_shape(src, spec["shape"], what + " shape"));
        if (const YAML::Node f = spec["npy"]) return constant_from_npy(f, has_dtype, dtype, shape, what);
        if (const YAML::Node v = spec["values"]) return constant_from_values(v, dtype, shape, what);
        if (!shape) src.fail(spec, what + " with 'init' needs a 'shape'");
        return constant_from_init(spec["init"], dtype, *shape, what);
    }

    // npy: FILE, checked against the declared dtype and shape.
    HostTensor constant_from_npy(const YAML::Node& f, bool has_dtype, DataType dtype, const std::optional<Shape>& shape,
                                 const std::string& what) {
        const std::string path = src.resolve(detail::read_string(src, f, what + " npy"));
        HostTensor t;
        try {
            t = read_npy(path);
        } catch (const Error& e) {
            src.fail(f, what + ": " + e.what(), "npy");
        }
        if (has_dtype && t.dtype() != dtype)
            src.fail(f,
                     what + ": " + path + " holds " + to_string(t.dtype()) + ", the constant is declared " +
                         to_string(dtype),
                     "npy");
        if (shape && t.shape() != *shape)
            src.fail(f, what + ": " + path + " has shape " + t.shape().to_string() + ", declared " + shape->to_string(),
                     "npy");
        return t;
    }

    // values: a number or a list, one per element, each in the dtype's range.
    HostTensor constant_from_values(const YAML::Node& v, DataType dtype, const std::optional<Shape>& shape,
                                    const std::string& what) {
        std::vector<double> values;
        if (v.IsSequence()) {
            for (const auto& e : v) values.push_back(detail::read_float(src, e, what + " value"));
        } else {
            values.push_back(detail::read_float(src, v, what + " value"));
        }
        const Shape s = shape ? *shape : Shape{static_cast<int64_t>(values.size())};
        HostTensor t(dtype, s);
        if (values.size() != t.count())
            src.fail(v,
                     what + ": " + std::to_string(values.size()) + " values for shape " + s.to_string() + " (" +
                         std::to_string(t.count()) + " elements)",
                     "values");
        for (size_t i = 0; i < values.size(); ++i) {
            check_value(src, v.IsSequence() ? v[i] : v, dtype, values[i], what + " value " + std::to_string(i),
                        "values");
            t.set_from_double(i, values[i]);
        }
        return t;
    }

    // init: {fill: V} or {random: {seed, low, high}}.
    HostTensor constant_from_init(const YAML::Node& init, DataType dtype, const Shape& shape, const std::string& what) {
        detail::expect_map(src, init, what + " init");
        detail::check_keys(src, init, {"random", "fill"}, what + " init");
        if (init.size() != 1) src.fail(init, what + ": init needs exactly one of 'random', 'fill'");
        HostTensor t(dtype, shape);
        if (const YAML::Node f = init["fill"]) {
            const double v = detail::read_float(src, f, what + " fill");
            check_value(src, f, dtype, v, what + " fill", "fill");
            for (size_t i = 0; i < t.count(); ++i) t.set_from_double(i, v);
            return t;
        }
        const YAML::Node r = init["random"];
        double low = is_floating(dtype) ? -1.0 : 0.0, high = is_floating(dtype) ? 1.0 : 10.0;
        uint64_t seed = 0;
        if (!r.IsNull()) {
            detail::expect_map(src, r, what + " init.random");
            detail::check_keys(src, r, {"seed", "low", "high"}, what + " init.random");
            if (r["seed"]) {
                // Seeds are 0..2^63-1 everywhere (as run.seed): a negative one is
                // refused, not wrapped to a huge unsigned value.
                const int64_t s = detail::read_int(src, r["seed"], "random.seed");
                if (s < 0)
                    src.fail(r["seed"], what + ": init.random.seed must be >= 0, got " + std::to_string(s), "seed");
                seed = static_cast<uint64_t>(s);
            }
            if (r["low"]) low = detail::read_float(src, r["low"], "random.low");
            if (r["high"]) high = detail::read_float(src, r["high"], "random.high");
            if (!(high > low)) src.fail(r, what + ": random.high must be greater than random.low");
        }
        check_random_range(src, r, dtype, low, high, what + " init");
        detail::fill_random(t, seed, low, high);
        return t;
    }

    // Converts one YAML attribute to the type its spec asks for.
    AttrValue read_attr(const AttrSpec& spec, const YAML::Node& v, const std::string& node, const std::string& op) {
        const std::string what = "attribute '" + spec.name + "' of node '" + node + "' (" + op + ")";
        auto fail_type = [&](const std::string& expected) {
            std::string got = v.IsScalar() ? "'" + v.Scalar() + "'" : detail::kind_name(v);
            ErrorContext c = src.at(v, spec.name);
            c.node = node;
            c.op = op;
            throw Error("attribute '" + spec.name + "' must be " + expected + ", got " + got, c);
        };
        // A scalar is accepted where a list is expected (a one-element list).
        auto items = [&](const char* expected) {
            std::vector<YAML::Node> out;
            if (v.IsSequence()) {
                for (const auto& e : v) out.push_back(e);
            } else if (v.IsScalar()) {
                out.push_back(v);
            } else {
                fail_type(expected);
            }
            return out;
        };
        // Every item read by `read` (detail::try_int, detail::try_float) through `x`.
        auto list_of = [&](const char* expected, auto read, auto& x) {
            std::vector<std::decay_t<decltype(x)>> out;
            for (const auto& e : items(expected)) {
                if (!read(e, x)) fail_type(expected);
                out.push_back(x);
            }
            return out;
        };
        int64_t i = 0;
        double f = 0;
        bool b = false;
        switch (spec.type) {
            case AttrType::Int:
                if (!detail::try_int(v, i)) fail_type("an integer");
                return i;
            case AttrType::Float:
                if (!detail::try_float(v, f)) fail_type("a number");
                return f;
            case AttrType::Bool:
                if (!detail::try_bool(v, b)) fail_type("true or false");
                return b;
            case AttrType::String: {
                if (!v.IsScalar()) fail_type("a string");
                const std::string& s = v.Scalar();
                if (!spec.allowed.empty() &&
                    std::find(spec.allowed.begin(), spec.allowed.end(), s) == spec.allowed.end()) {
                    std::string msg = "attribute '" + spec.name + "': '" + s + "' is not allowed";
                    const auto close = close_names(s, spec.allowed, 1);
                    if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                    msg += "; allowed:";
                    for (size_t k = 0; k < spec.allowed.size(); ++k) msg += (k ? ", " : " ") + spec.allowed[k];
                    ErrorContext c = src.at(v, spec.name);
                    c.node = node;
                    c.op = op;
                    throw Error(msg, c);
                }
                return s;
            }
            case AttrType::Ints: return list_of("a list of integers", detail::try_int, i);
            case AttrType::Floats: return list_of("a list of numbers", detail::try_float, f);
            case AttrType::Strings: {
                std::vector<std::string> out;
                for (const auto& e : items("a list of strings")) {
                    if (!e.IsScalar()) fail_type("a list of strings");
                    out.push_back(e.Scalar());
                }
                return out;
            }
        }
        throw Error("attribute '" + spec.name + "' has a type this front end does not know", src.at(v, spec.name));
    }

    struct PendingRef {
        std::string ref;
        YAML::Node where;
        std::string node;
    };

    void read_nodes(const YAML::Node& n) {
        detail::expect_seq(src, n, "nodes");
        std::vector<PendingRef> refs;
        for (const auto& spec : n) {
            detail::expect_map(src, spec, "a node");
            if (!spec["name"]) src.fail(spec, "a node needs a 'name'");
            const std::string name = detail::read_string(src, spec["name"], "node name");
            const std::string what = "node '" + name + "'";
            detail::check_keys(src, spec, {"name", "op", "inputs", "attrs", "doc"}, what);
            declare(spec["name"], name, "node");
            if (!spec["op"]) src.fail(spec, what + " needs an 'op'");
            const std::string op = detail::read_string(src, spec["op"], what + " op");
            const RegisteredOp& def = node_op(spec, name, op, what);
            ErrorContext where = src.at(spec);
            where.node = name;
            where.op = op;
            std::vector<std::string> inputs;
            if (const YAML::Node ins = spec["inputs"]) {
                std::vector<YAML::Node> items;
                if (ins.IsSequence()) {
                    for (const auto& e : ins) items.push_back(e);
                } else {
                    items.push_back(ins);
                }
                for (const auto& e : items) {
                    const std::string ref = detail::read_string(src, e, what + " input");
                    inputs.push_back(ref);
                    refs.push_back({ref, e, name});
                }
            }
            p.program->add_node(name, op, std::move(inputs), node_attrs(spec["attrs"], def, name, op, what), where);
        }
        // References may point forward (build() orders the graph), so they are
        // checked once every name is known.
        for (const auto& r : refs) check_ref(r.ref, r.where, r.node);
    }

    // The node's op, or an error naming the closest known ones.
    const RegisteredOp& node_op(const YAML::Node& spec, const std::string& name, const std::string& op,
                                const std::string& what) {
        // Graph inputs and constants are built into Program, not ops.
        if (op == "parameter" || op == "constant")
            src.fail(spec["op"], what + ": declare " + op + " nodes under 'inputs:' or 'constants:'", "op");
        if (const RegisteredOp* def = registry->find_op(op)) return *def;
        std::string msg = "unknown op '" + op + "'";
        const auto close = close_names(op, registry->op_names());
        if (!close.empty()) {
            msg += "; did you mean";
            for (size_t i = 0; i < close.size(); ++i) msg += (i ? ", '" : " '") + close[i] + "'";
            msg += "?";
        }
        msg += " (is its module in the module folder? see `dynrt ops`)";
        ErrorContext c = src.at(spec["op"], "op");
        c.node = name;
        throw Error(msg, c);
    }

    // attrs: each a known attribute of the op, once, converted to its type.
    Attributes node_attrs(const YAML::Node& a, const RegisteredOp& def, const std::string& name, const std::string& op,
                          const std::string& what) {
        Attributes attrs;
        if (!a || a.IsNull()) return attrs;
        detail::expect_map(src, a, what + " attrs");
        std::vector<std::string> known;
        for (const auto& s : def.def.attrs) known.push_back(s.name);
        std::set<std::string> seen;
        for (const auto& kv : a) {
            const std::string key = detail::read_string(src, kv.first, "attribute name");
            ErrorContext c = src.at(kv.first, key);
            c.node = name;
            c.op = op;
            if (!seen.insert(key).second) throw Error("duplicate attribute '" + key + "'", c);
            const auto it = std::find_if(def.def.attrs.begin(), def.def.attrs.end(),
                                         [&](const AttrSpec& s) { return s.name == key; });
            if (it == def.def.attrs.end()) {
                std::string msg = "unknown attribute '" + key + "' of op '" + op + "'";
                const auto close = close_names(key, known, 1);
                if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                msg += known.empty() ? "; it takes none" : "; known:";
                for (size_t i = 0; i < known.size(); ++i) msg += (i ? ", " : " ") + known[i];
                throw Error(msg, c);
            }
            attrs.set(key, read_attr(*it, kv.second, name, op));
        }
        return attrs;
    }

    // The K of a 'node:K' reference: digits that fit, checked here so that a
    // 20-digit index is a located error naming the field.
    void check_ref_index(const std::string& ref, const YAML::Node& where, const std::string& field,
                         const std::string& node = {}) {
        const size_t colon = ref.find(':');
        if (colon == std::string::npos) return;
        const std::string idx = ref.substr(colon + 1);
        int64_t k = 0;
        const bool digits = !idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos;
        if (digits && tools::parse_int64(idx, k) && k <= kMaxOutputIndex) return;
        ErrorContext c = src.at(where, field);
        c.node = node;
        throw Error(
            "bad reference '" + ref + "': " +
                (digits ? "output index " + idx + " is out of range (at most " + std::to_string(kMaxOutputIndex) + ")"
                        : std::string("expected 'node' or 'node:K' with K a non-negative integer")),
            c);
    }

    void check_ref(const std::string& ref, const YAML::Node& where, const std::string& node) {
        check_ref_index(ref, where, "inputs", node);
        const std::string base = ref.substr(0, ref.find(':'));
        if (names.count(base)) return;
        std::string msg = "input '" + ref + "' refers to nothing: no input, constant or node is called '" + base + "'";
        const auto close = close_names(base, std::vector<std::string>(names.begin(), names.end()), 1);
        if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
        ErrorContext c = src.at(where, "inputs");
        c.node = node;
        throw Error(msg, c);
    }

    void read_outputs(const YAML::Node& n) {
        std::vector<YAML::Node> items;
        if (n.IsSequence()) {
            for (const auto& e : n) items.push_back(e);
        } else {
            items.push_back(n);
        }
        if (items.empty()) src.fail(n, "'outputs' is empty");
        for (const auto& e : items) {
            const std::string ref = detail::read_string(src, e, "output");
            check_ref_index(ref, e, "outputs");
            const std::string base = ref.substr(0, ref.find(':'));
            if (!names.count(base)) {
                std::string msg = "output '" + ref + "' names no input, constant or node";
                const auto close = close_names(base, std::vector<std::string>(names.begin(), names.end()), 1);
                if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                src.fail(e, msg, "outputs");
            }
            p.outputs.push_back(ref);
            p.program->add_output(ref, src.at(e, "outputs"));
        }
    }
};

// Nesting and size limits of the YAML tree, checked before the loader walks
// it: a pipeline is a few levels deep; anything deeper, or a tree that aliases
// blow up to millions of nodes, is refused with its location.
constexpr size_t kMaxYamlDepth = 64;
constexpr size_t kMaxYamlNodes = 1000000;

void check_tree(const Source& src, const YAML::Node& root) {
    std::vector<std::pair<YAML::Node, size_t>> stack{{root, 1}};
    size_t visited = 0;
    while (!stack.empty()) {
        const auto [n, depth] = stack.back();
        stack.pop_back();
        if (++visited > kMaxYamlNodes)
            src.fail(n, "the YAML document has more than " + std::to_string(kMaxYamlNodes) +
                            " nodes (aliases expanding?), more than a pipeline needs");
        if (!n.IsMap() && !n.IsSequence()) continue;
        if (depth > kMaxYamlDepth) src.fail(n, "YAML nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels");
        for (const auto& e : n) {
            if (n.IsMap()) {
                stack.emplace_back(e.first, depth + 1);
                stack.emplace_back(e.second, depth + 1);
            } else {
                stack.emplace_back(e, depth + 1);
            }
        }
    }
}

}   // namespace

std::optional<std::string> env_passes() {
    const char* v = std::getenv("DYNRT_PASSES");
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

Pipeline load_pipeline_text(const std::string& text, const std::string& file, const std::string& base_dir,
                            std::shared_ptr<const Registry> registry, const PassOverrides& passes) {
    if (!registry) throw Error("no registry given", in_file(file));
    const auto start = std::chrono::steady_clock::now();
    Loader l{Source{file, base_dir}, std::move(registry), {}, {}, passes};
    YAML::Node root;
    try {
        root = YAML::Load(text);
    }
#ifdef DYNRT_YAML_DEPTHGUARD
    catch (const YAML::DeepRecursion& e) {
        ErrorContext c = in_file(file);
        c.line = e.mark.line + 1;
        c.column = e.mark.column + 1;
        throw Error("YAML nesting deeper than " + std::to_string(kMaxYamlDepth) + " levels", c);
    }
#endif
    catch (const YAML::ParserException& e) {
        ErrorContext c = in_file(file);
        c.line = e.mark.line + 1;
        c.column = e.mark.column + 1;
        std::string msg = "malformed YAML: " + e.msg;
        if (e.msg == "unknown token") msg += " (a '?' dim must be quoted: \"?\")";
        throw Error(msg, c);
    } catch (const YAML::Exception& e) {
        throw Error(std::string("cannot parse YAML: ") + e.what(), in_file(file));
    }
    try {
        check_tree(l.src, root);
        l.load(root);
    } catch (const YAML::Exception& e) {
        // A yaml-cpp conversion that slipped past the typed reads: still a
        // located error, never a crash.
        ErrorContext c = in_file(file);
        c.line = e.mark.line + 1;
        c.column = e.mark.column + 1;
        throw Error(std::string("bad value: ") + e.msg, c);
    }
    l.p.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::move(l.p);
}

Pipeline load_pipeline(const std::string& path, std::shared_ptr<const Registry> registry, const PassOverrides& passes) {
    const std::string text = tools::read_file_capped(path, tools::kMaxTextFileBytes, "pipeline file");
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return load_pipeline_text(text, path, dir, std::move(registry), passes);
}

}   // namespace dynrt::pipeline
