// sdpa: the shape-inference table, every impl against the reference over
// shapes x masks x causal modes (fully masked rows included), one instance
// following a decode and a prefill whose lengths change, values computed by
// hand (causal alignment, grouped heads, scale, masks, empty key sets) and
// the ONNX import rules.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "dynrt/ocl_api.hpp"
#include "dynrt/op_import.hpp"
#include "op_test.hpp"

namespace dynrt {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

Attributes sdpa_attrs(int64_t causal = 0, int64_t zero_masked_rows = 0, double scale = 0.0) {
    return test::attrs({{"scale", scale}, {"causal", causal}, {"zero_masked_rows", zero_masked_rows}});
}

Layout lay(PartialShape s, DataType t = DataType::f32) { return Layout(std::move(s), t); }

// ---- 1. shape inference ------------------------------------------------------

TEST(SdpaShape, OutputIsBHqSqDvAndEveryBadInputIsNamed) {
    const Dimension dyn;
    const DataType f16 = DataType::f16, b8 = DataType::boolean;
    const Layout q = lay({2, 8, 5, 64}), k = lay({2, 2, 7, 64}), v = lay({2, 2, 7, 32}), out = lay({2, 8, 5, 32});
    const Attributes a = sdpa_attrs();
    std::vector<test::ShapeRow> rows = {
        // grouped heads (8 query heads over 2 kv heads), Dv != D
        {{q, k, v}, a, {out}},
        {{q, k, v}, sdpa_attrs(2, 1, 0.5), {out}},
        // dynamic batch and sequences; a static dim of any input fills a dynamic one
        {{lay({dyn, 8, dyn, 64}), lay({dyn, 8, dyn, 64}), lay({dyn, 8, dyn, 16})}, a, {lay({dyn, 8, dyn, 16})}},
        {{lay({dyn, 4, 3, 16}), lay({dyn, 1, 5, 16}), lay({2, 1, dyn, 16})}, a, {lay({2, 4, 3, 16})}},
        {{lay({dyn, 4, 3, 16}), lay({dyn, 4, 5, 16}), lay({dyn, 4, 5, 16})}, a, {lay({dyn, 4, 3, 16})}},
        // f16; masks that broadcast: bool padding mask, u8, 2-D additive, scalar, dynamic dims
        {{lay({1, 2, 3, 8}, f16), lay({1, 2, 4, 8}, f16), lay({1, 2, 4, 8}, f16), lay({1, 1, 1, 4}, b8)},
         a,
         {lay({1, 2, 3, 8}, f16)}},
        {{q, k, v, lay({2, 8, 5, 7}, DataType::u8)}, a, {out}},
        {{q, k, v, lay({5, 7})}, a, {out}},
        {{q, k, v, lay({1})}, a, {out}},
        {{q, k, v, lay(PartialShape{})}, a, {out}},
        {{lay({dyn, 8, dyn, 64}), lay({dyn, 2, dyn, 64}), lay({dyn, 2, dyn, 64}), lay({dyn, 1, dyn, dyn}, b8)},
         a,
         {lay({dyn, 8, dyn, 64})}},
        // errors name the node and the input
        {{lay({8, 5, 64}), k, v}, a, {}, {"node 'node'", "field 'q'", "rank 4"}},
        {{q, lay({2, 2, 7}), v}, a, {}, {"field 'k'", "rank 4"}},
        {{q, k, lay({2, 2, 7, 32, 1})}, a, {}, {"field 'v'", "rank 4"}},
        {{q, lay({2, 2, 7, 32}), v}, a, {}, {"field 'k'", "head size D", "32 and 64"}},
        {{lay({2, 6, 5, 64}), lay({2, 4, 7, 64}), lay({2, 4, 7, 32})}, a, {}, {"field 'k'", "6 query heads", "4 kv"}},
        {{q, k, lay({2, 2, 6, 32})}, a, {}, {"field 'v'", "key sequence Sk"}},
        {{q, k, lay({2, 1, 7, 32})}, a, {}, {"field 'v'", "kv heads Hk"}},
        {{q, lay({3, 2, 7, 64}), v}, a, {}, {"field 'k'", "batch B"}},
        {{q, k, lay({1, 2, 7, 32})}, a, {}, {"field 'v'", "batch B"}},
        {{lay({2, 8, 5, 64}, DataType::i32), lay({2, 2, 7, 64}, DataType::i32), lay({2, 2, 7, 32}, DataType::i32)},
         a,
         {},
         {"field 'q'", "floating"}},
        {{q, lay({2, 2, 7, 64}, f16), v}, a, {}, {"field 'k'", "type of q"}},
        {{q, k, v, lay({2, 8, 5, 6})}, a, {}, {"field 'mask'", "[2,8,5,6]", "does not broadcast"}},
        {{q, k, v, lay({3, 7})}, a, {}, {"field 'mask'", "does not broadcast"}},
        {{q, k, v, lay({1, 1, 1, 1, 7})}, a, {}, {"field 'mask'", "more than 4 dims"}},
        {{q, k, v, lay({5, 7}, DataType::i32)}, a, {}, {"field 'mask'", "bool, u8 or the type of q"}},
        {{q, k, v, lay({5, 7}, f16)}, a, {}, {"field 'mask'", "type of q"}},
        {{q, k}, a, {}, {"field 'inputs'", "3 or 4"}},
        {{q, k, v}, sdpa_attrs(3), {}, {"field 'causal'", "causal 3"}},
        {{q, k, v}, sdpa_attrs(-1), {}, {"field 'causal'"}},
        {{q, k, v}, sdpa_attrs(0, 2), {}, {"field 'zero_masked_rows'"}},
    };
    test::expect_shapes("sdpa", rows);
}

// ---- 2. every impl against the reference -----------------------------------------

enum class MaskKind { none, boolean, u8, additive };

// One case: q, k, v shapes and the mask's (ignored for MaskKind::none).
struct Case {
    Shape q, k, v, mask;
};

// q [b, hq, sq, d], k [b, hk, sk, d], v [b, hk, sk, dv]; the mask a padding
// mask [b, 1, 1, sk], a full [b, hq, sq, sk] one or a 2-D [sq, sk] one.
enum class MaskShape { padding, full, square };
Case make_case(int64_t b, int64_t hq, int64_t hk, int64_t sq, int64_t sk, int64_t d, int64_t dv, MaskShape m) {
    Case c{{b, hq, sq, d}, {b, hk, sk, d}, {b, hk, sk, dv}, {}};
    if (m == MaskShape::padding) c.mask = Shape{b, 1, 1, sk};
    if (m == MaskShape::full) c.mask = Shape{b, hq, sq, sk};
    if (m == MaskShape::square) c.mask = Shape{sq, sk};
    return c;
}

// Random q, k, v in [-1, 1) (f16 too) and a mask: about a third of the keys
// masked (bool / u8 false, or -inf among additive values in [-2, 2)), and the
// mask's first row masks every key, so rows that see no key are checked.
test::Run make_run(DataType t, const Case& c, MaskKind kind, uint64_t seed) {
    test::Run run = {test::random_tensor(t, c.q, seed), test::random_tensor(t, c.k, seed + 1),
                     test::random_tensor(t, c.v, seed + 2)};
    if (kind == MaskKind::none) return run;
    const DataType mt = kind == MaskKind::boolean ? DataType::boolean : kind == MaskKind::u8 ? DataType::u8 : t;
    HostTensor m = test::random_tensor(t, c.mask, seed + 3, -2.0, 2.0);
    HostTensor mask(mt, c.mask);
    const size_t row = c.mask.rank() ? static_cast<size_t>(c.mask[c.mask.rank() - 1]) : 1;
    for (size_t i = 0; i < mask.count(); ++i) {
        const double r = m.get_as_double(i);
        // The first row masks every key when the mask has other rows.
        const bool masked = (i < row && row < mask.count()) || r < -2.0 / 3;
        if (kind == MaskKind::additive) mask.set_from_double(i, masked ? -kInf : r);
        else mask.set_from_double(i, masked ? 0.0 : (kind == MaskKind::u8 ? 1 + std::fmod(i, 7.0) : 1.0));
    }
    run.push_back(mask);
    return run;
}

std::vector<test::Run> make_runs(DataType t, const std::vector<Case>& cases, MaskKind kind, uint64_t seed = 1) {
    std::vector<test::Run> runs;
    for (const Case& c : cases) runs.push_back(make_run(t, c, kind, seed += 4));
    return runs;
}

// The setup of a node whose inputs have every dim dynamic.
test::OpSetup setup(const Attributes& a, MaskKind kind, DataType t, size_t mask_rank = 4) {
    std::vector<Layout> in(3, Layout(PartialShape::dynamic_of_rank(4), t));
    if (kind != MaskKind::none) {
        const DataType mt = kind == MaskKind::boolean ? DataType::boolean : kind == MaskKind::u8 ? DataType::u8 : t;
        in.emplace_back(PartialShape::dynamic_of_rank(mask_rank), mt);
    }
    return {"sdpa", a, in, {}};
}

// float exp and sums of up to 130 terms on the devices against double.
test::Tolerance tol(DataType t) {
    return t == DataType::f16 ? test::Tolerance{1e-2, 2e-3} : test::Tolerance{1e-4, 1e-5};
}

// The brief matrix: Sq 1/7/64, Sk 1/13/130, D 32/64/80, in a few shapes
// per attribute set (batches, grouped heads, Dv != D); one network per
// attribute set serves every shape for the dynamic impls.
std::vector<Case> cases(MaskShape m) {
    return {make_case(1, 2, 1, 1, 13, 32, 32, m), make_case(2, 4, 2, 7, 130, 64, 48, m),
            make_case(1, 3, 3, 64, 1, 80, 80, m), make_case(1, 2, 2, 64, 130, 80, 64, m),
            make_case(2, 1, 1, 7, 7, 32, 16, m)};
}

struct Variant {
    int64_t causal, zero;
    MaskKind mask;
    MaskShape shape;
};

const std::vector<Variant>& variants() {
    static const std::vector<Variant> v = {
        {0, 0, MaskKind::none, MaskShape::full},       {1, 0, MaskKind::none, MaskShape::full},
        {2, 0, MaskKind::none, MaskShape::full},       {2, 1, MaskKind::none, MaskShape::full},
        {0, 0, MaskKind::boolean, MaskShape::full},    {1, 1, MaskKind::boolean, MaskShape::padding},
        {2, 1, MaskKind::additive, MaskShape::square}, {0, 0, MaskKind::additive, MaskShape::full},
        {0, 1, MaskKind::u8, MaskShape::padding},
    };
    return v;
}

std::string describe(const Variant& v) {
    const char* masks[] = {"no mask", "bool mask", "u8 mask", "additive mask"};
    return "causal " + std::to_string(v.causal) + " zero_masked_rows " + std::to_string(v.zero) + " " +
           masks[static_cast<int>(v.mask)];
}

TEST(SdpaImpls, EveryImplMatchesTheReferenceOverShapesMasksAndCausalModes) {
    uint64_t seed = 1;
    for (DataType t : {DataType::f32, DataType::f16}) {
        for (const Variant& v : variants()) {
            SCOPED_TRACE(std::string(to_string(t)) + " " + describe(v));
            const size_t rank = v.shape == MaskShape::square ? 2 : 4;
            test::expect_impls_match_reference(
                setup(sdpa_attrs(v.causal, v.zero), v.mask, t, rank), make_runs(t, cases(v.shape), v.mask, seed += 100),
                tol(t), t == DataType::f32 ? std::vector<std::string>{} : test::kOptimisedCpuImpls);
        }
    }
}

// The whole matrix, Sq 1/7/64 x Sk 1/13/130 x D 32/64/80, under every
// attribute set, on the cpu impls (the OpenCL ones take it in
// SdpaDynamic.OclKernelFollowsTheWholeMatrixOnOneInstance).
std::vector<Case> matrix(MaskShape m) {
    std::vector<Case> out;
    for (int64_t sq : {1, 7, 64})
        for (int64_t sk : {1, 13, 130})
            for (int64_t d : {32, 64, 80}) out.push_back(make_case(2, 4, 2, sq, sk, d, d == 80 ? 48 : d, m));
    return out;
}

TEST(SdpaImpls, CpuImplsMatchTheReferenceOverTheWholeMatrix) {
    uint64_t seed = 5000;
    for (const Variant& v : variants()) {
        SCOPED_TRACE(describe(v));
        const size_t rank = v.shape == MaskShape::square ? 2 : 4;
        test::expect_impls_match_reference(setup(sdpa_attrs(v.causal, v.zero), v.mask, DataType::f32, rank),
                                           make_runs(DataType::f32, matrix(v.shape), v.mask, seed += 100),
                                           tol(DataType::f32), {}, {"cpu"});
    }
}

// The cpu loop's blocks: 32 query rows (a tail of one row scores by dot
// products, full blocks through the transposed keys), 64 keys (tails, one
// block exactly, thousands of keys), causal limits inside a block.
TEST(SdpaImpls, CpuLoopMatchesTheReferenceFromOneKeyToThousands) {
    std::vector<Case> cs;
    for (int64_t sk : {1, 63, 64, 65, 1000, 3000})
        for (int64_t sq : {1, 3, 33}) cs.push_back(make_case(1, 2, 1, sq, sk, 64, 64, MaskShape::square));
    for (int64_t causal : {0, 2}) {
        SCOPED_TRACE("causal " + std::to_string(causal));
        test::expect_impls_match_reference(setup(sdpa_attrs(causal, 1), MaskKind::additive, DataType::f32, 2),
                                           make_runs(DataType::f32, cs, MaskKind::additive, 77), tol(DataType::f32), {},
                                           {"cpu"});
    }
}

// ---- 3. one instance, changing shapes ---------------------------------------------

// A decode: one query over a key sequence that grows by one each step (a
// lower-right causal mask and a padding mask), revisits included; then a
// prefill whose length changes (Sq = Sk, upper-left causal), on every engine
// with dynamic and with static impls.
TEST(SdpaDynamic, OneInstanceFollowsADecodeAndAPrefillOnEveryEngine) {
    std::vector<Case> decode, prefill;
    for (int64_t n : {1, 2, 3, 4, 13, 16, 17, 64, 65, 130, 4, 4, 17})
        decode.push_back(make_case(1, 4, 2, 1, n, 32, 32, MaskShape::padding));
    for (int64_t n : {1, 7, 13, 64, 13, 13, 3, 64})
        prefill.push_back(make_case(2, 2, 2, n, n, 64, 64, MaskShape::full));
    for (const test::SequenceOptions& o : test::every_engine_and_mode(tol(DataType::f32))) {
        SCOPED_TRACE(o.engine + std::string(" ") + test::mode_name(o.mode));
        const Layout dyn4 = lay({1, 4, Dimension(), 32}), kv = lay({1, 2, Dimension(), 32});
        test::expect_sequence({"sdpa",
                               sdpa_attrs(2, 1),
                               {dyn4, kv, kv, Layout(PartialShape{1, 1, 1, Dimension()}, DataType::boolean)},
                               {}},
                              make_runs(DataType::f32, decode, MaskKind::boolean, 7), o);
        const Layout pre = lay({2, 2, Dimension(), 64});
        test::expect_sequence({"sdpa", sdpa_attrs(1, 0), {pre, pre, pre}, {}},
                              make_runs(DataType::f32, prefill, MaskKind::none, 9), o);
    }
}

// The OpenCL kernel's shape-agnostic build (every dim from shape_info) over
// the whole matrix on one instance per attribute set: 16-row query blocks
// with tails, 32-key tiles with tails, causal limits inside a tile.
TEST(SdpaDynamic, OclKernelFollowsTheWholeMatrixOnOneInstance) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    test::SequenceOptions o("ocl", test::Mode::dynamic_async);
    o.tol = tol(DataType::f32);
    o.impl_suffix = "_ocl_dynamic";
    uint64_t seed = 9000;
    for (const Variant& v : variants()) {
        SCOPED_TRACE(describe(v));
        const size_t rank = v.shape == MaskShape::square ? 2 : 4;
        test::expect_sequence(setup(sdpa_attrs(v.causal, v.zero), v.mask, DataType::f32, rank),
                              make_runs(DataType::f32, matrix(v.shape), v.mask, seed += 100), o);
    }
}

