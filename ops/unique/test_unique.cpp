// unique: shape table (bounds, refusals), every impl (host and OpenCL, static
// and shape-agnostic) against the reference over dtypes, axes, sorted and
// unsorted with many repeats (empty and size-1 dims included), one instance
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

Attributes along(int64_t axis, bool sorted) {
    return test::attrs({{"axis", axis}, {"flatten", false}, {"sorted", sorted}});
}
Attributes flattened(bool sorted) { return test::attrs({{"sorted", sorted}}); }

Layout i64(PartialShape s) { return Layout(std::move(s), DataType::i64); }

TEST(UniqueShape, BoundIsEverySliceUniqueAndBadAxesAreRefused) {
    const Layout x({4, 3}, DataType::f32);
    test::expect_shapes(
        "unique",
        {{{x}, flattened(true), {Layout({12}, DataType::f32), i64({12}), i64({12}), i64({12})}},
         {{x}, along(0, true), {x, i64({4}), i64({4}), i64({4})}},
         {{x}, along(-1, false), {x, i64({3}), i64({3}), i64({3})}},
         {{Layout({Dimension(), 3}, DataType::i32)},
          flattened(false),
          {Layout({Dimension()}, DataType::i32), i64({Dimension()}), i64({Dimension()}), i64({Dimension()})}},
         {{Layout({}, DataType::f32)}, flattened(true), {Layout({1}, DataType::f32), i64({1}), i64({1}), i64({1})}},
         {{x}, along(2, true), {}, {"axis"}},
         {{Layout({}, DataType::f32)}, along(0, true), {}, {"scalar"}}});
}

// Values from a narrow integer range, so slices repeat.
std::vector<test::Run> runs_of(DataType t, const std::vector<Shape>& shapes, double hi) {
    std::vector<test::Run> runs;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const HostTensor ints = test::random_tensor(DataType::i32, shapes[i], 70 + i, 0, hi);
        HostTensor x(t, shapes[i]);
        for (size_t k = 0; k < x.count(); ++k) x.set_from_double(k, ints.get_as_double(k) - 1);
        runs.push_back({x});
    }
    return runs;
}

test::OpSetup setup(DataType t, const Attributes& a, size_t rank) {
    return {"unique", a, {Layout(PartialShape::dynamic_of_rank(rank), t)}, {}};
}

// Each axis form in both orders on floats, every dtype once: PoCL compiles a
// kernel per static shape, so the matrix is not a full product.
TEST(UniqueImpls, EveryImplMatchesTheReference) {
    const std::vector<Shape> shapes = {{6, 2, 1}, {1, 1, 1}, {9, 3, 2}, {0, 2, 2}, {3, 0, 1}};
    for (bool sorted : {true, false}) {
        SCOPED_TRACE(sorted ? "sorted" : "unsorted");
        for (int64_t axis : {0, sorted ? 1 : -1})
            test::expect_impls_match_reference(setup(DataType::f32, along(axis, sorted), 3),
                                               runs_of(DataType::f32, shapes, 3));
        test::expect_impls_match_reference(setup(DataType::f32, flattened(sorted), 3),
                                           runs_of(DataType::f32, shapes, 5));
    }
    for (DataType t : {DataType::f16, DataType::i32, DataType::i64, DataType::u8})
        test::expect_impls_match_reference(setup(t, flattened(t != DataType::i32), 2),
                                           runs_of(t, {{4, 5}, {1, 1}, {40, 2}}, 5));
    test::expect_impls_match_reference(setup(DataType::boolean, along(0, true), 2),
                                       runs_of(DataType::boolean, {{8, 2}, {3, 3}, {1, 1}}, 2));
}

TEST(UniqueDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Shape> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back(Shape{n, 2});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        test::expect_sequence(setup(DataType::f32, along(0, true), 2), runs_of(DataType::f32, shapes, 3), o);
        test::expect_sequence(setup(DataType::i32, flattened(false), 2), runs_of(DataType::i32, shapes, 9), o);
    }
}

// The examples of the ONNX spec, on one request per engine.
void expect_spec_examples(const EnginePtr& eng) {
    struct Example {
        Shape x_shape;
        std::vector<float> x;
        Attributes attrs;
        Shape y_shape;
        std::vector<float> y;
        std::vector<int64_t> indices, inverse, counts;
    };
    const std::vector<Example> examples = {
        {{6}, {2, 1, 1, 3, 4, 3}, flattened(false), {4}, {2, 1, 3, 4}, {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1}},
        {{6}, {2, 1, 1, 3, 4, 3}, flattened(true), {4}, {1, 2, 3, 4}, {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1}},
        {{3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}, along(0, true), {2, 3}, {1, 0, 0, 2, 3, 4}, {0, 2}, {0, 0, 1}, {2, 1}},
        {{2, 4, 2},
         {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1},
         along(1, true),
         {2, 3, 2},
         {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1},
         {1, 0, 2},
         {1, 0, 2, 0},
         {2, 1, 1}},
    };
    for (const Example& e : examples) {
        auto p = std::make_shared<Program>(test::registry(), "unique");
        p->add_input("in0", Layout(PartialShape(e.x_shape), DataType::f32));
        p->add_node("node", "unique", {"in0"}, e.attrs);
        for (int k = 0; k < 4; ++k) p->add_output("node:" + std::to_string(k));
        p->build();
        InferRequest r(Network::create(p, eng));
        r.set_input("in0", HostTensor::from_floats(e.x_shape, e.x));
        r.infer();
        const HostTensor y = r.get_output(0);
        ASSERT_EQ(y.shape(), e.y_shape);
        for (size_t i = 0; i < e.y.size(); ++i) EXPECT_EQ(y.as<float>()[i], e.y[i]) << "y " << i;
        const std::vector<std::vector<int64_t>> want = {e.indices, e.inverse, e.counts};
        for (size_t k = 0; k < want.size(); ++k) {
            const HostTensor got = r.get_output(k + 1);
            ASSERT_EQ(got.shape(), Shape{int64_t(want[k].size())}) << "output " << k + 1;
            for (size_t i = 0; i < want[k].size(); ++i) EXPECT_EQ(got.as<int64_t>()[i], want[k][i]) << k + 1;
        }
    }
}

TEST(Unique, SpecExamples) { expect_spec_examples(test::engine()); }

TEST(UniqueOcl, SpecExamples) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    expect_spec_examples(eng);
}

}   // namespace
}   // namespace dynrt
