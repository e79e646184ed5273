// dft: shape-inference table (axis, onesided, dft_length known or not, bad
// inputs naming node and field), hand-computed transforms, every impl against
// the reference over lengths that take each FFT path (powers of two, mixed
// radix, Bluestein primes, cut and zero-padded signals), and one instance fed
// changing signal lengths.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

HostTensor length(int64_t n) { return HostTensor::from_int64(DataType::i64, Shape{}, {n}); }
const Layout kLen(PartialShape{}, DataType::i64);

Attributes dft_attrs(int64_t axis, bool inverse = false, bool onesided = false) {
    return test::attrs({{"axis", axis}, {"inverse", inverse}, {"onesided", onesided}});
}

// ---- 1. shape inference ----------------------------------------------------

TEST(DftShape, AxisDimFollowsTheLengthAndOnesidedKeepsHalfPlusOne) {
    const Layout real = test::f32({2, 10, 3, 1}), cplx = test::f32({2, 10, 3, 2});
    const Layout dyn = test::f32({Dimension(), Dimension(), 3, 1});
    test::expect_shapes("dft",
                        {
                            {{real}, dft_attrs(1), {test::f32({2, 10, 3, 2})}},
                            {{cplx}, dft_attrs(2), {test::f32({2, 10, 3, 2})}},
                            {{cplx}, dft_attrs(-2), {test::f32({2, 10, 3, 2})}},
                            {{real}, dft_attrs(1, false, true), {test::f32({2, 6, 3, 2})}},
                            {{real}, dft_attrs(2, false, true), {test::f32({2, 10, 2, 2})}},
                            {{real, kLen}, dft_attrs(1), {test::f32({2, 16, 3, 2})}, {}, {{1, length(16)}}},
                            {{real, kLen}, dft_attrs(1, false, true), {test::f32({2, 3, 3, 2})}, {}, {{1, length(5)}}},
                            {{real, kLen}, dft_attrs(1), {test::f32({2, Dimension(), 3, 2})}},   // length unknown
                            {{dyn}, dft_attrs(1), {test::f32({Dimension(), Dimension(), 3, 2})}},
                            {{dyn}, dft_attrs(1, false, true), {test::f32({Dimension(), Dimension(), 3, 2})}},
                            {{Layout({4, Dimension()}, DataType::f16)}, dft_attrs(0), {Layout({4, 2}, DataType::f16)}},
                        });
}

TEST(DftShape, BadInputsAreErrorsNamingNodeAndField) {
    const Layout real = test::f32({2, 10, 1});
    test::expect_shapes(
        "dft", {
                   {{real}, dft_attrs(2), {}, {"node 'node'", "axis", "out of range"}},
                   {{real}, dft_attrs(-1), {}, {"axis", "out of range"}},
                   {{real}, dft_attrs(1, true, true), {}, {"node 'node'", "onesided", "inverse"}},
                   {{real}, dft_attrs(-4), {}, {"axis"}},
                   {{test::f32({2, 10, 3})}, dft_attrs(1), {}, {"node 'node'", "input", "1 (real) or 2"}},
                   {{test::f32({10})}, dft_attrs(0), {}, {"input", "rank >= 2"}},
                   {{Layout({2, 10, 1}, DataType::i32)}, dft_attrs(1), {}, {"input", "floating"}},
                   {{test::f32({2, 0, 1})}, dft_attrs(1), {}, {"input", "no samples"}},
                   {{real, kLen}, dft_attrs(1), {}, {"node 'node'", "dft_length", "is 0", ">= 1"}, {{1, length(0)}}},
                   {{real, kLen}, dft_attrs(1), {}, {"dft_length", "is -3"}, {{1, length(-3)}}},
                   {{real, kLen}, dft_attrs(1), {}, {"dft_length", "above 2^31"}, {{1, length(int64_t{1} << 40)}}},
                   {{real, test::f32({})}, dft_attrs(1), {}, {"dft_length", "integer scalar"}},
               });
}

// ---- hand-computed values ----------------------------------------------------

HostTensor run_dft(const std::vector<float>& x, Shape shape, const Attributes& a, const std::string& engine) {
    HostTensor in = HostTensor::from_floats(shape, x);
    return test::run_once(test::single_node_program("dft", {in.layout()}, a), {in}, {}, engine);
}

