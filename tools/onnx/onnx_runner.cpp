// Node-test folders: reading the cases, running them statically and through the
// dynamic path, comparing, and the summaries (text and markdown).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "file_io.hpp"
#include "onnx_import.hpp"
#include "single_node.hpp"
#include "tensor_compare.hpp"

namespace fs = std::filesystem;

namespace dynrt::onnx {

namespace {

using tools::in_file;

std::string type_text(const ValueInfo& v) {
    const auto dt = dtype_from_onnx(v.onnx_type);
    return dt ? to_string(*dt) : onnx_type_name(v.onnx_type);
}

// Reads and checks one side (inputs or outputs) of a data set against the model.
std::vector<HostTensor> read_side(const fs::path& ds, const char* prefix, const std::vector<ValueInfo>& declared) {
    std::vector<HostTensor> out;
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(ds))
        if (e.path().filename().string().rfind(prefix, 0) == 0 && e.path().extension() == ".pb") ++files;
    if (files != declared.size())
        throw Error(std::to_string(files) + " " + prefix + "*.pb files, the model has " +
                        std::to_string(declared.size()) + (std::string(prefix) == "input_" ? " inputs" : " outputs"),
                    in_file(ds.string()));
    for (size_t k = 0; k < declared.size(); ++k) {
        const std::string file = (ds / (prefix + std::to_string(k) + ".pb")).string();
        HostTensor t = read_tensor(file);
        const ValueInfo& v = declared[k];
        if (dtype_from_onnx(v.onnx_type) != t.dtype())
            throw Error("the tensor is " + std::string(to_string(t.dtype())) + ", the model declares '" + v.name +
                            "' as " + type_text(v),
                        in_file(file));
        if (v.has_shape && !v.shape.compatible(t.shape()))
            throw Error("shape mismatch: the tensor is " + t.shape().to_string() + ", the model declares '" + v.name +
                            "' as " + v.shape.to_string(),
                        in_file(file));
        out.push_back(std::move(t));
    }
    return out;
}

struct RunOutcome {
    std::vector<HostTensor> outputs;
    std::string impl;
};

// Why no impl of `op` on `device` takes `t0` (its first input's dtype); empty
// when one may.
std::string no_impl_for(const Registry& registry, const std::string& device, const std::string& op, DataType t0) {
    const auto impls = registry.impls(op, device);
    if (impls.empty()) return "no " + device + " impl of dynrt op '" + op + "'";
    std::string takes;
    bool any = false;
    for (const RegisteredImpl* impl : impls) {
        const auto& d = impl->entry.dtypes;
        if (d.empty() || std::find(d.begin(), d.end(), t0) != d.end()) any = true;
        for (DataType t : d)
            if (takes.find(to_string(t)) == std::string::npos)
                takes += (takes.empty() ? "" : ", ") + std::string(to_string(t));
    }
    if (any) return {};
    return std::string("no ") + device + " impl of '" + op + "' takes " + to_string(t0) + " (they take " + takes + ")";
}

RunOutcome run_network(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine, const OnnxModel& model,
                       const Mapped& m, const std::vector<const HostTensor*>& node_values, bool dynamic,
                       const PassSet& passes, const std::vector<size_t>& output_slots) {
    const OnnxNode& node = model.nodes[0];
    const RegisteredOp& def = registry->op(m.op);
    tools::SingleNode one;
    one.op = m.op;
    one.attrs = m.attrs;
    one.program_name = model.file;
    one.where = in_file(model.file);
    one.where.node = node.name.empty() ? node.op_type : node.name;
    one.where.op = m.op;
    for (size_t j = 0; j < m.inputs.size(); ++j) {
        const std::string& onnx_name = node.inputs[m.inputs[j]];
        const auto& vi = def.def.value_inputs;
        const bool value_input = std::find(vi.begin(), vi.end(), j) != vi.end();
        const tools::InputRole role = model.initializers.count(onnx_name) ? tools::InputRole::constant
                                      : value_input                       ? tools::InputRole::shape_values
                                                                          : tools::InputRole::data;
        one.inputs.push_back(tools::node_input(*node_values[m.inputs[j]], role, dynamic));
        one.inputs.back().where = in_file(model.file);
        one.inputs.back().where.field = onnx_name;
    }
    auto program = tools::build_single_node(registry, one);
    NetworkOptions opts;
    opts.use_dynamic_impls = dynamic;
    // Without background builds core runs critical ops (gemm, convolution) on
    // their static impl even in a dynamic network; with them, the first run
    // takes the dynamic impl, which is the path this pass is for.
    opts.async_compile = dynamic;
    apply_passes(passes, nullptr, &opts);
    auto net = Network::create(program, engine, opts);
    InferRequest req(net);
    tools::feed(req, one);
    req.infer();
    RunOutcome out;
    for (size_t slot : output_slots) out.outputs.push_back(req.get_output(slot));
    for (const NodeStats& s : req.last_run().nodes)
        if (s.node == tools::kSingleNodeName) out.impl = s.impl;
    return out;
}

// Empty when every graph input and output is a tensor of a type dynrt has,
// else why the case is unsupported.
std::string untyped_value(const OnnxModel& model) {
    for (const auto* side : {&model.inputs, &model.outputs})
        for (const ValueInfo& v : *side) {
            if (v.kind != "tensor") return "'" + v.name + "' is a " + v.kind + " (dynrt has tensors only)";
            if (!dtype_from_onnx(v.onnx_type))
                return "'" + v.name + "' is " + onnx_type_name(v.onnx_type) + ", which dynrt does not have";
        }
    return {};
}

// The node's inputs as the mapper sees them (graph inputs from the data set,
// initializers) and their values.
void node_inputs(const OnnxModel& model, const std::vector<HostTensor>& inputs, std::vector<MapInput>& mi,
                 std::vector<const HostTensor*>& values) {
    const OnnxNode& node = model.nodes[0];
    mi.assign(node.inputs.size(), MapInput{});
    values.assign(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
        const std::string& name = node.inputs[k];
        if (name.empty()) continue;
        const HostTensor* v = nullptr;
        for (size_t g = 0; g < model.inputs.size(); ++g)
            if (model.inputs[g].name == name) v = &inputs[g];
        auto init = model.initializers.find(name);
        if (init != model.initializers.end()) v = &init->second;
        if (!v)
            throw Error("node input '" + name + "' is neither a graph input nor an initializer", in_file(model.file));
        mi[k].present = true;
        mi[k].layout = v->layout();
        mi[k].value = v;
        values[k] = v;
    }
}

// The graph outputs are node outputs, in order: all of them, or those left
// after optional ones named "" (LSTM's Y_h alone is output 1).
std::vector<size_t> output_slots_of(const OnnxModel& model) {
    const OnnxNode& node = model.nodes[0];
    std::vector<size_t> output_slots;
    for (size_t k = 0, slot = 0; k < model.outputs.size(); ++k, ++slot) {
        while (slot < node.outputs.size() && node.outputs[slot].empty()) ++slot;
        if (slot >= node.outputs.size() || node.outputs[slot] != model.outputs[k].name) break;
        output_slots.push_back(slot);
    }
    if (model.outputs.empty() || output_slots.size() != model.outputs.size())
        throw Error("the graph outputs are not the node's outputs, in order", in_file(model.file));
    return output_slots;
}

// One pass's outputs against the expected ones (false: r failed).
bool outputs_match(const RunOutcome& o, const std::vector<HostTensor>& expected, const TestOptions& opt,
                   const char* pass, CaseResult& r) {
    const tools::Tolerance tol{opt.rtol, opt.atol};
    for (size_t k = 0; k < expected.size(); ++k) {
        const tools::Tolerance tk = is_floating(expected[k].dtype()) ? tol : tools::Tolerance{0, 0};
        const tools::Comparison c = tools::compare(o.outputs.at(k), expected[k], tk);
        r.max_abs = std::max(r.max_abs, c.max_abs);
        if (!c.ok) {
            r.status = "FAIL";
            r.detail = std::string(pass) + " (" + o.impl + ")" +
                       (expected.size() > 1 ? ", output " + std::to_string(k) : std::string()) + ": " + c.mismatch;
            return false;
        }
    }
    return true;
}

void run_case(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine, const OnnxModel& model,
              const fs::path& ds, const TestOptions& opt, CaseResult& r) {
    const auto unsupported = [&r](const std::string& why) {
        r.status = "unsupported";
        r.detail = why;
    };
    if (const std::string why = untyped_value(model); !why.empty()) return unsupported(why);
    const std::vector<HostTensor> inputs = read_side(ds, "input_", model.inputs);
    const std::vector<HostTensor> expected = read_side(ds, "output_", model.outputs);
    std::vector<MapInput> mi;
    std::vector<const HostTensor*> values;
    node_inputs(model, inputs, mi, values);
    const Mapped m = map_node(*registry, model.nodes[0], model.opset, mi);
    if (!m.unsupported.empty()) return unsupported(m.unsupported);
    const std::vector<size_t> output_slots = output_slots_of(model);
    // A data type no impl of the op takes on this device is unsupported, not a failure.
    const std::string no_impl = no_impl_for(*registry, opt.device, m.op, values[m.inputs.at(0)]->dtype());
    if (!no_impl.empty()) return unsupported(no_impl);
    for (bool dynamic : {false, true}) {
        if (dynamic && !opt.dynamic_pass) break;
        const char* pass = dynamic ? "dynamic" : "static";
        RunOutcome o;
        try {
            o = run_network(registry, engine, model, m, values, dynamic, opt.passes, output_slots);
        } catch (const std::exception& e) {
            r.status = "FAIL";
            r.detail = std::string(pass) + ": " + e.what();
            return;
        }
        (dynamic ? r.impl_dynamic : r.impl_static) = o.impl;
        if (!outputs_match(o, expected, opt, pass, r)) return;
    }
    r.status = "pass";
}

}   // namespace

