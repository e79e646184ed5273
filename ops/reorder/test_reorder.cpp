// reorder: storage order of osv16 against hand-computed indices, the round
// trip plain -> osv16 -> plain, and the OpenCL impls against the host.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/network.hpp"
#include "dynrt/registry.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

Attributes to(const std::string& f) { return test::attrs({{"format", f}}); }

TEST(ReorderLayout, Osv16_StorageIsSlicesOf16WithTheInnerDimsBetween) {
    const Shape s{20, 3};
    // element (o=17, r=2): slice 1, inner 2, lane 1 -> (1*3 + 2)*16 + 1
    EXPECT_EQ(storage_index(s, Format::osv16, 17 * 3 + 2), 81u);
    EXPECT_EQ(storage_index(s, Format::osv16, 0), 0u);
    EXPECT_EQ(storage_index(s, Format::osv16, 1 * 3 + 0), 1u);   // o=1 is lane 1 of slice 0
    EXPECT_EQ(storage_index(s, Format::plain, 17 * 3 + 2), 53u);
    const Layout l(PartialShape{20, 3}, DataType::f32, Format::osv16);
    EXPECT_EQ(l.storage_count(), 32u * 3u);   // dim 0 rounded up to 32
    EXPECT_EQ(l.bytes(), 32u * 3u * 4u);
    EXPECT_TRUE(is_blocked(Format::osv16));
    EXPECT_EQ(parse_format("osv16"), Format::osv16);
}

// Runs the reorder impl of `engine_type` directly and returns the raw storage.
std::vector<float> run_reorder(const std::string& engine_type, const HostTensor& x, Format from_plain_to) {
    EnginePtr eng = test::engine(engine_type);
    auto stream = eng->create_stream();
    const OpDefinition& def = test::registry()->op("reorder").def;
    const Attributes attrs = Attributes::validate(def.attrs, to(to_string(from_plain_to)));
    KernelParams p;
    p.node = "r";
    p.op = &def;
    p.attrs = &attrs;
    p.inputs = {x.layout()};
    p.outputs = {Layout(PartialShape(x.shape()), x.dtype(), from_plain_to)};
    p.engine = eng.get();
    const RegisteredImpl* pick = nullptr;
    for (const RegisteredImpl* c : test::registry()->impls("reorder", engine_type))
        if (c->entry.shape_type == ShapeType::static_shape && c->entry.check(p).empty()) pick = c;
    EXPECT_NE(pick, nullptr);
    if (!pick) return {};
    auto impl = pick->entry.create(p);
    auto in = std::make_shared<Memory>(eng->allocate(x.bytes()), x.layout());
    in->buffer()->write(*stream, x.data(), 0, x.bytes());
    auto out = std::make_shared<Memory>(eng->allocate(p.outputs[0].bytes()), p.outputs[0]);
    std::vector<float> junk(p.outputs[0].storage_count(), 99.0f);   // the tail must be overwritten
    out->buffer()->write(*stream, junk.data(), 0, junk.size() * 4);
    std::vector<MemoryPtr> ins{in}, outs{out};
    ExecContext ctx{*stream, p, ins, outs};
    impl->execute(ctx);
    stream->finish();
    std::vector<float> raw(p.outputs[0].storage_count());
    out->buffer()->read(*stream, raw.data(), 0, raw.size() * 4);
    return raw;
}

void expect_osv16(const std::vector<float>& raw, const HostTensor& x) {
    const int64_t O = x.shape()[0];
    const size_t inner = x.count() / static_cast<size_t>(O);
    const size_t slices = (static_cast<size_t>(O) + 15) / 16;
    ASSERT_EQ(raw.size(), slices * inner * 16);
    for (size_t sl = 0; sl < slices; ++sl)
        for (size_t r = 0; r < inner; ++r)
            for (size_t lane = 0; lane < 16; ++lane) {
                const size_t o = sl * 16 + lane;
                const float want =
                    o < static_cast<size_t>(O) ? static_cast<float>(x.get_as_double(o * inner + r)) : 0.0f;
                EXPECT_EQ(raw[(sl * inner + r) * 16 + lane], want) << "o " << o << " r " << r;
            }
}

TEST(ReorderHost, PlainToOsv16_PutsSixteenOutputFeaturesSideBySideAndZeroesTheTail) {
    const HostTensor x = test::random_tensor(DataType::f32, Shape{20, 2, 3}, 1);
    expect_osv16(run_reorder("cpu", x, Format::osv16), x);
}

TEST(ReorderNetwork, PlainToOsv16AndBack_GivesTheInput) {
    auto program = std::make_shared<Program>(test::registry());
    program->add_input("x", Layout(PartialShape{Dimension(), 5}, DataType::f32));
    program->add_node("blocked", "reorder", {"x"}, to("osv16"));
    program->add_node("back", "reorder", {"blocked"}, to("plain"));
    program->add_output("back");
    program->add_output("blocked");
    program->build();
    InferRequest req(Network::create(program, test::engine("cpu")));
    for (int64_t n : {1, 17, 33}) {
        const HostTensor x = test::random_tensor(DataType::f32, Shape{n, 5}, static_cast<uint64_t>(n));
        req.set_input("x", x);
        req.infer();
        EXPECT_EQ(test::max_abs_diff(req.get_output("back"), x), 0.0);
        // A blocked network output is handed back row-major.
        EXPECT_EQ(test::max_abs_diff(req.get_output("blocked"), x), 0.0);
        EXPECT_EQ(req.node_layout("blocked").format, Format::osv16);
    }
}

TEST(ReorderOcl, PlainToOsv16_MatchesTheHandComputedStorage) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    for (int64_t o : {1, 16, 20, 33}) {
        SCOPED_TRACE("O = " + std::to_string(o));
        const HostTensor x = test::random_tensor(DataType::f32, Shape{o, 7}, static_cast<uint64_t>(o));
        expect_osv16(run_reorder("ocl", x, Format::osv16), x);
    }
}

TEST(ReorderOcl, RoundTripInANetwork_GivesTheInputWithBothImplKinds) {
    const EnginePtr eng = test::ocl_engine();
    if (!eng) GTEST_SKIP() << "no ocl engine";
    auto program = std::make_shared<Program>(test::registry());
    program->add_input("x", Layout(PartialShape{Dimension(), 5}, DataType::f32));
    program->add_node("blocked", "reorder", {"x"}, to("osv16"));
    program->add_node("back", "reorder", {"blocked"}, to("plain"));
    program->add_output("back");
    program->build();
    for (bool dynamic : {true, false}) {
        NetworkOptions opt;
        opt.use_dynamic_impls = dynamic;
        InferRequest req(Network::create(program, eng, opt));
        for (int64_t n : {1, 17, 33, 17}) {
            const HostTensor x = test::random_tensor(DataType::f32, Shape{n, 5}, static_cast<uint64_t>(n));
            req.set_input("x", x);
            req.infer();
            EXPECT_EQ(test::max_abs_diff(req.get_output("back"), x), 0.0);
            const std::string impl = req.last_run().nodes.back().impl;
            EXPECT_NE(impl.find(dynamic ? "_ocl_dynamic" : "_ocl_static"), std::string::npos) << impl;
        }
    }
}

}   // namespace
}   // namespace dynrt
