// recurrent: the shape-inference table (cells, directions, layouts, dynamic
// dims, every bad input named), every impl against the reference over cells
// x directions x layouts x sequence lengths x optional inputs, one instance
// following changing sequence lengths and batches, values computed by hand,
// and sequence lengths out of range on every engine.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace dynrt {
namespace {

const Dimension kDyn;

Layout lay(PartialShape s, DataType t = DataType::f32) { return Layout(std::move(s), t); }

Attributes rec(const std::string& cell, const std::string& direction = "forward",
               std::vector<std::pair<std::string, AttrValue>> extra = {}) {
    Attributes a = test::attrs({{"cell", cell}, {"direction", direction}});
    for (auto& [k, v] : extra) a.set(k, v);
    return a;
}

// ---- 1. shape inference ------------------------------------------------------

TEST(RecurrentShape, OutputsFollowLayoutAndEveryBadInputIsNamed) {
    const DataType i32 = DataType::i32, f16 = DataType::f16;
    const Layout x = lay({7, 2, 3}), xb = lay({2, 7, 3});
    const Layout w4 = lay({1, 20, 3}), r4 = lay({1, 20, 5}), w3 = lay({2, 15, 3}), r3 = lay({2, 15, 5});
    const Layout w1 = lay({1, 5, 3}), r1 = lay({1, 5, 5});
    const Attributes lstm = rec("lstm"), gru2 = rec("gru", "bidirectional"), rnn = rec("rnn", "reverse");
    const Attributes opt_seq_h0 = rec("rnn", "forward", {{"optional_inputs", std::vector<int64_t>{4, 5}}});
    std::vector<test::ShapeRow> rows = {
        // Y [seq, dirs, batch, H], Y_h and Y_c [dirs, batch, H]
        {{x, w4, r4}, lstm, {lay({7, 1, 2, 5}), lay({1, 2, 5}), lay({1, 2, 5})}},
        {{x, w3, r3}, gru2, {lay({7, 2, 2, 5}), lay({2, 2, 5})}},
        {{x, w1, r1}, rnn, {lay({7, 1, 2, 5}), lay({1, 2, 5})}},
        // layout 1: batch first everywhere
        {{xb, w4, r4},
         rec("lstm", "forward", {{"layout", int64_t{1}}}),
         {lay({2, 7, 1, 5}), lay({2, 1, 5}), lay({2, 1, 5})}},
        // dynamic seq and batch; hidden_size from the attribute when W and R are dynamic
        {{lay({kDyn, kDyn, 3}), w4, r4}, lstm, {lay({kDyn, 1, kDyn, 5}), lay({1, kDyn, 5}), lay({1, kDyn, 5})}},
        {{lay({kDyn, kDyn, 3}), lay({1, kDyn, 3}), lay({1, kDyn, kDyn})},
         rec("rnn", "forward", {{"hidden_size", int64_t{4}}}),
         {lay({kDyn, 1, kDyn, 4}), lay({1, kDyn, 4})}},
        // the batch from sequence_lens or initial_h when X's is dynamic; f16
        {{lay({kDyn, kDyn, 3}), w1, r1, lay({6}, i32), lay({1, kDyn, 5})},
         opt_seq_h0,
         {lay({kDyn, 1, 6, 5}), lay({1, 6, 5})}},
        {{lay({4, 2, 3}, f16), lay({1, 5, 3}, f16), lay({1, 5, 5}, f16)},
         rnn,
         {lay({4, 1, 2, 5}, f16), lay({1, 2, 5}, f16)}},
        // every optional input of an lstm
        {{x, w4, r4, lay({1, 40}), lay({2}, i32), lay({1, 2, 5}), lay({1, 2, 5}), lay({1, 15})},
         lstm,
         {lay({7, 1, 2, 5}), lay({1, 2, 5}), lay({1, 2, 5})}},
        // errors name the node and the field
        {{x, lay({1, 16, 3}), lay({1, 16, 5})},
         lstm,
         {},
         {"node 'node'", "field 'W'", "dim 1 is 16", "4 * hidden_size is 20"}},
        {{x, w4, r4}, rec("lstm", "forward", {{"hidden_size", int64_t{4}}}), {}, {"field 'W'", "dim 1 is 20", "is 16"}},
        {{x, lay({2, 20, 3}), lay({2, 20, 5})}, lstm, {}, {"field 'W'", "num_directions is 1"}},
        {{x, lay({1, 20, 4}), r4}, lstm, {}, {"field 'W'", "input_size is 3"}},
        {{x, w4, lay({1, 16, 5})}, lstm, {}, {"field 'R'", "dim 1 is 16"}},
        {{x, w4, r4}, rec("lstm", "sideways"), {}, {"direction", "sideways"}},
        {{x, w4, r4},
         rec("lstm", "forward", {{"activations", std::string("Sigmoid,Tanh,Swish")}}),
         {},
         {"field 'activations'", "Swish"}},
        {{x, w4, r4},
         rec("lstm", "forward", {{"activations", std::string("Sigmoid,Tanh")}}),
         {},
         {"field 'activations'", "3 per direction"}},
        {{x, w1, r1},
         rec("rnn", "forward", {{"activation_alpha", std::vector<double>{0.5}}}),
         {},
         {"field 'activation_alpha'"}},
        {{x, w4, r4, lay({1, 40}), lay({2}, DataType::f32)}, lstm, {}, {"field 'sequence_lens'", "i32 or i64"}},
        {{x, w4, r4, lay({1, 40}), lay({3}, i32)}, lstm, {}, {"field 'sequence_lens'", "batch_size is 2"}},
        {{x, w4, r4, lay({1, 30})}, lstm, {}, {"field 'B'", "2 * 4 * hidden_size is 40"}},
        {{x, w4, r4, lay({1, 40}), lay({2}, i32), lay({1, 3, 5})}, lstm, {}, {"field 'initial_h'", "batch_size is 2"}},
        {{x, w1, r1, lay({1, 10}), lay({2}, i32), lay({1, 2, 5}), lay({1, 2, 5})},
         rec("rnn"),
         {},
         {"field 'optional_inputs'", "lstm input"}},
        {{x, w1, r1, lay({2}, i32), lay({1, 2, 5})},
         rec("rnn", "forward", {{"optional_inputs", std::vector<int64_t>{5, 4}}}),
         {},
         {"field 'optional_inputs'", "increasing"}},
        {{x, w3, r3}, rec("gru", "bidirectional", {{"input_forget", int64_t{1}}}), {}, {"field 'input_forget'"}},
        {{x, w4, r4}, rec("lstm", "forward", {{"layout", int64_t{2}}}), {}, {"field 'layout'"}},
        {{lay({7, 2}), w4, r4}, lstm, {}, {"field 'X'", "rank 3"}},
        {{x, lay({1, 20, 3}, f16), r4}, lstm, {}, {"field 'W'", "type of X"}},
    };
    test::expect_shapes("recurrent", rows);
}

// ---- 2. every impl against the reference -------------------------------------

// One configuration: cell, attributes, sizes, which optional inputs it has.
struct Case {
    std::string name;
    Attributes attrs;
    size_t gates, dirs, input, hidden;
    bool b, seq, h0, c0, p;
    int64_t layout = 0;
};

// The setup: X, sequence_lens, initial_h, initial_c as run inputs (seq and
// batch dynamic), W, R, B, P as constants.
test::OpSetup setup_of(const Case& c, DataType t) {
    test::OpSetup s{"recurrent", c.attrs, {}, {}};
    const auto gh = static_cast<int64_t>(c.gates * c.hidden), H = static_cast<int64_t>(c.hidden);
    const auto D = static_cast<int64_t>(c.dirs), I = static_cast<int64_t>(c.input);
    std::vector<int64_t> slots;
    s.inputs.push_back(lay({kDyn, kDyn, I}, t));
    s.constants[1] = test::random_tensor(t, Shape{D, gh, I}, 101);
    s.constants[2] = test::random_tensor(t, Shape{D, gh, H}, 102);
    s.inputs.push_back(lay({D, gh, I}, t));
    s.inputs.push_back(lay({D, gh, H}, t));
    auto add = [&](bool present, int64_t slot, Layout l, bool constant) {
        if (!present) return;
        slots.push_back(slot);
        if (constant)
            s.constants[s.inputs.size()] = test::random_tensor(t, l.get_shape(), 100 + static_cast<uint64_t>(slot));
        s.inputs.push_back(std::move(l));
    };
    const PartialShape state = c.layout == 0 ? PartialShape{D, kDyn, H} : PartialShape{kDyn, D, H};
    add(c.b, 3, lay({D, 2 * gh}, t), true);
    add(c.seq, 4, lay({kDyn}, DataType::i32), false);
    add(c.h0, 5, lay(state, t), false);
    add(c.c0, 6, lay(state, t), false);
    add(c.p, 7, lay({D, 3 * H}, t), true);
    s.attrs.set("optional_inputs", slots);
    return s;
}

// A run of `seq` steps and `batch` entries: lengths in [0, seq] with the
// first entry full (the longest decides how many steps run).
test::Run run_of(const Case& c, DataType t, int64_t seq, int64_t batch, uint64_t seed) {
    const auto D = static_cast<int64_t>(c.dirs), H = static_cast<int64_t>(c.hidden);
    test::Run run{test::random_tensor(t,
                                      c.layout == 0 ? Shape{seq, batch, static_cast<int64_t>(c.input)}
                                                    : Shape{batch, seq, static_cast<int64_t>(c.input)},
                                      seed)};
    if (c.seq) {
        HostTensor lens = test::random_tensor(DataType::i32, Shape{batch}, seed + 1, 0, static_cast<double>(seq + 1));
        lens.as<int32_t>()[0] = static_cast<int32_t>(seq);
        run.push_back(lens);
    }
    const Shape state = c.layout == 0 ? Shape{D, batch, H} : Shape{batch, D, H};
    if (c.h0) run.push_back(test::random_tensor(t, state, seed + 2));
    if (c.c0) run.push_back(test::random_tensor(t, state, seed + 3));
    return run;
}

std::vector<Case> cases() {
    using V = std::vector<double>;
    return {
        {"lstm forward, every optional input", rec("lstm"), 4, 1, 3, 5, true, true, true, true, true},
        {"lstm bidirectional batch first, input_forget, clip",
         rec("lstm", "bidirectional", {{"input_forget", int64_t{1}}, {"clip", 0.7}, {"layout", int64_t{1}}}), 4, 2, 4,
         3, true, true, true, false, true, 1},
        {"lstm reverse, HardSigmoid Elu Softsign",
         rec("lstm", "reverse",
             {{"activations", std::string("HardSigmoid,Elu,Softsign")},
              {"activation_alpha", V{0.3, 0.8}},
              {"activation_beta", V{0.4}}}),
         4, 1, 2, 70, false, true, false, false, false},
        {"gru reverse", rec("gru", "reverse"), 3, 1, 3, 6, true, true, true, false, false},
        {"gru bidirectional linear_before_reset batch first",
         rec("gru", "bidirectional", {{"linear_before_reset", int64_t{1}}, {"layout", int64_t{1}}}), 3, 2, 2, 17, true,
         true, true, false, false, 1},
        {"rnn bidirectional Relu / LeakyRelu",
         rec("rnn", "bidirectional", {{"activations", std::string("Relu,LeakyRelu")}, {"activation_alpha", V{0.2}}}), 1,
         2, 3, 4, true, true, false, false, false},
        {"rnn forward ScaledTanh, clip, no bias",
         rec("rnn", "forward",
             {{"activations", std::string("ScaledTanh")},
              {"activation_alpha", V{1.5}},
              {"activation_beta", V{0.5}},
              {"clip", 0.9}}),
         1, 1, 1, 1, false, false, true, false, false},
    };
}

TEST(RecurrentImpls, EveryImplMatchesTheReferenceOverCellsDirectionsAndLengths) {
    const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1}, {5, 3}, {9, 2}};
    for (const Case& c : cases()) {
        SCOPED_TRACE(c.name);
        std::vector<test::Run> runs;
        uint64_t seed = 1;
        for (const auto& [seq, batch] : sizes) runs.push_back(run_of(c, DataType::f32, seq, batch, seed += 10));
        test::expect_impls_match_reference(setup_of(c, DataType::f32), runs, test::Tolerance{1e-4, 1e-5});
    }
}

