// OpenCL test support (see ocl_sweep.hpp).
#include "ocl_sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace dynrt::test {

// Inputs of one run, by input name.
using OclInputs = std::vector<std::pair<std::string, HostTensor>>;

// Runs `program` on ONE ocl InferRequest and one cpu InferRequest, feeding both
// make(n, seed) for each n of `sizes`, and compares output 0. The node "node"
// must have run the ocl impl of the requested kind; with static impls a size
// seen before must come from the impl cache.
void ocl_sweep(const EnginePtr& eng, const std::shared_ptr<Program>& program, const std::vector<int64_t>& sizes,
               bool dynamic, const std::function<OclInputs(int64_t n, uint64_t seed)>& make, double rtol, double atol) {
    NetworkOptions opts;
    opts.use_dynamic_impls = dynamic;
    opts.views = false;   // the ocl impls are under test
    InferRequest dev(Network::create(program, eng, opts));
    InferRequest ref(Network::create(program, engine("cpu"), NetworkOptions{}));
    const std::string suffix = dynamic ? "_ocl_dynamic" : "_ocl_static";
    std::set<int64_t> seen;
    uint64_t seed = 1;
    for (int64_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n) + (dynamic ? " (ocl_dynamic)" : " (ocl_static)"));
        for (const auto& [name, value] : make(n, seed++)) {
            dev.set_input(name, value);
            ref.set_input(name, value);
        }
        dev.infer();
        ref.infer();
        const HostTensor out = dev.get_output(0);
        expect_close(out, ref.get_output(0), rtol, atol);
        if (out.count() == 0) continue;   // the flow skips a node with an empty output
        const NodeStats* node = nullptr;
        for (const NodeStats& s : dev.last_run().nodes)
            if (s.node == "node") node = &s;
        ASSERT_NE(node, nullptr);
        EXPECT_GE(node->impl.size(), suffix.size());
        EXPECT_EQ(node->impl.substr(node->impl.size() - std::min(node->impl.size(), suffix.size())), suffix)
            << node->impl;
        if (!dynamic && seen.count(n)) {
            EXPECT_GE(node->counters.impl_cache_hits, 1u);
        }
        seen.insert(n);
    }
}

void ocl_sweep_exact(const EnginePtr& eng, const std::shared_ptr<Program>& program, const std::vector<int64_t>& sizes,
                     const std::function<OclInputs(int64_t n, uint64_t seed)>& make) {
    for (bool dynamic : {true, false}) ocl_sweep(eng, program, sizes, dynamic, make, 0, 0);
}

void ocl_sweep_every_width(const std::vector<int64_t>& sizes,
                           const std::function<std::shared_ptr<Program>(DataType t)>& program,
                           const std::function<OclInputs(DataType t, int64_t n, uint64_t seed)>& make) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (DataType t : {DataType::f16, DataType::i64, DataType::u8}) {
        SCOPED_TRACE(to_string(t));
        ocl_sweep_exact(eng, program(t), sizes, [&](int64_t n, uint64_t seed) { return make(t, n, seed); });
    }
}

namespace {
NetworkOptions ocl_options(bool dynamic, NetworkOptions opts) {
    opts.use_dynamic_impls = dynamic;
    opts.async_compile = dynamic;
    opts.views = false;   // the ocl impls are under test
    return opts;
}
}   // namespace

OclAndCpuRequests::OclAndCpuRequests(const EnginePtr& eng, const std::shared_ptr<Program>& program, bool dynamic,
                                     NetworkOptions base)
    : req(Network::create(program, eng, ocl_options(dynamic, std::move(base)))),
      ref(Network::create(program, engine("cpu"), NetworkOptions())) {}

void OclAndCpuRequests::infer(const OclInputs& inputs) {
    for (const auto& [name, value] : inputs) {
        req.set_input(name, value);
        ref.set_input(name, value);
    }
    req.infer();
    ref.infer();
}

HostTensor execute_impl(const EnginePtr& eng, Stream& stream, Impl& impl, const KernelParams& p) {
    const std::vector<MemoryPtr> ins = {std::make_shared<Memory>(eng->allocate(p.inputs[0].bytes()), p.inputs[0])};
    const std::vector<MemoryPtr> outs = {std::make_shared<Memory>(eng->allocate(p.outputs[0].bytes()), p.outputs[0])};
    ExecContext ctx{stream, p, ins, outs};
    impl.execute(ctx);
    HostTensor got(p.outputs[0].dtype, p.outputs[0].shape.to_shape());
    outs[0]->buffer()->read(stream, got.data(), 0, got.bytes());
    return got;
}

void expect_ocl_impl(const NodeStats& ns, bool dynamic, bool revisit, const std::string& what) {
    if (dynamic) {
        if (!revisit) EXPECT_TRUE(ends_with(ns.impl, "_ocl_dynamic")) << ns.impl << " " << what;
        else EXPECT_TRUE(ends_with(ns.impl, "_ocl_dynamic") || ends_with(ns.impl, "_ocl_static")) << ns.impl;
    } else {
        EXPECT_TRUE(ends_with(ns.impl, "_ocl_static")) << ns.impl << " " << what;
        EXPECT_EQ(ns.counters.impl_cache_hits, revisit ? 1u : 0u) << what;
        EXPECT_EQ(ns.counters.static_builds, revisit ? 0u : 1u) << what;
    }
}

std::vector<HostTensor> f16_host_fallback(const std::string& op, const Shape& s0, const Shape& s1,
                                          const Attributes& attrs) {
    EnginePtr eng = ocl_engine();
    if (!eng) return {};
    HostTensor x = random_tensor(DataType::f16, s0, 1), w = random_tensor(DataType::f16, s1, 2);
    auto prog = single_node_program(op, {x.layout(), w.layout()}, attrs);
    HostTensor y = expect_host_fallback(eng, prog, {{"in0", x}, {"in1", w}});
    return {std::move(x), std::move(w), std::move(y)};
}

HostTensor expect_host_fallback(const EnginePtr& eng, const std::shared_ptr<Program>& program,
                                const OclInputs& inputs) {
    InferRequest req(Network::create(program, eng, NetworkOptions()));
    for (const auto& [name, value] : inputs) req.set_input(name, value);
    req.infer();
    const std::string& impl = req.last_run().nodes.back().impl;
    EXPECT_FALSE(ends_with(impl, "_ocl_static")) << impl;
    EXPECT_FALSE(ends_with(impl, "_ocl_dynamic")) << impl;
    return req.get_output(0);
}

const std::vector<int64_t>& ocl_tail_sizes() {
    static const std::vector<int64_t> sizes = {1, 3, 13, 16, 17, 255, 257, 16, 1, 257};
    return sizes;
}

}   // namespace dynrt::test
