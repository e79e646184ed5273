// The op test library (see op_test.hpp).
#include "op_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "dynrt/error.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"
#include "single_node.hpp"

namespace dynrt::test {

namespace {

// DYNRT_CACHE_DIR for the test program, unless one is set (scripts/test.sh
// sets one for the whole run): a temp folder removed at exit.
class CacheDir {
public:
    CacheDir() {
        if (std::getenv("DYNRT_CACHE_DIR") != nullptr) return;
        std::string tmpl = (std::filesystem::temp_directory_path() / "dynrt_test_XXXXXX").string();
        if (mkdtemp(tmpl.data()) != nullptr) {
            dir_ = tmpl;
            setenv("DYNRT_CACHE_DIR", dir_.c_str(), 1);
        }
    }
    ~CacheDir() {
        std::error_code ec;
        if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
    }
    CacheDir(const CacheDir&) = delete;
    CacheDir& operator=(const CacheDir&) = delete;

private:
    std::string dir_;
};

// A registry with every op and impl of registry(), except that `op` has only
// `only` (nullptr: none), so the flow cannot pick another impl for it.
std::shared_ptr<Registry> view_with(const std::string& op, const RegisteredImpl* only) {
    auto view = std::make_shared<Registry>();
    for (const std::string& name : registry()->op_names()) {
        view->add_op(*registry()->find_op(name));
        for (const RegisteredImpl* impl : registry()->all_impls(name))
            if (name != op || impl == only) view->add_impl(*impl);
    }
    return view;
}

const RegisteredImpl* reference_impl(const std::string& op) {
    const RegisteredImpl* last_static_cpu = nullptr;
    for (const RegisteredImpl* r : registry()->all_impls(op)) {
        if (r->entry.impl_type != "cpu" || r->entry.shape_type != ShapeType::static_shape) continue;
        if (r->entry.reference || r->entry.name == "cpu_ref_static") return r;
        last_static_cpu = r;
    }
    return last_static_cpu;
}

// Layouts of one run: the run's static shapes, constants as they are.
std::vector<Layout> static_layouts(const OpSetup& s, const Run& run) {
    std::vector<Layout> out;
    size_t k = 0;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
        auto c = s.constants.find(i);
        out.push_back(c != s.constants.end() ? c->second.layout() : run.at(k++).layout());
    }
    return out;
}

std::shared_ptr<Program> program_of(std::shared_ptr<const Registry> reg, const OpSetup& s,
                                    const std::vector<Layout>& layouts) {
    auto program = std::make_shared<Program>(reg, s.op);
    std::vector<std::string> names;
    for (size_t i = 0; i < layouts.size(); ++i) {
        names.push_back("in" + std::to_string(i));
        auto c = s.constants.find(i);
        if (c != s.constants.end()) program->add_constant(names.back(), c->second);
        else program->add_input(names.back(), layouts[i]);
    }
    program->add_node("node", s.op, names, s.attrs);
    const size_t outputs = output_count(reg->op(s.op).def, s.attrs);
    for (size_t k = 0; k < outputs; ++k) program->add_output(k == 0 ? "node" : "node:" + std::to_string(k));
    program->build();
    return program;
}

void set_inputs(InferRequest& req, const OpSetup& s, const Run& run) {
    size_t k = 0;
    for (size_t i = 0; i < s.inputs.size(); ++i)
        if (!s.constants.count(i)) req.set_input("in" + std::to_string(i), run.at(k++));
}

std::vector<HostTensor> outputs_of(const InferRequest& req, size_t n) {
    std::vector<HostTensor> out;
    for (size_t k = 0; k < n; ++k) out.push_back(req.get_output(k));
    return out;
}

void expect_outputs(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                    std::optional<Tolerance> tol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
        SCOPED_TRACE("output " + std::to_string(k));
        expect_close(got[k], want[k], tol.value_or(tolerance(want[k].dtype())));
    }
}

const NodeStats* stats_of(const InferRequest& req) {
    for (const NodeStats& st : req.last_run().nodes)
        if (st.node == "node") return &st;
    return nullptr;
}

