// `dynrt onnx-test DIR --bisect`: the first tensor of a model whose value
// differs between the run as configured and the reference run (every pass
// off, the cpu engine's reference impls), and the pass that changed it
// (onnx_import.hpp, "bisect"; docs/onnx.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "file_io.hpp"
#include "onnx_import.hpp"
#include "tensor_compare.hpp"

namespace fs = std::filesystem;

namespace dynrt::onnx {

namespace {

using tools::in_file;

// What one run held: every node output read right after the node, by
// program reference ("node", "node:K").
struct Observed {
    std::map<std::string, HostTensor> values;
    std::map<std::string, std::string> absorbed;   // ref -> why it holds no value of its own
    std::vector<HostTensor> outputs;               // the graph outputs
    std::map<std::string, std::string> impls;      // program node -> the impl that ran it
};

// One import of the model on one network and request; the data sets run in
// order on it, as `dynrt onnx-test` runs them.
class ObservedRun {
public:
    ObservedRun(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine, const OnnxModel& model,
                const PassSet& passes, bool dynamic, bool reference) {
        ImportOptions io;
        io.dynamic_inputs = dynamic;
        io.passes = passes;
        graph_ = import_graph(registry, model, io);
        if (!graph_.program) throw Error("the model does not import: " + graph_.unsupported, in_file(model.file));
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile = dynamic && !reference;   // as onnx-test runs it; the reference waits for nothing
        opts.host_reference_only = reference;
        apply_passes(passes, nullptr, &opts);
        request_ = std::make_unique<InferRequest>(Network::create(graph_.program, engine, opts));
    }

    Observed run(const std::vector<HostTensor>& inputs) {
        Observed obs;
        for (size_t k = 0; k < graph_.inputs.size() && k < inputs.size(); ++k)
            request_->set_input(graph_.inputs[k].node, inputs[k]);
        request_->set_observer([&obs](const ObservedOutput& o) {
            const std::string ref = o.output == 0 ? o.name : o.name + ":" + std::to_string(o.output);
            if (o.value) obs.values[ref] = *o.value;
            else obs.absorbed[ref] = o.absorbed;
        });
        try {
            request_->infer();
        } catch (...) {
            request_->set_observer({});
            throw;
        }
        request_->set_observer({});
        for (size_t k = 0; k < graph_.outputs.size(); ++k) obs.outputs.push_back(request_->get_output(k));
        for (const NodeStats& s : request_->last_run().nodes) obs.impls[s.node] = s.impl;
        return obs;
    }

