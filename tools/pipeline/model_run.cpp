// `dynrt run MODEL.onnx`: the runs of a model from the command line, built
// here directly (no pipeline text in between), so every error names the model
// and the input it is about.
//
//   --shapes "x=[1,7]"          an input's shape (one run per --shapes)
//   --shapes "batch=1;seq=16"   dims by name: every input dim with that symbol
//   --input x=a.npy             that input's data in every run
//   --input x=a.npy,b.pb        one file per run, in run order
//   --input x=DIR               DIR's .npy/.pb files in name order, one per run
//   --inputs DIR                DIR/run_<k>/<input>.npy|.pb (or test_data_set_<k>/input_<K>.pb)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "file_io.hpp"
#include "int_range.hpp"
#include "model_cli.hpp"
#include "yaml_util.hpp"

#ifdef DYNRT_HAVE_ONNX
#include "onnx_import.hpp"
#endif

namespace fs = std::filesystem;

namespace dynrt::pipeline {

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s.empty() ? std::string("none") : s;
}

// One item of a --shapes spec: an input's shape or a dim's value.
struct ShapesSpec {
    std::string text;                               // as given
    std::vector<std::pair<size_t, Shape>> shapes;   // input index -> shape
    std::vector<std::pair<std::string, int64_t>> dims;
};

// A data file given for one input in one run, and which option gave it.
struct FeedFile {
    std::string path;
    std::string option;   // "--input" or "--inputs"
};

class ModelRun {
public:
    ModelRun(const ModelRunArgs& args, std::shared_ptr<const Registry> registry)
        : args_(args), registry_(std::move(registry)) {}

    Pipeline build(const PassOverrides& passes) {
        const auto start = std::chrono::steady_clock::now();
        p_.file = args_.file;
        p_.name = fs::path(args_.file).stem().string();
        override_passes(passes);
        ModelGraph g = load_model_graph(args_.file, registry_, p_.run.passes);
        p_.program = g.program;
        p_.inputs = g.inputs;
        onnx_names_ = g.onnx_inputs;
        // Errors about an input name the model and the input, not a node.
        for (InputSpec& in : p_.inputs) in.where = model();
        p_.outputs = g.outputs;
        p_.import_notes = import_notes(g);
        std::set<std::string> symbols;
        for (const InputSpec& in : p_.inputs)
            for (const DimSpec& d : in.dims)
                if (d.kind == DimSpec::Kind::symbol) symbols.insert(d.symbol);
        p_.symbols.assign(symbols.begin(), symbols.end());

        for (const std::string& r : args_.ranges) read_range(r);
        std::vector<ShapesSpec> specs;
        for (const std::string& s : args_.shapes) specs.push_back(read_shapes(s));
        std::map<size_t, std::vector<FeedFile>> files;   // input -> one file per run, or one for all
        for (const std::string& f : args_.inputs) read_input(f, files);
        std::vector<std::map<size_t, FeedFile>> folders;
        if (!args_.inputs_dir.empty()) folders = read_inputs_dir(args_.inputs_dir);

        // The number of runs: the most any option gives; each gives that many
        // or one for every run.
        size_t runs = std::max<size_t>({1, specs.size(), folders.size()});
        for (const auto& [i, list] : files) runs = std::max(runs, list.size());
        if (runs > kMaxRuns)
            throw ModelArgsError(std::to_string(runs) + " runs is more than the limit of " + std::to_string(kMaxRuns),
                                 in_file(args_.file));
        auto check_count = [&](size_t count, const std::string& what) {
            if (count > 1 && count != runs)
                throw ModelArgsError(what + " gives " + std::to_string(count) + " runs, but " +
                                         runs_text(runs, specs, files, folders) +
                                         "; give one per run, or one for every run",
                                     in_file(args_.file));
        };
        check_count(specs.size(), "--shapes (given " + std::to_string(specs.size()) + " times)");
        for (const auto& [i, list] : files)
            check_count(list.size(), "--input " + p_.inputs[i].name + " (" + std::to_string(list.size()) + " files)");
        check_count(folders.size(),
                    "--inputs " + args_.inputs_dir + " (" + std::to_string(folders.size()) + " run folders)");

        for (size_t k = 0; k < runs; ++k) {
            std::map<size_t, FeedFile> feeds;
            for (const auto& [i, list] : files) feeds[i] = list.size() == 1 ? list[0] : list[k];
            if (!folders.empty())
                for (const auto& [i, f] : folders.size() == 1 ? folders[0] : folders[k]) {
                    if (feeds.count(i))
                        throw ModelArgsError("input '" + p_.inputs[i].name + "' is given by --input (" + feeds[i].path +
                                                 ") and by --inputs (" + f.path + "); give it once",
                                             in_file(args_.file));
                    feeds[i] = f;
                }
            static const ShapesSpec kNoShapes;
            p_.runs.push_back(make_run(k, specs.empty() ? kNoShapes : specs[specs.size() == 1 ? 0 : k], feeds));
        }
        p_.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        return std::move(p_);
    }

private:
    // DYNRT_PASSES, then --passes, over the defaults (as a pipeline file's
    // run.passes would be overridden).
    void override_passes(const PassOverrides& passes) {
        RunSettings& r = p_.run;
        const std::pair<const std::optional<std::string>*, const char*> sources[] = {{&passes.env, "env"},
                                                                                     {&passes.cli, "cli"}};
        for (const auto& [spec, name] : sources) {
            if (!*spec) continue;
            r.passes.apply(**spec, std::string(name) == "env" ? "DYNRT_PASSES" : "--passes");
            r.passes_source = r.passes_source == "default" ? name : r.passes_source + "+" + name;
        }
    }

