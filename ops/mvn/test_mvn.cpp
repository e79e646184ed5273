// mvn: shape-inference table, every impl against the reference over a dtype x
// shape matrix and axis sets (adjacent, split, trailing, negative, none), one
// instance fed changing shapes, and hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Attributes axes(std::vector<int64_t> a) { return attrs({{"axes", std::move(a)}}); }

// ---- 1. shape inference ------------------------------------------------------

TEST(MvnShape, OutputIsTheInputAndBadAxesAreRejected) {
    const Dimension dyn;
    const Layout x({2, 3, 4, 5}, DataType::f32), h({dyn, 3}, DataType::f16);
    test::expect_shapes("mvn", {
                                   {{x}, {}, {x}},
                                   {{x}, axes({-1}), {x}},
                                   {{h}, axes({0}), {h}},
                                   {{f32({})}, axes({}), {f32({})}},
                                   {{f32({0, 2})}, axes({1}), {f32({0, 2})}},
                                   {{f32({2, 3})}, {}, {}, {"node 'node'", "axes", "[2,3]"}},
                                   {{x}, axes({1, -3}), {}, {"axes", "more than once"}},
                                   {{x}, axes({4}), {}, {"axes", "4"}},
                                   {{Layout({2, 3}, DataType::i32)}, axes({1}), {}, {"floating"}},
                               });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

TEST(MvnImpls, EveryImplMatchesTheReferenceForEveryAxisSet) {
    const std::vector<std::vector<int64_t>> sets = {{0, 2, 3}, {2, 3}, {-1}, {1}, {0, 1, 2, 3}, {}};
    for (const std::vector<int64_t>& a : sets) {
        SCOPED_TRACE("axes of size " + std::to_string(a.size()));
        test::expect_impls_match_reference(
            {"mvn", axes(a), {Layout(PartialShape::dynamic_of_rank(4), DataType::f32)}, {}},
            test::random_runs(DataType::f32, {{{1, 1, 1, 1}}, {{2, 3, 4, 5}}, {{3, 1, 2, 257}}, {{0, 3, 2, 2}}},
                              a.size() + 1, -4, 4),
            tol(DataType::f32));
    }
    test::expect_impls_match_reference({"mvn", {}, {Layout(PartialShape::dynamic_of_rank(4), DataType::f16)}, {}},
                                       test::random_runs(DataType::f16, {{{2, 3, 4, 5}}, {{1, 2, 17, 16}}}, 9, -4, 4),
                                       tol(DataType::f16));
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(MvnDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, 3, n}});
    rows.push_back({Shape{2, 0, 3}});
    rows.push_back({Shape{2, 3, 1}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        for (const std::vector<int64_t>& a : {std::vector<int64_t>{0, 2}, std::vector<int64_t>{-1}})
            test::expect_sequence({"mvn", axes(a), {f32({2, Dimension(), Dimension()})}, {}},
                                  test::random_runs(DataType::f32, rows, 20, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Columns over axis 0: {1, 3} -> mean 2, std 1 -> {-1, 1}; {2, 2} -> {0, 0}.
TEST(MvnValues, ColumnsMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 2});
    const test::OpSetup s{"mvn", axes({0}), {x.layout()}, {}};
    const HostTensor y = test::reference_outputs(s, {x})[0];
    const double want[] = {-1, 0, 1, 0};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << i;
}

}   // namespace
}   // namespace dynrt
