// logical: shape-inference table (input count per mode, broadcasting, dynamic
// and bounded dims, errors), hand-computed truth tables, every impl against
// the reference (ranks 0 to 8, tails, broadcasts, empty tensors), and one
// instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes mode(const std::string& m) { return test::attrs({{"mode", m}}); }

Layout b(PartialShape s) { return Layout(std::move(s), DataType::boolean); }

// ---- 1. shape inference ----------------------------------------------------

TEST(LogicalShape, NotKeepsTheShapeAndBinaryModesBroadcast) {
    const Dimension dyn;
    test::expect_shapes("logical",
                        {
                            {{b({2, 3})}, mode("not"), {b({2, 3})}},
                            {{b({})}, mode("not"), {b({})}},
                            {{b({dyn, Dimension(1, 8)})}, mode("not"), {b({dyn, Dimension(1, 8)})}},
                            {{b({2, 3}), b({3})}, mode("and"), {b({2, 3})}},
                            {{b({3, 1}), b({1, 4})}, mode("or"), {b({3, 4})}},
                            {{b({}), b({})}, mode("xor"), {b({})}},
                            {{b({0, 3}), b({1})}, mode("and"), {b({0, 3})}},
                            {{b({dyn, 1}), b({5})}, mode("xor"), {b({dyn, 5})}},
                            {{b({Dimension(1, 4)}), b({Dimension(2, 9)})}, mode("or"), {b({Dimension(1, 9)})}},
                            {{b({Dimension(3, 6)}), b({dyn})}, mode("or"), {b({dyn})}},
                        });
}

TEST(LogicalShape, WrongCountsTypesAndShapesAreErrorsNamingNodeFieldAndShapes) {
    const Layout f32_3 = test::f32({3});
    test::expect_shapes(
        "logical", {
                       {{b({3}), b({3})}, mode("not"), {}, {"node 'node'", "inputs", "'not' takes 1 input", "got 2"}},
                       {{b({3})}, mode("and"), {}, {"node 'node'", "inputs", "'and' takes 2 inputs", "got 1"}},
                       {{b({3}), f32_3}, mode("or"), {}, {"node 'node'", "input 1", "f32[3]", "boolean"}},
                       {{Layout({3}, DataType::u8)}, mode("not"), {}, {"node 'node'", "input 0", "u8[3]"}},
                       {{b({2, 3}), b({4})}, mode("xor"), {}, {"node 'node'", "inputs", "[2,3]", "[4]"}},
                       {{b({int64_t{1} << 40, 1}), b({int64_t{1} << 30})}, mode("and"), {}, {"node 'node'", "2^60"}},
                   });
    EXPECT_NE(test::error_of([] { test::infer_shapes("logical", {b({3})}, mode("nand")); }).find("nand"),
              std::string::npos);
}

// ---- hand-computed values ----------------------------------------------------

std::vector<int64_t> run(const std::string& m, const std::vector<HostTensor>& in) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    const HostTensor y = test::run_once(test::single_node_program("logical", layouts, mode(m)), in);
    EXPECT_EQ(y.dtype(), DataType::boolean);
    return y.to_int64();
}

TEST(LogicalValues, TruthTablesAndBroadcast) {
    const HostTensor p = HostTensor::from_int64(DataType::boolean, Shape{4}, {0, 0, 1, 1});
    const HostTensor q = HostTensor::from_int64(DataType::boolean, Shape{4}, {0, 1, 0, 1});
    EXPECT_EQ(run("and", {p, q}), (std::vector<int64_t>{0, 0, 0, 1}));
    EXPECT_EQ(run("or", {p, q}), (std::vector<int64_t>{0, 1, 1, 1}));
    EXPECT_EQ(run("xor", {p, q}), (std::vector<int64_t>{0, 1, 1, 0}));
    EXPECT_EQ(run("not", {p}), (std::vector<int64_t>{1, 1, 0, 0}));
    // [2,1] against [3]: rows of the column value combined with the row.
    const HostTensor col = HostTensor::from_int64(DataType::boolean, Shape{2, 1}, {0, 1});
    const HostTensor row = HostTensor::from_int64(DataType::boolean, Shape{3}, {1, 0, 1});
    EXPECT_EQ(run("xor", {col, row}), (std::vector<int64_t>{1, 0, 1, 0, 1, 0}));
    EXPECT_EQ(run("and", {HostTensor::from_int64(DataType::boolean, Shape{}, {1}), row}),
              (std::vector<int64_t>{1, 0, 1}));
}

