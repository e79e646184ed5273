// cumsum: shape-inference table, reference vs hand-computed and naive values
// (every exclusive/reverse combination, float and integer types), and one
// network instance fed a sequence of changing shapes.
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
#include "dynrt/network.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"
#include "ocl_sweep.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

using test::registry;

Attributes cumsum_attrs(int64_t axis, bool exclusive = false, bool reverse = false) {
    Attributes a;
    a.set("axis", axis);
    a.set("exclusive", exclusive);
    a.set("reverse", reverse);
    return a;
}

std::vector<Layout> infer(const Layout& in, int64_t axis) {
    const OpDefinition& def = registry()->op("cumsum").def;
    const Attributes attrs = Attributes::validate(def.attrs, cumsum_attrs(axis));
    const std::vector<Layout> inputs{in};
    const std::string node = "cs";
    return def.infer(ShapeInferContext{node, inputs, attrs, {}});
}

template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a dynrt::Error";
    return {};
}

// Independent of the kernel: for each output element, sum the elements of its
// line that the definition includes, straight from the coordinates (O(n * len)).
std::vector<double> naive_cumsum(const HostTensor& in, int64_t axis, bool exclusive, bool reverse) {
    const Shape& s = in.shape();
    const auto ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(s.rank()) : axis);
    size_t stride = 1;
    for (size_t k = ax + 1; k < s.rank(); ++k) stride *= static_cast<size_t>(s[k]);
    const auto len = static_cast<size_t>(s[ax]);
    std::vector<double> out(in.count());
    for (size_t flat = 0; flat < out.size(); ++flat) {
        const size_t pos = (flat / stride) % len;
        const size_t line0 = flat - pos * stride;
        double sum = 0;
        for (size_t j = 0; j < len; ++j) {
            const bool before = reverse ? j > pos : j < pos;
            if (before || (!exclusive && j == pos)) sum += in.get_as_double(line0 + j * stride);
        }
        out[flat] = sum;
    }
    return out;
}

void expect_values(const HostTensor& got, const std::vector<double>& want, double tol) {
    ASSERT_EQ(got.count(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.get_as_double(i), want[i], tol) << "element " << i;
}

// ---- 1. shape inference ----------------------------------------------------

TEST(CumsumShapeInfer, OutputLayoutEqualsInput) {
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64}) {
        const Layout in({Dimension(), 3, Dimension(1, 8)}, t);
        const auto out = infer(in, -1);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].shape, in.shape);
        EXPECT_EQ(out[0].dtype, t);
    }
    EXPECT_EQ(infer(Layout({0}, DataType::f32), 0)[0].shape, PartialShape({0}));
}

TEST(CumsumShapeInfer, AxisOutOfRangeIsRejected) {
    std::string msg = error_of([] { infer(Layout({2, 3}, DataType::f32), 2); });
    EXPECT_NE(msg.find("axis"), std::string::npos) << msg;
    error_of([] { infer(Layout({2, 3}, DataType::f32), -3); });
    msg = error_of([] { infer(Layout(PartialShape{}, DataType::f32), 0); });
    EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
}

// ---- 2. reference values -----------------------------------------------------

struct Hand {
    bool exclusive, reverse;
    std::vector<double> want;
};

TEST(CumsumReference, OneDimensionalEveryModeByHand) {
    // [1, 2, 3, 4]: inclusive 1 3 6 10; exclusive 0 1 3 6; reverse 10 9 7 4;
    // exclusive + reverse 9 7 4 0.
    const std::vector<Hand> cases = {{false, false, {1, 3, 6, 10}},
                                     {true, false, {0, 1, 3, 6}},
                                     {false, true, {10, 9, 7, 4}},
                                     {true, true, {9, 7, 4, 0}}};
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64}) {
        for (const Hand& h : cases) {
            SCOPED_TRACE(std::string(to_string(t)) + (h.exclusive ? " exclusive" : "") + (h.reverse ? " reverse" : ""));
            HostTensor in(t, Shape{4});
            for (size_t i = 0; i < 4; ++i) in.set_from_double(i, static_cast<double>(i + 1));
            const auto prog = test::single_node_program("cumsum", {Layout({4}, t)}, cumsum_attrs(0, h.exclusive, h.reverse));
            const HostTensor out = test::run_once(prog, {in});
            EXPECT_EQ(out.dtype(), t);
            expect_values(out, h.want, 0.0);
        }
    }
}