std::string graph_no_impl(const Registry& registry, const std::string& device, const Program& program) {
    for (size_t idx : program.order()) {
        const Node& n = program.nodes()[idx];
        if (!n.is_op() || n.inputs.empty()) continue;
        const Node& p = program.nodes()[n.inputs[0].node];
        const std::string why = no_impl_for(registry, device, n.op, p.out_layouts[n.inputs[0].output].dtype);
        if (!why.empty()) return "node '" + n.name + "': " + why;
    }
    return {};
}

namespace {

struct DataSet {
    std::vector<HostTensor> inputs, expected;
};

// Each data set's inputs and expected outputs; a set that cannot be read
// fails its result.
std::vector<DataSet> read_data_sets(const OnnxModel& model, const std::vector<fs::path>& sets,
                                    std::vector<CaseResult>& results) {
    std::vector<DataSet> data(sets.size());
    for (size_t i = 0; i < sets.size(); ++i) {
        try {
            data[i].inputs = read_side(sets[i], "input_", model.inputs);
            data[i].expected = read_side(sets[i], "output_", model.outputs);
        } catch (const Error& e) {
            results[i].status = "error";
            results[i].detail = e.with_context(in_file(model.file)).what();
        }
    }
    return data;
}

// One data set on the pass's runner: every output compared; the impls that
// ran are recorded for the pass.
void run_data_set(GraphRunner& runner, const OnnxModel& model, const DataSet& data, const TestOptions& opt,
                  bool dynamic, CaseResult& r) {
    const std::string pass = dynamic ? "dynamic" : "static";
    std::set<std::string> impls;
    try {
        for (size_t k = 0; k < model.inputs.size(); ++k) runner.set_input(model.inputs[k].name, data.inputs[k]);
        runner.infer();
        for (const NodeStats& s : runner.request().last_run().nodes)
            if (!s.impl.empty()) impls.insert(s.impl);
        for (size_t k = 0; k < model.outputs.size(); ++k) {
            const HostTensor& want = data.expected[k];
            tools::Tolerance tol{opt.rtol, opt.atol};
            if (!is_floating(want.dtype())) tol = {0, 0};
            const tools::Comparison c = tools::compare(runner.output(k), want, tol);
            r.max_abs = std::max(r.max_abs, c.max_abs);
            if (!c.ok) {
                r.status = "FAIL";
                r.detail = pass + ", output '" + model.outputs[k].name + "': " + c.mismatch;
                break;
            }
        }
    } catch (const std::exception& e) {
        r.status = "FAIL";
        r.detail = pass + ": " + e.what();
    }
    std::string list;
    for (const std::string& s : impls) list += (list.empty() ? "" : "+") + s;
    (dynamic ? r.impl_dynamic : r.impl_static) = list;
}

// The pass's runner, or (null) the status and detail every result gets.
std::unique_ptr<GraphRunner> graph_runner(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine,
                                          const OnnxModel& model, const TestOptions& opt, bool dynamic,
                                          std::pair<std::string, std::string>& failed) {
    ImportOptions io;
    io.dynamic_inputs = dynamic;
    io.passes = opt.passes;
    io.device = opt.device;
    ImportedGraph g;
    try {
        g = import_graph(registry, model, io);
    } catch (const Error& e) {
        // dynrt fixes every rank when a network is built: a graph whose
        // ranks follow values that only exist at run time (a reshape to a
        // target of computed length) runs only where the shapes are static.
        const std::string what = e.with_context(in_file(model.file)).what();
        if (dynamic && what.find("rank is unknown") != std::string::npos)
            failed = {"unsupported", "dynamic pass: a rank depends on run-time values: " + what};
        else failed = {"error", what};
        return nullptr;
    }
    if (!g.unsupported.empty()) failed = {"unsupported", g.unsupported};
    else if (std::string why = graph_no_impl(*registry, opt.device, *g.program); !why.empty())
        failed = {"unsupported", why};
    if (!failed.first.empty()) return nullptr;
    NetworkOptions opts;
    opts.use_dynamic_impls = dynamic;
    opts.async_compile = dynamic;   // as for one node: the dynamic impls run first
    apply_passes(opt.passes, nullptr, &opts);
    try {
        return std::make_unique<GraphRunner>(g, engine, opts, model.file);
    } catch (const std::exception& e) {
        failed = {"FAIL", std::string(dynamic ? "dynamic" : "static") + ": " + e.what()};
        return nullptr;
    }
}

// A model of several nodes: every data set in order on one network per pass
// (static: the declared input layouts; dynamic: every input dim dynamic). One
// result per data set, failed by the first pass or output that fails.
void run_graph_cases(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine, const OnnxModel& model,
                     const std::vector<fs::path>& sets, const TestOptions& opt, std::vector<CaseResult>& results) {
    const std::vector<DataSet> data = read_data_sets(model, sets, results);
    for (bool dynamic : {false, true}) {
        if (dynamic && !opt.dynamic_pass) break;
        std::pair<std::string, std::string> failed;
        const std::unique_ptr<GraphRunner> runner = graph_runner(registry, engine, model, opt, dynamic, failed);
        if (!runner) {
            for (CaseResult& r : results)
                if (r.status == "pass") r.status = failed.first, r.detail = failed.second;
            return;
        }
        for (size_t i = 0; i < sets.size(); ++i)
            if (results[i].status == "pass") run_data_set(*runner, model, data[i], opt, dynamic, results[i]);
    }
}

// Every op of the graph is claimed (Identity and Constant need no dynrt op);
// otherwise the first that is not.
std::string unclaimed_op(const OnnxModel& model, const std::map<std::string, std::string>& claimed) {
    for (const OnnxNode& n : model.nodes) {
        const bool default_domain = n.domain.empty() || n.domain == "ai.onnx";
        if (default_domain && (n.op_type == "Identity" || n.op_type == "Constant")) continue;
        if (claimed.count(rule_name(n))) continue;
        return (default_domain ? "" : n.domain + ".") + n.op_type;
    }
    return {};
}

struct Folder {
    fs::path path;
    bool explicit_path = false;
};

}   // namespace