    const ImportedGraph& graph() const { return graph_; }

private:
    ImportedGraph graph_;
    std::unique_ptr<InferRequest> request_;
};

// Where a run holds an ONNX tensor's value.
struct Seen {
    const HostTensor* value = nullptr;
    std::string why;    // no value: why
    std::string node;   // the program node that holds it ("" for an import constant)
};

Seen find_tensor(const ImportedGraph& g, const Observed& obs, const std::string& tensor) {
    auto it = g.tensors.find(tensor);
    if (it == g.tensors.end()) return {nullptr, "not in the imported graph", {}};
    const ImportedTensor& t = it->second;
    if (!t.absorbed.empty()) return {nullptr, t.absorbed, {}};
    if (t.ref.empty()) {
        if (t.value) return {t.value.get(), {}, {}};
        return {nullptr, "no program node holds it", {}};
    }
    const size_t colon = t.ref.rfind(':');
    const std::string node = colon == std::string::npos ? t.ref : t.ref.substr(0, colon);
    const std::string out = colon == std::string::npos ? std::string() : t.ref.substr(colon);
    // Program::build's folds: follow the nodes that took a folded node's
    // output; a node folded away without leaving its value has none.
    const std::vector<FoldedNode>& folded = g.program->folded();
    std::string at = node;
    for (bool moved = true; moved;) {
        moved = false;
        for (const FoldedNode& f : folded) {
            if (f.node != at) continue;
            if (!f.into_takes_output)
                return {nullptr, f.pass + ": '" + at + "' (" + f.op + ") was folded into '" + f.into + "'", {}};
            at = f.into;
            moved = true;
            break;
        }
    }
    // `at` carries the value of the last node folded into it that took its output.
    const FoldedNode* last = nullptr;
    for (const FoldedNode& f : folded)
        if (f.into == at && f.into_takes_output) last = &f;
    if (last && last->node != node)
        return {nullptr,
                last->pass + ": '" + last->node + "' (" + last->op + ") was folded into '" + at +
                    "', whose output is now its value",
                {}};
    const std::string key = at + out;
    if (auto a = obs.absorbed.find(key); a != obs.absorbed.end()) return {nullptr, a->second, at};
    if (auto v = obs.values.find(key); v != obs.values.end()) return {&v->second, {}, at};
    return {nullptr, "the run did not observe '" + key + "'", at};
}

tools::Tolerance tolerance_for(DataType t, const BisectOptions& opt) {
    return is_floating(t) ? tools::Tolerance{opt.rtol, opt.atol} : tools::Tolerance{0, 0};
}

std::string max_abs_text(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// Every tensor the model's nodes produce, producer by producer in a
// topological order (the lowest model index first among the ready ones, as
// the importer orders them), with its node's label and op.
struct ModelTensor {
    std::string name, node, op_type;
    std::vector<std::string> inputs;   // the node's inputs ("" left out)
};

std::vector<ModelTensor> tensors_in_order(const OnnxModel& model) {
    const size_t n = model.nodes.size();
    std::map<std::string, size_t> producer;
    for (size_t k = 0; k < n; ++k)
        for (const std::string& o : model.nodes[k].outputs)
            if (!o.empty()) producer.emplace(o, k);
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> indeg(n, 0);
    for (size_t k = 0; k < n; ++k)
        for (const std::string& in : model.nodes[k].inputs) {
            auto p = producer.find(in);
            if (in.empty() || p == producer.end()) continue;
            users[p->second].push_back(k);
            ++indeg[k];
        }
    std::set<size_t> ready;
    for (size_t k = 0; k < n; ++k)
        if (indeg[k] == 0) ready.insert(k);
    std::vector<ModelTensor> out;
    while (!ready.empty()) {
        const size_t k = *ready.begin();
        ready.erase(ready.begin());
        const OnnxNode& node = model.nodes[k];
        const std::string label = node.name.empty() ? node.op_type + "_" + std::to_string(k) : node.name;
        for (const std::string& o : node.outputs)
            if (!o.empty()) out.push_back({o, label, node.op_type, node.inputs});
        for (size_t u : users[k])
            if (--indeg[u] == 0) ready.insert(u);
    }
    return out;   // a cycle leaves nodes out; the import says so
}

// The graph outputs of a run against the data set's: "" when they match.
std::string outputs_mismatch(const OnnxModel& model, const std::vector<HostTensor>& got,
                             const std::vector<HostTensor>& want, const BisectOptions& opt) {
    for (size_t k = 0; k < want.size() && k < got.size(); ++k) {
        const tools::Comparison c = tools::compare(got[k], want[k], tolerance_for(want[k].dtype(), opt));
        if (c.ok) continue;
        std::string what = c.mismatch;   // "element i: got g, reference r": the reference is the data set here
        if (const size_t at = what.find(", reference "); at != std::string::npos) what.replace(at, 12, ", expected ");
        return "output '" + model.outputs[k].name + "': " + what + ", max abs " + max_abs_text(c.max_abs);
    }
    return {};
}

struct DataSet {
    std::string name;
    std::vector<HostTensor> inputs, expected;
};

// The reference: every pass off on the cpu engine's reference impls. A model
// that needs an import pass to import at all (a value constant folding
// computes, which an op's mapping must know) keeps the configured import
// passes, and the report says so.
std::unique_ptr<ObservedRun> make_reference(const std::shared_ptr<const Registry>& registry, const OnnxModel& model,
                                            const BisectOptions& opt, std::string& note) {
    EngineConfig cfg;
    cfg.device = "cpu";
    const EnginePtr cpu = registry->create_engine("cpu", cfg);
    try {
        return std::make_unique<ObservedRun>(registry, cpu, model, PassSet::none(), false, true);
    } catch (const Error& e) {
        PassSet keep = PassSet::none();
        std::string kept;
        for (const PassInfo& p : passes())
            if (p.stage == PassStage::import && opt.passes.on(p.name)) {
                keep.set(p.name, true);
                kept += (kept.empty() ? "" : ", ") + std::string(p.name);
            }
        if (kept.empty()) throw;
        auto run = std::make_unique<ObservedRun>(registry, cpu, model, keep, false, true);
        note = "the reference keeps " + kept + ": with every pass off " + e.what();
        return run;
    }
}

// Sets `s.diff`, `s.compared` and `s.unobserved` from one data set's two runs.
void first_difference(const std::vector<ModelTensor>& order, const ImportedGraph& conf_graph, const Observed& conf,
                      const ImportedGraph& ref_graph, const Observed& ref, const BisectOptions& opt, BisectSet& s) {
    std::map<std::string, std::string> state;   // tensor -> what the comparison said
    for (const ModelTensor& t : order) {
        const Seen c = find_tensor(conf_graph, conf, t.name);
        const Seen r = find_tensor(ref_graph, ref, t.name);
        if (!c.value || !r.value) {
            if (!c.value) s.unobserved.push_back(t.name + ": " + c.why);
            state[t.name] = c.value ? "not in the reference: " + r.why : "no value of its own: " + c.why;
            continue;
        }
        ++s.compared;
        const tools::Comparison cmp = tools::compare(*c.value, *r.value, tolerance_for(r.value->dtype(), opt));
        state[t.name] = "matches";
        if (cmp.ok) continue;
        TensorDiff d;
        d.tensor = t.name;
        d.node = t.node;
        d.op_type = t.op_type;
        d.layout = c.value->layout().to_string();
        if (c.value->layout() != r.value->layout()) d.layout += " (reference " + r.value->layout().to_string() + ")";
        d.program_node = c.node;
        for (const std::string& in : t.inputs) {
            if (in.empty()) continue;
            auto st = state.find(in);
            d.inputs.push_back("'" + in + "' (" + (st == state.end() ? "graph input or initializer" : st->second) +
                               ")");
        }
        if (auto impl = conf.impls.find(c.node); impl != conf.impls.end()) d.impl = impl->second;
        d.max_abs = cmp.max_abs;
        d.mismatch = cmp.mismatch;
        if (c.value->shape() == r.value->shape()) {
            d.first = cmp.worst >= 2 ? cmp.worst - 2 : 0;
            for (size_t i = d.first; i < r.value->count() && i < d.first + 6; ++i) {
                d.got.push_back(c.value->get_as_double(i));
                d.want.push_back(r.value->get_as_double(i));
            }
        }
        s.diff = std::move(d);
        return;
    }
}

std::string values_text(const std::vector<double>& v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return os.str();
}

}   // namespace

bool BisectReport::failed() const {
    return std::any_of(sets.begin(), sets.end(),
                       [](const BisectSet& s) { return !s.error.empty() || s.diff || !s.outputs_match; });
}

namespace {

std::vector<DataSet> read_data_sets(const std::string& folder, const OnnxModel& model) {
    std::vector<fs::path> set_paths;
    for (const auto& e : fs::directory_iterator(folder))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
            set_paths.push_back(e.path());
    std::sort(set_paths.begin(), set_paths.end());
    if (set_paths.empty()) throw Error("no test_data_set_* folder", in_file(folder));
    std::vector<DataSet> data;
    for (const fs::path& p : set_paths)
        data.push_back({p.filename().string(), read_data_set(p.string(), "input_", model.inputs),
                        read_data_set(p.string(), "output_", model.outputs)});
    return data;
}

// bisect()'s work: the reference once, then per mode the configured run and,
// where a tensor differs, each pass that was on tried off alone.
class Bisector {
public:
    Bisector(const std::shared_ptr<const Registry>& registry, const std::string& folder, const BisectOptions& opt)
        : registry_(registry), opt_(opt), model_(load_model((fs::path(folder) / "model.onnx").string())),
          data_(read_data_sets(folder, model_)), order_(tensors_in_order(model_)) {
        report_.folder = folder;
        report_.passes = opt.passes.to_string();
        report_.device = opt.device;
        EngineConfig cfg;
        cfg.device = opt.device;
        engine_ = registry->create_engine(opt.device, cfg);
    }

