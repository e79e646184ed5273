// group_norm: shape-inference table, every engine against a group
// normalisation computed here from its definition (no ONNX node data has
// GroupNormalization cases), every impl against the reference over a dtype x
// shape matrix, one instance fed changing shapes, and hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

using test::attrs;
using test::f32;

Attributes norm_attrs(int64_t groups, const std::string& affine = "channel", double eps = 1e-5) {
    return attrs({{"num_groups", groups}, {"affine", affine}, {"epsilon", eps}});
}

// ---- 1. shape inference ------------------------------------------------------

TEST(GroupNormShape, OutputIsTheInputAndBadInputsAreRejected) {
    const Dimension dyn;
    const Layout x({2, 6, 4, 5}, DataType::f32), h({dyn, dyn, 7}, DataType::f16), h3({3}, DataType::f16);
    test::expect_shapes("group_norm",
                        {
                            {{x, f32({6}), f32({6})}, norm_attrs(3), {x}},
                            {{x, f32({3}), f32({3})}, norm_attrs(3, "group"), {x}},
                            {{h, h3, h3}, norm_attrs(3, "group"), {h}},
                            {{f32({2, dyn}), f32({dyn}), f32({4})}, norm_attrs(2), {f32({2, dyn})}},
                            {{f32({0, 4, 3}), f32({4}), f32({4})}, norm_attrs(4), {f32({0, 4, 3})}},
                            {{f32({2, 5, 3}), f32({5}), f32({5})},
                             norm_attrs(2),
                             {},
                             {"node 'node'", "num_groups", "5 channels", "not divisible"}},
                            {{x, f32({6}), f32({6})}, norm_attrs(0), {}, {"num_groups", ">= 1"}},
                            {{x, f32({3}), f32({6})}, norm_attrs(3), {}, {"scale [3]", "channel count"}},
                            {{x, f32({6}), f32({6})}, norm_attrs(3, "group"), {}, {"scale [6]", "num_groups 3"}},
                            {{x, f32({6}), f32({1, 6})}, norm_attrs(3), {}, {"bias [1,6]", "1-D"}},
                            {{x, Layout({6}, DataType::f16), f32({6})}, norm_attrs(3), {}, {"scale", "type of x"}},
                            {{f32({6}), f32({6}), f32({6})}, norm_attrs(3), {}, {"rank >= 2"}},
                            {{Layout({2, 4}, DataType::i64), Layout({4}, DataType::i64), Layout({4}, DataType::i64)},
                             norm_attrs(2),
                             {},
                             {"floating"}},
                        });
}

// ---- group normalisation from its definition ---------------------------------------

// y for x [N, C, S...] computed block by block: gather each (n, group)'s
// elements channel by channel, take their mean and biased variance, apply
// the channel's (or group's) scale and bias.
std::vector<double> by_definition(const HostTensor& x, const HostTensor& scale, const HostTensor& bias, int64_t groups,
                                  bool per_group, double eps) {
    const Shape& s = x.shape();
    const auto n = static_cast<size_t>(s[0]), c = static_cast<size_t>(s[1]), g = static_cast<size_t>(groups);
    const size_t spatial = s.count() / std::max<size_t>(n * c, 1), cpg = c / g;
    std::vector<double> y(s.count());
    for (size_t b = 0; b < n; ++b)
        for (size_t k = 0; k < g; ++k) {
            std::vector<size_t> at;
            for (size_t ch = k * cpg; ch < (k + 1) * cpg; ++ch)
                for (size_t i = 0; i < spatial; ++i) at.push_back((b * c + ch) * spatial + i);
            double mean = 0, var = 0;
            for (size_t i : at) mean += x.get_as_double(i) / static_cast<double>(at.size());
            for (size_t i : at) var += std::pow(x.get_as_double(i) - mean, 2) / static_cast<double>(at.size());
            for (size_t i : at) {
                const size_t a = per_group ? k : i / spatial % c;
                y[i] =
                    (x.get_as_double(i) - mean) / std::sqrt(var + eps) * scale.get_as_double(a) + bias.get_as_double(a);
            }
        }
    return y;
}

TEST(GroupNormValues, EveryEngineMatchesTheDefinition) {
    for (const std::string engine : {"cpu", "ocl"}) {
        if (engine == "ocl" && !test::ocl_engine()) continue;
        for (bool per_group : {false, true}) {
            SCOPED_TRACE(engine + (per_group ? " per group" : " per channel"));
            const HostTensor x = test::random_tensor(DataType::f32, Shape{2, 6, 3, 5}, 3, -5, 5);
            const Shape affine{per_group ? 3 : 6};
            const HostTensor w = test::random_tensor(DataType::f32, affine, 4, 0.5, 2);
            const HostTensor b = test::random_tensor(DataType::f32, affine, 5, -1, 1);
            const HostTensor y =
                test::run_once(test::single_node_program("group_norm", {x.layout(), w.layout(), b.layout()},
                                                         norm_attrs(3, per_group ? "group" : "channel", 1e-3)),
                               {x, w, b}, NetworkOptions{}, engine);
            const std::vector<double> want = by_definition(x, w, b, 3, per_group, 1e-3);
            ASSERT_EQ(y.shape(), x.shape());
            for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.get_as_double(i), want[i], 1e-4) << i;
        }
    }
}

