// topk: shape bound, values/indices against a sort-based reference for several
// k (clamping included) on one request, and the negative-k error.
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

std::shared_ptr<Network> network(bool largest) {
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
    return Network::create(p, test::engine());
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

TEST(Topk, ChangingK_ValuesIndicesAndShapesMatchASort) {
    for (bool largest : {true, false}) {
        auto net = network(largest);
        InferRequest r(net);
        const HostTensor x = HostTensor::from_floats({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
        for (int64_t k : {2, 5, 1, 0, 7}) {
            r.set_input("x", x);
            r.set_input("k", HostTensor::from_int64(DataType::i64, {1}, {k}));
            r.infer();
            const size_t kk = static_cast<size_t>(std::min<int64_t>(k, 5));
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

TEST(Topk, NegativeK_ErrorNamesTheNode) {
    auto net = network(true);
    InferRequest r(net);
    r.set_input("x", HostTensor::from_floats({1, 3}, {1, 2, 3}));
    r.set_input("k", HostTensor::from_int64(DataType::i64, {1}, {-1}));
    const std::string m = test::error_of([&] { r.infer(); });
    EXPECT_NE(m.find("node 't'"), std::string::npos) << m;
    EXPECT_NE(m.find("k is -1"), std::string::npos) << m;
}

}   // namespace
}   // namespace dynrt
