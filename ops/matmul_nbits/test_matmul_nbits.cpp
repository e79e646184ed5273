// matmul_nbits: the three parts of an op test (tests/support/op_test.hpp),
// then values worked out by hand (packing, zero points, the padded last block).
#include <cstdint>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

// The weight of one case: N columns of K codes of `bits`, in blocks of `block`.
struct Weight {
    int64_t k, n, bits, block;
    int64_t blocks() const { return (k + block - 1) / block; }
    int64_t blob() const { return block * bits / 8; }
    int64_t zp_row() const { return (blocks() * bits + 7) / 8; }
};

enum class Zp { none, packed, floats };

Attributes attrs_of(const Weight& w, Zp zp) {
    return test::attrs(
        {{"K", w.k}, {"N", w.n}, {"bits", w.bits}, {"block_size", w.block}, {"zero_points", zp != Zp::none}});
}

// The op with its weight as constants (as in a model): inputs 1.. are
// constant, random codes, scales, zero points and bias.
test::OpSetup setup(const Weight& w, Zp zp, bool bias, DataType t, uint64_t seed = 7) {
    test::OpSetup s{"matmul_nbits", attrs_of(w, zp), {Layout({Dimension(), w.k}, t)}, {}};
    auto add = [&](const Layout& l, HostTensor v) {
        s.constants[s.inputs.size()] = std::move(v);
        s.inputs.push_back(l);
    };
    const Shape codes{w.n, w.blocks(), w.blob()}, per_block{w.n * w.blocks()};
    add(Layout(PartialShape(codes), DataType::u8), test::random_tensor(DataType::u8, codes, seed, 0, 256));
    add(Layout(PartialShape(per_block), t), test::random_tensor(t, per_block, seed + 1, 0.01, 0.2));
    if (zp == Zp::packed) {
        const Shape zs{w.n, w.zp_row()};
        add(Layout(PartialShape(zs), DataType::u8), test::random_tensor(DataType::u8, zs, seed + 2, 0, 256));
    } else if (zp == Zp::floats) {
        add(Layout(PartialShape(per_block), t),
            test::random_tensor(t, per_block, seed + 2, 0, double(int64_t{1} << w.bits)));
    }
    if (bias) add(Layout(PartialShape({w.n}), t), test::random_tensor(t, Shape{w.n}, seed + 3));
    return s;
}

TEST(MatmulNbitsShape, OutputReplacesKByNAndMisfitWeightsAreNamed) {
    const Weight w{40, 5, 4, 16};   // 3 blocks of 8 bytes, the last one padded
    const Attributes a = attrs_of(w, Zp::none), az = attrs_of(w, Zp::packed);
    const Layout codes({5, 3, 8}, DataType::u8), scales({15}, DataType::f32), zp8({5, 2}, DataType::u8);
    const Layout rows({Dimension(), 40}, DataType::f32), out({Dimension(), 5}, DataType::f32);
    const Layout rows3({2, Dimension(1, 9), 40}, DataType::f16), out3({2, Dimension(1, 9), 5}, DataType::f16);
    const Layout scales16({15}, DataType::f16);
    test::expect_shapes(
        "matmul_nbits",
        {{{rows, codes, scales}, a, {out}},
         {{rows3, codes, scales16}, a, {out3}},
         {{rows, codes, scales, zp8, Layout({5}, DataType::f32)}, az, {out}},
         {{rows, codes, scales, Layout({15}, DataType::f32)}, az, {out}},   // float zero points
         {{rows, codes, scales, Layout({5}, DataType::f32)}, a, {out}},     // bias, no zero points
         {{Layout({2, 39}, DataType::f32), codes, scales}, a, {}, {"a", "last dim is not K = 40"}},
         {{rows, Layout({5, 3, 7}, DataType::u8), scales}, a, {}, {"b", "holds 105", "need 120"}},
         {{rows, Layout({5, 3, 8}, DataType::i8), scales}, a, {}, {"b", "must be u8"}},
         {{rows, codes, Layout({15}, DataType::f16)}, a, {}, {"scales", "of a's type f32"}},
         {{rows, codes, scales, Layout({5, 3}, DataType::u8)}, az, {}, {"zero_points", "need 10"}},
         {{rows, codes, scales, Layout({6}, DataType::f32)}, a, {}, {"bias", "need 5"}},
         {{Layout({2, 40}, DataType::i32), codes, scales}, a, {}, {"f32 or f16"}},
         {{rows, codes, scales}, attrs_of({40, 5, 3, 16}, Zp::none), {}, {"bits 3", "2, 4 and 8"}},
         {{rows, codes, scales}, attrs_of({40, 5, 4, 24}, Zp::none), {}, {"block_size 24", "power of two"}}});
}

