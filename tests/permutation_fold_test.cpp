// Permutation folding at program build (ProgramOptions::fold_permutations): a
// transpose of the last two dims that feeds only a gemm's a or b goes, and the
// gemm reads the transpose's input with its transpose flag toggled. The folded
// program is compared with the same graph built without folding and with the
// host reference impls, on cpu and ocl, for static and changing input shapes
// on one network instance; and the fold is refused where it would change what
// the graph computes (a second user of the transpose, the transpose an output,
// another permutation, the gemm's bias input).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/program.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

// a [..., M, K] and b [..., N, K] (b_transposed: b [..., K, N] read through a
// transpose flag set on the gemm); `transposed` is the input (0: a, 1: b)
// that goes through a transpose node: a is then given as [..., K, M].
struct Graph {
    size_t rank = 3;
    size_t transposed = 1;
    bool b_flag = false;       // the gemm's own transpose_b
    bool constant_b = false;   // b is a constant (the weights path)
    bool dynamic = false;      // every dim of the inputs but K dynamic
};

constexpr int64_t kK = 5, kBatch = 2, kM = 3, kN = 4;

std::vector<int64_t> swap_last(std::vector<int64_t> d) {
    std::swap(d[d.size() - 1], d[d.size() - 2]);
    return d;
}

// The dims of input `which` (0: a, 1: b) as the graph takes it.
std::vector<int64_t> input_dims(const Graph& g, size_t which, int64_t batch, int64_t rows) {
    std::vector<int64_t> d(g.rank - 2, batch);
    d.push_back(rows);
    d.push_back(kK);   // [..., rows, K]: a as gemm reads it, b as transpose_b reads it
    // b reaches the gemm transposed once by the gemm's flag, once by the node.
    const int flips = (which == g.transposed) + (which == 1 && !g.b_flag);
    return flips % 2 ? swap_last(d) : d;
}

Layout input_layout(const Graph& g, size_t which) {
    const std::vector<int64_t> d = input_dims(g, which, kBatch, which == 0 ? kM : kN);
    std::vector<Dimension> dims;
    for (const int64_t v : d) dims.push_back(g.dynamic && v != kK ? Dimension() : Dimension(v));
    return Layout(PartialShape(dims), DataType::f32);
}

std::vector<int64_t> last_two_swapped(size_t rank) {
    std::vector<int64_t> p;
    for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(i));
    std::swap(p[rank - 1], p[rank - 2]);
    return p;
}

Attributes perm_attrs(std::vector<int64_t> perm) {
    Attributes a;
    a.set("perm", std::move(perm));
    return a;
}

void add_graph(Program& p, const Graph& g) {
    p.add_input("a", input_layout(g, 0));
    if (g.constant_b) {
        std::vector<int64_t> d = input_dims(g, 1, kBatch, kN);
        p.add_constant("b", test::random_tensor(DataType::f32, Shape(d), 7, -1, 1));
    } else {
        p.add_input("b", input_layout(g, 1));
    }
    const std::string t = g.transposed == 0 ? "a" : "b";
    p.add_node("t", "transpose", {t}, perm_attrs(last_two_swapped(g.rank)));
    Attributes mm;
    mm.set("transpose_b", g.b_flag);
    mm.set("alpha", 0.5);
    p.add_node("mm", "gemm", {g.transposed == 0 ? "t" : "a", g.transposed == 1 ? "t" : "b"}, mm);
    p.add_output("mm");
}

std::shared_ptr<Program> build(const Graph& g, bool fold) {
    ProgramOptions o;
    o.fold_permutations = fold;
    auto p = std::make_shared<Program>(test::registry(), "transpose_gemm", o);
    add_graph(*p, g);
    p->build();
    return p;
}

NetworkOptions reference_only() {
    NetworkOptions o;
    o.host_reference_only = true;
    return o;
}

// Runs the folded program on `engine`, and the unfolded one there and on the
// host reference impls, over (batch, M, N) triples, one request each.
void expect_folded_matches(const Graph& g, const std::string& engine, const std::vector<std::vector<int64_t>>& sizes) {
    const EnginePtr eng = engine == "ocl" ? test::ocl_engine() : test::engine("cpu");
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto folded = build(g, true), unfolded = build(g, false);
    ASSERT_EQ(folded->folded().size(), 1u);
    EXPECT_EQ(folded->folded()[0].node, "t");
    EXPECT_EQ(folded->folded()[0].into, "mm");
    EXPECT_THROW(folded->node_index("t"), Error);
    const Node& mm = folded->nodes()[folded->node_index("mm")];
    EXPECT_EQ(mm.attrs.get_bool(g.transposed == 0 ? "transpose_a" : "transpose_b"),
              g.transposed == 0 ? true : !g.b_flag);
    EXPECT_TRUE(unfolded->folded().empty());
    InferRequest f(Network::create(folded, eng)), u(Network::create(unfolded, eng)),
        r(Network::create(unfolded, test::engine("cpu"), reference_only()));
    uint64_t seed = 20;
    for (const std::vector<int64_t>& s : sizes) {
        SCOPED_TRACE(engine + " batch " + std::to_string(s[0]) + " M " + std::to_string(s[1]) + " N " +
                     std::to_string(s[2]));
        const HostTensor a = test::random_tensor(DataType::f32, Shape(input_dims(g, 0, s[0], s[1])), seed++, -1, 1);
        const HostTensor b = test::random_tensor(DataType::f32, Shape(input_dims(g, 1, s[0], s[2])), seed++, -1, 1);
        for (InferRequest* req : {&f, &u, &r}) {
            req->set_input("a", a);
            if (!g.constant_b) req->set_input("b", b);
            req->infer();
        }
        EXPECT_EQ(f.last_run().folded_nodes, 1u);
        for (const NodeStats& n : f.last_run().nodes) EXPECT_NE(n.node, "t");
        const HostTensor want = r.get_output(0);
        test::expect_close(f.get_output(0), want, 1e-4, 1e-4);
        test::expect_close(u.get_output(0), want, 1e-4, 1e-4);
    }
}

