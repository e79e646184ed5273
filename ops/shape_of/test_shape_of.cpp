// shape_of: shape-inference table, hand-computed values for both output types,
// and one network instance fed a sequence of changing shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <utility>
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

std::vector<Layout> infer(const Layout& in, const Attributes& raw = {}) {
    return test::infer_shapes("shape_of", {in}, raw);
}

std::vector<int64_t> dims_of(const Shape& s) { return s.dims(); }

// ---- 1. shape inference ----------------------------------------------------

TEST(ShapeOfShapeInfer, OutputIsOneDimOfTheInputRank) {
    const auto out = infer(Layout({Dimension(), 3, Dimension(1, 5)}, DataType::f16));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, PartialShape({3}));
    EXPECT_EQ(out[0].dtype, DataType::i64);   // the default
    EXPECT_EQ(infer(Layout({2, 3}, DataType::f32), type_attr("i32"))[0].dtype, DataType::i32);
    // A scalar has no dims.
    EXPECT_EQ(infer(Layout(PartialShape{}, DataType::f32))[0].shape, PartialShape({0}));
}

Attributes range_attrs(int64_t start, int64_t end) { return test::attrs({{"start", start}, {"end", end}}); }

// ONNX Shape-15: negative start/end count from the end, both clamp to [0, rank].
TEST(ShapeOfShapeInfer, StartAndEndSelectDimsNegativeAndClamped) {
    const Layout in({Dimension(), 3, 4}, DataType::f32);
    const Layout scalar(PartialShape{}, DataType::f32);
    const auto dims = [](int64_t n) { return std::vector<Layout>{Layout(PartialShape{Dimension(n)}, DataType::i64)}; };
    test::expect_shapes("shape_of", {{{in}, test::attrs({{"start", int64_t{1}}}), dims(2)},
                                     {{in}, test::attrs({{"end", int64_t{-1}}}), dims(2)},
                                     {{in}, range_attrs(-10, 10), dims(3)},
                                     {{in}, range_attrs(-1, 3), dims(1)},
                                     {{in}, range_attrs(2, 1), dims(0)},
                                     {{in}, range_attrs(3, 10), dims(0)},
                                     {{scalar}, range_attrs(-1, 1), dims(0)}});
}

TEST(ShapeOfShapeInfer, DeclaresTheShapeOfLikeTrait) {
    const OpDefinition& def = registry()->op("shape_of").def;
    EXPECT_TRUE(def.traits.shape_of_like);
    EXPECT_FALSE(def.traits.data_dependent_output);
    EXPECT_EQ(def.min_inputs, 1u);
    EXPECT_EQ(def.max_inputs, 1u);
}

TEST(ShapeOfShapeInfer, UnknownOutputTypeIsRejected) {
    const OpDefinition& def = registry()->op("shape_of").def;
    EXPECT_THROW(Attributes::validate(def.attrs, type_attr("f32")), Error);
    Program p(registry(), "t");
    p.add_input("x", Layout({2}, DataType::f32));
    p.add_node("s", "shape_of", {"x"}, type_attr("u8"));
    p.add_output("s");
    try {
        p.build();
        ADD_FAILURE() << "expected a dynrt::Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("output_type"), std::string::npos) << e.what();
    }
}

// ---- 2. reference values -----------------------------------------------------

TEST(ShapeOfReference, WritesTheDimsForBothOutputTypes) {
    for (const char* t : {"i64", "i32"}) {
        for (DataType in_type : {DataType::f32, DataType::f16, DataType::i64, DataType::u8}) {
            SCOPED_TRACE(std::string(t) + " of " + to_string(in_type));
            const auto prog = test::single_node_program("shape_of", {Layout({2, 3, 4}, in_type)}, type_attr(t));
            const HostTensor out = test::run_once(prog, {HostTensor(in_type, Shape{2, 3, 4})});
            EXPECT_EQ(out.dtype(), parse_data_type(t));
            EXPECT_EQ(out.shape(), Shape({3}));
            EXPECT_EQ(out.to_int64(), std::vector<int64_t>({2, 3, 4}));
        }
    }
}