// Every impl against the reference: 2, 4 and 8 bits, each zero-point form,
// with and without bias, K a whole number of blocks or not, N odd.
// Every impl against the reference: 2, 4 and 8 bits, each zero-point form,
// with and without bias, K a whole number of blocks or not, N odd. The
// OpenCL impls (a kernel build per case and shape) take the first three
// cases, which between them hold every kernel variant but float zero points;
// the cpu impls take all.
TEST(MatmulNbitsImpls, EveryImplMatchesTheReference) {
    const std::vector<std::vector<Shape>> rows = {{{1, 40}}, {{17, 40}}};
    struct Case {
        Weight w;
        Zp zp;
        bool bias;
    };
    const Weight w4{40, 5, 4, 16}, w2{40, 13, 2, 32}, w8{40, 3, 8, 16};
    const std::vector<Case> cases = {{w4, Zp::packed, true},  {w2, Zp::packed, false}, {w8, Zp::none, false},
                                     {w4, Zp::floats, false}, {w4, Zp::none, false},   {w8, Zp::packed, true}};
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        SCOPED_TRACE("bits " + std::to_string(c.w.bits) + " zp " + std::to_string(int(c.zp)) + " bias " +
                     std::to_string(c.bias));
        test::expect_impls_match_reference(setup(c.w, c.zp, c.bias, DataType::f32),
                                           test::random_runs(DataType::f32, rows), {}, {},
                                           i < 3 ? std::vector<std::string>{} : std::vector<std::string>{"cpu"});
    }
    // f16: the optimised cpu impl is f32 only; float zero points on OpenCL.
    test::expect_impls_match_reference(setup(w4, Zp::floats, true, DataType::f16),
                                       test::random_runs(DataType::f16, rows), {}, test::kOptimisedCpuImpls);
}

TEST(MatmulNbitsDynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t m : test::tail_sizes()) shapes.push_back({Shape{m, 40}});
    for (const test::SequenceOptions& o : test::every_engine_and_mode())
        test::expect_sequence(setup({40, 5, 4, 16}, Zp::packed, true, DataType::f32),
                              test::random_runs(DataType::f32, shapes), o);
}

// Values by hand: K = 18 in blocks of 16 (the second block holds 2 codes
// and 14 padding), N = 2, 4 bits, low nibble first, packed zero points.
TEST(MatmulNbitsValues, PackedCodesZeroPointsAndPaddedBlockDecodeByHand) {
    const Weight w{18, 2, 4, 16};
    test::OpSetup s{"matmul_nbits", attrs_of(w, Zp::packed), {Layout({Dimension(), 18}, DataType::f32)}, {}};
    HostTensor codes(DataType::u8, Shape{2, 2, 8});
    auto* c = codes.as<uint8_t>();
    c[0] = 0x21;    // column 0, block 0: codes 1, 2, then zeros
    c[8] = 0xF3;    // column 0, block 1: codes 3, 15
    c[16] = 0x07;   // column 1, block 0: code 7, then zeros
    c[24] = 0x10;   // column 1, block 1: codes 0, 1
    const HostTensor scales = HostTensor::from_floats(Shape{4}, {0.5f, 2.0f, 1.0f, 0.25f});
    HostTensor zp(DataType::u8, Shape{2, 1});
    zp.as<uint8_t>()[0] = 0x31;   // column 0: blocks' zero points 1, 3
    zp.as<uint8_t>()[1] = 0x08;   // column 1: 8, 0
    s.inputs.push_back(codes.layout());
    s.inputs.push_back(scales.layout());
    s.inputs.push_back(zp.layout());
    s.constants = {{1, codes}, {2, scales}, {3, zp}};
    std::vector<float> a(18, 0.0f);
    a[0] = 1;
    a[1] = 2;
    a[2] = 4;   // meets a code 0 in column 0 (weight (0 - 1) * 0.5)
    a[16] = 10;
    a[17] = -1;
    // Column 0: block 0 weights (1-1)*.5, (2-1)*.5, (0-1)*.5 ... (13 more -0.5s
    // meet a's zeros); block 1: (3-3)*2, (15-3)*2.
    const float y0 = 1 * 0.0f + 2 * 0.5f + 4 * -0.5f + 10 * 0.0f + -1 * 24.0f;
    // Column 1: block 0 (7-8)*1, (0-8)*1, (0-8)*1; block 1 (0-0)*.25, (1-0)*.25.
    const float y1 = 1 * -1.0f + 2 * -8.0f + 4 * -8.0f + 10 * 0.0f + -1 * 0.25f;
    const HostTensor x = HostTensor::from_floats(Shape{1, 18}, a);
    const HostTensor got = test::reference_outputs(s, {x}).at(0);
    ASSERT_EQ(got.shape(), (Shape{1, 2}));
    EXPECT_FLOAT_EQ(got.as<float>()[0], y0);
    EXPECT_FLOAT_EQ(got.as<float>()[1], y1);
    // The cpu impls on the same values (the OpenCL kernel is covered above).
    test::expect_impls_match_reference(s, {{x}}, {}, {}, {"cpu"});
}

}   // namespace
}   // namespace dynrt
