// transpose: shape-inference table (default and given perms, rank 0 and 1,
// size-1, empty and dynamic dims, bad perms), hand-computed values, every impl
// against the reference for every dtype and every rank up to 8 (and rank 9,
// which only the host serves), and one instance fed changing shapes.
#include <gtest/gtest.h>

#include "layout_op_test.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::every_dtype;

Attributes perm(std::vector<int64_t> p) { return test::attrs({{"perm", std::move(p)}}); }

// ---- 1. shape inference ----------------------------------------------------

TEST(TransposeShape, OutputDimIIsInputDimPermI) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const Dimension dyn, b28(2, 8);
    std::vector<test::ShapeRow> rows;
    for (DataType t : every_dtype()) rows.push_back({{Layout({2, 3, 4}, t)}, perm({}), {Layout({4, 3, 2}, t)}});
    rows.push_back({{f({2, 3, 4})}, perm({0, 2, 1}), {f({2, 4, 3})}});
    rows.push_back({{f({2, 3, 4})}, perm({1, 2, 0}), {f({3, 4, 2})}});
    rows.push_back({{f({2, 3, 4})}, perm({0, 1, 2}), {f({2, 3, 4})}});
    rows.push_back({{f(PartialShape{})}, perm({}), {f(PartialShape{})}});   // rank 0
    rows.push_back({{f({5})}, perm({0}), {f({5})}});
    rows.push_back({{f({1, 7, 1})}, perm({}), {f({1, 7, 1})}});
    rows.push_back({{f({0, 3})}, perm({}), {f({3, 0})}});   // empty tensor
    rows.push_back({{f({dyn, b28, 3})}, perm({2, 0, 1}), {f({3, dyn, b28})}});
    rows.push_back({{f({1, 2, 3, 4, 5, 6, 7, 8, 9})}, perm({}), {f({9, 8, 7, 6, 5, 4, 3, 2, 1})}});
    test::expect_shapes("transpose", rows);
}

TEST(TransposeShape, APermThatIsNotAPermutationIsAnErrorNamingNodeFieldAndShape) {
    const auto f = [](PartialShape s) { return test::f32(std::move(s)); };
    const auto words = [](std::vector<std::string> w) {
        return test::with_node_and_field(std::move(w), "transpose", "perm");
    };
    test::expect_shapes("transpose", {{{f({2, 3, 4})}, perm({0, 1}), {}, words({"perm [0,1]", "[2,3,4]", "2 entries"})},
                                      {{f({2, 3, 4})}, perm({0, 1, 2, 3}), {}, words({"4 entries"})},
                                      {{f({2, 3, 4})}, perm({0, 0, 1}), {}, words({"0 appears twice", "[2,3,4]"})},
                                      {{f({2, 3, 4})}, perm({0, 1, 3}), {}, words({"3 is not in [0, 3)"})},
                                      {{f({2, 3, 4})}, perm({-1, 0, 1}), {}, words({"-1 is not in [0, 3)"})},
                                      {{f(PartialShape{})}, perm({0}), {}, words({"[]", "1 entries"})}});
}

// ---- 2. every impl against the reference -------------------------------------

