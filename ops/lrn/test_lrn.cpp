// lrn: shape-inference table, every impl against the reference over a dtype x
// shape matrix and window sizes, one instance fed changing shapes, and
// hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Attributes lrn(int64_t size, double alpha = 1e-4, double beta = 0.75, double bias = 1.0) {
    return attrs({{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}});
}

// ---- 1. shape inference ------------------------------------------------------

TEST(LrnShape, OutputIsTheInputAndBadInputsAreRejected) {
    const Dimension dyn;
    test::expect_shapes("lrn", {
                                   {{f32({2, 3, 4, 5})}, lrn(3), {f32({2, 3, 4, 5})}},
                                   {{Layout({dyn, 7}, DataType::f16)}, lrn(1), {Layout({dyn, 7}, DataType::f16)}},
                                   {{f32({0, 3, 2})}, lrn(5), {f32({0, 3, 2})}},
                                   {{f32({2, 3})}, lrn(0), {}, {"node 'node'", "size", "0", ">= 1"}},
                                   {{f32({3})}, lrn(3), {}, {"f32[3]", "rank >= 2"}},
                                   {{Layout({2, 3}, DataType::i32)}, lrn(3), {}, {"floating"}},
                                   {{f32({2, 3})}, {}, {}, {"size"}},
                               });
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-6};
}

TEST(LrnImpls, EveryImplMatchesTheReferenceForEveryWindow) {
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (int64_t size : {1, 2, 3, 4, 7}) {
            SCOPED_TRACE(std::string(to_string(t)) + " size " + std::to_string(size));
            test::expect_impls_match_reference(
                {"lrn", lrn(size, 0.5, 0.75, 2.0), {Layout(PartialShape::dynamic_of_rank(4), t)}, {}},
                test::random_runs(t, {{{1, 1, 1, 1}}, {{2, 3, 4, 5}}, {{1, 16, 3, 17}}, {{2, 5, 1, 1}}, {{0, 3, 1, 1}}},
                                  size, -3, 3),
                tol(t));
        }
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(LrnDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, n % 7 + 1, n}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({"lrn", lrn(3, 0.3, 0.5, 1.5), {f32({2, Dimension(), Dimension()})}, {}},
                              test::random_runs(DataType::f32, rows, 20, -3, 3), o);
    }
}

// ---- the reference's values -------------------------------------------------------

// Channels {1, 2, 3}, size 2: windows [c, c + 1] -> squares 5, 13, 9;
// y = x / (1 + 0.5 * sq)^1.
TEST(LrnValues, ChannelWindowsMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 3}, {1, 2, 3});
    const test::OpSetup s{"lrn", lrn(2, 1.0, 1.0, 1.0), {x.layout()}, {}};
    const HostTensor y = test::reference_outputs(s, {x})[0];
    const double want[] = {1 / 3.5, 2 / 7.5, 3 / 5.5};
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-6) << i;
}

}   // namespace
}   // namespace dynrt
