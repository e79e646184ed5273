// recurrent: what one node computes, read from its attributes and input
// count (Config), and the geometry of one call (Dims). Shared by shape
// inference, the reference, the cpu loop and the OpenCL impls.
//
// Inputs: X, W, R, then the optional ones that are present, in ONNX order
// (B, sequence_lens, initial_h, initial_c, P); the attribute
// `optional_inputs` names the ONNX slot of each (3 B, 4 sequence_lens,
// 5 initial_h, 6 initial_c, 7 P), empty meaning slots 3, 4, ... in order.
// Gates, in ONNX's order: lstm i o f c, gru z r h, rnn one. Direction d of a
// bidirectional node runs forward for d = 0 and in reverse for d = 1.
//
// Kept in the op folder: nothing outside the op needs it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/layout.hpp"

namespace recurrent {

enum class Kind { rnn, gru, lstm };

// The activation functions the ONNX spec lists.
enum class Act {
    relu,
    tanh,
    sigmoid,
    affine,
    leaky_relu,
    thresholded_relu,
    scaled_tanh,
    hard_sigmoid,
    elu,
    softsign,
    softplus
};

struct Activation {
    Act f = Act::tanh;
    double alpha = 0.0;
    double beta = 0.0;
};

// ONNX input slots of the optional inputs.
enum Slot : int64_t { kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7 };

struct Config {
    Kind kind = Kind::lstm;
    size_t gates = 4;               // 1, 3 or 4
    size_t per_dir = 3;             // activations per direction (rnn 1, gru 2, lstm 3)
    size_t dirs = 1;                // 2 when bidirectional
    bool reverse = false;           // direction "reverse" (one direction)
    int64_t hidden = 0;             // the attribute (0: from R's shape)
    std::vector<Activation> acts;   // per_dir per direction, forward first
    double clip = 0.0;              // 0: none
    bool linear_before_reset = false;
    bool input_forget = false;
    int64_t layout = 0;
    // dynrt input index of each optional input, -1 when absent.
    int in_b = -1, in_seq = -1, in_h0 = -1, in_c0 = -1, in_p = -1;

    bool reversed(size_t d) const { return dirs == 2 ? d == 1 : reverse; }
    const Activation& act(size_t d, size_t k) const { return acts.at(d * per_dir + k); }
    size_t outputs() const { return kind == Kind::lstm ? 3 : 2; }
};

// The node's configuration; throws dynrt::Error naming the attribute (no
// node: the caller adds it) when an attribute or the input count is wrong.
Config config_of(const dynrt::Attributes& a, size_t num_inputs);

// An activation's name as ONNX spells it ("Sigmoid").
const char* act_name(Act f);

// Applies an activation (float or double).
template <typename T>
T apply(const Activation& a, T x) {
    const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
    switch (a.f) {
        case Act::relu: return x > T(0) ? x : T(0);
        case Act::tanh: return std::tanh(x);
        case Act::sigmoid: return T(1) / (T(1) + std::exp(-x));
        case Act::affine: return alpha * x + beta;
        case Act::leaky_relu: return x >= T(0) ? x : alpha * x;
        case Act::thresholded_relu: return x >= alpha ? x : T(0);
        case Act::scaled_tanh: return alpha * std::tanh(beta * x);
        case Act::hard_sigmoid: {
            const T y = alpha * x + beta;
            return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
        }
        case Act::elu: return x >= T(0) ? x : alpha * (std::exp(x) - T(1));
        case Act::softsign: return x / (T(1) + std::abs(x));
        case Act::softplus: return x > T(20) ? x : std::log1p(std::exp(x));
    }
    return x;
}

// Clamps a pre-activation to [-clip, clip] (clip 0: unchanged).
template <typename T>
T clip_to(T x, double clip) {
    if (clip <= 0.0) return x;
    const T c = static_cast<T>(clip);
    return x < -c ? -c : (x > c ? c : x);
}

// The dims of one call (static shapes).
struct Dims {
    size_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
    int64_t layout = 0;

    size_t gh() const { return gates * hidden; }
    // Row of step t of batch entry b in X (and in the projection X W^T).
    size_t x_row(size_t t, size_t b) const { return layout == 0 ? t * batch + b : b * seq + t; }
    // First element of Y at (t, d, b).
    size_t y_at(size_t t, size_t d, size_t b) const {
        return (layout == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d) * hidden;
    }
    // First element of Y_h / Y_c / initial_h / initial_c at (d, b).
    size_t state_at(size_t d, size_t b) const { return (layout == 0 ? d * batch + b : b * dirs + d) * hidden; }
};

Dims dims_of(const Config& c, const dynrt::Shape& x, const dynrt::Shape& r);

// The error of a sequence length outside [0, seq], the same on every device.
dynrt::Error length_error(const std::string& node, int64_t len, size_t b, size_t seq);

}   // namespace recurrent