// Head sizes whose 32-key tile would not fit the device's local memory
// (D = Dv = 2048: 790 KB with 32 keys) run with fewer keys per tile where
// one key fits (PoCL's 512 KB: 8 keys); where even one key does not (D = Dv
// = 4096 on PoCL: 557 KB), the OpenCL impls decline and the host's serve.
TEST(SdpaDynamic, LargeHeadsTakeSmallerTilesOrTheHostOnOpenCl) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no ocl engine";
    const size_t local = OclDevice::from(*test::ocl_engine())->limits().local_mem_bytes;
    for (int64_t d : {2048, 4096}) {
        SCOPED_TRACE("D = Dv = " + std::to_string(d));
        const auto one_key = static_cast<size_t>(16 * (2 * d + 4) + 2 * d) * sizeof(float);
        test::SequenceOptions o("ocl", test::Mode::dynamic_async);
        o.tol = tol(DataType::f32);
        o.impl_suffix = local >= one_key ? "_ocl_dynamic" : "_cpu_opt_dynamic";
        const Layout l = lay({1, 1, Dimension(), d});
        std::vector<Case> cs;
        for (int64_t n : {1, 9, 20}) cs.push_back(make_case(1, 1, 1, n, n, d, d, MaskShape::full));
        test::expect_sequence({"sdpa", sdpa_attrs(1), {l, l, l}, {}}, make_runs(DataType::f32, cs, MaskKind::none, 3),
                              o);
    }
}

