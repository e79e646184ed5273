// nonzero: bound from shape inference and refusals, values and shapes against
// a naive scan, one request fed inputs whose non-zero count changes run after
// run, every impl (host and OpenCL, static and shape-agnostic) against the
// reference over dtypes and shapes (empty, size-1, several chunks of the
// OpenCL kernels), and one instance over changing shapes on every engine.
#include <gtest/gtest.h>

#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

// Independent reference: coordinates of non-zero elements, one vector per dim.
std::vector<std::vector<int64_t>> naive(const HostTensor& x) {
    const Shape& s = x.shape();
    std::vector<std::vector<int64_t>> out(s.rank());
    for (size_t i = 0; i < x.count(); ++i) {
        if (x.get_as_double(i) == 0.0) continue;
        size_t rest = i;
        for (size_t d = s.rank(); d-- > 0;) {
            out[d].push_back(static_cast<int64_t>(rest % static_cast<size_t>(s[d])));
            rest /= static_cast<size_t>(s[d]);
        }
    }
    return out;
}

TEST(Nonzero, ShapeInference_GivesTheBound) {
    const OpDefinition& def = test::registry()->op("nonzero").def;
    EXPECT_TRUE(def.traits.data_dependent_output);
    const std::vector<Layout> in{Layout(PartialShape{2, 3}, DataType::f32)};
    Attributes a;
    auto out = def.infer(ShapeInferContext{"n", in, a, {}});
    EXPECT_EQ(out.at(0), Layout(PartialShape{2, 6}, DataType::i64));
}

TEST(Nonzero, ShapeInference_DynamicInputGivesADynamicCountAndAScalarIsRefused) {
    test::expect_shapes(
        "nonzero",
        {{{Layout({Dimension(), 3, 2}, DataType::u8)}, {}, {Layout(PartialShape{3, Dimension()}, DataType::i64)}},
         {{Layout({}, DataType::f32)}, {}, {}, {"scalar"}}});
}

// dtype `t` with about a third of the elements zero (values -1, 0, 1).
HostTensor sparse(DataType t, const Shape& s, uint64_t seed) {
    const HostTensor ints = test::random_tensor(DataType::i32, s, seed, -1, 2);
    HostTensor x(t, s);
    for (size_t i = 0; i < x.count(); ++i) x.set_from_double(i, ints.get_as_double(i));
    return x;
}

std::vector<test::Run> sparse_runs(DataType t, const std::vector<Shape>& shapes) {
    std::vector<test::Run> runs;
    for (size_t i = 0; i < shapes.size(); ++i) runs.push_back({sparse(t, shapes[i], 20 + i)});
    return runs;
}

TEST(NonzeroImpls, EveryImplMatchesTheReference) {
    // 600 and 300 x 3 elements: several chunks of 256 with tails.
    const std::vector<Shape> shapes = {{3, 5}, {1, 1}, {0, 4}, {17, 13}, {1, 600}, {300, 3}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64, DataType::u8, DataType::boolean}) {
        SCOPED_TRACE(to_string(t));
        test::expect_impls_match_reference({"nonzero", {}, {Layout({Dimension(), Dimension()}, t)}, {}},
                                           sparse_runs(t, shapes));
    }
    test::expect_impls_match_reference({"nonzero", {}, {Layout({Dimension()}, DataType::f32)}, {}},
                                       sparse_runs(DataType::f32, {{7}, {1}, {257}, {0}}));
}

TEST(NonzeroDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<Shape> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back(Shape{n, 3});
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence({"nonzero", {}, {Layout({Dimension(), 3}, DataType::f32)}, {}},
                              sparse_runs(DataType::f32, shapes), o);
}

void changing_inputs(const EnginePtr& eng) {
    auto p = test::single_node_program("nonzero", {Layout(PartialShape{Dimension(), Dimension()}, DataType::f32)}, {});
    auto net = Network::create(p, eng);
    InferRequest r(net);
    const std::vector<HostTensor> feeds = {
        HostTensor::from_floats({2, 3}, {0, 1, 0, 2, 0, 3}),
        HostTensor::from_floats({2, 3}, {1, 1, 1, 1, 1, 1}),
        HostTensor::from_floats({3, 2}, {0, 0, 0, 0, 0, 0}),
        HostTensor::from_floats({1, 4}, {0, 5, 0, 0}),
    };
    for (const HostTensor& x : feeds) {
        r.set_input("in0", x);
        r.infer();
        const HostTensor& out = r.output(0);
        const auto ref = naive(x);
        ASSERT_EQ(out.shape(), Shape({2, static_cast<int64_t>(ref[0].size())}));
        for (size_t d = 0; d < 2; ++d)
            for (size_t j = 0; j < ref[d].size(); ++j) EXPECT_EQ(out.as<int64_t>()[d * ref[d].size() + j], ref[d][j]);
        EXPECT_EQ(r.last_run().nodes.back().counters.executions, 1u);
    }
}

TEST(Nonzero, ChangingInputs_ValuesAndShapeFollowTheData) { changing_inputs(test::engine()); }

// On the OpenCL device (the OpenCL impls): the same.
TEST(NonzeroOcl, ChangingInputs_ValuesAndShapeFollowTheData) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    changing_inputs(eng);
}

}   // namespace
}   // namespace dynrt