// The input shapes of a run, as the key of "seen before".
std::vector<Shape> shapes_of(const Run& run) {
    std::vector<Shape> out;
    for (const HostTensor& t : run) out.push_back(t.shape());
    return out;
}

std::string describe(const Run& run) {
    std::string out;
    for (const HostTensor& t : run) out += (out.empty() ? "" : " ") + t.layout().to_string();
    return out;
}

EnginePtr engine_for(const std::string& type) { return type == "ocl" ? ocl_engine() : engine(type); }

// A static OpenCL impl compiles a kernel per shape (about a second each on a
// cold PoCL cache, most of the suite's time). That kernel is its dynamic
// impl's source with the shape as constants and the dtype as type macros, and
// its shape-dependent plan is host code that sees no dtype. So a run whose
// shapes the same impl already ran for the same op, attributes and constants
// under another dtype (earlier in this test process) adds no shape path:
// expect_impls_match_reference leaves it out, except for the first run each
// call takes, which builds and checks the static kernel of every dtype. The
// dynamic impls, the cpu impls and repeated shapes of one dtype (revisits)
// still take every run.
class StaticShapeLedger {
public:
    // True when `run` adds nothing: its shapes ran on `impl` under another dtype.
    bool covered(const OpSetup& s, const std::string& impl, const Run& run) const {
        const auto it = seen_.find(key(s, impl, run));
        return it != seen_.end() && it->second.count(dtypes(run)) == 0;
    }
    void record(const OpSetup& s, const std::string& impl, const Run& run) {
        seen_[key(s, impl, run)].insert(dtypes(run));
    }

private:
    static std::string dtypes(const Run& run) {
        std::string out;
        for (const HostTensor& t : run) out += std::string(to_string(t.dtype())) + ",";
        return out;
    }
    static std::string key(const OpSetup& s, const std::string& impl, const Run& run) {
        std::string k = s.op + "|" + impl + "|" + s.attrs.to_string() + "|";
        for (const HostTensor& t : run) k += t.shape().to_string() + ";";
        for (const auto& [index, c] : s.constants) {
            const auto* p = static_cast<const unsigned char*>(c.data());
            k += "|" + std::to_string(index) + ":" + c.layout().to_string() + ":" +
                 std::string(reinterpret_cast<const char*>(p), c.bytes());
        }
        return k;
    }
    std::map<std::string, std::set<std::string>> seen_;
};

StaticShapeLedger& static_shape_ledger() {
    static StaticShapeLedger ledger;
    return ledger;
}

}   // namespace

Tolerance tolerance(DataType t) {
    if (t == DataType::f32) return {1e-4, 1e-5};
    if (t == DataType::f16) return {1e-2, 1e-3};
    return {0, 0};
}

void expect_close(const HostTensor& got, const HostTensor& want, double rtol, double atol) {
    ASSERT_EQ(got.dtype(), want.dtype());
    ASSERT_EQ(got.shape(), want.shape());
    size_t bad = 0;
    for (size_t i = 0; i < want.count(); ++i) {
        const double g = got.get_as_double(i), w = want.get_as_double(i);
        if (std::isnan(w) && std::isnan(g)) continue;
        if (g == w) continue;   // also equal infinities
        if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w)) && bad++ < 5)
            ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w;
    }
    EXPECT_EQ(bad, 0u) << "elements out of tolerance (rtol " << rtol << ", atol " << atol << ")";
}

