// arg_reduce: shape-inference table (keepdims, negative axes, dynamic dims,
// errors), every impl against the reference over a mode x dtype x shape
// matrix (ties, size-1 axes, tails), one instance fed changing shapes, and
// hand-computed indices (ties first and last, NaN, i64 past 2^53).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes arg_attrs(const std::string& mode, int64_t axis, bool keepdims = true, bool last = false) {
    return test::attrs({{"mode", mode}, {"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
}

Layout i64_of(PartialShape s) { return Layout(std::move(s), DataType::i64); }

std::vector<int64_t> run(const HostTensor& in, const Attributes& a) {
    const auto prog = test::single_node_program("arg_reduce", {in.layout()}, a);
    return test::run_once(prog, {in}).to_int64();
}

// ---- 1. shape inference ----------------------------------------------------

TEST(ArgReduceShape, TheAxisBecomesOneOrGoesAndTheOutputIsI64) {
    const Dimension dyn;
    test::expect_shapes("arg_reduce",
                        {
                            {{test::f32({2, 3, 4})}, arg_attrs("max", 1), {i64_of({2, 1, 4})}},
                            {{test::f32({2, 3, 4})}, arg_attrs("min", -1, false), {i64_of({2, 3})}},
                            {{test::f32({5})}, arg_attrs("max", 0, false), {i64_of({})}},
                            {{test::f32({0, 3})}, arg_attrs("max", 1), {i64_of({0, 1})}},
                            {{test::f32({dyn, Dimension(1, 8)})}, arg_attrs("max", 0), {i64_of({1, Dimension(1, 8)})}},
                            {{test::f32({dyn, 3})}, arg_attrs("min", 0, false, true), {i64_of({3})}},
                            {{Layout({4, 2}, DataType::u8)}, arg_attrs("max", 1), {i64_of({4, 1})}},
                            {{Layout({4, 2}, DataType::f64)}, arg_attrs("min", 0), {i64_of({1, 2})}},
                        });
}

TEST(ArgReduceShape, BadAxesAndInputsAreErrorsNamingNodeAndField) {
    test::expect_shapes("arg_reduce",
                        {
                            {{test::f32({2, 3})}, arg_attrs("max", 2), {}, {"axis", "2"}},
                            {{test::f32({2, 3})}, arg_attrs("max", -3), {}, {"axis"}},
                            {{test::f32({})}, arg_attrs("max", 0), {}, {"node 'node'", "inputs", "scalar"}},
                            {{test::f32({3, 0})}, arg_attrs("min", 1), {}, {"axis", "empty", "[3,0]"}},
                            {{Layout({3}, DataType::boolean)}, arg_attrs("max", 0), {}, {"inputs", "does not take"}},
                        });
}

// ---- 2. every impl against the reference -------------------------------------

// Values drawn from a few integers make ties common, so the tie rule is
// checked on every impl; f32 also draws continuous values.
TEST(ArgReduceImpls, EveryImplMatchesTheReferenceInEveryModeAndDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{2, 17, 3}}, {{3, 1, 5}}, {{1, 257, 2}}, {{0, 4, 3}}};
    for (const char* mode : {"max", "min"}) {
        for (bool last : {false, true}) {
            SCOPED_TRACE(std::string(mode) + (last ? " last" : " first"));
            const test::OpSetup s{
                "arg_reduce", arg_attrs(mode, 1, !last, last), {test::f32(PartialShape::dynamic_of_rank(3))}, {}};
            test::expect_impls_match_reference(s, test::random_runs(DataType::f32, shapes, 5));
            test::expect_impls_match_reference(s, test::random_runs(DataType::f32, shapes, 6, 0, 3));
        }
    }
    const std::vector<std::vector<Shape>> few = {{{2, 17, 3}}, {{3, 1, 5}}};
    for (DataType t : {DataType::f16, DataType::f64, DataType::i32, DataType::i64, DataType::u8, DataType::i8}) {
        SCOPED_TRACE(to_string(t));
        const test::OpSetup s{
            "arg_reduce", arg_attrs("min", -1, false, true), {Layout(PartialShape::dynamic_of_rank(3), t)}, {}};
        test::expect_impls_match_reference(s, test::random_runs(t, few, 7, 0, 4));
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(ArgReduceDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> along, across;
    for (int64_t n : test::tail_sizes()) {
        along.push_back({Shape{3, n}});
        across.push_back({Shape{n, 4}});
    }
    across.push_back({Shape{0, 4}});
    across.push_back({Shape{2, 4}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + std::string(" ") + test::mode_name(o.mode));
        test::expect_sequence({"arg_reduce", arg_attrs("max", -1), {test::f32({3, Dimension()})}, {}},
                              test::random_runs(DataType::f32, along, 100, 0, 5), o);
        test::expect_sequence({"arg_reduce", arg_attrs("min", 1, false, true), {test::f32({Dimension(), 4})}, {}},
                              test::random_runs(DataType::f32, across, 200, 0, 5), o);
    }
}

// ---- the reference's values ----------------------------------------------------

TEST(ArgReduceReference, TiesGiveTheFirstOrTheLastIndex) {
    // [[2, 7, 7], [5, 1, 5]]
    const HostTensor in = HostTensor::from_floats(Shape{2, 3}, {2, 7, 7, 5, 1, 5});
    EXPECT_EQ(run(in, arg_attrs("max", 1)), (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(run(in, arg_attrs("max", 1, true, true)), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(run(in, arg_attrs("min", 1)), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(run(in, arg_attrs("min", 0, false)), (std::vector<int64_t>{0, 1, 1}));
    EXPECT_EQ(run(in, arg_attrs("max", -2, false, true)), (std::vector<int64_t>{1, 0, 0}));
}

TEST(ArgReduceReference, NanBeatsEveryNumber) {
    const auto nan = std::numeric_limits<float>::quiet_NaN();
    const HostTensor in = HostTensor::from_floats(Shape{5}, {1, nan, 9, nan, -3});
    EXPECT_EQ(run(in, arg_attrs("max", 0)), (std::vector<int64_t>{1}));
    EXPECT_EQ(run(in, arg_attrs("min", 0)), (std::vector<int64_t>{1}));
    EXPECT_EQ(run(in, arg_attrs("max", 0, true, true)), (std::vector<int64_t>{3}));
}

TEST(ArgReduceReference, I64ComparesExactlyBeyondDoublePrecision) {
    // 2^53 and 2^53 + 1 are one double; as int64 the second is larger.
    const int64_t big = int64_t{1} << 53;
    const HostTensor in = HostTensor::from_int64(DataType::i64, Shape{3}, {big, big + 1, 0});
    EXPECT_EQ(run(in, arg_attrs("max", 0)), (std::vector<int64_t>{1}));
    EXPECT_EQ(run(in, arg_attrs("min", 0)), (std::vector<int64_t>{2}));
}

}   // namespace
}   // namespace dynrt