TEST(ShapeOfReference, StartAndEndSelectTheDims) {
    struct Case {
        int64_t start, end;
        std::vector<int64_t> want;
    };
    const std::vector<Case> cases = {{1, 100, {3, 4, 5}}, {0, -1, {2, 3, 4}}, {-2, 100, {4, 5}},
                                     {1, -1, {3, 4}},     {-100, 1, {2}},     {3, 1, {}}};
    for (const char* t : {"i64", "i32"}) {
        for (const Case& c : cases) {
            SCOPED_TRACE(std::string(t) + " " + std::to_string(c.start) + ".." + std::to_string(c.end));
            Attributes a = range_attrs(c.start, c.end);
            a.set("output_type", std::string(t));
            const auto prog = test::single_node_program("shape_of", {Layout({2, 3, 4, 5}, DataType::f32)}, a);
            const HostTensor out = test::run_once(prog, {HostTensor(DataType::f32, Shape{2, 3, 4, 5})});
            EXPECT_EQ(out.to_int64(), c.want);
        }
    }
}

TEST(ShapeOfReference, EmptyAndUnitDimsAreReported) {
    const auto prog = test::single_node_program("shape_of", {Layout({Dimension(), 1, 7}, DataType::f32)}, {});
    EXPECT_EQ(test::run_once(prog, {HostTensor(DataType::f32, Shape{0, 1, 7})}).to_int64(),
              std::vector<int64_t>({0, 1, 7}));
}

// ---- 3. one instance, changing shapes -----------------------------------------

class ShapeOfSweep : public ::testing::TestWithParam<bool> {};

// The output layout ([2] i64) never changes while its values do: each new
// input shape must still be written, and an unchanged one skipped.
TEST_P(ShapeOfSweep, OneInstanceReportsEveryNewShape) {
    NetworkOptions opts;
    opts.use_dynamic_impls = GetParam();
    const auto prog = test::single_node_program("shape_of", {Layout({Dimension(), Dimension()}, DataType::f32)}, {});
    InferRequest req(Network::create(prog, test::engine(), opts));

    const std::vector<int64_t> sizes = {1, 3, 13, 16, 17, 255, 257, 16, 16, 1, 257, 257};
    int64_t prev = -1;
    uint64_t seed = 1;
    for (int64_t n : sizes) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const Shape s{n, 300 - n};
        req.set_input("in0", test::random_tensor(DataType::f32, s, seed++));
        req.infer();
        const HostTensor out = req.get_output(0);
        EXPECT_EQ(out.shape(), Shape({2}));
        EXPECT_EQ(out.to_int64(), dims_of(s));
        const Counters& c = req.last_run().totals;
        if (n == prev) {
            EXPECT_GE(c.skip_shape_of, 1u);
            EXPECT_EQ(c.static_builds, 0u);
        } else {
            EXPECT_EQ(c.skip_shape_of, 0u);
        }
        prev = n;
    }
}

INSTANTIATE_TEST_SUITE_P(Impls, ShapeOfSweep, ::testing::Values(true, false), test::dynamic_or_static);

// ---- OpenCL: ocl_dynamic and ocl_static -------------------------------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists. The
// binary cache lives in a temp folder of this test program (removed at exit),
// so a run never depends on the user's cache.

// The flow runs shape_of on the host impl even on an ocl engine (its output
// usually feeds shape inference), so the ocl impls are created and executed
// directly here: input dims against the shapes fed in.
class ShapeOfOcl : public ::testing::TestWithParam<bool> {};

