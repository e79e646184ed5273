// Cross-op: a reshape whose target comes from a shape_of -> gather -> concat
// chain, with the real op modules, across changing shapes. Checks the values
// against an independent computation and the shape_of-subgraph skips on the
// counters.
#include <gtest/gtest.h>

#include "dynrt/network.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

using test::node_counters;

// x [B, S, 16] -> target = concat(gather(shape_of(x), [0]), [-1], [4]) -> reshape
// -> [B, S*4, 4] -> cumsum over axis 1.
std::shared_ptr<Network> build(NetworkOptions opt = {}) {
    auto p = std::make_shared<Program>(test::registry(), "shape_chain");
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension(), 16}, DataType::f32));
    test::add_batch_target(*p, "x", 4);
    p->add_node("reshaped", "reshape", {"x", "target"});
    Attributes cs;
    cs.set("axis", int64_t{1});
    p->add_node("sum", "cumsum", {"reshaped"}, cs);
    p->add_output("sum");
    p->build();
    return Network::create(p, test::engine(), opt);
}

HostTensor expected(const HostTensor& x) {
    const int64_t b = x.shape()[0], s = x.shape()[1];
    HostTensor out(DataType::f32, Shape{b, s * 4, 4});
    for (int64_t i = 0; i < b; ++i)
        for (int64_t c = 0; c < 4; ++c) {
            double acc = 0;
            for (int64_t r = 0; r < s * 4; ++r) {
                const size_t flat = size_t((i * s * 4 + r) * 4 + c);
                acc += x.as<float>()[flat];
                out.as<float>()[flat] = float(acc);
            }
        }
    return out;
}

}   // namespace

TEST(ShapeChain, ReshapeTargetFromShapeOfChain_FollowsChangingShapes) {
    for (bool dynamic_impls : {true, false}) {
        NetworkOptions opt;
        opt.use_dynamic_impls = dynamic_impls;
        auto net = build(opt);
        InferRequest req(net);
        const Shape shapes[] = {{1, 1, 16}, {2, 3, 16}, {1, 13, 16}, {3, 17, 16}, {2, 3, 16}, {1, 1, 16}};
        uint64_t seed = 1;
        for (const Shape& s : shapes) {
            HostTensor x = test::random_tensor(DataType::f32, s, seed++);
            req.set_input("x", x);
            req.infer();
            HostTensor out = req.get_output(0);
            ASSERT_EQ(out.shape(), Shape({s[0], s[1] * 4, 4})) << s.to_string();
            EXPECT_LT(test::max_abs_diff(out, expected(x)), 1e-4) << s.to_string();
            EXPECT_EQ(node_counters(req, "shape").executions, 1u);
            EXPECT_EQ(node_counters(req, "reshaped").shape_changes, 1u);
        }
    }
}

TEST(ShapeChain, SameShapeNewData_ShapeSubgraphSkippedValuesReused) {
    auto net = build();
    InferRequest req(net);
    req.set_input("x", test::random_tensor(DataType::f32, {2, 5, 16}, 7));
    req.infer();
    HostTensor x = test::random_tensor(DataType::f32, {2, 5, 16}, 8);
    req.set_input("x", x);
    req.infer();
    EXPECT_EQ(node_counters(req, "shape").skip_shape_of, 1u);
    EXPECT_EQ(node_counters(req, "shape").executions, 0u);
    EXPECT_EQ(node_counters(req, "batch").skip_shape_of_subgraph, 1u);
    EXPECT_EQ(node_counters(req, "target").skip_shape_of_subgraph, 1u);
    EXPECT_EQ(node_counters(req, "target").executions, 0u);
    EXPECT_EQ(node_counters(req, "reshaped").skip_shape_unchanged, 1u);
    EXPECT_EQ(node_counters(req, "sum").executions, 1u);
    EXPECT_EQ(req.last_run().totals.allocations, 0u);
    EXPECT_LT(test::max_abs_diff(req.get_output(0), expected(x)), 1e-4);
}

TEST(ShapeChain, GrowingSequence_PredictorPreallocates) {
    NetworkOptions on, off;
    off.prealloc = ShapePredictor::parse_settings("0 0 0 1.0");
    auto count = [](NetworkOptions opt) {
        auto net = build(opt);
        InferRequest req(net);
        uint64_t allocs = 0;
        for (int64_t s = 1; s <= 64; ++s) {
            req.set_input("x", test::random_tensor(DataType::f32, {1, s, 16}, uint64_t(s)));
            req.infer();
            allocs += req.last_run().totals.allocations;
        }
        return allocs;
    };
    const uint64_t with = count(on), without = count(off);
    // The input and the cumsum grow every step (the reshape views the input's
    // buffer: no allocation of its own).
    EXPECT_GE(without, 64u * 2);
    // The input grows by 1 per step (iterations mode: +10 steps at a time); the
    // reshaped tensors grow by 4 along one dim, above max_per_dim_diff = 2, so they
    // fall back to ratio mode (x1.1) as in the reference predictor.
    EXPECT_LE(with * 3, without) << with << " vs " << without;
}
