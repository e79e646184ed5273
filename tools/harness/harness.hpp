// The op harness behind `dynrt test-op`: shape sweeps, one-node networks per
// impl, comparison against the reference impl, tables, JSON and timings.
//
// A sweep is text (docs/test-op.md): cases such as `x=[b,s,k] w=[n,k] b=1..4
// s=1,3,13 k=16 n=8` whose symbols keep related dims consistent, ranges per dim
// (`[2,1..64:8,16]`), value inputs (`t={b,-1}`) and sweep files
// (ops/<op>/sweep.txt) that group cases under attribute sets. run() builds
// a one-node program per case and runs it on every registered impl of the op
// that validates, forcing each impl through a private registry view that holds
// that impl alone; the reference is the op's reference impl
// (ImplEntry::reference) run in a fresh static network. Dynamic impls run the
// whole sweep on one network instance, then again in a revisiting order. The
// CLI entry point is dynrt_test_op_main(); everything else is exposed for the
// tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/registry.hpp"
#include "tensor_compare.hpp"

namespace dynrt::harness {

// ---- sweeps (sweep.cpp) -----------------------------------------------------

// One dim of a templated shape: a fixed extent or a symbol. Inline ranges and
// alternatives (`1..64:8`, `1|3|13`) become anonymous symbols.
struct DimTerm {
    bool is_symbol = false;
    int64_t value = 0;
    std::string symbol;
    bool negate = false;   // `-k` in value lists and value ranges
};

struct InputTemplate {
    std::string name;   // given name, or "in<k>" for positional inputs
    bool named = false;
    bool is_values = false;                             // `{e0,e1,...}`: a 1-D integer tensor with these values
    std::vector<DimTerm> dims;                          // shape, or the values when is_values
    std::optional<DataType> dtype;                      // `:f16`, `i32{...}`
    std::optional<std::pair<DimTerm, DimTerm>> range;   // `~lo..hi` (random values in [lo, hi))
    std::optional<std::pair<double, double>> frange;    // `~0.1..2` with non-integer bounds
};

struct CaseTemplate {
    std::string text;   // as written
    std::vector<InputTemplate> inputs;
    std::vector<std::string> symbol_order;                 // first use first
    std::map<std::string, std::vector<int64_t>> symbols;   // values of each symbol
};

// One concrete input of one case.
struct CaseInput {
    std::string name;
    bool named = false;
    Shape shape;
    std::optional<DataType> dtype;
    std::optional<std::vector<int64_t>> values;   // value inputs
    std::optional<std::pair<double, double>> range;
};

struct Case {
    std::vector<CaseInput> inputs;
    // Canonical text that parses back to exactly this case (used in the
    // reproduce command and as the row label).
    std::string spec() const;
};

// Parses one case template. Throws dynrt::Error (field = "shapes") naming the
// offending token.
CaseTemplate parse_case(const std::string& text);
// Splits on ';' at bracket depth 0 and parses each part (empty parts skipped).
std::vector<CaseTemplate> parse_shapes(const std::string& text);
// Every combination of symbol values, first-used symbol outermost. Throws when
// a symbol is undefined or the product exceeds `limit` cases.
std::vector<Case> expand(const CaseTemplate& t, size_t limit = 100000);
// `n` random combinations (each symbol drawn uniformly from its values).
std::vector<Case> expand_random(const CaseTemplate& t, size_t n, uint64_t seed);

// A group of cases sharing one attribute set (raw `k=v` strings).
struct SweepSection {
    std::vector<std::pair<std::string, std::string>> attrs;
    std::vector<CaseTemplate> cases;
    int line = 0;
};
// Sweep file text: `#` comments, `attrs k=v ...` lines opening a section, and
// one case template per other line. `file` is used in error messages.
std::vector<SweepSection> parse_sweep_text(const std::string& text, const std::string& file);
std::vector<SweepSection> parse_sweep_file(const std::string& path);

// `k=v` strings -> typed Attributes following the op's schema (ints "1,2" or
// "[1,2]", bools true/false/1/0). Throws naming the attribute.
Attributes parse_attrs(const std::vector<AttrSpec>& schema,
                       const std::vector<std::pair<std::string, std::string>>& raw);

// ---- comparison (tools/common) -----------------------------------------------

using tools::compare;
using tools::Comparison;
using tools::default_tolerance;
using tools::Tolerance;

// ---- runs (runner.cpp) ------------------------------------------------------

struct Options {
    std::string op;
    std::vector<std::pair<std::string, std::string>> attrs;   // command-line --attr
    std::vector<std::string> shapes;                          // --shapes
    std::string sweep_file;
    size_t random = 0;   // --random N (0: full product)
    uint64_t seed = 1;
    DataType dtype = DataType::f32;     // default input dtype
    std::vector<std::string> devices;   // empty: every engine with impls
    std::vector<std::string> impls;     // empty: every impl
    std::string reference;              // empty: the op's reference impl (static flavour)
    std::optional<double> rtol, atol;
    bool revisit = true;
    bool bench = false;
    size_t repeat = 5;
    bool verbose = false;
};

struct Row {
    std::string impl;         // registry entry name
    std::string device;       // impl type
    std::string shape_type;   // "static" / "dynamic"
    std::string phase;        // "static", "sequence", "revisit"
    std::string attrs;        // raw attrs of the section, "k=v k=v"
    Case the_case;
    std::string ran;      // Impl::name() reported by the run
    std::string status;   // "pass", "FAIL", "n/a", "skipped", "not selected", "error"
    std::string detail;   // why (mismatch, validate reason, error)
    double max_abs = 0, max_rel = 0;
    Tolerance tol;
    double ms = -1;     // --bench: median time of one infer()
    double rate = -1;   // GFLOP/s or GB/s
    std::string rate_unit;
    std::string repro;   // command reproducing this row
    bool failed() const { return status == "FAIL" || status == "error" || status == "not selected"; }
};

struct Report {
    std::string op;
    std::string reference;
    std::vector<Row> rows;
    std::vector<std::string> notes;   // impls skipped as a whole (no engine ...)
    size_t passed = 0, failed = 0, skipped = 0;
};

// Runs the sweep on every selected impl. Throws dynrt::Error on bad options
// (unknown op, unparsable sweep); failures of impls are rows, not exceptions.
Report run(const std::shared_ptr<const Registry>& registry, const Options& opt);

// The command that reproduces one row (one case, one impl).
std::string repro_command(const Options& opt, const std::string& section_attrs, const Case& c, const std::string& impl,
                          const std::string& device);

std::string format_table(const Report& r, bool bench);
std::string to_json(const Report& r);

// Work of one execution: the op's cost hook (OpDefinition::cost) when it has
// one, else no FLOPs and the bytes of every input and output.
OpCost cost_of(const OpDefinition& def, const std::vector<Layout>& inputs, const std::vector<Layout>& outputs,
               const Attributes& attrs);

}   // namespace dynrt::harness

// `dynrt test-op OP [options]`; returns the process exit code.
int dynrt_test_op_main(int argc, char** argv);
