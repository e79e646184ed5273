// The pass switchboard: one table of every pass that changes what computes a
// graph's values, and PassSet, which says which of them are on.
//
// A pass is a rewrite of the graph (constant folding and pattern fusions at
// import, the folds of Program::build, fusion at network creation) or a
// run-time mechanism that hands one primitive's buffer to another (views,
// in-place concat, fake alignment, reordered weights, the memory pool). Each
// has one row in passes(): its name, the stage it acts in and a line saying
// what it does. A program or network pass names the ProgramOptions or
// NetworkOptions switch it reads, and apply_passes() sets those; an import
// pass is asked for by name by the front end (tools/onnx reads
// ImportOptions::passes). A pass added later needs its row here and the
// switch it reads: every list, parser, report and the bisect tool
// (`dynrt onnx-test --bisect`) take it from the table.
//
// A PassSet starts with every pass on. Specs (the CLI's --passes, the
// DYNRT_PASSES environment variable, YAML `run.passes`) edit it: items
// separated by commas, applied left to right:
//   all | none            every pass on | off
//   -NAME | +NAME         NAME off | on
//   NAME=off | NAME=on    the same (also false/true, 0/1, no/yes)
// so "none,+fusion" keeps fusion alone. An unknown name is a dynrt::Error
// naming it, the source of the spec (ErrorContext::field) and every known pass.
#pragma once

#include <string>
#include <vector>

#include "dynrt/network.hpp"
#include "dynrt/program.hpp"

namespace dynrt {

enum class PassStage { import, program, network };
const char* to_string(PassStage stage);

struct PassInfo {
    const char* name;
    PassStage stage;
    const char* description;   // one line
    // The switch apply_passes() sets (at most one; none for import passes).
    bool ProgramOptions::*program_switch = nullptr;
    bool NetworkOptions::*network_switch = nullptr;
};

// Every pass, in the order they act (import, program, network).
const std::vector<PassInfo>& passes();
// The row of `name`; nullptr when no pass has that name.
const PassInfo* find_pass(const std::string& name);
// "constant_folding, pattern_gelu, ...": for messages.
std::string pass_names();

class PassSet {
public:
    PassSet();   // every pass on
    static PassSet all() { return PassSet(); }
    static PassSet none();
    // A set with every pass on, then `spec` applied (see the header comment).
    static PassSet parse(const std::string& spec, const std::string& source = "passes");

    // Edits this set by `spec`; `source` ("--passes", "DYNRT_PASSES",
    // "run.passes") names the spec in errors. Nothing changes when it throws.
    void apply(const std::string& spec, const std::string& source);
    // Throws for a name that is not in the table (a program error, or an
    // unchecked name from a file: the message lists the known passes).
    bool on(const std::string& name) const;
    void set(const std::string& name, bool on);
    bool all_on() const;
    // The passes that are off, in table order.
    std::vector<std::string> off() const;
    // "all", "none" or the shortest list of "-name" items from "all"
    // ("-fusion,-views"): parse(to_string()) gives this set back.
    std::string to_string() const;

    bool operator==(const PassSet& o) const { return on_ == o.on_; }
    bool operator!=(const PassSet& o) const { return on_ != o.on_; }

private:
    size_t index(const std::string& name, const std::string& source) const;
    std::vector<bool> on_;   // by row of passes()
};

// Sets the switch of every program and network pass from `set` (either
// pointer may be null: that stage's options are left alone).
void apply_passes(const PassSet& set, ProgramOptions* program, NetworkOptions* network);

}   // namespace dynrt
