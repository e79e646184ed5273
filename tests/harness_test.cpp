// The op harness (`dynrt test-op`): sweep parsing and expansion, tolerances,
// a deliberately wrong impl being caught, and the reproduce command.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/op_sdk.hpp"
#include "harness.hpp"
#include "test_support.hpp"

using namespace dynrt;
using namespace dynrt::harness;

namespace {

std::vector<std::string> specs(const std::vector<Case>& cases) {
    std::vector<std::string> out;
    for (const Case& c : cases) out.push_back(c.spec());
    return out;
}

std::vector<Case> expand_text(const std::string& text) {
    std::vector<Case> out;
    for (const CaseTemplate& t : parse_shapes(text))
        for (const Case& c : expand(t)) out.push_back(c);
    return out;
}

}   // namespace

TEST(HarnessSweep, RangeWithStep_ExpandsEveryValue) {
    EXPECT_EQ(specs(expand_text("[2,1..7:3,16]")), (std::vector<std::string>{"[2,1,16]", "[2,4,16]", "[2,7,16]"}));
    EXPECT_EQ(specs(expand_text("[1|3|13]")), (std::vector<std::string>{"[1]", "[3]", "[13]"}));
}

TEST(HarnessSweep, TwoInlineRanges_GiveTheirProductLastFastest) {
    EXPECT_EQ(specs(expand_text("[1..2,5|6]")), (std::vector<std::string>{"[1,5]", "[1,6]", "[2,5]", "[2,6]"}));
}

TEST(HarnessSweep, SharedSymbols_KeepRelatedDimsEqual) {
    const auto cases = expand_text("x=[b,s,k] w=[n,k] b=1..4 s=1,3,13 k=16 n=8");
    ASSERT_EQ(cases.size(), 4u * 3u);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (const Case& c : cases) {
        ASSERT_EQ(c.inputs.size(), 2u);
        EXPECT_EQ(c.inputs[0].name, "x");
        EXPECT_EQ(c.inputs[1].name, "w");
        EXPECT_EQ(c.inputs[0].shape[2], c.inputs[1].shape[1]);   // K
        EXPECT_EQ(c.inputs[1].shape[0], 8);
        seen.insert({c.inputs[0].shape[0], c.inputs[0].shape[1]});
    }
    EXPECT_EQ(seen.size(), 12u);
}

TEST(HarnessSweep, SemicolonSeparatesCases_SpaceSeparatesInputs) {
    EXPECT_EQ(parse_shapes("[1,3];[2,5]").size(), 2u);
    const auto one = parse_shapes("[1,3] [2,5]");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].inputs.size(), 2u);
    EXPECT_EQ(one[0].inputs[1].name, "in1");
    // Spaces inside brackets are allowed.
    EXPECT_EQ(specs(expand_text("[2, 3]")), (std::vector<std::string>{"[2,3]"}));
}

TEST(HarnessSweep, ValueInputs_AreComputedFromSymbols) {
    const auto cases = expand_text("x=[b,6] t=i32{b,-1} b=2,3");
    ASSERT_EQ(cases.size(), 2u);
    ASSERT_TRUE(cases[1].inputs[1].values.has_value());
    EXPECT_EQ(*cases[1].inputs[1].values, (std::vector<int64_t>{3, -1}));
    EXPECT_EQ(cases[1].inputs[1].shape, Shape({2}));
    EXPECT_EQ(*cases[1].inputs[1].dtype, DataType::i32);
    EXPECT_EQ(cases[1].spec(), "x=[3,6] t=i32{3,-1}");
}

TEST(HarnessSweep, DtypeAndValueRange_RoundTripThroughSpec) {
    const auto cases = expand_text("d=[n,4] i=[3]:i64~-n..n n=5");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(*cases[0].inputs[1].dtype, DataType::i64);
    EXPECT_EQ(cases[0].inputs[1].range->first, -5);
    EXPECT_EQ(cases[0].inputs[1].range->second, 5);
    // The spec is concrete and parses back to the same case.
    const std::string spec = cases[0].spec();
    EXPECT_EQ(spec, "d=[5,4] i=[3]:i64~-5..5");
    EXPECT_EQ(specs(expand_text(spec)), (std::vector<std::string>{spec}));
}

