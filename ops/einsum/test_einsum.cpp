// einsum: shape-inference table (explicit and implicit outputs, diagonals,
// ellipsis broadcasting, dynamic dims, every equation error naming the
// equation and the term), hand values on every engine, every impl against
// the reference over a set of equations and dtypes, and one instance fed
// changing shapes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes eq(const std::string& e) { return test::attrs({{"equation", e}}); }
PartialShape dyn_rank(size_t r) { return PartialShape::dynamic_of_rank(r); }

// ---- 1. shape inference ----------------------------------------------------

TEST(EinsumShape, ExplicitImplicitDiagonalAndEllipsisOutputs) {
    const Dimension dyn;
    using test::f32;
    test::expect_shapes("einsum",
                        {
                            {{f32({2, 3}), f32({3, 4})}, eq("ij,jk->ik"), {f32({2, 4})}},
                            {{f32({2, 3}), f32({3, 4})}, eq("ij,jk"), {f32({2, 4})}},
                            {{f32({3, 2})}, eq("ba"), {f32({2, 3})}},
                            {{f32({3, 4})}, eq(" ij -> ji "), {f32({4, 3})}},
                            {{f32({3, 3})}, eq("ii->i"), {f32({3})}},
                            {{f32({3, 3})}, eq("ii"), {f32({})}},
                            {{f32({5}), f32({5})}, eq("i,i"), {f32({})}},
                            {{f32({3, 5, 5})}, eq("...ii ->...i"), {f32({3, 5})}},
                            {{f32({2, 1, 3, 4}), f32({5, 4, 6})}, eq("...ij,...jk->...ik"), {f32({2, 5, 3, 6})}},
                            {{f32({2, 1, 3, 4}), f32({4, 6})}, eq("...ij,jk"), {f32({2, 1, 3, 6})}},
                            {{f32({2, 3})}, eq("...i->i"), {f32({3})}},
                            {{f32({3})}, eq("...i->...i"), {f32({3})}},
                            {{f32({2, 3}), f32({3, 4}), f32({4, 5})}, eq("ij,jk,kl->il"), {f32({2, 5})}},
                            {{f32({0, 3}), f32({3, 4})}, eq("ij,jk->ik"), {f32({0, 4})}},
                            {{f32({dyn, 2, 3}), f32({5, 3, 4})}, eq("bij,bjk->bik"), {f32({5, 2, 4})}},
                            {{f32({dyn, dyn}), f32({dyn, 4})}, eq("ij,jk->ik"), {f32({dyn, 4})}},
                            {{f32({dyn, 3}), f32({1, 3})}, eq("...i,...i->...i"), {f32({dyn, 3})}},
                            {{Layout({2, 2}, DataType::i64)}, eq("ij->"), {Layout({}, DataType::i64)}},
                        });
}

TEST(EinsumShape, EquationErrorsNameTheEquationAndTheTerm) {
    using test::f32;
    test::expect_shapes(
        "einsum",
        {
            {{f32({2, 3, 4})}, eq("ij->i"), {}, {"equation 'ij->i'", "term 'ij' (input 0)", "2 axes", "rank 3"}},
            {{f32({2})}, eq("...ij->i"), {}, {"term '...ij' (input 0)", "besides '...'", "rank 1"}},
            {{f32({2, 3}), f32({4, 5})}, eq("ij,jk->ik"), {}, {"label 'j'", "dim 3", "and 4", "term 'jk' (input 1)"}},
            {{f32({2, 3})}, eq("ii->i"), {}, {"label 'i'", "dim 2", "and 3", "term 'ii' (input 0) axis 1"}},
            {{f32({2, 3}), f32({4, 3})}, eq("...i,...i->...i"), {}, {"dim 0 of '...'", "dim 2", "and 4"}},
            {{f32({2, 3})}, eq("i1->i"), {}, {"equation 'i1->i'", "term 'i1' (input 0)", "'1'"}},
            {{f32({2, 3})}, eq("ij->i_"), {}, {"the output term 'i_'", "'_'"}},
            {{f32({2, 3})}, eq("i..j->i"), {}, {"term 'i..j'", "'.'"}},
            {{f32({2, 3})}, eq("......->"), {}, {"'.'", "at most one '...'"}},
            {{f32({2, 3})}, eq("ij->k"), {}, {"output term 'k'", "'k'", "no input term"}},
            {{f32({2, 3})}, eq("ij->ii"), {}, {"'i' twice"}},
            {{f32({2, 3})}, eq("ij,jk->ik"), {}, {"2 input terms for 1 inputs"}},
            {{f32({2})}, eq("i->i->i"), {}, {"more than one '->'"}},
            {{f32({2}), Layout({2}, DataType::i32)}, eq("i,i"), {}, {"input 1", "one type", "i32[2]"}},
            {{Layout({2}, DataType::u8)}, eq("i"), {}, {"f32, f16, f64, i32 or i64"}},
        });
}