    // The reference, once for every mode: its values do not depend on how
    // the configured run declares its inputs.
    void run_reference() {
        reference_ = make_reference(registry_, model_, opt_, report_.reference_note);
        for (const DataSet& d : data_) ref_obs_.push_back(reference_->run(d.inputs));
    }

    void run_mode(bool dynamic) {
        const size_t first_set = report_.sets.size();
        run_configured(dynamic);
        size_t last_diff = SIZE_MAX;
        for (size_t i = first_set; i < report_.sets.size(); ++i)
            if (report_.sets[i].diff) last_diff = i - first_set;
        if (last_diff == SIZE_MAX) return;
        for (const PassInfo& p : passes())
            if (opt_.passes.on(p.name)) try_without(p.name, dynamic, first_set, last_diff);
    }

    BisectReport finish() { return std::move(report_); }

private:
    // The data sets in order on one network as configured: outputs against
    // the expected ones, and the first tensor that differs from the reference.
    void run_configured(bool dynamic) {
        std::unique_ptr<ObservedRun> run;
        std::string setup_error;
        try {
            run = std::make_unique<ObservedRun>(registry_, engine_, model_, opt_.passes, dynamic, false);
        } catch (const std::exception& e) {
            setup_error = e.what();
        }
        for (size_t i = 0; i < data_.size(); ++i) {
            BisectSet s;
            s.data_set = data_[i].name;
            s.mode = dynamic ? "dynamic" : "static";
            const std::string ref_bad = outputs_mismatch(model_, ref_obs_[i].outputs, data_[i].expected, opt_);
            s.reference_matches = ref_bad.empty();
            s.reference_detail = ref_bad;
            if (!run) {
                s.error = setup_error;
                report_.sets.push_back(std::move(s));
                continue;
            }
            try {
                const Observed conf = run->run(data_[i].inputs);
                const std::string bad = outputs_mismatch(model_, conf.outputs, data_[i].expected, opt_);
                s.outputs_match = bad.empty();
                s.outputs_detail = bad;
                first_difference(order_, run->graph(), conf, reference_->graph(), ref_obs_[i], opt_, s);
            } catch (const std::exception& e) {
                s.error = e.what();
            }
            report_.sets.push_back(std::move(s));
        }
    }

