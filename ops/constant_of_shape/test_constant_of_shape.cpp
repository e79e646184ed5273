// constant_of_shape: shape-inference table (shape by value or only its
// length, rank 0, empty dims, every dtype, errors), hand-computed values
// (bits of f16, -0, large integers), every impl against the reference for
// every dtype, and one instance fed changing shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor dims(std::vector<int64_t> v, DataType t = DataType::i64) {
    return HostTensor::from_int64(t, Shape{static_cast<int64_t>(v.size())}, v);
}
Layout dims_layout(int64_t n, DataType t = DataType::i64) { return Layout({n}, t); }
Attributes fill(double value, const std::string& dtype) { return test::attrs({{"value", value}, {"dtype", dtype}}); }

const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::f64,     DataType::i32,
                                      DataType::i64, DataType::u8,  DataType::boolean, DataType::i8};

// ---- 1. shape inference ----------------------------------------------------

TEST(ConstantOfShapeShape, OutputShapeIsTheValueOfInput0) {
    std::vector<test::ShapeRow> rows;
    for (DataType t : kTypes)
        rows.push_back({{dims_layout(3)}, fill(1, to_string(t)), {Layout({4, 3, 2}, t)}, {}, {{0, dims({4, 3, 2})}}});
    rows.push_back({{dims_layout(3)}, {}, {test::f32({4, 3, 2})}, {}, {{0, dims({4, 3, 2})}}});   // f32 by default
    rows.push_back({{dims_layout(1)}, {}, {test::f32({0})}, {}, {{0, dims({0})}}});
    rows.push_back({{dims_layout(0)}, {}, {test::f32(PartialShape{})}, {}, {{0, dims({})}}});   // a scalar
    rows.push_back({{dims_layout(2, DataType::i32)}, {}, {test::f32({7, 1})}, {}, {{0, dims({7, 1}, DataType::i32)}}});
    rows.push_back({{dims_layout(2)}, fill(0, "i64"), {Layout(PartialShape::dynamic_of_rank(2), DataType::i64)}});
    test::expect_shapes("constant_of_shape", rows);
}

TEST(ConstantOfShapeShape, BadShapesAreErrorsNamingNodeAndField) {
    const auto words = [](std::vector<std::string> w) {
        w.push_back("node 'node'");
        w.push_back("shape");
        return w;
    };
    test::expect_shapes("constant_of_shape",
                        {
                            {{dims_layout(2)}, {}, {}, words({"negative", "[2,-1]"}), {{0, dims({2, -1})}}},
                            {{dims_layout(3)}, {}, {}, words({"2^60"}), {{0, dims({1 << 30, 1 << 30, 1 << 30})}}},
                            {{Layout({2}, DataType::f32)}, {}, {}, words({"i32 or i64", "f32[2]"})},
                            {{Layout({2, 1}, DataType::i64)}, {}, {}, words({"1-D"})},
                            {{Layout({Dimension()}, DataType::i64)}, {}, {}, words({"dynamic length"})},
                            {{dims_layout(65)}, {}, {}, words({"65", "above"})},
                            {{dims_layout(1)}, fill(1, "f8"), {}, {"dtype", "f8"}},
                        });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor fill_run(const Attributes& a, std::vector<int64_t> shape, const std::string& engine) {
    const HostTensor d = dims(std::move(shape));
    return test::run_once(test::single_node_program("constant_of_shape", {d.layout()}, a), {d}, {}, engine);
}

TEST(ConstantOfShapeValues, EveryElementHoldsTheValueOnEveryEngine) {
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        const HostTensor a = fill_run(fill(1, "f32"), {4, 3, 2}, engine);
        EXPECT_EQ(a.shape(), (Shape{4, 3, 2}));
        for (size_t i = 0; i < a.count(); ++i) EXPECT_EQ(a.as<float>()[i], 1.0F);
        const HostTensor b = fill_run(fill(-0.0, "f64"), {3}, engine);
        EXPECT_TRUE(std::signbit(b.get_as_double(2)));
        const HostTensor c = fill_run(fill(0.1, "f16"), {2, 2}, engine);
        EXPECT_EQ(c.as<uint16_t>()[3], 0x2E66);   // 0.1 rounded to half
        const int64_t big = (int64_t{1} << 53) - 1;
        EXPECT_EQ(fill_run(fill(static_cast<double>(big), "i64"), {2}, engine).to_int64(),
                  (std::vector<int64_t>{big, big}));
        EXPECT_EQ(fill_run(fill(-7, "i8"), {1, 3}, engine).to_int64(), (std::vector<int64_t>{-7, -7, -7}));
        EXPECT_EQ(fill_run(fill(1, "boolean"), {2}, engine).to_int64(), (std::vector<int64_t>{1, 1}));
        EXPECT_EQ(fill_run(fill(5, "i32"), {0, 4}, engine).shape(), (Shape{0, 4}));
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(ConstantOfShapeImpls, EveryImplMatchesTheReferenceForEveryDtype) {
    std::vector<test::Run> runs;
    for (const auto& d : std::vector<std::vector<int64_t>>{{1, 1}, {3, 13}, {17, 16}, {2, 257}, {0, 5}})
        runs.push_back({dims(d)});
    for (DataType t : kTypes) {
        SCOPED_TRACE(to_string(t));
        test::expect_impls_match_reference({"constant_of_shape", fill(-3.5, to_string(t)), {dims_layout(2)}, {}}, runs);
    }
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(ConstantOfShapeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<test::Run> runs;
    for (int64_t n : test::tail_sizes()) runs.push_back({dims({n, 3})});
    runs.push_back({dims({0, 3})});
    runs.push_back({dims({1, 1})});
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        o.check_counters = false;   // the shape is a value: the input's own shape never changes
        test::expect_sequence({"constant_of_shape", fill(0.25, "f32"), {dims_layout(2)}, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