// ---- hand-computed values -----------------------------------------------------

std::vector<std::string> engines() {
    std::vector<std::string> e{"cpu"};
    if (test::ocl_engine()) e.emplace_back("ocl");
    return e;
}

HostTensor run(const std::string& equation, const std::vector<HostTensor>& in, const std::string& engine) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("einsum", layouts, eq(equation)), in, NetworkOptions{}, engine);
}

TEST(EinsumValues, MatmulTraceDiagonalOuterAndThreeInputsOnEveryEngine) {
    const HostTensor a = HostTensor::from_floats(Shape{2, 2}, {1, 2, 3, 4});
    const HostTensor b = HostTensor::from_floats(Shape{2, 2}, {5, 6, 7, 8});
    const HostTensor v = HostTensor::from_floats(Shape{3}, {1, 2, 3});
    const HostTensor w = HostTensor::from_floats(Shape{2}, {10, 20});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        test::expect_close(run("ij,jk->ik", {a, b}, e), HostTensor::from_floats(Shape{2, 2}, {19, 22, 43, 50}), 0, 0);
        test::expect_close(run("ij,jk", {a, b}, e), HostTensor::from_floats(Shape{2, 2}, {19, 22, 43, 50}), 0, 0);
        test::expect_close(run("ij,kj->ik", {a, b}, e), HostTensor::from_floats(Shape{2, 2}, {17, 23, 39, 53}), 0, 0);
        test::expect_close(run("ii", {a}, e), HostTensor::from_floats(Shape{}, {5}), 0, 0);
        test::expect_close(run("ii->i", {a}, e), HostTensor::from_floats(Shape{2}, {1, 4}), 0, 0);
        test::expect_close(run("ij->j", {a}, e), HostTensor::from_floats(Shape{2}, {4, 6}), 0, 0);
        test::expect_close(run("ba", {a}, e), HostTensor::from_floats(Shape{2, 2}, {1, 3, 2, 4}), 0, 0);
        test::expect_close(run("i,j->ij", {v, w}, e), HostTensor::from_floats(Shape{3, 2}, {10, 20, 20, 40, 30, 60}), 0,
                           0);
        test::expect_close(run("i,i,i->", {v, v, v}, e), HostTensor::from_floats(Shape{}, {36}), 0, 0);
        // ...ii->...i over [2,2,2]: the diagonals of a and b.
        HostTensor ab(DataType::f32, Shape{2, 2, 2});
        for (size_t i = 0; i < 4; ++i)
            ab.set_from_double(i, a.get_as_double(i)), ab.set_from_double(4 + i, b.get_as_double(i));
        test::expect_close(run("...ii->...i", {ab}, e), HostTensor::from_floats(Shape{2, 2}, {1, 4, 5, 8}), 0, 0);
        // The ellipsis broadcasts: [2,1] * [3] over "...,..." is the outer product, summed without "..." in the output.
        test::expect_close(run("...,...->...", {HostTensor::from_floats(Shape{2, 1}, {1, 2}), v}, e),
                           HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 2, 4, 6}), 0, 0);
        test::expect_close(run("...,...->", {HostTensor::from_floats(Shape{2, 1}, {1, 2}), v}, e),
                           HostTensor::from_floats(Shape{}, {18}), 0, 0);
    }
}

TEST(EinsumValues, IntegersAreExactAndAnEmptySumIsZeroOnEveryEngine) {
    const HostTensor a = HostTensor::from_int64(DataType::i64, Shape{2, 2}, {1LL << 40, 3, -2, 5});
    const HostTensor b = HostTensor::from_int64(DataType::i64, Shape{2, 1}, {7, -1});
    for (const std::string& e : engines()) {
        SCOPED_TRACE(e);
        EXPECT_EQ(run("ij,jk->ik", {a, b}, e).to_int64(), (std::vector<int64_t>{(7LL << 40) - 3, -19}));
        test::expect_close(
            run("ij,jk->ik", {HostTensor(DataType::f32, Shape{2, 0}), HostTensor(DataType::f32, Shape{0, 3})}, e),
            HostTensor(DataType::f32, Shape{2, 3}), 0, 0);
    }
}