TEST(DftValues, ImpulseConstantAndOneSineOnEveryEngine) {
    for (const char* engine : {"cpu", "ocl"}) {
        if (std::string(engine) == "ocl" && !test::ocl_engine()) continue;
        SCOPED_TRACE(engine);
        // An impulse transforms to all ones; a constant 2 to 2L at bin 0.
        const HostTensor a = run_dft({1, 0, 0, 0, 0}, Shape{1, 5, 1}, dft_attrs(1), engine);
        const HostTensor b = run_dft({2, 2, 2, 2}, Shape{4, 1}, dft_attrs(0), engine);
        for (size_t k = 0; k < 5; ++k) {
            EXPECT_NEAR(a.get_as_double(2 * k), 1.0, 1e-6);
            EXPECT_NEAR(a.get_as_double(2 * k + 1), 0.0, 1e-6);
        }
        EXPECT_NEAR(b.get_as_double(0), 8.0, 1e-6);
        for (size_t j = 2; j < 8; ++j) EXPECT_NEAR(b.get_as_double(j), 0.0, 1e-6);
        // exp(2 pi i n / 4) (complex) is bin 1 with amplitude 4; the inverse of
        // that spectrum gives it back.
        const std::vector<float> wave = {1, 0, 0, 1, -1, 0, 0, -1};
        const HostTensor c = run_dft(wave, Shape{4, 2}, dft_attrs(0), engine);
        const std::vector<double> spectrum = {0, 0, 4, 0, 0, 0, 0, 0};
        for (size_t j = 0; j < 8; ++j) EXPECT_NEAR(c.get_as_double(j), spectrum[j], 1e-6) << j;
        const HostTensor d = run_dft({0, 0, 4, 0, 0, 0, 0, 0}, Shape{4, 2}, dft_attrs(0, true), engine);
        for (size_t j = 0; j < 8; ++j) EXPECT_NEAR(d.get_as_double(j), wave[j], 1e-6) << j;
    }
}

// ---- 2. every impl against the reference ---------------------------------------

TEST(DftImpls, EveryImplMatchesTheReferenceOverFftPaths) {
    // The cpu impls over every FFT path: 1, powers of two, mixed radix (12,
    // 45), primes within the radix limit (13, 17) and beyond it (37, 257:
    // Bluestein), 255 (3 5 17).
    std::vector<std::vector<Shape>> lengths;
    for (int64_t n : {1, 2, 12, 13, 16, 17, 37, 45, 255, 257}) lengths.push_back({Shape{2, n, 1}});
    const Layout r({2, Dimension(), 1}, DataType::f32), c({1, Dimension(), 2}, DataType::f32);
    const test::Tolerance tol{1e-4, 1e-4};
    test::expect_impls_match_reference({"dft", dft_attrs(1), {r}, {}}, test::random_runs(DataType::f32, lengths), tol,
                                       {}, {"cpu"});
    // Every impl (an OpenCL static impl compiles a kernel per shape): a few
    // lengths per mode, real and complex, inverse and onesided.
    const auto shapes = [](std::vector<int64_t> ns, int64_t parts) {
        std::vector<std::vector<Shape>> v;
        for (int64_t n : ns) v.push_back({Shape{parts == 1 ? 2 : 1, n, parts}});
        return v;
    };
    test::expect_impls_match_reference({"dft", dft_attrs(1), {r}, {}},
                                       test::random_runs(DataType::f32, shapes({1, 16, 37, 257}, 1)), tol);
    test::expect_impls_match_reference({"dft", dft_attrs(1, true, false), {c}, {}},
                                       test::random_runs(DataType::f32, shapes({3, 17, 45}, 2)), tol);
    test::expect_impls_match_reference({"dft", dft_attrs(-2, false, true), {c}, {}},
                                       test::random_runs(DataType::f32, shapes({2, 13, 255}, 2)), tol);
    // f16: the references and the OpenCL impls (the FFT takes f32 only).
    test::expect_impls_match_reference({"dft", dft_attrs(1), {Layout({2, Dimension(), 1}, DataType::f16)}, {}},
                                       test::random_runs(DataType::f16, {{Shape{2, 7, 1}}}), {},
                                       test::kOptimisedCpuImpls);
}

TEST(DftImpls, InnerAxisAndDftLengthCutOrPadTheSignal) {
    const Layout x({3, 10, Dimension(), 1}, DataType::f32);
    std::vector<test::Run> runs;
    for (int64_t n : {1, 11}) runs.push_back(test::random_runs(DataType::f32, {{Shape{3, 10, n, 1}}})[0]);
    const test::Tolerance tol{1e-4, 1e-4};
    test::expect_impls_match_reference({"dft", dft_attrs(1), {x}, {}}, runs, tol);
    for (int64_t len : {4, 23})
        test::expect_impls_match_reference({"dft", dft_attrs(1, false, true), {x, kLen}, {{1, length(len)}}}, runs,
                                           tol);
}

// ---- 3. one instance, changing lengths --------------------------------------------

TEST(DftDynamic, OneInstanceFollowsChangingSignalLengthsOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{2, n, 1}});
    const Layout x({2, Dimension(), 1}, DataType::f32);
    for (test::SequenceOptions o : test::every_engine_and_mode(test::Tolerance{1e-4, 1e-4})) {
        SCOPED_TRACE(o.engine + ", " + test::mode_name(o.mode));
        test::expect_sequence({"dft", dft_attrs(1, false, true), {x}, {}}, test::random_runs(DataType::f32, shapes), o);
    }
}

}   // namespace
}   // namespace dynrt
