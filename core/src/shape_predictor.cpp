#include "dynrt/shape_predictor.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"

namespace dynrt {

namespace {

// newer - older per dimension; false when any dimension shrank (the two shapes
// always have equal rank here: a rank change restarts the history).
bool step(const Shape& newer, const Shape& older, std::vector<int64_t>& out) {
    out.resize(newer.size());
    for (size_t i = 0; i < newer.size(); ++i) {
        if (newer[i] < older[i]) return false;
        out[i] = newer[i] - older[i];
    }
    return true;
}

Error settings_error(const std::string& text, const std::string& why) {
    return Error("invalid preallocation settings '" + text + "': " + why +
                 " (expected \"N BYTES DIFF RATIO\", e.g. \"10 16384 2 1.1\")");
}

// `what` names the field: "N (next_iters_preallocation_count)".
size_t parse_count(const std::string& text, const std::string& tok, const std::string& what, size_t max) {
    // strtoull would accept "-1" and wrap it, so only digits are allowed.
    bool digits = !tok.empty();
    for (char c : tok) digits = digits && c >= '0' && c <= '9';
    if (!digits) throw settings_error(text, what + " '" + tok + "' is not a non-negative integer");
    errno = 0;
    const unsigned long long v = std::strtoull(tok.c_str(), nullptr, 10);
    if (errno == ERANGE || v > max)
        throw settings_error(text, what + " " + tok + " is outside the accepted range 0.." + std::to_string(max));
    return static_cast<size_t>(v);
}

// The ranges parse_settings accepts (docs/shape-predictor.md): wide enough
// for any real schedule (a decode loop uses N = 128), narrow enough that
// current + N * step stays far inside int64 and a ratio cannot ask for a
// buffer of 1e30 times the tensor.
constexpr size_t kMaxIterations = 65536;               // N
constexpr size_t kMaxPerIterBytes = size_t{1} << 32;   // BYTES (4 GiB)
constexpr size_t kMaxPerDimDiff = 65536;               // DIFF
constexpr float kMaxRatio = 16.0f;                     // RATIO

// The predicted shape when its element count fits (kMaxElements), else none.
std::pair<bool, Shape> suggestion(Shape s) {
    size_t count = 0;
    if (!count_fits(s, &count)) return {false, {}};
    return {true, std::move(s)};
}

}   // namespace

ShapePredictor::ShapePredictor(Settings settings) : settings_(settings) {}

ShapePredictor::ShapePredictor(Settings settings, DeviceLimits limits)
    : settings_(settings), limits_(std::move(limits)) {}

ShapePredictor::Settings ShapePredictor::parse_settings(const std::string& text) {
    std::istringstream is(text);
    std::vector<std::string> tok;
    for (std::string t; is >> t;) tok.push_back(t);
    if (tok.size() != 4) throw settings_error(text, "got " + std::to_string(tok.size()) + " values, need 4");
    Settings s;
    s.next_iters_preallocation_count = parse_count(text, tok[0], "N (next_iters_preallocation_count)", kMaxIterations);
    s.max_per_iter_size = parse_count(text, tok[1], "BYTES (max_per_iter_size)", kMaxPerIterBytes);
    s.max_per_dim_diff = parse_count(text, tok[2], "DIFF (max_per_dim_diff)", kMaxPerDimDiff);
    // Read as a double: a float would turn 1e30 into inf and 1e-50 into 0.
    char* end = nullptr;
    errno = 0;
    const double r = std::strtod(tok[3].c_str(), &end);
    if (end == tok[3].c_str() || *end != '\0' || std::isnan(r) || r < 0.0)
        throw settings_error(text, "RATIO (buffers_preallocation_ratio) '" + tok[3] + "' is not a non-negative number");
    if (errno == ERANGE || !std::isfinite(r) || r > static_cast<double>(kMaxRatio)) {
        std::ostringstream max;
        max << kMaxRatio;
        throw settings_error(
            text, "RATIO (buffers_preallocation_ratio) " + tok[3] + " is outside the accepted range 0.." + max.str());
    }
    s.buffers_preallocation_ratio = static_cast<float>(r);
    return s;
}

bool ShapePredictor::disabled(const Settings& s) {
    // Iterations mode needs N > 0, a step of at least 1 within DIFF and a slice
    // of at least one byte within BYTES; ratio mode needs a ratio above 1.
    const bool no_iterations =
        s.next_iters_preallocation_count == 0 || s.max_per_dim_diff == 0 || s.max_per_iter_size == 0;
    return no_iterations && s.buffers_preallocation_ratio <= 1.0f;
}

std::pair<bool, Shape> ShapePredictor::predict_preallocation_shape(const std::string& id, const Shape& current_shape,
                                                                   size_t dt_bitwidth, bool can_reuse_buffer,
                                                                   Format format) {
    std::lock_guard<std::mutex> lock(mutex_);

    // Record first, whatever happens next: reuse calls feed the history too.
    auto& hist = history_[id];
    if (!hist.empty() && hist.back().rank() != current_shape.rank()) hist.clear();
    hist.push_back(current_shape);
    if (hist.size() > kHistorySize) hist.pop_front();

    if (can_reuse_buffer) return {false, {}};
    // A scalar has no dimension 0 to grow; nothing sensible to predict.
    if (current_shape.rank() == 0) return {false, {}};
    if (hist.size() < kHistorySize) return {false, {}};

    const Shape& h0 = hist[hist.size() - 3];
    const Shape& h1 = hist[hist.size() - 2];
    const Shape& h2 = hist[hist.size() - 1];
    std::vector<int64_t> d0, d1;
    // d1 is computed only when d0 did not shrink, as in the reference.
    const bool grew = step(h2, h1, d0) && step(h1, h0, d1);

    const size_t n = settings_.next_iters_preallocation_count;
    if (grew && n > 0 && d0 == d1) {
        bool any_step = false, within_diff = true;
        for (int64_t d : d0) {
            any_step = any_step || d != 0;
            within_diff = within_diff && static_cast<size_t>(d) <= settings_.max_per_dim_diff;
        }
        if (any_step && within_diff) {
            // The "slice" counts each growing dimension as 1 (not as its step):
            // the reference's rule, kept as is.
            size_t slice = 1;
            for (size_t i = 0; i < d0.size(); ++i) slice *= d0[i] == 0 ? static_cast<size_t>(current_shape[i]) : 1;
            const size_t slice_bytes = (slice * dt_bitwidth + 7) / 8;
            if (slice_bytes <= settings_.max_per_iter_size) {
                Shape predicted = current_shape;
                for (size_t i = 0; i < d0.size(); ++i) {
                    int64_t grow = 0;
                    if (n > static_cast<size_t>(INT64_MAX) ||
                        __builtin_mul_overflow(static_cast<int64_t>(n), d0[i], &grow) ||
                        __builtin_add_overflow(predicted[i], grow, &predicted[i]))
                        return {false, {}};   // settings given as a struct, past parse_settings' ranges
                }
                return suggestion(std::move(predicted));
            }
        }
    }

    const float ratio = settings_.buffers_preallocation_ratio;
    if (ratio > 1.0f && !is_blocked(format)) {
        // Flattened into dim 0, computed in float and truncated, like the reference.
        Shape flat(std::vector<int64_t>(current_shape.rank(), 1));
        const float want = static_cast<float>(current_shape.count()) * ratio;
        if (!(want < static_cast<float>(kMaxElements))) return {false, {}};   // the cast below would be undefined
        flat[0] = static_cast<int64_t>(static_cast<size_t>(want));
        return suggestion(std::move(flat));
    }
    return {false, {}};
}

bool ShapePredictor::can_preallocate(size_t desired_buffer_size) const {
    if (limits_.max_alloc_bytes != 0 && desired_buffer_size > limits_.max_alloc_bytes) return false;
    if (limits_.global_mem_bytes != 0) {
        const size_t used = limits_.used_bytes ? limits_.used_bytes() : 0;
        // Compared in float, strictly below 90%, as the reference does.
        return static_cast<float>(used + desired_buffer_size) < static_cast<float>(limits_.global_mem_bytes) * 0.90f;
    }
    return true;
}

void ShapePredictor::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    history_.clear();
}

}   // namespace dynrt