    // Pass `pass` off alone: the data sets again in order, on one network,
    // and the differing tensor of each set against the reference's.
    void try_without(const std::string& pass, bool dynamic, size_t first_set, size_t last_diff) {
        PassSet without = opt_.passes;
        without.set(pass, false);
        std::unique_ptr<ObservedRun> trial;
        std::string trial_error;
        try {
            trial = std::make_unique<ObservedRun>(registry_, engine_, model_, without, dynamic, false);
        } catch (const std::exception& e) {
            trial_error = e.what();
        }
        for (size_t i = 0; i <= last_diff; ++i) {
            BisectSet& s = report_.sets[first_set + i];
            PassTrial t;
            t.pass = pass;
            Observed obs;
            try {
                if (!trial) throw Error(trial_error);
                obs = trial->run(data_[i].inputs);
            } catch (const std::exception& e) {
                t.outcome = std::string("does not run without it: ") + e.what();
                if (s.diff) s.trials.push_back(std::move(t));
                continue;
            }
            if (!s.diff) continue;
            const Seen got = find_tensor(trial->graph(), obs, s.diff->tensor);
            const Seen want = find_tensor(reference_->graph(), ref_obs_[i], s.diff->tensor);
            if (!got.value) {
                t.outcome = "no value of its own without it (" + got.why + ")";
            } else {
                const tools::Comparison c =
                    tools::compare(*got.value, *want.value, tolerance_for(want.value->dtype(), opt_));
                t.fixes = c.ok;
                t.outcome = c.ok ? "right" : "still differs (max abs " + max_abs_text(c.max_abs) + ")";
            }
            if (t.fixes) s.blamed.push_back(t.pass);
            s.trials.push_back(std::move(t));
        }
    }

