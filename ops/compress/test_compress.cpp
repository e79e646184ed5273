// compress: shape table (bounds, refusals), every impl (host and OpenCL,
// static and shape-agnostic) against the reference over dtypes, axes and
// condition lengths (shorter than the axis, empty, all false), one instance
// over changing shapes and data on every engine, and the spec's examples
// written out on both devices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

const Layout kCond(PartialShape{Dimension()}, DataType::boolean);

Attributes along(int64_t axis) { return test::attrs({{"axis", axis}, {"flatten", false}}); }

TEST(CompressShape, BoundIsTheInputAndBadInputsAreRefused) {
    const Layout x({3, 2}, DataType::f32);
    const Layout c3({3}, DataType::boolean), c6({6}, DataType::boolean);
    test::expect_shapes(
        "compress",
        {{{x, c3}, along(0), {x}},
         {{x, Layout({2}, DataType::boolean)}, along(-1), {x}},
         {{x, c6}, {}, {Layout({6}, DataType::f32)}},
         {{Layout({Dimension(), 2}, DataType::i64), kCond}, {}, {Layout({Dimension()}, DataType::i64)}},
         {{Layout({Dimension(), 2}, DataType::f16), kCond}, along(1), {Layout({Dimension(), 2}, DataType::f16)}},
         {{Layout({}, DataType::f32), Layout({1}, DataType::boolean)}, {}, {Layout({1}, DataType::f32)}},
         {{x, Layout({4}, DataType::boolean)}, along(0), {}, {"condition (input 1)", "longer", "[3,2]"}},
         {{x, Layout({7}, DataType::boolean)}, {}, {}, {"condition (input 1)", "longer", "element count 6"}},
         {{x, Layout({3}, DataType::f32)}, along(0), {}, {"condition (input 1)", "bool"}},
         {{x, Layout({3, 1}, DataType::boolean)}, along(0), {}, {"condition (input 1)"}},
         {{x, c3}, along(2), {}, {"axis"}},
         {{Layout({}, DataType::f32), Layout({1}, DataType::boolean)}, along(0), {}, {"scalar"}}});
}

// One run per (shape, condition length): x of dtype t, a random condition.
struct Case {
    Shape x;
    int64_t cond;
};

std::vector<test::Run> runs_of(DataType t, const std::vector<Case>& cases) {
    std::vector<test::Run> runs;
    for (size_t i = 0; i < cases.size(); ++i)
        runs.push_back({test::random_tensor(t, cases[i].x, 30 + i, -5, 5),
                        test::random_tensor(DataType::boolean, Shape{cases[i].cond}, 60 + i)});
    return runs;
}

test::OpSetup setup(DataType t, const Attributes& a, size_t rank) {
    return {"compress", a, {Layout(PartialShape::dynamic_of_rank(rank), t), kCond}, {}};
}

// Along axis 1 of a rank-3 input: full, shorter and empty conditions, empty
// and size-1 dims.
const std::vector<Case> kAxisCases = {{{2, 5, 3}, 5}, {{1, 17, 1}, 9}, {{3, 1, 4}, 1},
                                      {{2, 4, 3}, 0}, {{0, 3, 2}, 3},  {{4, 9, 2}, 9}};

TEST(CompressImpls, EveryImplMatchesTheReference) {
    for (int64_t axis : {1, -2}) {
        SCOPED_TRACE("axis " + std::to_string(axis));
        for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8})
            test::expect_impls_match_reference(setup(t, along(axis), 3), runs_of(t, kAxisCases));
    }
    const std::vector<Case> flat = {{{2, 5, 3}, 30}, {{1, 1, 1}, 1}, {{3, 1, 4}, 5}, {{2, 0, 3}, 0}, {{6, 7, 8}, 300}};
    test::expect_impls_match_reference(setup(DataType::f32, {}, 3), runs_of(DataType::f32, flat));
    test::expect_impls_match_reference(setup(DataType::i32, along(0), 3),
                                       runs_of(DataType::i32, {{{5, 2, 2}, 5}, {{17, 1, 3}, 4}, {{1, 2, 2}, 1}}));
}

TEST(CompressDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Case> cases;
    for (int64_t n : test::tail_sizes()) cases.push_back({{2, n}, n});
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence(setup(DataType::f32, along(1), 2), runs_of(DataType::f32, cases), o);
}

// The examples of the ONNX spec, on one request per engine.
void expect_spec_examples(const EnginePtr& eng) {
    const HostTensor x = HostTensor::from_floats({3, 2}, {1, 2, 3, 4, 5, 6});
    struct Example {
        Attributes attrs;
        std::vector<int64_t> cond;
        Shape shape;
        std::vector<float> want;
    };
    const std::vector<Example> examples = {{along(0), {0, 1, 1}, {2, 2}, {3, 4, 5, 6}},
                                           {along(1), {0, 1}, {3, 1}, {2, 4, 6}},
                                           {along(0), {0, 1}, {1, 2}, {3, 4}},
                                           {{}, {0, 1, 0, 0, 1}, {2}, {2, 5}}};
    for (const Example& e : examples) {
        auto p = test::single_node_program("compress", {Layout({3, 2}, DataType::f32), kCond}, e.attrs);
        InferRequest r(Network::create(p, eng));
        r.set_input("in0", x);
        r.set_input("in1", HostTensor::from_int64(DataType::boolean, {int64_t(e.cond.size())}, e.cond));
        r.infer();
        const HostTensor y = r.get_output(0);
        ASSERT_EQ(y.shape(), e.shape);
        for (size_t i = 0; i < e.want.size(); ++i) EXPECT_EQ(y.as<float>()[i], e.want[i]) << "element " << i;
    }
}

TEST(Compress, SpecExamples) { expect_spec_examples(test::engine()); }

TEST(CompressOcl, SpecExamples) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    expect_spec_examples(eng);
}

}   // namespace
}   // namespace dynrt
