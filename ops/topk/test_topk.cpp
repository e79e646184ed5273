// topk: shape bound and refusals, values/indices against a sort-based
// reference for several k (up to the axis length) on one request, every impl
// (host and OpenCL, static and shape-agnostic) against the reference with ties
// and empty tensors, one instance over changing shapes and k on every engine,
// and the errors for a negative k and a k past the axis length on both
// devices (ONNX TopK: k must not exceed the axis).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

std::shared_ptr<Network> network(bool largest, const EnginePtr& engine = test::engine()) {
    Attributes a;
    a.set("axis", int64_t(1));
    a.set("largest", largest);
    auto p = std::make_shared<Program>(test::registry(), "topk");
    p->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
    p->add_input("k", Layout(PartialShape{1}, DataType::i64));
    p->add_node("t", "topk", {"x", "k"}, a);
    p->add_output("t:0");
    p->add_output("t:1");
    p->build();
    return Network::create(p, engine);
}

TEST(Topk, ShapeInference_BoundIsTheInputShape) {
    const OpDefinition& def = test::registry()->op("topk").def;
    EXPECT_TRUE(def.traits.data_dependent_output);
    const std::vector<Layout> in{Layout(PartialShape{3, 5}, DataType::f32), Layout(PartialShape{1}, DataType::i64)};
    Attributes a = Attributes::validate(def.attrs, {});
    auto out = def.infer(ShapeInferContext{"t", in, a, {}});
    EXPECT_EQ(out.at(0).get_shape(), Shape({3, 5}));
    EXPECT_EQ(out.at(1).dtype, DataType::i64);
}

TEST(Topk, ShapeInference_RefusesABadAxisAndKOfTheWrongTypeOrSize) {
    const Layout x({3, 5}, DataType::f32), k({1}, DataType::i64);
    test::expect_shapes("topk", {{{x, k}, test::attrs({{"axis", int64_t{2}}}), {}, {"axis"}},
                                 {{x, Layout({1}, DataType::f32)}, {}, {}, {"k (input 1)", "i32 or i64"}},
                                 {{x, Layout({2}, DataType::i64)}, {}, {}, {"k (input 1)", "one value"}},
                                 {{Layout({}, DataType::f32), k}, {}, {}, {"scalar"}},
                                 {{Layout({Dimension(), 4}, DataType::f16), k},
                                  test::attrs({{"axis", int64_t{-2}}}),
                                  {Layout({Dimension(), 4}, DataType::f16), Layout({Dimension(), 4}, DataType::i64)}}});
}

// Runs of x (dtype t, values in [lo, hi): narrow integer ranges give ties)
// over `shapes`, with k cycling through `ks`, each held to the length of
// `axis` (a k past it is an error: TopkErrors below).
std::vector<test::Run> topk_runs(DataType t, const std::vector<Shape>& shapes, const std::vector<int64_t>& ks,
                                 int64_t axis, double lo = -1.0, double hi = 1.0) {
    std::vector<test::Run> runs;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const int64_t n = shapes[i][static_cast<size_t>(axis < 0 ? axis + int64_t(shapes[i].rank()) : axis)];
        runs.push_back({test::random_tensor(t, shapes[i], 10 + i, lo, hi),
                        HostTensor::from_int64(DataType::i64, {1}, {std::min(ks[i % ks.size()], n)})});
    }
    return runs;
}

test::OpSetup setup(DataType t, int64_t axis, bool largest, bool sorted) {
    return {"topk",
            test::attrs({{"axis", axis}, {"largest", largest}, {"sorted", sorted}}),
            {Layout(PartialShape::dynamic_of_rank(3), t), Layout({1}, DataType::i64)},
            {}};
}

// Empty lines, a size-1 axis, k = 0, k at the axis length.
const std::vector<Shape> kShapes = {{2, 5, 3}, {3, 1, 4}, {2, 0, 3}, {0, 4, 2}, {4, 17, 2}};
const std::vector<int64_t> kKs = {3, 1, 0, 5, 20};

// Every flag combination on integers with ties (a narrow range), each axis
// form on floats, and the other dtypes once: PoCL compiles a kernel per
// static shape, so the matrix is not a full product.
TEST(TopkImpls, EveryImplMatchesTheReference) {
    for (bool largest : {true, false})
        for (bool sorted : {true, false}) {
            const int64_t axis = largest == sorted ? 1 : -2;
            SCOPED_TRACE(std::string(largest ? "largest" : "smallest") + (sorted ? " sorted" : " unsorted") + " axis " +
                         std::to_string(axis));
            test::expect_impls_match_reference(setup(DataType::i32, axis, largest, sorted),
                                               topk_runs(DataType::i32, kShapes, kKs, axis, -2, 2));
        }
    for (int64_t axis : {1, -1})
        test::expect_impls_match_reference(setup(DataType::f32, axis, axis > 0, axis < 0),
                                           topk_runs(DataType::f32, kShapes, kKs, axis));
    for (DataType t : {DataType::f16, DataType::i64})
        test::expect_impls_match_reference(setup(t, 1, true, true), topk_runs(t, kShapes, kKs, 1, -3, 3));
}

