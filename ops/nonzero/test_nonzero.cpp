// nonzero: bound from shape inference, values and shapes against a naive scan,
// one request fed inputs whose non-zero count changes run after run.
#include <gtest/gtest.h>

#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "ocl_sweep.hpp"
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

// On the OpenCL device (a host impl over mapped device buffers): the same.
TEST(NonzeroOcl, ChangingInputs_ValuesAndShapeFollowTheData) {
    EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    changing_inputs(eng);
}

}   // namespace
}   // namespace dynrt