std::vector<HostTensor> read_data_set(const std::string& folder, const std::string& prefix,
                                      const std::vector<ValueInfo>& declared) {
    return read_side(folder, prefix.c_str(), declared);
}

namespace {

// Every --ops name is claimed by a loaded module, else an error saying why.
void check_ops_claimed(const Registry& registry, const TestOptions& opt,
                       const std::map<std::string, std::string>& claimed) {
    for (const std::string& op : opt.ops)
        if (!claimed.count(op)) {
            const std::string t = target_op(registry, op);
            throw Error(t.empty()
                            ? "the importer does not map ONNX op '" + op + "'"
                            : "ONNX op '" + op + "' maps to dynrt op '" + t + "', which no loaded module provides");
        }
}

// The test folders: a path holding model.onnx, or every such folder in it.
std::vector<Folder> test_folders(const std::vector<std::string>& paths) {
    std::vector<Folder> folders;
    for (const std::string& p : paths) {
        const fs::path path(p);
        if (fs::exists(path / "model.onnx")) {
            folders.push_back({path, true});
        } else if (fs::is_directory(path)) {
            std::vector<fs::path> subs;
            for (const auto& e : fs::directory_iterator(path))
                if (fs::exists(e.path() / "model.onnx")) subs.push_back(e.path());
            std::sort(subs.begin(), subs.end());
            for (const auto& s : subs) folders.push_back({s, false});
        } else {
            throw Error("not a node-test folder (no model.onnx) nor a folder of them", in_file(p));
        }
    }
    return folders;
}

std::vector<fs::path> data_sets_of(const fs::path& folder) {
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(folder))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    return sets;
}

