// update_weights: constant weights reordered into the format the chosen impl
// reads (convolution's static host impl reads osv16), the per-primitive LRU of
// reordered buffers (capacity from NetworkOptions), reinterpretation of a
// compatible layout, and the outputs against an independent convolution.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "dynrt/program.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

// Direct 3x3 (or 1x1) convolution, stride 1, pads p, from the definition.
HostTensor conv_ref(const HostTensor& x, const HostTensor& w, int64_t pad) {
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], K = ws[2];
    const int64_t OH = H + 2 * pad - K + 1, OW = W + 2 * pad - K + 1;
    HostTensor y(DataType::f32, Shape{N, O, OH, OW});
    size_t idx = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    double acc = 0;
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t p = 0; p < K; ++p)
                            for (int64_t q = 0; q < K; ++q) {
                                const int64_t ih = i - pad + p, iw = j - pad + q;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                acc += x.get_as_double(static_cast<size_t>(((n * C + c) * H + ih) * W + iw)) *
                                       w.get_as_double(static_cast<size_t>(((o * C + c) * K + p) * K + q));
                            }
                    y.set_from_double(idx++, acc);
                }
    return y;
}

std::shared_ptr<Program> conv_program(const HostTensor& w, int64_t pad) {
    auto program = std::make_shared<Program>(test::registry());
    program->add_input("x", Layout(PartialShape{1, w.shape()[1], Dimension(), Dimension()}, DataType::f32));
    program->add_constant("w", w);
    Attributes a;
    a.set("pads_begin", std::vector<int64_t>{pad, pad});
    a.set("pads_end", std::vector<int64_t>{pad, pad});
    program->add_node("conv", "convolution", {"x", "w"}, a);
    program->add_output("conv");
    program->build();
    return program;
}

// Runs size h, checks the output, returns nothing; the caller reads counters.
void run_size(InferRequest& req, const HostTensor& w, int64_t h, int64_t pad) {
    SCOPED_TRACE("h = " + std::to_string(h));
    const HostTensor x = test::random_tensor(DataType::f32, Shape{1, w.shape()[1], h, h + 2}, static_cast<uint64_t>(h));
    req.set_input("x", x);
    req.infer();
    EXPECT_LE(test::max_abs_diff(req.get_output(0), conv_ref(x, w, pad)), 1e-4);
}

// Dynamic impl (plain weights) first, its background static build (osv16)
// picked up on the next run of the same size: the weights follow the impl.
// Sizes A, A, B, B, A: with a cache of one entry the original weights evict the
// reordered ones when the dynamic impl comes back, so B's static impl reorders
// again; with three entries the reordered buffer is still there.
struct LruCounts {
    uint64_t reorders = 0, hits = 0;
};
LruCounts alternate_impls(size_t capacity) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{20, 3, 3, 3}, 3);
    NetworkOptions opt;
    opt.host_reference_only = true;   // the cpu reference reads osv16 weights: the reorder path
    opt.weights_cache_capacity = capacity;
    opt.async_compile_after = 1;   // each size's static build queued on its first run
    auto net = Network::create(conv_program(w, 1), test::engine("cpu"), opt);
    InferRequest req(net);
    const std::vector<int64_t> sizes = {5, 5, 8, 8, 5};
    for (size_t k = 0; k < sizes.size(); ++k) {
        run_size(req, w, sizes[k], 1);
        const PrimitiveInst& conv = req.inst("conv");
        // The weights the kernel read are in the format of the impl that ran.
        EXPECT_EQ(conv.weights_memory()->layout().format, conv.impl()->weights_format()) << "run " << k;
        net->wait_for_background_builds();
    }
    EXPECT_EQ(req.inst("conv").impl()->weights_format(), Format::osv16);
    return {req.cumulative().weights_reorders, req.cumulative().weights_cache_hits};
}