// ---- 2. every impl against the reference ---------------------------------------

struct Case {
    std::string equation;
    std::vector<size_t> ranks;
    std::vector<std::vector<Shape>> shapes;   // one row per run
};

const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"bij,bjk->bik",
         {3, 3},
         {{{1, 1, 1}, {1, 1, 1}},
          {{3, 2, 13}, {3, 13, 5}},
          {{2, 17, 3}, {2, 3, 16}},
          {{0, 2, 3}, {0, 3, 4}},
          {{2, 3, 0}, {2, 0, 4}}}},
        {"...ii->...i", {3}, {{{3, 5, 5}}, {{1, 17, 17}}, {{2, 0, 0}}}},
        {"...ij,...jk->...ik", {4, 3}, {{{2, 1, 3, 4}, {5, 4, 6}}, {{1, 3, 2, 2}, {3, 2, 1}}}},
        {"ij->ji", {2}, {{{3, 4}}, {{1, 257}}, {{16, 1}}}},
        {"ij->i", {2}, {{{3, 4}}, {{13, 255}}}},
        {"i,i", {1, 1}, {{{5}, {5}}, {{257}, {257}}, {{0}, {0}}}},
        {"ij,jk,kl->il", {2, 2, 2}, {{{2, 3}, {3, 4}, {4, 5}}, {{1, 13}, {13, 1}, {1, 3}}}},
        {"aib,bi->ba", {3, 2}, {{{2, 3, 4}, {4, 3}}, {{5, 1, 2}, {2, 1}}}},
        {"...i->i", {3}, {{{2, 3, 4}}, {{1, 1, 7}}}},
    };
    return c;
}

TEST(EinsumImpls, EveryImplMatchesTheReferenceOverEquationsAndDtypes) {
    for (const Case& c : cases()) {
        for (DataType t : {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64}) {
            // Every dtype on batched matmul, its tails and an empty sum: a static OpenCL build per
            // shape, so the matrix is kept small.
            if (t != DataType::f32 && c.equation != "bij,bjk->bik") continue;
            SCOPED_TRACE(c.equation + " " + to_string(t));
            std::vector<Layout> in;
            for (size_t r : c.ranks) in.emplace_back(dyn_rank(r), t);
            const std::vector<std::vector<Shape>> shapes =
                t == DataType::f32 ? c.shapes : std::vector<std::vector<Shape>>{c.shapes[1], c.shapes[2], c.shapes[4]};
            const bool integer = t == DataType::i32 || t == DataType::i64;
            test::expect_impls_match_reference({"einsum", eq(c.equation), in, {}},
                                               test::random_runs(t, shapes, 3, integer ? -8 : -1, integer ? 8 : 1));
        }
    }
}

TEST(EinsumImpls, RankNineRunsOnTheHostOnly) {
    const std::vector<std::string> ran = test::expect_impls_match_reference(
        {"einsum", eq("abcdefghi->iha"), {test::f32(dyn_rank(9))}, {}},
        test::random_runs(DataType::f32, {{{2, 1, 1, 3, 1, 2, 1, 3, 2}}}), {}, {"ocl_static", "ocl_dynamic"});
    EXPECT_EQ(ran, (std::vector<std::string>{"cpu_ref_dynamic", "cpu_ref_static"}));
}

// ---- 3. one instance, changing shapes --------------------------------------------

TEST(EinsumDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n % 4 + 1, 2, n}, Shape{n % 4 + 1, n, 3}});
    shapes.push_back({Shape{0, 2, 5}, Shape{0, 5, 3}});
    shapes.push_back({Shape{2, 2, 0}, Shape{2, 0, 3}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"einsum",
                               eq("bij,bjk->bik"),
                               {test::f32({Dimension(), 2, Dimension()}), test::f32({Dimension(), Dimension(), 3})},
                               {}},
                              test::random_runs(DataType::f32, shapes), o);
    }
}

}   // namespace
}   // namespace dynrt
