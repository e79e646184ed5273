// Integer ranges as the tools write them: `N`, `A..B` (inclusive) and
// `A..B:STEP`. Pipeline schedules (`seq: 1..64:7`) and harness sweeps
// (`b=1..4`, `[2,1..64:8]`) both parse them here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynrt::tools {

// The values of one range, ascending. Throws dynrt::Error naming the text when
// a bound or the step is not an integer, the step is below 1, the end is below
// the start (an empty range), or the range holds more than a million values.
std::vector<int64_t> parse_int_range(const std::string& text);

// A whole decimal integer with an optional sign, nothing else (no spaces, no
// suffix); false when `s` is not one or does not fit in int64_t.
bool parse_int64(const std::string& s, int64_t& out);

}   // namespace dynrt::tools