// ---- values computed by hand -------------------------------------------------------

std::vector<std::string> engines() {
    std::vector<std::string> e = {"cpu"};
    if (test::ocl_engine()) e.push_back("ocl");
    return e;
}

HostTensor run(const std::vector<HostTensor>& in, const Attributes& a, const std::string& engine) {
    std::vector<Layout> layouts;
    for (const HostTensor& t : in) layouts.push_back(t.layout());
    return test::run_once(test::single_node_program("sdpa", layouts, a), in, {}, engine);
}

HostTensor floats(const Shape& s, const std::vector<float>& v) { return HostTensor::from_floats(s, v); }

void expect_values(const HostTensor& y, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(y.count(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(y.get_as_double(i))) << what << " element " << i;
        else EXPECT_NEAR(y.get_as_double(i), want[i], 1e-5) << what << " element " << i;
    }
}

// q = 0: every visible key weighs the same, so each row is the mean of the
// v rows it sees. v = 1, 2, 3 over three keys.
TEST(SdpaValues, CausalModesAlignUpperLeftAndLowerRight) {
    const HostTensor v = floats({1, 1, 3, 1}, {1, 2, 3}), k = floats({1, 1, 3, 1}, {0, 0, 0});
    const HostTensor q2 = floats({1, 1, 2, 1}, {0, 0}), q4 = floats({1, 1, 4, 1}, {0, 0, 0, 0});
    const double nan = std::nan("");
    for (const std::string& e : engines()) {
        expect_values(run({q2, k, v}, sdpa_attrs(0), e), {2, 2}, e + " none");
        // upper-left: row i sees keys 0..i
        expect_values(run({q2, k, v}, sdpa_attrs(1), e), {1, 1.5}, e + " upper-left");
        // lower-right: row i sees keys 0..i+1 (Sk - Sq = 1)
        expect_values(run({q2, k, v}, sdpa_attrs(2), e), {1.5, 2}, e + " lower-right");
        // Sq = 4 > Sk = 3: lower-right row 0 sees no key; upper-left row 3 sees all three
        expect_values(run({q4, k, v}, sdpa_attrs(2, 0), e), {nan, 1, 1.5, 2}, e + " lower-right, longer query");
        expect_values(run({q4, k, v}, sdpa_attrs(2, 1), e), {0, 1, 1.5, 2}, e + " lower-right, zeroed");
        expect_values(run({q4, k, v}, sdpa_attrs(1), e), {1, 1.5, 2, 2}, e + " upper-left, longer query");
    }
}

