// parameter: registered as a graph input with no impls; a program whose output
// is the parameter itself returns each request's input unchanged.
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

TEST(ParameterOp, IsRegisteredAsAnInputWithoutImpls) {
    const OpDefinition& def = registry()->op("parameter").def;
    EXPECT_TRUE(def.traits.is_input);
    EXPECT_FALSE(def.traits.is_constant);
    EXPECT_EQ(def.min_inputs, 0u);
    EXPECT_EQ(def.max_inputs, 0u);
    EXPECT_TRUE(def.attrs.empty());
    EXPECT_TRUE(registry()->all_impls("parameter").empty());
}

TEST(ParameterOp, ShapeInferenceRefersToTheProgramInputs) {
    const OpDefinition& def = registry()->op("parameter").def;
    const std::vector<Layout> inputs;
    const Attributes attrs;
    const std::string node = "x";
    try {
        def.infer(ShapeInferContext{node, inputs, attrs, {}});
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("program's inputs"), std::string::npos) << e.what();
    }
}

TEST(ParameterOp, InputFeedingOnlyAnOutputIsReturnedUnchanged) {
    auto p = std::make_shared<Program>(registry(), "t");
    p->add_input("x", Layout({Dimension(), 4}, DataType::f32));
    p->add_output("x");
    p->build();
    InferRequest req(Network::create(p, test::engine()));
    uint64_t seed = 1;
    for (int64_t n : {2, 5, 5, 1, 17}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const HostTensor in = test::random_tensor(DataType::f32, Shape{n, 4}, seed++);
        req.set_input("x", in);
        req.infer();
        const HostTensor out = req.get_output(0);
        ASSERT_EQ(out.shape(), Shape({n, 4}));
        ASSERT_EQ(out.dtype(), DataType::f32);
        EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
    }
}

TEST(ParameterOp, IntegerInputIsReturnedUnchanged) {
    auto p = std::make_shared<Program>(registry(), "t");
    p->add_input("ids", Layout({3}, DataType::i64));
    p->add_output("ids");
    p->build();
    InferRequest req(Network::create(p, test::engine()));
    req.set_input("ids", HostTensor::from_int64(DataType::i64, Shape{3}, {7, -8, 9}));
    req.infer();
    EXPECT_EQ(req.get_output("ids").to_int64(), std::vector<int64_t>({7, -8, 9}));
}

}  // namespace
}  // namespace dynrt