TEST(TopkDynamic, OneInstanceFollowsChangingShapesAndKOnEveryEngine) {
    std::vector<Shape> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back(Shape{2, n, 1});
    const std::vector<test::Run> runs = topk_runs(DataType::f32, shapes, {1, 3, 16, 300, 0}, 1);
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence(setup(DataType::f32, 1, true, true), runs, o);
}

TEST(Topk, ChangingK_ValuesIndicesAndShapesMatchASort) {
    for (bool largest : {true, false}) {
        auto net = network(largest);
        InferRequest r(net);
        const HostTensor x = HostTensor::from_floats({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
        for (int64_t k : {2, 5, 1, 0, 4}) {
            r.set_input("x", x);
            r.set_input("k", HostTensor::from_int64(DataType::i64, {1}, {k}));
            r.infer();
            const auto kk = static_cast<size_t>(k);
            ASSERT_EQ(r.output(0).shape(), Shape({2, static_cast<int64_t>(kk)}))
                << "k=" << k << " got " << r.output(0).shape().to_string();
            ASSERT_EQ(r.output(1).shape(), Shape({2, static_cast<int64_t>(kk)}));
            for (size_t row = 0; row < 2; ++row) {
                std::vector<size_t> idx(5);
                std::iota(idx.begin(), idx.end(), size_t(0));
                const float* v = x.as<float>() + row * 5;
                std::stable_sort(idx.begin(), idx.end(),
                                 [&](size_t a, size_t b) { return largest ? v[a] > v[b] : v[a] < v[b]; });
                for (size_t j = 0; j < kk; ++j) {
                    EXPECT_EQ(r.output(1).as<int64_t>()[row * kk + j], static_cast<int64_t>(idx[j]));
                    EXPECT_FLOAT_EQ(r.output(0).as<float>()[row * kk + j], v[idx[j]]);
                }
            }
        }
    }
}

// A k outside [0, axis length] is an error naming the node, k and the axis
// length, the same words on every engine; the request then serves a good k.
void expect_bad_k_refused(const EnginePtr& engine) {
    for (bool dynamic : {true, false}) {
        SCOPED_TRACE(dynamic ? "dynamic impls" : "static impls");
        Attributes a;
        a.set("axis", int64_t(1));
        auto p = std::make_shared<Program>(test::registry(), "topk");
        p->add_input("x", Layout(PartialShape{Dimension(), Dimension()}, DataType::f32));
        p->add_input("k", Layout(PartialShape{1}, DataType::i64));
        p->add_node("t", "topk", {"x", "k"}, a);
        p->add_output("t:0");
        p->add_output("t:1");
        p->build();
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic;
        opts.async_compile = false;
        InferRequest r(Network::create(p, engine, opts));
        const HostTensor x = HostTensor::from_floats({2, 3}, {1, 2, 3, 6, 5, 4});
        for (int64_t k : std::vector<int64_t>{-1, 4, 7, int64_t(1) << 40, -(int64_t(1) << 40)}) {
            r.set_input("x", x);
            r.set_input("k", HostTensor::from_int64(DataType::i64, {1}, {k}));
            const std::string m = test::error_of([&] { r.infer(); });
            EXPECT_NE(m.find("node 't'"), std::string::npos) << m;
            EXPECT_NE(m.find("k is " + std::to_string(k) + "; it must be in [0, 3]"), std::string::npos) << m;
            EXPECT_NE(m.find("axis 1 of input [2,3]"), std::string::npos) << m;
            r.set_input("k", HostTensor::from_int64(DataType::i64, {1}, {3}));
            r.infer();
            EXPECT_EQ(r.output(0).shape(), Shape({2, 3}));
            EXPECT_EQ(r.output(1).to_int64(), (std::vector<int64_t>{2, 1, 0, 0, 1, 2}));
        }
    }
}

TEST(TopkErrors, KOutsideTheAxis_ErrorNamesNodeKAndAxisLength) { expect_bad_k_refused(test::engine()); }

TEST(TopkErrors, KOutsideTheAxis_SameErrorOnTheDevice) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    expect_bad_k_refused(eng);
}

}   // namespace
}   // namespace dynrt