TEST(HarnessSweep, BadText_IsAnErrorNamingTheProblem) {
    auto message = [](const std::string& text) {
        try {
            parse_shapes(text);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("x=[b,4]").find("symbol 'b' is used but not given values"), std::string::npos);
    EXPECT_NE(message("[4] q=1,2").find("symbol 'q' is given values but not used"), std::string::npos);
    EXPECT_NE(message("[5..2]").find("empty range"), std::string::npos);
    EXPECT_NE(message("[2,3").find("unbalanced"), std::string::npos);
    EXPECT_NE(message("[2,x!]").find("neither an integer nor a symbol"), std::string::npos);
    EXPECT_NE(message("[2]:f99").find("unknown dtype"), std::string::npos);
}

TEST(HarnessSweep, RandomCases_AreReproducibleAndWithinBounds) {
    const CaseTemplate t = parse_case("[b,1..64] b=1..4");
    const auto a = expand_random(t, 20, 7), b = expand_random(t, 20, 7);
    EXPECT_EQ(specs(a), specs(b));
    for (const Case& c : a) {
        EXPECT_GE(c.inputs[0].shape[0], 1);
        EXPECT_LE(c.inputs[0].shape[0], 4);
        EXPECT_GE(c.inputs[0].shape[1], 1);
        EXPECT_LE(c.inputs[0].shape[1], 64);
    }
}

TEST(HarnessSweep, SweepFile_GroupsCasesUnderAttributeSections) {
    const auto sections = parse_sweep_text(
        "# comment\n[4]\nattrs axis=1 exclusive=true\n[2,3]  # trailing\n[b,5] b=1,2\n\nattrs axis=0\n[7];[8]\n",
        "mem.txt");
    ASSERT_EQ(sections.size(), 3u);
    EXPECT_TRUE(sections[0].attrs.empty());
    EXPECT_EQ(sections[1].attrs,
              (std::vector<std::pair<std::string, std::string>>{{"axis", "1"}, {"exclusive", "true"}}));
    EXPECT_EQ(sections[1].cases.size(), 2u);
    EXPECT_EQ(sections[2].cases.size(), 2u);
    try {
        parse_sweep_text("[1]\n\n[2,y]\n", "bad.txt");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.context().file, "bad.txt");
        EXPECT_EQ(e.context().line, 3);
    }
}

