// constant: registered as a constant with no impls; a program whose output is
// the constant itself returns the constant's value on every run.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

using test::registry;

TEST(ConstantOp, IsRegisteredAsAConstantWithoutImpls) {
    const OpDefinition& def = registry()->op("constant").def;
    EXPECT_TRUE(def.traits.is_constant);
    EXPECT_FALSE(def.traits.is_input);
    EXPECT_EQ(def.min_inputs, 0u);
    EXPECT_EQ(def.max_inputs, 0u);
    EXPECT_TRUE(def.attrs.empty());
    EXPECT_TRUE(registry()->all_impls("constant").empty());
}

TEST(ConstantOp, ShapeInferenceRefersToTheConstantValues) {
    const OpDefinition& def = registry()->op("constant").def;
    const std::vector<Layout> inputs;
    const Attributes attrs;
    const std::string node = "c";
    try {
        def.infer(ShapeInferContext{node, inputs, attrs, {}});
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("constant values"), std::string::npos) << e.what();
    }
}

TEST(ConstantOp, ConstantFeedingOnlyAnOutputIsReturnedOnEveryRun) {
    const HostTensor value = HostTensor::from_floats(Shape{2, 3}, {0.5f, -1.f, 2.f, 3.25f, -4.f, 5.f});
    auto p = std::make_shared<Program>(registry(), "t");
    p->add_constant("c", value);
    p->add_output("c");
    p->build();
    EXPECT_EQ(p->nodes()[p->node_index("c")].out_layouts.at(0).shape, PartialShape({2, 3}));
    InferRequest req(Network::create(p, test::engine()));
    for (int run = 0; run < 3; ++run) {
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), Shape({2, 3}));
        ASSERT_EQ(out.dtype(), DataType::f32);
        const std::vector<double> want{0.5, -1, 2, 3.25, -4, 5};
        for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out.get_as_double(i), want[i]);
    }
}

TEST(ConstantOp, IntegerConstantIsReturnedUnchanged) {
    auto p = std::make_shared<Program>(registry(), "t");
    p->add_constant("shape", HostTensor::from_int64(DataType::i64, Shape{3}, {-1, 0, 64}));
    p->add_output("shape");
    p->build();
    InferRequest req(Network::create(p, test::engine()));
    req.infer();
    const HostTensor out = req.get_output("shape");
    EXPECT_EQ(out.dtype(), DataType::i64);
    EXPECT_EQ(out.to_int64(), std::vector<int64_t>({-1, 0, 64}));
}

}  // namespace
}  // namespace dynrt