EnginePtr ocl_engine() {
    static const CacheDir cache_dir;
    if (!registry()->has_engine("ocl")) return nullptr;
    try {
        return engine("ocl");
    } catch (const Error&) {
        return nullptr;   // no OpenCL platform or device
    }
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "<no error>";
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Attributes attrs(std::initializer_list<std::pair<const std::string, AttrValue>> values) {
    Attributes a;
    for (const auto& [k, v] : values) a.set(k, v);
    return a;
}

std::vector<Layout> infer_shapes(const std::string& op, const std::vector<Layout>& inputs, const Attributes& raw,
                                 const std::map<size_t, HostTensor>& values) {
    const OpDefinition& def = registry()->op(op).def;
    const Attributes validated = Attributes::validate(def.attrs, raw);
    std::vector<const HostTensor*> known(inputs.size(), nullptr);
    for (const auto& [i, v] : values) known.at(i) = &v;
    const std::string node = "node";
    ShapeInferContext ctx{node, inputs, validated, known};
    return def.infer(ctx);
}

void expect_shapes(const std::string& op, const std::vector<ShapeRow>& rows) {
    for (size_t r = 0; r < rows.size(); ++r) {
        const ShapeRow& row = rows[r];
        std::string ins;
        for (const Layout& l : row.inputs) ins += " " + l.to_string();
        SCOPED_TRACE(op + " row " + std::to_string(r) + ":" + ins);
        if (!row.error.empty()) {
            const std::string msg = error_of([&] { infer_shapes(op, row.inputs, row.attrs, row.values); });
            for (const std::string& word : row.error) EXPECT_NE(msg.find(word), std::string::npos) << msg;
            continue;
        }
        std::vector<Layout> got;
        const std::string msg = error_of([&] { got = infer_shapes(op, row.inputs, row.attrs, row.values); });
        ASSERT_EQ(msg, "<no error>");
        EXPECT_EQ(got, row.outputs);
    }
}

std::vector<Run> random_runs(DataType t, const std::vector<std::vector<Shape>>& shapes, uint64_t seed, double low,
                             double high) {
    std::vector<Run> out;
    for (const auto& row : shapes) {
        Run run;
        for (const Shape& s : row) run.push_back(random_tensor(t, s, seed++, low, high));
        out.push_back(std::move(run));
    }
    return out;
}

std::vector<HostTensor> reference_outputs(const OpSetup& s, const Run& run) {
    const RegisteredImpl* ref = reference_impl(s.op);
    if (!ref) throw Error("op '" + s.op + "' has no static cpu impl to serve as the reference");
    const auto program = program_of(view_with(s.op, ref), s, static_layouts(s, run));
    NetworkOptions opts;
    opts.use_dynamic_impls = false;
    opts.async_compile = false;   // static impls only: no background builds
    opts.views = false;           // the impls are under test: layout-only ops run them too
    InferRequest req(Network::create(program, engine("cpu"), opts));
    set_inputs(req, s, run);
    req.infer();
    return outputs_of(req, program->outputs().size());
}

std::vector<std::string> expect_impls_match_reference(const OpSetup& s, const std::vector<Run>& runs,
                                                      std::optional<Tolerance> tol,
                                                      const std::vector<std::string>& may_skip,
                                                      const std::vector<std::string>& impl_types) {
    std::vector<std::vector<HostTensor>> want;
    for (const Run& run : runs) want.push_back(reference_outputs(s, run));
    std::vector<std::string> ran_impls;
    for (const RegisteredImpl* impl : registry()->all_impls(s.op)) {
        const ImplEntry& e = impl->entry;
        if (!impl_types.empty() && std::find(impl_types.begin(), impl_types.end(), e.impl_type) == impl_types.end())
            continue;
        const EnginePtr eng = engine_for(e.impl_type);
        if (!eng) {
            std::printf("note: %s: impl %s skipped, no %s engine here\n", s.op.c_str(), e.name.c_str(),
                        e.impl_type.c_str());
            continue;
        }
        const bool dynamic = e.shape_type == ShapeType::dynamic_shape;
        const auto view = view_with(s.op, impl);
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile = false;   // the view has no static impl to build
        opts.views = false;
        std::optional<InferRequest> seq;   // dynamic impls: one request for every run
        if (dynamic) seq.emplace(Network::create(program_of(view, s, s.inputs), eng, opts));
        size_t taken = 0;
        for (size_t r = 0; r < runs.size(); ++r) {
            SCOPED_TRACE(s.op + " impl " + e.name + " run " + std::to_string(r) + ": " + describe(runs[r]));
            const auto program = program_of(view, s, static_layouts(s, runs[r]));
            if (!e.check(tools::single_node_params(*program, eng.get())).empty()) continue;
            const bool ocl_static = !dynamic && e.impl_type == "ocl";
            if (ocl_static && taken > 0 && static_shape_ledger().covered(s, e.name, runs[r])) continue;
            if (ocl_static) static_shape_ledger().record(s, e.name, runs[r]);
            ++taken;
            std::optional<InferRequest> fresh;
            if (!dynamic) fresh.emplace(Network::create(program, eng, opts));
            InferRequest& req = dynamic ? *seq : *fresh;
            set_inputs(req, s, runs[r]);
            req.infer();
            const NodeStats* st = stats_of(req);
            if (st && !st->impl.empty()) {
                EXPECT_EQ(st->dynamic_impl, dynamic) << "ran " << st->impl;
            }
            expect_outputs(outputs_of(req, program->outputs().size()), want[r], tol);
        }
        if (taken > 0) ran_impls.push_back(e.name);
        else if (std::find(may_skip.begin(), may_skip.end(), e.name) == may_skip.end())
            ADD_FAILURE() << s.op << ": impl " << e.name << " took none of the " << runs.size()
                          << " runs (widen the matrix, or list it in may_skip)";
    }
    return ran_impls;
}

void expect_device_index_errors(const OpSetup& s, const std::vector<BadIndexRun>& bad, const Run& good) {
    if (!ocl_engine()) GTEST_SKIP() << "no ocl engine";
    const auto on_cpu = [&](const Run& run) {
        const auto program = program_of(registry(), s, static_layouts(s, run));
        InferRequest req(Network::create(program, engine("cpu")));
        set_inputs(req, s, run);
        req.infer();
        return outputs_of(req, program->outputs().size());
    };
    const std::vector<HostTensor> want = on_cpu(good);
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic" : "static");
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile = false;
        const auto program = program_of(registry(), s, s.inputs);
        InferRequest req(Network::create(program, ocl_engine(), opts));
        const auto infer = [&](const Run& run) {
            set_inputs(req, s, run);
            req.infer();
            return outputs_of(req, program->outputs().size());
        };
        for (size_t b = 0; b < bad.size(); ++b) {
            SCOPED_TRACE("bad run " + std::to_string(b) + ": " + describe(bad[b].run));
            const std::string msg = error_of([&] { infer(bad[b].run); });
            const std::string host = error_of([&] { on_cpu(bad[b].run); });
            ASSERT_NE(host.find("index "), std::string::npos) << host;
            EXPECT_NE(msg.find(host.substr(host.find("index "))), std::string::npos) << msg << " vs " << host;
            EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
            for (const std::string& word : bad[b].words)
                EXPECT_NE(msg.find(word), std::string::npos) << word << " in " << msg;
            const std::vector<HostTensor> got = infer(good);
            ASSERT_EQ(got.size(), want.size());
            for (size_t k = 0; k < got.size(); ++k) expect_bytes_equal(got[k], want[k]);
        }
    }
}