bool filtered_out(const TestOptions& opt, const std::string& onnx_op) {
    return !opt.ops.empty() && std::find(opt.ops.begin(), opt.ops.end(), onnx_op) == opt.ops.end();
}

// Whether the folder's model runs: false when it is skipped (an op no module
// claims, a graph under an op filter); throws when a folder given by name
// uses an op no module provides. Sets base.onnx_op.
bool wanted(const Registry& registry, const Folder& f, const OnnxModel& model, const TestOptions& opt,
            TestReport& report, CaseResult& base) {
    if (model.nodes.size() != 1) {
        // A model folder given by name is reported under its name.
        base.onnx_op = f.explicit_path ? base.folder : std::string("graph");
        // Graphs belong to no op family: an op filter leaves them out.
        if (!opt.ops.empty()) return false;
        const std::string missing = unclaimed_op(model, report.claimed);
        if (missing.empty() || f.explicit_path) return true;
        report.skipped.push_back(base.folder + ": op " + missing + " not claimed");
        return false;
    }
    if (opt.graphs_only) return false;
    base.onnx_op = rule_name(model.nodes[0]);
    if (report.claimed.count(base.onnx_op)) return true;
    if (!f.explicit_path) {
        report.skipped.push_back(base.folder + ": op " + base.onnx_op + " not claimed");
        return false;
    }
    require_rule(registry, model.nodes[0], model.opset);   // throws "unknown ONNX op"
    throw Error("ONNX op '" + base.onnx_op + "' maps to dynrt op '" + target_op(registry, base.onnx_op) +
                "', which no loaded module provides");
}