// softmax(ln 3, 0) = (3/4, 1/4): y = 3/4 * 10 + 1/4 * 2 = 8. With scale 0 and
// D = 4 the scale is 1/2, so q . k0 = 2 ln 3 scores ln 3 again.
TEST(SdpaValues, ScaleZeroMeansOneOverSqrtD) {
    const float l3 = std::log(3.0f);
    const HostTensor v = floats({1, 1, 2, 1}, {10, 2});
    for (const std::string& e : engines()) {
        expect_values(run({floats({1, 1, 1, 1}, {1}), floats({1, 1, 2, 1}, {l3, 0}), v}, sdpa_attrs(0, 0, 1.0), e), {8},
                      e + " scale 1");
        expect_values(run({floats({1, 1, 1, 1}, {2}), floats({1, 1, 2, 1}, {l3, 0}), v}, sdpa_attrs(0, 0, 0.5), e), {8},
                      e + " scale 0.5");
        const float h = l3 / 2;
        expect_values(run({floats({1, 1, 1, 4}, {1, 1, 1, 1}), floats({1, 1, 2, 4}, {h, h, h, h, 0, 0, 0, 0}), v},
                          sdpa_attrs(), e),
                      {8}, e + " scale 0, D 4");
    }
}

// Four query heads over two kv heads: heads 0 and 1 read kv head 0 (v = 5),
// heads 2 and 3 read kv head 1 (v = 7); (h % Hk would give 5, 7, 5, 7.)
TEST(SdpaValues, QueryHeadReadsKvHeadHOverTheGroupSize) {
    const HostTensor q = floats({1, 4, 1, 1}, {1, 2, 3, 4}), k = floats({1, 2, 1, 1}, {1, 1});
    const HostTensor v = floats({1, 2, 1, 2}, {5, 50, 7, 70});
    for (const std::string& e : engines())
        expect_values(run({q, k, v}, sdpa_attrs(), e), {5, 50, 5, 50, 7, 70, 7, 70}, e);
}

