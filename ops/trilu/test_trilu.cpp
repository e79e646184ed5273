// trilu: shape-inference table (the output is the input; ranks below 2 and a
// bad k refused), hand-computed triangles, every impl against the reference
// for every dtype and many k, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor k_value(int64_t k) { return HostTensor::from_int64(DataType::i64, Shape{}, {k}); }
const Layout kK(PartialShape{}, DataType::i64);
Attributes upper(bool u) { return test::attrs({{"upper", u}}); }

// ---- 1. shape inference ----------------------------------------------------

TEST(TriluShape, OutputIsTheInput) {
    const Dimension dyn;
    const Layout a({3, 4, 5}, DataType::i64), b({dyn, Dimension(1, 8)}, DataType::f16), e({3, 0, 5}, DataType::f32);
    test::expect_shapes("trilu", {{{a, kK}, upper(true), {a}}, {{b}, upper(false), {b}}, {{e, kK}, {}, {e}}});
}

TEST(TriluShape, RanksBelowTwoAndBadKAreErrorsNamingNodeAndField) {
    test::expect_shapes(
        "trilu",
        {
            {{test::f32({5})}, {}, {}, {"node 'node'", "inputs", "rank 1", ">= 2"}},
            {{test::f32(PartialShape{})}, {}, {}, {"rank 0"}},
            {{test::f32({2, 2}), Layout({1}, DataType::i64)}, {}, {}, {"node 'node'", "k", "i64 scalar", "i64[1]"}},
            {{test::f32({2, 2}), Layout(PartialShape{}, DataType::i32)}, {}, {}, {"k", "i32[]"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run_trilu(const HostTensor& x, bool up, int64_t k, const std::string& engine) {
    const HostTensor kv = k_value(k);
    return test::run_once(test::single_node_program("trilu", {x.layout(), kK}, upper(up)), {x, kv}, {}, engine);
}

TEST(TriluValues, TrianglesOfA3x4MatrixOnEveryEngine) {
    const HostTensor x = HostTensor::from_int64(DataType::i32, Shape{3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        EXPECT_EQ(run_trilu(x, true, 0, engine).to_int64(),
                  (std::vector<int64_t>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
        EXPECT_EQ(run_trilu(x, true, 2, engine).to_int64(), (std::vector<int64_t>{0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0}));
        EXPECT_EQ(run_trilu(x, false, 0, engine).to_int64(),
                  (std::vector<int64_t>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
        EXPECT_EQ(run_trilu(x, false, -1, engine).to_int64(),
                  (std::vector<int64_t>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
        const int64_t huge = std::numeric_limits<int64_t>::max();
        EXPECT_EQ(run_trilu(x, true, -huge, engine).to_int64(), x.to_int64());
        EXPECT_EQ(run_trilu(x, false, -huge, engine).to_int64(), std::vector<int64_t>(12, 0));
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// The kernels move elements as unsigned integers of their width: one type
// of each width (and f64, the newest) covers them.
const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i64, DataType::boolean, DataType::f64};

TEST(TriluImpls, EveryImplMatchesTheReferenceForEveryElementWidthAndK) {
    const std::vector<Shape> shapes = {{1, 1}, {3, 13}, {17, 16}, {2, 257}, {5, 0}};
    for (DataType t : kTypes)
        for (bool up : {true, false}) {
            SCOPED_TRACE(std::string(to_string(t)) + (up ? " upper" : " lower"));
            std::vector<test::Run> runs;
            int64_t k = -3;
            for (const Shape& s : shapes)
                runs.push_back({test::random_tensor(t, s, runs.size() + 9, -9, 9), k_value(k++)});
            test::expect_impls_match_reference(
                {"trilu", upper(up), {Layout(PartialShape::dynamic_of_rank(2), t), kK}, {}}, runs);
        }
}

TEST(TriluImpls, BatchesRankEightAndNoKMatchTheReference) {
    const std::vector<std::vector<Shape>> shapes = {{{2, 3, 4}}, {{1, 5, 1}}, {{4, 1, 7}}, {{3, 17, 3}}};
    test::expect_impls_match_reference({"trilu", upper(false), {test::f32(PartialShape::dynamic_of_rank(3))}, {}},
                                       test::random_runs(DataType::f32, shapes, 3));
    const Layout r8(PartialShape::dynamic_of_rank(8), DataType::i64);
    test::expect_impls_match_reference(
        {"trilu", upper(true), {r8, kK}, {{1, k_value(1)}}},
        {{test::random_tensor(DataType::i64, Shape{2, 1, 2, 1, 1, 3, 4, 5}, 4, -50, 50)}});
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(TriluDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{2, n, 5}});
    shapes.push_back({Shape{2, 0, 5}});
    shapes.push_back({Shape{2, 1, 5}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"trilu", upper(false), {test::f32({2, Dimension(), 5}), kK}, {{1, k_value(-1)}}},
                              test::random_runs(DataType::f32, shapes, 100), o);
    }
}

}   // namespace
}   // namespace dynrt
