// The one parser of `A..B:STEP` ranges.
#include "int_range.hpp"

#include <cctype>
#include <stdexcept>

#include "dynrt/error.hpp"

namespace dynrt::tools {

bool parse_int64(const std::string& s, int64_t& out) {
    const size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (s.size() == sign) return false;
    for (size_t k = sign; k < s.size(); ++k)
        if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
    try {
        out = std::stoll(s);
    } catch (const std::out_of_range&) {
        return false;
    }
    return true;
}

std::vector<int64_t> parse_int_range(const std::string& text) {
    const std::string expected = " (expected N, A..B or A..B:STEP)";
    auto number = [&](const std::string& s) {
        int64_t v = 0;
        if (!parse_int64(s, v)) throw Error("bad range '" + text + "': '" + s + "' is not an integer" + expected);
        return v;
    };
    const size_t dots = text.find("..");
    if (dots == std::string::npos) return {number(text)};
    std::string hi = text.substr(dots + 2);
    int64_t step = 1;
    const size_t colon = hi.find(':');
    if (colon != std::string::npos) {
        step = number(hi.substr(colon + 1));
        hi = hi.substr(0, colon);
        if (step < 1) throw Error("bad range '" + text + "': the step must be at least 1");
    }
    const int64_t a = number(text.substr(0, dots)), b = number(hi);
    if (b < a) throw Error("bad range '" + text + "': the end is below the start (an empty range)");
    // b - a in unsigned arithmetic: exact for b >= a, where signed b - a may overflow.
    const uint64_t span = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
    if (span / static_cast<uint64_t>(step) >= 1000000)
        throw Error("bad range '" + text + "': more than a million values");
    std::vector<int64_t> out;
    for (int64_t v = a;; v += step) {
        out.push_back(v);
        if (static_cast<uint64_t>(b) - static_cast<uint64_t>(v) < static_cast<uint64_t>(step)) break;   // v + step > b
    }
    return out;
}

}   // namespace dynrt::tools
