// dynamic_quantize_linear: shape-inference table, every impl against the
// reference (ranges all positive, all negative, mixed, zeros only, tails),
// one instance fed changing shapes, and hand-computed values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

using test::f32;

const char* const kOp = "dynamic_quantize_linear";

TEST(DynamicQuantizeLinearShape, OutputsAreU8XAndScalarScaleAndZeroPoint) {
    const Dimension dyn;
    const Layout s({}, DataType::f32), z({}, DataType::u8);
    test::expect_shapes(kOp, {
                                 {{f32({2, dyn})}, {}, {Layout({2, dyn}, DataType::u8), s, z}},
                                 {{f32({})}, {}, {Layout({}, DataType::u8), s, z}},
                                 {{f32({0, 3})}, {}, {Layout({0, 3}, DataType::u8), s, z}},
                                 {{Layout({3}, DataType::f16)}, {}, {}, {"node 'node'", "f32 x", "f16[3]"}},
                             });
}

TEST(DynamicQuantizeLinearImpls, EveryImplMatchesTheReferenceOverRanges) {
    const Layout x({Dimension(), Dimension()}, DataType::f32);
    const std::vector<std::vector<Shape>> shapes = {{{1, 1}}, {{3, 17}}, {{2, 257}}, {{1, 20000}}};
    for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{-3, 5}, {0.5, 7}, {-9, -0.25}}) {
        SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
        test::expect_impls_match_reference({kOp, {}, {x}, {}}, test::random_runs(DataType::f32, shapes, 3, lo, hi));
    }
    // Zeros only: scale 0, zero point 0, y zeros on every impl.
    test::expect_impls_match_reference({kOp, {}, {x}, {}}, test::random_runs(DataType::f32, {{{2, 5}}}, 3, 0, 0));
}

TEST(DynamicQuantizeLinearDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{3, n}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(test::mode_name(o.mode));
        test::expect_sequence({kOp, {}, {f32({3, Dimension()})}, {}},
                              test::random_runs(DataType::f32, shapes, 9, -2, 6), o);
    }
}

// ONNX's example: x in [-3.5, 0] -> scale 3.5 / 255, zero point 255.
TEST(DynamicQuantizeLinearValues, ScaleZeroPointAndValuesMatchHandComputedOnes) {
    const HostTensor x = HostTensor::from_floats(Shape{4}, {0, 2, -3, 255});
    const std::vector<HostTensor> y = test::reference_outputs({kOp, {}, {x.layout()}, {}}, {x});
    // Range [-3, 255]: scale 258 / 255, zero point rint(3 / scale) = 3.
    const float scale = 258.0f / 255.0f;
    EXPECT_FLOAT_EQ(static_cast<float>(y[1].get_as_double(0)), scale);
    EXPECT_EQ(y[2].get_as_double(0), 3);
    const int64_t want[] = {3, 5, 0, 255};   // rint(2 / scale) = 2, rint(-3 / scale) = -3
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int64_t>(y[0].get_as_double(i)), want[i]) << i;
}

}   // namespace
}   // namespace dynrt