// A bool mask [Sq, Sk] (row 1 masks both keys) and an additive one [Sk]
// (0, -inf, ln 3: weights 1/4, 0, 3/4), broadcast over batch and heads.
TEST(SdpaValues, MasksBroadcastAndFullyMaskedRowsGiveNanOrZero) {
    const HostTensor q = floats({1, 1, 2, 1}, {0, 0}), k = floats({1, 1, 2, 1}, {0, 0});
    const HostTensor v = floats({1, 1, 2, 1}, {4, 8});
    HostTensor keep(DataType::boolean, {2, 2});
    keep.set_from_double(0, 1);   // row 0 keeps key 0 only
    const double nan = std::nan("");
    const HostTensor q1 = floats({2, 1, 1, 1}, {0, 0}), k3 = floats({2, 1, 3, 1}, {0, 0, 0, 0, 0, 0});
    const HostTensor v3 = floats({2, 1, 3, 1}, {4, 8, 12, 1, 2, 3});
    const HostTensor add = floats({3}, {0, -std::numeric_limits<float>::infinity(), std::log(3.0f)});
    for (const std::string& e : engines()) {
        expect_values(run({q, k, v, keep}, sdpa_attrs(0, 0), e), {4, nan}, e + " bool, NaN");
        expect_values(run({q, k, v, keep}, sdpa_attrs(0, 1), e), {4, 0}, e + " bool, zeroed");
        expect_values(run({q1, k3, v3, add}, sdpa_attrs(), e), {0.25 * 4 + 0.75 * 12, 0.25 * 1 + 0.75 * 3},
                      e + " additive");
    }
}