void expect_sequence(const OpSetup& s, const std::vector<Run>& runs, const SequenceOptions& o) {
    const EnginePtr eng = engine_for(o.engine);
    if (!eng) {
        std::printf("note: %s: sequence on %s skipped, no such engine here\n", s.op.c_str(), o.engine.c_str());
        return;
    }
    const bool critical = registry()->op(s.op).def.traits.critical;
    NetworkOptions opts = o.network;
    opts.use_dynamic_impls = o.mode != Mode::static_only;
    opts.async_compile = o.mode == Mode::dynamic_async;
    opts.views = false;   // the sequence checks the impls' counters: layout-only ops run them too
    if (critical) opts.async_compile_after = 1;   // queue each new shape's build on its first run
    const auto program = program_of(registry(), s, s.inputs);
    const auto network = Network::create(program, eng, opts);
    InferRequest req(network);
    std::set<std::vector<Shape>> seen;
    std::vector<Shape> prev;
    bool prev_new = false;
    for (size_t step = 0; step < runs.size(); ++step) {
        SCOPED_TRACE(s.op + " on " + o.engine + ", step " + std::to_string(step) + ": " + describe(runs[step]));
        const std::vector<Shape> key = shapes_of(runs[step]);
        const bool same = step > 0 && key == prev, revisit = seen.count(key) > 0;
        set_inputs(req, s, runs[step]);
        req.infer();
        if (critical && o.mode == Mode::dynamic_async) network->wait_for_background_builds();
        const std::vector<HostTensor> got = outputs_of(req, program->outputs().size());
        expect_outputs(got, reference_outputs(s, runs[step]), o.tol);
        // The flow skips a node whose output is empty: no counters to check.
        const bool empty = std::all_of(got.begin(), got.end(), [](const HostTensor& t) { return t.count() == 0; });
        const NodeStats* st = stats_of(req);
        if (!o.impl_suffix.empty() && st && !st->impl.empty()) {
            EXPECT_TRUE(ends_with(st->impl, o.impl_suffix)) << "ran " << st->impl << ", want *" << o.impl_suffix;
        }
        if (o.check_counters && !empty) {
            const Counters& c = node_counters(req, "node");
            // A shape-agnostic impl as fast as a static build (oneDNN's
            // matmul) runs every shape: no static build, queued or not.
            const Impl* impl = req.inst("node").impl().get();
            const bool redundant = o.mode == Mode::dynamic_async && impl && impl->static_builds_redundant();
            if (!critical || redundant) {
                expect_sweep_counters(c, o.mode != Mode::static_only, same, revisit, step);
                if (redundant) {
                    EXPECT_EQ(c.async_builds_queued, 0u) << "step " << step;
                }
            } else {
                EXPECT_EQ(c.executions, 1u);
                EXPECT_EQ(c.shape_changes, same ? 0u : 1u);
                EXPECT_EQ(c.skip_shape_unchanged, same ? 1u : 0u);
                expect_impl_counters(o.mode, c, same, revisit, prev_new, step);
            }
        }
        if (o.on_step) o.on_step(req, step);
        prev_new = !same && !revisit;
        seen.insert(key);
        prev = key;
    }
    if (o.check_total_builds) {
        EXPECT_EQ(req.cumulative().static_builds, o.mode == Mode::static_only ? seen.size() : 0u)
            << s.op << " on " << o.engine << ": static builds over the whole sequence";
    }
}