TEST(RecurrentImpls, HalfPrecisionRunsOnTheReferenceAndOpenCl) {
    const Case c = cases()[3];   // gru reverse
    std::vector<test::Run> runs = {run_of(c, DataType::f16, 4, 3, 7), run_of(c, DataType::f16, 1, 2, 8)};
    test::expect_impls_match_reference(setup_of(c, DataType::f16), runs, std::nullopt, test::kOptimisedCpuImpls);
}

// ---- 3. one instance, changing shapes ----------------------------------------

TEST(RecurrentDynamic, OneInstanceFollowsChangingLengthsAndBatchesOnEveryEngine) {
    const Case c = cases()[1];   // lstm bidirectional, batch first, sequence_lens
    std::vector<test::Run> runs;
    const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {3, 2},  {13, 1}, {3, 2},
                                                             {3, 2}, {17, 3}, {1, 1},  {2, 2}};
    uint64_t seed = 50;
    for (const auto& [seq, batch] : shapes) runs.push_back(run_of(c, DataType::f32, seq, batch, seed += 10));
    for (const test::SequenceOptions& o : test::every_engine_and_mode(test::Tolerance{1e-4, 1e-5})) {
        SCOPED_TRACE(o.engine + std::string(" ") + test::mode_name(o.mode));
        test::expect_sequence(setup_of(c, DataType::f32), runs, o);
    }
}

