// Running a sweep on every impl of one op and comparing with the reference.
//
// Each impl is forced through a private Registry view in which the op has that
// impl alone (every op definition is shared), so impl selection in core cannot
// pick another one; the row still checks which impl ran. Static impls get a
// fresh network compiled for each case's static shapes; dynamic impls get one
// network with every input dim dynamic that serves the whole sweep, then again
// in a revisiting order (cache hits, reallocation, shrinking and growing).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "harness.hpp"
#include "single_node.hpp"

namespace dynrt::harness {

namespace {

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

std::string attrs_text(const std::vector<std::pair<std::string, std::string>>& raw) {
    std::string out;
    for (const auto& [k, v] : raw) out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

// Section attributes with the command line's --attr on top (same key: the
// command line wins).
std::vector<std::pair<std::string, std::string>> merge_attrs(
    const std::vector<std::pair<std::string, std::string>>& file,
    const std::vector<std::pair<std::string, std::string>>& cli) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : file) {
        const bool overridden = std::any_of(cli.begin(), cli.end(), [&](const auto& c) { return c.first == kv.first; });
        if (!overridden) out.push_back(kv);
    }
    for (const auto& kv : cli) out.push_back(kv);
    return out;
}

std::string shell_quote(const std::string& s) {
    bool plain = !s.empty();
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("_-.,:/=+").find(c) != std::string::npos))
            plain = false;
    if (plain) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\' || c == '$' || c == '`') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::shared_ptr<Registry> make_view(const Registry& reg, const std::string& op, const RegisteredImpl* only) {
    auto view = std::make_shared<Registry>();
    for (const std::string& name : reg.op_names()) {
        view->add_op(*reg.find_op(name));
        for (const RegisteredImpl* impl : reg.all_impls(name))
            if (name != op || impl == only) view->add_impl(*impl);
    }
    return view;
}

DataType input_dtype(const CaseInput& in, DataType def) {
    if (in.dtype) return *in.dtype;
    return in.values ? DataType::i64 : def;
}

HostTensor make_input(const CaseInput& in, DataType def, uint64_t seed) {
    const DataType t = input_dtype(in, def);
    if (in.values) return HostTensor::from_int64(t, in.shape, *in.values);
    HostTensor out(t, in.shape);
    std::mt19937_64 rng(seed);
    const size_t n = out.count();
    if (is_floating(t)) {
        const auto r = in.range.value_or(std::make_pair(-1.0, 1.0));
        std::uniform_real_distribution<double> dist(r.first, r.second);
        for (size_t i = 0; i < n; ++i) out.set_from_double(i, dist(rng));
        return out;
    }
    int64_t lo = -8, hi = 7;
    if (t == DataType::boolean) lo = 0, hi = 1;
    else if (t == DataType::u8) lo = 0, hi = 15;
    if (in.range) {
        lo = static_cast<int64_t>(std::ceil(in.range->first));
        hi = static_cast<int64_t>(std::ceil(in.range->second)) - 1;   // [lo, hi)
    }
    if (hi < lo) throw Error("empty value range for input '" + in.name + "'");
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (size_t i = 0; i < n; ++i) out.set_from_double(i, static_cast<double>(dist(rng)));
    return out;
}

// The inputs of one case; the seed depends only on --seed and the case's text,
// so the reproduce command regenerates the same data.
std::vector<HostTensor> make_inputs(const Case& c, DataType def, uint64_t seed) {
    std::vector<HostTensor> out;
    const uint64_t base = fnv1a(c.spec()) ^ (seed * 0x9e3779b97f4a7c15ULL);
    for (size_t i = 0; i < c.inputs.size(); ++i) out.push_back(make_input(c.inputs[i], def, base + i * 7919));
    return out;
}

// The one-node program of a case: value inputs are constants in a static run
// and keep their length in a dynamic one (tools::InputRole::shape_values).
tools::SingleNode single_node(const std::string& op, const Attributes& attrs, const Case& c,
                              const std::vector<HostTensor>& data, bool dynamic) {
    tools::SingleNode n;
    n.op = op;
    n.attrs = attrs;
    n.program_name = "test-op " + op;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
        const auto role = c.inputs[i].values ? tools::InputRole::shape_values : tools::InputRole::data;
        n.inputs.push_back(tools::node_input(data[i], role, dynamic));
    }
    return n;
}

std::vector<HostTensor> outputs_of(const InferRequest& req, const Program& p) {
    std::vector<HostTensor> out;
    for (size_t k = 0; k < p.outputs().size(); ++k) out.push_back(req.get_output(k));
    return out;
}

// One case of one section, with its reference result.
struct CaseWork {
    size_t section = 0;
    Case the_case;
    std::vector<HostTensor> inputs;
    std::shared_ptr<Program> ref_program;   // static, for layouts and validate()
    std::vector<HostTensor> ref_out;
    std::string ref_error;   // the reference failed on this case
};

struct SectionWork {
    std::vector<std::pair<std::string, std::string>> raw;
    Attributes attrs;
    std::string text;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double timed_infer(InferRequest& req) {
    const auto t0 = std::chrono::steady_clock::now();
    req.infer();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Checks one run's result: which impl ran, then every output against the
// reference. Returns false when the row failed.
bool check_run(Row& row, const InferRequest& req, const Program& p, const CaseWork& w, bool expect_dynamic,
               const std::string& when) {
    const NodeStats* ns = nullptr;
    for (const NodeStats& s : req.last_run().nodes)
        if (s.node == tools::kSingleNodeName) ns = &s;
    const std::vector<HostTensor> got = outputs_of(req, p);
    bool empty = true;
    for (const HostTensor& t : got) empty &= t.count() == 0;
    if (!ns || ns->impl.empty()) {
        // The flow may skip the node (empty output, shape_of-like op whose input
        // shape did not change): the outputs must still match below.
        if (row.ran.empty()) row.ran = empty ? "(empty output)" : "(skipped by the flow)";
    } else {
        row.ran = ns->impl;
        if (ns->dynamic_impl != expect_dynamic) {
            row.status = "not selected";
            row.detail = "ran " + ns->impl + " (" + (ns->dynamic_impl ? "dynamic" : "static") + ")" + when;
            return false;
        }
    }
    for (size_t k = 0; k < got.size(); ++k) {
        const Tolerance tol = row.tol;
        const Comparison c = compare(got[k], w.ref_out.at(k), tol);
        row.max_abs = std::max(row.max_abs, c.max_abs);
        row.max_rel = std::max(row.max_rel, c.max_rel);
        if (!c.ok) {
            row.status = "FAIL";
            row.detail = (got.size() > 1 ? "output " + std::to_string(k) + ": " : std::string()) + c.mismatch + when;
            return false;
        }
    }
    return true;
}

void add_rate(Row& row, const OpDefinition& def, const CaseWork& w, const Attributes& attrs) {
    if (row.ms <= 0) return;
    std::vector<Layout> in, out;
    for (const HostTensor& t : w.inputs) in.push_back(t.layout());
    for (const HostTensor& t : w.ref_out) out.push_back(t.layout());
    const OpCost cost = cost_of(def, in, out, attrs);
    if (cost.flops > 0) {
        row.rate = cost.flops / (row.ms * 1e6);
        row.rate_unit = "GFLOP/s";
    } else {
        row.rate = cost.bytes / (row.ms * 1e6);
        row.rate_unit = "GB/s";
    }
}

Tolerance tolerance_for(const Options& opt, const CaseWork& w) {
    Tolerance t = default_tolerance(w.ref_out.empty() ? opt.dtype : w.ref_out[0].dtype());
    if (opt.rtol) t.rel = *opt.rtol;
    if (opt.atol) t.abs = *opt.atol;
    return t;
}

}   // namespace

OpCost cost_of(const OpDefinition& def, const std::vector<Layout>& inputs, const std::vector<Layout>& outputs,
               const Attributes& attrs) {
    if (def.cost) return def.cost(inputs, outputs, attrs);
    OpCost c;
    for (const Layout& l : inputs) c.bytes += static_cast<double>(l.bytes());
    for (const Layout& l : outputs) c.bytes += static_cast<double>(l.bytes());
    return c;
}

std::string repro_command(const Options& opt, const std::string& section_attrs, const Case& c, const std::string& impl,
                          const std::string& device) {
    std::string cmd = "dynrt test-op " + opt.op;
    std::istringstream items(section_attrs);
    std::string kv;
    while (items >> kv) cmd += " --attr " + shell_quote(kv);
    cmd += " --shapes " + shell_quote(c.spec());
    if (opt.dtype != DataType::f32) cmd += std::string(" --dtype ") + to_string(opt.dtype);
    if (opt.seed != 1) cmd += " --seed " + std::to_string(opt.seed);
    if (!impl.empty()) cmd += " --impl " + impl;
    if (!device.empty()) cmd += " --device " + device;
    if (!opt.reference.empty()) cmd += " --reference " + opt.reference;
    if (opt.rtol) cmd += " --rtol " + std::to_string(*opt.rtol);
    if (opt.atol) cmd += " --atol " + std::to_string(*opt.atol);
    return cmd;
}

namespace {

std::vector<SweepSection> sections_of(const Options& opt, const ErrorContext& op_ctx) {
    std::vector<SweepSection> sections;
    if (!opt.sweep_file.empty()) sections = parse_sweep_file(opt.sweep_file);
    if (!opt.shapes.empty()) {
        SweepSection s;
        for (const std::string& text : opt.shapes)
            for (CaseTemplate& t : parse_shapes(text)) s.cases.push_back(std::move(t));
        sections.push_back(std::move(s));
    }
    if (sections.empty())
        throw Error("no shapes: give --shapes \"[...]\" or --sweep-file FILE (ops/" + opt.op + "/sweep.txt)", op_ctx);
    return sections;
}

// The order a dynamic impl's network sees the cases of one group: each once,
// then (--revisit) backwards from the one before last, the last (so every
// case of a group of two or more is revisited), then every other case; never
// a case right after itself. Pairs (work index, revisit).
std::vector<std::pair<size_t, bool>> sequence_order(const std::vector<size_t>& members, bool revisit) {
    std::vector<std::pair<size_t, bool>> order;
    for (size_t i : members) order.emplace_back(i, false);
    if (!revisit) return order;
    auto push = [&](size_t i) {
        if (order.back().first != i) order.emplace_back(i, true);
    };
    for (size_t k = members.size() - 1; k-- > 0;) push(members[k]);
    push(members.back());
    for (size_t k = 0; k < members.size(); k += 2) push(members[k]);
    return order;
}

// One `dynrt test-op` run over one op; harness::run lists its steps.
class Sweep {
public:
    Sweep(std::shared_ptr<const Registry> registry, const Options& opt)
        : registry_(std::move(registry)), opt_(opt), def_(registry_->op(opt.op)) {
        op_ctx_.op = opt.op;
        if (def_.def.traits.is_input || def_.def.traits.is_constant)
            throw Error("'" + opt.op + "' has no impls to test (it is a graph input/constant)", op_ctx_);
        report_.op = opt.op;
        static_opts_.use_dynamic_impls = false;
        static_opts_.async_compile = false;
        static_opts_.views = false;   // the impls are under test: layout-only ops run them too
    }

    // Every section's cases, each (section attrs, case) once.
    void expand_cases() {
        std::set<std::string> seen;   // command-line attrs may make sections identical
        for (const SweepSection& s : sections_of(opt_, op_ctx_)) {
            SectionWork sw;
            sw.raw = merge_attrs(s.attrs, opt_.attrs);
            sw.text = attrs_text(sw.raw);
            try {
                sw.attrs = parse_attrs(def_.def.attrs, sw.raw);
            } catch (const Error& e) {
                throw e.with_context(op_ctx_);
            }
            const size_t si = sections_.size();
            sections_.push_back(sw);
            for (const CaseTemplate& t : s.cases)
                for (const Case& c : opt_.random ? expand_random(t, opt_.random, opt_.seed) : expand(t)) {
                    if (!seen.insert(sw.text + "|" + c.spec()).second) continue;
                    CaseWork w;
                    w.section = si;
                    w.the_case = c;
                    work_.push_back(std::move(w));
                }
        }
    }

    // --reference, else the op's reference impl in its static flavour (a
    // static network runs it), else its dynamic flavour.
    void pick_reference() {
        all_ = registry_->all_impls(opt_.op);
        if (all_.empty()) throw Error("op '" + opt_.op + "' has no registered impls", op_ctx_);
        for (const RegisteredImpl* r : all_) {
            if (!opt_.reference.empty()) {
                if (r->entry.name == opt_.reference) ref_ = r;
            } else if (r->entry.reference) {
                if (!ref_ || r->entry.shape_type == ShapeType::static_shape) ref_ = r;
            }
        }
        if (!ref_)
            throw Error(opt_.reference.empty() ? "op '" + opt_.op + "' has no reference impl (ImplEntry::reference)"
                                               : "no impl named '" + opt_.reference + "' (--reference)",
                        op_ctx_);
        report_.reference =
            ref_->entry.name + " (" + ref_->entry.impl_type + ", " + to_string(ref_->entry.shape_type) + ")";
        for (const std::string& name : opt_.impls)
            if (std::none_of(all_.begin(), all_.end(), [&](const RegisteredImpl* r) { return r->entry.name == name; }))
                throw Error("op '" + opt_.op + "' has no impl named '" + name + "' (--impl)", op_ctx_);
    }

    // Each case's inputs and the reference's outputs (or why it failed).
    void run_reference() {
        EnginePtr ref_engine = engine_for(ref_->entry.impl_type);
        if (!ref_engine) throw Error("reference impl: " + engine_errors_[ref_->entry.impl_type], op_ctx_);
        const auto ref_view = make_view(*registry_, opt_.op, ref_);
        for (CaseWork& w : work_) {
            try {
                w.inputs = make_inputs(w.the_case, opt_.dtype, opt_.seed);
                const auto node = node_of(w, false);
                w.ref_program = tools::build_single_node(ref_view, node);
                InferRequest req(Network::create(w.ref_program, ref_engine, static_opts_));
                tools::feed(req, node);
                req.infer();
                w.ref_out = outputs_of(req, *w.ref_program);
            } catch (const std::exception& e) {
                w.ref_error = e.what();
            }
        }
    }

    // Every selected impl on its engine: a row per case.
    void run_impls() {
        for (const RegisteredImpl* impl : all_) {
            if (!selected(impl)) continue;
            const ImplEntry& entry = impl->entry;
            EnginePtr engine = engine_for(entry.impl_type);
            if (!engine) {
                report_.notes.push_back(entry.name + " (" + entry.impl_type + "): skipped, " +
                                        engine_errors_[entry.impl_type]);
                continue;
            }
            if (entry.shape_type == ShapeType::dynamic_shape) run_dynamic(impl, engine);
            else run_static(impl, engine);
        }
    }

    Report finish() {
        for (const Row& r : report_.rows) {
            if (r.failed()) ++report_.failed;
            else if (r.status == "pass") ++report_.passed;
            else ++report_.skipped;
        }
        return std::move(report_);
    }

private:
    tools::SingleNode node_of(const CaseWork& w, bool dynamic) const {
        return single_node(opt_.op, sections_[w.section].attrs, w.the_case, w.inputs, dynamic);
    }

    EnginePtr engine_for(const std::string& type) {
        auto it = engines_.find(type);
        if (it != engines_.end()) return it->second;
        if (engine_errors_.count(type)) return nullptr;
        if (!registry_->has_engine(type)) {
            engine_errors_[type] = "no '" + type + "' engine is registered";
            return nullptr;
        }
        try {
            EngineConfig cfg;
            cfg.device = type;
            cfg.verbose = opt_.verbose;
            EnginePtr e = registry_->create_engine(type, cfg);
            engines_[type] = e;
            return e;
        } catch (const std::exception& e) {
            engine_errors_[type] = std::string("cannot create the '") + type + "' engine: " + e.what();
            return nullptr;
        }
    }

    bool selected(const RegisteredImpl* r) const {
        const auto& impls = opt_.impls;
        const auto& devices = opt_.devices;
        if (!impls.empty() && std::find(impls.begin(), impls.end(), r->entry.name) == impls.end()) return false;
        return devices.empty() || std::find(devices.begin(), devices.end(), "all") != devices.end() ||
               std::find(devices.begin(), devices.end(), r->entry.impl_type) != devices.end();
    }

    Row new_row(const ImplEntry& entry, const CaseWork& w) const {
        Row row;
        row.impl = entry.name;
        row.device = entry.impl_type;
        row.shape_type = to_string(entry.shape_type);
        row.phase = entry.shape_type == ShapeType::dynamic_shape ? "sequence" : "static";
        row.attrs = sections_[w.section].text;
        row.the_case = w.the_case;
        row.status = "pass";
        row.tol = w.ref_out.empty() ? default_tolerance(opt_.dtype) : tolerance_for(opt_, w);
        row.repro = repro_command(opt_, row.attrs, w.the_case, entry.name, entry.impl_type);
        return row;
    }

    // Adds the row of a case the impl does not take (true), else leaves it (false).
    bool rejected(const ImplEntry& entry, const EnginePtr& engine, const CaseWork& w, Row& row) {
        const std::string why = w.ref_error.empty()
                                    ? entry.check(tools::single_node_params(*w.ref_program, engine.get()))
                                    : "the reference failed";
        if (why.empty()) return false;
        row.status = w.ref_error.empty() ? "n/a" : "error";
        row.detail = w.ref_error.empty() ? why : "reference: " + w.ref_error;
        report_.rows.push_back(std::move(row));
        return true;
    }

    // --bench: the median of --repeat more runs, and the rate it gives.
    void bench(Row& row, InferRequest& req, const CaseWork& w) const {
        std::vector<double> times;
        for (size_t r = 0; r < opt_.repeat; ++r) times.push_back(timed_infer(req));
        row.ms = median(times);
        add_rate(row, def_.def, w, sections_[w.section].attrs);
    }

    // A static impl: a fresh network compiled for each case's shapes.
    void run_static(const RegisteredImpl* impl, const EnginePtr& engine) {
        const auto view = make_view(*registry_, opt_.op, impl);
        for (const CaseWork& w : work_) {
            Row row = new_row(impl->entry, w);
            if (rejected(impl->entry, engine, w, row)) continue;
            try {
                const auto node = node_of(w, false);
                auto program = tools::build_single_node(view, node);
                InferRequest req(Network::create(program, engine, static_opts_));
                tools::feed(req, node);
                req.infer();
                if (check_run(row, req, *program, w, false, "") && opt_.bench) bench(row, req, w);
            } catch (const std::exception& e) {
                row.status = "error";
                row.detail = e.what();
            }
            report_.rows.push_back(std::move(row));
        }
    }

    // A dynamic impl: one network per section and input signature (rank and
    // dtype of each input, the values of value inputs), fed every case of the
    // group in sequence, then revisited.
    void run_dynamic(const RegisteredImpl* impl, const EnginePtr& engine) {
        std::map<std::string, std::vector<size_t>> groups;
        std::vector<std::string> group_order;
        std::vector<size_t> row_of(work_.size(), SIZE_MAX);
        for (size_t i = 0; i < work_.size(); ++i) {
            const CaseWork& w = work_[i];
            Row row = new_row(impl->entry, w);
            if (rejected(impl->entry, engine, w, row)) continue;
            std::string key = std::to_string(w.section);
            for (size_t k = 0; k < w.inputs.size(); ++k)
                key += "|" +
                       (w.the_case.inputs[k].values ? w.inputs[k].shape().to_string()
                                                    : std::to_string(w.inputs[k].shape().size())) +
                       to_string(w.inputs[k].dtype());
            if (!groups.count(key)) group_order.push_back(key);
            groups[key].push_back(i);
            row_of[i] = report_.rows.size();
            report_.rows.push_back(std::move(row));
        }
        const auto view = make_view(*registry_, opt_.op, impl);
        for (const std::string& key : group_order) {
            std::vector<Row*> rows;
            for (size_t i : groups[key]) rows.push_back(&report_.rows[row_of[i]]);
            run_group(view, engine, groups[key], rows);
        }
    }

    // One group of cases on one dynamic network; `rows[k]` is members[k]'s row.
    void run_group(const std::shared_ptr<Registry>& view, const EnginePtr& engine, const std::vector<size_t>& members,
                   const std::vector<Row*>& rows) {
        const auto mark_all = [&](const std::string& status, const std::string& detail) {
            for (Row* row : rows) row->status = status, row->detail = detail;
        };
        std::shared_ptr<Program> program;
        std::unique_ptr<InferRequest> req;
        try {
            program = tools::build_single_node(view, node_of(work_[members[0]], true));
            if (!program->nodes()[program->node_index(tools::kSingleNodeName)].is_dynamic) {
                // Rank-0 inputs (and ops whose shapes are all static) give a
                // static node, which core never runs on a dynamic impl.
                return mark_all("n/a", "every shape of the node is static (rank-0 inputs)");
            }
            NetworkOptions dyn_opts;
            dyn_opts.use_dynamic_impls = true;
            dyn_opts.views = false;
            req = std::make_unique<InferRequest>(Network::create(program, engine, dyn_opts));
        } catch (const std::exception& e) {
            return mark_all("error", e.what());
        }
        std::map<size_t, Row*> row_of;
        for (size_t k = 0; k < members.size(); ++k) row_of[members[k]] = rows[k];
        size_t position = 0;
        for (const auto& [i, revisit] : sequence_order(members, opt_.revisit)) {
            ++position;
            Row& row = *row_of.at(i);
            if (row.failed()) continue;   // first failure of the case stays reported
            const CaseWork& w = work_[i];
            const std::string when =
                revisit ? " (revisit, run " + std::to_string(position) + " of the sequence)"
                        : (position > 1 ? " (run " + std::to_string(position) + " of the sequence)" : std::string());
            try {
                tools::feed(*req, node_of(w, true));
                req->infer();
                if (!check_run(row, *req, *program, w, true, when)) continue;
                if (revisit) row.phase = "sequence+revisit";
                if (!revisit && opt_.bench) bench(row, *req, w);
            } catch (const std::exception& e) {
                row.status = "error";
                row.detail = e.what() + when;
            }
        }
    }

    std::shared_ptr<const Registry> registry_;
    const Options& opt_;
    const RegisteredOp& def_;
    ErrorContext op_ctx_;
    std::vector<const RegisteredImpl*> all_;
    const RegisteredImpl* ref_ = nullptr;
    std::vector<SectionWork> sections_;
    std::vector<CaseWork> work_;
    std::map<std::string, EnginePtr> engines_;
    std::map<std::string, std::string> engine_errors_;
    NetworkOptions static_opts_;
    Report report_;
};

}   // namespace

Report run(const std::shared_ptr<const Registry>& registry, const Options& opt) {
    Sweep sweep(registry, opt);   // throws "unknown op" listing the known ones
    sweep.expand_cases();
    sweep.pick_reference();
    sweep.run_reference();
    sweep.run_impls();
    return sweep.finish();
}

}   // namespace dynrt::harness