    std::shared_ptr<const Registry> registry_;
    const BisectOptions& opt_;
    const OnnxModel model_;
    const std::vector<DataSet> data_;
    const std::vector<ModelTensor> order_;
    EnginePtr engine_;
    std::unique_ptr<ObservedRun> reference_;
    std::vector<Observed> ref_obs_;
    BisectReport report_;
};

}   // namespace

BisectReport bisect(const std::shared_ptr<const Registry>& registry, const std::string& folder,
                    const BisectOptions& opt) {
    Bisector b(registry, folder, opt);
    b.run_reference();
    b.run_mode(false);
    if (opt.dynamic_pass) b.run_mode(true);
    return b.finish();
}

std::string bisect_text(const BisectReport& r) {
    std::ostringstream os;
    os << "bisect " << r.folder << ": device " << r.device << ", passes " << r.passes
       << "; reference: cpu reference impls, every pass off\n";
    if (!r.reference_note.empty()) os << "  note: " << r.reference_note << "\n";
    for (const BisectSet& s : r.sets) {
        os << "  " << s.data_set << " (" << s.mode << "): ";
        if (!s.error.empty()) {
            os << "error: " << s.error << "\n";
            continue;
        }
        os << "outputs " << (s.outputs_match ? "match" : "DIFFER from") << " the data set";
        if (!s.outputs_match) os << " (" << s.outputs_detail << ")";
        os << "; the reference's " << (s.reference_matches ? "match" : "DIFFER") << "\n";
        if (!s.reference_matches) os << "    reference: " << s.reference_detail << "\n";
        if (!s.diff) {
            os << "    no tensor differs from the reference (" << s.compared << " compared)\n";
            continue;
        }
        const TensorDiff& d = *s.diff;
        os << "    first difference: tensor '" << d.tensor << "' of node '" << d.node << "' (" << d.op_type << "), "
           << d.layout << ", max abs diff " << max_abs_text(d.max_abs) << " (" << d.mismatch << ")\n";
        if (!d.got.empty()) {
            os << "      got       " << values_text(d.got) << " from element " << d.first << "\n";
            os << "      reference " << values_text(d.want) << "\n";
        }
        os << "      held by dynrt node '" << d.program_node << "'"
           << (d.impl.empty() ? std::string() : ", impl " + d.impl) << "; " << s.compared - 1
           << " tensors before it match\n";
        for (const std::string& in : d.inputs) os << "      input " << in << "\n";
        if (!s.unobserved.empty()) {
            os << "      without a value of their own before it:\n";
            const size_t show = 8, n = s.unobserved.size();
            if (n > show) os << "        ... " << n - show << " more\n";
            for (size_t i = n > show ? n - show : 0; i < n; ++i) os << "        " << s.unobserved[i] << "\n";
        }
        std::string still;
        for (const PassTrial& t : s.trials) {
            if (t.outcome.rfind("still differs", 0) == 0) still += (still.empty() ? "" : ", ") + t.pass;
            else os << "      without " << t.pass << ": " << t.outcome << "\n";
        }
        if (!still.empty()) os << "      still differs without: " << still << "\n";
        if (s.blamed.empty()) {
            os << "    no single pass makes it right: the impl that computes it differs from the reference";
            if (!d.impl.empty()) os << " (" << d.impl << ")";
            os << "\n";
        } else if (s.blamed.size() == 1) {
            os << "    changed by pass " << s.blamed[0] << ": without it alone the tensor is right\n";
        } else {
            os << "    changed by passes";
            for (size_t i = 0; i < s.blamed.size(); ++i) os << (i ? ", " : " ") << s.blamed[i];
            os << ": without any one of them the tensor is right (the fault is where they meet)\n";
        }
    }
    os << (r.failed() ? "bisect: a difference was found\n" : "bisect: no difference\n");
    return os.str();
}

}   // namespace dynrt::onnx
