// mel_weight_matrix: shape-inference table (the dims from num_mel_bins and
// dft_length, dynamic while unknown; bad values naming node and field), a
// hand-computed matrix, every impl against the reference over band counts
// and lengths, and one instance fed changing sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor i64(int64_t v) { return HostTensor::from_int64(DataType::i64, Shape{}, {v}); }
HostTensor f32(double v) {
    HostTensor t(DataType::f32, Shape{});
    t.set_from_double(0, v);
    return t;
}
const Layout kInt(PartialShape{}, DataType::i64), kFloat(PartialShape{}, DataType::f32);
const std::vector<Layout> kInputs = {kInt, kInt, kInt, kFloat, kFloat};

Attributes mel_attrs(const std::string& dtype = "f32") { return test::attrs({{"dtype", dtype}}); }

std::map<size_t, HostTensor> values(int64_t bands, int64_t dft_length, int64_t rate, double low, double high) {
    return {{0, i64(bands)}, {1, i64(dft_length)}, {2, i64(rate)}, {3, f32(low)}, {4, f32(high)}};
}

// ---- 1. shape inference ----------------------------------------------------

TEST(MelWeightMatrixShape, DimsFollowDftLengthAndBandsAndAreDynamicWhileUnknown) {
    test::expect_shapes(
        "mel_weight_matrix",
        {
            {kInputs, mel_attrs(), {test::f32({9, 8})}, {}, values(8, 16, 8192, 0, 4096)},
            {kInputs, mel_attrs("f16"), {Layout({201, 80}, DataType::f16)}, {}, values(80, 400, 16000, 0, 8000)},
            {kInputs, mel_attrs(), {test::f32({Dimension(), Dimension()})}},
            {kInputs, mel_attrs(), {test::f32({257, Dimension()})}, {}, {{1, i64(512)}}},
            {kInputs,
             mel_attrs(),
             {test::f32({Dimension(), Dimension()})},
             {},
             {{2, i64(16000)}, {3, f32(0)}, {4, f32(100)}}},
        });
}

TEST(MelWeightMatrixShape, BadValuesAreErrorsNamingNodeAndField) {
    test::expect_shapes(
        "mel_weight_matrix",
        {
            {kInputs, mel_attrs(), {}, {"node 'node'", "num_mel_bins", "is 0"}, values(0, 16, 8192, 0, 4096)},
            {kInputs, mel_attrs(), {}, {"node 'node'", "dft_length", "is -4"}, values(8, -4, 8192, 0, 4096)},
            {kInputs, mel_attrs(), {}, {"sample_rate", "is 0"}, values(8, 16, 0, 0, 4096)},
            {kInputs,
             mel_attrs(),
             {},
             {"lower_edge_hertz", "0 <= lower_edge_hertz <= upper_edge_hertz"},
             values(8, 16, 8192, 100, 50)},
            {kInputs,
             mel_attrs(),
             {},
             {"node 'node'", "upper_edge_hertz", "sample_rate / 2"},
             values(8, 16, 8000, 0, 8000)},
            {kInputs, mel_attrs(), {}, {"upper_edge_hertz", "beyond"}, values(8, 16, 8000, 0, 1e30)},
            {{kFloat, kInt, kInt, kFloat, kFloat}, mel_attrs(), {}, {"num_mel_bins", "integer scalar", "f32[]"}},
            {{kInt, kInt, kInt, kInt, kFloat}, mel_attrs(), {}, {"lower_edge_hertz", "floating-point scalar"}},
        });
}

// ---- hand-computed values ----------------------------------------------------

TEST(MelWeightMatrixValues, TwoBandsOverSixteenPointsOnEveryEngine) {
    // 2 bands, dft_length 16, 16 kHz, 0 .. 8 kHz: mel(8000) = 2840.0230,
    // step 710.0058 (a quarter), edges floor(17 * hz(e * step) / 16000) for
    // e = 0..3 of hz = 0, 614.33, 1767.79, 3933.55: 0, 0, 1, 4. Band 0
    // (0, 0, 1): 1 at bin 0; band 1 (0, 1, 4): 0, 1, 2/3, 1/3.
    const std::vector<double> want = {1, 0, 0, 1, 0, 2.0 / 3, 0, 1.0 / 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        const HostTensor y = test::run_once(test::single_node_program("mel_weight_matrix", kInputs, mel_attrs()),
                                            {i64(2), i64(16), i64(16000), f32(0), f32(8000)}, {}, engine);
        ASSERT_EQ(y.shape(), (Shape{9, 2}));
        for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(y.get_as_double(j), want[j], 1e-7) << j;
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(MelWeightMatrixImpls, EveryImplMatchesTheReference) {
    const std::vector<test::Run> runs = {
        {i64(1), i64(1), i64(16000), f32(0), f32(0)},
        {i64(13), i64(255), i64(16000), f32(20), f32(7999)},
        {i64(80), i64(400), i64(16000), f32(0), f32(8000)},
    };
    test::expect_impls_match_reference({"mel_weight_matrix", mel_attrs(), kInputs, {}}, runs);
    test::expect_impls_match_reference({"mel_weight_matrix", mel_attrs("f16"), kInputs, {}}, {runs[1]});
    test::expect_impls_match_reference({"mel_weight_matrix", mel_attrs("f64"), kInputs, {}}, {runs[1]}, {},
                                       {"ocl_static", "ocl_dynamic"});
}

// ---- 3. one instance, changing sizes --------------------------------------------

TEST(MelWeightMatrixDynamic, OneInstanceFollowsChangingSizesOnEveryEngine) {
    std::vector<test::Run> runs;
    for (int64_t n : {1, 13, 257, 13, 1})   // revisits
        runs.push_back({i64(n % 7 + 1), i64(2 * n + 8), i64(16000), f32(0), f32(7000)});
    for (test::SequenceOptions o : test::every_engine_and_mode()) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        o.check_counters = false;   // the values change, the (scalar) input shapes never do
        test::expect_sequence({"mel_weight_matrix", mel_attrs(), kInputs, {}}, runs, o);
    }
}

}   // namespace
}   // namespace dynrt
