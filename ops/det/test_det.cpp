// det: shape-inference table (dynamic dims, errors), hand values (2x2, 3x3
// with a row swap, singular, the empty matrix) on every engine, every impl
// against the reference, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

// ---- 1. shape inference ----------------------------------------------------

TEST(DetShape, OutputIsTheLeadingDims) {
    const Dimension dyn;
    test::expect_shapes("det", {
                                   {{test::f32({2, 2})}, {}, {test::f32({})}},
                                   {{test::f32({3, 4, 4})}, {}, {test::f32({3})}},
                                   {{Layout({dyn, 2, 0, 0}, DataType::f16)}, {}, {Layout({dyn, 2}, DataType::f16)}},
                                   {{test::f32({dyn, dyn, 5})}, {}, {test::f32({dyn})}},
                                   {{Layout({0, 3, 3}, DataType::f64)}, {}, {Layout({0}, DataType::f64)}},
                               });
}

TEST(DetShape, BadInputsAreErrorsNamingNodeAndShapes) {
    test::expect_shapes("det", {
                                   {{test::f32({3})}, {}, {}, {"node 'node'", "input", "rank 1", "f32[3]"}},
                                   {{test::f32({2, 3, 4})}, {}, {}, {"node 'node'", "square", "f32[2,3,4]"}},
                                   {{test::f32({Dimension(1, 3), 5})}, {}, {}, {"square"}},
                                   {{Layout({2, 2}, DataType::i32)}, {}, {}, {"f32, f16 or f64", "i32[2,2]"}},
                               });
}

// ---- hand-computed values -----------------------------------------------------

std::vector<std::string> engines() {
    std::vector<std::string> e{"cpu"};
    if (test::ocl_engine()) e.emplace_back("ocl");
    return e;
}

HostTensor run(const HostTensor& x, const std::string& engine) {
    return test::run_once(test::single_node_program("det", {x.layout()}, {}), {x}, NetworkOptions{}, engine);
}

TEST(DetValues, TwoByTwoThreeByThreeSingularAndEmptyOnEveryEngine) {
    // det [[1,2],[3,4]] = -2; [[0,2,1],[1,0,0],[3,1,1]] = -(1*(2*1-1*1)) = -1 (zero first pivot: a row
    // swap); [[1,2],[2,4]] = 0.
    const HostTensor x = HostTensor::from_floats(Shape{3, 3, 3}, {1, 2, 0, 3, 4, 0, 0, 0, 1,     // block [[1,2],[3,4]]
                                                                  0, 2, 1, 1, 0, 0, 3, 1, 1,     //
                                                                  1, 2, 0, 2, 4, 0, 0, 0, 5});   // singular
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        test::expect_close(run(x, e), HostTensor::from_floats(Shape{3}, {-2, -1, 0}), 1e-6, 1e-6);
        test::expect_close(run(HostTensor(DataType::f32, Shape{2, 0, 0}), e), HostTensor::from_floats(Shape{2}, {1, 1}),
                           0, 0);
    }
}

TEST(DetValues, ScalingOneRowScalesTheDeterminant) {
    // Property check independent of the algorithm: det(diag(s) * A) = s0*s1*s2 * det(A).
    const HostTensor a = test::random_tensor(DataType::f64, Shape{3, 3}, 7);
    HostTensor scaled(DataType::f64, Shape{3, 3});
    const double s[3] = {2, -3, 0.5};
    for (size_t e = 0; e < 9; ++e) scaled.set_from_double(e, a.get_as_double(e) * s[e / 3]);
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        const double d = run(a, e).get_as_double(0), ds = run(scaled, e).get_as_double(0);
        EXPECT_NEAR(ds, -3 * d, 1e-12);
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(DetImpls, EveryImplMatchesTheReference) {
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64}) {
        SCOPED_TRACE(to_string(t));
        test::expect_impls_match_reference(
            {"det", {}, {Layout(PartialShape::dynamic_of_rank(3), t)}, {}},
            test::random_runs(t, {{{1, 1, 1}}, {{3, 2, 2}}, {{17, 3, 3}}, {{2, 13, 13}}, {{0, 4, 4}}, {{3, 0, 0}}}));
    }
}

TEST(DetImpls, RankEightOnEveryImplAndRankNineOnTheHostOnly) {
    test::expect_impls_match_reference({"det", {}, {test::f32(PartialShape::dynamic_of_rank(8))}, {}},
                                       test::random_runs(DataType::f32, {{{2, 1, 1, 3, 1, 2, 3, 3}}}));
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"det", {}, {test::f32(PartialShape::dynamic_of_rank(9))}, {}},
        test::random_runs(DataType::f32, {{{2, 1, 1, 3, 1, 2, 1, 3, 3}}}), {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(DetDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, n % 5 + 1, n % 5 + 1}});
    shapes.push_back({Shape{0, 3, 3}});
    shapes.push_back({Shape{2, 0, 0}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"det", {}, {test::f32({Dimension(), Dimension(), Dimension()})}, {}},
                              test::random_runs(DataType::f32, shapes), o);
    }
}

}   // namespace
}   // namespace dynrt