// ---- folded, unfolded and the reference agree ----------------------------------

TEST(PermutationFold, TransposedAOrB_MatchesUnfoldedAndReference) {
    for (const std::string engine : {"cpu", "ocl"})
        for (const size_t transposed : {0, 1})
            for (const bool b_flag : {false, true}) {
                Graph g;
                g.transposed = transposed;
                g.b_flag = b_flag;
                SCOPED_TRACE("input " + std::to_string(transposed) + (b_flag ? " transpose_b" : ""));
                expect_folded_matches(g, engine, {{kBatch, kM, kN}});
            }
}

// Every rank on cpu; on ocl (a kernel build per static shape) rank 3.
TEST(PermutationFold, ChangingShapesOnOneInstance_MatchUnfoldedAndReference) {
    for (const std::string engine : {"cpu", "ocl"})
        for (const size_t rank : {2, 3, 4}) {
            if (engine == "ocl" && rank != 3) continue;
            Graph g;
            g.rank = rank;
            g.dynamic = true;
            g.transposed = rank == 2 ? 0 : 1;
            SCOPED_TRACE("rank " + std::to_string(rank));
            expect_folded_matches(g, engine, {{1, 1, 7}, {3, 2, 33}, {1, 1, 8}, {2, 5, 1}, {1, 1, 7}});
        }
}

TEST(PermutationFold, TransposedConstantWeights_MatchUnfoldedAndReference) {
    Graph g;
    g.constant_b = true;
    g.dynamic = true;
    for (const std::string engine : {"cpu", "ocl"})
        expect_folded_matches(g, engine, {{kBatch, 3, kN}, {kBatch, 6, kN}});
}

// ---- where the fold must not happen ----------------------------------------------

std::shared_ptr<Program> build_unchecked(const std::function<void(Program&)>& add, bool fold = true) {
    ProgramOptions o;
    o.fold_permutations = fold;
    auto p = std::make_shared<Program>(test::registry(), "no_fold", o);
    add(*p);
    p->build();
    return p;
}

TEST(PermutationFold, TransposeWithASecondUser_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        add_graph(q, {});
        Attributes relu;
        relu.set("func", std::string("relu"));
        q.add_node("other", "activation", {"t"}, relu);
        q.add_output("other");
    });
    EXPECT_TRUE(p->folded().empty());
    EXPECT_NO_THROW(p->node_index("t"));
}

TEST(PermutationFold, TransposeAsANetworkOutput_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        add_graph(q, {});
        q.add_output("t");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(PermutationFold, PermutationOtherThanTheLastTwoDims_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("a", Layout(PartialShape{kM, 2, kK}, DataType::f32));
        q.add_input("b", Layout(PartialShape{2, kK, kN}, DataType::f32));
        q.add_node("t", "transpose", {"a"}, perm_attrs({1, 0, 2}));   // [2, M, K]: the batch dim moves
        q.add_node("mm", "gemm", {"t", "b"});
        q.add_output("mm");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(PermutationFold, TransposeIntoTheBiasInput_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("a", Layout(PartialShape{kM, kK}, DataType::f32));
        q.add_input("b", Layout(PartialShape{kK, kN}, DataType::f32));
        q.add_input("c", Layout(PartialShape{kN, kM}, DataType::f32));
        q.add_node("t", "transpose", {"c"}, perm_attrs({1, 0}));
        q.add_node("mm", "gemm", {"a", "b", "t"});
        q.add_output("mm");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(PermutationFold, TheSameTransposeAsBothOperands_IsNotFolded) {
    const auto p = build_unchecked([](Program& q) {
        q.add_input("x", Layout(PartialShape{kK, kK}, DataType::f32));
        q.add_node("t", "transpose", {"x"}, perm_attrs({1, 0}));
        q.add_node("mm", "gemm", {"t", "t"});
        q.add_output("mm");
    });
    EXPECT_TRUE(p->folded().empty());
}

TEST(PermutationFold, OptionOff_KeepsEveryNode) {
    const auto p = build_unchecked([](Program& q) { add_graph(q, {}); }, false);
    EXPECT_TRUE(p->folded().empty());
    EXPECT_NO_THROW(p->node_index("t"));
}

}   // namespace
}   // namespace dynrt
