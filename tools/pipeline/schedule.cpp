// Shape schedules: `schedule:` entries -> one RunSpec per inference, and the
// input data of each run (docs/yaml.md, "schedule").
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "dynrt/checked_math.hpp"

#include "int_range.hpp"
#include "yaml_util.hpp"

namespace dynrt::pipeline {

using detail::Source;

std::string RunSpec::label() const {
    std::string out;
    for (const auto& [k, v] : symbols) out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
    for (const auto& [k, t] : feeds) out += (out.empty() ? "" : " ") + k + "=" + t->shape().to_string();
    if (out.empty()) {
        for (const auto& [k, s] : shapes) out += (out.empty() ? "" : " ") + k + "=" + s.to_string();
    }
    return out;
}

namespace detail {
namespace {

const std::set<std::string> kEntryKeys = {"feed", "shapes", "repeat", "mode"};

std::vector<int64_t> read_values(const Source& src, const YAML::Node& v, const std::string& sym) {
    std::vector<int64_t> out;
    int64_t i = 0;
    if (v.IsSequence()) {
        for (const auto& e : v) {
            if (!try_int(e, i)) src.fail(e, "symbol '" + sym + "': list items must be integers", sym);
            out.push_back(i);
        }
        if (out.empty()) src.fail(v, "symbol '" + sym + "': empty list", sym);
    } else if (try_int(v, i)) {
        out.push_back(i);
    } else if (v.IsScalar()) {
        try {
            out = tools::parse_int_range(v.Scalar());
        } catch (const Error& e) {
            src.fail(v, "symbol '" + sym + "': " + e.message(), sym);
        }
    } else {
        src.fail(v, "symbol '" + sym + "' needs an integer, a range 'A..B[:STEP]' or a list", sym);
    }
    for (int64_t x : out)
        if (x < 0) src.fail(v, "symbol '" + sym + "': dims must be >= 0, got " + std::to_string(x), sym);
    return out;
}

// Checks a shape given for an input (by a feed or a `shapes` entry) against
// its declaration and binds the symbols of its dims into `bound` (and the
// input that bound each into `bound_by`). `what` says where the shape comes
// from ("feed for input 'x': x.npy has shape").
void bind_shape(const Source& src, const YAML::Node& where, const InputSpec& in, const Shape& shape,
                const std::string& what, std::map<std::string, int64_t>& bound,
                std::map<std::string, std::string>& bound_by) {
    const PartialShape declared = in.partial_shape();
    if (shape.size() != in.dims.size())
        src.fail(where,
                 what + " " + shape.to_string() + ", which does not fit the declared " + declared.to_string() +
                     " (rank " + std::to_string(shape.size()) + " vs " + std::to_string(in.dims.size()) + ")",
                 in.name);
    for (size_t k = 0; k < in.dims.size(); ++k) {
        const DimSpec& d = in.dims[k];
        const int64_t v = shape[k];
        const bool fits = d.kind == DimSpec::Kind::fixed       ? v == d.value
                          : d.kind == DimSpec::Kind::anonymous ? d.bounds.contains(v)
                                                               : true;
        if (!fits)
            src.fail(where,
                     what + " " + shape.to_string() + ", which does not fit the declared " + declared.to_string() +
                         " at dim " + std::to_string(k),
                     in.name);
        if (d.kind != DimSpec::Kind::symbol) continue;
        const auto it = bound.find(d.symbol);
        if (it != bound.end() && it->second != v)
            src.fail(where,
                     what + " " + shape.to_string() + ": it sets symbol '" + d.symbol + "' to " + std::to_string(v) +
                         ", but input '" + bound_by[d.symbol] + "' sets it to " + std::to_string(it->second) +
                         " elsewhere in this entry",
                     in.name);
        bound[d.symbol] = v;
        bound_by[d.symbol] = in.name;
    }
}

// Checks a fed tensor against its input's declaration and binds the symbols
// of its dims into `bound`.
void bind_feed(const Source& src, const YAML::Node& where, const InputSpec& in, const HostTensor& t,
               const std::string& path, std::map<std::string, int64_t>& bound,
               std::map<std::string, std::string>& bound_by) {
    if (t.dtype() != in.dtype)
        src.fail(where,
                 "feed for input '" + in.name + "': " + path + " holds " + to_string(t.dtype()) +
                     ", the input is declared " + to_string(in.dtype),
                 in.name);
    bind_shape(src, where, in, t.shape(), "feed for input '" + in.name + "': " + path + " has shape", bound, bound_by);
}

const InputSpec& find_input(const Source& src, const YAML::Node& key, const std::vector<InputSpec>& inputs,
                            const std::string& name, const std::string& what) {
    const auto in = std::find_if(inputs.begin(), inputs.end(), [&](const InputSpec& s) { return s.name == name; });
    if (in == inputs.end()) src.fail(key, what + " names '" + name + "', which is not an input", name);
    return *in;
}

}   // namespace

std::vector<RunSpec> expand_schedule(const Source& src, const YAML::Node& schedule,
                                     const std::vector<InputSpec>& inputs) {
    std::set<std::string> symbols;
    bool anonymous = false;
    for (const auto& in : inputs)
        for (const auto& d : in.dims) {
            if (d.kind == DimSpec::Kind::symbol) symbols.insert(d.symbol);
            anonymous = anonymous || d.kind == DimSpec::Kind::anonymous;
        }
    std::vector<std::string> symbol_list(symbols.begin(), symbols.end());

    std::vector<YAML::Node> entries;
    if (schedule && !schedule.IsNull()) {
        expect_seq(src, schedule, "schedule");
        for (const auto& e : schedule) entries.push_back(e);
    }
    if (entries.empty()) {
        if (!symbols.empty() || anonymous)
            src.fail(schedule, "the inputs have dynamic dims but there is no 'schedule' giving them values",
                     "schedule");
        entries.push_back(YAML::Node(YAML::NodeType::Map));   // one run of the static shapes
    }

    std::vector<RunSpec> runs;
    for (size_t ei = 0; ei < entries.size(); ++ei) {
        const YAML::Node& e = entries[ei];
        const std::string what = "schedule entry " + std::to_string(ei);
        if (!e.IsMap()) src.fail(e, what + " must be a map like {seq: 1..8}, got " + kind_name(e));

        // Symbols given in this entry, in the order written.
        std::vector<std::pair<std::string, std::vector<int64_t>>> given;
        std::set<std::string> seen;
        for (const auto& kv : e) {
            const std::string key = read_string(src, kv.first, "schedule key");
            if (!seen.insert(key).second) src.fail(kv.first, what + ": duplicate key '" + key + "'", key);
            if (kEntryKeys.count(key)) continue;
            if (!symbols.count(key)) {
                std::string msg = what + ": unknown symbol '" + key + "'";
                const auto close = close_names(key, symbol_list, 1);
                if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                if (symbol_list.empty()) {
                    msg += "; the inputs declare no symbols";
                } else {
                    msg += "; symbols of the inputs:";
                    for (size_t i = 0; i < symbol_list.size(); ++i) msg += (i ? ", " : " ") + symbol_list[i];
                }
                msg += " (entry keys: feed, shapes, repeat, mode)";
                src.fail(kv.first, msg, key);
            }
            given.emplace_back(key, read_values(src, kv.second, key));
        }

        bool product = false;
        if (const YAML::Node m = e["mode"]) {
            const std::string mode = read_string(src, m, "mode");
            if (mode != "zip" && mode != "product")
                src.fail(m, what + ": mode must be 'zip' or 'product', got '" + mode + "'", "mode");
            product = mode == "product";
        }
        size_t repeat = 1;
        if (const YAML::Node r = e["repeat"]) {
            const int64_t v = read_int(src, r, what + " repeat");
            if (v < 1) src.fail(r, what + ": repeat must be >= 1", "repeat");
            repeat = static_cast<size_t>(v);
        }

        // Feeds: loaded once per entry, shared by its runs.
        std::map<std::string, std::shared_ptr<const HostTensor>> feeds;
        std::map<std::string, int64_t> fed_symbols;
        std::map<std::string, std::string> fed_by;   // symbol -> the input that set it
        if (const YAML::Node f = e["feed"]) {
            expect_map(src, f, what + " feed");
            for (const auto& kv : f) {
                const std::string name = read_string(src, kv.first, "feed input");
                const InputSpec* in = &find_input(src, kv.first, inputs, name, what + ": feed");
                const std::string path = src.resolve(read_string(src, kv.second, "feed path"));
                std::shared_ptr<HostTensor> t;
                try {
                    t = std::make_shared<HostTensor>(read_npy(path));
                } catch (const Error& err) {
                    src.fail(kv.second, "feed for input '" + name + "': " + err.what(), name);
                }
                bind_feed(src, kv.second, *in, *t, path, fed_symbols, fed_by);
                feeds[name] = t;
            }
        }

        // Shapes given per input: random data of that shape.
        std::map<std::string, Shape> shaped;
        if (const YAML::Node sh = e["shapes"]) {
            expect_map(src, sh, what + " shapes");
            for (const auto& kv : sh) {
                const std::string name = read_string(src, kv.first, "shapes input");
                const InputSpec& in = find_input(src, kv.first, inputs, name, what + ": shapes");
                if (feeds.count(name)) src.fail(kv.first, what + ": input '" + name + "' is fed and shaped", name);
                expect_seq(src, kv.second, what + " shape of '" + name + "'");
                Shape shape;
                for (const auto& d : kv.second) {
                    const int64_t v = read_int(src, d, what + " shape of '" + name + "'");
                    if (v < 0) src.fail(d, what + ": input '" + name + "' has a negative dim", name);
                    shape.push_back(v);
                }
                bind_shape(src, kv.second, in, shape, what + ": input '" + name + "' has shape", fed_symbols, fed_by);
                shaped[name] = shape;
            }
        }

        // Combinations of the given symbols: zipped (lists of equal length; a
        // single value goes with every element) or the Cartesian product.
        // Their number (times repeat) is checked against kMaxRuns before any
        // is made, so three 1..10^6 ranges in product mode or a repeat of 10^9
        // are an error, not gigabytes of run specs.
        {
            size_t combos_count = 1;
            for (const auto& [sym, values] : given) {
                if (product) {
                    if (__builtin_mul_overflow(combos_count, values.size(), &combos_count)) combos_count = SIZE_MAX;
                } else if (values.size() != 1) {
                    combos_count = values.size();
                }
            }
            size_t entry_runs = 0;
            if (__builtin_mul_overflow(combos_count, repeat, &entry_runs)) entry_runs = SIZE_MAX;
            if (entry_runs > kMaxRuns - runs.size()) {
                const bool by_repeat = repeat > 1 && combos_count <= kMaxRuns - runs.size();
                const std::string count = entry_runs == SIZE_MAX ? "more than 2^64" : std::to_string(entry_runs);
                src.fail(
                    by_repeat ? e["repeat"] : e,
                    what + " expands to " + count + " runs (" + std::to_string(combos_count) +
                        (combos_count == 1 ? " combination" : " combinations") + " x repeat " + std::to_string(repeat) +
                        (runs.empty() ? "" : ", after " + std::to_string(runs.size()) + " runs of earlier entries") +
                        "), more than the limit of " + std::to_string(kMaxRuns) + " runs per pipeline",
                    by_repeat ? "repeat" : "schedule");
            }
        }
        std::vector<std::map<std::string, int64_t>> combos;
        if (product) {
            combos.emplace_back();
            for (const auto& [sym, values] : given) {
                std::vector<std::map<std::string, int64_t>> next;
                for (const auto& c : combos)
                    for (int64_t v : values) {
                        auto m = c;
                        m[sym] = v;
                        next.push_back(std::move(m));
                    }
                combos = std::move(next);
            }
        } else {
            size_t len = 1;
            std::string len_sym;
            for (const auto& [sym, values] : given) {
                if (values.size() == 1) continue;
                if (len != 1 && values.size() != len)
                    src.fail(e,
                             what + ": cannot zip '" + len_sym + "' (" + std::to_string(len) + " values) with '" + sym +
                                 "' (" + std::to_string(values.size()) +
                                 " values); give lists of equal length or add 'mode: product'",
                             sym);
                len = values.size();
                len_sym = sym;
            }
            for (size_t k = 0; k < len; ++k) {
                std::map<std::string, int64_t> m;
                for (const auto& [sym, values] : given) m[sym] = values.size() == 1 ? values[0] : values[k];
                combos.push_back(std::move(m));
            }
        }

        for (size_t rep = 0; rep < repeat; ++rep) {
            for (const auto& combo : combos) {
                RunSpec r;
                r.entry = ei;
                r.where = src.at(e);
                r.symbols = combo;
                r.feeds = feeds;
                for (const auto& [sym, v] : fed_symbols) {
                    const auto it = r.symbols.find(sym);
                    if (it != r.symbols.end() && it->second != v)
                        src.fail(e,
                                 what + ": symbol '" + sym + "' is " + std::to_string(it->second) +
                                     " here but the fed data makes it " + std::to_string(v),
                                 sym);
                    r.symbols[sym] = v;
                }
                for (const auto& sym : symbols)
                    if (!r.symbols.count(sym))
                        src.fail(e,
                                 what + " gives no value for symbol '" + sym +
                                     "' (every entry must set every symbol, or feed an input that has it)",
                                 sym);
                for (const auto& in : inputs) {
                    if (feeds.count(in.name)) {
                        r.shapes[in.name] = feeds.at(in.name)->shape();
                        continue;
                    }
                    if (shaped.count(in.name)) {
                        r.shapes[in.name] = shaped.at(in.name);
                        continue;
                    }
                    Shape s;
                    for (size_t k = 0; k < in.dims.size(); ++k) {
                        const DimSpec& d = in.dims[k];
                        if (d.kind == DimSpec::Kind::fixed) s.push_back(d.value);
                        else if (d.kind == DimSpec::Kind::symbol) s.push_back(r.symbols.at(d.symbol));
                        else
                            src.fail(e,
                                     what + ": input '" + in.name + "' dim " + std::to_string(k) +
                                         " is dynamic without a name, so only a feed can set it; name it "
                                         "(e.g. 'seq') or add 'feed: {" +
                                         in.name + ": file.npy}'",
                                     in.name);
                    }
                    r.shapes[in.name] = s;
                }
                runs.push_back(std::move(r));
            }
        }
    }
    return runs;
}

}   // namespace detail

size_t host_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGE_SIZE);
    size_t bytes = 0;
    if (pages <= 0 || page <= 0 ||
        __builtin_mul_overflow(static_cast<size_t>(pages), static_cast<size_t>(page), &bytes))
        return 0;
    return bytes;
}

