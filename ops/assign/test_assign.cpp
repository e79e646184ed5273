// assign: definition traits and shape inference (the flow behaviour is covered
// by tests/state_test.cpp).
#include <gtest/gtest.h>

#include "dynrt/op_registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

TEST(Assign, Definition_WritesStateAndKeepsTheInputLayout) {
    const OpDefinition& def = test::registry()->op("assign").def;
    EXPECT_TRUE(def.traits.writes_state);
    EXPECT_FALSE(def.traits.reads_state);
    Attributes raw;
    raw.set("variable", std::string("v"));
    const Attributes a = Attributes::validate(def.attrs, raw);
    const std::vector<Layout> in{Layout(PartialShape{1, Dimension(), 8}, DataType::f16)};
    EXPECT_EQ(def.infer(ShapeInferContext{"a", in, a, {}}).at(0), in[0]);
    EXPECT_THROW(Attributes::validate(def.attrs, {}), Error);   // variable is required
}

}   // namespace
}   // namespace dynrt
