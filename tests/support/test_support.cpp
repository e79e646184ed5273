// Test support: the shared registry of in-tree modules and small helpers for
// op tests (random inputs, one-node programs, single runs, comparisons).
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <random>

#include "dynrt/module_loader.hpp"

namespace dynrt::test {

std::string module_dir() { return DYNRT_TEST_MODULE_DIR; }

std::shared_ptr<const Registry> registry() {
    static std::once_flag once;
    static std::shared_ptr<Registry> reg;
    std::call_once(once, [] {
        auto r = std::make_shared<Registry>();
        // The default search path (<exe>/../lib/dynrt) is wrong for test
        // executables, so the folder is always given explicitly.
        const LoadReport report = ModuleLoader::load_dirs(*r, {module_dir()});
        if (!report.failed.empty()) {
            std::string msg = "modules failed to load from " + module_dir() + ":\n";
            for (const LoadFailure& f : report.failed) msg += "  " + f.path + ": " + f.message + "\n";
            ADD_FAILURE() << msg;
            // Every test of the program would fail confusingly later on.
            std::fprintf(stderr, "%s", msg.c_str());
            std::abort();
        }
        reg = std::move(r);
    });
    return reg;
}

EnginePtr engine(const std::string& type) {
    EngineConfig cfg;
    cfg.device = type;
    return registry()->create_engine(type, cfg);
}

HostTensor random_tensor(DataType t, const Shape& s, uint64_t seed, double low, double high) {
    HostTensor out(t, s);
    std::mt19937_64 rng(seed);
    const size_t n = out.count();
    if (is_floating(t)) {
        std::uniform_real_distribution<double> dist(low, high);
        for (size_t i = 0; i < n; ++i) out.set_from_double(i, dist(rng));
        return out;
    }
    int64_t lo = static_cast<int64_t>(std::ceil(low));
    int64_t hi = static_cast<int64_t>(std::ceil(high)) - 1;   // [low, high)
    if (t == DataType::boolean) {
        lo = 0;
        hi = 1;
    } else if (t == DataType::u8) {
        lo = std::max<int64_t>(lo, 0);
        hi = std::min<int64_t>(hi, 255);
    } else if (t == DataType::i8) {
        lo = std::max<int64_t>(lo, -128);
        hi = std::min<int64_t>(hi, 127);
    }
    if (hi < lo) hi = lo;
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (size_t i = 0; i < n; ++i) out.set_from_double(i, static_cast<double>(dist(rng)));
    return out;
}

std::shared_ptr<Program> single_node_program(const std::string& op, const std::vector<Layout>& inputs,
                                             const Attributes& attrs, const std::map<size_t, HostTensor>& constants) {
    auto program = std::make_shared<Program>(registry(), op);
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        auto c = constants.find(i);
        if (c != constants.end()) program->add_constant(name, c->second);
        else program->add_input(name, inputs[i]);
        names.push_back(name);
    }
    program->add_node("node", op, names, attrs);
    program->add_output("node");
    program->build();
    return program;
}

HostTensor run_once(const std::shared_ptr<Program>& program, const std::vector<HostTensor>& inputs,
                    NetworkOptions options, const std::string& engine_type) {
    auto network = Network::create(program, engine(engine_type), options);
    InferRequest request(network);
    const auto& in_nodes = program->inputs();
    if (in_nodes.size() != inputs.size())
        throw Error("run_once: the program has " + std::to_string(in_nodes.size()) + " inputs, " +
                    std::to_string(inputs.size()) + " given");
    for (size_t i = 0; i < in_nodes.size(); ++i) request.set_input(program->nodes()[in_nodes[i]].name, inputs[i]);
    request.infer();
    return request.get_output(0);
}

