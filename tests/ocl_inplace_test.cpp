// Runtime in-place concat on the OpenCL device: the device kernels of the
// producers (activation, eltwise, fully_connected, gemm) write their rows
// straight into the concat's buffer through padded output layouts (the padding
// travels in shape_info), the concat runs no kernel and copies nothing. With
// batch 2 a producer's rows are interleaved with the others' (padding on a
// middle axis, not one dense block), which the kernels address through
// OUTPUT0_PHYS as well. Outputs are compared with the cpu engine running the
// same program with in-place concat off, across changing sequence lengths.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/primitive_inst.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

constexpr int64_t kK = 8;   // depth of the matrix producers

// a = relu(x1), b = x2 + x2, f = fc(x3, w), g = gemm(x4, m); c = concat(a, b, f, g)
// along axis 1 ([batch, rows, 4] each); out = relu(c) + 0 so c is not an output.
std::shared_ptr<Program> program(int64_t batch) {
    auto p = std::make_shared<Program>(test::registry(), "inplace_ocl");
    const Dimension rows = Dimension::dynamic();
    p->add_input("x1", Layout(PartialShape{batch, rows, 4}, DataType::f32));
    p->add_input("x2", Layout(PartialShape{batch, rows, 4}, DataType::f32));
    p->add_input("x3", Layout(PartialShape{batch, rows, kK}, DataType::f32));
    p->add_input("x4", Layout(PartialShape{batch, rows, kK}, DataType::f32));
    p->add_constant("w", test::random_tensor(DataType::f32, {4, kK}, 31));
    p->add_constant("m", test::random_tensor(DataType::f32, {kK, 4}, 32));
    const Attributes relu = test::attr("func", std::string("relu"));
    const Attributes add = test::attr("mode", std::string("add"));
    const Attributes axis = test::attr("axis", int64_t(1));
    p->add_node("a", "activation", {"x1"}, relu);
    p->add_node("b", "eltwise", {"x2", "x2"}, add);
    p->add_node("f", "fully_connected", {"x3", "w"});
    p->add_node("g", "gemm", {"x4", "m"});
    p->add_node("c", "concat", {"a", "b", "f", "g"}, axis);
    p->add_node("out", "activation", {"c"}, relu);
    p->add_output("out");
    p->build();
    return p;
}

std::shared_ptr<Network> network(const EnginePtr& eng, int64_t batch, bool inplace) {
    NetworkOptions opt;
    opt.inplace_concat = inplace;
    return Network::create(program(batch), eng, opt);
}

void feed(InferRequest& r, int64_t batch, const std::vector<int64_t>& rows, uint64_t seed) {
    r.set_input("x1", test::random_tensor(DataType::f32, {batch, rows[0], 4}, seed));
    r.set_input("x2", test::random_tensor(DataType::f32, {batch, rows[1], 4}, seed + 1));
    r.set_input("x3", test::random_tensor(DataType::f32, {batch, rows[2], kK}, seed + 2));
    r.set_input("x4", test::random_tensor(DataType::f32, {batch, rows[3], kK}, seed + 3));
}

// Row counts per run: tails and growth, revisits included.
const std::vector<std::vector<int64_t>> kRuns = {
    {1, 1, 1, 1}, {3, 1, 2, 5}, {13, 16, 17, 1}, {3, 1, 2, 5}, {1, 255, 3, 17}, {16, 2, 1, 13}, {2, 3, 4, 5},
};

void sweep(int64_t batch) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    InferRequest ocl(network(eng, batch, true));
    InferRequest ref(network(test::engine("cpu"), batch, false));
    uint64_t seed = 1;
    for (const auto& rows : kRuns) {
        SCOPED_TRACE("batch " + std::to_string(batch) + " rows " + std::to_string(rows[0]) + "," +
                     std::to_string(rows[1]) + "," + std::to_string(rows[2]) + "," + std::to_string(rows[3]));
        feed(ocl, batch, rows, seed);
        feed(ref, batch, rows, seed);
        seed += 10;
        ocl.infer();
        ref.infer();
        test::expect_close(ocl.output(0), ref.output(0), 1e-5, 1e-5);
        const Counters& c = test::node_counters(ocl, "c");
        EXPECT_EQ(c.concat_inplace, 1u);
        EXPECT_EQ(c.executions, 0u);
        EXPECT_EQ(ocl.last_run().totals.concat_bytes_copied, 0u);
        const auto& cbuf = ocl.inst("c").output_memory()->buffer();
        for (const char* producer : {"a", "b", "f", "g"}) {
            EXPECT_EQ(ocl.inst(producer).output_memory()->buffer(), cbuf) << producer;
            // A device kernel wrote the rows, not a host fallback.
            EXPECT_NE(test::node_counters(ocl, producer).executions, 0u) << producer;
        }
        for (const auto& n : ocl.last_run().nodes) {
            if (n.node == "a" || n.node == "b" || n.node == "f" || n.node == "g") {
                EXPECT_NE(n.impl.find("_ocl_dynamic"), std::string::npos) << n.node << ": " << n.impl;
            }
        }
        // The producers' layouts carry their offset along the axis.
        EXPECT_EQ(ocl.node_layout("b").padding.lower.at(1), rows[0]);
        EXPECT_EQ(ocl.node_layout("g").padding.upper.at(1), 0);
    }
}

}   // namespace

TEST(OclInplaceConcat, DenseBlocks_DeviceKernelsWriteIntoTheConcatBuffer) { sweep(1); }

TEST(OclInplaceConcat, InterleavedRows_PaddedStoresStillInPlace) { sweep(2); }

TEST(OclInplaceConcat, Off_ConcatKernelCopiesAndOutputsAgree) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    InferRequest on(network(eng, 1, true)), off(network(eng, 1, false));
    const std::vector<int64_t> rows = {3, 1, 2, 5};
    feed(on, 1, rows, 7);
    feed(off, 1, rows, 7);
    on.infer();
    off.infer();
    test::expect_close(on.output(0), off.output(0), 1e-6, 1e-6);
    EXPECT_EQ(test::node_counters(off, "c").executions, 1u);
    EXPECT_EQ(off.last_run().totals.concat_bytes_copied, uint64_t(3 + 1 + 2 + 5) * 4 * sizeof(float));
    EXPECT_EQ(on.last_run().totals.concat_bytes_copied, 0u);
}
