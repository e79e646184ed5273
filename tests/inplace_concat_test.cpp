// Runtime in-place concat: producers write straight into the concat's buffer
// (padded views along the axis), the concat runs no kernel and copies nothing,
// its buffer is sized through the ShapePredictor; outputs equal the copying
// concat and an independent computation. Real op modules, cpu engine: the
// optimised impls (host loops, oneDNN) write into dense blocks and, with a
// batch, into rows interleaved with the other producers'; the reference
// impls take dense blocks only.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

// a: relu(x1), b: x2 + x2, c = concat(a, b, axis 1), out = relu(c)
std::shared_ptr<Network> build(bool inplace, const std::string& prealloc = "10 16384 2 1.1", int64_t batch = 1,
                               bool reference_only = false) {
    auto p = std::make_shared<Program>(test::registry(), "inplace");
    p->add_input("x1", Layout(PartialShape{batch, Dimension(), 4}, DataType::f32));
    p->add_input("x2", Layout(PartialShape{batch, Dimension(), 4}, DataType::f32));
    const Attributes relu = test::attr("func", std::string("relu"));
    const Attributes add = test::attr("mode", std::string("add"));
    const Attributes axis = test::attr("axis", int64_t(1));
    p->add_node("a", "activation", {"x1"}, relu);
    p->add_node("b", "eltwise", {"x2", "x2"}, add);
    p->add_node("c", "concat", {"a", "b"}, axis);
    p->add_node("out", "activation", {"c"}, relu);
    p->add_output("out");
    p->build();
    NetworkOptions opt;
    opt.inplace_concat = inplace;
    opt.prealloc = ShapePredictor::parse_settings(prealloc);
    opt.host_reference_only = reference_only;
    return Network::create(p, test::engine(), opt);
}

// Independent reference: relu(concat(relu(x1), 2 * x2)) along axis 1.
HostTensor reference(const HostTensor& x1, const HostTensor& x2) {
    const int64_t b = x1.shape()[0], n1 = x1.shape()[1], n2 = x2.shape()[1];
    HostTensor out(DataType::f32, {b, n1 + n2, 4});
    for (int64_t i = 0; i < b; ++i) {
        for (int64_t r = 0; r < n1 + n2; ++r) {
            for (int64_t k = 0; k < 4; ++k) {
                const float v = r < n1 ? std::max(0.f, x1.as<float>()[(i * n1 + r) * 4 + k])
                                       : 2.f * x2.as<float>()[(i * n2 + (r - n1)) * 4 + k];
                out.as<float>()[(i * (n1 + n2) + r) * 4 + k] = std::max(0.f, v);
            }
        }
    }
    return out;
}

using test::node_counters;

}   // namespace

TEST(InplaceConcat, ProducersWriteIntoConcatBuffer_NoKernelNoCopy) {
    auto net = build(true);
    InferRequest r(net);
    const HostTensor x1 = test::random_tensor(DataType::f32, {1, 3, 4}, 1);
    const HostTensor x2 = test::random_tensor(DataType::f32, {1, 2, 4}, 2);
    r.set_input("x1", x1);
    r.set_input("x2", x2);
    r.infer();
    EXPECT_LT(test::max_abs_diff(r.output(0), reference(x1, x2)), 1e-6);
    EXPECT_EQ(node_counters(r, "c").concat_inplace, 1u);
    EXPECT_EQ(node_counters(r, "c").executions, 0u);
    EXPECT_EQ(r.last_run().totals.concat_bytes_copied, 0u);
    // Each producer's output is a view of the concat's buffer, padded on axis 1.
    const auto& cbuf = r.inst("c").output_memory()->buffer();
    EXPECT_EQ(r.inst("a").output_memory()->buffer(), cbuf);
    EXPECT_EQ(r.inst("b").output_memory()->buffer(), cbuf);
    const Layout la = r.node_layout("a"), lb = r.node_layout("b");
    EXPECT_EQ(la.padding.upper.at(1), 2);   // b's rows follow
    EXPECT_EQ(lb.padding.lower.at(1), 3);   // after a's rows
    EXPECT_EQ(la.get_shape(), Shape({1, 3, 4}));
    // The producers must come right before the concat in the request's order.
    const auto& order = r.execution_order();
    const auto& prog = net->program();
    auto at = [&](const std::string& n) {
        return std::find(order.begin(), order.end(), prog.node_index(n)) - order.begin();
    };
    EXPECT_EQ(at("b") + 1, at("c"));
    EXPECT_EQ(at("a") + 1, at("b"));
}