// No key at all (Sk = 0) is a row whose every key is masked.
TEST(SdpaValues, NoKeysGiveNanOrZero) {
    const HostTensor q = floats({1, 1, 2, 2}, {1, 2, 3, 4});
    const HostTensor k(DataType::f32, {1, 1, 0, 2}), v(DataType::f32, {1, 1, 0, 3});
    const double nan = std::nan("");
    for (const std::string& e : engines()) {
        expect_values(run({q, k, v}, sdpa_attrs(0, 0), e), {nan, nan, nan, nan, nan, nan}, e + " NaN");
        expect_values(run({q, k, v}, sdpa_attrs(0, 1), e), {0, 0, 0, 0, 0, 0}, e + " zeroed");
    }
}

// Scores far apart (q . k = +-1000) stay finite: the softmax shifts by the
// row maximum, also across the key blocks of the devices' online softmax.
TEST(SdpaValues, LargeScoresDoNotOverflow) {
    const int64_t sk = 200;
    HostTensor k(DataType::f32, {1, 1, sk, 1}), v(DataType::f32, {1, 1, sk, 1});
    for (int64_t j = 0; j < sk; ++j) {
        k.set_from_double(static_cast<size_t>(j), j == 150 ? 1000.0 : -1000.0);
        v.set_from_double(static_cast<size_t>(j), static_cast<double>(j));
    }
    for (const std::string& e : engines())
        expect_values(run({floats({1, 1, 1, 1}, {1}), k, v}, sdpa_attrs(0, 0, 1.0), e), {150}, e);
}

