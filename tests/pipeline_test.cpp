// YAML pipelines end to end: schedules, .npy I/O, prealloc precedence, the
// shipped configs against independent computations, every bad-input case (by
// message and location), and the `dynrt` CLI (exit codes, outputs, report).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "dynrt/module_loader.hpp"
#include "op_test.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;
using namespace dynrt::pipeline;

namespace {

const std::string kSource = DYNRT_SOURCE_DIR;
const std::string kFixtures = kSource + "/tests/data/pipelines/";

Pipeline load_text(const std::string& text, const std::string& base_dir = {}) {
    return load_pipeline_text(text, "pipe.yaml", base_dir, test::registry());
}

// Message of the Error that loading (and, if that succeeds, running) throws.
std::string error_of(const std::string& fixture) {
    try {
        const Pipeline p = load_pipeline(kFixtures + fixture, test::registry());
        RunOptions o;
        o.device = "cpu";
        o.use_env_prealloc = false;
        run_pipeline(p, o);
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << fixture << " gave no error";
    return {};
}

std::string error_of_text(const std::string& text) {
    try {
        load_text(text);
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
}

RunResult run(const Pipeline& p, size_t max_runs = 0) {
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    o.keep_outputs = true;
    o.max_runs = max_runs;
    return run_pipeline(p, o);
}

const HostTensor& constant(const Pipeline& p, const std::string& name) {
    return *p.program->nodes().at(p.program->node_index(name)).constant;
}

std::vector<double> values(const HostTensor& t) {
    std::vector<double> v(t.count());
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.get_as_double(i);
    return v;
}

void expect_near(const HostTensor& got, const Shape& shape, const std::vector<double>& want, double tol,
                 const std::string& what) {
    ASSERT_EQ(got.shape(), shape) << what;
    ASSERT_EQ(got.count(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got.get_as_double(i), want[i], tol) << what << " element " << i;
}

// y[r][n] = sum_k x[r][k] * w[n][k] + b[n], over the rows of x's leading dims.
std::vector<double> fc_ref(const std::vector<double>& x, size_t rows, size_t k, const std::vector<double>& w, size_t n,
                           const std::vector<double>* b) {
    std::vector<double> y(rows * n);
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < n; ++j) {
            double s = b ? (*b)[j] : 0.0;
            for (size_t i = 0; i < k; ++i) s += x[r * k + i] * w[j * k + i];
            y[r * n + j] = s;
        }
    return y;
}

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() /
               ("dynrt_pipeline_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    static int& counter() {
        static int c = 0;
        return c;
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}   // namespace

// ---- schedules ---------------------------------------------------------------

// Range text itself (`1..10:4`) is tested in tools_common_test.cpp.

static const char* kTwoSymbols = R"(
inputs:
  x: {dtype: f32, shape: [batch, seq]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
schedule:
)";

TEST(PipelineSchedule, EqualLengthListsAndRanges_AreZipped) {
    const Pipeline p = load_text(std::string(kTwoSymbols) +
                                 "  - {batch: [1, 2, 3], seq: 4..6}\n"
                                 "  - {batch: 2, seq: [1, 7]}\n");
    const std::vector<std::pair<int64_t, int64_t>> want = {{1, 4}, {2, 5}, {3, 6}, {2, 1}, {2, 7}};
    ASSERT_EQ(p.runs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(p.runs[i].symbols.at("batch"), want[i].first) << i;
        EXPECT_EQ(p.runs[i].symbols.at("seq"), want[i].second) << i;
        EXPECT_EQ(p.runs[i].shapes.at("x"), (Shape{want[i].first, want[i].second})) << i;
    }
    EXPECT_EQ(p.runs[3].entry, 1u);
}

TEST(PipelineSchedule, UnequalLengths_FailUnlessModeProduct) {
    const std::string msg = error_of_text(std::string(kTwoSymbols) + "  - {batch: [1, 2], seq: [1, 2, 3]}\n");
    EXPECT_NE(msg.find("pipe.yaml:8:5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cannot zip"), std::string::npos) << msg;

    const Pipeline p = load_text(std::string(kTwoSymbols) + "  - {batch: [1, 2], seq: [5, 6, 7], mode: product}\n");
    const std::vector<std::pair<int64_t, int64_t>> want = {{1, 5}, {1, 6}, {1, 7}, {2, 5}, {2, 6}, {2, 7}};
    ASSERT_EQ(p.runs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(p.runs[i].shapes.at("x"), (Shape{want[i].first, want[i].second})) << i;
}

TEST(PipelineSchedule, RevisitsAndRepeat_KeepTheWrittenOrder) {
    const Pipeline p = load_text(std::string(kTwoSymbols) +
                                 "  - {batch: 1, seq: [7, 128, 7]}\n"
                                 "  - {batch: 1, seq: 1..5:2, repeat: 2}\n");
    std::vector<int64_t> seqs;
    for (const auto& r : p.runs) seqs.push_back(r.symbols.at("seq"));
    EXPECT_EQ(seqs, (std::vector<int64_t>{7, 128, 7, 1, 3, 5, 1, 3, 5}));
}

TEST(PipelineSchedule, EntryWithoutEverySymbol_IsAnError) {
    const std::string msg = error_of_text(std::string(kTwoSymbols) + "  - {batch: 1, seq: 2}\n  - {seq: 3}\n");
    EXPECT_NE(msg.find("pipe.yaml:9:5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no value for symbol 'batch'"), std::string::npos) << msg;
}

TEST(PipelineSchedule, DynamicInputsWithoutSchedule_IsAnError) {
    const std::string msg = error_of_text(R"(
inputs:
  x: {dtype: f32, shape: [1, seq]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
)");
    EXPECT_NE(msg.find("no 'schedule'"), std::string::npos) << msg;
}

TEST(PipelineSchedule, StaticPipelineWithoutSchedule_RunsOnce) {
    const Pipeline p = load_text(R"(
inputs:
  x: {dtype: f32, shape: [2, 3]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
)");
    ASSERT_EQ(p.runs.size(), 1u);
    EXPECT_EQ(p.runs[0].shapes.at("x"), (Shape{2, 3}));
}

TEST(PipelineSchedule, Feed_SetsDataShapeAndSymbols) {
    const Pipeline p = load_pipeline(kFixtures + "feed.yaml", test::registry());
    ASSERT_EQ(p.runs.size(), 2u);
    EXPECT_EQ(p.runs[0].shapes.at("x"), (Shape{1, 2, 8}));
    EXPECT_EQ(p.runs[1].shapes.at("x"), (Shape{1, 5, 8}));
    EXPECT_EQ(p.runs[1].symbols.at("seq"), 5);
    const RunResult r = run(p);
    ASSERT_EQ(r.runs.size(), 2u);
    // The fixture holds 0.5 * i - 10 for i = 0..39 (written by hand with
    // Python's struct module); relu keeps the non-negative ones.
    std::vector<double> want(40);
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0, 0.5 * static_cast<double>(i) - 10.0);
    expect_near(r.runs[1].outputs.at("act"), Shape{1, 5, 8}, want, 1e-6, "relu of fed data");
}

TEST(PipelineSchedule, GeneratedInputs_AreReproduciblePerRunAndDifferBetweenRuns) {
    const Pipeline p = load_text(std::string(kTwoSymbols) + "  - {batch: 2, seq: [3, 3]}\n");
    const auto a0 = make_inputs(p, p.runs[0], 0), a0_again = make_inputs(p, p.runs[0], 0);
    const auto a1 = make_inputs(p, p.runs[1], 1);
    EXPECT_EQ(values(a0.at("x")), values(a0_again.at("x")));
    EXPECT_NE(values(a0.at("x")), values(a1.at("x")));
    for (double v : values(a0.at("x"))) {
        EXPECT_GE(v, -1.0);
        EXPECT_LT(v, 1.0);
    }
}

// ---- .npy ----------------------------------------------------------------------

TEST(PipelineNpy, RoundTrip_KeepsDtypeShapeAndBytes) {
    TempDir dir;
    const std::vector<std::pair<DataType, Shape>> cases = {
        {DataType::f32, Shape{2, 3, 4}},  {DataType::f16, Shape{5}},   {DataType::i32, Shape{3, 1}},
        {DataType::i64, Shape{}},         {DataType::u8, Shape{4, 4}}, {DataType::i8, Shape{7}},
        {DataType::boolean, Shape{2, 2}}, {DataType::f32, Shape{0, 3}}};
    int k = 0;
    for (const auto& [dtype, shape] : cases) {
        const HostTensor t = test::random_tensor(dtype, shape, 100 + k, -50, 50);
        const std::string path = dir / ("t" + std::to_string(k++) + ".npy");
        write_npy(path, t);
        const HostTensor back = read_npy(path);
        EXPECT_EQ(back.dtype(), dtype);
        EXPECT_EQ(back.shape(), shape);
        ASSERT_EQ(back.bytes(), t.bytes());
        if (t.bytes() > 0) {
            EXPECT_EQ(std::memcmp(back.data(), t.data(), t.bytes()), 0) << to_string(dtype);
        }
        // The preamble is padded to a multiple of 64 bytes (format 1.0).
        EXPECT_EQ((fs::file_size(path) - t.bytes()) % 64, 0u);
    }
}

TEST(PipelineNpy, HandWrittenFiles_AreRead) {
    // i32 [2,3] with 0..5, written by hand with Python's struct module.
    const HostTensor t = read_npy(kFixtures + "i32_2x3.npy");
    EXPECT_EQ(t.dtype(), DataType::i32);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.to_int64(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));

    // Format 2.0 (4-byte header length), rank 1, "<i8", keys in another order.
    std::string header = "{'shape': (2,), 'fortran_order': False, 'descr': '<i8'}";
    header += std::string(64 - (12 + header.size() + 1) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
    const uint32_t len = static_cast<uint32_t>(header.size());
    bytes.append(reinterpret_cast<const char*>(&len), 4);
    bytes += header;
    const int64_t data[2] = {-3, 1ll << 40};
    bytes.append(reinterpret_cast<const char*>(data), sizeof data);
    const HostTensor v2 = parse_npy(bytes, "v2.npy");
    EXPECT_EQ(v2.shape(), (Shape{2}));
    EXPECT_EQ(v2.to_int64(), (std::vector<int64_t>{-3, 1ll << 40}));
}

TEST(PipelineNpy, UnsupportedOrBrokenFiles_AreErrorsNamingTheFile) {
    auto make = [](const std::string& dict, size_t data_bytes) {
        std::string header = dict;
        header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
        std::string b = std::string("\x93NUMPY\x01\x00", 8);
        b += static_cast<char>(header.size() & 0xff);
        b += static_cast<char>(header.size() >> 8);
        return b + header + std::string(data_bytes, '\0');
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {make("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "big-endian"},
        {make("{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", 8), "unsupported dtype"},
        {make("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), "Fortran"},
        {make("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20), "does not match"},
        {make("{'descr': '<f4', 'shape': (2, 3), }", 24), "malformed .npy header"},
        {std::string("NUMPY"), "not a .npy file"}};
    for (const auto& [bytes, expected] : cases) {
        try {
            parse_npy(bytes, "case.npy");
            ADD_FAILURE() << "no error, expected " << expected;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("case.npy"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(read_npy(kFixtures + "no_such_file.npy"), Error);
}

// ---- prealloc precedence ---------------------------------------------------------

TEST(PipelinePrealloc, CliBeatsEnvBeatsYamlBeatsDefaults) {
    std::string source;
    auto s = resolve_prealloc(std::string("1 2 3 1.5"), "4 5 6 2.0", std::string("7 8 9 3.0"), &source);
    EXPECT_EQ(source, "cli");
    EXPECT_EQ(s.next_iters_preallocation_count, 1u);
    EXPECT_EQ(s.max_per_iter_size, 2u);

    s = resolve_prealloc(std::nullopt, "4 5 6 2.0", std::string("7 8 9 3.0"), &source);
    EXPECT_EQ(source, "env");
    EXPECT_EQ(s.max_per_dim_diff, 6u);
    EXPECT_FLOAT_EQ(s.buffers_preallocation_ratio, 2.0f);

    s = resolve_prealloc(std::nullopt, nullptr, std::string("7 8 9 3.0"), &source);
    EXPECT_EQ(source, "yaml");
    EXPECT_EQ(s.next_iters_preallocation_count, 7u);
    s = resolve_prealloc(std::nullopt, "", std::string("7 8 9 3.0"), &source);   // empty env = unset
    EXPECT_EQ(source, "yaml");

    s = resolve_prealloc(std::nullopt, nullptr, std::nullopt, &source);
    EXPECT_EQ(source, "default");
    EXPECT_EQ(s.next_iters_preallocation_count, 10u);
    EXPECT_EQ(s.max_per_iter_size, 16384u);
    EXPECT_EQ(s.max_per_dim_diff, 2u);
    EXPECT_FLOAT_EQ(s.buffers_preallocation_ratio, 1.1f);

    EXPECT_THROW(resolve_prealloc(std::string("1 2"), nullptr, std::nullopt), Error);
}

TEST(PipelinePrealloc, RunUsesYamlSettingsUnlessOverridden) {
    const Pipeline p = load_text(R"(
inputs:
  x: {dtype: f32, shape: [1, seq]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
schedule:
  - {seq: 1..3}
run: {prealloc: "0 0 0 1.0"}
)");
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    RunResult r = run_pipeline(p, o);
    EXPECT_EQ(r.prealloc_source, "yaml");
    EXPECT_TRUE(ShapePredictor::disabled(r.prealloc));
    o.prealloc = "5 100 1 1.0";
    r = run_pipeline(p, o);
    EXPECT_EQ(r.prealloc_source, "cli");
    EXPECT_EQ(r.prealloc.next_iters_preallocation_count, 5u);
}

// A convolution with more outputs than the cpu engine's direct loop takes
// (16; that loop serves every shape and builds nothing): its oneDNN dynamic
// impl plans per shape, so static builds pay (oneDNN's matmul serves every
// shape and builds none).
TEST(PipelineRun, AsyncCompileAfter_DecidesOnWhichRunOfAShapeItsBuildIsQueued) {
    const std::string text = R"(
inputs:
  x: {dtype: f32, shape: [1, 4, seq]}
  w: {dtype: f32, shape: [20, 4, 1]}
nodes:
  - {name: conv, op: convolution, inputs: [x, w]}
outputs: [conv]
schedule:
  - {seq: [1, 2, 3, 4, 2]}
)";
    RunOptions o;
    o.device = "cpu";
    // default (2): the growing part compiles nothing; the revisit of 2 queues one
    RunResult r = run_pipeline(load_text(text), o);
    EXPECT_EQ(r.totals.async_builds_queued, 1u);
    EXPECT_EQ(r.runs.back().stats.totals.async_builds_queued, 1u);
    // 1: every new shape queues its build on its first run
    r = run_pipeline(load_text(text + "run: {async_compile_after: 1}\n"), o);
    EXPECT_EQ(r.totals.async_builds_queued, 4u);
}

// ---- configs against independent computations ------------------------------------

TEST(PipelineConfigs, FcActivation_MatchesHandComputation) {
    const Pipeline p = load_text(R"(
name: fc_act
inputs:
  x: {dtype: f32, shape: [2, seq, 3]}
constants:
  w: {dtype: f32, shape: [2, 3], values: [1, -2, 0.5, 0, 1, 3]}
  b: {dtype: f32, values: [0.25, -1]}
nodes:
  - {name: fc, op: fully_connected, inputs: [x, w, b]}
  - {name: act, op: activation, inputs: [fc], attrs: {func: tanh}}
outputs: [act, fc]
schedule:
  - {seq: [1, 4, 2, 4]}
)");
    const RunResult r = run(p);
    ASSERT_EQ(r.runs.size(), 4u);
    const std::vector<double> w = {1, -2, 0.5, 0, 1, 3}, b = {0.25, -1};
    for (size_t k = 0; k < r.runs.size(); ++k) {
        const auto in = make_inputs(p, p.runs[k], k);
        const int64_t seq = p.runs[k].symbols.at("seq");
        const std::vector<double> fc = fc_ref(values(in.at("x")), 2 * seq, 3, w, 2, &b);
        std::vector<double> act(fc.size());
        for (size_t i = 0; i < fc.size(); ++i) act[i] = std::tanh(fc[i]);
        expect_near(r.runs[k].outputs.at("fc"), Shape{2, seq, 2}, fc, 1e-5, "fc run " + std::to_string(k));
        expect_near(r.runs[k].outputs.at("act"), Shape{2, seq, 2}, act, 1e-5, "act run " + std::to_string(k));
    }
}

TEST(PipelineConfigs, ShapeChain_ReshapesByComputedTargetAndCumsums) {
    const Pipeline p = load_pipeline(kSource + "/configs/shape_chain.yaml", test::registry());
    const RunResult r = run(p);
    ASSERT_EQ(r.runs.size(), p.runs.size());
    for (size_t k = 0; k < r.runs.size(); ++k) {
        const int64_t b = p.runs[k].symbols.at("batch"), s = p.runs[k].symbols.at("seq");
        const auto x = values(make_inputs(p, p.runs[k], k).at("x"));
        const HostTensor& target = r.runs[k].outputs.at("target");
        EXPECT_EQ(target.shape(), (Shape{3}));
        EXPECT_EQ(target.to_int64(), (std::vector<int64_t>{b, -1, 4})) << "run " << k;
        // [b, s, 16] seen as [b, 4s, 4]: running sums down axis 1.
        const int64_t rows = 4 * s;
        std::vector<double> want(x.size());
        for (int64_t bi = 0; bi < b; ++bi)
            for (int64_t c = 0; c < 4; ++c) {
                double acc = 0;
                for (int64_t row = 0; row < rows; ++row) {
                    const size_t i = static_cast<size_t>((bi * rows + row) * 4 + c);
                    acc += x[i];
                    want[i] = acc;
                }
            }
        expect_near(r.runs[k].outputs.at("cs"), Shape{b, rows, 4}, want, 1e-4, "cs run " + std::to_string(k));
    }
}

namespace {

// The decode block of configs/llm_decode.yaml, written out with plain loops.
std::vector<double> llm_block_ref(const Pipeline& p, const std::vector<double>& x, int64_t seq,
                                  const std::vector<double>& tok) {
    const auto c = [&](const char* n) { return values(constant(p, n)); };
    const auto bq = c("bq"), bo = c("bo"), b1 = c("b1"), b2 = c("b2");
    const auto q = fc_ref(tok, 1, 64, c("wq"), 64, &bq);
    std::vector<double> scores(seq);
    for (int64_t j = 0; j < seq; ++j) {
        double s = 0;
        for (int i = 0; i < 64; ++i) s += q[i] * x[j * 64 + i];
        scores[j] = 0.125 * s;
    }
    const double mx = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - mx));
    std::vector<double> att(64, 0.0);
    for (int64_t j = 0; j < seq; ++j)
        for (int i = 0; i < 64; ++i) att[i] += scores[j] / sum * x[j * 64 + i];
    auto r1 = fc_ref(att, 1, 64, c("wo"), 64, &bo);
    for (int i = 0; i < 64; ++i) r1[i] += tok[i];
    auto up = fc_ref(r1, 1, 64, c("w1"), 128, &b1);
    for (double& u : up) u = 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
    auto out = fc_ref(up, 1, 128, c("w2"), 64, &b2);
    for (int i = 0; i < 64; ++i) out[i] += r1[i];
    return out;
}

void check_llm_config(const std::string& file, size_t runs) {
    const Pipeline p = load_pipeline(kSource + "/configs/" + file, test::registry());
    const RunResult r = run(p, runs);
    ASSERT_EQ(r.runs.size(), runs);
    for (size_t k = 0; k < runs; ++k) {
        const auto in = make_inputs(p, p.runs[k], k);
        const int64_t seq = p.runs[k].symbols.at("seq");
        const auto want = llm_block_ref(p, values(in.at("x")), seq, values(in.at("tok")));
        expect_near(r.runs[k].outputs.at("out"), Shape{1, 1, 64}, want, 1e-4, file + " run " + std::to_string(k));
    }
}

// NCHW convolution with square strides/pads, optional bias.
std::vector<double> conv_ref(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                             const Shape& ws, const std::vector<double>* bias, int64_t stride, int64_t pad,
                             Shape& out_shape) {
    const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], o = ws[0], kh = ws[2], kw = ws[3];
    const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (wd + 2 * pad - kw) / stride + 1;
    out_shape = Shape{n, o, oh, ow};
    std::vector<double> y(static_cast<size_t>(n * o * oh * ow));
    for (int64_t b = 0; b < n; ++b)
        for (int64_t oc = 0; oc < o; ++oc)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    double s = bias ? (*bias)[oc] : 0.0;
                    for (int64_t ic = 0; ic < c; ++ic)
                        for (int64_t u = 0; u < kh; ++u)
                            for (int64_t v = 0; v < kw; ++v) {
                                const int64_t yy = i * stride - pad + u, xx = j * stride - pad + v;
                                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                                s += x[((b * c + ic) * h + yy) * wd + xx] * w[((oc * c + ic) * kh + u) * kw + v];
                            }
                    y[((b * o + oc) * oh + i) * ow + j] = s;
                }
    return y;
}

}   // namespace

TEST(PipelineConfigs, LlmDecode_FirstStepsMatchPlainLoops) { check_llm_config("llm_decode.yaml", 4); }

TEST(PipelineConfigs, Default_FirstStepsMatchPlainLoops) { check_llm_config("default.yaml", 3); }

TEST(PipelineConfigs, ConvNet_MatchesPlainLoopsAcrossBatchAndSize) {
    const Pipeline p = load_pipeline(kSource + "/configs/conv_net.yaml", test::registry());
    const size_t runs = 4;   // (1,8) (1,16) (1,13) (1,32)
    const RunResult r = run(p, runs);
    ASSERT_EQ(r.runs.size(), runs);
    const auto w1 = values(constant(p, "w1")), b1 = values(constant(p, "b1"));
    const auto w2 = values(constant(p, "w2")), ws = values(constant(p, "ws"));
    for (size_t k = 0; k < runs; ++k) {
        const HostTensor xin = make_inputs(p, p.runs[k], k).at("x");
        Shape s1, s2, ss;
        auto a = conv_ref(values(xin), xin.shape(), w1, Shape{8, 3, 3, 3}, &b1, 1, 1, s1);
        for (double& v : a) v = std::max(0.0, v);
        auto c2 = conv_ref(a, s1, w2, Shape{8, 8, 3, 3}, nullptr, 2, 1, s2);
        const auto sc = conv_ref(values(xin), xin.shape(), ws, Shape{8, 3, 1, 1}, nullptr, 2, 0, ss);
        ASSERT_EQ(s2, ss);
        for (size_t i = 0; i < c2.size(); ++i) {
            const double v = c2[i] + sc[i];
            c2[i] = v / (1.0 + std::exp(-v));
        }
        const int64_t size = p.runs[k].symbols.at("size");
        EXPECT_EQ(s2[2], (size - 1) / 2 + 1);
        expect_near(r.runs[k].outputs.at("out"), s2, c2, 1e-4, "conv_net run " + std::to_string(k));
    }
}

TEST(PipelineConfigs, EveryShippedConfig_LoadsAndRunsItsFirstEntries) {
    for (const auto& entry : fs::directory_iterator(kSource + "/configs")) {
        if (entry.path().extension() != ".yaml") continue;
        SCOPED_TRACE(entry.path().string());
        const Pipeline p = load_pipeline(entry.path().string(), test::registry());
        EXPECT_FALSE(p.runs.empty());
        const RunResult r = run(p, 3);
        EXPECT_EQ(r.runs.size(), std::min<size_t>(3, p.runs.size()));
        for (const auto& rec : r.runs) EXPECT_EQ(rec.outputs.size(), p.outputs.size());
    }
}

// ---- bad input ---------------------------------------------------------------------

struct BadCase {
    const char* fixture;
    const char* location;   // file:line:column
    std::vector<std::string> words;
};

TEST(PipelineErrors, EveryBadInput_NamesFileLocationAndCulprit) {
    const std::vector<BadCase> cases = {
        {"malformed.yaml", "malformed.yaml:3:36", {"malformed YAML"}},
        {"unknown_key.yaml", "unknown_key.yaml:7:1", {"unknown key 'shedule'", "did you mean 'schedule'"}},
        {"unknown_op.yaml", "unknown_op.yaml:6:20", {"unknown op 'fully_conected'", "'fully_connected'", "node 'fc'"}},
        {"unknown_attr.yaml", "unknown_attr.yaml:8:22", {"unknown attribute 'axes'", "node 'sm'", "softmax"}},
        {"ill_typed_attr.yaml", "ill_typed_attr.yaml:9:13", {"'axis' must be an integer", "'1.5'", "node 'sm'"}},
        {"bad_attr_value.yaml", "bad_attr_value.yaml:5:60", {"'gleu' is not allowed", "node 'act'"}},
        {"missing_input.yaml", "missing_input.yaml:6:44", {"input 'xx' refers to nothing", "node 'sum'"}},
        {"cycle.yaml", "cycle.yaml:", {"cycle"}},
        {"shape_mismatch.yaml", "shape_mismatch.yaml:7:5", {"node 'fc'", "[4,7]", "[1,?,8]"}},
        {"runtime_mismatch.yaml", "runtime_mismatch.yaml:6:5", {"run 1", "node 'sum'", "[2,3]", "[2,4]"}},
        {"missing_npy.yaml", "missing_npy.yaml:5:24", {"no_such_file.npy", "cannot open"}},
        {"wrong_dtype_npy.yaml", "wrong_dtype_npy.yaml:8:16", {"i32_2x3.npy", "holds i32", "declared f32"}},
        {"wrong_shape_npy.yaml", "wrong_shape_npy.yaml:9:16", {"f32_1x5x7.npy", "[1,5,7]", "does not fit"}},
        {"unknown_symbol.yaml", "unknown_symbol.yaml:9:6", {"unknown symbol 'sq'", "did you mean 'seq'"}},
        {"bad_range.yaml", "bad_range.yaml:8:11", {"bad range '8..1'"}},
    };
    for (const auto& c : cases) {
        const std::string msg = error_of(c.fixture);
        EXPECT_NE(msg.find(c.location), std::string::npos) << c.fixture << ": " << msg;
        for (const auto& w : c.words) EXPECT_NE(msg.find(w), std::string::npos) << c.fixture << ": " << msg;
    }
    // The cycle is reported at one of its nodes (a, b or c: lines 5-7).
    const std::string cycle = error_of("cycle.yaml");
    EXPECT_TRUE(cycle.find("cycle.yaml:5:") != std::string::npos || cycle.find("cycle.yaml:6:") != std::string::npos ||
                cycle.find("cycle.yaml:7:") != std::string::npos)
        << cycle;
}

TEST(PipelineErrors, SmallerMistakes_AreLocatedToo) {
    const std::string head = "inputs:\n  x: {dtype: f32, shape: [2, 4]}\nnodes:\n";
    struct Case {
        std::string yaml;
        std::string where;
        std::string word;
    };
    const std::vector<Case> cases = {
        {head + "  - {name: a, op: softmax, inputs: [x], attrs: {axis: \"1\"}}\noutputs: [a]\n",
         "pipe.yaml:4:", "must be an integer"},
        {head + "  - {name: a, op: softmax, inputs: [x]}\n  - {name: a, op: softmax, inputs: [x]}\noutputs: [a]\n",
         "pipe.yaml:5:12", "duplicate name 'a'"},
        {head + "  - {name: a, op: softmax, inputs: [x]}\noutputs: [b]\n", "pipe.yaml:5:11", "output 'b'"},
        {head + "  - {name: a, op: softmax, inputs: [x], atrs: {}}\noutputs: [a]\n", "pipe.yaml:4:41",
         "unknown key 'atrs'"},
        {head + "  - {name: a, op: parameter}\noutputs: [a]\n", "pipe.yaml:4:", "under 'inputs:'"},
        {"inputs:\n  x: {dtype: f33, shape: [2]}\nnodes: []\noutputs: [x]\n", "pipe.yaml:2:14", "unknown data type"},
        {"inputs:\n  x: {shape: [2, -3]}\nnodes: []\noutputs: [x]\n", "pipe.yaml:2:18", "a dim must be >= 0"},
        {"constants:\n  c: {dtype: i64, shape: [2], values: [1, 2, 3]}\nnodes: []\noutputs: [c]\n",
         "pipe.yaml:2:", "3 values for shape [2]"},
        {head + "  - {name: a, op: softmax, inputs: [x]}\noutputs: [a]\nrun: {seed: -1}\n", "pipe.yaml:6:", "run.seed"},
        {head + "  - {name: a, op: softmax, inputs: [x]}\noutputs: [a]\nrun: {prealloc: \"1 2\"}\n",
         "pipe.yaml:6:", "run.prealloc"},
        {head + "  - {name: a, op: softmax, inputs: [x]}\noutputs: [a]\nrun: {async_compile_after: 0}\n",
         "pipe.yaml:6:", "run.async_compile_after must be >= 1"},
        {"inputs: {x: {shape: [1, seq]}}\nnodes: []\noutputs: [x]\nschedule:\n  - {seq: [1, x]}\n",
         "pipe.yaml:5:", "must be integers"},
    };
    for (const auto& c : cases) {
        const std::string msg = error_of_text(c.yaml);
        EXPECT_NE(msg.find(c.where), std::string::npos) << c.yaml << "\n-> " << msg;
        EXPECT_NE(msg.find(c.word), std::string::npos) << c.yaml << "\n-> " << msg;
    }
}

TEST(PipelineErrors, CloseNames_FindTyposAndPrefixes) {
    const std::vector<std::string> ops = {"convolution", "concat", "cumsum", "fully_connected", "gemm"};
    EXPECT_EQ(close_names("fully_conected", ops).at(0), "fully_connected");
    EXPECT_EQ(close_names("conv", ops).at(0), "convolution");
    EXPECT_TRUE(close_names("zzzzzz", ops).empty());
}

// ---- the CLI -----------------------------------------------------------------------

namespace {

using Proc = test::CliResult;

Proc dynrt_cli_env(const std::string& env, const std::string& args) { return test::run_dynrt(args, env); }

Proc dynrt_cli(const std::string& args) { return dynrt_cli_env("", args); }

std::string modules_arg() { return " --modules-dir " + test::module_dir(); }

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}   // namespace

TEST(PipelineCli, BadCommandLines_ExitWith2AndHelpExitsWith0) {
    EXPECT_EQ(dynrt_cli("").code, 2);
    EXPECT_EQ(dynrt_cli("frobnicate").code, 2);
    EXPECT_EQ(dynrt_cli("run").code, 2);
    EXPECT_EQ(dynrt_cli("run x.yaml --no-such-option").code, 2);
    EXPECT_EQ(dynrt_cli("run x.yaml --repeat zero").code, 2);
    EXPECT_EQ(dynrt_cli("run x.yaml --prealloc \"1 2\"").code, 2);
    const Proc help = dynrt_cli("run --help");
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.out.find("--save-outputs"), std::string::npos);
    EXPECT_EQ(dynrt_cli("ops --help").code, 0);
    EXPECT_EQ(dynrt_cli("--help").code, 0);
}

TEST(PipelineCli, BadPipeline_ExitsWith1AndNamesTheLocation) {
    const Proc p = dynrt_cli("run " + kFixtures + "unknown_op.yaml" + modules_arg());
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find("unknown_op.yaml:6:20"), std::string::npos) << p.out;
    EXPECT_EQ(dynrt_cli("run " + kFixtures + "does_not_exist.yaml" + modules_arg()).code, 1);
}

// `dynrt run PIPELINE --device cpu`, saving the outputs into `out_dir` and the report to `report`.
Proc run_saving(const std::string& pipeline, const std::string& out_dir, const std::string& report) {
    return dynrt_cli("run " + pipeline + " --device cpu --save-outputs " + out_dir + " --report " + report +
                     modules_arg());
}

TEST(PipelineCli, Run_SavesOutputsAndWritesTheReport) {
    TempDir dir;
    const std::string out_dir = dir / "outs", report = dir / "report.json";
    const Proc p = run_saving(kSource + "/configs/shape_chain.yaml", out_dir, report);
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_NE(p.out.find("p50 ms"), std::string::npos) << p.out;
    const Pipeline pl = load_pipeline(kSource + "/configs/shape_chain.yaml", test::registry());
    // run_0 holds the first run's outputs: x [1,1,16] -> cs [1,4,4], target [1,-1,4].
    const HostTensor target = read_npy(out_dir + "/run_0/target.npy");
    EXPECT_EQ(target.to_int64(), (std::vector<int64_t>{1, -1, 4}));
    EXPECT_EQ(read_npy(out_dir + "/run_0/cs.npy").shape(), (Shape{1, 4, 4}));
    const size_t last = pl.runs.size() - 1;
    EXPECT_TRUE(fs::exists(out_dir + "/run_" + std::to_string(last) + "/cs.npy"));
    EXPECT_FALSE(fs::exists(out_dir + "/run_" + std::to_string(last + 1)));

    const std::string json = slurp(report);
    EXPECT_NE(json.find("\"runs\": ["), std::string::npos);
    EXPECT_NE(json.find("\"totals\": {"), std::string::npos);
    const size_t totals = json.find("\"totals\": {");
    for (const char* key : {"\"allocations\": ", "\"bytes_allocated\": ", "\"peak_bytes\": ", "\"impl_cache_hits\": ",
                            "\"impl_cache_misses\": ", "\"static_builds\": "})
        EXPECT_NE(json.find(key, totals), std::string::npos) << key;
    EXPECT_EQ(count_of(json, "\"index\": "), pl.runs.size());
    EXPECT_EQ(count_of(json, "\"submit_ms\": "), pl.runs.size() + 1);   // every run, and the totals
    EXPECT_NE(json.find("\"device\": \"cpu\""), std::string::npos);
    // Nothing of the staging is left next to the output folder.
    for (const auto& e : fs::directory_iterator(dir.path))
        EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();
}

TEST(PipelineCli, FailingRun_WritesNeitherReportNorOutputs) {
    TempDir dir;
    const std::string out_dir = dir / "outs", report = dir / "report.json";
    // Run 0 succeeds, run 1 fails: run 0's files must not appear either.
    const Proc p = run_saving(kFixtures + "runtime_mismatch.yaml", out_dir, report);
    EXPECT_EQ(p.code, 1) << p.out;
    EXPECT_NE(p.out.find("node 'sum'"), std::string::npos) << p.out;
    EXPECT_FALSE(fs::exists(report));
    EXPECT_FALSE(fs::exists(out_dir));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 0);
}

TEST(PipelineCli, Ops_ListsModulesOpsAndImplsAsJson) {
    const Proc p = dynrt_cli("ops --json" + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    for (const char* key :
         {"\"modules\": [", "\"fingerprint\": ", "\"failed\": [", "\"name\": \"cumsum\"", "\"type\": \"cpu\"",
          "\"shape\": \"dynamic\"", "\"shape\": \"static\"", "\"engines\": [\"cpu\"]"})
        EXPECT_NE(p.out.find(key), std::string::npos) << key << "\n" << p.out;
    EXPECT_EQ(count_of(p.out, "\"path\": "), test::registry()->modules().size());
    const Proc text = dynrt_cli("ops" + modules_arg());
    EXPECT_EQ(text.code, 0);
    EXPECT_NE(text.out.find("op cumsum"), std::string::npos) << text.out;
}

TEST(PipelineCli, OclWithoutAnOclDevice_IsAClearError) {
    if (test::registry()->has_engine("ocl")) {
        bool created = false;
        try {
            created = test::registry()->create_engine("ocl", EngineConfig{"ocl", false}) != nullptr;
        } catch (const std::exception&) {
        }
        if (created) GTEST_SKIP() << "an OpenCL device is available here";
    }
    const Proc p = dynrt_cli("run " + kSource + "/configs/shape_chain.yaml --device ocl" + modules_arg());
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find("no OpenCL device module/platform"), std::string::npos) << p.out;
}

// On the OpenCL device, a node no OpenCL impl serves (nonzero) runs on the
// host: `dynrt run` says so once for that node however many runs there are,
// names no node that has an OpenCL impl, and the report lists it.
TEST(PipelineCli, OclHostFallback_IsOneLineWithCountsOrOncePerNodeWithVerboseAndInTheReport) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL device";
    TempDir dir;
    const std::string yaml = dir / "fallback.yaml", report = dir / "report.json";
    // Integer pow stays on the host impl (saturating double math no kernel promises).
    std::ofstream(yaml) << R"(
inputs:
  x: {dtype: i32, shape: [n]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
  - {name: nz, op: eltwise, inputs: [act, act], attrs: {mode: pow}}
outputs: [nz]
schedule:
  - {n: [3, 5, 8, 5]}
)";
    const Proc p = dynrt_cli("run " + yaml + " --device ocl --report " + report + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_EQ(count_of(p.out, "1 node ran on the host: no impl on this device for their inputs (1 eltwise;"), 1u)
        << p.out;
    EXPECT_EQ(count_of(p.out, "node 'nz'"), 0u) << "without -v, no line per node\n" << p.out;
    const Proc v = dynrt_cli("run " + yaml + " --device ocl -v" + modules_arg());
    ASSERT_EQ(v.code, 0) << v.out;
    EXPECT_EQ(count_of(v.out, "node 'nz' (eltwise) has no impl on this device"), 1u) << v.out;
    EXPECT_EQ(count_of(v.out, "node 'act'"), 0u) << v.out;
    EXPECT_NE(slurp(report).find("\"host_fallback\": [\"nz\"]"), std::string::npos) << slurp(report);
    // On the cpu nothing is a fallback.
    const Proc cpu = dynrt_cli("run " + yaml + " --device cpu --report " + report + modules_arg());
    ASSERT_EQ(cpu.code, 0) << cpu.out;
    EXPECT_EQ(count_of(cpu.out, "runs on the host"), 0u) << cpu.out;
    EXPECT_NE(slurp(report).find("\"host_fallback\": []"), std::string::npos) << slurp(report);
}

// The summary and the report count the OpenCL programs built from source
// and loaded from dynrt's disk cache: a fresh cache folder builds, the same
// folder again loads them all.
TEST(PipelineCli, OclProgramBuilds_AreCountedInTheSummaryAndTheReport) {
    if (!test::ocl_engine()) GTEST_SKIP() << "no OpenCL device";
    TempDir dir;
    const std::string report = dir / "report.json";
    // dynrt's binary cache on, also on PoCL (which has a cache of its own).
    const std::string env =
        "DYNRT_OCL_BINARY_CACHE=on DYNRT_CACHE_DIR=" + (dir / "cache") + " POCL_CACHE_DIR=" + (dir / "pocl") + " ";
    const std::string cmd = "run " + kSource + "/configs/shape_chain.yaml --device ocl --report " + report;
    const Proc cold = dynrt_cli_env(env, cmd + modules_arg());
    ASSERT_EQ(cold.code, 0) << cold.out;
    const size_t at = cold.out.find("OpenCL programs");
    ASSERT_NE(at, std::string::npos) << cold.out;
    EXPECT_EQ(cold.out.find(" 0 built from source", at), std::string::npos) << cold.out;
    EXPECT_NE(slurp(report).find("\"ocl_programs\": {\"source_builds\": "), std::string::npos) << slurp(report);
    EXPECT_EQ(slurp(report).find("\"source_builds\": 0,"), std::string::npos) << slurp(report);
    const Proc warm = dynrt_cli_env(env, cmd + modules_arg());
    ASSERT_EQ(warm.code, 0) << warm.out;
    const size_t warm_at = warm.out.find("OpenCL programs");
    ASSERT_NE(warm_at, std::string::npos) << warm.out;
    EXPECT_EQ(warm.out.find(" 0 built from source, ", warm_at), warm.out.find(" 0 built", warm_at)) << warm.out;
    EXPECT_NE(warm.out.find(" 0 built from source, ", warm_at), std::string::npos) << warm.out;
    EXPECT_NE(slurp(report).find("\"source_builds\": 0,"), std::string::npos) << slurp(report);
    // On the cpu there are none.
    const Proc cpu = dynrt_cli_env(env, "run " + kSource + "/configs/shape_chain.yaml --device cpu" + modules_arg());
    ASSERT_EQ(cpu.code, 0) << cpu.out;
    EXPECT_EQ(cpu.out.find("OpenCL programs"), std::string::npos) << cpu.out;
}

TEST(PipelineCli, MissingModuleFolder_WarnsThenFailsOnTheUnknownOp) {
    TempDir dir;
    const Proc p = dynrt_cli("run " + kSource + "/configs/shape_chain.yaml --modules-dir " + (dir / "nothing_here"));
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find("warning"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("unknown op"), std::string::npos) << p.out;
}

// ---- hostile input (docs/errors.md, "hostile input") ---------------------------------

namespace {

// A .npy of `dict` followed by `data_bytes` zero bytes.
std::string npy_bytes(const std::string& dict, size_t data_bytes) {
    std::string header = dict;
    header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
    std::string b = std::string("\x93NUMPY\x01\x00", 8);
    b += static_cast<char>(header.size() & 0xff);
    b += static_cast<char>(header.size() >> 8);
    return b + header + std::string(data_bytes, '\0');
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}   // namespace

TEST(PipelineHostile, ScheduleExpandingPastTheCap_IsAnErrorNamingTheFieldAndTheCap) {
    const std::string repeat = error_of_text(std::string(kTwoSymbols) + "  - {batch: 1, seq: 2, repeat: 1000000000}\n");
    EXPECT_NE(repeat.find("pipe.yaml:8:32"), std::string::npos) << repeat;
    EXPECT_NE(repeat.find("field 'repeat'"), std::string::npos) << repeat;
    EXPECT_NE(repeat.find("limit of 1000000 runs"), std::string::npos) << repeat;

    const char* kThree = R"(
inputs:
  x: {dtype: f32, shape: [a, b, c]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
schedule:
  - {a: 1..1000000, b: 1..1000000, c: 1..1000000, mode: product}
)";
    const std::string product = error_of_text(kThree);
    EXPECT_NE(product.find("expands to 1000000000000000000 runs"), std::string::npos) << product;
    EXPECT_NE(product.find("limit of 1000000 runs"), std::string::npos) << product;
    EXPECT_NE(product.find("field 'schedule'"), std::string::npos) << product;

    // The cap counts over every entry.
    const std::string sum = error_of_text(std::string(kTwoSymbols) +
                                          "  - {batch: 1, seq: [1, 2]}\n"
                                          "  - {batch: 2, seq: 1..999999}\n");
    EXPECT_NE(sum.find("after 2 runs of earlier entries"), std::string::npos) << sum;
}

TEST(PipelineHostile, RangeEndingAtInt64Max_EndsAtTheBound) {
    const Pipeline p =
        load_text(std::string(kTwoSymbols) + "  - {batch: 1, seq: 9223372036854775805..9223372036854775807}\n");
    ASSERT_EQ(p.runs.size(), 3u);
    EXPECT_EQ(p.runs[2].symbols.at("seq"), INT64_MAX);
}

TEST(PipelineHostile, NpyHeaderClaimingMoreThanTheFileHolds_IsRefusedBeforeAllocating) {
    // 2^40 f32 elements (4 TiB) claimed by a 128-byte file: refused from the
    // header, nothing allocated (allocating first fails with bad_alloc).
    const std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 16);
    try {
        parse_npy(bytes, "huge.npy");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("huge.npy"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("4398046511104 bytes"), std::string::npos) << e.what();
    }
    // A count times itemsize past size_t is an overflow error, not a wrapped size.
    EXPECT_THROW(parse_npy(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1152921504606846976,), }", 0),
                           "wrap.npy"),
                 Error);
}

TEST(PipelineHostile, NonRegularOrOversizedFiles_AreRefusedWithoutReading) {
    TempDir dir;
    auto message = [](const std::function<void()>& f) {
        try {
            f();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    // A character device that never ends, a folder, a FIFO without writer.
    std::string m = message([] { read_npy("/dev/zero"); });
    EXPECT_NE(m.find("/dev/zero: the .npy file is a character device"), std::string::npos) << m;
    m = message([&] { load_pipeline(dir.path.string(), test::registry()); });
    EXPECT_NE(m.find("the pipeline file is a directory"), std::string::npos) << m;
    const std::string fifo = dir / "fifo.yaml";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    m = message([&] { load_pipeline(fifo, test::registry()); });
    EXPECT_NE(m.find("the pipeline file is a FIFO"), std::string::npos) << m;
    m = message([] { load_pipeline("/dev/zero", test::registry()); });
    EXPECT_NE(m.find("character device"), std::string::npos) << m;

    // Pipelines: 16 MiB at most.
    const std::string big = dir / "big.yaml";
    write_bytes(big, "# " + std::string(17u << 20, 'x') + "\n");
    m = message([&] { load_pipeline(big, test::registry()); });
    EXPECT_NE(m.find("more than the limit of 16777216 bytes"), std::string::npos) << m;

    // Tensors: DYNRT_MAX_TENSOR_FILE_BYTES sets the cap.
    const std::string npy = dir / "x.npy";
    write_bytes(npy, npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (64,), }", 256));
    ::setenv("DYNRT_MAX_TENSOR_FILE_BYTES", "200", 1);
    m = message([&] { read_npy(npy); });
    ::setenv("DYNRT_MAX_TENSOR_FILE_BYTES", "bogus", 1);
    const std::string bad_cap = message([&] { read_npy(npy); });
    ::unsetenv("DYNRT_MAX_TENSOR_FILE_BYTES");
    EXPECT_NE(m.find("more than the limit of 200 bytes"), std::string::npos) << m;
    EXPECT_NE(bad_cap.find("DYNRT_MAX_TENSOR_FILE_BYTES must be a positive byte count"), std::string::npos) << bad_cap;
    EXPECT_EQ(read_npy(npy).count(), 64u);
}

TEST(PipelineHostile, DeepYamlNestingAndAliasBombs_AreClearErrors) {
    std::string deep = "name: [";
    for (int i = 0; i < 100; ++i) deep += "[";
    deep += "x";
    for (int i = 0; i < 101; ++i) deep += "]";
    std::string m = error_of_text(deep + "\n");
    EXPECT_NE(m.find("YAML nesting deeper than 64 levels"), std::string::npos) << m;
    // Past yaml-cpp's own recursion guard too.
    std::string deeper(5000, '[');
    m = error_of_text(deeper + "\n");
    EXPECT_NE(m.find("YAML nesting deeper than 64 levels"), std::string::npos) << m;

    // Aliases: 9 levels of 10 references each are 10^9 nodes when walked.
    std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 9; ++i) {
        const std::string prev = "*a" + std::to_string(i - 1);
        bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int k = 0; k < 10; ++k) bomb += (k ? ", " : "") + prev;
        bomb += "]\n";
    }
    m = error_of_text(bomb);
    EXPECT_NE(m.find("more than 1000000 nodes"), std::string::npos) << m;
}

TEST(PipelineHostile, OutOfRangeSettings_AreLocatedErrors) {
    const char* kBase = R"(
inputs:
  x: {dtype: f32, shape: [2]}
constants:
  w: {dtype: f32, shape: [2], init: {random: {seed: SEED}}}
nodes:
  - {name: act, op: eltwise, inputs: [x, w], attrs: {mode: add}}
outputs: [OUT]
run: {compile_threads: THREADS}
)";
    auto text = [&](const std::string& seed, const std::string& threads, const std::string& out) {
        std::string s = kBase;
        s.replace(s.find("SEED"), 4, seed);
        s.replace(s.find("OUT"), 3, out);
        s.replace(s.find("THREADS"), 7, threads);
        return s;
    };
    EXPECT_NO_THROW(load_text(text("7", "4", "act")));
    std::string m = error_of_text(text("7", "100000", "act"));
    EXPECT_NE(m.find("run.compile_threads must be in 1..256, got 100000"), std::string::npos) << m;
    EXPECT_NE(m.find("field 'compile_threads'"), std::string::npos) << m;
    m = error_of_text(text("-1", "4", "act"));
    EXPECT_NE(m.find("init.random.seed must be >= 0, got -1"), std::string::npos) << m;
    EXPECT_NE(m.find("pipe.yaml:5:53"), std::string::npos) << m;
    m = error_of_text(text("7", "4", "act:12345678901234567890"));
    EXPECT_NE(m.find("output index 12345678901234567890 is out of range"), std::string::npos) << m;
    EXPECT_NE(m.find("field 'outputs'"), std::string::npos) << m;
    m = error_of_text(text("7", "4", "act:99999"));
    EXPECT_NE(m.find("out of range (at most 65535)"), std::string::npos) << m;
}

// Constant values and random ranges a dtype cannot hold used to saturate
// silently (i8 300 -> 127, f16 1e6 -> inf): refused, naming the value, the
// dtype's range and the field.
TEST(PipelineHostile, ValuesOutsideTheDtype_AreRefusedNamingTheField) {
    auto with = [](const std::string& constant, const std::string& input = "{dtype: f32, shape: [2]}") {
        return "inputs:\n  x: " + input + "\nconstants:\n  w: " + constant +
               "\nnodes:\n  - {name: act, op: eltwise, inputs: [x, x], attrs: {mode: add}}\noutputs: [act]\n";
    };
    const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
        {with("{dtype: i8, values: [1, 300]}"),
         {"constant 'w' value 1: 300 is outside the range of i8 (-128..127)", "field 'values'", "pipe.yaml:4:"}},
        {with("{dtype: u8, values: -1}"), {"-1 is outside the range of u8 (0..255)", "field 'values'"}},
        {with("{dtype: i32, values: [2.5]}"), {"2.5 is not a whole number", "field 'values'"}},
        {with("{dtype: f16, shape: [2], init: {fill: 1e6}}"),
         {"constant 'w' fill: 1000000 is outside the range of f16 (-65504..65504)", "field 'fill'"}},
        {with("{dtype: i32, shape: [2], init: {random: {low: 0, high: 1e10}}}"),
         {"constant 'w' init: random.high 10000000000 is outside the range of i32", "field 'high'"}},
        {with("{dtype: i8, shape: [2], init: {random: {low: -200, high: 0}}}"),
         {"random.low -200 is outside the range of i8 (-128..127)", "field 'low'"}},
        {with("{dtype: f32, values: [1]}", "{dtype: u8, shape: [2], random: {low: 0, high: 300}}"),
         {"input 'x': random.high 300 is outside the range of u8", "field 'high'"}},
    };
    for (const auto& [text, parts] : bad) {
        const std::string m = error_of_text(text);
        for (const std::string& part : parts) EXPECT_NE(m.find(part), std::string::npos) << part << "\n" << m;
    }
    // The extremes themselves are values of the dtype (high exclusive for integers).
    EXPECT_NO_THROW(load_text(with("{dtype: i8, values: [-128, 127]}")));
    EXPECT_NO_THROW(load_text(with("{dtype: u8, shape: [2], init: {random: {low: 0, high: 256}}}")));
    EXPECT_NO_THROW(load_text(with("{dtype: f16, shape: [2], init: {fill: 65504}}")));
    EXPECT_NO_THROW(
        load_text(with("{dtype: f32, values: [1.5]}", "{dtype: i8, shape: [2], random: {low: -128, high: 128}}")));
}

TEST(PipelineHostile, NonUtf8Names_GiveValidReportJson) {
    RunResult r;
    r.pipeline = "pipe\xff\xfe";
    r.file = "dir/\xc3(.yaml";
    RunRecord rec;
    rec.label = "seq=\x80";
    rec.shapes["x\xff"] = Shape{1, 2};
    NodeStats n;
    n.node = "node\xff";
    n.op = "op\xc0\xaf";
    n.impl = "impl";
    rec.stats.nodes.push_back(n);
    r.runs.push_back(rec);
    r.statistics.add(r.statistics.shape("x\xff[1,2]", 0), 1.5, false);
    const std::string json = report_json(r);
    for (unsigned char c : json) EXPECT_LT(c, 0x80) << "raw non-ASCII byte in the report";
    EXPECT_NE(json.find("\"pipeline\": \"pipe\\ufffd\\ufffd\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"node\": \"node\\ufffd\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"x\\ufffd\": [1, 2]"), std::string::npos) << json;
    EXPECT_NE(json.find("\"shapes\": \"x\\ufffd[1,2]\""), std::string::npos) << json;
}

TEST(PipelineHostile, FailingBeforeCommit_CommitsNoOutputsAndLeavesNoStaging) {
    TempDir dir;
    const Pipeline p = load_pipeline(kSource + "/configs/shape_chain.yaml", test::registry());
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    o.max_runs = 2;
    o.save_outputs_dir = dir / "outs";
    o.before_commit = [](const RunResult&) { throw Error("the report cannot be written"); };
    EXPECT_THROW(run_pipeline(p, o), Error);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 0);
    o.before_commit = nullptr;
    run_pipeline(p, o);
    EXPECT_TRUE(fs::exists(dir / "outs/run_1"));
}

TEST(PipelineHostile, Cli_BadValuesExit2_UnwritableDestinationsFailBeforeRunning) {
    const std::string cfg = kSource + "/configs/shape_chain.yaml";
    for (const char* repeat :
         {"-1", "=-1", "=0", "=18446744073709551615", "=99999999999999999999", "=1000001", "=1x"}) {
        const std::string arg =
            std::string(repeat)[0] == '=' ? std::string("--repeat") + repeat : std::string("--repeat ") + repeat;
        const Proc p = dynrt_cli("run " + cfg + " --device cpu " + arg + modules_arg());
        EXPECT_EQ(p.code, 2) << arg << ": " << p.out;
        EXPECT_EQ(p.out.find("vector"), std::string::npos) << p.out;
    }
    // Schedule x --repeat past the cap is a command-line error too.
    const Proc many = dynrt_cli("run " + cfg + " --device cpu --repeat 1000000" + modules_arg());
    EXPECT_EQ(many.code, 2) << many.out;
    EXPECT_NE(many.out.find("more than the limit of 1000000 runs"), std::string::npos) << many.out;

    TempDir dir;
    const Proc folder = dynrt_cli("run " + dir.path.string() + modules_arg());
    EXPECT_EQ(folder.code, 1) << folder.out;
    EXPECT_NE(folder.out.find("the pipeline file is a directory"), std::string::npos) << folder.out;

    // --report into a folder that does not exist: found before any run, so
    // --save-outputs commits nothing and leaves no staging folder.
    const std::string out_dir = dir / "outs";
    const Proc p = dynrt_cli("run " + cfg + " --device cpu --save-outputs " + out_dir + " --report " +
                             (dir / "missing/report.json") + modules_arg());
    EXPECT_EQ(p.code, 1) << p.out;
    EXPECT_NE(p.out.find("--report: the folder"), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("p50 ms"), std::string::npos) << p.out;
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 0);
    // --report naming a folder.
    const Proc q = dynrt_cli("run " + cfg + " --device cpu --report " + dir.path.string() + modules_arg());
    EXPECT_EQ(q.code, 1) << q.out;
    EXPECT_NE(q.out.find("--report: the path is a directory"), std::string::npos) << q.out;
}

TEST(PipelineHostile, Cli_DestinationsThatAreNoRegularFiles_AreRefusedBeforeRunningAndLeftAlone) {
    // A FIFO and links stand in for a device such as /dev/null: the rename
    // that writes the report would replace any of them.
    const std::string cfg = kSource + "/configs/shape_chain.yaml";
    TempDir dir;
    { std::ofstream(dir / "victim") << "precious"; }
    fs::create_directory(dir / "elsewhere");
    fs::create_symlink(dir / "victim", dir / "report_link.json");
    fs::create_symlink(dir / "elsewhere", dir / "outs_link");
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    const std::pair<std::string, std::string> cases[] = {
        {"--report " + (dir / "report_link.json"), "--report: the path is a symbolic link, not a regular file"},
        {"--report " + (dir / "fifo"), "--report: the path is a FIFO, not a regular file"},
        {"--save-outputs " + (dir / "outs") + " --report " + (dir / "fifo"), "--report: the path is a FIFO"},
        {"--save-outputs " + (dir / "outs_link"), "--save-outputs: the path exists and is a symbolic link"},
        {"--save-outputs " + (dir / "outs_link") + "/", "--save-outputs: the path exists and is a symbolic link"},
        {"--save-outputs " + (dir / "fifo"), "--save-outputs: the path exists and is a FIFO, not a directory"},
    };
    for (const auto& [args, message] : cases) {
        const Proc p = dynrt_cli("run " + cfg + " --device cpu " + args + modules_arg());
        EXPECT_EQ(p.code, 1) << args << ": " << p.out;
        EXPECT_NE(p.out.find(message), std::string::npos) << args << ": " << p.out;
        EXPECT_EQ(p.out.find("p50 ms"), std::string::npos) << args << ": it ran: " << p.out;
    }
    EXPECT_TRUE(fs::is_symlink(dir / "report_link.json"));
    EXPECT_EQ(fs::read_symlink(dir / "report_link.json"), fs::path(dir / "victim"));
    EXPECT_EQ(slurp(dir / "victim"), "precious");
    EXPECT_TRUE(fs::is_symlink(dir / "outs_link"));
    EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
    struct stat st {};
    EXPECT_TRUE(::lstat((dir / "fifo").c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
    // Nothing else appeared: no outputs, staging folders or temporary files.
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir.path)) names.insert(e.path().filename().string());
    EXPECT_EQ(names, (std::set<std::string>{"victim", "elsewhere", "report_link.json", "outs_link", "fifo"}));
}

// ---- models (docs/onnx.md, "Running a model") ----------------------------------------

namespace {

const std::string kReluModel = "/usr/share/libonnx-testdata/data/node/test_relu/model.onnx";

bool have_onnx_runs() { return fs::exists(kReluModel) && dynrt_cli("onnx-test --help").code == 0; }

}   // namespace

TEST(PipelineModel, RunModel_OneRunPerShapesAndErrorsNameTheInputAndDim) {
    if (!have_onnx_runs()) GTEST_SKIP() << "no ONNX support or no node-test data";
    TempDir dir;
    const std::string report = dir / "report.json";
    // test_relu declares x: f32[3,4,5]: one run without --shapes, two with two.
    Proc p = dynrt_cli("run " + kReluModel + " --device cpu --report " + report + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_EQ(count_of(slurp(report), "\"index\": "), 1u);
    // Load, compile and the first run are reported on their own.
    for (const char* key : {"\"load_ms\": ", "\"compile_ms\": ", "\"first_run_ms\": "})
        EXPECT_EQ(count_of(slurp(report), key), 1u) << key;
    EXPECT_NE(p.out.find("load (parse + build)"), std::string::npos) << p.out;
    p = dynrt_cli("run " + kReluModel + " --device cpu --shapes \"x=[3,4,5]\" --shapes \"x=[3,4,5]\" --report " +
                  report + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    EXPECT_EQ(count_of(slurp(report), "\"index\": "), 2u);
    // A static dim given another value, an unknown input, a malformed option.
    p = dynrt_cli("run " + kReluModel + " --device cpu --shapes \"x=[3,4,6]\"" + modules_arg());
    EXPECT_EQ(p.code, 1);
    EXPECT_NE(p.out.find(kReluModel + ": input 'x': run 0: --shapes gives [3,4,6], which does not fit the declared "
                                      "[3,4,5] at dim 2"),
              std::string::npos)
        << p.out;
    // A name the model lacks is a bad command line (exit 2) naming what it has.
    p = dynrt_cli("run " + kReluModel + " --device cpu --shapes \"y=[1]\"" + modules_arg());
    EXPECT_EQ(p.code, 2);
    for (const char* part : {"'y' is neither an input nor a dynamic dim of the model", "its inputs: x;"})
        EXPECT_NE(p.out.find(part), std::string::npos) << p.out;
    EXPECT_EQ(dynrt_cli("run " + kReluModel + " --shapes \"x=3,4,5\"" + modules_arg()).code, 2);
    EXPECT_EQ(dynrt_cli("run " + kReluModel + " --input-range x=1" + modules_arg()).code, 2);
    EXPECT_EQ(dynrt_cli("run " + kSource + "/configs/shape_chain.yaml --shapes \"x=[1]\"" + modules_arg()).code, 2);
}

TEST(PipelineModel, YamlModelKey_TakesGraphInputsAndOutputsFromTheModel) {
    if (!have_onnx_runs()) GTEST_SKIP() << "no ONNX support or no node-test data";
    const std::string yaml = "model: " + kReluModel +
                             "\ninputs: {x: {random: {low: -2, high: 2}}}\n"
                             "schedule:\n  - {shapes: {x: [3, 4, 5]}}\n  - {repeat: 2}\n";
    const Pipeline p = load_pipeline_text(yaml, "pipe.yaml", ".", test::registry());
    ASSERT_EQ(p.inputs.size(), 1u);
    EXPECT_EQ(p.inputs[0].name, "x");
    EXPECT_EQ(p.inputs[0].low, -2);
    EXPECT_EQ(p.outputs, std::vector<std::string>{"y"});
    ASSERT_EQ(p.runs.size(), 3u);
    EXPECT_EQ(p.runs[0].shapes.at("x"), (Shape{3, 4, 5}));
    RunOptions opt;
    opt.device = "cpu";
    opt.keep_outputs = true;
    const RunResult r = run_pipeline(p, opt);
    ASSERT_EQ(r.runs.size(), 3u);
    const HostTensor& y = r.runs[0].outputs.at("y");
    const HostTensor x = make_inputs(p, p.runs[0], 0).at("x");
    for (size_t i = 0; i < x.count(); ++i) EXPECT_EQ(y.as<float>()[i], std::max(x.as<float>()[i], 0.0f));
    // The graph comes from the model only; inputs may set only the random range.
    for (const auto& [text, word] : std::vector<std::pair<std::string, std::string>>{
             {"model: " + kReluModel + "\nnodes: []\n", "takes its graph from the model: remove 'nodes'"},
             {"model: " + kReluModel + "\ninputs: {x: {dtype: f16}}\n", "unknown key 'dtype'"},
             {"model: " + kReluModel + "\ninputs: {z: {random: {low: 0}}}\n", "the model has no input 'z'"},
             {"model: no_such.onnx\n", "no_such.onnx"}}) {
        try {
            load_pipeline_text(text, "pipe.yaml", ".", test::registry());
            ADD_FAILURE() << text << ": no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << text << "\n-> " << e.what();
            EXPECT_NE(std::string(e.what()).find("pipe.yaml"), std::string::npos) << e.what();
        }
    }
}

// ---- hostile sizes and paths (generated inputs, prealloc, file names) ---------

// A generated input of 2^42 elements used to be allocated first and fail with
// a bare std::bad_alloc. Its size is checked before anything is allocated:
// the error names the input, its shape, its bytes and the limit (the host's
// memory, or run.max_tensor_bytes below it).
TEST(PipelineHostile, GeneratedInputPastTheLimit_IsASizedErrorBeforeAllocating) {
    auto pipe = [](const std::string& a, const std::string& b, const std::string& c, const std::string& extra) {
        return load_text(
            "inputs:\n  x: {dtype: f32, shape: [a, b, c]}\n"
            "nodes:\n  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}\n"
            "outputs: [act]\nschedule:\n  - {a: " +
            a + ", b: " + b + ", c: " + c + "}\n" + extra);
    };
    RunOptions o;
    o.device = "cpu";
    o.use_env_prealloc = false;
    auto run_error = [&](const Pipeline& p) {
        try {
            run_pipeline(p, o);
        } catch (const Error& e) {
            return std::string(e.what());
        } catch (const std::exception& e) {
            return std::string("not a dynrt::Error: ") + e.what();
        }
        return std::string("no error");
    };
    std::string what;
    const size_t host = generated_input_limit(RunSettings{}, &what);
    EXPECT_EQ(what, "the host's memory");
    ASSERT_GT(host, 0u);
    std::string m = run_error(pipe("65536", "65536", "1024", ""));
    for (const std::string& part : {std::string("run 0"), std::string("input 'x' would be f32 [65536,65536,1024]"),
                                    std::string("17592186044416 bytes"),
                                    "more than the limit of " + std::to_string(host) + " bytes (the host's memory)"})
        EXPECT_NE(m.find(part), std::string::npos) << m;
    EXPECT_EQ(m.find("bad_alloc"), std::string::npos) << m;
    // run.max_tensor_bytes caps generated inputs too, before the flow sees them.
    m = run_error(pipe("10", "10", "10", "run: {max_tensor_bytes: 3999}\n"));
    for (const char* part :
         {"input 'x' would be f32 [10,10,10]: 4000 bytes", "more than the limit of 3999 bytes (run.max_tensor_bytes)"})
        EXPECT_NE(m.find(part), std::string::npos) << m;
    EXPECT_NO_THROW(run_pipeline(pipe("10", "10", "10", "run: {max_tensor_bytes: 4000}\n"), o));
}

// The same through `dynrt run MODEL.onnx --shapes`: exit 1 and the sized
// message, never "std::bad_alloc".
TEST(PipelineHostile, Cli_ModelInputOfTwoTo42Elements_IsASizedError) {
    if (!have_onnx_runs()) GTEST_SKIP() << "no ONNX support or no node-test data";
    const std::string model = kSource + "/tests/models/cnn/model.onnx";
    const Proc p = dynrt_cli("run " + model + " --device cpu --shapes \"image=[65536,3,65536,1024]\"" + modules_arg());
    EXPECT_EQ(p.code, 1) << p.out;
    for (const char* part : {"input 'image' would be f32 [65536,3,65536,1024]: 52776558133248 bytes",
                             "more than the limit of", "(the host's memory)"})
        EXPECT_NE(p.out.find(part), std::string::npos) << p.out;
    EXPECT_EQ(p.out.find("bad_alloc"), std::string::npos) << p.out;
}

// Absurd preallocation settings used to be accepted and fail at the third
// run (a shape past int64 or std::bad_alloc). --prealloc, DYNRT_MEM_PREALLOC
// and run.prealloc are refused when parsed, naming the field and its range.
TEST(PipelineHostile, AbsurdPreallocSettings_AreRefusedWhenParsed) {
    Proc p = dynrt_cli("run x.yaml --prealloc \"1000000000000 16384 2 1.1\"" + modules_arg());
    EXPECT_EQ(p.code, 2) << p.out;
    EXPECT_NE(p.out.find("--prealloc: invalid preallocation settings '1000000000000 16384 2 1.1': N "
                         "(next_iters_preallocation_count) 1000000000000 is outside the accepted range 0..65536"),
              std::string::npos)
        << p.out;
    try {
        resolve_prealloc(std::nullopt, "10 16384 2 1e30", std::nullopt);
        ADD_FAILURE() << "DYNRT_MEM_PREALLOC ratio 1e30 accepted";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("DYNRT_MEM_PREALLOC: "), std::string::npos) << m;
        EXPECT_NE(m.find("RATIO (buffers_preallocation_ratio) 1e30 is outside the accepted range 0..16"),
                  std::string::npos)
            << m;
    }
    const std::string m = error_of_text(R"(
inputs:
  x: {dtype: f32, shape: [2, 3]}
nodes:
  - {name: act, op: activation, inputs: [x], attrs: {func: relu}}
outputs: [act]
run: {prealloc: "10 99999999999 2 1.1"}
)");
    for (const char* part : {"pipe.yaml:7:", "field 'prealloc'",
                             "BYTES (max_per_iter_size) 99999999999 is outside the accepted range 0..4294967296"})
        EXPECT_NE(m.find(part), std::string::npos) << m;
}

// A model or --input path with a byte that is no UTF-8 used to reach the
// loader as U+FFFD (the generated YAML went through JSON quoting): "No such
// file". Both are opened byte for byte, and the run reads the fed data.
TEST(PipelineModel, NonUtf8ModelAndInputPaths_AreOpenedByteForByte) {
    if (!have_onnx_runs()) GTEST_SKIP() << "no ONNX support or no node-test data";
    TempDir dir;
    const fs::path odd = dir.path / "m\xff\"q\\";
    fs::create_directories(odd);
    fs::copy_file(kReluModel, odd / "model.onnx");
    const HostTensor x = test::random_tensor(DataType::f32, Shape{3, 4, 5}, 5);
    write_npy((dir.path / "\xfe.npy").string(), x);
    write_npy(dir / "plain.npy", x);
    // Single quotes for the shell: the paths hold '"' and '\' too.
    const std::string odd_args = "run '" + (odd / "model.onnx").string() +
                                 "' --input 'x=" + (dir.path / "\xfe.npy").string() + "' --device cpu --save-outputs " +
                                 (dir / "odd");
    Proc p = dynrt_cli(odd_args + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    p = dynrt_cli("run " + kReluModel + " --input x=" + (dir / "plain.npy") + " --device cpu --save-outputs " +
                  (dir / "plain") + modules_arg());
    ASSERT_EQ(p.code, 0) << p.out;
    const HostTensor odd_y = read_npy(dir / "odd/run_0/y.npy");
    const HostTensor plain_y = read_npy(dir / "plain/run_0/y.npy");
    ASSERT_EQ(odd_y.shape(), (Shape{3, 4, 5}));
    EXPECT_EQ(values(odd_y), values(plain_y));
    for (size_t i = 0; i < x.count(); ++i) EXPECT_EQ(odd_y.as<float>()[i], std::max(x.as<float>()[i], 0.0f));
}
