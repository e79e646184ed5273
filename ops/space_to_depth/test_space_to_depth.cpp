// space_to_depth: shape-inference table (dynamic and bounded dims, errors),
// hand-computed values, every impl against the reference for every element
// width, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes block(int64_t b) { return test::attrs({{"blocksize", b}}); }

// ---- 1. shape inference ----------------------------------------------------

TEST(SpaceToDepthShape, ChannelsGrowBySquareAndSpatialDimsShrinkByBlock) {
    const Dimension dyn;
    test::expect_shapes("space_to_depth",
                        {
                            {{test::f32({2, 3, 4, 6})}, block(2), {test::f32({2, 12, 2, 3})}},
                            {{test::f32({1, 1, 3, 3})}, block(3), {test::f32({1, 9, 1, 1})}},
                            {{Layout({1, 4, 2, 2}, DataType::u8)}, block(1), {Layout({1, 4, 2, 2}, DataType::u8)}},
                            {{test::f32({0, 2, 0, 4})}, block(2), {test::f32({0, 8, 0, 2})}},
                            {{test::f32({dyn, 3, dyn, 4})}, block(2), {test::f32({dyn, 12, dyn, 2})}},
                            {{test::f32({1, Dimension(1, 3), Dimension(3, 9), dyn})},
                             block(2),
                             {test::f32({1, Dimension(4, 12), Dimension(2, 4), dyn})}},
                        });
}

TEST(SpaceToDepthShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "space_to_depth",
        {
            {{test::f32({2, 8, 4})}, block(2), {}, {"node 'node'", "4-D", "f32[2,8,4]"}},
            {{test::f32({2, 6, 3, 4})}, block(2), {}, {"node 'node'", "blocksize", "[2,6,3,4]", "dim 2", "multiple"}},
            {{test::f32({2, 6, 4, 5})}, block(2), {}, {"node 'node'", "blocksize", "dim 3"}},
            {{test::f32({2, 4, 3, 3})}, block(0), {}, {"node 'node'", "blocksize", "at least 1"}},
            {{test::f32({1, int64_t{1} << 59, 2, 2})}, block(2), {}, {"node 'node'", "2^60"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& x, int64_t b) {
    return test::run_once(test::single_node_program("space_to_depth", {x.layout()}, block(b)), {x});
}

TEST(SpaceToDepthValues, EachBlockPositionBecomesAChannelGroup) {
    const HostTensor x = HostTensor::from_int64(DataType::i32, Shape{1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    const HostTensor out = run(x, 2);
    EXPECT_EQ(out.shape(), (Shape{1, 8, 1, 1}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(SpaceToDepthValues, BlocksAlongTheWidthGoToSeparatePixels) {
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{1, 1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
    const HostTensor out = run(x, 2);
    EXPECT_EQ(out.shape(), (Shape{1, 4, 1, 2}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(SpaceToDepthImpls, EveryImplMatchesTheReferenceForEveryElementWidth) {
    for (const auto& [t, b] : std::vector<std::pair<DataType, int64_t>>{{DataType::f32, 2},
                                                                        {DataType::f32, 3},
                                                                        {DataType::f16, 2},
                                                                        {DataType::i64, 1},
                                                                        {DataType::boolean, 2},
                                                                        {DataType::f64, 2}}) {
        SCOPED_TRACE(std::string(to_string(t)) + " " + std::to_string(b));
        std::vector<test::Run> runs;
        for (const Shape& s : std::vector<Shape>{{1, 1, b, b}, {2, 3, 13 * b, 3 * b}, {1, 2, b, 257 * b}, {0, 2, b, b}})
            runs.push_back({test::random_tensor(t, s, runs.size() + 5, -100, 100)});
        test::expect_impls_match_reference(
            {"space_to_depth", block(b), {Layout(PartialShape::dynamic_of_rank(4), t)}, {}}, runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(SpaceToDepthDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{1, 3, 2 * (n % 5 + 1), 2 * n}});
    shapes.push_back({Shape{2, 3, 0, 4}});
    shapes.push_back({Shape{1, 3, 2, 2}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"space_to_depth", block(2), {test::f32({Dimension(), 3, Dimension(), Dimension()})}, {}},
                              test::random_runs(DataType::f32, shapes, 30), o);
    }
}

}   // namespace
}   // namespace dynrt
