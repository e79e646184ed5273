// size: shape-inference table, hand-computed counts for both output types and
// every impl, and one network instance fed a sequence of changing shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/implementation_map.hpp"
#include "dynrt/memory.hpp"
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::ocl_engine;
using test::registry;

Attributes type_attr(const std::string& t) { return test::attrs({{"output_type", t}}); }

// ---- 1. shape inference ----------------------------------------------------

TEST(SizeShapeInfer, OutputIsAScalarOfTheOutputType) {
    const Layout scalar_i64(PartialShape{}, DataType::i64);
    test::expect_shapes("size",
                        {{{Layout({Dimension(), 3, Dimension(1, 5)}, DataType::f16)}, {}, {scalar_i64}},
                         {{Layout(PartialShape{}, DataType::f32)}, {}, {scalar_i64}},
                         {{Layout({0, 4}, DataType::u8)}, {}, {scalar_i64}},
                         {{Layout({2, 3}, DataType::f32)}, type_attr("i32"), {Layout(PartialShape{}, DataType::i32)}}});
}

TEST(SizeShapeInfer, DeclaresTheShapeOfLikeTraitAndRejectsABadOutputType) {
    const OpDefinition& def = registry()->op("size").def;
    EXPECT_TRUE(def.traits.shape_of_like);
    EXPECT_FALSE(def.traits.data_dependent_output);
    EXPECT_THROW(Attributes::validate(def.attrs, type_attr("f32")), Error);
}

// ---- 2. reference values -----------------------------------------------------

TEST(SizeReference, CountsTheElementsForBothOutputTypes) {
    const std::vector<std::pair<Shape, int64_t>> cases = {
        {Shape{2, 3, 4}, 24}, {Shape{}, 1}, {Shape{0, 5}, 0}, {Shape{1, 1, 7}, 7}};
    for (const char* t : {"i64", "i32"}) {
        for (const auto& c : cases) {
            SCOPED_TRACE(std::string(t) + " " + c.first.to_string());
            const auto prog =
                test::single_node_program("size", {Layout(PartialShape(c.first), DataType::f32)}, type_attr(t));
            const HostTensor out = test::run_once(prog, {HostTensor(DataType::f32, c.first)});
            EXPECT_EQ(out.dtype(), parse_data_type(t));
            EXPECT_EQ(out.shape(), Shape());
            EXPECT_EQ(out.to_int64(), std::vector<int64_t>({c.second}));
        }
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

class SizeSweep : public ::testing::TestWithParam<bool> {};

TEST_P(SizeSweep, OneInstanceReportsEveryNewCount) {
    NetworkOptions opts;
    opts.use_dynamic_impls = GetParam();
    const auto prog = test::single_node_program("size", {Layout({Dimension(), Dimension()}, DataType::f32)}, {});
    InferRequest req(Network::create(prog, test::engine(), opts));
    const std::vector<int64_t> sizes = {1, 3, 0, 17, 255, 17, 17, 1};
    uint64_t seed = 1;
    for (int64_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const Shape s{n, 5};
        req.set_input("in0", test::random_tensor(DataType::f32, s, seed++));
        req.infer();
        const HostTensor out = req.get_output(0);
        EXPECT_EQ(out.shape(), Shape());
        EXPECT_EQ(out.to_int64(), std::vector<int64_t>({n * 5}));
    }
}

INSTANTIATE_TEST_SUITE_P(Impls, SizeSweep, ::testing::Values(true, false), test::dynamic_or_static);

// ---- OpenCL: ocl_dynamic and ocl_static -------------------------------------
//
// The flow runs size on the host impl even on an ocl engine, so the ocl impls
// are created and executed directly here; a dynamic impl serves every shape.
TEST(SizeOcl, EveryOclImplCountsEveryShape) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const OpDefinition& def = registry()->op("size").def;
    const auto stream = eng->create_stream();
    const std::vector<Shape> shapes = {Shape{1, 3, 1}, Shape{13, 16, 2}, Shape{0, 7, 3}, Shape{257, 1, 9}};
    for (const RegisteredImpl* r : registry()->impls("size", "ocl")) {
        for (const char* type : {"i32", "i64"}) {
            const Attributes attrs = Attributes::validate(def.attrs, type_attr(type));
            ImplPtr impl;
            for (const Shape& s : shapes) {
                SCOPED_TRACE(r->entry.name + " " + type + " " + s.to_string());
                KernelParams p;
                p.node = "s";
                p.op = &def;
                p.attrs = &attrs;
                p.inputs = {Layout(PartialShape(s), DataType::f32)};
                p.outputs = {Layout(PartialShape{}, parse_data_type(type))};
                p.engine = eng.get();
                ASSERT_EQ(r->entry.check(p), "");
                if (!impl || r->entry.name == "ocl_static") impl = r->entry.create(p);
                EXPECT_EQ(test::execute_impl(eng, *stream, *impl, p).to_int64(),
                          std::vector<int64_t>({static_cast<int64_t>(s.count())}));
            }
        }
    }
}

TEST(SizeOcl, RankEightRunsAndScalarIsLeftToTheHost) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const OpDefinition& def = registry()->op("size").def;
    const Attributes attrs = Attributes::validate(def.attrs, {});
    const auto stream = eng->create_stream();
    for (const RegisteredImpl* r : registry()->impls("size", "ocl")) {
        for (const Shape& s : {Shape{2, 3, 1, 5, 7, 1, 4, 9}}) {
            SCOPED_TRACE(r->entry.name + " " + s.to_string());
            KernelParams p;
            p.node = "s";
            p.op = &def;
            p.attrs = &attrs;
            p.inputs = {Layout(PartialShape(s), DataType::u8)};
            p.outputs = {Layout(PartialShape{}, DataType::i64)};
            p.engine = eng.get();
            const ImplPtr impl = r->entry.create(p);
            EXPECT_EQ(test::execute_impl(eng, *stream, *impl, p).to_int64(),
                      std::vector<int64_t>({static_cast<int64_t>(s.count())}));
        }
        // A rank-0 input is left to the host impl.
        KernelParams scalar;
        scalar.node = "s";
        scalar.op = &def;
        scalar.attrs = &attrs;
        scalar.inputs = {Layout(PartialShape{}, DataType::f32)};
        scalar.outputs = {Layout(PartialShape{}, DataType::i64)};
        scalar.engine = eng.get();
        EXPECT_NE(r->entry.check(scalar), "");
    }
}

}   // namespace
}   // namespace dynrt