TEST(InplaceConcat, OnAndOff_SameOutputsAndOnlyOffCopies) {
    auto on = build(true), off = build(false);
    InferRequest ron(on), roff(off);
    uint64_t copied_off = 0, copied_on = 0;
    for (int64_t s = 1; s <= 12; ++s) {
        const HostTensor x1 = test::random_tensor(DataType::f32, {1, s, 4}, uint64_t(s));
        const HostTensor x2 = test::random_tensor(DataType::f32, {1, 13 - s, 4}, uint64_t(100 + s));
        for (InferRequest* r : {&ron, &roff}) {
            r->set_input("x1", x1);
            r->set_input("x2", x2);
            r->infer();
            EXPECT_LT(test::max_abs_diff(r->output(0), reference(x1, x2)), 1e-6) << "s=" << s;
        }
        copied_on += ron.last_run().totals.concat_bytes_copied;
        copied_off += roff.last_run().totals.concat_bytes_copied;
        EXPECT_EQ(node_counters(roff, "c").executions, 1u);
    }
    EXPECT_EQ(copied_on, 0u);
    EXPECT_EQ(copied_off, 12u * 13 * 4 * sizeof(float));   // every run copies the whole output
}

TEST(InplaceConcat, GrowingConcat_BufferSizedByThePredictor) {
    auto count = [](const std::string& prealloc, size_t* last_capacity) {
        auto net = build(true, prealloc);
        InferRequest r(net);
        uint64_t allocs = 0;
        for (int64_t s = 1; s <= 30; ++s) {
            const HostTensor x1 = test::random_tensor(DataType::f32, {1, s, 4}, uint64_t(s));
            const HostTensor x2 = test::random_tensor(DataType::f32, {1, 1, 4}, uint64_t(7 * s));
            r.set_input("x1", x1);
            r.set_input("x2", x2);
            r.infer();
            EXPECT_LT(test::max_abs_diff(r.output(0), reference(x1, x2)), 1e-6);
            // The concat's buffer is allocated on its behalf by a producer.
            allocs += node_counters(r, "c").allocations;
            EXPECT_EQ(node_counters(r, "a").allocations + node_counters(r, "b").allocations, 0u);
        }
        *last_capacity = r.inst("c").output_capacity();
        return allocs;
    };
    size_t cap_on = 0, cap_off = 0;
    const uint64_t with = count("10 16384 2 1.1", &cap_on);
    const uint64_t without = count("0 0 0 1.0", &cap_off);
    EXPECT_EQ(without, 30u);
    // concat rows s + 1: history of 3, then 10 steps ahead: 2, 3, 4 (-> 14),
    // 15 (-> 25), 26 (-> 36)
    EXPECT_EQ(with, 5u);
    EXPECT_EQ(cap_off, 31u * 4 * sizeof(float));
    EXPECT_EQ(cap_on, 36u * 4 * sizeof(float));
}

TEST(InplaceConcat, RowsNotOneDenseBlock_ReferenceImplsFallBackToTheKernel) {
    // batch 2: a producer's rows are interleaved with the other's in the concat
    // buffer; the reference impls take only dense blocks, so the concat copies.
    auto net = build(true, "10 16384 2 1.1", 2, /*reference_only=*/true);
    InferRequest r(net);
    const HostTensor x1 = test::random_tensor(DataType::f32, {2, 3, 4}, 3);
    const HostTensor x2 = test::random_tensor(DataType::f32, {2, 2, 4}, 4);
    r.set_input("x1", x1);
    r.set_input("x2", x2);
    r.infer();
    EXPECT_LT(test::max_abs_diff(r.output(0), reference(x1, x2)), 1e-6);
    EXPECT_EQ(node_counters(r, "c").concat_inplace, 0u);
    EXPECT_EQ(node_counters(r, "c").executions, 1u);
    EXPECT_EQ(node_counters(r, "c").concat_bytes_copied, 2u * 5 * 4 * sizeof(float));
    EXPECT_TRUE(r.node_layout("a").padding.empty());
}

TEST(InplaceConcat, RowsNotOneDenseBlock_OptimisedLoopsWriteWithThePaddedPitch) {
    // The same batch 2 with the optimised loops: they write through the
    // output's strides, so the concat stays in place.
    auto net = build(true, "10 16384 2 1.1", 2);
    InferRequest r(net);
    for (int64_t s = 1; s <= 6; ++s) {
        const HostTensor x1 = test::random_tensor(DataType::f32, {2, s, 4}, uint64_t(20 + s));
        const HostTensor x2 = test::random_tensor(DataType::f32, {2, 7 - s, 4}, uint64_t(40 + s));
        r.set_input("x1", x1);
        r.set_input("x2", x2);
        r.infer();
        EXPECT_LT(test::max_abs_diff(r.output(0), reference(x1, x2)), 1e-6) << "s=" << s;
        EXPECT_EQ(node_counters(r, "c").concat_inplace, 1u);
        EXPECT_EQ(node_counters(r, "c").executions, 0u);
        EXPECT_EQ(r.last_run().totals.concat_bytes_copied, 0u);
        EXPECT_EQ(r.node_layout("b").padding.lower.at(1), s);
    }
}

