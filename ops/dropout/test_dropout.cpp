// dropout and dropout_with_mask: shape-inference table, every impl against
// the reference for every dtype, one instance fed changing shapes, the view
// (no kernel runs for dropout) and the values: the input's bytes and an
// all-true mask.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "layout_op_test.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::every_dtype;

// ---- 1. shape inference ----------------------------------------------------

TEST(DropoutShape, OutputIsTheInputAndTheMaskABooleanOfItsShape) {
    const Dimension dyn;
    std::vector<test::ShapeRow> plain, masked;
    for (const PartialShape& s : {PartialShape{2, 3}, PartialShape{}, PartialShape{0, 4}, PartialShape{dyn, 5},
                                  PartialShape{Dimension(1, 8), dyn, 1}}) {
        for (DataType t : every_dtype()) {
            plain.push_back({{Layout(s, t)}, {}, {Layout(s, t)}});
            masked.push_back({{Layout(s, t)}, {}, {Layout(s, t), Layout(s, DataType::boolean)}});
        }
    }
    test::expect_shapes("dropout", plain);
    test::expect_shapes("dropout_with_mask", masked);
}

// ---- 2. every impl against the reference -------------------------------------

TEST(DropoutImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 1}}, {{3, 17}}, {{2, 257}}, {{0, 5}}, {{13, 1}}};
    for (DataType t : every_dtype()) {
        SCOPED_TRACE(to_string(t));
        const auto runs = test::random_runs(t, shapes, 7, -100, 100);
        for (const char* op : {"dropout", "dropout_with_mask"})
            test::expect_impls_match_reference({op, {}, {Layout(PartialShape::dynamic_of_rank(2), t)}, {}}, runs);
    }
}

TEST(DropoutReference, OutputHoldsTheInputBytes) {
    test::expect_reference_keeps_bytes("dropout", {}, Shape{2, 3, 5}, Shape({2, 3, 5}));
    test::expect_reference_keeps_bytes("dropout_with_mask", {}, Shape{4, 7}, Shape({4, 7}));
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(DropoutDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, n}});
    rows.push_back({Shape{2, 0}});
    rows.push_back({Shape{2, 5}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        for (const char* op : {"dropout", "dropout_with_mask"}) {
            test::expect_sequence({op, {}, {Layout({2, Dimension()}, DataType::f16)}, {}},
                                  test::random_runs(DataType::f16, rows, 100), o);
            test::expect_sequence({op, {}, {Layout({2, Dimension()}, DataType::i64)}, {}},
                                  test::random_runs(DataType::i64, rows, 200, -1000, 1000), o);
        }
    }
}

// ---- views (OpTraits::view) ----------------------------------------------------

TEST(DropoutViews, NoKernelRunsAndTheOutputHoldsTheInputBytes) {
    test::expect_view_runs_no_kernel({"dropout",
                                      {},
                                      [](DataType t) {
                                          return Layout({2, Dimension(), 3}, t);
                                      },
                                      [](int64_t n) {
                                          return Shape{2, n, 3};
                                      },
                                      [](int64_t n) {
                                          return Shape{2, n, 3};
                                      }});
}

// ---- values ------------------------------------------------------------------------

// The mask is output 1: a program with both outputs, on every engine.
TEST(DropoutValues, MaskIsAllTrueOnEveryEngine) {
    std::vector<std::string> engines = {"cpu"};
    if (test::ocl_engine()) engines.push_back("ocl");
    const HostTensor x = HostTensor::from_floats(Shape{2, 3}, {-1.5f, 0.f, 2.f, 3.f, -0.f, 7.25f});
    for (const std::string& e : engines) {
        auto program = std::make_shared<Program>(test::registry(), "mask");
        program->add_input("in0", x.layout());
        program->add_node("node", "dropout_with_mask", {"in0"}, {});
        program->add_output("node");
        program->add_output("node:1");
        program->build();
        auto net = Network::create(program, test::engine(e));
        InferRequest req(net);
        req.set_input("in0", x);
        req.infer();
        const HostTensor y = req.get_output(0), mask = req.get_output(1);
        ASSERT_EQ(mask.dtype(), DataType::boolean) << e;
        ASSERT_EQ(mask.count(), 6u) << e;
        for (size_t i = 0; i < 6; ++i) EXPECT_EQ(mask.as<uint8_t>()[i], 1) << e << " element " << i;
        EXPECT_EQ(std::memcmp(y.data(), x.data(), x.bytes()), 0) << e;
    }
}

}   // namespace
}   // namespace dynrt