size_t generated_input_limit(const RunSettings& run, std::string* what) {
    const size_t host = host_memory_bytes();
    if (run.max_tensor_bytes != 0 && (host == 0 || run.max_tensor_bytes <= host)) {
        if (what) *what = "run.max_tensor_bytes";
        return run.max_tensor_bytes;
    }
    if (what) *what = "the host's memory";
    return host;
}

namespace {

// A generated input is a host tensor filled here: its size is checked before
// it is allocated, so a schedule or --shapes asking for 2^42 elements is an
// error naming the input and the sizes, not std::bad_alloc.
void check_generated_size(const Pipeline& p, const InputSpec& in, const Shape& shape) {
    ErrorContext where = in.where;
    where.field = in.name;
    size_t count = 0, bytes = 0;
    const std::string what = "input '" + in.name + "' would be " + to_string(in.dtype) + " " + shape.to_string();
    if (!count_fits(shape, &count) || __builtin_mul_overflow(count, byte_size(in.dtype), &bytes))
        throw Error(what + ": more than 2^60 elements or 2^64 bytes", where);
    std::string limit_name;
    const size_t limit = generated_input_limit(p.run, &limit_name);
    if (limit != 0 && bytes > limit)
        throw Error(what + ": " + std::to_string(bytes) + " bytes, more than the limit of " + std::to_string(limit) +
                        " bytes (" + limit_name + ")",
                    where);
}

}   // namespace

std::map<std::string, HostTensor> make_inputs(const Pipeline& p, const RunSpec& run, uint64_t run_index) {
    std::map<std::string, HostTensor> out;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
        const InputSpec& in = p.inputs[i];
        const auto fed = run.feeds.find(in.name);
        if (fed != run.feeds.end()) {
            out[in.name] = *fed->second;
            continue;
        }
        const Shape& shape = run.shapes.at(in.name);
        check_generated_size(p, in, shape);
        HostTensor t(in.dtype, shape);
        // One stream per (seed, run, input): changing one input's shape does not
        // change another's data.
        size_t seed = static_cast<size_t>(p.run.seed);
        hash_combine(seed, static_cast<size_t>(run_index));
        hash_combine(seed, i);
        detail::fill_random(t, seed, in.low, in.high);
        out[in.name] = std::move(t);
    }
    return out;
}

}   // namespace dynrt::pipeline
