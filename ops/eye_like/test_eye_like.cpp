// eye_like: shape-inference table (the input's shape, the attribute's or the
// input's type, ranks other than 2 refused), hand-computed diagonals, every
// impl against the reference for every output dtype and many k, and one
// instance fed changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes eye(int64_t k, const std::string& dtype = "") { return test::attrs({{"k", k}, {"dtype", dtype}}); }

const std::vector<DataType> kTypes = {DataType::f32, DataType::f16, DataType::i32,     DataType::i64,
                                      DataType::u8,  DataType::i8,  DataType::boolean, DataType::f64};

// ---- 1. shape inference ----------------------------------------------------

TEST(EyeLikeShape, OutputHasTheInputShapeAndTheChosenType) {
    const Dimension dyn;
    std::vector<test::ShapeRow> rows;
    for (DataType t : kTypes)
        rows.push_back({{Layout({3, 4}, DataType::i32)}, eye(0, to_string(t)), {Layout({3, 4}, t)}});
    rows.push_back({{Layout({4, 4}, DataType::i64)}, {}, {Layout({4, 4}, DataType::i64)}});   // the input's type
    rows.push_back({{Layout({dyn, 0}, DataType::f16)}, eye(2), {Layout({dyn, 0}, DataType::f16)}});
    test::expect_shapes("eye_like", rows);
}

TEST(EyeLikeShape, RanksOtherThanTwoAndUnknownTypesAreErrors) {
    test::expect_shapes("eye_like", {
                                        {{test::f32({5})}, {}, {}, {"node 'node'", "inputs", "rank 1", "2-D"}},
                                        {{test::f32({2, 3, 4})}, {}, {}, {"rank 3"}},
                                        {{test::f32(PartialShape{})}, {}, {}, {"rank 0"}},
                                        {{test::f32({2, 2})}, eye(0, "u16"), {}, {"dtype", "u16"}},
                                    });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run_eye(const Layout& in, const Attributes& a, const std::string& engine) {
    return test::run_once(test::single_node_program("eye_like", {in}, a), {HostTensor(in.dtype, in.get_shape())}, {},
                          engine);
}

TEST(EyeLikeValues, DiagonalsOfA3x4MatrixOnEveryEngine) {
    const Layout in({3, 4}, DataType::i64);
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        EXPECT_EQ(run_eye(in, eye(0), engine).to_int64(), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
        EXPECT_EQ(run_eye(in, eye(1), engine).to_int64(), (std::vector<int64_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
        EXPECT_EQ(run_eye(in, eye(-2, "boolean"), engine).to_int64(),
                  (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}));
        const HostTensor h = run_eye(in, eye(3, "f16"), engine);
        EXPECT_EQ(h.as<uint16_t>()[3], 0x3C00);   // 1.0 in half
        EXPECT_EQ(h.as<uint16_t>()[2], 0);
        const int64_t lowest = std::numeric_limits<int64_t>::min();
        EXPECT_EQ(run_eye(in, eye(lowest, "i32"), engine).to_int64(), std::vector<int64_t>(12, 0));
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(EyeLikeImpls, EveryImplMatchesTheReferenceForEveryDtypeAndK) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 1}}, {{3, 13}}, {{17, 16}}, {{2, 257}}, {{0, 5}}};
    const auto check = [&](DataType t, int64_t k) {
        SCOPED_TRACE(std::string(to_string(t)) + " k " + std::to_string(k));
        test::expect_impls_match_reference(
            {"eye_like", eye(k, to_string(t)), {test::f32({Dimension(), Dimension()})}, {}},
            test::random_runs(DataType::f32, shapes, 5));
    };
    for (int64_t k : {-3, 0, 15}) check(DataType::f32, k);
    for (DataType t : kTypes)
        if (t != DataType::f32) check(t, 1);
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(EyeLikeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 17}});
    shapes.push_back({Shape{0, 17}});
    shapes.push_back({Shape{1, 17}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"eye_like", eye(-1), {Layout({Dimension(), 17}, DataType::i32)}, {}},
                              test::random_runs(DataType::i32, shapes, 100), o);
    }
}

}   // namespace
}   // namespace dynrt