// ---- values by hand ------------------------------------------------------------

// A reverse rnn of one unit: W 2, R 0.5, X [1, -1, 3] with length 2. Step t = 1
// first: h = tanh(-2); then t = 0: h = tanh(2 + 0.5 tanh(-2)); Y at t = 2 is 0.
TEST(RecurrentValues, ReverseRnnWithALengthMatchesTheEquations) {
    const HostTensor x = HostTensor::from_floats(Shape{3, 1, 1}, {1, -1, 3});
    const HostTensor lens = HostTensor::from_int64(DataType::i32, Shape{1}, {2});
    const std::map<size_t, HostTensor> constants = {{1, HostTensor::from_floats(Shape{1, 1, 1}, {2})},
                                                    {2, HostTensor::from_floats(Shape{1, 1, 1}, {0.5})}};
    const Attributes a = rec("rnn", "reverse", {{"optional_inputs", std::vector<int64_t>{4}}});
    const auto program = test::single_node_program(
        "recurrent", {x.layout(), lay({1, 1, 1}), lay({1, 1, 1}), lens.layout()}, a, constants);
    const double h1 = std::tanh(-2.0), h0 = std::tanh(2.0 + 0.5 * h1);
    std::vector<std::string> engines{"cpu"};
    if (test::ocl_engine()) engines.emplace_back("ocl");
    for (const std::string& e : engines) {
        SCOPED_TRACE(e);
        test::expect_close(
            test::run_once(program, {x, lens}, NetworkOptions{}, e),
            HostTensor::from_floats(Shape{3, 1, 1, 1}, {static_cast<float>(h0), static_cast<float>(h1), 0}),
            test::Tolerance{1e-5, 1e-6});
    }
}

