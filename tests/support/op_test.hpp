// The op test library: what every ops/<op>/test_<op>.cpp is built from, so an
// op test is three short parts of data and calls (docs/adding-an-op.md):
//
//   1. a shape-inference table: expect_shapes(op, {rows of inputs, attrs,
//      expected outputs or expected error words});
//   2. every registered impl against the reference impl over a dtype x shape
//      matrix: expect_impls_match_reference(setup, runs);
//   3. a sequence of changing shapes (revisits included) on ONE network
//      instance and ONE request, each run compared with the reference impl and
//      the flow counters checked per step: expect_sequence(setup, runs, opts).
//
// Impls are forced one at a time through a registry view that holds only that
// impl for the op (as `dynrt test-op --impl` does); ocl impls run when the ocl
// engine exists (PoCL or a GPU), otherwise they are skipped with a note.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/network.hpp"
#include "test_support.hpp"

namespace dynrt::test {

// ---- basics --------------------------------------------------------------------

// Element i passes when |got - want| <= atol + rtol * |want|.
struct Tolerance {
    double rtol = 0;
    double atol = 0;
};
// f32: 1e-4 / 1e-5; f16: 1e-2 / 1e-3; integers and bool: exact (the same
// defaults as `dynrt test-op`).
Tolerance tolerance(DataType t);

// Every element within tolerance; NaN matches NaN, infinities only themselves.
void expect_close(const HostTensor& got, const HostTensor& want, double rtol, double atol);
inline void expect_close(const HostTensor& got, const HostTensor& want, Tolerance t) {
    expect_close(got, want, t.rtol, t.atol);
}

// The ocl engine, or nullptr when there is no ocl module or OpenCL platform.
// Unless DYNRT_CACHE_DIR is set, the first call points it at a temp folder
// removed at exit, so no run depends on a user's kernel cache.
EnginePtr ocl_engine();

// The message of the dynrt::Error that `f` throws, or "<no error>".
std::string error_of(const std::function<void()>& f);

bool ends_with(const std::string& s, const std::string& tail);

// An f32 layout of `s`.
inline Layout f32(PartialShape s) { return Layout(std::move(s), DataType::f32); }

// Same dtype, same shape and the same bytes (ops that only move data).
void expect_bytes_equal(const HostTensor& got, const HostTensor& want);

// Attributes from a list: attrs({{"axis", int64_t{1}}, {"reverse", true}}).
Attributes attrs(std::initializer_list<std::pair<const std::string, AttrValue>> values);

// {"axis": axis}: the attributes of axis-only ops (concat, gather...).
inline Attributes axis_attr(int64_t axis) { return attrs({{"axis", axis}}); }

// Convolution-family attributes (convolution, deconvolution): strides,
// pads_begin, pads_end, dilations, groups and, when given, output_padding.
Attributes conv_attrs(const std::vector<int64_t>& strides, const std::vector<int64_t>& pads_begin,
                      const std::vector<int64_t>& pads_end, const std::vector<int64_t>& dilations, int64_t groups,
                      const std::optional<std::vector<int64_t>>& output_padding = {});

// Test names of a suite parameterised on dynamic (true) or static-only impls.
std::string dynamic_or_static(const ::testing::TestParamInfo<bool>& info);

// ---- 1. shape inference -------------------------------------------------------

// The op's shape inference on `inputs` with `raw` attributes validated against
// its schema; `values` are the known values of value inputs (by input index).
std::vector<Layout> infer_shapes(const std::string& op, const std::vector<Layout>& inputs, const Attributes& raw = {},
                                 const std::map<size_t, HostTensor>& values = {});

// One row of a shape-inference table: either `outputs` (the exact expected
// layouts) or, when `error` is not empty, every word of `error` must appear in
// the message of the dynrt::Error shape inference throws.
struct ShapeRow {
    ShapeRow(std::vector<Layout> in, Attributes a, std::vector<Layout> out, std::vector<std::string> err = {},
             std::map<size_t, HostTensor> vals = {})
        : inputs(std::move(in)), attrs(std::move(a)), outputs(std::move(out)), error(std::move(err)),
          values(std::move(vals)) {}
    std::vector<Layout> inputs;
    Attributes attrs;
    std::vector<Layout> outputs;
    std::vector<std::string> error;
    std::map<size_t, HostTensor> values;
};
void expect_shapes(const std::string& op, const std::vector<ShapeRow>& rows);

// `op`'s shape inference as a callable: const ShapesOf infer{"gemm"};
// infer({f32({2, 3}), f32({3, 4})}, attrs).
struct ShapesOf {
    std::string op;
    std::vector<Layout> operator()(const std::vector<Layout>& inputs, const Attributes& raw = {}) const {
        return infer_shapes(op, inputs, raw);
    }
    // Axis-only ops: infer(inputs, axis) with the attributes axis_attr(axis).
    std::vector<Layout> operator()(const std::vector<Layout>& inputs, int64_t axis) const {
        return infer_shapes(op, inputs, axis_attr(axis));
    }
};

// ---- 2. every impl against the reference -----------------------------------------

// A one-node program: inputs "in0", "in1"... with `inputs` layouts (dims that
// vary between runs dynamic); inputs listed in `constants` are constant nodes.
// Every output of the op is a program output.
struct OpSetup {
    std::string op;
    Attributes attrs;
    std::vector<Layout> inputs;
    std::map<size_t, HostTensor> constants;
};
// The non-constant inputs of one run, in input order.
using Run = std::vector<HostTensor>;

// Random runs: one per row of `shapes` (a shape per non-constant input), every
// input of dtype `t` with values in [low, high); seeds from `seed` upward.
std::vector<Run> random_runs(DataType t, const std::vector<std::vector<Shape>>& shapes, uint64_t seed = 1,
                             double low = -1.0, double high = 1.0);

// Outputs of the op's reference impl (cpu, static, a fresh network) on `run`.
std::vector<HostTensor> reference_outputs(const OpSetup& s, const Run& run);

// Forces each registered impl of the op in turn and compares every output of
// every run with the reference (tolerance: `tol`, else per output dtype).
// Static impls: a fresh network compiled for each run's static shapes. Dynamic
// impls: one network built from `s.inputs` serving all runs in order. A run an
// impl rejects (validate) is skipped; an impl that takes no run at all fails
// unless it is listed in `may_skip` (e.g. an f32-only device impl tested with
// integers). Returns the names of the impls that ran at least one run.
// The optimised cpu impls (dynrt::optimised_host_options): they cover part of
// an op's dtypes and modes, so a test of what they decline lists them in
// `may_skip` (and a test of what they cover does not: there they must run).
inline const std::vector<std::string> kOptimisedCpuImpls = {"cpu_opt_dynamic", "cpu_opt_static"};

// `impl_types` (empty: all) keeps the impls of those engines only: a test
// of the cpu engine's optimised impls need not build an OpenCL kernel per
// shape that another test already covers.
std::vector<std::string> expect_impls_match_reference(const OpSetup& s, const std::vector<Run>& runs,
                                                      std::optional<Tolerance> tol = {},
                                                      const std::vector<std::string>& may_skip = {},
                                                      const std::vector<std::string>& impl_types = {});

// ---- device errors on one instance --------------------------------------------

// A run with a bad index: the non-constant inputs, and the words the device's
// error must hold besides the host's (input name, position, dims...).
struct BadIndexRun {
    Run run;
    std::vector<std::string> words;
};

// Both OpenCL impls (one network each, built from `s`, dynamic impls then
// static impls only; skipped when there is no ocl engine): each bad run raises
// an error naming node 'node' that holds the cpu engine's error from "index "
// on plus the run's words, and `good` right after it on the same instance
// gives the cpu engine's outputs byte for byte (no stale report is left).
void expect_device_index_errors(const OpSetup& s, const std::vector<BadIndexRun>& bad, const Run& good);

// ---- 3. one instance, changing shapes --------------------------------------------

struct SequenceOptions {
    SequenceOptions() = default;
    SequenceOptions(std::string on, Mode m) : engine(std::move(on)), mode(m) {}
    std::string engine = "cpu";   // "ocl": skipped (with a note) when there is no ocl engine
    // dynamic_async: dynamic impls (critical ops also build static impls in the
    // background; the driver waits for them after each run); sync_compile:
    // critical ops build static impls synchronously; static_only: static impls.
    Mode mode = Mode::dynamic_async;
    bool check_counters = true;     // expect_sweep_counters / expect_impl_counters per step
    std::optional<Tolerance> tol;   // default: per output dtype
    std::string impl_suffix;        // when set, the impl that ran must end with it ("_ocl_dynamic")
    NetworkOptions network;         // the rest of the network options (mode fields are overwritten)
    // Non-critical ops: after the last run the request's cumulative
    // static_builds must be 0 (dynamic impls) or the number of distinct input
    // shape lists (static impls: one build per shape, revisits from the cache).
    bool check_total_builds = false;
    // Op-specific checks after each step.
    std::function<void(const InferRequest& req, size_t step)> on_step;
};

// The (engine, mode) pairs a sequence runs on: cpu and, when there is an ocl
// engine, ocl (where the impl that ran must be *_ocl_dynamic or *_ocl_static),
// each with dynamic impls and with static impls only; `tol` for every one.
std::vector<SequenceOptions> every_engine_and_mode(std::optional<Tolerance> tol = {});
const char* mode_name(Mode m);   // "dynamic impls", "sync compile", "static impls"

// The options of a sweep parameterised on dynamic (true) or static-only impls.
SequenceOptions sweep_options(bool dynamic_impls);

// Feeds `runs` in order to ONE InferRequest of ONE network built from `s`,
// compares each run's outputs with reference_outputs() and checks node
// "node"'s counters per step: a step with the previous step's input shapes
// must skip update_shape, a revisit must hit the impl cache (static impls).
void expect_sequence(const OpSetup& s, const std::vector<Run>& runs, const SequenceOptions& o = {});

// The tail sizes sweeps hit (1, 3, 13, 16, 17, 255, 257), then revisits, a
// repeat and a shrink: the shape list of a typical sequence.
const std::vector<int64_t>& tail_sizes();

}   // namespace dynrt::test