// ---- ONNX import rules ---------------------------------------------------------------

ImportAttr int_attr(int64_t v) {
    ImportAttr a;
    a.kind = ImportAttr::Kind::Int;
    a.i = v;
    return a;
}

ImportAttr float_attr(double v) {
    ImportAttr a;
    a.kind = ImportAttr::Kind::Float;
    a.f = v;
    return a;
}

struct Imported {
    bool mapped = false;
    ImportResult out;
};

// Maps a node of `op_type` through the rule the loaded sdpa module declares.
Imported import(const std::string& op_type, int64_t opset, const std::map<std::string, ImportAttr>& attrs,
                const std::vector<std::optional<Layout>>& inputs) {
    const FoundImport f = test::registry()->find_import("onnx", op_type);
    EXPECT_NE(f.rule, nullptr) << op_type;
    if (!f.rule) return {};
    EXPECT_EQ(f.op->def.name, "sdpa");
    ImportNode n;
    n.name = "attn";
    n.op_type = op_type;
    n.opset = opset;
    n.attrs = attrs;
    for (const auto& l : inputs) {
        ImportInput in;
        in.present = l.has_value();
        if (l) in.layout = *l;
        n.inputs.push_back(in);
    }
    ImportContext c(n, f.op->def.name);
    Imported r;
    r.mapped = f.rule->map(c);
    r.out = c.out;
    return r;
}

const Layout kQ = lay({Dimension(), 8, Dimension(), 64}), kK = lay({Dimension(), 2, Dimension(), 64});

