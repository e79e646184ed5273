// read_value: graph-time vs run-time shape inference, and the error for a read
// before assignment without an initial value.
#include <gtest/gtest.h>

#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

std::vector<Layout> infer(const Attributes& raw, const std::vector<Layout>& in, bool run_time) {
    const OpDefinition& def = test::registry()->op("read_value").def;
    const Attributes a = Attributes::validate(def.attrs, raw);
    ShapeInferContext c{"rv", in, a, {}};
    c.run_time = run_time;
    return def.infer(c);
}

TEST(ReadValue, GraphBuild_UsesTheDeclaredPartialShape) {
    Attributes a;
    a.set("variable", std::string("k"));
    a.set("shape", std::vector<int64_t>{1, -1, 4});
    a.set("init_shape", std::vector<int64_t>{1, 0, 4});
    const auto out = infer(a, {}, false);
    EXPECT_EQ(out.at(0).shape, (PartialShape{1, Dimension(), 4}));
    EXPECT_EQ(infer(a, {}, true).at(0).get_shape(), Shape({1, 0, 4}));
}

TEST(ReadValue, InitInput_GivesTheInitialLayout) {
    Attributes a;
    a.set("variable", std::string("k"));
    const std::vector<Layout> in{Layout(PartialShape{2, 3}, DataType::i32)};
    EXPECT_EQ(infer(a, in, true).at(0), Layout(PartialShape{2, 3}, DataType::i32));
    EXPECT_EQ(infer(a, in, false).at(0).shape, PartialShape::dynamic_of_rank(2));
}

TEST(ReadValue, NoInitAtRunTime_ErrorNamesTheVariable) {
    Attributes a;
    a.set("variable", std::string("cache"));
    a.set("shape", std::vector<int64_t>{-1});
    try {
        infer(a, {}, true);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("variable 'cache' is read before any assign"), std::string::npos)
            << e.what();
    }
}

}   // namespace
}   // namespace dynrt