// One lstm unit, W and R 0, B 0 except the cell gate's input bias 1: every
// step i = f = o = 0.5 and g = tanh(1), so c_t = 0.5 c_t-1 + 0.5 tanh(1) and
// h_t = 0.5 tanh(c_t); an entry of length 0 keeps initial_h (here 0).
TEST(RecurrentValues, LstmCellWithOnlyABiasFollowsTheRecurrenceByHand) {
    const HostTensor x = HostTensor::from_floats(Shape{3, 2, 1}, {1, 1, 1, 1, 1, 1});
    const HostTensor lens = HostTensor::from_int64(DataType::i64, Shape{2}, {3, 0});
    std::vector<float> bias(8, 0.0f);
    bias[3] = 1.0f;   // Wb of gate c (order i o f c)
    const std::map<size_t, HostTensor> constants = {{1, HostTensor(DataType::f32, Shape{1, 4, 1})},
                                                    {2, HostTensor(DataType::f32, Shape{1, 4, 1})},
                                                    {3, HostTensor::from_floats(Shape{1, 8}, bias)}};
    const Attributes a = rec("lstm", "forward", {{"optional_inputs", std::vector<int64_t>{3, 4}}});
    const auto program = test::single_node_program(
        "recurrent", {x.layout(), lay({1, 4, 1}), lay({1, 4, 1}), lay({1, 8}), lens.layout()}, a, constants);
    std::vector<float> want(6, 0.0f);
    double cell = 0.0;
    for (size_t t = 0; t < 3; ++t) {
        cell = 0.5 * cell + 0.5 * std::tanh(1.0);
        want[t * 2] = static_cast<float>(0.5 * std::tanh(cell));
    }
    std::vector<std::string> engines{"cpu"};
    if (test::ocl_engine()) engines.emplace_back("ocl");
    for (const std::string& e : engines) {
        SCOPED_TRACE(e);
        test::expect_close(test::run_once(program, {x, lens}, NetworkOptions{}, e),
                           HostTensor::from_floats(Shape{3, 1, 2, 1}, want), test::Tolerance{1e-5, 1e-6});
    }
}