namespace {

// The cpu engine's optimised producers of every kind a decoder feeds a KV
// concat with: a = relu(x1), b = x2 + x2, f = fc(x3, w), g = gemm(x4, m),
// t = transpose(x5) ([batch, 4, rows] -> [batch, rows, 4]);
// c = concat(a, b, f, g, t) along axis 1; out = relu(c).
constexpr int64_t kK = 8;   // depth of the matrix producers

std::shared_ptr<Network> producers_network(int64_t batch, bool inplace) {
    auto p = std::make_shared<Program>(test::registry(), "inplace_cpu");
    const Dimension rows = Dimension::dynamic();
    p->add_input("x1", Layout(PartialShape{batch, rows, 4}, DataType::f32));
    p->add_input("x2", Layout(PartialShape{batch, rows, 4}, DataType::f32));
    p->add_input("x3", Layout(PartialShape{batch, rows, kK}, DataType::f32));
    p->add_input("x4", Layout(PartialShape{batch, rows, kK}, DataType::f32));
    p->add_input("x5", Layout(PartialShape{batch, 4, rows}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, {4, kK}, 31));
    p->add_constant("m", test::random_tensor(DataType::f32, {kK, 4}, 32));
    p->add_node("a", "activation", {"x1"}, test::attr("func", std::string("relu")));
    p->add_node("b", "eltwise", {"x2", "x2"}, test::attr("mode", std::string("add")));
    p->add_node("f", "fully_connected", {"x3", "w"});
    p->add_node("g", "gemm", {"x4", "m"});
    p->add_node("t", "transpose", {"x5"}, test::attr("perm", std::vector<int64_t>{0, 2, 1}));
    p->add_node("c", "concat", {"a", "b", "f", "g", "t"}, test::attr("axis", int64_t(1)));
    p->add_node("out", "activation", {"c"}, test::attr("func", std::string("relu")));
    p->add_output("out");
    p->build();
    NetworkOptions opt;
    opt.inplace_concat = inplace;
    return Network::create(p, test::engine("cpu"), opt);
}

void feed_producers(InferRequest& r, int64_t batch, const std::vector<int64_t>& rows, uint64_t seed) {
    r.set_input("x1", test::random_tensor(DataType::f32, {batch, rows[0], 4}, seed));
    r.set_input("x2", test::random_tensor(DataType::f32, {batch, rows[1], 4}, seed + 1));
    r.set_input("x3", test::random_tensor(DataType::f32, {batch, rows[2], kK}, seed + 2));
    r.set_input("x4", test::random_tensor(DataType::f32, {batch, rows[3], kK}, seed + 3));
    r.set_input("x5", test::random_tensor(DataType::f32, {batch, 4, rows[4]}, seed + 4));
}

// Row counts per run: tails and growth, revisits included.
const std::vector<std::vector<int64_t>> kProducerRuns = {
    {1, 1, 1, 1, 1},    {3, 1, 2, 5, 4},    {13, 16, 17, 1, 2}, {3, 1, 2, 5, 4},
    {1, 255, 3, 17, 1}, {16, 2, 1, 13, 40}, {2, 3, 4, 5, 6},
};

// Every run in place on one request, outputs equal to the copying concat.
void producers_sweep(int64_t batch) {
    InferRequest on(producers_network(batch, true));
    InferRequest off(producers_network(batch, false));
    uint64_t seed = 1;
    for (const auto& rows : kProducerRuns) {
        SCOPED_TRACE("batch " + std::to_string(batch) + " rows " + std::to_string(rows[0]) + "," +
                     std::to_string(rows[1]) + "," + std::to_string(rows[2]) + "," + std::to_string(rows[3]) + "," +
                     std::to_string(rows[4]));
        feed_producers(on, batch, rows, seed);
        feed_producers(off, batch, rows, seed);
        seed += 10;
        on.infer();
        off.infer();
        test::expect_close(on.output(0), off.output(0), 1e-5, 1e-5);
        const Counters& c = node_counters(on, "c");
        EXPECT_EQ(c.concat_inplace, 1u);
        EXPECT_EQ(c.executions, 0u);
        EXPECT_EQ(on.last_run().totals.concat_bytes_copied, 0u);
        EXPECT_EQ(node_counters(off, "c").executions, 1u);
        const auto& cbuf = on.inst("c").output_memory()->buffer();
        for (const char* producer : {"a", "b", "f", "g", "t"}) {
            EXPECT_EQ(on.inst(producer).output_memory()->buffer(), cbuf) << producer;
            EXPECT_NE(node_counters(on, producer).executions, 0u) << producer;
        }
        // An optimised impl wrote each producer's rows, not the reference.
        for (const auto& n : on.last_run().nodes) {
            if (n.node.size() != 1 || std::string("abfgt").find(n.node) == std::string::npos) continue;
            const bool optimised = n.impl.find("_cpu_opt_dynamic") != std::string::npos ||
                                   n.impl.find("_cpu_dnnl_dynamic") != std::string::npos;
            EXPECT_TRUE(optimised) << n.node << ": " << n.impl;
        }
        // The producers' layouts carry their offset along the axis.
        EXPECT_EQ(on.node_layout("b").padding.lower.at(1), rows[0]);
        EXPECT_EQ(on.node_layout("t").padding.upper.at(1), 0);
    }
}

}   // namespace

TEST(CpuInplaceConcat, DenseBlocks_OptimisedImplsWriteIntoTheConcatBuffer) { producers_sweep(1); }

TEST(CpuInplaceConcat, InterleavedRows_StridedWritesStillInPlace) { producers_sweep(2); }