double max_abs_diff(const HostTensor& a, const HostTensor& b) {
    const double inf = std::numeric_limits<double>::infinity();
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) return inf;
    double worst = 0.0;
    for (size_t i = 0; i < a.count(); ++i) {
        const double x = a.get_as_double(i), y = b.get_as_double(i);
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) && std::isnan(y)) continue;
            return inf;
        }
        if (x == y) continue;   // equal infinities
        worst = std::max(worst, std::fabs(x - y));
    }
    return worst;
}

const Counters& node_counters(const InferRequest& req, const std::string& node) {
    for (const NodeStats& s : req.last_run().nodes)
        if (s.node == node) return s.counters;
    static const Counters none;
    ADD_FAILURE() << "no stats for node " << node;
    return none;
}

void expect_sweep_counters(const Counters& c, bool dynamic_impls, bool same_as_prev, bool revisit, size_t step) {
    EXPECT_EQ(c.executions, 1u) << "step " << step;
    if (!same_as_prev) {
        EXPECT_EQ(c.shape_changes, 1u) << "step " << step;
        EXPECT_EQ(c.skip_shape_unchanged, 0u) << "step " << step;
    } else {
        EXPECT_EQ(c.shape_changes, 0u) << "step " << step;
        EXPECT_EQ(c.skip_shape_unchanged, 1u) << "step " << step;
    }
    if (dynamic_impls) {
        EXPECT_EQ(c.static_builds, 0u) << "step " << step;
        EXPECT_EQ(c.dynamic_impl_runs, 1u) << "step " << step;
    } else if (same_as_prev) {
        EXPECT_EQ(c.static_builds + c.impl_cache_hits, 0u) << "step " << step;
    } else if (revisit) {
        EXPECT_EQ(c.impl_cache_hits, 1u) << "step " << step;
        EXPECT_EQ(c.static_builds, 0u) << "step " << step;
    } else {
        EXPECT_EQ(c.static_builds, 1u) << "step " << step;
    }
}

void expect_impl_counters(Mode mode, const Counters& c, bool same_as_prev, bool revisit, bool prev_new, size_t step) {
    if (mode == Mode::dynamic_async) {
        EXPECT_EQ(c.static_builds, 0u) << "step " << step;
        if (same_as_prev) {
            // The build queued on the previous step has finished (we waited).
            EXPECT_EQ(c.dynamic_impl_runs, 0u) << "step " << step;
            EXPECT_EQ(c.async_builds_picked, prev_new ? 1u : 0u) << "step " << step;
        } else if (revisit) {
            EXPECT_EQ(c.impl_cache_hits, 1u) << "step " << step;
            EXPECT_EQ(c.dynamic_impl_runs, 0u) << "step " << step;
        } else {
            EXPECT_EQ(c.dynamic_impl_runs, 1u) << "step " << step;
            EXPECT_EQ(c.async_builds_queued, 1u) << "step " << step;
        }
        return;
    }
    EXPECT_EQ(c.dynamic_impl_runs, 0u) << "step " << step;
    EXPECT_EQ(c.async_builds_queued, 0u) << "step " << step;
    if (same_as_prev) EXPECT_EQ(c.static_builds + c.impl_cache_hits, 0u) << "step " << step;
    else if (revisit) EXPECT_EQ(c.impl_cache_hits, 1u) << "step " << step;
    else EXPECT_EQ(c.static_builds, 1u) << "step " << step;
}

void add_batch_target(Program& p, const std::string& x, int64_t last) {
    p.add_constant("idx0", HostTensor::from_int64(DataType::i64, {1}, {0}));
    p.add_constant("minus1", HostTensor::from_int64(DataType::i64, {1}, {-1}));
    p.add_constant("last", HostTensor::from_int64(DataType::i64, {1}, {last}));
    p.add_node("shape", "shape_of", {x});
    p.add_node("batch", "gather", {"shape", "idx0"});
    p.add_node("target", "concat", {"batch", "minus1", "last"}, attr("axis", int64_t{0}));
}

}   // namespace dynrt::test
