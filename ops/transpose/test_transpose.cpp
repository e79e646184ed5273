// transpose: shape-inference table (default and given perms, rank 0 and 1,
// size-1, empty and dynamic dims, bad perms), hand-computed values, every impl
// against the reference for every dtype and every rank up to 8 (and rank 9,
// which only the host serves), the optimised impls' runs and tiles paths, and
// one instance fed changing shapes.
#include <gtest/gtest.h>

#include <algorithm>

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

// The optimised impls collapse dims, then either copy contiguous runs (the
// input's last non-1 dim stays last) or walk 2-D tiles (it moves). Each setup
// below is one dynamic network fed shapes that land on both sides of the tile
// size (16 to 128 elements by width), size-1 dims that change the collapse,
// and empty tensors; the cpu_opt impls must take every run. The OpenCL
// impls have their own table below.
TEST(TransposeImpls, OptimisedImplsCoverRunsTilesRanksAndWidths) {
    struct Case {
        std::vector<int64_t> perm;
        std::vector<Shape> shapes;
    };
    const std::vector<Case> cases = {
        // rank 1 and 2: a plain copy, then a matrix transpose with tails.
        {{0}, {Shape{1}, Shape{300}, Shape{0}, Shape{7}}},
        {{1, 0},
         {Shape{1, 1}, Shape{17, 33}, Shape{129, 257}, Shape{1, 300}, Shape{300, 1}, Shape{0, 9}, Shape{16, 16},
          Shape{5, 200}}},
        // [1,S,H,D] -> [1,H,S,D]: D-long runs; D = 1 turns it into tiles.
        {{0, 2, 1, 3},
         {Shape{1, 7, 4, 16}, Shape{1, 1, 4, 16}, Shape{2, 33, 3, 5}, Shape{1, 7, 4, 1}, Shape{1, 0, 4, 16},
          Shape{1, 130, 2, 8}}},
        // rank 3 with the last dim moved to the front and to the middle.
        {{2, 0, 1}, {Shape{3, 17, 33}, Shape{1, 129, 5}, Shape{4, 1, 1}, Shape{2, 3, 0}, Shape{5, 40, 131}}},
        {{0, 2, 1}, {Shape{2, 19, 35}, Shape{1, 1, 300}, Shape{3, 130, 1}, Shape{3, 130, 2}}},
        // rank 5 and 6: mixed merges, the last dim kept or moved.
        {{1, 0, 2, 4, 3}, {Shape{2, 3, 4, 5, 6}, Shape{1, 3, 1, 17, 19}, Shape{2, 1, 3, 1, 1}, Shape{2, 3, 0, 5, 6}}},
        {{3, 4, 0, 1, 2}, {Shape{2, 3, 4, 5, 6}, Shape{1, 17, 3, 2, 1}, Shape{3, 1, 1, 1, 33}}},
        {{4, 5, 1, 0, 2, 3}, {Shape{2, 3, 2, 3, 4, 5}, Shape{1, 2, 1, 17, 1, 3}, Shape{2, 2, 2, 2, 2, 0}}},
        {{0, 1, 4, 2, 3, 5}, {Shape{2, 3, 2, 3, 4, 5}, Shape{1, 1, 5, 7, 3, 1}, Shape{1, 2, 3, 4, 5, 6}}},
    };
    for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::u8, DataType::boolean}) {
        for (size_t k = 0; k < cases.size(); ++k) {
            const Case& c = cases[k];
            const size_t rank = c.perm.size();
            SCOPED_TRACE(std::string(to_string(t)) + " case " + std::to_string(k));
            std::vector<std::vector<Shape>> runs;
            for (const Shape& s : c.shapes) runs.push_back({s});
            const std::vector<std::string> ran = test::expect_impls_match_reference(
                {"transpose", perm(c.perm), {Layout(PartialShape::dynamic_of_rank(rank), t)}, {}},
                test::random_runs(t, runs, 7, -100, 100), {}, {}, {"cpu"});
            for (const std::string& name : test::kOptimisedCpuImpls)
                EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
        }
    }
}

