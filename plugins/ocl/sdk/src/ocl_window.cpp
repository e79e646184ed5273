#include "dynrt/ocl_window.hpp"

namespace dynrt {

namespace {

// The JIT name of spatial axis j of tensor `t` of `rank` dims, or "1" for the
// axes a lower rank lacks (dims are right-aligned over 8).
std::string spatial_dim(const std::string& t, size_t rank, size_t j) {
    if (j + (rank - 2) < 3) return "1";
    return t + "_DIM" + std::to_string(8 - 3 + j);
}

}   // namespace

JitDefines jit_window_axes(size_t rank, const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                           const std::vector<int64_t>& pads_begin,
                           const std::function<std::string(const std::string& x, size_t i)>& derived_pad) {
    const char* axes[3] = {"D", "H", "W"};
    const size_t skip = 3 - (rank - 2);
    JitDefines d;
    for (size_t j = 0; j < 3; ++j) {
        const std::string ax = axes[j];
        const bool real = j >= skip;
        const auto attr = [&](const std::vector<int64_t>& v, int64_t unit) {
            return std::to_string(real && !v.empty() ? v[j - skip] : unit);
        };
        d.emplace_back("IN_" + ax, spatial_dim("INPUT0", rank, j));
        d.emplace_back("OUT_" + ax, spatial_dim("OUTPUT0", rank, j));
        d.emplace_back("K_" + ax, spatial_dim("INPUT1", rank, j));
        d.emplace_back("STRIDE_" + ax, attr(strides, 1));
        d.emplace_back("DILATION_" + ax, attr(dilations, 1));
        const std::string derived = real ? derived_pad(ax, j - skip) : std::string();
        d.emplace_back("PAD_" + ax, derived.empty() ? attr(pads_begin, 0) : derived);
    }
    return d;
}

std::string check_window_int_range(const KernelParams& p, bool storage, const std::vector<std::string>& names) {
    std::string why = check_dtype_and_int_range(p, DataType::f32, storage);
    if (!why.empty()) return why;
    for (const std::string& name : names)
        for (int64_t v : p.attrs->get_ints(name))
            if (v > 0x3fffffff) return "attribute " + name + " exceeds the kernel's int range";
    return {};
}

}   // namespace dynrt