    ErrorContext model() const { return in_file(args_.file); }

    std::string inputs_list() const {
        std::vector<std::string> names;
        for (const InputSpec& in : p_.inputs) names.push_back(in.name);
        return join(names);
    }

    // The input named `name` (its name in the program, or in the model when
    // that differs); SIZE_MAX when none is.
    size_t find_input(const std::string& name) const {
        for (size_t i = 0; i < p_.inputs.size(); ++i)
            if (p_.inputs[i].name == name) return i;
        for (size_t i = 0; i < onnx_names_.size() && i < p_.inputs.size(); ++i)
            if (onnx_names_[i] == name) return i;
        return SIZE_MAX;
    }

    size_t need_input(const std::string& name, const std::string& option) const {
        const size_t i = find_input(name);
        if (i != SIZE_MAX) return i;
        std::vector<std::string> names;
        for (const InputSpec& in : p_.inputs) names.push_back(in.name);
        std::string msg = option + ": the model has no input '" + name + "'";
        const auto close = close_names(name, names, 1);
        if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
        throw ModelArgsError(msg + "; its inputs: " + inputs_list(), model());
    }

    std::pair<std::string, std::string> split(const std::string& item, const std::string& option,
                                              const std::string& form) const {
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw ModelArgsError(option + " takes " + form + ", got '" + item + "'", model());
        return {item.substr(0, eq), item.substr(eq + 1)};
    }

