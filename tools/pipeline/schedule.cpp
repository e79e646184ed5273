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

// One schedule entry as read: its symbols' values, mode, repeat, feeds and
// per-input shapes.
struct Entry {
    size_t index = 0;
    YAML::Node node;
    std::string what;                                                  // "schedule entry N", for messages
    std::vector<std::pair<std::string, std::vector<int64_t>>> given;   // symbols in the order written
    bool product = false;
    size_t repeat = 1;
    std::map<std::string, std::shared_ptr<const HostTensor>> feeds;   // loaded once, shared by the runs
    std::map<std::string, int64_t> fed_symbols;
    std::map<std::string, std::string> fed_by;   // symbol -> the input that set it
    std::map<std::string, Shape> shaped;         // inputs given a shape: random data of it
};

// expand_schedule's work: the inputs' symbols, then each entry read, its
// run count checked, its combinations made and turned into runs.
class ScheduleExpander {
public:
    ScheduleExpander(const Source& src, const std::vector<InputSpec>& inputs) : src_(src), inputs_(inputs) {
        for (const auto& in : inputs)
            for (const auto& d : in.dims) {
                if (d.kind == DimSpec::Kind::symbol) symbols_.insert(d.symbol);
                anonymous_ = anonymous_ || d.kind == DimSpec::Kind::anonymous;
            }
        symbol_list_.assign(symbols_.begin(), symbols_.end());
    }

    std::vector<RunSpec> expand(const YAML::Node& schedule) {
        const std::vector<YAML::Node> entries = entries_of(schedule);
        for (size_t ei = 0; ei < entries.size(); ++ei) {
            const Entry e = read_entry(ei, entries[ei]);
            check_run_count(e);
            add_runs(e, e.product ? product_of(e) : zip_of(e));
        }
        return std::move(runs_);
    }

private:
    std::vector<YAML::Node> entries_of(const YAML::Node& schedule) const {
        std::vector<YAML::Node> entries;
        if (schedule && !schedule.IsNull()) {
            expect_seq(src_, schedule, "schedule");
            for (const auto& e : schedule) entries.push_back(e);
        }
        if (entries.empty()) {
            if (!symbols_.empty() || anonymous_)
                src_.fail(schedule, "the inputs have dynamic dims but there is no 'schedule' giving them values",
                          "schedule");
            entries.push_back(YAML::Node(YAML::NodeType::Map));   // one run of the static shapes
        }
        return entries;
    }

    Entry read_entry(size_t ei, const YAML::Node& node) const {
        Entry e;
        e.index = ei;
        e.node = node;
        e.what = "schedule entry " + std::to_string(ei);
        if (!node.IsMap()) src_.fail(node, e.what + " must be a map like {seq: 1..8}, got " + kind_name(node));
        read_symbols(e);
        if (const YAML::Node m = node["mode"]) {
            const std::string mode = read_string(src_, m, "mode");
            if (mode != "zip" && mode != "product")
                src_.fail(m, e.what + ": mode must be 'zip' or 'product', got '" + mode + "'", "mode");
            e.product = mode == "product";
        }
        if (const YAML::Node r = node["repeat"]) {
            const int64_t v = read_int(src_, r, e.what + " repeat");
            if (v < 1) src_.fail(r, e.what + ": repeat must be >= 1", "repeat");
            e.repeat = static_cast<size_t>(v);
        }
        read_feeds(e);
        read_shapes(e);
        return e;
    }

    // The symbols the entry gives, each a known one, in the order written.
    void read_symbols(Entry& e) const {
        std::set<std::string> seen;
        for (const auto& kv : e.node) {
            const std::string key = read_string(src_, kv.first, "schedule key");
            if (!seen.insert(key).second) src_.fail(kv.first, e.what + ": duplicate key '" + key + "'", key);
            if (kEntryKeys.count(key)) continue;
            if (!symbols_.count(key)) src_.fail(kv.first, unknown_symbol(e, key), key);
            e.given.emplace_back(key, read_values(src_, kv.second, key));
        }
    }