// Two groups of one channel [1, 3] and [5, 5]: mean 2 and variance 1, then
// variance 0 (y is the bias up to epsilon).
TEST(GroupNormValues, BlocksMatchHandComputedValues) {
    const HostTensor x = HostTensor::from_floats(Shape{1, 2, 2}, {1, 3, 5, 5});
    const HostTensor w = HostTensor::from_floats(Shape{2}, {2, 7});
    const HostTensor b = HostTensor::from_floats(Shape{2}, {0.5f, -1});
    const test::OpSetup s{"group_norm", norm_attrs(2, "group", 0.0), {x.layout(), w.layout(), b.layout()}, {}};
    const std::vector<HostTensor> y = test::reference_outputs(s, {x, w, b});
    EXPECT_NEAR(y[0].get_as_double(0), -2 + 0.5, 1e-6);
    EXPECT_NEAR(y[0].get_as_double(1), 2 + 0.5, 1e-6);
    // One group over both channels: mean 3.5, variance (6.25 + 0.25 + 2.25 * 2) / 4 = 2.75.
    const test::OpSetup one{"group_norm", norm_attrs(1, "channel", 0.0), {x.layout(), w.layout(), b.layout()}, {}};
    const std::vector<HostTensor> z = test::reference_outputs(one, {x, w, b});
    EXPECT_NEAR(z[0].get_as_double(0), (1 - 3.5) / std::sqrt(2.75) * 2 + 0.5, 1e-6);
    EXPECT_NEAR(z[0].get_as_double(3), (5 - 3.5) / std::sqrt(2.75) * 7 - 1, 1e-6);
}

// ---- 2. every impl against the reference -----------------------------------------

test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

TEST(GroupNormImpls, EveryImplMatchesTheReference) {
    for (DataType t : {DataType::f32, DataType::f16})
        for (const std::string affine : {"channel", "group"}) {
            SCOPED_TRACE(std::string(to_string(t)) + " " + affine);
            const bool g = affine == "group";
            const Layout c({Dimension()}, t);
            test::expect_impls_match_reference(
                {"group_norm", norm_attrs(3, affine), {Layout(PartialShape::dynamic_of_rank(4), t), c, c}, {}},
                test::random_runs(t,
                                  {{{1, 3, 1, 1}, {3}, {3}},
                                   {{2, 6, 4, 5}, {g ? 3 : 6}, {g ? 3 : 6}},
                                   {{1, 9, 17, 15}, {g ? 3 : 9}, {g ? 3 : 9}},
                                   {{2, 3, 1, 257}, {3}, {3}},
                                   {{0, 6, 2, 2}, {g ? 3 : 6}, {g ? 3 : 6}}},
                                  1, -4, 4),
                tol(t), t == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
        }
    const Layout c({Dimension()}, DataType::f32);
    test::expect_impls_match_reference(
        {"group_norm", norm_attrs(2), {f32(PartialShape::dynamic_of_rank(2)), c, c}, {}},
        test::random_runs(DataType::f32, {{{2, 4}, {4}, {4}}, {{5, 2}, {2}, {2}}}, 5, -4, 4), tol(DataType::f32));
}

// The optimised impls' loops: blocks and channels around their 8-lane sums,
// blocks past one thread's chunk, one group and one group per channel,
// spatial extent 1 and 0, values far from zero (a mean of 100 against a
// spread of 2), both affine forms; they must take every run.
TEST(GroupNormImpls, OptimisedImplsTakeTailsLongBlocksAndLargeMeans) {
    struct Case {
        int64_t groups;
        std::vector<Shape> xs;
    };
    const std::vector<Case> cases = {
        {1, {Shape{1, 3, 7}, Shape{2, 3, 1}, Shape{1, 3, 40001}, Shape{2, 3, 0}}},
        {3, {Shape{2, 6, 9}, Shape{1, 3, 17}, Shape{1, 9, 8}, Shape{3, 3, 15}}},
        {4, {Shape{1, 4, 5}, Shape{2, 8, 20001}}},
    };
    for (const std::string affine : {"channel", "group"})
        for (const Case& k : cases)
            for (double offset : {0.0, 100.0}) {
                SCOPED_TRACE(affine + " groups " + std::to_string(k.groups) + " values around " +
                             std::to_string(offset));
                std::vector<test::Run> runs;
                uint64_t seed = 30;
                for (const Shape& x : k.xs) {
                    const Shape a{affine == "group" ? k.groups : x[1]};
                    runs.push_back({test::random_tensor(DataType::f32, x, seed, offset - 1, offset + 1),
                                    test::random_tensor(DataType::f32, a, seed + 1, -2, 2),
                                    test::random_tensor(DataType::f32, a, seed + 2, -2, 2)});
                    seed += 3;
                }
                const Layout c({Dimension()}, DataType::f32);
                const std::vector<std::string> ran = test::expect_impls_match_reference(
                    {"group_norm", norm_attrs(k.groups, affine), {f32(PartialShape::dynamic_of_rank(3)), c, c}, {}},
                    runs, tol(DataType::f32));
                for (const std::string& name : test::kOptimisedCpuImpls)
                    EXPECT_NE(std::find(ran.begin(), ran.end(), name), ran.end()) << name << " did not run";
            }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

TEST(GroupNormDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows;
    for (int64_t n : test::tail_sizes()) rows.push_back({Shape{2, 4, n}, Shape{4}, Shape{4}});
    rows.push_back({Shape{1, 2, 1}, Shape{2}, Shape{2}});
    rows.push_back({Shape{2, 8, 16}, Shape{8}, Shape{8}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(test::mode_name(o.mode));
        const Layout c({Dimension()}, DataType::f32);
        test::expect_sequence(
            {"group_norm", norm_attrs(2), {Layout(PartialShape::dynamic_of_rank(3), DataType::f32), c, c}, {}},
            test::random_runs(DataType::f32, rows, 20, -3, 3), o);
    }
}

}   // namespace
}   // namespace dynrt