// Every data set of one folder's model: a graph's on one network per pass,
// a node's each on its own networks.
void run_folder(const std::shared_ptr<const Registry>& registry, const EnginePtr& engine, const Folder& f,
                const OnnxModel& model, const TestOptions& opt, const CaseResult& base, TestReport& report) {
    const std::vector<fs::path> sets = data_sets_of(f.path);
    if (sets.empty()) {
        CaseResult r = base;
        r.status = "error";
        r.detail = "no test_data_set_* folder in " + f.path.string();
        report.cases.push_back(r);
    }
    if (model.nodes.size() != 1) {
        std::vector<CaseResult> results;
        for (const fs::path& ds : sets) {
            results.push_back(base);
            results.back().data_set = ds.filename().string();
            results.back().status = "pass";
        }
        run_graph_cases(registry, engine, model, sets, opt, results);
        for (CaseResult& r : results) report.cases.push_back(std::move(r));
        return;
    }
    for (const fs::path& ds : sets) {
        CaseResult r = base;
        r.data_set = ds.filename().string();
        try {
            run_case(registry, engine, model, ds, opt, r);
        } catch (const Error& e) {
            r.status = "error";
            r.detail = e.with_context(in_file(model.file)).what();
        } catch (const std::exception& e) {
            r.status = "error";
            r.detail = e.what();
        }
        report.cases.push_back(std::move(r));
    }
}

}   // namespace

TestReport run_tests(const std::shared_ptr<const Registry>& registry, const std::vector<std::string>& paths,
                     const TestOptions& opt) {
    TestReport report;
    report.claimed = claimed_ops(*registry);
    check_ops_claimed(*registry, opt, report.claimed);
    EngineConfig cfg;
    cfg.device = opt.device;
    cfg.verbose = opt.verbose;
    const EnginePtr engine = registry->create_engine(opt.device, cfg);
    for (const Folder& f : test_folders(paths)) {
        CaseResult base;
        base.folder = f.path.filename().string();
        base.path = f.path.string();
        OnnxModel model;
        try {
            model = load_model((f.path / "model.onnx").string());
            if (!wanted(*registry, f, model, opt, report, base)) continue;
        } catch (const Error& e) {
            if (filtered_out(opt, base.onnx_op)) continue;
            base.status = "error";
            base.detail = e.with_context(in_file((f.path / "model.onnx").string())).what();
            report.cases.push_back(base);
            continue;
        }
        if (!filtered_out(opt, base.onnx_op)) run_folder(registry, engine, f, model, opt, base, report);
    }
    for (const CaseResult& r : report.cases) {
        if (r.status == "pass") ++report.passed;
        else if (r.status == "unsupported") ++report.unsupported;
        else if (r.status == "error") ++report.errors;
        else ++report.failed;
    }
    return report;
}

