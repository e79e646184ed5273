// depth_to_space: shape-inference table (dynamic and bounded dims, errors),
// hand-computed values in both modes, every impl against the reference for
// every element width, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes block(int64_t b, const std::string& mode = "DCR") { return test::attrs({{"blocksize", b}, {"mode", mode}}); }

// ---- 1. shape inference ----------------------------------------------------

TEST(DepthToSpaceShape, ChannelsShrinkBySquareAndSpatialDimsGrowByBlock) {
    const Dimension dyn;
    test::expect_shapes("depth_to_space",
                        {
                            {{test::f32({2, 8, 3, 5})}, block(2), {test::f32({2, 2, 6, 10})}},
                            {{test::f32({1, 18, 1, 1})}, block(3, "CRD"), {test::f32({1, 2, 3, 3})}},
                            {{Layout({1, 4, 2, 2}, DataType::u8)}, block(1), {Layout({1, 4, 2, 2}, DataType::u8)}},
                            {{test::f32({0, 4, 0, 3})}, block(2), {test::f32({0, 1, 0, 6})}},
                            {{test::f32({dyn, dyn, dyn, 3})}, block(2), {test::f32({dyn, dyn, dyn, 6})}},
                            {{test::f32({1, Dimension(3, 17), Dimension(1, 4), dyn})},
                             block(2),
                             {test::f32({1, Dimension(1, 4), Dimension(2, 8), Dimension(0, -1)})}},
                        });
}

TEST(DepthToSpaceShape, BadInputsAreErrorsNamingNodeFieldAndShapes) {
    test::expect_shapes(
        "depth_to_space",
        {
            {{test::f32({2, 8, 3})}, block(2), {}, {"node 'node'", "4-D", "f32[2,8,3]"}},
            {{test::f32({2, 6, 3, 3})}, block(2), {}, {"node 'node'", "blocksize", "[2,6,3,3]", "multiple", "4"}},
            {{test::f32({2, 4, 3, 3})}, block(0), {}, {"node 'node'", "blocksize", "at least 1"}},
            {{test::f32({1, 4, (int64_t{1} << 59) + 1, 1})}, block(2), {}, {"node 'node'", "2^60"}},
            {{test::f32({1, 4, 1, 1})}, block(2, "RDC"), {}, {"mode", "RDC"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run(const HostTensor& x, const Attributes& a) {
    return test::run_once(test::single_node_program("depth_to_space", {x.layout()}, a), {x});
}

const HostTensor k8 = HostTensor::from_int64(DataType::i32, Shape{1, 8, 1, 1}, {0, 1, 2, 3, 4, 5, 6, 7});

TEST(DepthToSpaceValues, DcrTakesTheChannelBlockOutermost) {
    const HostTensor out = run(k8, block(2));
    EXPECT_EQ(out.shape(), (Shape{1, 2, 2, 2}));
    EXPECT_EQ(out.to_int64(), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(DepthToSpaceValues, CrdTakesTheChannelBlockInnermost) {
    EXPECT_EQ(run(k8, block(2, "CRD")).to_int64(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(DepthToSpaceValues, BlocksInterleaveAcrossTheWidth) {
    const HostTensor x = HostTensor::from_int64(DataType::i64, Shape{1, 4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    EXPECT_EQ(run(x, block(2)).to_int64(), (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(DepthToSpaceImpls, EveryImplMatchesTheReferenceForEveryElementWidthAndMode) {
    for (const auto& [t, b, mode] :
         std::vector<std::tuple<DataType, int64_t, std::string>>{{DataType::f32, 2, "DCR"},
                                                                 {DataType::f32, 3, "CRD"},
                                                                 {DataType::f16, 2, "CRD"},
                                                                 {DataType::i64, 1, "DCR"},
                                                                 {DataType::boolean, 2, "DCR"},
                                                                 {DataType::f64, 2, "CRD"}}) {
        SCOPED_TRACE(std::string(to_string(t)) + " " + mode + " " + std::to_string(b));
        std::vector<test::Run> runs;
        for (const Shape& s :
             std::vector<Shape>{{1, b * b, 1, 1}, {2, 3 * b * b, 13, 3}, {1, 2 * b * b, 1, 257}, {0, b * b, 2, 2}})
            runs.push_back({test::random_tensor(t, s, runs.size() + 5, -100, 100)});
        test::expect_impls_match_reference(
            {"depth_to_space", block(b, mode), {Layout(PartialShape::dynamic_of_rank(4), t)}, {}}, runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(DepthToSpaceDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{1, 8, n % 5 + 1, n}});
    shapes.push_back({Shape{2, 8, 0, 3}});
    shapes.push_back({Shape{1, 8, 1, 1}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence(
            {"depth_to_space", block(2, "CRD"), {test::f32({Dimension(), 8, Dimension(), Dimension()})}, {}},
            test::random_runs(DataType::f32, shapes, 30), o);
    }
}

}   // namespace
}   // namespace dynrt
