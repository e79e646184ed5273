// Small helpers shared by the PrimitiveInst flow files (runtime-internal).
#pragma once

#include <string>
#include <vector>

#include "dynrt/layout.hpp"

namespace dynrt::inst_util {

inline Layout strip_padding(const Layout& l) {
    Layout out = l;
    out.padding = Padding{};
    return out;
}

inline std::string layouts_to_string(const std::vector<Layout>& ls) {
    std::string s;
    for (size_t i = 0; i < ls.size(); ++i) s += (i ? ", " : "") + ls[i].to_string();
    return s;
}

// ShapePredictor key of output i: the node name, "_out<i>" appended for i > 0.
inline std::string predictor_key(const std::string& node, size_t i) {
    return i == 0 ? node : node + "_out" + std::to_string(i);
}

}   // namespace dynrt::inst_util