TEST(HarnessAttrs, StringsAreTypedByTheSchema) {
    const std::vector<AttrSpec> schema = {attr_int("axis", 0), attr_bool("flag", false), attr_float("alpha", 1.0),
                                          attr_ints("pads", std::vector<int64_t>{0, 0}),
                                          attr_string("mode", std::nullopt, {"a", "b"})};
    const Attributes a =
        parse_attrs(schema, {{"axis", "-2"}, {"flag", "true"}, {"alpha", "0.25"}, {"pads", "[1,2]"}, {"mode", "b"}});
    EXPECT_EQ(a.get_int("axis"), -2);
    EXPECT_TRUE(a.get_bool("flag"));
    EXPECT_DOUBLE_EQ(a.get_float("alpha"), 0.25);
    EXPECT_EQ(a.get_ints("pads"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(a.get_string("mode"), "b");
    EXPECT_THROW(parse_attrs(schema, {{"mode", "a"}, {"nope", "1"}}), Error);
    EXPECT_THROW(parse_attrs(schema, {{"mode", "a"}, {"axis", "x"}}), Error);
    EXPECT_THROW(parse_attrs(schema, {{"mode", "c"}}), Error);   // not an allowed value
}

TEST(HarnessCompare, DefaultTolerances_DependOnTheDtype) {
    EXPECT_DOUBLE_EQ(default_tolerance(DataType::f32).rel, 1e-4);
    EXPECT_DOUBLE_EQ(default_tolerance(DataType::f32).abs, 1e-5);
    EXPECT_DOUBLE_EQ(default_tolerance(DataType::f16).rel, 1e-2);
    EXPECT_DOUBLE_EQ(default_tolerance(DataType::i64).rel, 0.0);
    EXPECT_DOUBLE_EQ(default_tolerance(DataType::i64).abs, 0.0);
}

TEST(HarnessCompare, ElementPassesWithinAbsPlusRelTimesReference) {
    const HostTensor ref = HostTensor::from_floats({3}, {100.f, 1.f, 0.f});
    // Allowed: 1e-5 + 1e-4 * |ref| = 0.01001, 0.00011, 0.00001.
    const HostTensor ok = HostTensor::from_floats({3}, {100.01f, 1.0001f, 0.000009f});
    const Comparison c = compare(ok, ref, {1e-4, 1e-5});
    EXPECT_TRUE(c.ok) << c.mismatch;
    EXPECT_NEAR(c.max_abs, 0.01, 1e-4);
    const HostTensor bad = HostTensor::from_floats({3}, {100.f, 1.f, 0.00002f});
    const Comparison d = compare(bad, ref, {1e-4, 1e-5});
    EXPECT_FALSE(d.ok);
    EXPECT_EQ(d.worst, 2u);
}

TEST(HarnessCompare, NaNMatchesOnlyNaN_ShapesAndIntegersMustMatchExactly) {
    const HostTensor nan1 = HostTensor::from_floats({2}, {NAN, 1.f});
    const HostTensor nan2 = HostTensor::from_floats({2}, {NAN, 1.f});
    EXPECT_TRUE(compare(nan1, nan2, {1e-4, 1e-5}).ok);
    EXPECT_FALSE(compare(HostTensor::from_floats({2}, {0.f, 1.f}), nan2, {1e-4, 1e-5}).ok);
    EXPECT_FALSE(compare(HostTensor::from_floats({1, 2}, {0.f, 1.f}), nan2, {1, 1}).ok);
    const HostTensor i1 = HostTensor::from_int64(DataType::i64, {2}, {5, 6});
    const HostTensor i2 = HostTensor::from_int64(DataType::i64, {2}, {5, 7});
    EXPECT_FALSE(compare(i1, i2, default_tolerance(DataType::i64)).ok);
    EXPECT_TRUE(compare(i1, i1, default_tolerance(DataType::i64)).ok);
}

namespace {

// The harness's cost of one execution of `op` for static shapes.
OpCost cost(const std::string& op, const std::vector<Shape>& in, const Shape& out, const Attributes& attrs = {}) {
    std::vector<Layout> li, lo{Layout(PartialShape(out), DataType::f32)};
    for (const Shape& s : in) li.emplace_back(PartialShape(s), DataType::f32);
    return cost_of(test::registry()->op(op).def, li, lo, attrs);
}

}   // namespace

TEST(HarnessCost, GemmConvolutionAndFullyConnectedCountMultiplyAdds) {
    // [2,3] x [3,4]: 2*4 outputs, 3 multiply-adds each.
    EXPECT_DOUBLE_EQ(cost("gemm", {Shape{2, 3}, Shape{3, 4}}, Shape{2, 4}).flops, 2.0 * 8 * 3);
    Attributes ta;
    ta.set("transpose_a", true);
    EXPECT_DOUBLE_EQ(cost("gemm", {Shape{3, 2}, Shape{3, 4}}, Shape{2, 4}, ta).flops, 2.0 * 8 * 3);
    // x [1,4,5,5], w [6,2,3,3] (groups 2): 2*6*3*3 outputs, 2*3*3 each.
    EXPECT_DOUBLE_EQ(cost("convolution", {Shape{1, 4, 5, 5}, Shape{6, 2, 3, 3}}, Shape{1, 6, 3, 3}).flops,
                     2.0 * 54 * 18);
    // x [3,5] (K 5), w [7,5]: 3*7 outputs, 5 each.
    EXPECT_DOUBLE_EQ(cost("fully_connected", {Shape{3, 5}, Shape{7, 5}}, Shape{3, 7}).flops, 2.0 * 21 * 5);
    // x [1,2,3,3], w [2,4,2,2]: each of 18 input elements meets 4*2*2 weights.
    EXPECT_DOUBLE_EQ(cost("deconvolution", {Shape{1, 2, 3, 3}, Shape{2, 4, 2, 2}}, Shape{1, 4, 4, 4}).flops,
                     2.0 * 18 * 16);
    // Bytes: every input and output once (f32).
    EXPECT_DOUBLE_EQ(cost("gemm", {Shape{2, 3}, Shape{3, 4}}, Shape{2, 4}).bytes, 4.0 * (6 + 12 + 8));
}

TEST(HarnessCost, OpsWithoutAHook_AreMemoryBound) {
    const OpCost c = cost("softmax", {Shape{4}}, Shape{4});
    EXPECT_DOUBLE_EQ(c.flops, 0.0);
    EXPECT_DOUBLE_EQ(c.bytes, 32.0);
}

TEST(HarnessCost, NoOpNameInTheHarness_TheHooksComeFromTheOps) {
    // The four compute-bound ops declare their cost; the harness knows no names.
    for (const char* op : {"fully_connected", "gemm", "convolution", "deconvolution"})
        EXPECT_TRUE(static_cast<bool>(test::registry()->op(op).def.cost)) << op;
}

TEST(HarnessRepro, CommandNamesOpAttrsCaseImplAndDevice) {
    Options opt;
    opt.op = "cumsum";
    opt.seed = 3;
    const Case c = expand(parse_case("x=[2,5]"))[0];
    EXPECT_EQ(repro_command(opt, "axis=1 exclusive=true", c, "cpu_ref_static", "cpu"),
              "dynrt test-op cumsum --attr axis=1 --attr exclusive=true --shapes \"x=[2,5]\" --seed 3 "
              "--impl cpu_ref_static --device cpu");
    const Case d = expand(parse_case("[2,5] [5]"))[0];
    Options plain;
    plain.op = "eltwise";
    EXPECT_EQ(repro_command(plain, "mode=add", d, "", ""),
              "dynrt test-op eltwise --attr mode=add --shapes \"[2,5] [5]\"");
}

namespace {

// An impl computing y = fn(x) element by element on the host.
class HostMap : public Impl {
public:
    HostMap(std::string name, bool dynamic, std::function<double(double)> fn)
        : name_(std::move(name)), dynamic_(dynamic), fn_(std::move(fn)) {}
    void execute(ExecContext& ctx) override {
        HostCall call(ctx);
        const size_t n = call.out_shape(0).count();
        for (size_t i = 0; i < n; ++i) call.set(0, i, fn_(call.get(0, i)));
    }
    std::string name() const override { return name_; }
    bool is_dynamic() const override { return dynamic_; }

private:
    std::string name_;
    bool dynamic_;
    std::function<double(double)> fn_;
};

// relu that is wrong for positive inputs: x + 0.5 instead of x.
std::unique_ptr<Impl> wrong_relu(bool dynamic) {
    return std::make_unique<HostMap>("wrong_relu", dynamic, [](double x) { return x > 0 ? x + 0.5 : 0.0; });
}

std::shared_ptr<Registry> registry_with_wrong_impls() {
    auto reg = std::make_shared<Registry>();
    const LoadReport lr = ModuleLoader::load_dirs(*reg, {test::module_dir()});
    EXPECT_TRUE(lr.failed.empty());
    for (bool dynamic : {false, true}) {
        RegisteredImpl r;
        r.op = "activation";
        r.entry.name = dynamic ? "cpu_wrong_dynamic" : "cpu_wrong_static";
        r.entry.impl_type = "cpu";
        r.entry.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
        r.entry.dtypes = {DataType::f32};
        // Only relu: every other func is "not applicable" to this impl.
        r.entry.validate = [](const KernelParams& p) {
            return p.attrs->get_string("func") == "relu" ? std::string() : std::string("relu only");
        };
        r.entry.create = [dynamic](const KernelParams&) { return wrong_relu(dynamic); };
        reg->add_impl(std::move(r));
    }
    return reg;
}

}   // namespace

TEST(HarnessRun, WrongImplRegisteredInProcess_IsReportedAsFailing) {
    auto reg = registry_with_wrong_impls();
    Options opt;
    opt.op = "activation";
    opt.devices = {"cpu"};   // the wrong impls are cpu impls; other devices have their own rows
    opt.attrs = {{"func", "relu"}};
    opt.shapes = {"[n,17] n=1,3"};
    const Report r = run(reg, opt);
    size_t wrong_rows = 0, good_rows = 0;
    for (const Row& row : r.rows) {
        if (row.impl.rfind("cpu_wrong", 0) == 0) {
            ++wrong_rows;
            EXPECT_EQ(row.status, "FAIL") << row.impl << " " << row.the_case.spec();
            EXPECT_NEAR(row.max_abs, 0.5, 1e-6);
            EXPECT_NE(row.repro.find("--impl " + row.impl), std::string::npos);
            EXPECT_NE(row.repro.find("--shapes \"[" + std::to_string(row.the_case.inputs[0].shape[0]) + ",17]\""),
                      std::string::npos)
                << row.repro;
        } else {
            ++good_rows;
            EXPECT_EQ(row.status, "pass") << row.impl << ": " << row.detail;
        }
    }
    EXPECT_EQ(wrong_rows, 4u);   // two impls, two cases
    // The module's own cpu impls (the reference and the optimised loops), two cases each.
    EXPECT_EQ(good_rows, 2 * (reg->impls("activation", "cpu").size() - 2));
    EXPECT_EQ(r.failed, 4u);
    // The table prints the reproduce line under each failure.
    const std::string table = format_table(r, false);
    EXPECT_NE(table.find("reproduce: dynrt test-op activation --attr func=relu"), std::string::npos);
    EXPECT_NE(to_json(r).find("\"failed\": 4"), std::string::npos);
}

namespace {

// y = 2x + offset: offset 0 is right, anything else wrong.
std::unique_ptr<Impl> doubler(double offset) {
    return std::make_unique<HostMap>(offset == 0 ? "doubler" : "wrong_doubler", false,
                                     [offset](double x) { return 2 * x + offset; });
}

}   // namespace

TEST(HarnessRun, ReferenceImpl_IsTheFlaggedOneWhateverItsNameOrPlace) {
    auto reg = std::make_shared<Registry>();
    ASSERT_TRUE(ModuleLoader::load_dirs(*reg, {test::module_dir()}).failed.empty());
    RegisteredOp op;
    op.def.name = "double_it";
    op.def.infer = [](const ShapeInferContext& c) { return std::vector<Layout>{c.inputs.at(0)}; };
    reg->add_op(op);
    // The oracle is neither named like the sdk's reference impls nor last in the
    // list: only ImplEntry::reference says which one it is.
    for (double offset : {0.0, 1.0}) {
        RegisteredImpl r;
        r.op = "double_it";
        r.entry.name = offset == 0 ? "oracle" : "z_wrong";
        r.entry.reference = offset == 0;
        r.entry.priority = offset == 0 ? kPriorityReference : 0;
        r.entry.impl_type = "cpu";
        r.entry.dtypes = {DataType::f32};
        r.entry.create = [offset](const KernelParams&) { return doubler(offset); };
        reg->add_impl(std::move(r));
    }
    Options opt;
    opt.op = "double_it";
    opt.shapes = {"[3,5]"};
    const Report r = run(reg, opt);
    EXPECT_EQ(r.reference, "oracle (cpu, static)");
    ASSERT_EQ(r.rows.size(), 2u);
    for (const Row& row : r.rows) EXPECT_EQ(row.status, row.impl == "oracle" ? "pass" : "FAIL") << row.impl;
}

TEST(HarnessRun, ReproduceCommandOfAFailure_ReproducesOnlyThatCase) {
    auto reg = registry_with_wrong_impls();
    Options opt;
    opt.op = "activation";
    opt.devices = {"cpu"};   // the wrong impls are cpu impls; other devices have their own rows
    opt.attrs = {{"func", "relu"}};
    opt.shapes = {"[n,17] n=1,3"};
    opt.impls = {"cpu_wrong_static"};
    const Report all = run(reg, opt);
    ASSERT_EQ(all.rows.size(), 2u);
    // Rerun with the options the reproduce command names.
    Options again = opt;
    again.shapes = {all.rows[1].the_case.spec()};
    const Report one = run(reg, again);
    ASSERT_EQ(one.rows.size(), 1u);
    EXPECT_EQ(one.rows[0].status, "FAIL");
    EXPECT_EQ(one.rows[0].the_case.spec(), all.rows[1].the_case.spec());
    EXPECT_DOUBLE_EQ(one.rows[0].max_abs, all.rows[1].max_abs);
}

TEST(HarnessRun, EveryImplIsForced_AndReportsWhatRan) {
    auto reg = registry_with_wrong_impls();
    Options opt;
    opt.op = "activation";
    opt.devices = {"cpu"};            // the wrong impls are cpu impls; other devices have their own rows
    opt.attrs = {{"func", "tanh"}};   // the wrong impls do not validate for tanh
    opt.shapes = {"[2,3];[5,1]"};
    const Report r = run(reg, opt);
    for (const Row& row : r.rows) {
        if (row.impl.rfind("cpu_wrong", 0) == 0) {
            EXPECT_EQ(row.status, "n/a");
            EXPECT_EQ(row.detail, "relu only");
            continue;
        }
        EXPECT_EQ(row.status, "pass") << row.detail;
        if (row.impl == "cpu_ref_dynamic") {
            // One network ran both cases, then revisited them.
            EXPECT_EQ(row.phase, "sequence+revisit");
        }
        EXPECT_FALSE(row.ran.empty());
    }
    EXPECT_EQ(r.failed, 0u);
    EXPECT_EQ(r.skipped, 4u);
}

TEST(HarnessRun, UnknownOpOrImpl_IsAnError) {
    Options opt;
    opt.op = "no_such_op";
    opt.shapes = {"[1]"};
    EXPECT_THROW(run(test::registry(), opt), Error);
    opt.op = "softmax";
    opt.impls = {"no_such_impl"};
    EXPECT_THROW(run(test::registry(), opt), Error);
}