    std::string unknown_symbol(const Entry& e, const std::string& key) const {
        std::string msg = e.what + ": unknown symbol '" + key + "'";
        const auto close = close_names(key, symbol_list_, 1);
        if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
        if (symbol_list_.empty()) {
            msg += "; the inputs declare no symbols";
        } else {
            msg += "; symbols of the inputs:";
            for (size_t i = 0; i < symbol_list_.size(); ++i) msg += (i ? ", " : " ") + symbol_list_[i];
        }
        return msg + " (entry keys: feed, shapes, repeat, mode)";
    }

    void read_feeds(Entry& e) const {
        const YAML::Node f = e.node["feed"];
        if (!f) return;
        expect_map(src_, f, e.what + " feed");
        for (const auto& kv : f) {
            const std::string name = read_string(src_, kv.first, "feed input");
            const InputSpec& in = find_input(src_, kv.first, inputs_, name, e.what + ": feed");
            const std::string path = src_.resolve(read_string(src_, kv.second, "feed path"));
            std::shared_ptr<HostTensor> t;
            try {
                t = std::make_shared<HostTensor>(read_npy(path));
            } catch (const Error& err) {
                src_.fail(kv.second, "feed for input '" + name + "': " + err.what(), name);
            }
            bind_feed(src_, kv.second, in, *t, path, e.fed_symbols, e.fed_by);
            e.feeds[name] = t;
        }
    }

    void read_shapes(Entry& e) const {
        const YAML::Node sh = e.node["shapes"];
        if (!sh) return;
        expect_map(src_, sh, e.what + " shapes");
        for (const auto& kv : sh) {
            const std::string name = read_string(src_, kv.first, "shapes input");
            const InputSpec& in = find_input(src_, kv.first, inputs_, name, e.what + ": shapes");
            if (e.feeds.count(name)) src_.fail(kv.first, e.what + ": input '" + name + "' is fed and shaped", name);
            expect_seq(src_, kv.second, e.what + " shape of '" + name + "'");
            Shape shape;
            for (const auto& d : kv.second) {
                const int64_t v = read_int(src_, d, e.what + " shape of '" + name + "'");
                if (v < 0) src_.fail(d, e.what + ": input '" + name + "' has a negative dim", name);
                shape.push_back(v);
            }
            bind_shape(src_, kv.second, in, shape, e.what + ": input '" + name + "' has shape", e.fed_symbols,
                       e.fed_by);
            e.shaped[name] = shape;
        }
    }

    // The number of runs (combinations times repeat) is checked against
    // kMaxRuns before any is made, so three 1..10^6 ranges in product mode or
    // a repeat of 10^9 are an error, not gigabytes of run specs.
    void check_run_count(const Entry& e) const {
        size_t combos_count = 1;
        for (const auto& [sym, values] : e.given) {
            if (e.product) {
                if (__builtin_mul_overflow(combos_count, values.size(), &combos_count)) combos_count = SIZE_MAX;
            } else if (values.size() != 1) {
                combos_count = values.size();
            }
        }
        size_t entry_runs = 0;
        if (__builtin_mul_overflow(combos_count, e.repeat, &entry_runs)) entry_runs = SIZE_MAX;
        if (entry_runs <= kMaxRuns - runs_.size()) return;
        const bool by_repeat = e.repeat > 1 && combos_count <= kMaxRuns - runs_.size();
        const std::string count = entry_runs == SIZE_MAX ? "more than 2^64" : std::to_string(entry_runs);
        src_.fail(by_repeat ? e.node["repeat"] : e.node,
                  e.what + " expands to " + count + " runs (" + std::to_string(combos_count) +
                      (combos_count == 1 ? " combination" : " combinations") + " x repeat " + std::to_string(e.repeat) +
                      (runs_.empty() ? "" : ", after " + std::to_string(runs_.size()) + " runs of earlier entries") +
                      "), more than the limit of " + std::to_string(kMaxRuns) + " runs per pipeline",
                  by_repeat ? "repeat" : "schedule");
    }

