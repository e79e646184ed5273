// Host helpers of the linear (de)quantisation ops (quantize_linear,
// dequantize_linear): the per-tensor or per-axis layout of the scale input
// (input 1) and its values, each checked. Errors name the node, the op and
// `scale`, that input's ONNX name ("x_scale", "y_scale").
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

// x viewed as [outer, channels, inner]: element i uses scale (i / inner) % channels.
struct QuantChannels {
    size_t count = 0, channels = 1, inner = 1;
};

inline QuantChannels quant_channels(const HostCall& call, const std::string& op, const std::string& scale) {
    const Shape& x = call.in_shape(0);
    QuantChannels c;
    c.count = x.count();
    c.inner = std::max<size_t>(c.count, 1);
    if (call.in_shape(1).count() == 1) return c;
    const auto axis = static_cast<size_t>(normalize_axis(call.attrs().get_int("axis"), x.rank(), "axis"));
    c.channels = static_cast<size_t>(x[axis]);
    c.inner = dims_product(x, axis + 1, x.rank());
    if (call.in_shape(1).count() != c.channels)
        throw Error("per-axis " + scale + " has " + std::to_string(call.in_shape(1).count()) + " elements but x " +
                        x.to_string() + " has " + std::to_string(c.channels) + " along axis " + std::to_string(axis),
                    node_context(call.node(), op, scale));
    return c;
}

// The scales as f32 (f16 widened exactly), each checked to be positive.
inline std::vector<float> checked_quant_scales(const HostCall& call, const std::string& op, const std::string& scale) {
    std::vector<float> s(call.in_shape(1).count());
    for (size_t k = 0; k < s.size(); ++k) {
        s[k] = static_cast<float>(call.get(1, k));
        if (!(s[k] > 0.0f))
            throw Error(scale + "[" + std::to_string(k) + "] is " + std::to_string(s[k]) +
                            "; a quantization scale must be positive",
                        node_context(call.node(), op, scale));
    }
    return s;
}

}   // namespace dynrt