// ---- bad sequence lengths -------------------------------------------------------

TEST(RecurrentErrors, LengthOutOfRangeIsAnErrorNamingTheNodeAndFieldOnEveryEngine) {
    const Case c = cases()[3];   // gru reverse with sequence_lens
    const test::OpSetup s = setup_of(c, DataType::f32);
    const auto program = test::single_node_program(s.op, s.inputs, s.attrs, s.constants);
    std::vector<std::pair<std::string, bool>> engines{{"cpu", true}, {"cpu", false}};
    if (test::ocl_engine()) engines.insert(engines.end(), {{"ocl", true}, {"ocl", false}});
    for (const auto& e : engines) {
        const std::string engine = e.first;   // not a structured binding: C++17 lambdas cannot capture one
        const bool dynamic = e.second;
        for (int64_t bad : {4, -1}) {
            SCOPED_TRACE(engine + (dynamic ? " dynamic " : " static ") + std::to_string(bad));
            test::Run run = run_of(c, DataType::f32, 3, 2, 5);
            run[1] = HostTensor::from_int64(DataType::i32, Shape{2}, {3, bad});
            NetworkOptions opts;
            opts.use_dynamic_impls = dynamic;
            opts.async_compile = false;
            const std::string msg = test::error_of([&] { test::run_once(program, run, opts, engine); });
            EXPECT_NE(msg.find("'node'"), std::string::npos) << msg;
            EXPECT_NE(msg.find("field 'sequence_lens'"), std::string::npos) << msg;
            EXPECT_NE(msg.find("sequence_lens[1] is " + std::to_string(bad)), std::string::npos) << msg;
        }
    }
}

}   // namespace
}   // namespace dynrt