    void read_range(const std::string& item) {
        const auto [name, range] = split(item, "--input-range", "name=LOW..HIGH");
        InputSpec& in = p_.inputs[need_input(name, "--input-range")];
        const size_t dots = range.find("..");
        auto number = [](const std::string& s, double& out) {
            char* end = nullptr;
            out = std::strtod(s.c_str(), &end);
            return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out);
        };
        double lo = 0, hi = 0;
        if (dots == std::string::npos || !number(range.substr(0, dots), lo) || !number(range.substr(dots + 2), hi))
            throw ModelArgsError("--input-range takes name=LOW..HIGH, got '" + item + "'", model());
        if (const std::string why = detail::random_range_problem(in.dtype, lo, hi); !why.empty())
            throw ModelArgsError("--input-range: input '" + name + "': " + why, model());
        in.low = lo;
        in.high = hi;
    }

    // "x=[1,7];batch=1": input names first (a name that is both an input and
    // a dim is the input), then the dims' symbols.
    ShapesSpec read_shapes(const std::string& text) const {
        ShapesSpec spec;
        spec.text = text;
        std::set<std::string> seen;
        size_t at = 0;
        while (at <= text.size()) {
            size_t end = text.find(';', at);
            if (end == std::string::npos) end = text.size();
            const std::string item = text.substr(at, end - at);
            at = end + 1;
            if (item.empty()) continue;
            const auto [name, value] = split(item, "--shapes", "name=[d0,d1,...] or dim=N, separated by ';'");
            if (!seen.insert(name).second)
                throw ModelArgsError("--shapes \"" + text + "\" gives '" + name + "' twice", model());
            const size_t input = find_input(name);
            if (input != SIZE_MAX) {
                if (value.size() < 2 || value.front() != '[' || value.back() != ']')
                    throw ModelArgsError("--shapes: '" + name + "' is an input: give its shape, " + name +
                                             "=[d0,d1,...], got '" + item + "'" +
                                             (std::count(p_.symbols.begin(), p_.symbols.end(), name)
                                                  ? " (it is also a dim's name; an input name wins)"
                                                  : ""),
                                         model());
                Shape shape;
                const std::string list = value.substr(1, value.size() - 2);
                size_t pos = 0;
                while (!list.empty() && pos <= list.size()) {
                    size_t comma = list.find(',', pos);
                    if (comma == std::string::npos) comma = list.size();
                    int64_t v = 0;
                    if (!tools::parse_int64(list.substr(pos, comma - pos), v) || v < 0)
                        throw ModelArgsError("--shapes: '" + item + "' has a dim that is no integer >= 0", model());
                    shape.push_back(v);
                    pos = comma + 1;
                }
                spec.shapes.emplace_back(input, shape);
                continue;
            }
            if (std::find(p_.symbols.begin(), p_.symbols.end(), name) == p_.symbols.end()) {
                std::vector<std::string> names = p_.symbols;
                for (const InputSpec& in : p_.inputs) names.push_back(in.name);
                std::string msg = "--shapes: '" + name + "' is neither an input nor a dynamic dim of the model";
                const auto close = close_names(name, names, 1);
                if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
                throw ModelArgsError(msg + "; its inputs: " + inputs_list() + "; its dynamic dims: " +
                                         join(p_.symbols) + " (`dynrt info " + args_.file + "` lists them)",
                                     model());
            }
            int64_t v = 0;
            if (!tools::parse_int64(value, v) || v < 0)
                throw ModelArgsError("--shapes: '" + name + "' is a dim: give it an integer >= 0, got '" + item + "'",
                                     model());
            spec.dims.emplace_back(name, v);
        }
        return spec;
    }

    static bool tensor_file(const fs::path& p) { return p.extension() == ".npy" || p.extension() == ".pb"; }

    // --input name=FILE | name=F0,F1,... | name=DIR
    void read_input(const std::string& item, std::map<size_t, std::vector<FeedFile>>& files) const {
        const auto [name, value] = split(item, "--input", "name=FILE, name=FILE0,FILE1,... or name=DIR");
        const size_t i = need_input(name, "--input");
        if (files.count(i)) throw ModelArgsError("--input gives input '" + name + "' twice", model());
        std::vector<FeedFile>& list = files[i];
        std::error_code ec;
        if (fs::is_directory(value, ec)) {
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(value, ec))
                if (e.is_regular_file() && tensor_file(e.path())) found.push_back(e.path().string());
            std::sort(found.begin(), found.end());
            if (found.empty())
                throw ModelArgsError("--input " + name + "=" + value + ": the folder holds no .npy or .pb file",
                                     model());
            for (const std::string& f : found) list.push_back({f, "--input"});
            return;
        }
        size_t at = 0;
        while (at <= value.size()) {
            size_t comma = value.find(',', at);
            if (comma == std::string::npos) comma = value.size();
            const std::string f = value.substr(at, comma - at);
            if (f.empty()) throw ModelArgsError("--input '" + item + "' has an empty file name", model());
            list.push_back({f, "--input"});
            at = comma + 1;
        }
    }

    // --inputs DIR: one folder per run, run_<k> (as --save-outputs writes
    // them) or test_data_set_<k> (the ONNX test layout), in the order of k.
    // A folder's files are <input>.npy|.pb (the input's name as
    // --save-outputs makes file names) or input_<K>.npy|.pb (the model's
    // input K); output_* and index.json are left alone.
    std::vector<std::map<size_t, FeedFile>> read_inputs_dir(const std::string& dir) const {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw ModelArgsError("--inputs " + dir + ": no such folder", model());
        std::vector<std::pair<int64_t, fs::path>> runs;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            if (!e.is_directory()) continue;
            const std::string n = e.path().filename().string();
            for (const std::string prefix : {"run_", "test_data_set_"}) {
                int64_t k = 0;
                if (n.rfind(prefix, 0) == 0 && tools::parse_int64(n.substr(prefix.size()), k) && k >= 0)
                    runs.emplace_back(k, e.path());
            }
        }
        if (runs.empty())
            throw ModelArgsError("--inputs " + dir + ": no run_<k> or test_data_set_<k> folder in it", model());
        std::sort(runs.begin(), runs.end());
        std::vector<std::string> names;
        for (const InputSpec& in : p_.inputs) names.push_back(in.name);
        const std::vector<std::string> stems = tools::output_file_names(names, "");
        std::vector<std::map<size_t, FeedFile>> out;
        for (const auto& [k, folder] : runs) {
            std::map<size_t, FeedFile> run;
            std::vector<fs::path> entries;
            for (const auto& e : fs::directory_iterator(folder, ec)) entries.push_back(e.path());
            std::sort(entries.begin(), entries.end());
            for (const fs::path& f : entries) {
                const std::string file = f.filename().string(), stem = f.stem().string();
                if (file == "index.json" || file.rfind("output_", 0) == 0) continue;
                size_t input = SIZE_MAX;
                if (tensor_file(f)) {
                    input = std::find(stems.begin(), stems.end(), stem) - stems.begin();
                    if (input == stems.size()) input = find_input(stem);
                    int64_t index = 0;
                    if (input == SIZE_MAX && stem.rfind("input_", 0) == 0 &&
                        tools::parse_int64(stem.substr(6), index) && index >= 0 &&
                        static_cast<size_t>(index) < p_.inputs.size())
                        input = static_cast<size_t>(index);
                }
                if (input == SIZE_MAX)
                    throw ModelArgsError("--inputs: " + f.string() +
                                             " is no input's file; a run folder holds <input>.npy or <input>.pb (or "
                                             "input_<K>.pb for the model's input K); the inputs: " +
                                             inputs_list(),
                                         model());
                if (run.count(input))
                    throw ModelArgsError("--inputs: " + folder.string() + " holds two files for input '" +
                                             p_.inputs[input].name + "': " + run[input].path + " and " + f.string(),
                                         model());
                run[input] = {f.string(), "--inputs"};
            }
            out.push_back(std::move(run));
        }
        return out;
    }

    std::string runs_text(size_t runs, const std::vector<ShapesSpec>& specs,
                          const std::map<size_t, std::vector<FeedFile>>& files,
                          const std::vector<std::map<size_t, FeedFile>>& folders) const {
        std::string by;
        if (specs.size() == runs) by = "--shapes given " + std::to_string(runs) + " times";
        for (const auto& [i, list] : files)
            if (by.empty() && list.size() == runs)
                by = "--input " + p_.inputs[i].name + " gives " + std::to_string(runs) + " files";
        if (by.empty() && folders.size() == runs) by = "--inputs holds " + std::to_string(runs) + " run folders";
        return "there are " + std::to_string(runs) + " runs (" + by + ")";
    }

    std::shared_ptr<const HostTensor> read_file(size_t input, const FeedFile& f) {
        const auto hit = cache_.find(f.path);
        if (hit != cache_.end()) return hit->second;
        std::shared_ptr<HostTensor> t;
        try {
            if (fs::path(f.path).extension() == ".pb") {
#ifdef DYNRT_HAVE_ONNX
                t = std::make_shared<HostTensor>(onnx::read_tensor(f.path));
#else
                throw Error("reading .pb tensors needs ONNX support (install libonnx-dev and libprotobuf-dev)",
                            in_file(f.path));
#endif
            } else {
                t = std::make_shared<HostTensor>(read_npy(f.path));
            }
        } catch (const Error& e) {
            throw Error("input '" + p_.inputs[input].name + "': " + f.option + ": " + e.what(), model());
        }
        cache_[f.path] = t;
        return t;
    }

    // Checks `shape` against input `i` and binds the symbols of its dims;
    // `what` says where it comes from ("run 0: a.npy has shape").
    void bind(size_t i, const Shape& shape, const std::string& what, std::map<std::string, int64_t>& bound,
              std::map<std::string, std::string>& bound_by) const {
        const InputSpec& in = p_.inputs[i];
        const PartialShape declared = in.partial_shape();
        auto fail = [&](const std::string& why) {
            throw Error("input '" + in.name + "': " + what + " " + shape.to_string() +
                            ", which does not fit the declared " + declared.to_string() + why,
                        model());
        };
        if (shape.size() != in.dims.size())
            fail(" (rank " + std::to_string(shape.size()) + " vs " + std::to_string(in.dims.size()) + ")");
        for (size_t k = 0; k < in.dims.size(); ++k) {
            const DimSpec& d = in.dims[k];
            if (d.kind == DimSpec::Kind::fixed && shape[k] != d.value) fail(" at dim " + std::to_string(k));
            if (d.kind == DimSpec::Kind::anonymous && !d.bounds.contains(shape[k]))
                fail(" at dim " + std::to_string(k));
            if (d.kind != DimSpec::Kind::symbol) continue;
            const auto it = bound.find(d.symbol);
            if (it != bound.end() && it->second != shape[k])
                throw Error("input '" + in.name + "': " + what + " " + shape.to_string() + ": it sets symbol '" +
                                d.symbol + "' to " + std::to_string(shape[k]) + ", but " + bound_by.at(d.symbol) +
                                " sets it to " + std::to_string(it->second),
                            model());
            bound[d.symbol] = shape[k];
            bound_by[d.symbol] = "input '" + in.name + "' (" + what + " " + shape.to_string() + ")";
        }
    }

    RunSpec make_run(size_t k, const ShapesSpec& spec, const std::map<size_t, FeedFile>& feeds) {
        const std::string run = "run " + std::to_string(k);
        RunSpec r;
        r.entry = k;
        r.where = model();
        std::map<std::string, int64_t> bound;
        std::map<std::string, std::string> bound_by;
        for (const auto& [sym, v] : spec.dims) {
            bound[sym] = v;
            bound_by[sym] = "--shapes \"" + spec.text + "\"";
        }
        for (const auto& [i, f] : feeds) {
            const InputSpec& in = p_.inputs[i];
            for (const auto& [j, s] : spec.shapes)
                if (j == i)
                    throw ModelArgsError("input '" + in.name + "' is both fed (" + f.option + " " + f.path +
                                             ") and shaped (--shapes \"" + spec.text + "\") in " + run,
                                         model());
            const auto t = read_file(i, f);
            if (t->dtype() != in.dtype)
                throw Error("input '" + in.name + "': " + run + ": " + f.path + " holds " + to_string(t->dtype()) +
                                ", the model declares " + to_string(in.dtype),
                            model());
            bind(i, t->shape(), run + ": " + f.path + " has shape", bound, bound_by);
            r.feeds[in.name] = t;
            r.shapes[in.name] = t->shape();
        }
        for (const auto& [i, s] : spec.shapes) {
            bind(i, s, run + ": --shapes gives", bound, bound_by);
            r.shapes[p_.inputs[i].name] = s;
        }
        for (const InputSpec& in : p_.inputs) {
            if (r.shapes.count(in.name)) continue;
            Shape s;
            for (size_t d = 0; d < in.dims.size(); ++d) {
                const DimSpec& dim = in.dims[d];
                if (dim.kind == DimSpec::Kind::fixed) {
                    s.push_back(dim.value);
                } else if (dim.kind == DimSpec::Kind::symbol && bound.count(dim.symbol)) {
                    s.push_back(bound.at(dim.symbol));
                } else {
                    missing(k, in, d);
                }
            }
            r.shapes[in.name] = s;
        }
        r.symbols = bound;
        return r;
    }

    // A dynamic dim no option gave a value: what the model takes and a
    // command that runs it.
    [[noreturn]] void missing(size_t run, const InputSpec& in, size_t dim) const {
        const std::string sym = in.dims[dim].symbol;
        std::string msg;
        if (args_.shapes.empty() && args_.inputs.empty() && args_.inputs_dir.empty())
            msg = "the model has dynamic dims: give their values with --shapes (by dim name or per input)";
        else
            msg = "run " + std::to_string(run) + " gives no value for dim '" + sym + "' (input '" + in.name + "' dim " +
                  std::to_string(dim) + "): give it with --shapes \"" + sym + "=N\", the input's shape or its data";
        std::string listing, example;
        try {
            const ModelInfo info = describe_model(args_.file, registry_);
            listing = model_inputs_text(info);
            example = example_command(info);
        } catch (const Error&) {
        }
        if (!listing.empty()) msg += "\n" + listing;
        if (!example.empty()) msg += "example: " + example;
        throw ModelArgsError(msg, model());
    }

    const ModelRunArgs& args_;
    std::shared_ptr<const Registry> registry_;
    Pipeline p_;
    std::vector<std::string> onnx_names_;                              // per input, its name in the model
    std::map<std::string, std::shared_ptr<const HostTensor>> cache_;   // path -> tensor, read once
};

}   // namespace

Pipeline load_model_run(const ModelRunArgs& args, std::shared_ptr<const Registry> registry,
                        const PassOverrides& passes) {
    if (!registry) throw Error("no registry given", in_file(args.file));
    return ModelRun(args, std::move(registry)).build(passes);
}

}   // namespace dynrt::pipeline