    // mode: product, the Cartesian product of the symbols' values.
    static std::vector<std::map<std::string, int64_t>> product_of(const Entry& e) {
        std::vector<std::map<std::string, int64_t>> combos(1);
        for (const auto& [sym, values] : e.given) {
            std::vector<std::map<std::string, int64_t>> next;
            for (const auto& c : combos)
                for (int64_t v : values) {
                    auto m = c;
                    m[sym] = v;
                    next.push_back(std::move(m));
                }
            combos = std::move(next);
        }
        return combos;
    }

    // mode: zip, lists of equal length; a single value goes with every element.
    std::vector<std::map<std::string, int64_t>> zip_of(const Entry& e) const {
        size_t len = 1;
        std::string len_sym;
        for (const auto& [sym, values] : e.given) {
            if (values.size() == 1) continue;
            if (len != 1 && values.size() != len)
                src_.fail(e.node,
                          e.what + ": cannot zip '" + len_sym + "' (" + std::to_string(len) + " values) with '" + sym +
                              "' (" + std::to_string(values.size()) +
                              " values); give lists of equal length or add 'mode: product'",
                          sym);
            len = values.size();
            len_sym = sym;
        }
        std::vector<std::map<std::string, int64_t>> combos;
        for (size_t k = 0; k < len; ++k) {
            std::map<std::string, int64_t> m;
            for (const auto& [sym, values] : e.given) m[sym] = values.size() == 1 ? values[0] : values[k];
            combos.push_back(std::move(m));
        }
        return combos;
    }

    void add_runs(const Entry& e, const std::vector<std::map<std::string, int64_t>>& combos) {
        for (size_t rep = 0; rep < e.repeat; ++rep)
            for (const auto& combo : combos) runs_.push_back(run_of(e, combo));
    }

    // One run: the combination with the fed symbols, every symbol set, and
    // each input's shape (fed, given, or from its dims).
    RunSpec run_of(const Entry& e, const std::map<std::string, int64_t>& combo) const {
        RunSpec r;
        r.entry = e.index;
        r.where = src_.at(e.node);
        r.symbols = combo;
        r.feeds = e.feeds;
        for (const auto& [sym, v] : e.fed_symbols) {
            const auto it = r.symbols.find(sym);
            if (it != r.symbols.end() && it->second != v)
                src_.fail(e.node,
                          e.what + ": symbol '" + sym + "' is " + std::to_string(it->second) +
                              " here but the fed data makes it " + std::to_string(v),
                          sym);
            r.symbols[sym] = v;
        }
        for (const auto& sym : symbols_)
            if (!r.symbols.count(sym))
                src_.fail(e.node,
                          e.what + " gives no value for symbol '" + sym +
                              "' (every entry must set every symbol, or feed an input that has it)",
                          sym);
        for (const auto& in : inputs_) r.shapes[in.name] = shape_of(e, in, r.symbols);
        return r;
    }

    Shape shape_of(const Entry& e, const InputSpec& in, const std::map<std::string, int64_t>& symbols) const {
        if (e.feeds.count(in.name)) return e.feeds.at(in.name)->shape();
        if (e.shaped.count(in.name)) return e.shaped.at(in.name);
        Shape s;
        for (size_t k = 0; k < in.dims.size(); ++k) {
            const DimSpec& d = in.dims[k];
            if (d.kind == DimSpec::Kind::fixed) s.push_back(d.value);
            else if (d.kind == DimSpec::Kind::symbol) s.push_back(symbols.at(d.symbol));
            else
                src_.fail(e.node,
                          e.what + ": input '" + in.name + "' dim " + std::to_string(k) +
                              " is dynamic without a name, so only a feed can set it; name it (e.g. 'seq') or "
                              "add 'feed: {" +
                              in.name + ": file.npy}'",
                          in.name);
        }
        return s;
    }

    const Source& src_;
    const std::vector<InputSpec>& inputs_;
    std::set<std::string> symbols_;
    std::vector<std::string> symbol_list_;
    bool anonymous_ = false;
    std::vector<RunSpec> runs_;
};

}   // namespace

std::vector<RunSpec> expand_schedule(const Source& src, const YAML::Node& schedule,
                                     const std::vector<InputSpec>& inputs) {
    return ScheduleExpander(src, inputs).expand(schedule);
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