TEST(SdpaImport, AttentionMapsScaleCausalAndTheMask) {
    const Layout mask(PartialShape{Dimension(), 1, 1, Dimension()}, DataType::boolean);
    Imported r =
        import("Attention", 23, {{"is_causal", int_attr(1)}, {"scale", float_attr(0.125)}}, {kQ, kK, kK, mask});
    ASSERT_TRUE(r.mapped) << r.out.unsupported;
    EXPECT_EQ(r.out.op, "sdpa");
    EXPECT_EQ(r.out.attrs.get_int("causal"), 1);
    EXPECT_DOUBLE_EQ(r.out.attrs.get_float("scale"), 0.125);
    EXPECT_EQ(r.out.attrs.get_int("zero_masked_rows"), 1);   // ONNX's reference: a fully masked row is 0
    EXPECT_EQ(r.out.inputs, (std::vector<size_t>{0, 1, 2, 3}));
    // Defaults: no mask (an empty input name), scale 1/sqrt(D), not causal;
    // opset 24, head counts that agree with the 4-D shapes, float softmax.
    r = import("Attention", 24,
               {{"q_num_heads", int_attr(8)}, {"kv_num_heads", int_attr(2)}, {"softmax_precision", int_attr(1)}},
               {kQ, kK, kK, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
    ASSERT_TRUE(r.mapped) << r.out.unsupported;
    EXPECT_EQ(r.out.attrs.get_int("causal"), 0);
    EXPECT_DOUBLE_EQ(r.out.attrs.get_float("scale"), 0.0);
    EXPECT_EQ(r.out.inputs, (std::vector<size_t>{0, 1, 2}));
}

TEST(SdpaImport, AttentionThatSdpaCannotExpressIsUnsupportedWithTheReason) {
    const Layout q3 = lay({1, Dimension(), 512}), past = lay({1, 2, 9, 64});
    struct Row {
        std::string why;
        int64_t opset;
        std::map<std::string, ImportAttr> attrs;
        std::vector<std::optional<Layout>> inputs;
    };
    const std::vector<Row> rows = {
        {"opset 23", 22, {}, {kQ, kK, kK}},
        {"past_key", 23, {}, {kQ, kK, kK, std::nullopt, past, past}},
        {"nonpad_kv_seqlen",
         24,
         {},
         {kQ, kK, kK, std::nullopt, std::nullopt, std::nullopt, Layout({1}, DataType::i64)}},
        {"softcap", 23, {{"softcap", float_attr(30.0)}}, {kQ, kK, kK}},
        {"qk_matmul_output_mode 1", 23, {{"qk_matmul_output_mode", int_attr(1)}}, {kQ, kK, kK}},
        {"softmax_precision 11", 23, {{"softmax_precision", int_attr(11)}}, {kQ, kK, kK}},
        {"not 4-D", 23, {{"q_num_heads", int_attr(8)}, {"kv_num_heads", int_attr(2)}}, {q3, q3, q3}},
        {"q_num_heads 4", 23, {{"q_num_heads", int_attr(4)}}, {kQ, kK, kK}},
        {"kv_num_heads 2", 23, {{"kv_num_heads", int_attr(2)}}, {kQ, lay(PartialShape::dynamic_of_rank(4)), kK}},
        {"scale 0", 23, {{"scale", float_attr(0.0)}}, {kQ, kK, kK}},
        {"shorter", 23, {}, {lay({1, 8, 4, 64}), lay({1, 2, 9, 64}), lay({1, 2, 9, 64}), lay({4, 5})}},
        {"'foo'", 23, {{"foo", int_attr(1)}}, {kQ, kK, kK}},
    };
    for (const Row& row : rows) {
        const Imported r = import("Attention", row.opset, row.attrs, row.inputs);
        EXPECT_FALSE(r.mapped) << row.why;
        EXPECT_NE(r.out.unsupported.find(row.why), std::string::npos) << row.why << ": " << r.out.unsupported;
    }
}

TEST(SdpaImport, DynrtSdpaCarriesTheOpAttributes) {
    const Layout mask = lay({Dimension(), 8, Dimension(), Dimension()});
    Imported r = import("DynrtSdpa", 17,
                        {{"scale", float_attr(0.25)}, {"causal", int_attr(2)}, {"zero_masked_rows", int_attr(1)}},
                        {kQ, kK, kK, mask});
    ASSERT_TRUE(r.mapped) << r.out.unsupported;
    EXPECT_DOUBLE_EQ(r.out.attrs.get_float("scale"), 0.25);
    EXPECT_EQ(r.out.attrs.get_int("causal"), 2);
    EXPECT_EQ(r.out.attrs.get_int("zero_masked_rows"), 1);
    EXPECT_EQ(r.out.inputs, (std::vector<size_t>{0, 1, 2, 3}));
    r = import("DynrtSdpa", 17, {}, {kQ, kK, kK});
    ASSERT_TRUE(r.mapped);
    EXPECT_EQ(r.out.attrs.get_int("causal"), 0);
    EXPECT_EQ(r.out.inputs, (std::vector<size_t>{0, 1, 2}));
    r = import("DynrtSdpa", 17, {{"is_causal", int_attr(1)}}, {kQ, kK, kK});
    EXPECT_FALSE(r.mapped);
    EXPECT_NE(r.out.unsupported.find("is_causal"), std::string::npos) << r.out.unsupported;
}

}   // namespace
}   // namespace dynrt
