// cumsum: shape-inference table, every impl against the reference over a
// dtype x mode x shape matrix, one instance fed changing shapes, and the
// reference against hand-computed and naive values (every exclusive/reverse
// combination, float and integer types).
#include <gtest/gtest.h>

#include "op_test.hpp"

namespace dynrt {
namespace {

Attributes cumsum_attrs(int64_t axis, bool exclusive = false, bool reverse = false) {
    return test::attrs({{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
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

TEST(CumsumShapeInfer, OutputLayoutEqualsInputAndBadAxesAreRejected) {
    std::vector<test::ShapeRow> rows;
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64}) {
        const Layout in({Dimension(), 3, Dimension(1, 8)}, t);
        rows.push_back({{in}, cumsum_attrs(-1), {in}});
    }
    rows.push_back({{Layout({0}, DataType::f32)}, cumsum_attrs(0), {Layout({0}, DataType::f32)}});
    rows.push_back({{Layout({2, 3}, DataType::f32)}, cumsum_attrs(2), {}, {"axis"}});
    rows.push_back({{Layout({2, 3}, DataType::f32)}, cumsum_attrs(-3), {}, {"axis"}});
    rows.push_back({{Layout(PartialShape{}, DataType::f32)}, cumsum_attrs(0), {}, {"scalar"}});
    test::expect_shapes("cumsum", rows);
}

// ---- 2. every impl against the reference -------------------------------------

// f32: devices accumulate in double where they have fp64, else in float: 1e-5
// relative plus 1e-4 absolute covers float sums of up to 257 terms in [-1, 1)
// that cancel to near zero. Integers are exact; i32 sums of values around 1e9
// overflow and must wrap like the reference's.
TEST(CumsumImpls, EveryImplMatchesTheReferenceInEveryModeAndDtype) {
    const std::vector<std::vector<Shape>> shapes = {{{1, 3}}, {{257, 3}}, {{0, 3}}};
    const test::Tolerance f32_tol{1e-5, 1e-4};
    // f32: every axis and mode; the other dtypes: exclusive and reverse.
    for (int64_t axis : {0, -1}) {
        for (int mode = 0; mode < 4; ++mode) {
            SCOPED_TRACE("f32 axis " + std::to_string(axis) + " mode " + std::to_string(mode));
            const test::OpSetup s{"cumsum",
                                  cumsum_attrs(axis, mode & 1, mode & 2),
                                  {Layout(PartialShape::dynamic_of_rank(2), DataType::f32)},
                                  {}};
            test::expect_impls_match_reference(s, test::random_runs(DataType::f32, shapes, 7), f32_tol);
        }
    }
    for (DataType t : {DataType::f16, DataType::f64, DataType::i32, DataType::i64}) {
        SCOPED_TRACE(to_string(t));
        const bool ints = !is_floating(t);
        const test::OpSetup s{"cumsum", cumsum_attrs(0, true, true), {Layout(PartialShape::dynamic_of_rank(2), t)}, {}};
        test::expect_impls_match_reference(s, test::random_runs(t, shapes, 7, ints ? 1e9 : -1, ints ? 2e9 : 1), {},
                                           {"ocl_static", "ocl_dynamic"});
    }
}

// ---- 3. one instance, changing shapes -----------------------------------------

// [3, ?] summed in reverse along the dynamic axis, [?] along axis 0 and [?, 3]
// exclusive along the dynamic axis (an empty axis included), on every engine.
TEST(CumsumDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> rows3n, rowsn, rowsn3;
    for (int64_t n : test::tail_sizes()) {
        rows3n.push_back({Shape{3, n}});
        rowsn.push_back({Shape{n}});
        rowsn3.push_back({Shape{n, 3}});
    }
    for (int64_t n : {0, 3, 0, 16}) rowsn3.push_back({Shape{n, 3}});
    for (const char* eng : {"cpu", "ocl"}) {
        if (std::string(eng) == "ocl" && !test::ocl_engine()) continue;
        for (test::Mode mode : {test::Mode::dynamic_async, test::Mode::static_only}) {
            const bool dynamic = mode != test::Mode::static_only;
            SCOPED_TRACE(dynamic ? "dynamic impls" : "static impls");
            test::SequenceOptions o;
            o.engine = eng;
            o.mode = mode;
            o.tol = test::Tolerance{1e-5, 1e-4};
            if (o.engine == "ocl") o.impl_suffix = dynamic ? "_ocl_dynamic" : "_ocl_static";
            o.on_step = [&](const InferRequest& req, size_t step) {
                // Static impls: one build per distinct shape (7 of them), no more.
                if (step + 1 == rows3n.size()) {
                    EXPECT_EQ(req.cumulative().static_builds, dynamic ? 0u : 7u);
                }
            };
            test::expect_sequence(
                {"cumsum", cumsum_attrs(1, false, true), {Layout({3, Dimension()}, DataType::f32)}, {}},
                test::random_runs(DataType::f32, rows3n, 100), o);
            test::expect_sequence({"cumsum", cumsum_attrs(0), {Layout({Dimension()}, DataType::f32)}, {}},
                                  test::random_runs(DataType::f32, rowsn, 200), o);
            o.on_step = nullptr;
            test::expect_sequence({"cumsum", cumsum_attrs(0, true), {Layout({Dimension(), 3}, DataType::f32)}, {}},
                                  test::random_runs(DataType::f32, rowsn3, 300), o);
        }
    }
}

// ---- the reference's values ----------------------------------------------------

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
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64}) {
        for (const Hand& h : cases) {
            SCOPED_TRACE(std::string(to_string(t)) + (h.exclusive ? " exclusive" : "") + (h.reverse ? " reverse" : ""));
            HostTensor in(t, Shape{4});
            for (size_t i = 0; i < 4; ++i) in.set_from_double(i, static_cast<double>(i + 1));
            const auto prog =
                test::single_node_program("cumsum", {Layout({4}, t)}, cumsum_attrs(0, h.exclusive, h.reverse));
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
    for (DataType t : {DataType::f32, DataType::f16, DataType::f64, DataType::i32, DataType::i64}) {
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
                // f64: the naive sum may add in another order (a few ulps).
                const double tol = f16 ? 1e-2 : (t == DataType::f32 ? 1e-4 : (t == DataType::f64 ? 1e-9 : 0.0));
                expect_values(test::run_once(prog, {in}), naive_cumsum(in, axis, exclusive, reverse), tol);
            }
        }
    }
}

}   // namespace
}   // namespace dynrt