std::string summary_text(const TestReport& r, bool verbose) {
    std::ostringstream os;
    std::map<std::string, std::vector<const CaseResult*>> by_op;
    for (const CaseResult& c : r.cases) by_op[c.onnx_op.empty() ? "?" : c.onnx_op].push_back(&c);
    for (const CaseResult& c : r.cases) {
        if (c.status == "pass" && !verbose) continue;
        os << c.status << "  " << c.folder << (c.data_set.empty() ? "" : "/" + c.data_set);
        if (c.status == "pass")
            os << "  (" << (c.impl_static.empty() ? "empty output" : c.impl_static) << ", "
               << (c.impl_dynamic.empty() ? "empty output" : c.impl_dynamic) << ")";
        if (!c.detail.empty()) os << ": " << c.detail;
        os << "\n";
    }
    if (verbose)
        for (const std::string& s : r.skipped) os << "skipped  " << s << "\n";
    os << "\nop                   passed  failed  errors  unsupported\n";
    for (const auto& [op, cases] : by_op) {
        size_t p = 0, f = 0, e = 0, u = 0;
        for (const CaseResult* c : cases) {
            if (c->status == "pass") ++p;
            else if (c->status == "unsupported") ++u;
            else if (c->status == "error") ++e;
            else ++f;
        }
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%-20s %6zu  %6zu  %6zu  %11zu\n", op.c_str(), p, f, e, u);
        os << buf;
    }
    os << "total: " << r.passed << " passed, " << r.failed << " failed, " << r.errors << " errors, " << r.unsupported
       << " unsupported";
    if (!r.skipped.empty()) os << "; " << r.skipped.size() << " folders skipped (unclaimed op)";
    os << "\n";
    return os.str();
}

std::string summary_markdown(const TestReport& r, const TestOptions& opt) {
    std::ostringstream os;
    std::map<std::string, std::vector<const CaseResult*>> by_op;
    for (const CaseResult& c : r.cases) by_op[c.onnx_op].push_back(&c);
    os << "| ONNX op | dynrt op | cases | passed | failed | unsupported |\n|---|---|---|---|---|---|\n";
    for (const auto& [op, target] : r.claimed) {
        if (!opt.ops.empty() && std::find(opt.ops.begin(), opt.ops.end(), op) == opt.ops.end()) continue;
        size_t p = 0, f = 0, u = 0;
        auto it = by_op.find(op);
        const size_t n = it == by_op.end() ? 0 : it->second.size();
        if (it != by_op.end())
            for (const CaseResult* c : it->second) {
                if (c->status == "pass") ++p;
                else if (c->status == "unsupported") ++u;
                else ++f;
            }
        os << "| " << op << " | " << target << " | " << n << " | " << p << " | " << f << " | " << u << " |\n";
    }
    os << "| **total** | | " << r.cases.size() << " | " << r.passed << " | " << r.failed << " | " << r.unsupported
       << " |\n";
    for (const auto& [op, cases] : by_op) {
        os << "\n### " << (op.empty() ? "(unreadable models)" : op)
           << (r.claimed.count(op) ? " → `" + r.claimed.at(op) + "`" : std::string()) << "\n\n";
        os << "| case | status | note |\n|---|---|---|\n";
        for (const CaseResult* c : cases) {
            std::string note = c->detail;
            std::replace(note.begin(), note.end(), '|', '/');
            std::replace(note.begin(), note.end(), '\n', ' ');
            // Paths are machine-specific; the case name says enough.
            for (size_t at = note.find(c->path); !c->path.empty() && at != std::string::npos;
                 at = note.find(c->path, at + c->folder.size()))
                note.replace(at, c->path.size(), c->folder);
            os << "| `" << c->folder << "`" << (c->data_set == "test_data_set_0" ? "" : " " + c->data_set) << " | "
               << c->status << " | " << note << " |\n";
        }
    }
    return os.str();
}

}   // namespace dynrt::onnx