std::vector<SequenceOptions> every_engine_and_mode(std::optional<Tolerance> tol) {
    std::vector<SequenceOptions> all;
    for (const char* eng : {"cpu", "ocl"}) {
        if (std::string(eng) == "ocl" && !ocl_engine()) continue;
        for (Mode mode : {Mode::dynamic_async, Mode::static_only}) {
            SequenceOptions o(eng, mode);
            o.tol = tol;
            if (o.engine == "ocl") o.impl_suffix = mode == Mode::static_only ? "_ocl_static" : "_ocl_dynamic";
            all.push_back(o);
        }
    }
    return all;
}

const char* mode_name(Mode m) {
    return m == Mode::static_only ? "static impls" : m == Mode::sync_compile ? "sync compile" : "dynamic impls";
}

SequenceOptions sweep_options(bool dynamic_impls) {
    SequenceOptions o;
    o.mode = dynamic_impls ? Mode::dynamic_async : Mode::static_only;
    o.check_total_builds = true;
    return o;
}

void expect_bytes_equal(const HostTensor& got, const HostTensor& want) {
    ASSERT_EQ(got.dtype(), want.dtype());
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes()));
}

const std::vector<int64_t>& tail_sizes() {
    static const std::vector<int64_t> sizes = {1, 3, 13, 13, 16, 17, 255, 257, 16, 1, 257};
    return sizes;
}

Attributes conv_attrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& pads_begin,
                      const std::vector<int64_t>& pads_end, const std::vector<int64_t>& dilations, int64_t groups,
                      const std::optional<std::vector<int64_t>>& output_padding) {
    Attributes a;
    a.set("strides", strides);
    a.set("pads_begin", pads_begin);
    a.set("pads_end", pads_end);
    a.set("dilations", dilations);
    if (output_padding) a.set("output_padding", *output_padding);
    a.set("groups", groups);
    return a;
}

std::string dynamic_or_static(const ::testing::TestParamInfo<bool>& info) { return info.param ? "Dynamic" : "Static"; }

}   // namespace dynrt::test
