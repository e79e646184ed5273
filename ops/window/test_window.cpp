// window: shape-inference table (the length from the size's value, dynamic
// while it is unknown, bad sizes naming node and field), the ONNX examples'
// numbers for every kind, every impl against the reference for every kind,
// output type and periodicity, and one instance fed changing sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor size_of(int64_t n, DataType t = DataType::i64) { return HostTensor::from_int64(t, Shape{}, {n}); }
const Layout kSize(PartialShape{}, DataType::i64);

Attributes window_attrs(const std::string& kind, bool periodic = true, const std::string& dtype = "f32") {
    return test::attrs({{"kind", kind}, {"periodic", periodic}, {"dtype", dtype}});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(WindowShape, LengthIsTheSizeValueAndDynamicWhileUnknown) {
    const Layout i32(PartialShape{}, DataType::i32);
    test::expect_shapes(
        "window",
        {
            {{kSize}, window_attrs("hann"), {test::f32({10})}, {}, {{0, size_of(10)}}},
            {{i32},
             window_attrs("blackman", false, "f16"),
             {Layout({1}, DataType::f16)},
             {},
             {{0, size_of(1, DataType::i32)}}},
            {{kSize}, window_attrs("hamming", true, "f64"), {Layout({0}, DataType::f64)}, {}, {{0, size_of(0)}}},
            {{kSize}, window_attrs("hann"), {test::f32({Dimension()})}},   // size unknown
            {{Layout({1}, DataType::i64)},
             window_attrs("hann"),
             {test::f32({3})},
             {},
             {{0, HostTensor::from_int64(DataType::i64, Shape{1}, {3})}}},
        });
}

TEST(WindowShape, BadSizesAreErrorsNamingNodeAndField) {
    test::expect_shapes(
        "window", {
                      {{kSize}, window_attrs("hann"), {}, {"node 'node'", "size", "is -1", ">= 0"}, {{0, size_of(-1)}}},
                      {{kSize}, window_attrs("hann"), {}, {"size", "above 2^60"}, {{0, size_of(int64_t{1} << 61)}}},
                      {{Layout({Dimension()}, DataType::i64)},
                       window_attrs("hann"),
                       {},
                       {"size", "one value, got 0"},
                       {{0, HostTensor::from_int64(DataType::i64, Shape{0}, {})}}},
                      {{test::f32({})}, window_attrs("hann"), {}, {"node 'node'", "size", "integer scalar", "f32[]"}},
                      {{Layout({2}, DataType::i64)}, window_attrs("hann"), {}, {"size", "integer scalar"}},
                      {{Layout({1, 1}, DataType::i64)}, window_attrs("hann"), {}, {"size", "integer scalar"}},
                  });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run_window(const Attributes& a, int64_t n, const std::string& engine) {
    return test::run_once(test::single_node_program("window", {kSize}, a), {size_of(n)}, {}, engine);
}

TEST(WindowValues, KnownWindowsOfTenOnEveryEngine) {
    // numpy: 0.5 - 0.5 cos(2 pi n / N), 25/46 - 21/46 cos(.), 0.42 - 0.5 cos(.) + 0.08 cos(2 .).
    const std::vector<double> hann = {0, 0.0954915, 0.3454915, 0.6545085, 0.9045085,
                                      1, 0.9045085, 0.6545085, 0.3454915, 0.0954915};
    const std::vector<double> hamming_sym = {0.0869565, 0.1937623, 0.4642041, 0.7717391, 0.9724684,
                                             0.9724684, 0.7717391, 0.4642041, 0.1937623, 0.0869565};
    const std::vector<double> blackman = {0, 0.0402129, 0.2007701, 0.5097871, 0.8492299,
                                          1, 0.8492299, 0.5097871, 0.2007701, 0.0402129};
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        const HostTensor a = run_window(window_attrs("hann"), 10, engine);
        const HostTensor b = run_window(window_attrs("hamming", false), 10, engine);
        const HostTensor c = run_window(window_attrs("blackman"), 10, engine);
        const HostTensor d = run_window(window_attrs("hann", false), 1, engine);
        ASSERT_EQ(a.shape(), Shape{10});
        for (size_t n = 0; n < 10; ++n) {
            EXPECT_NEAR(a.get_as_double(n), hann[n], 1e-6) << n;
            EXPECT_NEAR(b.get_as_double(n), hamming_sym[n], 1e-6) << n;
            EXPECT_NEAR(c.get_as_double(n), blackman[n], 1e-6) << n;
        }
        EXPECT_EQ(d.get_as_double(0), 1.0);
    }
}

// ---- 2. every impl against the reference ---------------------------------------

// Size 17 for every kind periodic, sizes 1 (a symmetric window of one
// element is [1]) and 16 symmetric; the tails and f16 on one kind (an
// OpenCL static impl compiles a kernel per size).
TEST(WindowImpls, EveryImplMatchesTheReferenceForEveryKindTypeAndPeriodicity) {
    for (const char* kind : {"hann", "hamming", "blackman"}) {
        SCOPED_TRACE(kind);
        test::expect_impls_match_reference({"window", window_attrs(kind, true), {kSize}, {}}, {{size_of(17)}});
        test::expect_impls_match_reference({"window", window_attrs(kind, false), {kSize}, {}},
                                           {{size_of(1)}, {size_of(16)}});
    }
    const std::vector<test::Run> runs = {{size_of(2)}, {size_of(257)}};
    test::expect_impls_match_reference({"window", window_attrs("blackman", false, "f16"), {kSize}, {}}, runs);
    test::expect_impls_match_reference({"window", window_attrs("hann", true, "f64"), {kSize}, {}}, runs, {},
                                       {"ocl_static", "ocl_dynamic"});
}

// ---- 3. one instance, changing sizes --------------------------------------------

TEST(WindowDynamic, OneInstanceFollowsChangingSizesOnEveryEngine) {
    std::vector<test::Run> runs;
    for (int64_t n : test::tail_sizes()) runs.push_back({size_of(n)});
    runs.push_back({size_of(0)});   // empty
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        o.check_counters = false;   // the values change, the (scalar) input shape never does
        test::expect_sequence({"window", window_attrs("hamming", false), {kSize}, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