TEST(CumsumReference, TwoDimensionalAlongEachAxisByHand) {
    // [[1, 2, 3], [4, 5, 6]]
    const HostTensor in = HostTensor::from_floats(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const auto along0 = test::single_node_program("cumsum", {Layout({2, 3}, DataType::f32)}, cumsum_attrs(0));
    expect_values(test::run_once(along0, {in}), {1, 2, 3, 5, 7, 9}, 0.0);
    const auto along1 = test::single_node_program("cumsum", {Layout({2, 3}, DataType::f32)}, cumsum_attrs(-1));
    expect_values(test::run_once(along1, {in}), {1, 3, 6, 4, 9, 15}, 0.0);
    const auto rev1 = test::single_node_program("cumsum", {Layout({2, 3}, DataType::f32)}, cumsum_attrs(1, true, true));
    expect_values(test::run_once(rev1, {in}), {5, 3, 0, 11, 6, 0}, 0.0);
}

TEST(CumsumReference, I64SumsStayExactBeyondDoublePrecision) {
    // 2^53 + 1 is not representable as a double; an int64 accumulator keeps it.
    const int64_t big = (int64_t{1} << 53);
    const HostTensor in = HostTensor::from_int64(DataType::i64, Shape{3}, {big, 1, 1});
    const auto prog = test::single_node_program("cumsum", {Layout({3}, DataType::i64)}, cumsum_attrs(0));
    EXPECT_EQ(test::run_once(prog, {in}).to_int64(), std::vector<int64_t>({big, big + 1, big + 2}));
}

TEST(CumsumReference, RandomInputsMatchNaiveSumsForEveryModeAndDtype) {
    uint64_t seed = 1;
    for (DataType t : {DataType::f32, DataType::f16, DataType::i32, DataType::i64}) {
        for (int64_t axis : {0, 1, 2, -1}) {
            for (int mode = 0; mode < 4; ++mode) {
                const bool exclusive = mode & 1, reverse = mode & 2;
                const Shape s{3, 5, 7};
                // f16 inputs in [-1, 1): sums of up to 7 stay far from f16's range
                // and within 1e-2 after rounding of the stored result.
                const bool f16 = t == DataType::f16;
                const HostTensor in = test::random_tensor(t, s, seed++, f16 ? -1 : -100, f16 ? 1 : 100);
                const auto prog = test::single_node_program("cumsum", {Layout(PartialShape(s), t)},
                                                            cumsum_attrs(axis, exclusive, reverse));
                SCOPED_TRACE(std::string(to_string(t)) + " axis " + std::to_string(axis) + " mode " +
                             std::to_string(mode));
                const double tol = f16 ? 1e-2 : (t == DataType::f32 ? 1e-4 : 0.0);
                expect_values(test::run_once(prog, {in}), naive_cumsum(in, axis, exclusive, reverse), tol);
            }
        }
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

class CumsumSweep : public ::testing::TestWithParam<bool> {};

// [3, ?] summed in reverse along the dynamic axis; then [?] along axis 0.
TEST_P(CumsumSweep, OneInstanceFollowsChangingShapes) {
    const bool dynamic_impls = GetParam();
    for (int variant = 0; variant < 2; ++variant) {
        SCOPED_TRACE("variant " + std::to_string(variant));
        const PartialShape ps = variant == 0 ? PartialShape{3, Dimension()} : PartialShape{Dimension()};
        const int64_t axis = variant == 0 ? 1 : 0;
        const bool reverse = variant == 0;
        const auto prog =
            test::single_node_program("cumsum", {Layout(ps, DataType::f32)}, cumsum_attrs(axis, false, reverse));
        NetworkOptions opts;
        opts.use_dynamic_impls = dynamic_impls;
        InferRequest req(Network::create(prog, test::engine(), opts));

        const std::vector<int64_t> sizes = {1, 3, 13, 16, 17, 255, 257, 16, 16, 1, 257};
        std::set<int64_t> seen;
        int64_t prev = -1;
        uint64_t seed = 100;
        for (int64_t n : sizes) {
            SCOPED_TRACE("n = " + std::to_string(n));
            const Shape s = variant == 0 ? Shape{3, n} : Shape{n};
            const HostTensor in = test::random_tensor(DataType::f32, s, seed++);
            req.set_input("in0", in);
            req.infer();
            const HostTensor out = req.get_output(0);
            ASSERT_EQ(out.shape(), s);
            expect_values(out, naive_cumsum(in, axis, false, reverse), 1e-4);

            const Counters& c = req.last_run().totals;
            if (n == prev) {
                EXPECT_EQ(c.shape_changes, 0u);
                EXPECT_GE(c.skip_shape_unchanged, 1u);
                EXPECT_EQ(c.static_builds, 0u);
            } else {
                EXPECT_GE(c.shape_changes, 1u);
                if (dynamic_impls) {
                    EXPECT_EQ(c.static_builds, 0u);
                    EXPECT_GE(c.dynamic_impl_runs, 1u);
                } else if (seen.count(n)) {
                    EXPECT_EQ(c.impl_cache_hits, 1u);
                    EXPECT_EQ(c.static_builds, 0u);
                } else {
                    EXPECT_EQ(c.static_builds, 1u);
                }
            }
            seen.insert(n);
            prev = n;
        }
        EXPECT_EQ(req.cumulative().static_builds, dynamic_impls ? 0u : seen.size());
    }
}

INSTANTIATE_TEST_SUITE_P(Impls, CumsumSweep, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Dynamic" : "Static"; });

// ---- OpenCL: ocl_dynamic and ocl_static against the cpu reference ------------
//
// Skipped when the ocl module is not built or no OpenCL platform exists
// (helpers in tests/support/ocl_sweep.hpp).

using test::expect_close;
using test::ocl_engine;
using test::ocl_sweep;
using test::OclInputs;

// Tail sizes, then revisits (never the same size twice in a row, so each run
// selects an impl).
const std::vector<int64_t> kOclSizes = {1, 3, 13, 16, 17, 255, 257, 16, 1, 257};

Attributes cumsum_ocl_attrs(int64_t axis, bool exclusive, bool reverse) {
    Attributes a;
    a.set("axis", axis);
    a.set("exclusive", exclusive);
    a.set("reverse", reverse);
    return a;
}

// f32: the device accumulates in double where it has fp64 (then the result
// equals the host's), else in float: 1e-5 relative plus 1e-4 absolute covers
// float sums of up to 257 terms in [-1, 1) that cancel to near zero.
constexpr double kF32Rtol = 1e-5, kF32Atol = 1e-4;

std::function<OclInputs(int64_t, uint64_t)> cumsum_inputs(DataType t, bool axis_is_n, double low, double high) {
    return [=](int64_t n, uint64_t seed) {
        const Shape s = axis_is_n ? Shape{n, 3} : Shape{3, n};
        return OclInputs{{"in0", test::random_tensor(t, s, seed, low, high)}};
    };
}

TEST(CumsumOcl, SweepAlongAChangingAxisMatchesCpuOnDynamicAndStaticImpls) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("cumsum", {Layout({Dimension(), 3}, DataType::f32)},
                                                cumsum_ocl_attrs(0, false, false));
    for (bool dynamic : {true, false})
        ocl_sweep(eng, prog, kOclSizes, dynamic, cumsum_inputs(DataType::f32, true, -1, 1), kF32Rtol, kF32Atol);
}

TEST(CumsumOcl, ExclusiveAndReverseMatchCpuOnTheDynamicImpl) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
            SCOPED_TRACE(std::string(exclusive ? "exclusive" : "inclusive") + (reverse ? " reverse" : ""));
            // Along the last axis (lines are contiguous) of [3, n].
            const auto prog = test::single_node_program("cumsum", {Layout({3, Dimension()}, DataType::f32)},
                                                        cumsum_ocl_attrs(-1, exclusive, reverse));
            ocl_sweep(eng, prog, {1, 17, 257}, true, cumsum_inputs(DataType::f32, false, -1, 1), kF32Rtol,
                      kF32Atol);
        }
    }
}

// Integers are exact; i32 sums of values around 1e9 overflow and must wrap like
// the host's int64 sum truncated to 32 bits.
TEST(CumsumOcl, IntegersMatchCpuExactlyIncludingWrapAround) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (DataType t : {DataType::i32, DataType::i64}) {
        SCOPED_TRACE(to_string(t));
        const auto prog = test::single_node_program("cumsum", {Layout({Dimension(), 3}, t)},
                                                    cumsum_ocl_attrs(0, true, true));
        for (bool dynamic : {true, false})
            ocl_sweep(eng, prog, {1, 13, 16}, dynamic, cumsum_inputs(t, true, 1e9, 2e9), 0, 0);
    }
}

TEST(CumsumOcl, EmptyAxisWritesNothingAndThenRecovers) {
    const EnginePtr eng = ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    const auto prog = test::single_node_program("cumsum", {Layout({Dimension(), 3}, DataType::f32)},
                                                cumsum_ocl_attrs(0, false, false));
    ocl_sweep(eng, prog, {0, 3, 0, 16}, true, cumsum_inputs(DataType::f32, true, -1, 1), kF32Rtol, kF32Atol);
}

}  // namespace
}  // namespace dynrt