TEST(TransposeReference, TwoAndThreeDimensionalByHand) {
    const HostTensor m = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    HostTensor out = test::run_once(test::single_node_program("transpose", {test::f32({2, 3})}, perm({})), {m});
    ASSERT_EQ(out.shape(), Shape({3, 2}));
    const std::vector<double> want = {1, 4, 2, 5, 3, 6};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out.get_as_double(i), want[i]) << "element " << i;
    // [2,2,3] with values 0..11; perm [2,0,1]: out[k,i,j] = in[i,j,k].
    std::vector<int64_t> v(12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
    const HostTensor c = HostTensor::from_int64(DataType::i64, Shape{2, 2, 3}, v);
    out = test::run_once(test::single_node_program("transpose", {Layout({2, 2, 3}, DataType::i64)}, perm({2, 0, 1})),
                         {c});
    ASSERT_EQ(out.shape(), Shape({3, 2, 2}));
    EXPECT_EQ(out.to_int64(), std::vector<int64_t>({0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
}

// Every rank from 1 to 8 with a tail-sized dim, reversed and rotated perms, on
// each element width (f32, f16, i64, u8: the kernel moves unsigned integers of
// that width); the other dtypes on ranks 1 to 3. An exact comparison (bytes
// move, nothing is computed).
TEST(TransposeImpls, EveryImplMatchesTheReferenceForEveryRankAndDtype) {
    struct Case {
        std::vector<std::vector<Shape>> shapes;
        std::vector<int64_t> perm;
    };
    const std::vector<Case> cases = {
        {{{{1}}, {{17}}, {{0}}}, {0}},
        {{{{1, 1}}, {{3, 17}}, {{13, 16}}, {{257, 3}}, {{0, 5}}}, {}},
        {{{{2, 3, 5}}, {{1, 255, 3}}, {{4, 0, 2}}}, {1, 2, 0}},
        {{{{2, 3, 4, 5}}, {{3, 1, 17, 2}}}, {0, 3, 1, 2}},
        {{{{2, 3, 1, 4, 3}}}, {4, 2, 0, 3, 1}},
        {{{{2, 1, 3, 2, 2, 3}}}, {5, 0, 4, 1, 3, 2}},
        {{{{2, 2, 1, 3, 2, 2, 3}}}, {}},
        {{{{2, 1, 3, 2, 2, 3, 2, 5}}, {{1, 2, 1, 2, 1, 2, 1, 17}}}, {7, 1, 5, 3, 0, 6, 2, 4}},
    };
    for (DataType t : every_dtype()) {
        const bool every_rank = t == DataType::f32 || t == DataType::f16 || t == DataType::i64 || t == DataType::u8;
        for (const Case& c : cases) {
            const size_t rank = c.shapes[0][0].rank();
            if (!every_rank && rank > 3) continue;
            SCOPED_TRACE(std::string(to_string(t)) + " rank " + std::to_string(rank));
            test::expect_impls_match_reference(
                {"transpose", perm(c.perm), {Layout(PartialShape::dynamic_of_rank(rank), t)}, {}},
                test::random_runs(t, c.shapes, 41, -100, 100));
        }
    }
}

// Rank 9 is past what the OpenCL kernels index: only the host impls serve it.
TEST(TransposeImpls, Rank9RunsOnTheHostImpls) {
    const auto ran = test::expect_impls_match_reference(
        {"transpose", perm({8, 0, 7, 1, 6, 2, 5, 3, 4}), {test::f32(PartialShape::dynamic_of_rank(9))}, {}},
        test::random_runs(DataType::f32, {{Shape{2, 1, 2, 3, 1, 2, 2, 1, 3}}}, 5), {}, {"ocl_static", "ocl_dynamic"});
    for (const std::string& name : ran) EXPECT_EQ(name.rfind("cpu", 0), 0u) << name;
}

// ---- 3. one instance, changing shapes -----------------------------------------

TEST(TransposeDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows, rows2;
    for (int64_t n : test::tail_sizes()) {
        rows.push_back({Shape{n, 3, 5}});
        rows2.push_back({Shape{2, n}});
    }
    rows.push_back({Shape{0, 3, 5}});
    rows.push_back({Shape{4, 3, 5}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"transpose", perm({2, 0, 1}), {test::f32({Dimension(), 3, 5})}, {}},
                              test::random_runs(DataType::f32, rows, 100), o);
        test::expect_sequence({"transpose", perm({}), {Layout({2, Dimension()}, DataType::f16)}, {}},
                              test::random_runs(DataType::f16, rows2, 200), o);
    }
}

}   // namespace
}   // namespace dynrt