TEST_P(ShapeOfOcl, WritesTheDimsOfEveryShapeForBothOutputTypes) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const bool dynamic = GetParam();
    const OpDefinition& def = registry()->op("shape_of").def;
    const RegisteredImpl* entry = nullptr;
    for (const RegisteredImpl* r : registry()->impls("shape_of", "ocl"))
        if (r->entry.name == (dynamic ? "ocl_dynamic" : "ocl_static")) entry = r;
    ASSERT_NE(entry, nullptr);
    const auto stream = eng->create_stream();
    const std::vector<Shape> shapes = {Shape{1, 3}, Shape{13, 16}, Shape{17, 255}, Shape{257, 1}, Shape{16, 13}};
    for (const char* type : {"i32", "i64"}) {
        const Attributes attrs = Attributes::validate(def.attrs, type_attr(type));
        const DataType out_type = parse_data_type(type);
        ImplPtr impl;   // one instance for every shape when dynamic
        for (const Shape& s : shapes) {
            SCOPED_TRACE(std::string(type) + " " + s.to_string());
            KernelParams p;
            p.node = "s";
            p.op = &def;
            p.attrs = &attrs;
            p.inputs = {Layout(PartialShape(s), DataType::f32)};
            p.outputs = {Layout(PartialShape{Dimension(static_cast<int64_t>(s.rank()))}, out_type)};
            p.engine = eng.get();
            ASSERT_EQ(entry->entry.check(p), "");
            if (!impl || !dynamic) impl = entry->entry.create(p);
            EXPECT_EQ(impl->name(), dynamic ? "shape_of_ocl_dynamic" : "shape_of_ocl_static");
            EXPECT_EQ(test::execute_impl(eng, *stream, *impl, p).to_int64(), s.dims());
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Impls, ShapeOfOcl, ::testing::Values(true, false), test::dynamic_or_static);

TEST(ShapeOfOcl, StartAndEndSelectTheDimsOnEveryOclImpl) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const OpDefinition& def = registry()->op("shape_of").def;
    const auto stream = eng->create_stream();
    const Shape s{2, 3, 1, 5, 7};
    for (const RegisteredImpl* r : registry()->impls("shape_of", "ocl")) {
        for (const auto& range : std::vector<std::pair<int64_t, int64_t>>{{1, -1}, {-2, 99}, {-9, 2}, {4, 4}}) {
            SCOPED_TRACE(r->entry.name + " " + std::to_string(range.first) + ".." + std::to_string(range.second));
            const Attributes attrs = Attributes::validate(def.attrs, range_attrs(range.first, range.second));
            const auto clamp = [](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v < 0 ? v + 5 : v, 0), 5); };
            const int64_t first = clamp(range.first), last = std::max(clamp(range.second), first);
            KernelParams p;
            p.node = "s";
            p.op = &def;
            p.attrs = &attrs;
            p.inputs = {Layout(PartialShape(s), DataType::f32)};
            p.outputs = {Layout(PartialShape{Dimension(last - first)}, DataType::i64)};
            p.engine = eng.get();
            const ImplPtr impl = r->entry.create(p);
            const std::vector<int64_t> want(s.dims().begin() + first, s.dims().begin() + last);
            if (want.empty()) continue;   // nothing to run: the flow skips empty outputs
            EXPECT_EQ(test::execute_impl(eng, *stream, *impl, p).to_int64(), want);
        }
    }
}

TEST(ShapeOfOcl, RankEightAndRankOneInputs) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const OpDefinition& def = registry()->op("shape_of").def;
    const Attributes attrs = Attributes::validate(def.attrs, {});
    const auto stream = eng->create_stream();
    for (const RegisteredImpl* r : registry()->impls("shape_of", "ocl")) {
        for (const Shape& s : {Shape{2, 3, 1, 5, 7, 1, 4, 9}, Shape{300}}) {
            SCOPED_TRACE(r->entry.name + " " + s.to_string());
            KernelParams p;
            p.node = "s";
            p.op = &def;
            p.attrs = &attrs;
            p.inputs = {Layout(PartialShape(s), DataType::u8)};
            p.outputs = {Layout(PartialShape{Dimension(static_cast<int64_t>(s.rank()))}, DataType::i64)};
            p.engine = eng.get();
            const ImplPtr impl = r->entry.create(p);
            EXPECT_EQ(test::execute_impl(eng, *stream, *impl, p).to_int64(), s.dims());
        }
    }
}

}   // namespace
}   // namespace dynrt