TEST(WeightsReorder, CacheOfOne_ReordersAgainAfterTheOriginalEvictedIt) {
    const LruCounts c = alternate_impls(1);
    EXPECT_EQ(c.reorders, 2u);   // A's static impl, then B's after the dynamic impl's plain weights
    EXPECT_EQ(c.hits, 1u);       // back to A: B's reordered buffer has the same layout
}

TEST(WeightsReorder, CacheOfThree_ReordersOnceAndHitsAfterwards) {
    const LruCounts c = alternate_impls(3);
    EXPECT_EQ(c.reorders, 1u);
    EXPECT_EQ(c.hits, 2u);
}

TEST(WeightsReorder, StaticImplsOnly_ReorderOnceForEveryShape) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{17, 2, 3, 3}, 4);
    NetworkOptions opt;
    opt.host_reference_only = true;   // the cpu reference reads osv16 weights: the reorder path
    opt.use_dynamic_impls = false;
    InferRequest req(Network::create(conv_program(w, 1), test::engine("cpu"), opt));
    for (int64_t h : {4, 6, 4, 9}) run_size(req, w, h, 1);
    EXPECT_EQ(req.cumulative().weights_reorders, 1u);
    EXPECT_EQ(req.cumulative().weights_cache_hits, 3u);   // every later impl change
    EXPECT_EQ(req.cumulative().impl_changes, 4u);
}

TEST(WeightsReorder, NoReorderOp_RunsOnTheWeightsAsTheyAre) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{17, 2, 3, 3}, 5);
    NetworkOptions opt;
    opt.host_reference_only = true;   // the cpu reference reads osv16 weights: the reorder path
    opt.use_dynamic_impls = false;
    opt.reorder_weights = false;
    InferRequest req(Network::create(conv_program(w, 1), test::engine("cpu"), opt));
    for (int64_t h : {4, 6}) run_size(req, w, h, 1);
    EXPECT_EQ(req.cumulative().weights_reorders, 0u);
    EXPECT_EQ(req.inst("conv").weights_memory(), nullptr);
}

TEST(WeightsReorder, CompatibleLayout_IsReinterpretedNotCopied) {
    // [32, 1, 1, 1]: one element per output feature and O a multiple of 16, so
    // osv16 stores the elements exactly where plain does.
    const HostTensor w = test::random_tensor(DataType::f32, Shape{32, 1, 1, 1}, 6);
    NetworkOptions opt;
    opt.host_reference_only = true;   // the cpu reference reads osv16 weights: the reorder path
    opt.use_dynamic_impls = false;
    auto net = Network::create(conv_program(w, 0), test::engine("cpu"), opt);
    InferRequest req(net);
    for (int64_t h : {3, 4}) run_size(req, w, h, 0);
    EXPECT_EQ(req.cumulative().weights_reorders, 0u);
    const MemoryPtr& used = req.inst("conv").weights_memory();
    ASSERT_NE(used, nullptr);
    EXPECT_EQ(used->layout().format, Format::osv16);
    EXPECT_EQ(used->buffer(), net->constant_memory(net->program().node_index("w"))->buffer());
}

TEST(WeightsReorder, TwoRequests_EachReorderItsOwnCopyOnce) {
    const HostTensor w = test::random_tensor(DataType::f32, Shape{20, 3, 3, 3}, 8);
    NetworkOptions opt;
    opt.host_reference_only = true;   // the cpu reference reads osv16 weights: the reorder path
    opt.use_dynamic_impls = false;
    auto net = Network::create(conv_program(w, 1), test::engine("cpu"), opt);
    InferRequest a(net), b(net);
    run_size(a, w, 5, 1);
    run_size(b, w, 5, 1);   // impl from the shared impl cache, weights reordered for b
    EXPECT_EQ(a.cumulative().weights_reorders, 1u);
    EXPECT_EQ(b.cumulative().weights_reorders, 1u);
    EXPECT_EQ(b.cumulative().impl_cache_hits, 1u);
}

}   // namespace
}   // namespace dynrt
