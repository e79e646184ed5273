// Internal helpers shared by the YAML loader and the schedule parser: locations
// of YAML nodes as ErrorContext, key checks and typed scalar reads that fail
// with file:line:column. Not installed; only tools/pipeline includes it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline.hpp"

namespace dynrt::pipeline::detail {

// Everything a parser needs to say where a node is.
struct Source {
    std::string file;       // as given (messages)
    std::string base_dir;   // relative .npy paths resolve here

    // yaml-cpp marks are 0-based; ErrorContext is 1-based.
    ErrorContext at(const YAML::Node& n, const std::string& field = {}) const {
        ErrorContext c;
        c.file = file;
        if (n.IsDefined() && n.Mark().line >= 0) {
            c.line = n.Mark().line + 1;
            c.column = n.Mark().column + 1;
        }
        c.field = field;
        return c;
    }
    [[noreturn]] void fail(const YAML::Node& n, const std::string& message, const std::string& field = {}) const {
        throw Error(message, at(n, field));
    }
    std::string resolve(const std::string& path) const;
};

const char* kind_name(const YAML::Node& n);   // "a map", "a list", "a scalar", "empty"

// Throws for a key not in `allowed` (naming close ones) and for duplicate keys
// (yaml-cpp keeps both silently). `what` names the map: "top level", "node 'fc1'".
void check_keys(const Source& src, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& what);

void expect_map(const Source& src, const YAML::Node& n, const std::string& what);
void expect_seq(const Source& src, const YAML::Node& n, const std::string& what);

// Typed scalars; the message names `what` and the text found.
std::string read_string(const Source& src, const YAML::Node& n, const std::string& what);
bool try_int(const YAML::Node& n, int64_t& out);
bool try_float(const YAML::Node& n, double& out);
bool try_bool(const YAML::Node& n, bool& out);
int64_t read_int(const Source& src, const YAML::Node& n, const std::string& what);
double read_float(const Source& src, const YAML::Node& n, const std::string& what);
bool read_bool(const Source& src, const YAML::Node& n, const std::string& what);

// Fills `t` with reproducible uniform values in [low, high) (integers: floor;
// booleans: half true) from `seed`; the same on every platform.
void fill_random(HostTensor& t, uint64_t seed, double low, double high);

// Why [low, high) cannot be the random range of an input of dtype `t`
// ("random.low -1 is outside the range of u8 (0..255)"); empty when it can
// (yaml_loader.cpp; `dynrt run MODEL.onnx --input-range` uses it too).
std::string random_range_problem(DataType t, double low, double high);

// Expands the `schedule:` list (schedule.cpp).
std::vector<RunSpec> expand_schedule(const Source& src, const YAML::Node& schedule,
                                     const std::vector<InputSpec>& inputs);

}   // namespace dynrt::pipeline::detail