// ---- 2. every impl against the reference ---------------------------------------

const std::vector<std::vector<Shape>> kRank2 = {
    {{1, 1}, {1, 1}},     {{3, 13}, {3, 13}}, {{17, 16}, {1, 16}},  {{16, 1}, {1, 257}},
    {{255, 3}, {255, 1}}, {{0, 3}, {1, 3}},   {{2, 257}, {2, 257}},
};

TEST(LogicalImpls, EveryImplMatchesTheReferenceInEveryMode) {
    const Layout dyn2 = b({Dimension(), Dimension()});
    for (const char* m : {"and", "or", "xor"}) {
        SCOPED_TRACE(m);
        test::expect_impls_match_reference({"logical", mode(m), {dyn2, dyn2}, {}},
                                           test::random_runs(DataType::boolean, kRank2));
    }
    std::vector<std::vector<Shape>> unary;
    for (const auto& row : kRank2) unary.push_back({row[0]});
    test::expect_impls_match_reference({"logical", mode("not"), {dyn2}, {}},
                                       test::random_runs(DataType::boolean, unary));
}

TEST(LogicalImpls, RankEightAndScalarsMatchTheReference) {
    const Layout r8 = b(PartialShape::dynamic_of_rank(8)), r3 = b(PartialShape::dynamic_of_rank(3));
    test::expect_impls_match_reference({"logical", mode("or"), {r3, r8}, {}},
                                       test::random_runs(DataType::boolean, {{{1, 3, 2}, {2, 1, 3, 1, 2, 1, 3, 2}},
                                                                             {{3, 1, 1}, {1, 2, 1, 2, 1, 3, 1, 5}},
                                                                             {{2, 3, 4}, {1, 1, 1, 1, 1, 1, 1, 1}}}));
    test::expect_impls_match_reference({"logical", mode("not"), {r8}, {}},
                                       test::random_runs(DataType::boolean, {{{2, 1, 3, 1, 2, 1, 3, 2}}}));
    const Layout scalar = b(PartialShape{}), vec = b({Dimension()});
    test::expect_impls_match_reference({"logical", mode("and"), {vec, scalar}, {}},
                                       test::random_runs(DataType::boolean, {{{1}, {}}, {{17}, {}}, {{0}, {}}}));
}

// Above rank 8 the OpenCL impls decline (their kernels split indices over 8
// dims) and the host impls serve.
TEST(LogicalImpls, RankNineRunsOnTheHostImplsOnly) {
    const Layout r9 = b(PartialShape::dynamic_of_rank(9)), r1 = b({Dimension()});
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"logical", mode("and"), {r9, r1}, {}},
        test::random_runs(DataType::boolean, {{{2, 1, 2, 1, 2, 1, 2, 1, 3}, {3}}}), {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(LogicalDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> binary, unary;
    for (int64_t n : test::tail_sizes()) {
        binary.push_back({Shape{n, 3}, Shape{n % 2 == 0 ? n : 1, 1}});
        unary.push_back({Shape{n, 3}});
    }
    const test::OpSetup xor_setup{"logical", mode("xor"), {b({Dimension(), 3}), b({Dimension(), 1})}, {}};
    const test::OpSetup not_setup{"logical", mode("not"), {b({Dimension(), 3})}, {}};
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + " " + test::mode_name(o.mode));
        test::expect_sequence(xor_setup, test::random_runs(DataType::boolean, binary), o);
        test::expect_sequence(not_setup, test::random_runs(DataType::boolean, unary), o);
    }
}

}   // namespace
}   // namespace dynrt