// The OpenCL kernels collapse the perm (the static one also drops size-1
// dims), then copy contiguous runs (vectors when the run length is a
// multiple of 4, else elements) or move 32 x 32 tiles through local memory.
// Shapes put the tiled dims on both sides of 32 and its multiples, 1-row and
// 1-column matrices, batches around the tiles, size-1 dims that change the
// static collapse, for every element width; one dynamic network per setup.
TEST(TransposeImpls, OpenClRunsAndTilesCoverTailsRanksAndWidths) {
    struct Case {
        std::vector<int64_t> perm;
        std::vector<Shape> shapes;
    };
    const std::vector<Case> cases = {
        {{1, 0},
         {Shape{33, 65}, Shape{1, 70}, Shape{70, 1}, Shape{32, 32}, Shape{31, 97}, Shape{64, 3}, Shape{33, 65}}},
        {{0, 2, 1}, {Shape{3, 45, 37}, Shape{1, 1, 40}, Shape{2, 40, 1}, Shape{2, 64, 96}, Shape{3, 45, 37}}},
        {{2, 0, 1}, {Shape{3, 40, 5}, Shape{2, 1, 33}, Shape{5, 7, 1}}},
        // Runs: the innermost dim stays, 4-aligned (vectors) or not.
        {{0, 2, 1, 3}, {Shape{2, 33, 3, 64}, Shape{2, 5, 3, 6}, Shape{1, 70, 1, 4}, Shape{3, 2, 17, 1}}},
        {{1, 0, 2}, {Shape{4, 3, 1}, Shape{3, 5, 8}, Shape{40, 2, 3}}},
        // Merges: [a,b,c,d] with perm [2,3,0,1] is a 2-D transpose of [a*b, c*d].
        {{2, 3, 0, 1}, {Shape{3, 11, 7, 5}, Shape{1, 40, 33, 1}}},
        {{0, 3, 4, 1, 2}, {Shape{2, 3, 4, 5, 6}, Shape{1, 33, 2, 3, 17}}},
        {{5, 1, 3, 0, 4, 2}, {Shape{2, 3, 2, 3, 2, 37}, Shape{1, 2, 1, 35, 1, 3}}},
        {{0}, {Shape{1}, Shape{1031}, Shape{4096}}},
    };
    for (DataType t : {DataType::u8, DataType::f16, DataType::f32, DataType::i64}) {
        for (size_t k = 0; k < cases.size(); ++k) {
            const Case& c = cases[k];
            SCOPED_TRACE(std::string(to_string(t)) + " case " + std::to_string(k));
            std::vector<std::vector<Shape>> runs;
            for (const Shape& s : c.shapes) runs.push_back({s});
            test::expect_impls_match_reference(
                {"transpose", perm(c.perm), {Layout(PartialShape::dynamic_of_rank(c.perm.size()), t)}, {}},
                test::random_runs(t, runs, 17, -100, 100));
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
        // Tiles and runs with tails, then revisits.
        const std::vector<std::vector<Shape>> tiles = {{{33, 65}}, {{1, 70}},  {{70, 1}},
                                                       {{64, 32}}, {{33, 65}}, {{1, 70}}};
        test::expect_sequence({"transpose", perm({1, 0}), {Layout({Dimension(), Dimension()}, DataType::u8)}, {}},
                              test::random_runs(DataType::u8, tiles, 300, 0, 200), o);
        std::vector<std::vector<Shape>> heads;
        for (int64_t n : {1, 33, 7, 64, 33, 1}) heads.push_back({Shape{2, n, 3, 64}});
        test::expect_sequence({"transpose", perm({0, 2, 1, 3}), {test::f32({2, Dimension(), 3, 64})}, {}},
                              test::random_runs(DataType::f32, heads, 400), o);
    }
}

}   // namespace
}   // namespace dynrt
